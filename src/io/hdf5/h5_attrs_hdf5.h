/* Small HDF5 helpers of the I/O module: typed attributes and silencing the
 * HDF5 error stack (the library never prints). Internal to the *_hdf5.c files. */
#ifndef ROBOCACHE_IO_H5_ATTRS_H
#define ROBOCACHE_IO_H5_ATTRS_H

#include <hdf5.h>
#include <stdint.h>

/* The automatic error printer of HDF5, saved while it is turned off. */
typedef struct rc_h5_quiet {
  H5E_auto2_t fn;
  void *data;
} rc_h5_quiet;

/* Turns HDF5's printing of errors off and returns what to restore. */
rc_h5_quiet rc_h5_quiet_begin(void);
/* Restores the printer saved by rc_h5_quiet_begin. */
void rc_h5_quiet_end(rc_h5_quiet q);

/* Each returns a negative value on failure, >= 0 on success. Strings are
 * variable-length UTF-8 (h5py reads them as str). */
herr_t rc_h5_attr_string(hid_t loc, const char *name, const char *value);
herr_t rc_h5_attr_strings(hid_t loc, const char *name, const char *const *values, int64_t n);
herr_t rc_h5_attr_i64(hid_t loc, const char *name, int64_t value);
herr_t rc_h5_attr_f64(hid_t loc, const char *name, double value);

/* The readers check an attribute's class and size before reading it (a
 * corrupted file cannot make them write past their buffers or read an
 * unbounded number of variable-length strings). */
#define RC_H5_MAX_STRINGS 65536

/* Reads a scalar variable-length string attribute into a malloc'd string;
 * NULL when missing or not a variable-length string. */
char *rc_h5_attr_read_string(hid_t loc, const char *name);
/* Reads a scalar (one-element) integer attribute as int64. Negative when
 * missing, not an integer or not one element. */
herr_t rc_h5_attr_read_i64(hid_t loc, const char *name, int64_t *value);
/* Reads a 1-D variable-length string array attribute of 1..RC_H5_MAX_STRINGS
 * strings: *n strings, each and the array malloc'd. Negative on failure. */
herr_t rc_h5_attr_read_strings(hid_t loc, const char *name, char ***values, int64_t *n);

/* Opens dataset loc/name when it is of type class cls (elements of `size`
 * bytes, 0 = any), of rank `rank` (its dims in dims[rank]), stored
 * contiguously without filters, and its elements fit in the file (so
 * reading it allocates no more than the file's size). Negative otherwise. */
hid_t rc_h5_open_dataset(hid_t loc, const char *name, H5T_class_t cls, size_t size, int rank,
                         hsize_t *dims);

#endif
