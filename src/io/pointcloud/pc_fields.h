/* Internal to the point-cloud readers (pointcloud.c, pcd.c, ply.c): typed
 * fields, conversion of records to float32 columns, whole-file reads, text
 * header lines. */
#ifndef ROBOCACHE_IO_PC_FIELDS_H
#define ROBOCACHE_IO_PC_FIELDS_H

#include "pointcloud.h"

#include <stddef.h>

/* One field (PCD) or property (PLY) of a record. */
typedef struct rc_pc_field {
  char name[RC_PC_NAME_LEN];
  char type; /* 'F' float, 'I' signed, 'U' unsigned */
  int size;  /* bytes of one element: F 4/8, I/U 1/2/4/8 */
  int count; /* elements */
  int col;   /* first output column, -1 = skipped */
  int rgb;   /* packed PCL colour -> columns r, g, b */
} rc_pc_field;

/* Checks type/size (INVALID_ARGUMENT "path: field 'name': unsupported type
 * T size S"), then assigns output columns to fields[0..nf): x, y, z first,
 * others in order; fills pc->cols and pc->names. */
robocache_status rc_pc_assign_columns(const char *path, rc_pc_field *fields, int nf,
                                      rc_pointcloud *pc, rc_io_err *err);

/* Element k of a binary field at p (little-endian) as double. */
double rc_pc_load(const rc_pc_field *f, const unsigned char *p);

/* The raw 32-bit pattern of an rgb field from its ASCII value x, in *bits:
 * a float field's bit pattern (PCL packs the colour into a float's bits),
 * an integer field's value. Returns 0 when an integer value is not a whole
 * number in 0..4294967295 (nothing written). */
int rc_pc_ascii_rgb(const rc_pc_field *f, double x, double *bits);

/* Writes the columns of field f for one point into row, from element values
 * vals[0..count) (for rgb: the raw 32-bit pattern in vals[0]). */
void rc_pc_store(const rc_pc_field *f, const double *vals, float *row);

/* Allocates pc->points for n >= 0 points of pc->cols columns. OUT_OF_MEMORY
 * "path: out of memory for N points" (also when the size overflows). */
robocache_status rc_pc_alloc_points(const char *path, int64_t n, rc_pointcloud *pc, rc_io_err *err);

/* INVALID_ARGUMENT "path: truncated: N points need B bytes of binary data,
 * found avail" unless 0 <= n and n * per_point <= avail without overflow.
 * ascii: per_point is the least bytes a point's text takes with its
 * separator (which the last point may lack), and the message is "path:
 * truncated: <what> says N but the data has M points at most (...)". Readers
 * call it on the count a header declares before allocating anything for it. */
robocache_status rc_pc_check_count(const char *path, const char *what, int64_t n, size_t per_point,
                                   size_t avail, int ascii, rc_io_err *err);

/* Decodes n binary records: field j of point i is at base[j] + i * stride[j]
 * (+ k * size for element k). Allocates pc->points. */
robocache_status rc_pc_decode_binary(const char *path, const rc_pc_field *fields, int nf,
                                     const unsigned char *const *base, const size_t *stride,
                                     int64_t n, rc_pointcloud *pc, rc_io_err *err);

/* Drops rows with non-finite x, y or z; sets n, points_in_file,
 * dropped_nonfinite. */
void rc_pc_drop_nonfinite(rc_pointcloud *pc, int64_t n);

/* rc_io_read_file (read_file.h) into bytes: the whole file, a NUL appended. */
robocache_status rc_pc_slurp(const char *path, unsigned char **buf, size_t *len, rc_io_err *err);

/* Copies the header line at buf[*pos..] (up to '\n' or len) into text (cap
 * bytes), splits it into at most max words at blanks (pointers into text),
 * and moves *pos past the line. Returns the number of words, or -1 when the
 * line does not fit in text. */
int rc_pc_header_words(const unsigned char *buf, size_t len, size_t *pos, char *text, size_t cap,
                       char **words, int max);

/* Parses one whitespace-separated number at *s, advancing *s; 0 on failure. */
int rc_pc_parse_number(const char **s, const char *end, double *x);

#endif
