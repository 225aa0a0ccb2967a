/* Writing and reading a robocache HDF5 file: temporary file, quiet errors,
 * root attributes. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include "h5_file_hdf5.h"

#include "atomic_file.h"
#include "h5_attrs_hdf5.h"

#include <time.h>

robocache_status rc_h5_write_file(const char *path, rc_h5_contents_fn contents, const void *arg,
                                  rc_io_err *err) {
  char *tmp = rc_io_temp_create(path, err);
  if (!tmp) return err ? err->status : ROBOCACHE_IO_ERROR;
  rc_h5_quiet quiet = rc_h5_quiet_begin(); /* the library never prints */
  const char *what = "the file";
  hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  herr_t r = file < 0 ? -1 : contents(file, arg, &what);
  if (file >= 0 && H5Fclose(file) < 0) r = -1;
  rc_h5_quiet_end(quiet);
  if (r < 0) {
    rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': HDF5 error while writing %s", path,
               what);
    rc_io_temp_commit(tmp, path, 0, NULL);
    return ROBOCACHE_IO_ERROR;
  }
  return rc_io_temp_commit(tmp, path, 1, err);
}

robocache_status rc_h5_read_file(const char *path, const char *kind, rc_h5_read_fn read, void *arg,
                                 rc_io_err *err) {
  rc_h5_quiet quiet = rc_h5_quiet_begin();
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const char *problem = file < 0 ? "not an HDF5 file, or unreadable" : read(file, arg);
  if (file >= 0) H5Fclose(file);
  rc_h5_quiet_end(quiet);
  if (problem)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: not a robocache %s output: %s", path, kind,
                      problem);
  return ROBOCACHE_OK;
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
