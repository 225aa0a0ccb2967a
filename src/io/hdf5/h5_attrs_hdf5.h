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

/* Reads a scalar variable-length string attribute into a malloc'd string;
 * NULL when missing or not a string. */
char *rc_h5_attr_read_string(hid_t loc, const char *name);
/* Reads a scalar integer attribute as int64. Negative when missing or not
 * readable as int64. */
herr_t rc_h5_attr_read_i64(hid_t loc, const char *name, int64_t *value);
/* Reads a 1-D variable-length string array attribute: *n strings, each and
 * the array malloc'd. Negative on failure. */
herr_t rc_h5_attr_read_strings(hid_t loc, const char *name, char ***values, int64_t *n);

#endif
