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
 *   philox_box_muller_S       one Box-Muller pair (u1 from the first word: (0,1])
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
PHILOX_FN void philox_box_muller_##S(W a, W b, T *z0, T *z1)                              \
{                                                                                         \
    T u1 = 1.0##SUF - philox_unit_##S(a);                       /* (0,1], exact */        \
    T u2 = philox_unit_##S(b);                                  /* [0,1) */               \
    T r = sqrt##SUF(-2.0##SUF * log##SUF(u1));                                            \
    T t = 6.28318530717958647692##SUF * u2;                                               \
    *z0 = r * cos##SUF(t);                                                                \
    *z1 = r * sin##SUF(t);                                                                \
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

/* [low, high): low + (x mod (high-low)), range as uint64.  Requires high > low; if not,
 * returns low.  _p form: range = (uint64)high - (uint64)low precomputed, 0 meaning 2^64
 * (the whole 64-bit space: low + x, every word once). */
PHILOX_FN int64_t philox_bounded_i64_p(uint64_t x, int64_t low, uint64_t range)
{
    return (int64_t)((uint64_t)low + (range ? x % range : x));
}

PHILOX_FN int64_t philox_bounded_i64(uint64_t x, int64_t low, int64_t high)
{
    if (high <= low)
        return low;
    return philox_bounded_i64_p(x, low, (uint64_t)high - (uint64_t)low);
}

#endif
