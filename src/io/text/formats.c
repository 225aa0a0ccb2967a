/* Format names, per-format dialects and format detection. */
#include "dialect.h"
#include "reader.h"
#include "text.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int is_hdf5(const char *path) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8];
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  size_t n = fread(head, 1, sizeof head, fp);
  fclose(fp);
  return n == sizeof head && memcmp(head, sig, sizeof sig) == 0;
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

robocache_status rc_io_detect_format(const char *path, int *format, rc_io_err *err) {
  if (is_hdf5(path) || has_suffix(path, ".h5") || has_suffix(path, ".hdf5")) {
    *format = RC_IO_FORMAT_HDF5;
    return ROBOCACHE_OK;
  }
  /* the first lines decide: read RC_IO_DETECT_BYTES, the whole file only
   * when they are all blank or comments */
  rc_io_text t;
  int whole = 0, f = RC_IO_FORMAT_AUTO;
  for (size_t max = RC_IO_DETECT_BYTES; f == RC_IO_FORMAT_AUTO; max = SIZE_MAX - 1) {
    robocache_status s = rc_io_text_load_head(path, max, &t, &whole, err);
    if (s != ROBOCACHE_OK) return s;
    f = detect_text(&t, err);
    rc_io_text_free(&t);
    if (whole) break;
  }
  if (f <= RC_IO_FORMAT_AUTO)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: cannot tell the format (euroc, tum, timestamps or csv) from its "
                      "first lines; give it with format=...",
                      path);
  *format = f;
  return ROBOCACHE_OK;
}
