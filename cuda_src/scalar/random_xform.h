/* The conversions of Philox words into values (philox.h documents the stream and these
 * formulas), shared by the CPU fills (tensor/cpu/csrc/random.c) and the CUDA ones
 * (cuda_src/random.cuh), and written once for float and double: SX_RANDOM_XFORMS stamps
 * them out per type, with the type's word, its unit scale and the suffix of its libm names
 * and literals (f for float, none for double), so a constant like 2 pi rounds straight from
 * its decimal to the type, as a literal of that type does.
 *
 *   philox_unit_S(w)          [0,1): the word's top mantissa bits times 2^-bits (exact)
 *   philox_below_S(lo, hi)    the value a draw that rounds up to hi becomes
 *   philox_uniform_S[_p]      fma(hi - lo, u, lo), in [lo, hi)
 *   philox_log_S(u)           log u, our own (below)
 *   philox_sincos_2pi_S(u)    sin and cos of 2 pi u, our own (below)
 *   philox_box_muller_S       one Box-Muller pair (u1 from the first word: (0,1])
 *
 * Normals are the same bits on both devices: log, sin and cos are not libm's or CUDA's (whose
 * last bits differ, seen on an H200) but the polynomials here, evaluated in one order with
 * explicit fma, +, -, *, / and sqrt, which IEEE rounds exactly on both. log: u = m 2^e with m
 * in [1/sqrt2, sqrt2), log m = 2 atanh((m-1)/(m+1)) by its series to s^21; sin/cos of 2 pi u:
 * the quadrant from 4u (exact), then Taylor polynomials to a^17 / a^18 on [0, pi/4]. Error: a
 * few ulps, against libm's 1.
 *   philox_normal_pair_S      the pair scaled: fma(std, z, mean)
 * Called from philox.h, after PHILOX_FN and the word types are defined. */
#ifndef STRIDEX_SCALAR_RANDOM_XFORM_H
#define STRIDEX_SCALAR_RANDOM_XFORM_H

#define SX_RANDOM_XFORMS(S, T, W, SHIFT, ULP, SUF)                                          \
PHILOX_FN T philox_unit_##S(W x)                                                          \
{                                                                                         \
    return (T)(x >> SHIFT) * ULP;                                                         \
}                                                                                         \
PHILOX_FN T philox_below_##S(T low, T high)                                               \
{                                                                                         \
    return low < high ? nextafter##SUF(high, low) : low;                                  \
}                                                                                         \
PHILOX_FN T philox_uniform_##S##_p(W x, T low, T span, T high, T below)                   \
{                                                                                         \
    T r = fma##SUF(span, philox_unit_##S(x), low);                                        \
    return r < high ? r : below;                                                          \
}                                                                                         \
PHILOX_FN T philox_uniform_##S(W x, T low, T high)                                        \
{                                                                                         \
    return philox_uniform_##S##_p(x, low, high - low, high, philox_below_##S(low, high)); \
}                                                                                         \
PHILOX_FN T philox_log_##S(T u)                     /* log u, u > 0 normal and finite */   \
{                                                                                         \
    int e;                                                                                \
    T m = frexp##SUF(u, &e);                                    /* u = m 2^e, exact */    \
    if (m < 0.70710678118654752440##SUF) { m = m * 2.0##SUF; e -= 1; } /* [1/sqrt2, sqrt2) */\
    T s = (m - 1.0##SUF) / (m + 1.0##SUF), s2 = s * s;         /* log m = 2 atanh s */    \
    T p = 0.04761904761904761905##SUF;                          /* 1/21 */                \
    p = fma##SUF(p, s2, 0.05263157894736842105##SUF);                                     \
    p = fma##SUF(p, s2, 0.05882352941176470588##SUF);                                     \
    p = fma##SUF(p, s2, 0.06666666666666666667##SUF);                                     \
    p = fma##SUF(p, s2, 0.07692307692307692308##SUF);                                     \
    p = fma##SUF(p, s2, 0.09090909090909090909##SUF);                                     \
    p = fma##SUF(p, s2, 0.11111111111111111111##SUF);                                     \
    p = fma##SUF(p, s2, 0.14285714285714285714##SUF);                                     \
    p = fma##SUF(p, s2, 0.2##SUF);                                                        \
    p = fma##SUF(p, s2, 0.33333333333333333333##SUF);                                     \
    p = fma##SUF(p * s2, 2.0##SUF * s, 2.0##SUF * s);                                     \
    return fma##SUF((T)e, 0.69314718055994530942##SUF, p);                                \
}                                                                                         \
PHILOX_FN void philox_sincos_2pi_##S(T u, T *sn, T *cs)  /* sin, cos of 2 pi u, u in [0,1) */\
{                                                                                         \
    T v = u * 4.0##SUF, q = floor##SUF(v), f = v - q;           /* exact */               \
    int swap = f > 0.5##SUF;                                                              \
    T a = (swap ? 1.0##SUF - f : f) * 1.57079632679489661923##SUF;   /* [0, pi/4] */      \
    T a2 = a * a;                                                                         \
    T ps = 2.81145725434552076320e-15##SUF;                     /* 1/17! */               \
    ps = fma##SUF(ps, a2, -7.64716373181981647590e-13##SUF);                              \
    ps = fma##SUF(ps, a2, 1.60590438368216145994e-10##SUF);                               \
    ps = fma##SUF(ps, a2, -2.50521083854417187751e-08##SUF);                              \
    ps = fma##SUF(ps, a2, 2.75573192239858906526e-06##SUF);                               \
    ps = fma##SUF(ps, a2, -1.98412698412698412698e-04##SUF);                              \
    ps = fma##SUF(ps, a2, 8.33333333333333333333e-03##SUF);                               \
    ps = fma##SUF(ps, a2, -1.66666666666666666667e-01##SUF);                              \
    T pc = -1.56192069685862264622e-16##SUF;                    /* -1/18! */              \
    pc = fma##SUF(pc, a2, 4.77947733238738529744e-14##SUF);                               \
    pc = fma##SUF(pc, a2, -1.14707455977297247139e-11##SUF);                              \
    pc = fma##SUF(pc, a2, 2.08767569878680989792e-09##SUF);                               \
    pc = fma##SUF(pc, a2, -2.75573192239858906526e-07##SUF);                              \
    pc = fma##SUF(pc, a2, 2.48015873015873015873e-05##SUF);                               \
    pc = fma##SUF(pc, a2, -1.38888888888888888889e-03##SUF);                              \
    pc = fma##SUF(pc, a2, 4.16666666666666666667e-02##SUF);                               \
    pc = fma##SUF(pc, a2, -0.5##SUF);                                                     \
    T s = fma##SUF(a * a2, ps, a), c = fma##SUF(a2, pc, 1.0##SUF);                       \
    if (swap) { T t = s; s = c; c = t; }                /* sin(pi/2 f) = cos(pi/2 (1-f)) */\
    int k = (int)q;                                                                       \
    *sn = k == 0 ? s : k == 1 ? c : k == 2 ? -s : -c;                                     \
    *cs = k == 0 ? c : k == 1 ? -s : k == 2 ? -c : s;                                     \
}                                                                                         \
PHILOX_FN void philox_box_muller_##S(W a, W b, T *z0, T *z1)                              \
{                                                                                         \
    T u1 = 1.0##SUF - philox_unit_##S(a);                       /* (0,1], exact */        \
    T u2 = philox_unit_##S(b);                                  /* [0,1) */               \
    T r = sqrt##SUF(-2.0##SUF * philox_log_##S(u1));                                      \
    T sn, cs;                                                                             \
    philox_sincos_2pi_##S(u2, &sn, &cs);                                                  \
    *z0 = r * cs;                                                                         \
    *z1 = r * sn;                                                                         \
}                                                                                         \
PHILOX_FN void philox_normal_pair_##S(W a, W b, T mean, T std, T *o0, T *o1)              \
{                                                                                         \
    T z0, z1;                                                                             \
    philox_box_muller_##S(a, b, &z0, &z1);                                                \
    *o0 = fma##SUF(std, z0, mean);                                                        \
    *o1 = fma##SUF(std, z1, mean);                                                        \
}

SX_RANDOM_XFORMS(f32, float, uint32_t, 8, 5.9604644775390625e-08f, f)           /* 2^-24 */
SX_RANDOM_XFORMS(f64, double, uint64_t, 11, 1.1102230246251565404236316680908203125e-16, ) /* 2^-53 */
#undef SX_RANDOM_XFORMS

/* Unbiased integers in [low, high): low + (x mod R), R = (uint64)high - (uint64)low, in
 * wrapping 64-bit arithmetic (uint64 ranges are the same bits), where x is the value's stream
 * word if it is >= t = 2^64 mod R, else a fresh word (rejection: the words >= t are a whole
 * number of R-wide runs, so every result is as likely; plain x mod R favoured the low
 * 2^64 mod R results, by up to 2:1 for R near 2^63). Retry k = 1, 2, ... of the value in
 * 64-bit word h of stream block j reads word h of the block with counter {j, k, 0}, outside
 * the stream (whose counters are {j, 0, 0}), so a value stays a pure function of (seed,
 * offset, index) and a draw still takes ceil(n/2) blocks. A word is rejected with
 * probability t / 2^64 < 1/2 (t < R, and t = 2^64 - R when R > 2^63), so a value takes
 * fewer than 2 words on average, and an accepted first word gives what x mod R gave; after
 * SX_RANDINT_TRIES rejections (probability < 2^-64) the last word is used as it is, so the
 * loop is bounded. R = 0 stands for 2^64 (the whole 64-bit space): low + x, no rejection.
 *   philox_bounded_threshold(R)          t, computed once per fill
 *   philox_bounded_i64_p(key, j, h, x, low, R, t)  the value */
#define SX_RANDINT_TRIES 64u

PHILOX_FN uint64_t philox_bounded_threshold(uint64_t range)
{
    return range ? (0u - range) % range : 0u;
}

PHILOX_FN int64_t philox_bounded_i64_p(philox4x32_key_t key, uint64_t j, int h, uint64_t x,
                                       int64_t low, uint64_t range, uint64_t t)
{
    if (range == 0u)
        return (int64_t)((uint64_t)low + x);
    for (uint32_t k = 1u; x < t && k <= SX_RANDINT_TRIES; k++) {
        philox4x32_ctr_t c;
        c.v[0] = (uint32_t)(j & 0xffffffffu);
        c.v[1] = (uint32_t)(j >> 32);
        c.v[2] = k;
        c.v[3] = 0u;
        x = philox_u64(philox4x32_10(c, key), h);
    }
    return (int64_t)((uint64_t)low + x % range);
}

#endif
