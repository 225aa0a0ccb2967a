/* Typed fields of the point-cloud readers: column assignment, conversion of
 * records to float32 rows, dropping non-finite points, whole-file reads. */
#include "pc_fields.h"
#include "read_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int supported(const rc_pc_field *f) {
  if (f->type == 'F') return f->size == 4 || f->size == 8;
  if (f->type == 'I' || f->type == 'U')
    return f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8;
  return 0;
}

static robocache_status add_name(const char *path, rc_pointcloud *pc, const char *name,
                                 rc_io_err *err) {
  if (pc->cols >= RC_PC_MAX_COLS)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: more than %d columns", path,
                      RC_PC_MAX_COLS);
  snprintf(pc->names[pc->cols++], RC_PC_NAME_LEN, "%.*s", RC_PC_NAME_LEN - 1, name);
  return ROBOCACHE_OK;
}

static int find_field(const rc_pc_field *fields, int nf, const char *name) {
  for (int j = 0; j < nf; j++)
    if (strcmp(fields[j].name, name) == 0) return j;
  return -1;
}

robocache_status rc_pc_assign_columns(const char *path, rc_pc_field *fields, int nf,
                                      rc_pointcloud *pc, rc_io_err *err) {
  for (int j = 0; j < nf; j++) {
    fields[j].col = -1;
    fields[j].rgb = strcmp(fields[j].name, "rgb") == 0 || strcmp(fields[j].name, "rgba") == 0;
    if (!supported(&fields[j]))
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s: field '%s': unsupported type %c size %d (supported: F 4/8, "
                        "I 1/2/4/8, U 1/2/4/8)",
                        path, fields[j].name, fields[j].type ? fields[j].type : '?',
                        fields[j].size);
    if (fields[j].count < 1)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: field '%s': count %d < 1", path,
                        fields[j].name, fields[j].count);
    if (fields[j].rgb && (fields[j].size != 4 || fields[j].count != 1))
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s: packed colour field '%s' must be one 4-byte value", path,
                        fields[j].name);
  }
  pc->cols = 0;
  static const char *const xyz[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; a++) {
    int j = find_field(fields, nf, xyz[a]);
    if (j < 0 || fields[j].count != 1)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s: no scalar field '%s' (point clouds need x, y and z)", path, xyz[a]);
    fields[j].col = a;
    add_name(path, pc, xyz[a], err);
  }
  for (int j = 0; j < nf; j++) {
    rc_pc_field *f = &fields[j];
    if (f->col >= 0 || strcmp(f->name, "_") == 0) continue;
    f->col = pc->cols;
    robocache_status s = ROBOCACHE_OK;
    if (f->rgb) {
      s = add_name(path, pc, "r", err);
      if (s == ROBOCACHE_OK) s = add_name(path, pc, "g", err);
      if (s == ROBOCACHE_OK) s = add_name(path, pc, "b", err);
    } else if (f->count == 1) {
      s = add_name(path, pc, f->name, err);
    } else {
      for (int k = 0; k < f->count && s == ROBOCACHE_OK; k++) {
        char name[RC_PC_NAME_LEN + 16];
        snprintf(name, sizeof name, "%s_%d", f->name, k);
        s = add_name(path, pc, name, err);
      }
    }
    if (s != ROBOCACHE_OK) return s;
  }
  return ROBOCACHE_OK;
}

double rc_pc_load(const rc_pc_field *f, const unsigned char *p) {
  if (f->rgb) {
    uint32_t u;
    memcpy(&u, p, 4);
    return (double)u;
  }
  switch (f->type * 16 + f->size) {
#define LOAD(T)                                                                                    \
  {                                                                                                \
    T v;                                                                                           \
    memcpy(&v, p, sizeof v);                                                                       \
    return (double)v;                                                                              \
  }
  case 'F' * 16 + 4: LOAD(float)
  case 'F' * 16 + 8: LOAD(double)
  case 'I' * 16 + 1: LOAD(int8_t)
  case 'I' * 16 + 2: LOAD(int16_t)
  case 'I' * 16 + 4: LOAD(int32_t)
  case 'I' * 16 + 8: LOAD(int64_t)
  case 'U' * 16 + 1: LOAD(uint8_t)
  case 'U' * 16 + 2: LOAD(uint16_t)
  case 'U' * 16 + 4: LOAD(uint32_t)
  case 'U' * 16 + 8: LOAD(uint64_t)
#undef LOAD
  }
  return 0.0;
}

int rc_pc_ascii_rgb(const rc_pc_field *f, double x, double *bits) {
  uint32_t u;
  if (f->type == 'F') {
    const float fv = (float)x;
    memcpy(&u, &fv, sizeof u);
  } else if (x >= 0.0 && x <= 4294967295.0 && x == floor(x)) {
    u = (uint32_t)x;
  } else {
    return 0;
  }
  *bits = (double)u;
  return 1;
}

void rc_pc_store(const rc_pc_field *f, const double *vals, float *row) {
  if (f->col < 0) return;
  if (f->rgb) {
    uint32_t u = (uint32_t)vals[0];
    row[f->col] = (float)((u >> 16) & 255u);
    row[f->col + 1] = (float)((u >> 8) & 255u);
    row[f->col + 2] = (float)(u & 255u);
    return;
  }
  for (int k = 0; k < f->count; k++) row[f->col + k] = (float)vals[k];
}

robocache_status rc_pc_alloc_points(const char *path, int64_t n, rc_pointcloud *pc,
                                    rc_io_err *err) {
  size_t bytes;
  if (n < 0 ||
      __builtin_mul_overflow((size_t)(n > 0 ? n : 1), (size_t)pc->cols * sizeof(float), &bytes) ||
      !(pc->points = malloc(bytes)))
    return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory for %lld points", path,
                      (long long)n);
  return ROBOCACHE_OK;
}

robocache_status rc_pc_check_count(const char *path, const char *what, int64_t n, size_t per_point,
                                   size_t avail, int ascii, rc_io_err *err) {
  if (ascii) { /* the last value needs no separator */
    const size_t most = (avail + 1) / per_point;
    if (n >= 0 && (uint64_t)n <= most) return ROBOCACHE_OK;
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: truncated: %s says %lld but the data has %zu points at most (%zu "
                      "bytes of ascii data)",
                      path, what, (long long)n, most, avail);
  }
  size_t need;
  if (n < 0 || __builtin_mul_overflow((size_t)n, per_point, &need))
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: truncated: %lld points of %zu bytes are more than any file holds "
                      "(found %zu bytes of binary data)",
                      path, (long long)n, per_point, avail);
  if (need > avail)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: truncated: %lld points need %zu bytes of binary data, found %zu", path,
                      (long long)n, need, avail);
  return ROBOCACHE_OK;
}

robocache_status rc_pc_decode_binary(const char *path, const rc_pc_field *fields, int nf,
                                     const unsigned char *const *base, const size_t *stride,
                                     int64_t n, rc_pointcloud *pc, rc_io_err *err) {
  robocache_status s = rc_pc_alloc_points(path, n, pc, err);
  if (s != ROBOCACHE_OK) return s;
  double vals[RC_PC_MAX_COLS];
  for (int64_t i = 0; i < n; i++) {
    float *row = pc->points + i * pc->cols;
    for (int j = 0; j < nf; j++) {
      const rc_pc_field *f = &fields[j];
      if (f->col < 0) continue;
      const unsigned char *p = base[j] + (size_t)i * stride[j];
      for (int k = 0; k < f->count && k < RC_PC_MAX_COLS; k++)
        vals[k] = rc_pc_load(f, p + (size_t)k * (size_t)f->size);
      rc_pc_store(f, vals, row);
    }
  }
  rc_pc_drop_nonfinite(pc, n);
  return ROBOCACHE_OK;
}

void rc_pc_drop_nonfinite(rc_pointcloud *pc, int64_t n) {
  int64_t kept = 0, C = pc->cols;
  for (int64_t i = 0; i < n; i++) {
    const float *row = pc->points + i * C;
    if (!(isfinite(row[0]) && isfinite(row[1]) && isfinite(row[2]))) continue;
    if (kept != i) memmove(pc->points + kept * C, row, (size_t)C * sizeof(float));
    kept++;
  }
  pc->n = kept;
  pc->points_in_file = n;
  pc->dropped_nonfinite = n - kept;
}

robocache_status rc_pc_slurp(const char *path, unsigned char **buf, size_t *len, rc_io_err *err) {
  char *text = NULL;
  robocache_status s = rc_io_read_file(path, &text, len, err);
  *buf = (unsigned char *)text;
  return s;
}

int rc_pc_header_words(const unsigned char *buf, size_t len, size_t *pos, char *text, size_t cap,
                       char **words, int max) {
  const unsigned char *nl = memchr(buf + *pos, '\n', len - *pos);
  size_t n = nl ? (size_t)(nl - (buf + *pos)) : len - *pos;
  if (n >= cap) return -1;
  memcpy(text, buf + *pos, n);
  text[n] = 0;
  *pos += n + (nl ? 1 : 0);
  int nw = 0;
  for (char *t = strtok(text, " \t\r"); t && nw < max; t = strtok(NULL, " \t\r")) words[nw++] = t;
  return nw;
}

int rc_pc_parse_number(const char **s, const char *end, double *x) {
  const char *p = *s;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
  if (p >= end || *p == '\n') return 0;
  char *q;
  errno = 0;
  *x = strtod(p, &q);
  if (q == p || (q < end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n' && *q != 0))
    return 0;
  *s = q;
  return 1;
}
