/* libFuzzer target: what `robocache info` reads of an HDF5 file (src/io
 * hdf5_io.h, voxel_io.h): the layout attribute, the align summary and the
 * voxelize summary, on a file holding the input. Each read runs in a child
 * process (h5_file_hdf5.h rc_h5_read_file), where libhdf5 may crash or stall
 * on a damaged file for up to 10 s: run with -timeout above that. libFuzzer
 * does not see the coverage of the read callbacks there (the child's
 * counters are its own), so the seed corpus holds files of both layouts;
 * AddressSanitizer checks those callbacks in the child on every input.
 * Properties of a successful read: align: K names with their [T, D] columns
 * and at most T valid targets each; voxelize: at most 7 arrays of rank 0..5
 * with non-negative shapes.
 *
 * In that child a memory error inside libhdf5 (1.10 frees wild pointers on
 * some damaged files) is the crash the child is there to contain: the
 * reader reports the file as damaged. AddressSanitizer would still report it
 * and libFuzzer's death callback save the input as a finding, so the child
 * gets its own death callback: with libhdf5 on the stack it ends the child
 * quietly; otherwise (robocache's own code) it saves the input as
 * <artifact_prefix>crash-child-<pid>, which run.sh counts as a finding. */
#define _GNU_SOURCE /* dladdr */
#include "hdf5_io.h"
#include "tmpfile_support.h"
#include "voxel_io.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint8_t *rcf_input;
static size_t rcf_input_size;
static const char *rcf_artifact_prefix = "./";

static int libhdf5_on_stack(void) {
  void *pcs[256];
  int n = backtrace(pcs, 256);
  for (int i = 0; i < n; i++) {
    Dl_info info;
    if (dladdr(pcs[i], &info) && info.dli_fname && strstr(info.dli_fname, "libhdf5")) return 1;
  }
  return 0;
}

static void child_death(void) {
  if (libhdf5_on_stack()) _exit(70);
  char path[1024];
  snprintf(path, sizeof path, "%scrash-child-%ld", rcf_artifact_prefix, (long)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (write(fd, rcf_input, rcf_input_size) < 0) perror(path);
    close(fd);
  }
}

static void in_child(void) { __sanitizer_set_death_callback(child_death); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  static const char flag[] = "-artifact_prefix=";
  for (int i = 1; i < *argc; i++)
    if (strncmp((*argv)[i], flag, sizeof flag - 1) == 0)
      rcf_artifact_prefix = (*argv)[i] + sizeof flag - 1;
  void *pc;
  backtrace(&pc, 1); /* loads the unwinder now, not while dying */
  pthread_atfork(NULL, NULL, in_child);
  return 0;
}

static void check_align(const char *path) {
  rc_io_h5_summary s;
  rc_io_err err = {0};
  if (rc_io_read_hdf5_summary(path, &s, &err) == ROBOCACHE_OK) {
    RCF_CHECK(s.T >= 0 && s.K >= 0 && (s.T == 0 || s.timestamps_ns != NULL));
    for (int32_t k = 0; k < s.K; k++)
      RCF_CHECK(s.names[k] != NULL && s.cols[k] >= 0 && s.valid_count[k] <= s.T);
  } else {
    RCF_CHECK(err.msg[0] != '\0');
  }
  rc_io_h5_summary_free(&s);
}

static void check_voxels(const char *path) {
  rc_io_voxel_summary s;
  rc_io_err err = {0};
  if (rc_io_read_voxel_summary(path, &s, &err) == ROBOCACHE_OK) {
    RCF_CHECK(s.mode && s.preset && s.num_datasets >= 1 && s.num_datasets <= 7);
    for (int32_t i = 0; i < s.num_datasets; i++) {
      RCF_CHECK(s.datasets[i].ndim >= 0 && s.datasets[i].ndim <= 5);
      for (int32_t k = 0; k < s.datasets[i].ndim; k++) RCF_CHECK(s.datasets[i].shape[k] >= 0);
    }
  } else {
    RCF_CHECK(err.msg[0] != '\0');
  }
  rc_io_voxel_summary_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rcf_input = data;
  rcf_input_size = size;
  const char *path = rcf_write_temp(data, size, ".h5");
  char *layout;
  rc_io_err err = {0};
  if (rc_io_read_hdf5_layout(path, &layout, &err) != ROBOCACHE_OK) {
    RCF_CHECK(layout == NULL && err.msg[0] != '\0');
    return 0; /* robocache info stops here */
  }
  free(layout);
  check_align(path);
  check_voxels(path);
  return 0;
}
