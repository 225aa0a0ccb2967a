/* Format names, per-format dialects and format detection. */
#define _POSIX_C_SOURCE 200809L
#include "dialect.h"
#include "reader.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const rc_tum_names[] = {"timestamp", "tx", "ty", "tz", "qx", "qy", "qz", "qw"};

static const rc_io_dialect rc_dialects[] = {
    [RC_IO_FORMAT_EUROC] = {',', RC_IO_HEADER_HASH, NULL, 0, RC_IO_UNIT_NS, 1},
    [RC_IO_FORMAT_TUM] = {' ', RC_IO_HEADER_NONE, rc_tum_names, 8, RC_IO_UNIT_S, 1},
    [RC_IO_FORMAT_TIMESTAMPS] = {' ', RC_IO_HEADER_NONE, NULL, 0, RC_IO_UNIT_AUTO, 0},
    [RC_IO_FORMAT_CSV] = {',', RC_IO_HEADER_FIRST, NULL, 0, RC_IO_UNIT_AUTO, 1},
};

static const char *const rc_format_names[] = {
    [RC_IO_FORMAT_AUTO] = "auto", [RC_IO_FORMAT_EUROC] = "euroc",
    [RC_IO_FORMAT_TUM] = "tum",   [RC_IO_FORMAT_TIMESTAMPS] = "timestamps",
    [RC_IO_FORMAT_CSV] = "csv",   [RC_IO_FORMAT_HDF5] = "hdf5"};

#define RC_NUM_FORMATS ((int)(sizeof rc_format_names / sizeof rc_format_names[0]))

const rc_io_dialect *rc_io_dialect_of(int format) {
  if (format < RC_IO_FORMAT_EUROC || format > RC_IO_FORMAT_CSV) return NULL;
  return &rc_dialects[format];
}

int rc_io_format_from_name(const char *name) {
  for (int i = 0; i < RC_NUM_FORMATS; i++)
    if (strcmp(name, rc_format_names[i]) == 0) return i;
  return -1;
}

const char *rc_io_format_name(int format) {
  return format >= 0 && format < RC_NUM_FORMATS ? rc_format_names[format] : "unknown";
}

int rc_io_is_number(const char *s, double *value) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0') return 0;
  if (value) *value = v;
  return 1;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const unsigned char rc_hdf5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

int rc_io_is_hdf5(const char *path) {
  if (has_suffix(path, ".h5") || has_suffix(path, ".hdf5")) return 1;
  /* stat, not open: even opening a FIFO without reading would wake its
   * writer, which then fails on the closed FIFO */
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  unsigned char head[8];
  int yes = read(fd, head, 8) == 8 && memcmp(head, rc_hdf5_signature, 8) == 0;
  close(fd);
  return yes;
}

#define RC_IO_DETECT_BYTES ((size_t)1 << 16)

/* Format of a loaded text file from its first header and data lines. */
static int detect_text(rc_io_text *t, rc_io_err *err) {
  char *line;
  int first = 1;
  rc_io_fields f = {0};
  int format = RC_IO_FORMAT_AUTO;
  while (format == RC_IO_FORMAT_AUTO && (line = rc_io_text_next_line(t))) {
    if (rc_io_line_is_blank(line)) continue;
    if (first && line[0] == '#' && strchr(line, ',')) {
      format = RC_IO_FORMAT_EUROC;
    } else if (rc_io_line_is_comment(line)) {
      /* skip */
    } else if (strchr(line, ',')) {
      format = RC_IO_FORMAT_CSV;
    } else if (rc_io_split(t, line, ' ', &f, err) == ROBOCACHE_OK && f.n > 0) {
      int numeric = 0;
      while (numeric < f.n && rc_io_is_number(f.v[numeric], NULL)) numeric++;
      format = f.n == 8 && numeric == 8 ? RC_IO_FORMAT_TUM
               : numeric >= 1           ? RC_IO_FORMAT_TIMESTAMPS
                                        : -1;
    }
    first = 0;
  }
  rc_io_fields_free(&f);
  return format;
}

/* Runs detect_text on a copy of text[0..n) (detection cuts lines in place);
 * -2 when out of memory. */
static int detect_copy(const rc_io_text *t, size_t n, rc_io_err *err) {
  rc_io_text c = {.buf = malloc(n + 1), .size = n, .path = t->path};
  if (!c.buf) return -2;
  memcpy(c.buf, t->buf, n);
  c.buf[n] = '\0';
  int f = detect_text(&c, err);
  rc_io_text_free(&c);
  return f;
}

robocache_status rc_io_detect_loaded(const rc_io_text *t, int *format, rc_io_err *err) {
  if (t->size >= 8 && memcmp(t->buf, rc_hdf5_signature, 8) == 0) {
    *format = RC_IO_FORMAT_HDF5;
    return ROBOCACHE_OK;
  }
  if (t->size == 0) /* also a FIFO that nothing writes to */
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: empty file", t->path);
  /* the lines within the first RC_IO_DETECT_BYTES decide; the whole file only
   * when they are all blank or comments */
  size_t head = t->size;
  if (head > RC_IO_DETECT_BYTES) {
    head = RC_IO_DETECT_BYTES;
    while (head > 0 && t->buf[head - 1] != '\n') head--;
  }
  int f = detect_copy(t, head, err);
  if (f == RC_IO_FORMAT_AUTO && head < t->size) f = detect_copy(t, t->size, err);
  if (f == -2) return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", t->path);
  if (f <= RC_IO_FORMAT_AUTO)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: cannot tell the format (euroc, tum, timestamps or csv) from its "
                      "first lines; give it with format=...",
                      t->path);
  *format = f;
  return ROBOCACHE_OK;
}

robocache_status rc_io_detect_format(const char *path, int *format, rc_io_err *err) {
  if (rc_io_is_hdf5(path)) {
    *format = RC_IO_FORMAT_HDF5;
    return ROBOCACHE_OK;
  }
  rc_io_text t;
  robocache_status s = rc_io_text_load(path, &t, err);
  if (s == ROBOCACHE_OK) s = rc_io_detect_loaded(&t, format, err);
  rc_io_text_free(&t);
  return s;
}
