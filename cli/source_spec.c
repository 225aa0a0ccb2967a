/* Parsing of --stream / --target-file arguments. */
#include "source_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rc_methods[] = {"linear", "nearest", "previous", "next", "slerp"};
static const char *const rc_extraps[] = {"clamp", "fill", "extrapolate", "error"};
static const char *const rc_quat_orders[] = {"xyzw", "wxyz"};
static const char *const rc_nonfinite[] = {
    [RC_IO_NONFINITE_ERROR] = "error", [RC_IO_NONFINITE_DROP] = "drop"};

#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

const char *rc_cli_method_name(int method) {
  return method >= 0 && method < COUNT(rc_methods) ? rc_methods[method] : "?";
}

static int bad(char *msg, size_t len, const char *key, const char *value, const char *expected) {
  snprintf(msg, len, "bad %s '%s': expected %s", key, value, expected);
  return -1;
}

/* Index of value in names[n]; -1 with a message when absent. */
static int pick(const char *const *names, int n, const char *key, const char *value, char *msg,
                size_t len) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], value) == 0) return i;
  char list[128] = "";
  for (int i = 0; i < n; i++) {
    strncat(list, names[i], sizeof list - strlen(list) - 1);
    if (i + 1 < n) strncat(list, "|", sizeof list - strlen(list) - 1);
  }
  return bad(msg, len, key, value, list);
}

static int duration(const char *key, const char *value, int allow_negative, int64_t *out, char *msg,
                    size_t len) {
  rc_io_dec_result r = rc_io_parse_duration(value, out);
  if (r == RC_IO_DEC_NO_UNIT)
    return bad(msg, len, key, value, "a unit: ns, us, ms or s (e.g. 20ms)");
  if (r != RC_IO_DEC_OK) return bad(msg, len, key, value, "a duration such as 20ms or 0.5s");
  if (!allow_negative && *out < 0) return bad(msg, len, key, value, "a duration >= 0");
  return 0;
}

/* Applies one key=value to s. */
static int apply(rc_cli_source *s, const char *key, const char *value, char *msg, size_t len) {
  robocache_interp_options *o = &s->options;
  rc_io_read_spec *r = &s->read;
  int i;
  if (strcmp(key, "format") == 0) {
    i = rc_io_format_from_name(value);
    if (i < 0 || i == RC_IO_FORMAT_HDF5)
      return bad(msg, len, key, value, "euroc|tum|timestamps|csv|auto");
    r->format = i;
  } else if (strcmp(key, "time-column") == 0) {
    r->time_column = value;
  } else if (strcmp(key, "time-unit") == 0) {
    i = rc_io_time_unit_from_name(value);
    if (i < -1) return bad(msg, len, key, value, "ns|us|ms|s|auto");
    r->time_unit = i;
  } else if (!s->name) {
    snprintf(msg, len, "key '%s' applies to --stream only", key);
    return -1;
  } else if (strcmp(key, "columns") == 0) {
    r->columns = value;
  } else if (strcmp(key, "nonfinite") == 0) {
    if ((i = pick(rc_nonfinite, COUNT(rc_nonfinite), key, value, msg, len)) < 0) return -1;
    r->nonfinite = i;
  } else if (strcmp(key, "method") == 0) {
    if ((i = pick(rc_methods, COUNT(rc_methods), key, value, msg, len)) < 0) return -1;
    o->method = i;
  } else if (strcmp(key, "extrapolate") == 0) {
    if ((i = pick(rc_extraps, COUNT(rc_extraps), key, value, msg, len)) < 0) return -1;
    o->extrapolate = i;
  } else if (strcmp(key, "quat-order") == 0) {
    if ((i = pick(rc_quat_orders, COUNT(rc_quat_orders), key, value, msg, len)) < 0) return -1;
    o->quat_order = i;
  } else if (strcmp(key, "fill") == 0) {
    char *end;
    o->fill_value = strtod(value, &end);
    if (end == value || *end) return bad(msg, len, key, value, "a number or nan");
  } else if (strcmp(key, "max-gap") == 0) {
    return duration(key, value, 0, &o->max_gap_ns, msg, len);
  } else if (strcmp(key, "tolerance") == 0) {
    return duration(key, value, 0, &o->tolerance_ns, msg, len);
  } else if (strcmp(key, "offset") == 0) {
    return duration(key, value, 1, &o->time_offset_ns, msg, len);
  } else {
    snprintf(msg, len,
             "unknown key '%s' (keys: format, columns, time-column, time-unit, nonfinite, "
             "method, extrapolate, fill, max-gap, tolerance, offset, quat-order)",
             key);
    return -1;
  }
  return 0;
}

static int valid_name(const char *name) {
  if (!*name || *name == '.' || strlen(name) > 64) return 0;
  for (const char *p = name; *p; p++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p)) return 0;
  return 1;
}

int rc_cli_parse_source(const char *arg, int with_name, rc_cli_source *src, char *msg, size_t len) {
  memset(src, 0, sizeof *src);
  robocache_interp_options_init(&src->options);
  src->read.time_unit = RC_IO_UNIT_AUTO;
  src->read.require_increasing = 1;
  size_t n = strlen(arg);
  if (!(src->buf = malloc(n + 1))) {
    snprintf(msg, len, "out of memory");
    return -1;
  }
  memcpy(src->buf, arg, n + 1);
  char *p = src->buf;
  if (with_name) {
    char *eq = strchr(p, '=');
    if (!eq) {
      snprintf(msg, len, "'%s': expected NAME=FILE[,KEY=VALUE...]", arg);
      return -1;
    }
    *eq = '\0';
    if (!valid_name(p)) {
      snprintf(msg, len,
               "bad stream name '%s': use 1-64 letters, digits, '_', '-' or '.' (not first)", p);
      return -1;
    }
    src->name = p;
    p = eq + 1;
  }
  char *comma = strchr(p, ',');
  if (comma) *comma = '\0';
  if (!*p) {
    snprintf(msg, len, "'%s': missing FILE", arg);
    return -1;
  }
  src->read.path = p;
  while (comma) {
    char *kv = comma + 1;
    comma = strchr(kv, ',');
    if (comma) *comma = '\0';
    char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
      snprintf(msg, len, "'%s': expected KEY=VALUE, got '%s'", arg, kv);
      return -1;
    }
    *eq = '\0';
    if (apply(src, kv, eq + 1, msg, len) < 0) return -1;
  }
  if (src->options.tolerance_ns > 0 &&
      (src->options.method == ROBOCACHE_LINEAR || src->options.method == ROBOCACHE_SLERP)) {
    snprintf(msg, len, "'%s': tolerance applies to methods nearest, previous and next", arg);
    return -1;
  }
  return 0;
}

void rc_cli_source_free(rc_cli_source *src) {
  free(src->buf);
  src->buf = NULL;
}
