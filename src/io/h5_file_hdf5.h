/* Writing a robocache HDF5 file (align and voxelize outputs): through a
 * temporary file (atomic_file.h) with HDF5's error printing off, and the root
 * attributes every layout has. Internal to the *_hdf5.c files. */
#ifndef ROBOCACHE_IO_H5_FILE_H
#define ROBOCACHE_IO_H5_FILE_H

#include "io_error.h"

#include <hdf5.h>

/* Writes everything below the root of the open file; on failure returns a
 * negative value with *what naming the failing part ("/voxels"). */
typedef herr_t (*rc_h5_contents_fn)(hid_t file, const void *arg, const char **what);

/* Creates path's temporary file, writes it with contents(file, arg, &what)
 * and renames it over path when everything succeeded; otherwise removes it.
 * Errors: IO_ERROR "cannot write 'path': HDF5 error while writing <what>",
 * and those of rc_io_temp_create / rc_io_temp_commit. */
robocache_status rc_h5_write_file(const char *path, rc_h5_contents_fn contents, const void *arg,
                                  rc_io_err *err);

/* Root attributes robocache_version, command_line ("" when NULL), created
 * (UTC ISO 8601, "unknown" when the clock fails) and layout. Negative on
 * failure. */
herr_t rc_h5_root_attrs(hid_t file, const char *command_line, const char *layout);

#endif
