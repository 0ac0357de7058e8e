/* Float helpers of the op table's C expressions (tensor/optable.py) that neither libm nor
 * CUDA's math library has in the form NumPy computes, shared by the CPU kernels (C,
 * tensor/cpu/csrc/common.h) and the CUDA kernels (C++, cuda_src/common.cuh), so both devices
 * compute them with the same operations. The includer has the math functions declared
 * (math.h; NVRTC has them built in).
 *
 *   SX_LOGADDEXP(a, b)        NumPy's npy_logaddexp, float and double
 *   SX_SIGNBIT(a)             signbit as an int 0/1, float and double
 *   SX_LOGADDEXP2(a, b)       NumPy's npy_logaddexp2
 *   SX_DEG2RAD(a), SX_RAD2DEG(a)  NumPy's: a times the constant rounded to a's type
 *   SX_SPACING(a)             NumPy's spacing (the 16-bit floats: sx_spacing_f16 / _bf16)
 *   sx_nextafter_f16(a, b)    nextafter stepping one float16 / bfloat16 ulp (the operands
 *   sx_nextafter_bf16(a, b)   are 16-bit values carried in float; so is the result) */
#ifndef STRIDEX_SCALAR_FLOAT_OPS_H
#define STRIDEX_SCALAR_FLOAT_OPS_H
#include "scalar/types.h"

/* log(exp(a) + exp(b)) without overflow: the larger operand plus log1p(exp(-|a - b|)). Equal
 * operands take the shortcut first, so inf, inf gives inf (not inf - inf = NaN); a NaN makes
 * a - b NaN, which both comparisons reject. */
#define SX_DEF_LOGADDEXP(S, T, SUF)                                                       \
SX_SCALAR_FN T SX_TNAME(sx_logaddexp, S)(T a, T b) {                                      \
    if (a == b) return a + (T)0.693147180559945309417232121458176568##SUF;                \
    T d = a - b;                                                                          \
    if (d > 0) return a + log1p##SUF(exp##SUF(-d));                                       \
    if (d <= 0) return b + log1p##SUF(exp##SUF(d));                                       \
    return d;                                                                             \
}
/* signbit through copysign (NaNs' signs included): gcc 12 stops with an internal compiler
 * error vectorising the signbit macro over float16 loads. */
#define SX_DEF_SIGNBIT(S, T, SUF)                                                         \
SX_SCALAR_FN int SX_TNAME(sx_signbit, S)(T a) { return copysign##SUF((T)1, a) < 0; }
/* Its a + log2e * log1p(..) must not be contracted into an FMA: NumPy's npy_logaddexp2 (and
 * the CUDA kernels, built without contraction) round the product, and the CPU's gcc -std=gnu11
 * contracts by default (-ffp-contract=fast), which moved 1 in 20 float32 results by an ulp
 * and float16 ones off NumPy's. In C the function is its own, uncontracted and not inlined
 * (inlined, the caller's contraction would apply); libm's two calls dwarf the call's cost. */
#ifdef __cplusplus
#define SX_UNCONTRACTED_FN SX_SCALAR_FN
#else
#define SX_UNCONTRACTED_FN static __attribute__((noinline, optimize("fp-contract=off")))
#endif
#define SX_DEF_LOGADDEXP2(S, T, SUF)                                                      \
SX_UNCONTRACTED_FN T SX_TNAME(sx_logaddexp2, S)(T a, T b) {                               \
    const T log2e = (T)1.44269504088896340735992468100189214##SUF;                        \
    if (a == b) return a + 1;                                                             \
    T d = a - b;                                                                          \
    if (d > 0) return a + log2e * log1p##SUF(exp2##SUF(-d));                              \
    if (d <= 0) return b + log2e * log1p##SUF(exp2##SUF(d));                              \
    return d;                                                                             \
}
/* NumPy's deg2rad / rad2deg: one product with pi / 180 (180 / pi) rounded to T; spacing: the
 * step to the next T away from zero (+0 and -0 both step up, as NumPy's), NaN at +-inf */
#define SX_DEF_ANGLES(S, T, SUF, INF)                                                        \
SX_SCALAR_FN T SX_TNAME(sx_deg2rad, S)(T a) {                                             \
    return a * (T)(3.14159265358979323846264338327950288##SUF / (T)180); }                \
SX_SCALAR_FN T SX_TNAME(sx_rad2deg, S)(T a) {                                             \
    return a * (T)((T)180 / 3.14159265358979323846264338327950288##SUF); }                \
SX_SCALAR_FN T SX_TNAME(sx_spacing, S)(T a) {                                             \
    T inf = INF;                                                                          \
    return a >= 0 ? nextafter##SUF(a, inf) - a : nextafter##SUF(a, -inf) - a; }
SX_DEF_LOGADDEXP2(f32, float, f)
SX_DEF_LOGADDEXP2(f64, double, )
SX_DEF_ANGLES(f32, float, f, SX_INF_F)
SX_DEF_ANGLES(f64, double, , SX_INF_D)
#undef SX_DEF_LOGADDEXP2
#undef SX_DEF_ANGLES
SX_DEF_LOGADDEXP(f32, float, f)
SX_DEF_LOGADDEXP(f64, double, )
SX_DEF_SIGNBIT(f32, float, f)
SX_DEF_SIGNBIT(f64, double, )
#undef SX_DEF_LOGADDEXP
#undef SX_DEF_SIGNBIT

#ifdef __cplusplus
#define SX_LOGADDEXP(a, b) sx_logaddexp(a, b)
#define SX_SIGNBIT(a) sx_signbit(a)
#define SX_LOGADDEXP2(a, b) sx_logaddexp2(a, b)
#define SX_DEG2RAD(a) sx_deg2rad(a)
#define SX_RAD2DEG(a) sx_rad2deg(a)
#define SX_SPACING(a) sx_spacing(a)
#else
#define SX_LOGADDEXP(a, b) _Generic((a), float: sx_logaddexp_f32, default: sx_logaddexp_f64)(a, b)
#define SX_SIGNBIT(a) _Generic((a), float: sx_signbit_f32, default: sx_signbit_f64)(a)
#define SX_LOGADDEXP2(a, b) _Generic((a), float: sx_logaddexp2_f32, default: sx_logaddexp2_f64)(a, b)
#define SX_DEG2RAD(a) _Generic((a), float: sx_deg2rad_f32, default: sx_deg2rad_f64)(a)
#define SX_RAD2DEG(a) _Generic((a), float: sx_rad2deg_f32, default: sx_rad2deg_f64)(a)
#define SX_SPACING(a) _Generic((a), float: sx_spacing_f32, default: sx_spacing_f64)(a)
#endif

/* nextafter on the bits of a 16-bit float (float16 and bfloat16 alike: sign bit 15, and the
 * magnitude's bits order as its value): one step of the integer moves one ulp of the format
 * itself, which float32's nextafter would not. x, y are the bits of a, b; equal operands give
 * y, as C99's nextafter (nextafter(-0, 0) is 0), PyTorch's and NumPy's since 2.5 (numpy#31475:
 * its float16 gave x before). qnan: the format's NaN (NumPy's float16 0x7e00). */
SX_SCALAR_FN uint16_t sx_nextafter_bits16(uint16_t x, uint16_t y, float a, float b,
                                          uint16_t qnan) {
    if (a != a || b != b) return qnan;
    if (a == b) return y;
    if ((x & 0x7fffu) == 0) return (uint16_t)((y & 0x8000u) | 1u);   /* smallest subnormal */
    return (uint16_t)(((a < b) == !(x & 0x8000u)) ? x + 1u : x - 1u);
}
SX_SCALAR_FN float sx_nextafter_f16(float a, float b) {
    return sx_h2f(sx_nextafter_bits16(sx_f2h(a), sx_f2h(b), a, b, 0x7e00u));
}
SX_SCALAR_FN float sx_nextafter_bf16(float a, float b) {
    return sx_bf2f(sx_nextafter_bits16(sx_f2bf(a), sx_f2bf(b), a, b, 0x7fc0u));
}
SX_SCALAR_FN float sx_spacing_f16(float a) {
    float inf = SX_INF_F;
    return a >= 0 ? sx_nextafter_f16(a, inf) - a : sx_nextafter_f16(a, -inf) - a;
}
SX_SCALAR_FN float sx_spacing_bf16(float a) {
    float inf = SX_INF_F;
    return a >= 0 ? sx_nextafter_bf16(a, inf) - a : sx_nextafter_bf16(a, -inf) - a;
}

#endif
