/* The byte stream of h5_wire_hdf5.h. */
#include "h5_wire_hdf5.h"

#include <stdlib.h>
#include <string.h>

void rc_h5_put(rc_h5_wire *w, const void *p, size_t n) {
  if (w->bad || n == 0) return;
  if (n > SIZE_MAX / 2 - w->size) {
    w->bad = 1;
    return;
  }
  if (w->size + n > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->size + n) cap *= 2;
    uint8_t *data = realloc(w->data, cap);
    if (!data) {
      w->bad = 1;
      return;
    }
    w->data = data;
    w->cap = cap;
  }
  memcpy(w->data + w->size, p, n);
  w->size += n;
}

void rc_h5_put_str(rc_h5_wire *w, const char *s) {
  int64_t len = s ? (int64_t)strlen(s) : -1;
  rc_h5_put(w, &len, sizeof len);
  if (s) rc_h5_put(w, s, (size_t)len);
}

void rc_h5_put_strs(rc_h5_wire *w, char *const *v, int64_t count) {
  rc_h5_put(w, &count, sizeof count);
  for (int64_t i = 0; i < count; i++) rc_h5_put_str(w, v[i]);
}

void rc_h5_put_array(rc_h5_wire *w, const void *p, int64_t count, size_t elem) {
  rc_h5_put(w, &count, sizeof count);
  if (count > 0) rc_h5_put(w, p, (size_t)count * elem); /* an array the child holds */
}

int rc_h5_get(rc_h5_wire *w, void *p, size_t n) {
  if (w->bad || n > w->size - w->at) {
    w->bad = 1;
    return -1;
  }
  memcpy(p, w->data + w->at, n);
  w->at += n;
  return 0;
}

/* The next length, checked to be at least min and to fit the bytes left
 * as elem-byte elements; -2 on failure. */
static int64_t get_length(rc_h5_wire *w, int64_t min, size_t elem) {
  int64_t n;
  if (rc_h5_get(w, &n, sizeof n) < 0 || n < min ||
      (n > 0 && (uint64_t)n > (w->size - w->at) / elem)) {
    w->bad = 1;
    return -2;
  }
  return n;
}

char *rc_h5_get_str(rc_h5_wire *w) {
  int64_t len = get_length(w, -1, 1);
  if (len < 0) return NULL;
  char *s = malloc((size_t)len + 1);
  if (!s || rc_h5_get(w, s, (size_t)len) < 0) {
    free(s);
    w->bad = 1;
    return NULL;
  }
  s[len] = '\0';
  return s;
}

char **rc_h5_get_strs(rc_h5_wire *w, int64_t *count) {
  *count = 0;
  int64_t n = get_length(w, 0, sizeof n); /* each string has its length first */
  char **v = n < 0 ? NULL : calloc((size_t)n + 1, sizeof *v);
  if (!v) {
    w->bad = 1;
    return NULL;
  }
  for (int64_t i = 0; i < n && !w->bad; i++) v[i] = rc_h5_get_str(w);
  *count = n;
  return v;
}

void *rc_h5_get_array(rc_h5_wire *w, size_t elem, int64_t *count) {
  *count = 0;
  int64_t n = get_length(w, 0, elem);
  if (n < 0) return NULL;
  void *p = malloc((size_t)n * elem + 1);
  if (!p || rc_h5_get(w, p, (size_t)n * elem) < 0) {
    free(p);
    w->bad = 1;
    return NULL;
  }
  *count = n;
  return p;
}
