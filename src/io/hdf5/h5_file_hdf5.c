/* Writing a robocache HDF5 file: temporary file, quiet errors, root
 * attributes. (Reading: h5_read_hdf5.c.) */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include "h5_file_hdf5.h"

#include "atomic_file.h"
#include "h5_attrs_hdf5.h"

#include <stdlib.h>
#include <time.h>

/* The whole file is built in memory (HDF5's core driver, no backing store)
 * and written by rc_io_write_atomic: a full disk fails in our write, never in
 * libhdf5's own flush, whose failure leaves the file open and crashes HDF5's
 * clean-up at exit. */
robocache_status rc_h5_write_file(const char *path, rc_h5_contents_fn contents, const void *arg,
                                  rc_io_err *err) {
  robocache_status s = rc_io_check_output(path, NULL, 0, err);
  if (s != ROBOCACHE_OK) return s;
  rc_h5_quiet quiet = rc_h5_quiet_begin(); /* the library never prints */
  const char *what = "the file";
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  hid_t file = fapl < 0 || H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) < 0
                   ? -1
                   : H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  herr_t r = file < 0 ? -1 : contents(file, arg, &what);
  ssize_t size = -1;
  void *image = NULL;
  if (r >= 0) {
    what = "the file image";
    size = H5Fflush(file, H5F_SCOPE_LOCAL) < 0 ? -1 : H5Fget_file_image(file, NULL, 0);
    image = size > 0 ? malloc((size_t)size) : NULL;
    if (!image || H5Fget_file_image(file, image, (size_t)size) != size) r = -1;
  }
  if (file >= 0 && H5Fclose(file) < 0) r = -1;
  if (fapl >= 0) H5Pclose(fapl);
  rc_h5_quiet_end(quiet);
  if (r < 0) {
    free(image);
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': HDF5 error while writing %s",
                      path, what);
  }
  s = rc_io_write_atomic(path, &(rc_io_bytes){image, (size_t)size}, 1, err);
  free(image);
  return s;
}

herr_t rc_h5_root_attrs(hid_t file, const char *command_line, const char *layout) {
  char created[32] = "unknown";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  herr_t r = 0;
  r |= rc_h5_attr_string(file, "robocache_version", robocache_version_string());
  r |= rc_h5_attr_string(file, "command_line", command_line ? command_line : "");
  r |= rc_h5_attr_string(file, "created", created);
  r |= rc_h5_attr_string(file, "layout", layout);
  return r < 0 ? -1 : 0;
}
