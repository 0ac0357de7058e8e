/* Scalar basics shared by both compilers: the C compiler of the CPU kernels
 * (tensor/cpu/csrc, gcc -std=gnu11) and the CUDA compilers (NVRTC, and g++ under the CPU
 * emulator; both C++17). Defined once so that both devices convert 16-bit floats with the
 * same bit arithmetic, hence bit for bit alike.
 *
 *   SX_SCALAR_FN   the qualifier of the shared scalar functions (device code on CUDA)
 *   SX_TNAME(f, S) the name of f's instance for dtype suffix S: C has no overloading, so
 *                  one name per type (f_f32, f_f64); C++ overloads one name on the type, so
 *                  a template over T finds the right instance
 *   the fixed-width integer types (NVRTC has no system headers)
 *   SX_INF_F / SX_INF_D (float and double infinity), sx_as_float / sx_as_uint / sx_as_u64 bit
 *     casts, sx_h2f / sx_f2h (IEEE half), sx_bf2f / sx_f2bf
 *   sx_d2f_odd: double -> float rounded to odd (for a single rounding on to 16 bits)
 *   sx_f2i64 / sx_f2u64: float to integer, defined for NaN and out-of-range values
 *   sx_f2lo32f / sx_f2lo16f / sx_f2lo8f: the low bits of sx_f2i64 of a float, vectorisable
 *   sx_i64_f_odd / sx_u64_f_odd: 64-bit integer -> float rounded to odd (casts to 16 bits) */
#ifndef STRIDEX_SCALAR_TYPES_H
#define STRIDEX_SCALAR_TYPES_H

#ifdef __cplusplus
#define SX_SCALAR_FN static __device__ __forceinline__
#define SX_TNAME(f, S) f
#else
#define SX_SCALAR_FN static inline __attribute__((always_inline))
#define SX_TNAME(f, S) f##_##S
#endif

#if defined(__CUDACC_RTC__)
/* NVRTC: no system headers */
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
#else
#include <stdint.h>
#include <string.h>
#include <math.h>
#endif

#ifdef __cplusplus   /* the CUDA dialect (the emulator's shim provides the same intrinsics) */
#define SX_CLZ64(u) __clzll((long long)(u))
SX_SCALAR_FN float sx_as_float(uint32_t u) { return __uint_as_float(u); }
SX_SCALAR_FN uint32_t sx_as_uint(float f) { return __float_as_uint(f); }
SX_SCALAR_FN uint64_t sx_as_u64(double d) { return (uint64_t)__double_as_longlong(d); }
#define SX_FADD_RN(a, b) __fadd_rn(a, b)
#define SX_INF_F __int_as_float(0x7f800000)
#define SX_INF_D __longlong_as_double(0x7ff0000000000000LL)
#else
#define SX_CLZ64(u) __builtin_clzll(u)
SX_SCALAR_FN float sx_as_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
SX_SCALAR_FN uint32_t sx_as_uint(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
SX_SCALAR_FN uint64_t sx_as_u64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
#define SX_FADD_RN(a, b) ((a) + (b))
#define SX_INF_F INFINITY
#define SX_INF_D ((double)INFINITY)
#endif

SX_SCALAR_FN float sx_h2f(uint16_t h) {
    uint32_t em = h & 0x7fffu;
    uint32_t r = sx_as_uint(sx_as_float(em << 13) * 0x1p112f); /* exact rescale, subnormals too */
    r = em >= 0x7c00u ? (r | 0x7f800000u) : r;                  /* inf / nan */
    return sx_as_float(r | ((uint32_t)(h & 0x8000u) << 16));
}

/* Round to nearest, ties to even. The three cases are chosen by masks, not selects: a loop of
 * them vectorises on the CPU (the selects compiled to branches; 2.3x slower on mixed data). */
SX_SCALAR_FN uint16_t sx_f2h(float f) {
    uint32_t x = sx_as_uint(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    uint32_t big = 0x7c00u | ((uint32_t)(x > 0x7f800000u) << 9);          /* inf, or NaN 0x7e00 */
    uint32_t sub = sx_as_uint(SX_FADD_RN(sx_as_float(x), 0.5f)) - 0x3f000000u;
    uint32_t nrm = (x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13;   /* rebias exponent by -112 */
    uint32_t mbig = 0u - (uint32_t)(x >= 0x47800000u), msub = 0u - (uint32_t)(x < 0x38800000u);
    return (uint16_t)((big & mbig) | (sub & msub & ~mbig) | (nrm & ~msub & ~mbig) | sign);
}

SX_SCALAR_FN float sx_bf2f(uint16_t b) { return sx_as_float((uint32_t)b << 16); }

SX_SCALAR_FN uint16_t sx_f2bf(float f) {
    uint32_t u = sx_as_uint(f);
    uint32_t rnd = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? ((u >> 16) | 0x40u) : rnd);
}

/* double -> float rounded to odd: the float next toward zero, its last bit set, when the
 * conversion is inexact. A float -> half / bfloat16 rounding to nearest after it is then the
 * correct rounding of the double (float keeps more than two bits past either), where a plain
 * double -> float -> 16-bit path rounds twice (1 + 2^-11 + 2^-40 became 1 in half). */
SX_SCALAR_FN float sx_d2f_odd(double d) {
    float f = (float)d;
    uint32_t u = sx_as_uint(f);
    /* magnitudes' bits (f has d's sign): inexact where they differ, rounded away from zero
     * where f's is larger; integer compares and masks, so that a loop of them vectorises */
    uint64_t md = sx_as_u64(d) & 0x7fffffffffffffffull;
    uint64_t mf = sx_as_u64((double)f) & 0x7fffffffffffffffull;
    uint32_t fix = 0u - ((uint32_t)(mf != md) & (uint32_t)((u & 0x7f800000u) != 0x7f800000u));
    return sx_as_float((((u - (uint32_t)(mf > md)) | 1u) & fix) | (u & ~fix));
}

/* Float -> integer conversions defined for every value (C leaves NaN and out-of-range values
 * to the hardware: x86 and CUDA differ, and a vectorised loop can differ from its scalar
 * tail): truncation toward zero where the value fits int64, else INT64_MIN (x86's "integer
 * indefinite", NumPy's result there); narrower integer types wrap that modulo 2^bits, uint64
 * takes [2^63, 2^64) exactly and negatives modulo 2^64 (NumPy's on x86). */
SX_SCALAR_FN int64_t sx_f2i64(double x) {
    return (x >= -9223372036854775808.0 && x < 9223372036854775808.0)
               ? (int64_t)x : (int64_t)(-9223372036854775807LL - 1);
}

/* The low 32 / 16 / 8 bits of sx_f2i64(x) for a float x: all that a cast to an integer type of
 * that size keeps (it wraps those bits), computed in 32-bit lanes so that a loop of them
 * vectorises (AVX2 has no packed double -> int64 conversion). Each equals the low bits of
 * (uint32_t)sx_f2i64(x) for all 2^32 float bit patterns, scalar and in gcc's vectorised loops
 * (checked exhaustively). A value of 2^63 or more in magnitude (inf, NaN: INT64_MIN) is masked
 * to +0 first, by integer bit operations (a float select let gcc branch around the rest); then
 * every step is exact: y's 2^32 multiple q (y / 2^32 truncated, |q| < 2^31) comes off to leave
 * y mod 2^32 with y's sign, moved into [-2^31, 2^31) by 2^32 (a float of 2^31 or more holds no
 * fraction: the truncation is kept), where a plain conversion is the answer. The
 * quotient goes through int32 conversions, not truncf: gcc does not vectorise truncf unless
 * -fno-trapping-math. The narrow forms: the low 16 bits are zero from 2^39 up, the low 8 from
 * 2^31 (where the float's last bit is worth 2^16 / 2^8), and then y mod 2^16 / a plain
 * conversion is all there is left (an 8-bit cast of the old 32-bit form took 0.7 ns an element
 * with spills, NumPy 0.15; now ~0.13). */
SX_SCALAR_FN float sx_f_below(float x, uint32_t lim) {   /* x where |x|'s bits are below lim, else 0 */
    uint32_t u = sx_as_uint(x);
    return sx_as_float(u & (0u - (uint32_t)((u & 0x7fffffffu) < lim)));
}
SX_SCALAR_FN uint32_t sx_f2lo32f(float x) {
    float y = sx_f_below(x, 0x5f000000u);                        /* |x| < 2^63 */
    float t = y - (float)(int32_t)(y * 0x1p-32f) * 0x1p32f;      /* y mod 2^32: (-2^32, 2^32) */
    uint32_t hi = 0u - (uint32_t)(t >= 0x1p31f), lo = 0u - (uint32_t)(t < -0x1p31f);
    t += sx_as_float((sx_as_uint(-0x1p32f) & hi) | (sx_as_uint(0x1p32f) & lo));   /* [-2^31, 2^31) */
    return (uint32_t)(int32_t)t;
}
SX_SCALAR_FN uint32_t sx_f2lo16f(float x) {
    float y = sx_f_below(x, 0x53000000u);                        /* |x| < 2^39 */
    return (uint32_t)(int32_t)(y - (float)(int32_t)(y * 0x1p-16f) * 0x1p16f);   /* y mod 2^16 */
}
SX_SCALAR_FN uint32_t sx_f2lo8f(float x) {
    return (uint32_t)(int32_t)sx_f_below(x, 0x4f000000u);       /* |x| < 2^31 */
}

SX_SCALAR_FN uint64_t sx_f2u64(double x) {
    return x < 9223372036854775808.0 ? (uint64_t)sx_f2i64(x)
           : x < 18446744073709551616.0
               ? (uint64_t)(int64_t)(x - 9223372036854775808.0) + 9223372036854775808ULL
               : 9223372036854775808ULL;
}

/* A 64-bit integer as the float toward zero, its last bit set when inexact (rounded to odd):
 * the 24 leading bits and a sticky bit for the rest, so that a cast on to float16 / bfloat16
 * rounds once. Through double the bits past 53 were lost first, and a value just above a
 * midpoint of the 16-bit grid became the midpoint and rounded to even (2^60 + 2^52 + 1 gave
 * the bfloat16 2^60, not 2^60 + 2^53). */
SX_SCALAR_FN float sx_u64_f_odd(uint64_t u) {
    if (u < 16777216u)                                  /* below 2^24: exact */
        return (float)u;
    int sh = 40 - SX_CLZ64(u);                          /* the bits past the leading 24 */
    uint64_t kept = (u >> sh) | (uint64_t)((u & ((1ull << sh) - 1u)) != 0u);
    return (float)kept * sx_as_float((uint32_t)(127 + sh) << 23);     /* both exact */
}

SX_SCALAR_FN float sx_i64_f_odd(int64_t v) {
    float m = sx_u64_f_odd(v < 0 ? 0u - (uint64_t)v : (uint64_t)v);   /* odd rounding is symmetric */
    return v < 0 ? -m : m;
}

/* Wrapping integer arithmetic (NumPy's: INT_MAX + 1 is INT_MIN, -INT_MIN is INT_MIN). The CPU's
 * C is built with -fwrapv, where plain + - * and unary - already wrap, so these are the plain
 * operators there. C++ (NVRTC, and g++ under the emulator) leaves signed overflow undefined
 * (and uint16 * uint16, promoted to int, overflows it too): the operands go through an
 * unsigned type at least as wide as int, whose arithmetic wraps, and the result converts back
 * (modular in every compiler we use). Floats pass through unchanged (sx_wrap_t<T> is T). */
#ifdef __cplusplus
template <class T> struct sx_wrap_t { typedef T U; };
#define SX_WRAP_AS(TY, UT) template <> struct sx_wrap_t<TY> { typedef UT U; };
SX_WRAP_AS(signed char, unsigned int) SX_WRAP_AS(unsigned char, unsigned int)
SX_WRAP_AS(short, unsigned int) SX_WRAP_AS(unsigned short, unsigned int)
SX_WRAP_AS(int, unsigned int) SX_WRAP_AS(unsigned int, unsigned int)
SX_WRAP_AS(long, unsigned long) SX_WRAP_AS(unsigned long, unsigned long)
SX_WRAP_AS(long long, unsigned long long) SX_WRAP_AS(unsigned long long, unsigned long long)
#undef SX_WRAP_AS
template <class T> SX_SCALAR_FN T sx_wadd(T a, T b) {
    typedef typename sx_wrap_t<T>::U U; return (T)((U)a + (U)b);
}
template <class T> SX_SCALAR_FN T sx_wsub(T a, T b) {
    typedef typename sx_wrap_t<T>::U U; return (T)((U)a - (U)b);
}
template <class T> SX_SCALAR_FN T sx_wmul(T a, T b) {
    typedef typename sx_wrap_t<T>::U U; return (T)((U)a * (U)b);
}
template <class T> SX_SCALAR_FN T sx_wneg(T a) {
    typedef typename sx_wrap_t<T>::U U; return (T)((U)0 - (U)a);
}
/* a << b for 0 <= b < the bits of T (the caller checks): a negative a shifts as its bits */
template <class T, class B> SX_SCALAR_FN T sx_wshl(T a, B b) {
    typedef typename sx_wrap_t<T>::U U; return (T)((U)a << b);
}
#else
#define sx_wadd(a, b) ((a) + (b))
#define sx_wsub(a, b) ((a) - (b))
#define sx_wmul(a, b) ((a) * (b))
#define sx_wneg(a) (-(a))
#define sx_wshl(a, b) ((a) << (b))
#endif

#endif
