/* Column selection by name or index. */
#include "columns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when name is token, or token followed by " [unit]". */
static int name_matches(const char *name, const char *token) {
  size_t n = strlen(token);
  if (strncmp(name, token, n) != 0) return 0;
  if (name[n] == '\0') return 1;
  return name[n] == ' ' && name[n + 1] == '[' && name[strlen(name) - 1] == ']';
}

static int all_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return 1;
}

static robocache_status unknown_column(const char *path, const char *token, rc_io_names names,
                                       rc_io_err *err) {
  char list[RC_IO_ERR_LEN / 2];
  size_t len = 0;
  list[0] = '\0';
  for (int i = 0; i < names.n && len < sizeof list; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "", names.v[i]);
  if (names.n == 0)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: unknown column '%s': this format has no column names, give a "
                      "0-based index",
                      path, token);
  return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                    "%s: unknown column '%s'; available columns: %s", path, token, list);
}

robocache_status rc_io_find_column(const char *path, const char *token, rc_io_names names,
                                   int *index, rc_io_err *err) {
  if (all_digits(token)) {
    long i = strtol(token, NULL, 10);
    if (names.n > 0 && i >= names.n)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                        "%s: column index %ld out of range: the file has %d columns (0..%d)", path,
                        i, names.n, names.n - 1);
    if (i > 1000000)
      return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: column index %ld too large", path, i);
    *index = (int)i;
    return ROBOCACHE_OK;
  }
  for (int i = 0; i < names.n; i++)
    if (strcmp(names.v[i], token) == 0) {
      *index = i;
      return ROBOCACHE_OK;
    }
  for (int i = 0; i < names.n; i++)
    if (name_matches(names.v[i], token)) {
      *index = i;
      return ROBOCACHE_OK;
    }
  return unknown_column(path, token, names, err);
}

robocache_status rc_io_select_columns(const char *path, const char *list, rc_io_names names,
                                      int time_index, int **idx, int *n, rc_io_err *err) {
  *idx = NULL;
  *n = 0;
  if (!list) {
    int count = names.n > time_index ? names.n - 1 : names.n;
    *idx = malloc((size_t)(count > 0 ? count : 1) * sizeof **idx);
    if (!*idx) return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", path);
    for (int i = 0; i < names.n; i++)
      if (i != time_index) (*idx)[(*n)++] = i;
    return ROBOCACHE_OK;
  }
  size_t len = strlen(list);
  char *copy = malloc(len + 1);
  *idx = malloc((len / 2 + 1) * sizeof **idx); /* at most len/2+1 tokens */
  if (!copy || !*idx) {
    free(copy);
    return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  memcpy(copy, list, len + 1);
  robocache_status s = ROBOCACHE_OK;
  for (char *tok = copy; s == ROBOCACHE_OK;) {
    char *colon = strchr(tok, ':');
    if (colon) *colon = '\0';
    if (*tok == '\0')
      s = rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: empty column name in '%s'", path, list);
    else
      s = rc_io_find_column(path, tok, names, &(*idx)[(*n)++], err);
    if (!colon) break;
    tok = colon + 1;
  }
  free(copy);
  return s;
}
