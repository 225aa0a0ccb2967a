/* Writing and reading a robocache HDF5 file (align and voxelize outputs):
 * writes go through a temporary file (atomic_file.h), reads run in a child
 * process (h5_read_hdf5.c), HDF5's error printing is off while the file is
 * open, and the root attributes every layout has. Internal to the *_hdf5.c
 * files. */
#ifndef ROBOCACHE_IO_H5_FILE_H
#define ROBOCACHE_IO_H5_FILE_H

#include "h5_wire_hdf5.h"
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

/* A reader of one layout: read fills arg from the open file, pack writes
 * what read filled to a stream, unpack fills arg from that stream (all
 * fields it can; the reader's free function releases a partial result). */
typedef struct rc_h5_reader {
  const char *kind; /* "align", "voxelize", "HDF5": named in the errors */
  rc_h5_read_fn read;
  void (*pack)(const void *arg, rc_h5_wire *w);
  void (*unpack)(rc_h5_wire *w, void *arg);
} rc_h5_reader;

/* Reads path (a regular file only: rc_io_require_regular's errors) with r
 * into arg. libhdf5 (1.10) can crash, loop or corrupt its process's heap on
 * a damaged file, so it never reads one in this process: a child process
 * opens the file, calls r->read, closes it with everything read left open,
 * and sends r->pack's stream back through a pipe, which r->unpack turns
 * into arg here. IO_ERROR "path: not a robocache <kind> output: <what read
 * returned>" (or "... not an HDF5 file, or unreadable", "... libhdf5
 * crashed reading it (a damaged file)", "... libhdf5 did not finish reading
 * it (a damaged file?)" after 10 s, "... cannot start a process to read
 * it"). */
robocache_status rc_h5_read_file(const char *path, const rc_h5_reader *r, void *arg,
                                 rc_io_err *err);

/* Root attributes robocache_version, command_line ("" when NULL), created
 * (UTC ISO 8601, "unknown" when the clock fails) and layout. Negative on
 * failure. */
herr_t rc_h5_root_attrs(hid_t file, const char *command_line, const char *layout);

#endif
