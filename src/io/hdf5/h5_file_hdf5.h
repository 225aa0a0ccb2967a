/* Writing and reading a robocache HDF5 file (align and voxelize outputs):
 * writes go through a temporary file (atomic_file.h), HDF5's error printing
 * is off while the file is open, and the root attributes every layout has.
 * Internal to the *_hdf5.c files. */
#ifndef ROBOCACHE_IO_H5_FILE_H
#define ROBOCACHE_IO_H5_FILE_H

#include "io_error.h"

#include <hdf5.h>

/* Writes everything below the root of the open file; on failure returns a
 * negative value with *what naming the failing part ("/voxels"). */
typedef herr_t (*rc_h5_contents_fn)(hid_t file, const void *arg, const char **what);

/* Builds the file in memory with contents(file, arg, &what), then writes it
 * to path with rc_io_write_atomic (nothing is left at path on failure).
 * Errors: IO_ERROR "cannot write 'path': HDF5 error while writing <what>",
 * and those of rc_io_write_atomic. */
robocache_status rc_h5_write_file(const char *path, rc_h5_contents_fn contents, const void *arg,
                                  rc_io_err *err);

/* Reads everything it needs of the open file into arg; returns NULL, or what
 * is wrong ("no group /data/demo_0"). */
typedef const char *(*rc_h5_read_fn)(hid_t file, void *arg);

/* Opens path read-only (a regular file only: rc_io_require_regular's
 * errors), calls read(file, arg) and closes it with everything read left
 * open. The same read is first tried in a child process, so that a damaged
 * file on which libhdf5 crashes or does not finish within 10 s is an error.
 * IO_ERROR "path: not a robocache <kind> output: <what read returned>" (or
 * "... not an HDF5 file, or unreadable", "... libhdf5 crashed reading it (a
 * damaged file)"). */
robocache_status rc_h5_read_file(const char *path, const char *kind, rc_h5_read_fn read, void *arg,
                                 rc_io_err *err);

/* Root attributes robocache_version, command_line ("" when NULL), created
 * (UTC ISO 8601, "unknown" when the clock fails) and layout. Negative on
 * failure. */
herr_t rc_h5_root_attrs(hid_t file, const char *command_line, const char *layout);

#endif
