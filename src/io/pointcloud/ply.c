/* PLY reader (Stanford polygon format): "format ascii 1.0" or
 * "format binary_little_endian 1.0"; reads the vertex element, which must be
 * the first element; later elements (faces) are ignored. */
#include "pc_fields.h"
#include "pcd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ply_header {
  rc_pc_field fields[RC_PC_MAX_COLS];
  int nf;
  int64_t vertices;
  int ascii;
  size_t body;
} ply_header;

/* PLY scalar type name -> type letter and size; 0 when unknown. */
static int scalar_type(const char *name, rc_pc_field *f) {
  static const struct {
    const char *name;
    char type;
    int size;
  } types[] = {{"char", 'I', 1},  {"int8", 'I', 1},    {"uchar", 'U', 1},  {"uint8", 'U', 1},
               {"short", 'I', 2}, {"int16", 'I', 2},   {"ushort", 'U', 2}, {"uint16", 'U', 2},
               {"int", 'I', 4},   {"int32", 'I', 4},   {"uint", 'U', 4},   {"uint32", 'U', 4},
               {"float", 'F', 4}, {"float32", 'F', 4}, {"double", 'F', 8}, {"float64", 'F', 8}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(name, types[i].name) == 0) {
      f->type = types[i].type;
      f->size = types[i].size;
      return 1;
    }
  return 0;
}

static robocache_status parse_header(const char *path, const unsigned char *buf, size_t len,
                                     ply_header *h, rc_io_err *err) {
  memset(h, 0, sizeof *h);
  h->vertices = -1;
  if (len < 4 || memcmp(buf, "ply", 3) != 0 || (buf[3] != '\n' && buf[3] != '\r'))
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: not a PLY file (does not start with \"ply\")", path);
  size_t pos = 0;
  int line = 0, element = 0, have_format = 0; /* element: 0 none, 1 vertex, 2 other */
  while (pos < len) {
    line++;
    char text[1024], *w[4] = {0};
    int nw = rc_pc_header_words(buf, len, &pos, text, sizeof text, w, 4);
    if (nw < 0)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: header line too long", path, line);
    if (nw == 0 || line == 1 || strcmp(w[0], "comment") == 0 || strcmp(w[0], "obj_info") == 0)
      continue;
    if (strcmp(w[0], "format") == 0 && nw >= 2) {
      if (strcmp(w[1], "ascii") == 0)
        h->ascii = 1;
      else if (strcmp(w[1], "binary_little_endian") != 0)
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                          "%s:%d: unsupported PLY format '%s' (ascii or binary_little_endian)",
                          path, line, w[1]);
      have_format = 1;
    } else if (strcmp(w[0], "element") == 0 && nw == 3) {
      if (strcmp(w[1], "vertex") == 0) {
        if (element != 0)
          return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                            "%s:%d: the vertex element must come first", path, line);
        char *e;
        h->vertices = strtoll(w[2], &e, 10);
        if (*e || h->vertices < 0)
          return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: bad vertex count '%s'", path,
                            line, w[2]);
        element = 1;
      } else {
        if (element == 0)
          return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                            "%s:%d: the vertex element must come first", path, line);
        element = 2;
      }
    } else if (strcmp(w[0], "property") == 0 && nw >= 3) {
      if (element != 1) continue;
      if (strcmp(w[1], "list") == 0)
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                          "%s:%d: list property in the vertex element is not supported", path,
                          line);
      if (h->nf >= RC_PC_MAX_COLS)
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: too many vertex properties",
                          path, line);
      rc_pc_field *f = &h->fields[h->nf++];
      snprintf(f->name, RC_PC_NAME_LEN, "%s", w[2]);
      f->count = 1;
      if (!scalar_type(w[1], f))
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                          "%s:%d: property '%s': unsupported type '%s'", path, line, w[2], w[1]);
    } else if (strcmp(w[0], "end_header") == 0) {
      if (!have_format || h->vertices < 0)
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                          "%s: PLY header lacks a format line or a vertex element", path);
      h->body = pos;
      return ROBOCACHE_OK;
    } else {
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%d: bad PLY header line '%s'", path,
                        line, w[0]);
    }
  }
  return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: PLY header has no end_header", path);
}

static robocache_status read_ascii(const char *path, const unsigned char *buf, size_t len,
                                   const ply_header *h, rc_pointcloud *pc, rc_io_err *err) {
  const int64_t n = h->vertices; /* each value takes a digit and a blank or newline */
  robocache_status st =
      rc_pc_check_count(path, "element vertex", n, 2 * (size_t)h->nf, len - h->body, 1, err);
  if (st == ROBOCACHE_OK) st = rc_pc_alloc_points(path, n, pc, err);
  if (st != ROBOCACHE_OK) return st;
  const char *s = (const char *)buf + h->body, *end = (const char *)buf + len;
  for (int64_t i = 0; i < n; i++) {
    while (s < end && (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')) s++;
    if (s >= end)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s: truncated: element vertex says %lld but the data has %lld", path,
                        (long long)n, (long long)i);
    for (int j = 0; j < h->nf; j++) {
      double x;
      if (!rc_pc_parse_number(&s, end, &x))
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                          "%s: vertex %lld: property '%s': missing or malformed number", path,
                          (long long)i, h->fields[j].name);
      if (h->fields[j].rgb && !rc_pc_ascii_rgb(&h->fields[j], x, &x))
        return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                          "%s: vertex %lld: property '%s': %g is not a packed colour "
                          "(0..4294967295)",
                          path, (long long)i, h->fields[j].name, x);
      rc_pc_store(&h->fields[j], &x, pc->points + i * pc->cols);
    }
    while (s < end && *s != '\n') s++; /* the rest of a vertex line is ignored */
  }
  rc_pc_drop_nonfinite(pc, n);
  return ROBOCACHE_OK;
}

robocache_status rc_ply_read(const char *path, rc_pointcloud *pc, rc_io_err *err) {
  unsigned char *buf;
  size_t len;
  robocache_status s = rc_pc_slurp(path, &buf, &len, err);
  if (s != ROBOCACHE_OK) return s;
  ply_header h;
  s = parse_header(path, buf, len, &h, err);
  if (s == ROBOCACHE_OK) s = rc_pc_assign_columns(path, h.fields, h.nf, pc, err);
  if (s == ROBOCACHE_OK) {
    pc->width = h.vertices;
    pc->height = 1;
    snprintf(pc->format, sizeof pc->format, "ply %s", h.ascii ? "ascii" : "binary_little_endian");
    if (h.ascii) {
      s = read_ascii(path, buf, len, &h, pc, err);
    } else {
      const unsigned char *base[RC_PC_MAX_COLS];
      size_t stride[RC_PC_MAX_COLS], rec = 0;
      for (int j = 0; j < h.nf; j++) {
        base[j] = buf + h.body + rec;
        rec += (size_t)h.fields[j].size;
      }
      for (int j = 0; j < h.nf; j++) stride[j] = rec;
      s = rc_pc_check_count(path, "element vertex", h.vertices, rec, len - h.body, 0, err);
      if (s == ROBOCACHE_OK)
        s = rc_pc_decode_binary(path, h.fields, h.nf, base, stride, h.vertices, pc, err);
    }
  }
  free(buf);
  return s;
}
