/* Loading text files and splitting lines into fields. */
#include "text.h"

#include "read_file.h"

#include <stdlib.h>
#include <string.h>

robocache_status rc_io_text_load(const char *path, rc_io_text *t, rc_io_err *err) {
  memset(t, 0, sizeof *t);
  t->path = path;
  robocache_status s = rc_io_read_file(path, &t->buf, &t->size, err);
  if (s != ROBOCACHE_OK) return s;
  static const char bom[3] = {'\xEF', '\xBB', '\xBF'}; /* UTF-8 byte order mark */
  if (t->size >= 3 && memcmp(t->buf, bom, 3) == 0) {
    t->size -= 3;
    memmove(t->buf, t->buf + 3, t->size + 1);
  }
  return ROBOCACHE_OK;
}

robocache_status rc_io_text_check(const rc_io_text *t, rc_io_err *err) {
  if (memchr(t->buf, '\0', t->size))
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: contains NUL bytes (not a text file)",
                      t->path);
  return ROBOCACHE_OK;
}

void rc_io_text_free(rc_io_text *t) {
  free(t->buf);
  t->buf = NULL;
}

char *rc_io_text_next_line(rc_io_text *t) {
  if (t->pos >= t->size) return NULL;
  char *line = t->buf + t->pos;
  char *nl = memchr(line, '\n', t->size - t->pos);
  size_t len = nl ? (size_t)(nl - line) : t->size - t->pos;
  t->pos += len + (nl ? 1 : 0);
  if (len > 0 && line[len - 1] == '\r') len--;
  line[len] = '\0';
  t->line_no++;
  return line;
}

static int is_blank_char(char c) { return c == ' ' || c == '\t'; }

int rc_io_line_is_blank(const char *line) {
  while (is_blank_char(*line)) line++;
  return *line == '\0';
}

int rc_io_line_is_comment(const char *line) {
  while (is_blank_char(*line)) line++;
  return *line == '#';
}

static robocache_status push(rc_io_fields *f, char *field, const rc_io_text *t, rc_io_err *err) {
  if (f->n == f->cap) {
    int cap = f->cap ? 2 * f->cap : 16;
    char **v = realloc(f->v, (size_t)cap * sizeof *v);
    if (!v) return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", t->path);
    f->v = v;
    f->cap = cap;
  }
  f->v[f->n++] = field;
  return ROBOCACHE_OK;
}

static robocache_status split_whitespace(const rc_io_text *t, char *p, rc_io_fields *f,
                                         rc_io_err *err) {
  for (;;) {
    while (is_blank_char(*p)) p++;
    if (*p == '\0') return ROBOCACHE_OK;
    robocache_status s = push(f, p, t, err);
    if (s != ROBOCACHE_OK) return s;
    while (*p && !is_blank_char(*p)) p++;
    if (*p) *p++ = '\0';
  }
}

/* Cuts the CSV field at *pp in place: *field is its text (unquoted and
 * trimmed), *pp moves past it and its comma. Returns 1 when a comma followed,
 * 0 at the end of the line, -1 for an unterminated quote, -2 for text after a
 * closing quote. */
static int csv_field(char **pp, char **field) {
  char *p = *pp;
  while (is_blank_char(*p)) p++;
  char *w = p;
  *field = p;
  if (*p == '"') {
    for (p++;;) {
      if (*p == '\0') return -1;
      if (*p == '"' && p[1] == '"') {
        *w++ = '"';
        p += 2;
      } else if (*p == '"') {
        p++;
        break;
      } else {
        *w++ = *p++;
      }
    }
    while (is_blank_char(*p)) p++;
    if (*p && *p != ',') return -2;
  } else {
    while (*p && *p != ',') p++;
    w = p;
    while (w > *field && is_blank_char(w[-1])) w--;
  }
  int more = *p == ',';
  *w = '\0';
  *pp = more ? p + 1 : p;
  return more;
}

robocache_status rc_io_split(const rc_io_text *t, char *line, char delim, rc_io_fields *f,
                             rc_io_err *err) {
  f->n = 0;
  if (delim == ' ') return split_whitespace(t, line, f, err);
  char *p = line;
  for (;;) {
    char *field;
    int more = csv_field(&p, &field);
    if (more < 0)
      return rc_io_fail(
          err, ROBOCACHE_INVALID_ARGUMENT, "%s:%lld: %s", t->path, (long long)t->line_no,
          more == -1 ? "unterminated quoted field" : "text after the closing quote of a field");
    robocache_status s = push(f, field, t, err);
    if (s != ROBOCACHE_OK || !more) return s;
  }
}

void rc_io_fields_free(rc_io_fields *f) {
  free(f->v);
  f->v = NULL;
  f->n = f->cap = 0;
}
