/* Output shapes of every op, computed here once: the ops allocate and check
 * their outputs with them, and the _C.*_shapes queries return them to the
 * Python layer (outputs it allocates on CUDA devices, the fake
 * implementations of the torch ops). Batched calls take target_times [B,T],
 * unbatched ones [T] (no B axis in the results); values [..,S,D] give outputs
 * [..,T,D], values without a channel axis ([B,S] or [S], as numpy.interp)
 * outputs without one. */
#include "binding.h"

#include <stdio.h>

/* Largest number of elements of one output (keeps byte sizes in 64 bits). */
#define RCPY_MAX_ELEMS ((int64_t)1 << 60)

void rcpy_format_shape(char *buf, size_t n, const rcpy_dims *d) {
  size_t used = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < d->ndim && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)d->v[i]);
  if (used < n) snprintf(buf + used, n - used, d->ndim == 1 ? ",)" : ")");
}

rcpy_dims rcpy_dims_of(const rcpy_tensor *t) {
  rcpy_dims d = {t->t.shape ? t->t.ndim : -1, {0}};
  for (int i = 0; i < d.ndim; i++) d.v[i] = t->shape[i];
  return d;
}

static rcpy_dims dims(int ndim, const int64_t *v) {
  rcpy_dims d = {ndim, {0}};
  for (int i = 0; i < ndim; i++) d.v[i] = v[i];
  return d;
}

/* ValueError unless d has at most RCPY_MAX_ELEMS elements. */
static int check_size(const char *what, const rcpy_dims *d, const char *hint) {
  int64_t total = 1;
  for (int i = 0; i < d->ndim; i++) {
    if (d->v[i] != 0 && total > RCPY_MAX_ELEMS / d->v[i]) {
      char shape[200];
      rcpy_format_shape(shape, sizeof shape, d);
      PyErr_Format(PyExc_ValueError, "%s: shape %s has more than 2^60 elements%s", what, shape,
                   hint);
      return -1;
    }
    total *= d->v[i];
  }
  return 0;
}

int rcpy_targets_shape(const rcpy_dims *tt, int *batched) {
  if (tt->ndim != 1 && tt->ndim != 2) {
    PyErr_Format(PyExc_ValueError, "target_times: expected [T] or [B,T], got %d dimensions",
                 tt->ndim);
    return -1;
  }
  *batched = tt->ndim == 2;
  return 0;
}

int rcpy_stream_shape_of(const rcpy_dims *values, const rcpy_dims *times, int batched,
                         const char *who, rcpy_stream_shape *s) {
  int tdim = batched ? 2 : 1;
  if (times->ndim != tdim) {
    PyErr_Format(PyExc_ValueError, "%stimes: expected %s, got %d dimensions", who,
                 batched ? "[B,S] (batched, as target_times [B,T])"
                         : "[S] (unbatched, as target_times [T])",
                 times->ndim);
    return -1;
  }
  int vdim = values->ndim;
  if (vdim != tdim && vdim != tdim + 1) {
    PyErr_Format(PyExc_ValueError, "%svalues: expected %s for times of %d dimension(s), got %d",
                 who, batched ? "[B,S,D] or [B,S]" : "[S,D] or [S]", tdim, vdim);
    return -1;
  }
  s->batched = batched;
  s->channels = vdim == tdim + 1;
  s->D = s->channels ? values->v[vdim - 1] : 1;
  return 0;
}

/* [B,]T then `last` more axes. */
static rcpy_dims target_lead(const rcpy_dims *tt, int last, const int64_t *tail) {
  rcpy_dims d = *tt;
  for (int i = 0; i < last; i++) d.v[d.ndim++] = tail[i];
  return d;
}

int rcpy_resample_out(const rcpy_dims *tt, const rcpy_stream_shape *s, rcpy_dims *out,
                      rcpy_dims *valid) {
  *out = target_lead(tt, s->channels, &s->D);
  *valid = target_lead(tt, 0, NULL);
  return check_size("out", out, "");
}

int rcpy_align_out(const rcpy_dims *tt, int64_t sum_d, int64_t K, rcpy_dims *out,
                   rcpy_dims *valid) {
  *out = target_lead(tt, 1, &sum_d);
  *valid = target_lead(tt, 1, &K);
  return check_size("out", out, "");
}

rcpy_cloud_shape rcpy_cloud_shape_of(const rcpy_dims *points, const rcpy_dims *offsets) {
  rcpy_cloud_shape c;
  c.N = points->ndim >= 1 ? points->v[0] : 0;
  c.C = points->ndim == 2 ? points->v[1] : 3;
  c.B = offsets->ndim == 1 && offsets->v[0] >= 2 ? offsets->v[0] - 1 : 1;
  return c;
}

static const char k_voxel_hint[] =
    "; use a coarser voxel_size, a smaller point_cloud_range or fewer max_voxels / "
    "max_points_per_voxel";

int rcpy_voxelize_out(const rcpy_cloud_shape *c, const int64_t grid[3], int32_t mode,
                      rcpy_dims *out) {
  int64_t F = mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : c->C == 3 ? 3 : c->C - 3;
  const int64_t v[5] = {c->B, F, grid[2], grid[1], grid[0]};
  *out = dims(5, v);
  return check_size("out", out, k_voxel_hint);
}

const char *const rcpy_hard_names[4] = {"voxels", "coords", "num_points", "num_voxels"};

int rcpy_hard_out(const rcpy_cloud_shape *c, int32_t P, int32_t M, rcpy_dims out[4]) {
  if (c->B > RCPY_MAX_ELEMS / M) {
    PyErr_Format(PyExc_ValueError, "voxels: %lld clouds x max_voxels %d rows is more than 2^60%s",
                 (long long)c->B, (int)M, k_voxel_hint);
    return -1;
  }
  const int64_t rows = c->B * M;
  const int64_t v0[3] = {rows, P, c->C}, v1[2] = {rows, 4};
  out[0] = dims(3, v0);
  out[1] = dims(2, v1);
  out[2] = dims(1, &rows);
  out[3] = dims(1, &c->B);
  for (int i = 0; i < 4; i++)
    if (check_size(rcpy_hard_names[i], &out[i], k_voxel_hint) < 0) return -1;
  return 0;
}

int rcpy_downsample_out(const rcpy_cloud_shape *c, rcpy_dims out[2]) {
  const int64_t v0[2] = {c->N, c->C}, v1 = c->B + 1;
  out[0] = dims(2, v0);
  out[1] = dims(1, &v1);
  return 0;
}
