/* The arithmetic of a linear interpolation, shared on purpose by every
 * backend (reference, CPU, CUDA; host + device, header-only) so that they
 * round alike: the reference is an independent oracle of which samples a
 * target takes and with which weight (src/ref/ref_stencil.c), not of how two
 * floats are mixed.
 *
 * Rule (docs/design.md, "Numerics"), in the compute precision P (float32,
 * or float64 when values or out are float64), with the weight w of sample b
 * rounded to P first: as torch.lerp,
 *     out = a + w (b - a)        for w < 0.5 (a itself at w == 0),
 *     out = b - (b - a) (1 - w)  otherwise  (b itself at w == 1).
 * Where that is not finite - b - a overflowed (|a|, |b| near the largest P
 * value with opposite signs), or a or b is infinite - out is (1 - w) a + w b
 * (a at w == 0, b at w == 1): two infinities of one sign give that infinity,
 * an infinity and a finite value the infinity, NaN gives NaN.
 *
 * rc_lerp_* applies the rule to one value. A loop over many channels that
 * should vectorise applies rc_lerp_main_* to all (its branch depends on w
 * only), then rc_lerp_edge_* to those that came out non-finite. */
#ifndef ROBOCACHE_COMMON_LERP_H
#define ROBOCACHE_COMMON_LERP_H

#include <math.h>

#include "common/dtype.h"

#define RC_DEFINE_LERP(SUFFIX, T)                                                                  \
  RC_HD T rc_lerp_main_##SUFFIX(T a, T b, T w) {                                                   \
    const T d = b - a;                                                                             \
    return w < (T)0.5 ? a + w * d : b - d * ((T)1 - w);                                            \
  }                                                                                                \
  RC_HD T rc_lerp_edge_##SUFFIX(T a, T b, T w) {                                                   \
    return w == (T)0 ? a : w == (T)1 ? b : ((T)1 - w) * a + w * b;                                 \
  }                                                                                                \
  RC_HD T rc_lerp_##SUFFIX(T a, T b, T w) {                                                        \
    const T r = rc_lerp_main_##SUFFIX(a, b, w);                                                    \
    return isfinite(r) ? r : rc_lerp_edge_##SUFFIX(a, b, w);                                       \
  }

RC_DEFINE_LERP(f32, float)
RC_DEFINE_LERP(f64, double)
#undef RC_DEFINE_LERP

#endif
