/* Complex scalars and their arithmetic and math functions, shared by both compilers (as
 * scalar/types.h): the C compiler of the CPU kernels (gcc -std=gnu11) and the CUDA compilers
 * (NVRTC and the emulator's g++, C++17), so both devices compute complex values with the same
 * code. No C99 _Complex, <complex.h>, INFINITY or NAN: NVRTC has none of them.
 *
 *   sx_cf, sx_cd            NumPy's complex64 / complex128 layout: {re, im}, real part first
 *   sx_cf_make, sx_cd_make  construction (same names in C and C++)
 *   sx_cadd(a, b) ...       the functions below, called with the same text from both
 *                           languages: C++ overloads one name on the type; C has one function
 *                           per type (sx_cadd_cf, sx_cadd_cd: SX_TNAME) and a _Generic macro
 *                           with the plain name
 *
 * complex result: sx_cadd sx_csub sx_cmul sx_cdiv sx_cpow (binary), sx_cneg sx_cconj
 *   sx_csquare sx_crecip sx_csign sx_csqrt sx_crsqrt sx_cexp sx_cexp2 sx_cexpm1 sx_clog sx_clog1p sx_clog2
 *   sx_clog10 sx_csin sx_ccos sx_ctan sx_csinh sx_ccosh sx_ctanh sx_casin sx_cacos sx_catan
 *   sx_casinh sx_cacosh sx_catanh sx_crint
 * real result (float for sx_cf, double for sx_cd): sx_cabs sx_carg
 * int result 0/1: sx_cisnan sx_cisinf sx_cisfinite sx_cnonzero, sx_ceq sx_cne (binary)
 *
 * Semantics are NumPy 2.x's (C99 Annex G special values, signed zeros on the branch cuts) and
 * the Python array API standard's special cases where the two differ; the deviations are
 * listed in scalar/complex_math.h, which holds the function bodies (instantiated twice below:
 * once per type, float math in float). Tested against NumPy by tests/test_complex_scalar.py. */
#ifndef STRIDEX_SCALAR_COMPLEX_H
#define STRIDEX_SCALAR_COMPLEX_H
#include "scalar/types.h"

typedef struct sx_cf { float re, im; } sx_cf;    /* aggregates: no constructors */
typedef struct sx_cd { double re, im; } sx_cd;

/* Constants, written once: SXL gives the literal the type of the instance being compiled. */
#define SX_CX_PI SXL(3.14159265358979323846264338327950288)
#define SX_CX_PI_2 SXL(1.57079632679489661923132169163975144)
#define SX_CX_PI_4 SXL(0.785398163397448309615660845819875721)
#define SX_CX_3PI_4 SXL(2.35619449019234492884698253745962716)
#define SX_CX_LN2 SXL(0.693147180559945309417232121458176568)
#define SX_CX_LOG2E SXL(1.44269504088896340735992468100189214)    /* NumPy's NPY_LOG2E */
#define SX_CX_LOG10E SXL(0.434294481903251827651128918916605082)  /* NPY_LOG10E */

/* The instance's name of f: f_cf / f_cd in C, f in C++ (SX_TNAME after expanding SX_CX_S). */
#define SX_CX_N2(f, S) SX_TNAME(f, S)
#define SXN(f) SX_CX_N2(f, SX_CX_S)

/* |x + iy| for x, y >= 0, neither infinite (NaN propagates). The CPU's are branch-free, so
 * the kernels' loops vectorise (libm's hypot is a slow call per element, ~30x NumPy's SIMD
 * abs): sqrt(fma(hi, hi, lo * lo)) after a power-of-two scale that keeps the squares from
 * overflowing or underflowing (within an ulp of hypot's). CUDA's hypot is fast. */
#if defined(__CUDACC_RTC__)
#define SX_CX_ABS_F(x, y) hypotf(x, y)
#define SX_CX_ABS_D(x, y) hypot(x, y)
#else
SX_SCALAR_FN float sx_cabs_parts_f(float x, float y) {
    float hi = x > y ? x : y, lo = x > y ? y : x;
    float s = hi > 0x1p60f ? 0x1p-70f : (hi < 0x1p-60f ? 0x1p100f : 1.0f);   /* (subnormals too) */
    float a = hi * s, b = lo * s;
    float h = sqrtf(fmaf(a, a, b * b)) / s;
    return (x != x || y != y) ? x + y : h;
}
SX_SCALAR_FN double sx_cabs_parts_d(double x, double y) {
    double hi = x > y ? x : y, lo = x > y ? y : x;
    double s = hi > 0x1p500 ? 0x1p-600 : (hi < 0x1p-500 ? 0x1p600 : 1.0);
    double a = hi * s, b = lo * s;
    double h = sqrt(fma(a, a, b * b)) / s;
    return (x != x || y != y) ? x + y : h;
}
#define SX_CX_ABS_F(x, y) sx_cabs_parts_f(x, y)
#define SX_CX_ABS_D(x, y) sx_cabs_parts_d(x, y)
#endif

/* ---- complex64: float math ----
 * LNMAX: exp(x) and cosh(x) stay finite below it; BIG / SMALL: |z| beyond which the inverse
 * functions take their asymptotic forms (the next term is below half an ulp: 1/|z|^2 and
 * |z|^2 under eps); TANHX: tanh(x) rounds to +-1 above it; TINY, UP, DOWN: csqrt and csign
 * rescale operands under TINY by UP = DOWN^-2 (subnormals would lose bits); MULRN: CUDA's
 * product that is never fused into an add. */
#define SXR float
#define SXC sx_cf
#define SX_CX_S cf
#define SX_CX_MAKE sx_cf_make
#define SXF(fn) fn##f
#define SXL(v) v##f
#define SXINF SX_INF_F
#define SXMAX 0x1.fffffep127f
#define SX_CX_LNMAX 88.0f
#define SX_CX_BIG 0x1p12f
#define SX_CX_SMALL 0x1p-12f
#define SX_CX_TANHX 9.0f
#define SX_CX_TINY 0x1p-100f
#define SX_CX_UP 0x1p50f
#define SX_CX_DOWN 0x1p-25f
#define SX_CX_MULRN(a, b) __fmul_rn(a, b)
#define SX_CX_ABS SX_CX_ABS_F
#include "scalar/complex_math.h"   /* undefines the parameters above */

/* ---- complex128: double math ---- */
#define SXR double
#define SXC sx_cd
#define SX_CX_S cd
#define SX_CX_MAKE sx_cd_make
#define SXF(fn) fn
#define SXL(v) v
#define SXINF SX_INF_D
#define SXMAX 0x1.fffffffffffffp1023
#define SX_CX_LNMAX 709.0
#define SX_CX_BIG 0x1p27
#define SX_CX_SMALL 0x1p-27
#define SX_CX_TANHX 22.0
#define SX_CX_TINY 0x1p-1000
#define SX_CX_UP 0x1p600
#define SX_CX_DOWN 0x1p-300
#define SX_CX_MULRN(a, b) __dmul_rn(a, b)
#define SX_CX_ABS SX_CX_ABS_D
#include "scalar/complex_math.h"   /* undefines the parameters above */

#undef SXN
#undef SX_CX_N2
#undef SX_CX_PI
#undef SX_CX_PI_2
#undef SX_CX_PI_4
#undef SX_CX_3PI_4
#undef SX_CX_LN2
#undef SX_CX_LOG2E
#undef SX_CX_LOG10E

#ifndef __cplusplus
/* C: the plain names dispatch on the first operand's type. */
#define SX_CX_G1(f, a) _Generic((a), sx_cf: f##_cf, sx_cd: f##_cd)(a)
#define SX_CX_G2(f, a, b) _Generic((a), sx_cf: f##_cf, sx_cd: f##_cd)(a, b)
#define sx_cadd(a, b) SX_CX_G2(sx_cadd, a, b)
#define sx_csub(a, b) SX_CX_G2(sx_csub, a, b)
#define sx_cmul(a, b) SX_CX_G2(sx_cmul, a, b)
#define sx_cdiv(a, b) SX_CX_G2(sx_cdiv, a, b)
#define sx_cpow(a, b) SX_CX_G2(sx_cpow, a, b)
#define sx_ceq(a, b) SX_CX_G2(sx_ceq, a, b)
#define sx_cne(a, b) SX_CX_G2(sx_cne, a, b)
#define sx_cneg(a) SX_CX_G1(sx_cneg, a)
#define sx_cconj(a) SX_CX_G1(sx_cconj, a)
#define sx_csquare(a) SX_CX_G1(sx_csquare, a)
#define sx_crecip(a) SX_CX_G1(sx_crecip, a)
#define sx_csign(a) SX_CX_G1(sx_csign, a)
#define sx_csqrt(a) SX_CX_G1(sx_csqrt, a)
#define sx_cexp(a) SX_CX_G1(sx_cexp, a)
#define sx_cexpm1(a) SX_CX_G1(sx_cexpm1, a)
#define sx_cexp2(a) SX_CX_G1(sx_cexp2, a)
#define sx_crsqrt(a) SX_CX_G1(sx_crsqrt, a)
#define sx_clog(a) SX_CX_G1(sx_clog, a)
#define sx_clog1p(a) SX_CX_G1(sx_clog1p, a)
#define sx_clog2(a) SX_CX_G1(sx_clog2, a)
#define sx_clog10(a) SX_CX_G1(sx_clog10, a)
#define sx_csin(a) SX_CX_G1(sx_csin, a)
#define sx_ccos(a) SX_CX_G1(sx_ccos, a)
#define sx_ctan(a) SX_CX_G1(sx_ctan, a)
#define sx_csinh(a) SX_CX_G1(sx_csinh, a)
#define sx_ccosh(a) SX_CX_G1(sx_ccosh, a)
#define sx_ctanh(a) SX_CX_G1(sx_ctanh, a)
#define sx_casin(a) SX_CX_G1(sx_casin, a)
#define sx_cacos(a) SX_CX_G1(sx_cacos, a)
#define sx_catan(a) SX_CX_G1(sx_catan, a)
#define sx_casinh(a) SX_CX_G1(sx_casinh, a)
#define sx_cacosh(a) SX_CX_G1(sx_cacosh, a)
#define sx_catanh(a) SX_CX_G1(sx_catanh, a)
#define sx_crint(a) SX_CX_G1(sx_crint, a)
#define sx_cabs(a) SX_CX_G1(sx_cabs, a)
#define sx_carg(a) SX_CX_G1(sx_carg, a)
#define sx_cisnan(a) SX_CX_G1(sx_cisnan, a)
#define sx_cisinf(a) SX_CX_G1(sx_cisinf, a)
#define sx_cisfinite(a) SX_CX_G1(sx_cisfinite, a)
#define sx_cnonzero(a) SX_CX_G1(sx_cnonzero, a)
#endif

#endif
