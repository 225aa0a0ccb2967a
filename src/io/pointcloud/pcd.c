/* PCD reader (PCL Point Cloud Data v0.5-v0.7): text header, then DATA ascii,
 * binary (records of all fields, little-endian) or binary_compressed (uint32
 * compressed size, uint32 uncompressed size, an LZF block holding the
 * fields one after another: all x, then all y, ...). */
#include "pcd.h"
#include "pc_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef ROBOCACHE_HAVE_LZF
#include <lzf.h>
#endif

#define MAX_FIELDS RC_PC_MAX_COLS
/* An LZF back-reference of 3 bytes copies at most 264: no block expands more
 * than 88 times. */
#define RC_LZF_MAX_RATIO 88

typedef struct pcd_header {
  rc_pc_field fields[MAX_FIELDS];
  int nf, nsize, ntype, ncount;
  int64_t width, height, points;
  char data[32];
  size_t body; /* offset of the first byte after the DATA line */
} pcd_header;

static int parse_int(const char *s, int64_t *v) {
  char *e;
  long long x = strtoll(s, &e, 10);
  if (e == s || *e) return 0;
  *v = x;
  return 1;
}

static robocache_status parse_header(const char *path, const unsigned char *buf, size_t len,
                                     pcd_header *h, rc_io_err *err) {
  memset(h, 0, sizeof *h);
  h->points = -1;
  size_t pos = 0;
  int line = 0;
  while (pos < len) {
    line++;
    char text[4096], *words[MAX_FIELDS + 2];
    int nw = rc_pc_header_words(buf, len, &pos, text, sizeof text, words, MAX_FIELDS + 2);
    if (nw < 0)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s:%d: header line too long (not a PCD file?)", path, line);
    if (nw == 0 || words[0][0] == '#') continue;
    const char *key = words[0];
    int nv = nw - 1;
    if (nv > MAX_FIELDS)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: more than %d fields", path, line,
                        MAX_FIELDS);
    if (strcmp(key, "VERSION") == 0 || strcmp(key, "VIEWPOINT") == 0) continue;
    if (strcmp(key, "FIELDS") == 0 || strcmp(key, "COLUMNS") == 0) {
      h->nf = nv;
      for (int j = 0; j < nv; j++) {
        snprintf(h->fields[j].name, RC_PC_NAME_LEN, "%s", words[j + 1]);
        h->fields[j].count = 1;
      }
    } else if (strcmp(key, "SIZE") == 0 || strcmp(key, "COUNT") == 0) {
      int is_size = key[0] == 'S';
      for (int j = 0; j < nv; j++) {
        int64_t v;
        if (!parse_int(words[j + 1], &v) || v < 1 || v > 1 << 20)
          return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: bad %s value '%s'", path, line,
                            key, words[j + 1]);
        if (is_size)
          h->fields[j].size = (int)v;
        else
          h->fields[j].count = (int)v;
      }
      if (is_size)
        h->nsize = nv;
      else
        h->ncount = nv;
    } else if (strcmp(key, "TYPE") == 0) {
      for (int j = 0; j < nv; j++) {
        if (strlen(words[j + 1]) != 1)
          return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: bad TYPE '%s'", path, line,
                            words[j + 1]);
        h->fields[j].type = words[j + 1][0];
      }
      h->ntype = nv;
    } else if (strcmp(key, "WIDTH") == 0 || strcmp(key, "HEIGHT") == 0 ||
               strcmp(key, "POINTS") == 0) {
      int64_t v;
      if (nv != 1 || !parse_int(words[1], &v) || v < 0)
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: bad %s line", path, line, key);
      *(key[0] == 'W' ? &h->width : key[0] == 'H' ? &h->height : &h->points) = v;
    } else if (strcmp(key, "DATA") == 0) {
      if (nv != 1)
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: bad DATA line", path, line);
      snprintf(h->data, sizeof h->data, "%s", words[1]);
      h->body = pos;
      return ROBOCACHE_OK;
    } else {
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s:%d: unknown PCD header keyword '%s' (not a PCD file?)", path, line,
                        key);
    }
  }
  return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: PCD header has no DATA line", path);
}

static robocache_status check_header(const char *path, pcd_header *h, rc_io_err *err) {
  if (h->nf == 0)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: PCD header has no FIELDS line", path);
  if (h->nsize != h->nf || h->ntype != h->nf || (h->ncount && h->ncount != h->nf))
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: PCD header: FIELDS has %d entries but SIZE %d, TYPE %d, COUNT %d", path,
                      h->nf, h->nsize, h->ntype, h->ncount);
  int64_t wh;
  if (__builtin_mul_overflow(h->width, h->height ? h->height : 1, &wh))
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: PCD header: WIDTH %lld x HEIGHT %lld overflows int64", path,
                      (long long)h->width, (long long)h->height);
  if (h->points < 0) h->points = wh;
  if (wh != h->points)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: PCD header: WIDTH %lld x HEIGHT %lld != POINTS %lld", path,
                      (long long)h->width, (long long)h->height, (long long)h->points);
  return ROBOCACHE_OK;
}

static robocache_status read_ascii(const char *path, const unsigned char *buf, size_t len,
                                   const pcd_header *h, rc_pointcloud *pc, rc_io_err *err) {
  const int64_t n = h->points;
  size_t values = 0; /* per point; each takes a digit and a blank or newline */
  for (int j = 0; j < h->nf; j++) values += (size_t)h->fields[j].count;
  robocache_status st = rc_pc_check_count(path, "POINTS", n, 2 * values, len - h->body, 1, err);
  if (st == ROBOCACHE_OK) st = rc_pc_alloc_points(path, n, pc, err);
  if (st != ROBOCACHE_OK) return st;
  const char *s = (const char *)buf + h->body, *end = (const char *)buf + len;
  double vals[RC_PC_MAX_COLS];
  for (int64_t i = 0; i < n; i++) {
    while (s < end && (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')) s++;
    if (s >= end)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s: truncated: POINTS says %lld but the data has %lld points", path,
                        (long long)n, (long long)i);
    float *row = pc->points + i * pc->cols;
    for (int j = 0; j < h->nf; j++) {
      const rc_pc_field *f = &h->fields[j];
      for (int k = 0; k < f->count; k++) {
        double x = 0.0;
        if (!rc_pc_parse_number(&s, end, &x))
          return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                            "%s: point %lld: field '%s': missing or malformed number", path,
                            (long long)i, f->name);
        if (k < RC_PC_MAX_COLS) vals[k] = x;
      }
      if (f->rgb && !rc_pc_ascii_rgb(f, vals[0], &vals[0]))
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                          "%s: point %lld: field '%s': %g is not a packed colour "
                          "(0..4294967295)",
                          path, (long long)i, f->name, vals[0]);
      rc_pc_store(f, vals, row);
    }
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s < end && *s != '\n')
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s: point %lld: more values than the %d fields", path, (long long)i,
                        h->nf);
  }
  rc_pc_drop_nonfinite(pc, n);
  return ROBOCACHE_OK;
}

static size_t record_size(const pcd_header *h) {
  size_t r = 0;
  for (int j = 0; j < h->nf; j++) r += (size_t)h->fields[j].size * (size_t)h->fields[j].count;
  return r;
}

/* Fields as records (binary) or as one block per field (compressed). */
static robocache_status decode(const char *path, const pcd_header *h, const unsigned char *data,
                               int soa, rc_pointcloud *pc, rc_io_err *err) {
  const unsigned char *base[MAX_FIELDS];
  size_t stride[MAX_FIELDS], off = 0, rec = record_size(h);
  for (int j = 0; j < h->nf; j++) {
    size_t bytes = (size_t)h->fields[j].size * (size_t)h->fields[j].count;
    base[j] = data + (soa ? off * (size_t)h->points : off);
    stride[j] = soa ? bytes : rec;
    off += bytes;
  }
  return rc_pc_decode_binary(path, h->fields, h->nf, base, stride, h->points, pc, err);
}

static robocache_status read_compressed(const char *path, const unsigned char *buf, size_t len,
                                        const pcd_header *h, rc_pointcloud *pc, rc_io_err *err) {
#ifdef ROBOCACHE_HAVE_LZF
  size_t avail = len - h->body, want;
  uint32_t sizes[2];
  if (avail < 8)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: truncated: binary_compressed data has no size words", path);
  memcpy(sizes, buf + h->body, 8);
  if (sizes[0] > avail - 8)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: truncated: compressed block of %u bytes, only %zu present", path,
                      sizes[0], avail - 8);
  if (__builtin_mul_overflow(record_size(h), (size_t)h->points, &want) || sizes[1] != want)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: uncompressed size %u does not match %lld points x %zu bytes", path,
                      sizes[1], (long long)h->points, record_size(h));
  if (want / RC_LZF_MAX_RATIO > sizes[0]) /* checked before allocating `want` bytes */
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: corrupt binary_compressed data: %u compressed bytes cannot hold %zu "
                      "(LZF expands at most %dx)",
                      path, sizes[0], want, RC_LZF_MAX_RATIO);
  unsigned char *raw = malloc(want ? want : 1);
  if (!raw) return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", path);
  unsigned got = want ? lzf_decompress(buf + h->body + 8, sizes[0], raw, (unsigned)want) : 0;
  robocache_status s;
  if (got != want)
    s = rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                   "%s: corrupt binary_compressed data (LZF gave %u of %zu bytes)", path, got,
                   want);
  else
    s = decode(path, h, raw, 1, pc, err);
  free(raw);
  return s;
#else
  (void)buf;
  (void)len;
  (void)h;
  (void)pc;
  return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                    "%s: DATA binary_compressed needs liblzf, and robocache was built without it",
                    path);
#endif
}

robocache_status rc_pcd_read(const char *path, rc_pointcloud *pc, rc_io_err *err) {
  unsigned char *buf;
  size_t len;
  robocache_status s = rc_pc_slurp(path, &buf, &len, err);
  if (s != ROBOCACHE_OK) return s;
  pcd_header h;
  s = parse_header(path, buf, len, &h, err);
  if (s == ROBOCACHE_OK) s = check_header(path, &h, err);
  if (s == ROBOCACHE_OK) s = rc_pc_assign_columns(path, h.fields, h.nf, pc, err);
  if (s == ROBOCACHE_OK) {
    pc->width = h.width;
    pc->height = h.height ? h.height : 1;
    snprintf(pc->format, sizeof pc->format, "pcd %.27s", h.data);
    if (strcmp(h.data, "ascii") == 0) {
      s = read_ascii(path, buf, len, &h, pc, err);
    } else if (strcmp(h.data, "binary") == 0) {
      s = rc_pc_check_count(path, "POINTS", h.points, record_size(&h), len - h.body, 0, err);
      if (s == ROBOCACHE_OK) s = decode(path, &h, buf + h.body, 0, pc, err);
    } else if (strcmp(h.data, "binary_compressed") == 0) {
      s = read_compressed(path, buf, len, &h, pc, err);
    } else {
      s = rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                     "%s: unknown DATA type '%s' (ascii, binary or binary_compressed)", path,
                     h.data);
    }
  }
  free(buf);
  return s;
}
