/* The one reader behind every text format: header, column selection, rows. */
#include "reader.h"

#include "columns.h"
#include "dialect.h"
#include "text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(expr)                                                                                  \
  do {                                                                                             \
    robocache_status rc_s_ = (expr);                                                               \
    if (rc_s_ != ROBOCACHE_OK) return rc_s_;                                                       \
  } while (0)

/* State of one read. */
typedef struct reader {
  const rc_io_read_spec *spec;
  const rc_io_dialect *d;
  rc_io_text text;
  rc_io_fields header, fields;
  rc_io_names names;
  int time_index, *value_index, n_values;
  int min_fields; /* a row needs more fields than every selected index */
  int64_t cap;
  /* time unit auto: every time is read both as ns and as s; the unit is
   * chosen after the last row (any '.', 'e' or 'E' in the column -> s) */
  int auto_unit, saw_fraction;
  int64_t *times_s;        /* [cap] the times read as seconds */
  int64_t range_line[2];   /* first line whose time overflows as ns [0] / s [1] */
  char range_field[2][64]; /* its time field */
} reader;

static robocache_status oom(const reader *r, rc_io_err *err) {
  return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", r->spec->path);
}

/* Reads the header line (if the format has one) into r->header/r->names. */
static robocache_status read_header(reader *r, rc_io_err *err) {
  const char *path = r->spec->path;
  if (r->d->header == RC_IO_HEADER_NONE) {
    r->names.v = r->d->fixed_names;
    r->names.n = r->d->n_fixed;
    return ROBOCACHE_OK;
  }
  char *line = rc_io_text_next_line(&r->text);
  if (r->d->header == RC_IO_HEADER_FIRST) /* the first non-blank line */
    while (line && rc_io_line_is_blank(line)) line = rc_io_text_next_line(&r->text);
  if (!line) return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: empty file", path);
  if (line[0] == '#')
    line++;
  else if (r->d->header == RC_IO_HEADER_HASH)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s:%lld: expected a '#' header line naming the columns (EuRoC format, "
                      "e.g. '#timestamp [ns],w_RS_S_x [rad s^-1],...')",
                      path, (long long)r->text.line_no);
  TRY(rc_io_split(&r->text, line, r->d->delim, &r->header, err));
  r->names.v = (const char *const *)r->header.v;
  r->names.n = r->header.n;
  return ROBOCACHE_OK;
}

static robocache_status select_columns(reader *r, rc_io_err *err) {
  const rc_io_read_spec *spec = r->spec;
  r->time_index = 0;
  if (spec->time_column)
    TRY(rc_io_find_column(spec->path, spec->time_column, r->names, &r->time_index, err));
  if (!r->d->has_values && spec->columns)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: format timestamps has no value columns (columns=%s given)", spec->path,
                      spec->columns);
  if (r->d->has_values)
    TRY(rc_io_select_columns(spec->path, spec->columns, r->names, r->time_index, &r->value_index,
                             &r->n_values, err));
  r->min_fields = r->time_index + 1;
  for (int j = 0; j < r->n_values; j++)
    if (r->value_index[j] + 1 > r->min_fields) r->min_fields = r->value_index[j] + 1;
  return ROBOCACHE_OK;
}

static const char *column_name(const reader *r, int i, char *buf, size_t len) {
  if (i < r->names.n) return r->names.v[i];
  snprintf(buf, len, "column %d", i);
  return buf;
}

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

/* Copies the names of the time and value columns into out. */
static robocache_status name_columns(const reader *r, rc_io_table *out, rc_io_err *err) {
  char buf[32];
  out->time_name = dup_string(column_name(r, r->time_index, buf, sizeof buf));
  out->names = calloc((size_t)(r->n_values ? r->n_values : 1), sizeof *out->names);
  if (!out->time_name || !out->names) return oom(r, err);
  for (int j = 0; j < r->n_values; j++) {
    out->names[j] = dup_string(column_name(r, r->value_index[j], buf, sizeof buf));
    if (!out->names[j]) return oom(r, err);
  }
  out->cols = r->n_values;
  return ROBOCACHE_OK;
}

static robocache_status grow(reader *r, rc_io_table *out, rc_io_err *err) {
  if (out->rows < r->cap) return ROBOCACHE_OK;
  int64_t cap = r->cap ? 2 * r->cap : 1024;
  int64_t *t = realloc(out->times_ns, (size_t)cap * sizeof *t);
  if (t) out->times_ns = t;
  int64_t *l = realloc(out->lines, (size_t)cap * sizeof *l);
  if (l) out->lines = l;
  double *v = realloc(out->values, (size_t)(cap * (r->n_values ? r->n_values : 1)) * sizeof *v);
  if (v) out->values = v;
  int64_t *ts = r->auto_unit ? realloc(r->times_s, (size_t)cap * sizeof *ts) : r->times_s;
  if (ts) r->times_s = ts;
  if (!t || !l || !v || (r->auto_unit && !ts)) return oom(r, err);
  r->cap = cap;
  return ROBOCACHE_OK;
}

static robocache_status bad_time(const reader *r, int64_t line, const char *field, const char *what,
                                 rc_io_err *err) {
  char buf[32];
  return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                    "%s:%lld: bad timestamp '%s' in column '%s': %s", r->spec->path,
                    (long long)line, field, column_name(r, r->time_index, buf, sizeof buf), what);
}

static const char *const rc_range_msg = "outside the int64 nanosecond range";

/* Stores the time of the current row in out->times_ns (and r->times_s). */
static robocache_status parse_time(reader *r, rc_io_table *out, const char *field, rc_io_err *err) {
  const int64_t line = r->text.line_no;
  int64_t t;
  int exact;
  if (!r->auto_unit) {
    rc_io_dec_result res = rc_io_parse_decimal_exact(field, out->time_unit, &t, &exact);
    if (res != RC_IO_DEC_OK)
      return bad_time(r, line, field,
                      res == RC_IO_DEC_RANGE ? rc_range_msg : "not a decimal number", err);
    if (!exact && out->time_unit == RC_IO_UNIT_NS)
      return bad_time(r, line, field,
                      "not a whole number of nanoseconds (time unit ns); if the column is in "
                      "seconds, give time-unit=s (or ms, us)",
                      err);
    out->times_ns[out->rows] = t;
    return ROBOCACHE_OK;
  }
  r->saw_fraction |= strpbrk(field, ".eE") != NULL;
  for (int k = 0; k < 2; k++) {
    rc_io_dec_result res =
        rc_io_parse_decimal_exact(field, k ? RC_IO_UNIT_S : RC_IO_UNIT_NS, &t, &exact);
    if (res == RC_IO_DEC_SYNTAX) return bad_time(r, line, field, "not a decimal number", err);
    if (res != RC_IO_DEC_OK && r->range_line[k] == 0) {
      r->range_line[k] = line;
      snprintf(r->range_field[k], sizeof r->range_field[k], "%s", field);
    }
    (k ? r->times_s : out->times_ns)[out->rows] = res == RC_IO_DEC_OK ? t : 0;
  }
  return ROBOCACHE_OK;
}

/* After the last row: the unit of time-unit auto, then the order check. */
static robocache_status finish_times(reader *r, rc_io_table *out, rc_io_err *err) {
  if (r->auto_unit) {
    const int k = r->saw_fraction;
    out->time_unit = k ? RC_IO_UNIT_S : RC_IO_UNIT_NS;
    if (r->range_line[k])
      return bad_time(r, r->range_line[k], r->range_field[k], rc_range_msg, err);
    if (k) {
      int64_t *ns = out->times_ns;
      out->times_ns = r->times_s;
      r->times_s = ns;
    }
  }
  const int64_t *t = out->times_ns;
  for (int64_t i = 1; r->spec->require_increasing && i < out->rows; i++)
    if (t[i] <= t[i - 1])
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s:%lld: timestamp %lld ns is %s the previous row's (%lld ns, line "
                        "%lld): times must be strictly increasing",
                        r->spec->path, (long long)out->lines[i], (long long)t[i],
                        t[i] == t[i - 1] ? "equal to" : "before", (long long)t[i - 1],
                        (long long)out->lines[i - 1]);
  return ROBOCACHE_OK;
}

static robocache_status parse_row(reader *r, rc_io_table *out, rc_io_err *err) {
  const rc_io_fields *f = &r->fields;
  const char *path = r->spec->path;
  long long line = (long long)r->text.line_no;
  if (r->names.n > 0 && f->n != r->names.n)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%lld: expected %d fields, found %d%s",
                      path, line, r->names.n, f->n, f->n < r->names.n ? " (truncated line?)" : "");
  if (f->n < r->min_fields)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s:%lld: expected at least %d fields, found %d", path, line, r->min_fields,
                      f->n);
  TRY(grow(r, out, err));
  TRY(parse_time(r, out, f->v[r->time_index], err));
  double *row = out->values + out->rows * r->n_values;
  for (int j = 0; j < r->n_values; j++) {
    const char *field = f->v[r->value_index[j]];
    char buf[32];
    if (!rc_io_is_number(field, &row[j]))
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s:%lld: bad number '%s' in column '%s'",
                        path, line, field, column_name(r, r->value_index[j], buf, sizeof buf));
    if (isfinite(row[j])) continue;
    if (r->spec->nonfinite == RC_IO_NONFINITE_DROP) {
      out->dropped_nonfinite++;
      return ROBOCACHE_OK;
    }
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s:%lld: value '%s' in column '%s' is not finite (NaN or infinite); "
                      "nonfinite=drop drops such rows",
                      path, line, field, column_name(r, r->value_index[j], buf, sizeof buf));
  }
  out->lines[out->rows++] = r->text.line_no;
  return ROBOCACHE_OK;
}

static robocache_status read_rows(reader *r, rc_io_table *out, rc_io_err *err) {
  char *line;
  while ((line = rc_io_text_next_line(&r->text))) {
    if (rc_io_line_is_blank(line) || rc_io_line_is_comment(line)) continue;
    TRY(rc_io_split(&r->text, line, r->d->delim, &r->fields, err));
    TRY(parse_row(r, out, err));
  }
  if (out->rows == 0 && out->dropped_nonfinite > 0)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: no data rows left: all %lld had non-finite values (nonfinite=drop)",
                      r->spec->path, (long long)out->dropped_nonfinite);
  if (out->rows == 0)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: no data rows", r->spec->path);
  return finish_times(r, out, err);
}

static robocache_status read_all(reader *r, rc_io_table *out, rc_io_err *err) {
  const rc_io_read_spec *spec = r->spec;
  out->format = spec->format;
  if (out->format == RC_IO_FORMAT_AUTO && rc_io_is_hdf5(spec->path))
    out->format = RC_IO_FORMAT_HDF5; /* before loading a possibly large binary file */
  if (out->format == RC_IO_FORMAT_AUTO) {
    TRY(rc_io_text_load(spec->path, &r->text, err)); /* read once: a pipe is not read again */
    TRY(rc_io_detect_loaded(&r->text, &out->format, err));
  }
  r->d = rc_io_dialect_of(out->format);
  if (!r->d)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: format %s is not a text recording (euroc, tum, timestamps, csv)",
                      spec->path, rc_io_format_name(out->format));
  out->time_unit = spec->time_unit == RC_IO_UNIT_AUTO ? r->d->time_unit : spec->time_unit;
  r->auto_unit = out->time_unit == RC_IO_UNIT_AUTO;
  if (!r->text.buf) TRY(rc_io_text_load(spec->path, &r->text, err));
  TRY(rc_io_text_check(&r->text, err));
  TRY(read_header(r, err));
  TRY(select_columns(r, err));
  TRY(name_columns(r, out, err));
  return read_rows(r, out, err);
}

robocache_status rc_io_read(const rc_io_read_spec *spec, rc_io_table *out, rc_io_err *err) {
  memset(out, 0, sizeof *out);
  reader r = {.spec = spec};
  robocache_status s = read_all(&r, out, err);
  rc_io_text_free(&r.text);
  rc_io_fields_free(&r.header);
  rc_io_fields_free(&r.fields);
  free(r.value_index);
  free(r.times_s);
  return s;
}

void rc_io_table_free(rc_io_table *t) {
  if (!t) return;
  for (int32_t j = 0; t->names && j < t->cols; j++) free(t->names[j]);
  free(t->names);
  free(t->time_name);
  free(t->times_ns);
  free(t->values);
  free(t->lines);
  memset(t, 0, sizeof *t);
}
