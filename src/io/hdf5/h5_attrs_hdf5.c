/* HDF5 helpers: typed attributes, quiet error stack. */
#include "h5_attrs_hdf5.h"

#include <stdlib.h>
#include <string.h>

rc_h5_quiet rc_h5_quiet_begin(void) {
  rc_h5_quiet q;
  H5Eget_auto2(H5E_DEFAULT, &q.fn, &q.data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return q;
}

void rc_h5_quiet_end(rc_h5_quiet q) { H5Eset_auto2(H5E_DEFAULT, q.fn, q.data); }

static hid_t vlen_utf8(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return t;
  if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* Creates attribute name of type/space on loc and writes buf. */
static herr_t write_attr(hid_t loc, const char *name, hid_t type, hid_t space, const void *buf) {
  if (type < 0 || space < 0) return -1;
  hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t r = a < 0 ? -1 : H5Awrite(a, type, buf);
  if (a >= 0 && H5Aclose(a) < 0) r = -1;
  return r;
}

herr_t rc_h5_attr_strings(hid_t loc, const char *name, const char *const *values, int64_t n) {
  hsize_t dims[1] = {(hsize_t)n};
  hid_t type = vlen_utf8();
  hid_t space = H5Screate_simple(1, dims, NULL);
  herr_t r = write_attr(loc, name, type, space, values);
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  return r;
}

static herr_t scalar_attr(hid_t loc, const char *name, hid_t type, const void *buf) {
  hid_t space = H5Screate(H5S_SCALAR);
  herr_t r = write_attr(loc, name, type, space, buf);
  if (space >= 0) H5Sclose(space);
  return r;
}

herr_t rc_h5_attr_string(hid_t loc, const char *name, const char *value) {
  hid_t type = vlen_utf8();
  herr_t r = scalar_attr(loc, name, type, &value);
  if (type >= 0) H5Tclose(type);
  return r;
}

herr_t rc_h5_attr_i64(hid_t loc, const char *name, int64_t value) {
  return scalar_attr(loc, name, H5T_NATIVE_INT64, &value);
}

herr_t rc_h5_attr_f64(hid_t loc, const char *name, double value) {
  return scalar_attr(loc, name, H5T_NATIVE_DOUBLE, &value);
}

/* Opens attribute loc/name when its type is of class cls and it holds
 * 1..max elements in at most one dimension; *space gets its dataspace. */
static hid_t open_attr(hid_t loc, const char *name, H5T_class_t cls, hssize_t max, hid_t *space,
                       hssize_t *n) {
  *space = -1;
  if (H5Aexists(loc, name) <= 0) return -1;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  hid_t type = a < 0 ? -1 : H5Aget_type(a);
  *space = a < 0 ? -1 : H5Aget_space(a);
  *n = *space < 0 ? -1 : H5Sget_simple_extent_npoints(*space);
  int ok = type >= 0 && H5Tget_class(type) == cls && *n >= 1 && *n <= max &&
           H5Sget_simple_extent_ndims(*space) <= 1 &&
           (cls != H5T_STRING || H5Tis_variable_str(type) > 0);
  if (type >= 0) H5Tclose(type);
  if (!ok && a >= 0) {
    H5Aclose(a);
    a = -1;
  }
  return a;
}

/* Reads attribute name, 1..RC_H5_MAX_STRINGS variable-length strings, into
 * malloc'd copies (checked before anything variable-length is read). */
static herr_t read_vlen(hid_t loc, const char *name, char ***copy, int64_t *n_out) {
  hid_t space;
  hssize_t n;
  hid_t a = open_attr(loc, name, H5T_STRING, RC_H5_MAX_STRINGS, &space, &n);
  hid_t type = a < 0 ? -1 : vlen_utf8();
  herr_t r = -1;
  char **tmp = type >= 0 ? calloc((size_t)n, sizeof *tmp) : NULL;
  char **out = tmp ? calloc((size_t)n, sizeof *out) : NULL;
  if (out) {
    r = H5Aread(a, type, tmp);
    for (hssize_t i = 0; r >= 0 && i < n; i++) {
      size_t len = tmp[i] ? strlen(tmp[i]) + 1 : 1;
      if (!(out[i] = malloc(len)))
        r = -1;
      else
        memcpy(out[i], tmp[i] ? tmp[i] : "", len);
    }
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, tmp); /* also what a failed read allocated */
  }
  if (r < 0 && out)
    for (hssize_t i = 0; i < n; i++) free(out[i]);
  if (r < 0) free(out);
  free(tmp);
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  if (a >= 0) H5Aclose(a);
  if (r >= 0) {
    *copy = out;
    *n_out = (int64_t)n;
  }
  return r;
}

char *rc_h5_attr_read_string(hid_t loc, const char *name) {
  char **v;
  int64_t n;
  if (read_vlen(loc, name, &v, &n) < 0) return NULL;
  char *s = v[0];
  for (int64_t i = 1; i < n; i++) free(v[i]);
  free(v);
  return s;
}

herr_t rc_h5_attr_read_i64(hid_t loc, const char *name, int64_t *value) {
  hid_t space;
  hssize_t n;
  hid_t a = open_attr(loc, name, H5T_INTEGER, 1, &space, &n);
  herr_t r = a < 0 ? -1 : H5Aread(a, H5T_NATIVE_INT64, value);
  if (space >= 0) H5Sclose(space);
  if (a >= 0) H5Aclose(a);
  return r;
}

herr_t rc_h5_attr_read_strings(hid_t loc, const char *name, char ***values, int64_t *n) {
  return read_vlen(loc, name, values, n);
}

hid_t rc_h5_open_dataset(hid_t loc, const char *name, H5T_class_t cls, size_t size, int rank,
                         hsize_t *dims) {
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -1;
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t type = H5Dget_type(d), space = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
  hid_t file = H5Iget_file_id(d);
  hsize_t file_size = 0, bytes = type < 0 ? 0 : H5Tget_size(type);
  int ok = type >= 0 && space >= 0 && dcpl >= 0 && file >= 0 && H5Tget_class(type) == cls &&
           (size == 0 || bytes == size) && H5Sget_simple_extent_ndims(space) == rank &&
           H5Sget_simple_extent_dims(space, dims, NULL) == rank &&
           H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl) == 0 &&
           H5Fget_filesize(file, &file_size) >= 0;
  for (int i = 0; ok && i < rank; i++) ok = !__builtin_mul_overflow(bytes, dims[i], &bytes);
  if (bytes > file_size) ok = 0;
  if (file >= 0) H5Fclose(file);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  if (!ok) {
    H5Dclose(d);
    return -1;
  }
  return d;
}
