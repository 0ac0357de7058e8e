/*
 * vmath.h -- branch-free, auto-vectorisable elementary functions for the CPU
 * backend's generated elementwise loops.
 *
 *   float  vm_expf(float)      double vm_exp(double)
 *   float  vm_logf(float)      double vm_log(double)
 *   float  vm_tanhf(float)     float  vm_sigmoidf(float)
 *   float  vm_atanf(float)     float  vm_sinf(float)      float  vm_cosf(float)
 *
 * Every function is a straight-line sequence of arithmetic, integer bit
 * operations and mask blends on the same element -- no branches, table
 * look-ups or libm calls -- so a loop such as
 *
 *     for (long i = 0; i < n; i++) out[i] = vm_expf(a[i]);
 *
 * is vectorised by gcc -O3 with -march=native / x86-64-v4 (AVX-512),
 * x86-64-v3 (AVX2) and x86-64-v2 (SSE4.2).  (On the bare x86-64 SSE2 baseline
 * the float functions still vectorise; the double ones do not, for lack of
 * 64-bit integer blends.)
 *
 * Accuracy (max error, round-to-nearest; all 2^32 floats exhaustively, and
 * 10^7-point sets totalling 1.1*10^8 doubles, vs libm/long-double references):
 *   vm_expf 0.78 ulp, vm_logf 0.91 ulp, vm_tanhf 0.78 ulp, vm_sigmoidf 1.97 ulp,
 *   vm_exp 0.81 ulp, vm_log 0.90 ulp
 * (gcc -O3 -march=native, i.e. with FMA contraction; without FMA, e.g.
 * -march=x86-64-v2: vm_logf 0.95, vm_tanhf 1.18, vm_log 0.92 ulp.)
 * Special values follow C99 Annex F: NaN -> NaN, exp(+inf) = +inf,
 * exp(-inf) = +0, overflow -> +inf, gradual underflow to subnormals then +0,
 * log(+-0) = -inf, log(x<0) = NaN, log(+inf) = +inf, subnormal log inputs
 * at full accuracy, tanh(+-0) = +-0, tanh(+-inf) = +-1,
 * sigmoid(+inf) = 1, sigmoid(-inf) = 0.  FP exception flags are not
 * meaningful (spurious inexact/overflow/invalid may be raised).
 *
 * Requirements: the round-to-nearest-integer trick (x + 1.5*2^23 - 1.5*2^23)
 * and the NaN-propagating selects need IEEE semantics, i.e. do NOT compile
 * with -ffast-math / -ffinite-math-only / -fassociative-math.  Works with or
 * without FMA contraction (-ffp-contract=fast/off).
 */
#ifndef TENSOR_CPU_VMATH_H
#define TENSOR_CPU_VMATH_H

#include <stdint.h>
#include <string.h>

/* ---- bit casts (memcpy compiles to a plain register reinterpretation) ---- */
static inline uint32_t vm__f2u(float x)    { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float    vm__u2f(uint32_t u) { float x;    memcpy(&x, &u, 4); return x; }
static inline uint64_t vm__d2u(double x)   { uint64_t u; memcpy(&u, &x, 8); return u; }
static inline double   vm__u2d(uint64_t u) { double x;   memcpy(&x, &u, 8); return x; }

/* Branch-free selects: c ? a : b.  Written as bit-mask blends rather than ?:
 * on purpose: gcc lowers a float ?: to control flow, and when one arm is a
 * constant it jump-threads the rest of the function into both arms, which
 * if-conversion then cannot undo (the loop stays scalar on AVX2/SSE).  The
 * mask form keeps the code straight-line; gcc still emits a blend. */
static inline float vm__self(int c, float a, float b)
{
    uint32_t m = 0u - (uint32_t)c;
    return vm__u2f((vm__f2u(a) & m) | (vm__f2u(b) & ~m));
}
static inline double vm__seld(int c, double a, double b)
{
    uint64_t m = 0u - (uint64_t)c;
    return vm__u2d((vm__d2u(a) & m) | (vm__d2u(b) & ~m));
}

/* ========================================================================
 * exp, float
 *   x = n*ln2 + r, |r| <= ln2/2 (Cody-Waite, two-part ln2)
 *   exp(r) = 1 + r + r^2*Q(r), Q minimax degree 4 (rel. err ~2^-28)
 *   2^n applied as two normal power-of-two factors 2^n1 * 2^n2 so that
 *   p*2^n1 is exact and only the final multiply rounds; this gives correct
 *   gradual underflow and natural overflow to +inf.
 * ====================================================================== */
static inline float vm_expf(float x)
{
    const float shift  = 0x1.8p23f;          /* 1.5*2^23: rounds to integer */
    const float log2e  = 0x1.715476p+0f;
    const float ln2_hi = 0x1.62e4p-1f;       /* 15 significant bits: n*ln2_hi exact */
    const float ln2_lo = 0x1.7f7d1cp-20f;    /* ln2 - ln2_hi */

    /* clamp; NaN fails both compares and passes through unchanged */
    float xc = vm__self(x < -150.0f, -150.0f, x);   /* exp(-150) rounds to +0 */
    xc = vm__self(xc > 100.0f, 100.0f, xc);         /* exp(100) = +inf */

    float t  = xc * log2e + shift;
    float nf = t - shift;                    /* n = rint(x/ln2), |n| <= 217 */
    float rh = xc - nf * ln2_hi;             /* exact */
    float c  = nf * ln2_lo;
    float r  = rh - c;                       /* x - n*ln2, rounded */

    float q = 0x1.6a1a72p-10f;
    q = q * r + 0x1.123fc6p-7f;
    q = q * r + 0x1.555916p-5f;
    q = q * r + 0x1.55548ap-3f;
    q = q * r + 0x1.fffffcp-2f;
    float w = (r * r) * q;
    /* exp(r) = 1 + rh - c + w, with 1 + rh split exactly (Fast2Sum) so the
       only large rounding is the final addition */
    float hi = 1.0f + rh;
    float lo = (1.0f - hi) + rh;
    float p  = hi + (lo + (w - c));          /* exp(r), in [0.70, 1.42] */

    /* n from the bits of t (t = 1.5*2^23 + n exactly); n1 = floor(n/2) */
    uint32_t nb = vm__f2u(t) - vm__f2u(shift) + 256u;   /* n + 256 >= 39 */
    uint32_t n1 = (nb >> 1) - 128u;                       /* floor(n/2)   */
    uint32_t n2 = (nb - 256u) - n1;                       /* n - n1       */
    float s1 = vm__u2f((n1 + 127u) << 23);
    float s2 = vm__u2f((n2 + 127u) << 23);
    return (p * s1) * s2;
}

/* ========================================================================
 * exp, double: same scheme, Q minimax degree 9 (rel. err ~2^-56.7)
 * ====================================================================== */
static inline double vm_exp(double x)
{
    const double shift  = 0x1.8p52;
    const double log2e  = 0x1.71547652b82fep+0;
    const double ln2_hi = 0x1.62e42fee00000p-1;    /* low 32 bits zero */
    const double ln2_lo = 0x1.a39ef35793c76p-33;   /* ln2 - ln2_hi */

    double xc = vm__seld(x < -760.0, -760.0, x);   /* exp(-760) rounds to +0 */
    xc = vm__seld(xc > 720.0, 720.0, xc);          /* exp(720) = +inf */

    double t  = xc * log2e + shift;
    double nf = t - shift;                         /* |n| <= 1097 */
    double rh = xc - nf * ln2_hi;                  /* exact */
    double c  = nf * ln2_lo;
    double r  = rh - c;

    /* Q(r) by Estrin-like split to shorten the dependency chain */
    double r2 = r * r;
    double r4 = r2 * r2;
    double a0 = 0x1.000000000000ap-1 + 0x1.555555555555ep-3 * r;
    double a1 = 0x1.555555554fd4fp-5 + 0x1.111111110dbc0p-7 * r;
    double a2 = 0x1.6c16c1878f055p-10 + 0x1.a01a01bb0af5bp-13 * r;
    double a3 = 0x1.a0198f5e3b16ep-16 + 0x1.71dddbbf180bcp-19 * r;
    double a4 = 0x1.28b8197845405p-22 + 0x1.af90b3b36ea10p-26 * r;
    double b0 = a0 + a1 * r2;
    double b1 = a2 + a3 * r2;
    double q  = b0 + (b1 + a4 * r4) * r4;
    double w  = r2 * q;
    double hi = 1.0 + rh;                          /* Fast2Sum, see vm_expf */
    double lo = (1.0 - hi) + rh;
    double p  = hi + (lo + (w - c));

    uint64_t nb = vm__d2u(t) - vm__d2u(shift) + 1100u;   /* n + 1100 >= 3 */
    uint64_t n1 = (nb >> 1) - 550u;
    uint64_t n2 = (nb - 1100u) - n1;
    double s1 = vm__u2d((n1 + 1023u) << 52);
    double s2 = vm__u2d((n2 + 1023u) << 52);
    return (p * s1) * s2;
}

/* ========================================================================
 * log, float
 *   x = 2^k * m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact)
 *   s = f/(2+f), z = s^2, log(1+f) = 2s + s*R(z) = f - s*(f - R),
 *   R = z*P(z), P minimax degree 2 (rel. err ~2^-30); k*ln2 in two parts.
 *   Subnormals are pre-scaled by 2^25 and the scale is removed again from
 *   the exponent bits (which may then go "below zero"; the arithmetic shift
 *   handles that).
 * ====================================================================== */
static inline float vm_logf(float x)
{
    const float ln2_hi = 0x1.62e4p-1f;       /* k*ln2_hi exact for |k| < 512 */
    const float ln2_lo = 0x1.7f7d1cp-20f;

    float scale = vm__self(x < 0x1p-126f, 0x1p25f, 1.0f);
    float xs = x * scale;
    /* tmp = bits(x) - bits(sqrt(1/2)), with an unbounded exponent field */
    uint32_t tmp = vm__f2u(xs) - vm__f2u(scale) + (0x3f800000u - 0x3f3504f3u);
    int32_t  k   = (int32_t)tmp >> 23;       /* arithmetic shift */
    float    m   = vm__u2f((tmp & 0x007fffffu) + 0x3f3504f3u);
    float    kf  = (float)k;

    float f = m - 1.0f;
    float s = f / (2.0f + f);
    float z = s * s;
    float R = z * ((0x1.31e678p-2f * z + 0x1.995e9cp-2f) * z + 0x1.55557ap-1f);
    float res = kf * ln2_hi - ((s * (f - R) - kf * ln2_lo) - f);

    /* special inputs (not in (0, +inf)): +-0 -> -inf, x < 0 -> NaN,
       +inf -> +inf, NaN -> NaN (x*inf + inf is NaN for x < 0) */
    int special = (vm__f2u(x) - 1u) >= 0x7f7fffffu;
    float sp = vm__self(x == 0.0f, -__builtin_inff(),
                        x * __builtin_inff() + __builtin_inff());
    return vm__self(special, sp, res);
}

/* ========================================================================
 * log, double: same scheme, P minimax degree 6 in z (rel. err ~2^-59.5).
 * The exponent is extracted with a logical shift of an offset value and
 * converted with the 2^52 magic number (no 64-bit arithmetic shift or
 * int64->double needed, so pre-AVX-512 targets vectorise it too).
 * ====================================================================== */
static inline double vm_log(double x)
{
    const double ln2_hi = 0x1.62e42fee00000p-1;
    const double ln2_lo = 0x1.a39ef35793c76p-33;

    double scale = vm__seld(x < 0x1p-1022, 0x1p54, 1.0);
    double xs = x * scale;
    uint64_t tmp = vm__d2u(xs) - vm__d2u(scale)
                   + (0x3ff0000000000000ULL - 0x3fe6a09e667f3bcdULL);
    uint64_t kb  = (tmp + (1088ULL << 52)) >> 52;          /* k + 1088 > 0 */
    double   m   = vm__u2d((tmp & 0x000fffffffffffffULL) + 0x3fe6a09e667f3bcdULL);
    double   kf  = vm__u2d(0x4330000000000000ULL | kb) - (0x1p52 + 1088.0);

    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double z2 = z * z;
    double z4 = z2 * z2;
    double a0 = 0x1.5555555555593p-1 + 0x1.999999997fb31p-2 * z;
    double a1 = 0x1.2492494217a45p-2 + 0x1.c71c51e7f56c4p-3 * z;
    double a2 = 0x1.7466462ce5e7ap-3 + 0x1.39a0f4fa4075ap-3 * z;
    double P  = (a0 + a1 * z2) + (a2 + 0x1.2f0d8ee3130bep-3 * z2) * z4;
    double R  = z * P;
    double res = kf * ln2_hi - ((s * (f - R) - kf * ln2_lo) - f);

    int special = !((x > 0.0) & (x < __builtin_inf()));
    double sp = vm__seld(x == 0.0, -__builtin_inf(),
                         x * __builtin_inf() + __builtin_inf());
    return vm__seld(special, sp, res);
}

/* ========================================================================
 * tanh, float
 *   tanh|x| = -em1 / (2 + em1),  em1 = expm1(-2|x|) in (-1, 0]
 *   expm1 uses the vm_expf reduction, but keeps exp(r)-1 and the final
 *   (2^n - 1) + 2^n*(exp(r)-1) as unevaluated hi+lo sums, and the division is
 *   corrected with its exact remainder, so there is no cancellation for small
 *   |x| and no separate small-argument polynomial is needed.  Saturates to
 *   +-1 (|x| > 9.01), odd (tanh(-0) = -0), NaN -> NaN.
 *   (~0.7 ulp with FMA contraction, ~1.2 ulp without.)
 * ====================================================================== */
static inline float vm_tanhf(float x)
{
    const float shift  = 0x1.8p23f;
    const float log2e  = 0x1.715476p+0f;
    const float ln2_hi = 0x1.62e4p-1f;
    const float ln2_lo = 0x1.7f7d1cp-20f;

    uint32_t ux = vm__f2u(x);
    float ax = vm__u2f(ux & 0x7fffffffu);
    /* em1 = expm1(y), y = -2|x| clamped to [-20, 0] (tanh(10) rounds to 1) */
    float y  = vm__self(ax > 10.0f, -20.0f, -2.0f * ax);   /* NaN kept */
    float t  = y * log2e + shift;
    float nf = t - shift;                                   /* n in [-29, 0] */
    float rh = y - nf * ln2_hi;
    float c  = nf * ln2_lo;
    float r  = rh - c;
    float q = 0x1.a0332ep-13f;               /* minimax for expm1, rel. err 2^-31.9 */
    q = q * r + 0x1.6d78d8p-10f;
    q = q * r + 0x1.11118ep-7f;
    q = q * r + 0x1.5554aap-5f;
    q = q * r + 0x1.555554p-3f;
    q = q * r + 0.5f;
    float wc  = (r * r) * q - c;
    float pm1 = rh + wc;                                    /* exp(r) - 1 */
    float pl  = (rh - pm1) + wc;                            /* its rounding error */
    float s   = vm__u2f((vm__f2u(t) - vm__f2u(shift) + 127u) << 23);   /* 2^n */
    /* em1 = expm1(y) = (s - 1) + s*pm1 as an unevaluated sum eh + el
       (s*pm1 and s-1 are exact; Fast2Sum since |s-1| >= |s*pm1| or s == 1) */
    float sm1 = s - 1.0f;
    float sp  = s * pm1;
    float eh  = sm1 + sp;                                   /* in (-1, 0] */
    float el  = ((sm1 - eh) + sp) + (((-1.0f - sm1) + s) + s * pl);
    /* tanh|x| = -em1 / (2 + em1), 2 + em1 = d + dl exactly */
    float d   = 2.0f + eh;
    float dl  = ((2.0f - d) + eh) + el;
    float res = -eh / d;
    float rem = -eh - res * d;                              /* exact with FMA */
    res = res + ((rem - el) - res * dl) * (0.5f + 0.5f * res);   /* 1/d = (1+res)/2 */
    res = vm__u2f(vm__f2u(res) & 0x7fffffffu);              /* +0 for x = +-0 */
    return vm__u2f(vm__f2u(res) | (ux & 0x80000000u));
}

/* ========================================================================
 * sigmoid, float: 1/(1+exp(-x)), computed as e/(1+e) or 1/(1+e) with
 * e = exp(-|x|) so it never overflows and is accurate into the subnormal
 * range for large negative x.
 * ====================================================================== */
static inline float vm_sigmoidf(float x)
{
    float ax = vm__u2f(vm__f2u(x) & 0x7fffffffu);
    float e  = vm_expf(-ax);                 /* in [0, 1] */
    float d  = 1.0f + e;
    float dl = (1.0f - d) + e;               /* d + dl == 1 + e exactly */
    int neg  = x < 0.0f;
    float q  = vm__self(neg, e, 1.0f) / d;
    float inv = vm__self(neg, 1.0f - q, q);  /* ~ 1/d */
    return q - (q * dl) * inv;               /* num / (d + dl) */
}

/* ========================================================================
 * arctan, float, computed in double (libm's atanf is a scalar call: x50
 * NumPy's SIMD loop).  |x| > 1: atan|x| = pi/2 - atan(1/|x|); then t in
 * [0, 1] above tan(pi/12): atan t = pi/6 + atan((t*sqrt3 - 1)/(t + sqrt3)),
 * which leaves |u| <= tan(pi/12) = 0.268; atan u by its Taylor series to
 * u^25 (the next term is < 2^-48 u).  Every step is a double operation, so
 * the double result is within ~2^-50 relative of atan x and the final
 * rounding to float is correct but in cases closer than that to a midpoint
 * (then 1 ulp at most).  Checked against NumPy's float64 arctan rounded to
 * float32 (tests/test_cpu_perf_paths2.py).  NaN -> NaN, +-inf -> +-pi/2
 * (rounded), +-0 -> +-0, subnormals exact.
 * ====================================================================== */
static inline float vm_atanf(float x)
{
    const double pi_2 = 0x1.921fb54442d18p+0, pi_6 = 0x1.0c152382d7366p-1;
    const double sqrt3 = 0x1.bb67ae8584caap+0, tan_pi_12 = 0x1.126145e9ecd56p-2;
    uint32_t ux = vm__f2u(x);
    double a = (double)vm__u2f(ux & 0x7fffffffu);
    int big = a > 1.0;                         /* NaN: false, and stays NaN */
    /* t = big ? 1/a : a in [0, 1]; mid: t > tan(pi/12) (1/a > it: a < 2 + sqrt3); u as one
     * quotient: t, (t sqrt3 - 1)/(t + sqrt3), 1/a or (sqrt3 - a)/(1 + a sqrt3) */
    int mid = vm__seld(big, 2.0 + sqrt3, a) > vm__seld(big, a, tan_pi_12);
    double num = vm__seld(mid, vm__seld(big, sqrt3 - a, a * sqrt3 - 1.0), vm__seld(big, 1.0, a));
    double den = vm__seld(mid, vm__seld(big, 1.0 + a * sqrt3, a + sqrt3), vm__seld(big, a, 1.0));
    double u = num / den;
    double z = u * u;
    double q = 1.0 / 25;
    q = q * -z + 1.0 / 23;  q = q * -z + 1.0 / 21;  q = q * -z + 1.0 / 19;
    q = q * -z + 1.0 / 17;  q = q * -z + 1.0 / 15;  q = q * -z + 1.0 / 13;
    q = q * -z + 1.0 / 11;  q = q * -z + 1.0 / 9;   q = q * -z + 1.0 / 7;
    q = q * -z + 1.0 / 5;   q = q * -z + 1.0 / 3;
    double p = u - u * (z * q);                /* atan u */
    double r = vm__seld(mid, pi_6 + p, p);
    r = vm__seld(big, pi_2 - r, r);
    float f = (float)r;                        /* >= +0 (or NaN) */
    return vm__u2f(vm__f2u(f) | (ux & 0x80000000u));
}

/* ========================================================================
 * sin / cos, float, computed in double, branch-free for every float (libm's
 * sinf / cosf are scalar calls: x15 NumPy's SIMD loop).  Reduction: x =
 * M 2^E (M the 24-bit integer mantissa), so x 2/pi mod 4 = M (2^E 2/pi mod
 * 4) = M h1 + M h2 + M h3 with the table vm_trig_table.h (M h1 and M h2
 * exact; M h1 mod 4 exact); n = the nearest integer, f = x 2/pi - n in
 * [-1/2, 1/2] exact but the last rounding of M h3 (2/pi is held to ~2^-106
 * past 2^E: about 2^-80 absolute in f, far below the closest approach of a
 * float to a multiple of pi/2).  r = f pi/2, |r| <= pi/4: sin and cos by
 * their Taylor series to r^17 / r^16 (next terms < 2^-55), the quadrant
 * n mod 4 choosing and negating, one final rounding to float.  So the
 * result is correctly rounded but in cases within ~2^-50 of a midpoint (then
 * 1 ulp at most); checked against NumPy's float64 sin / cos rounded to float32
 * on random bit patterns of every exponent (tests/test_cpu_perf_paths2.py).
 * +-inf, NaN -> NaN; sin(+-0) = +-0.
 * ====================================================================== */
#include "vm_trig_table.h"

static inline double vm__sin_poly(double r, double z)
{
    double p = 1.0 / 355687428096000.0;        /* 1/17! */
    p = p * -z + 1.0 / 1307674368000.0;        /* 1/15! */
    p = p * -z + 1.0 / 6227020800.0;
    p = p * -z + 1.0 / 39916800.0;
    p = p * -z + 1.0 / 362880.0;
    p = p * -z + 1.0 / 5040.0;
    p = p * -z + 1.0 / 120.0;
    p = p * -z + 1.0 / 6.0;
    return r - r * (z * p);
}

static inline double vm__cos_poly(double z)
{
    double p = 1.0 / 20922789888000.0;         /* 1/16! */
    p = p * -z + 1.0 / 87178291200.0;          /* 1/14! */
    p = p * -z + 1.0 / 479001600.0;
    p = p * -z + 1.0 / 3628800.0;
    p = p * -z + 1.0 / 40320.0;
    p = p * -z + 1.0 / 720.0;
    p = p * -z + 1.0 / 24.0;
    p = p * -z + 0.5;
    return 1.0 - z * p;
}

/* sin (cosine = 0) or cos (cosine = 1) of x */
static inline float vm__sincosf(float x, int cosine)
{
    const double shift = 0x1.8p52, pio2_hi = 0x1.921fb54442d18p+0, pio2_lo = 0x1.1a62633145c07p-54;
    uint32_t ux = vm__f2u(x), ax = ux & 0x7fffffffu;
    uint32_t e = ax >> 23;
    /* inf / NaN: any row (the result is NaN). A 64-bit index: gcc 12 does not vectorise a
     * double gather by int32 indices in a float loop ("no vectype"), and the scalar loop
     * was 7.7x NumPy's sinf; with int64 indices it gathers (vgatherqpd), 3.4x faster. */
    int64_t idx = (int64_t)(e > 254u ? 254u : e);
    double m = (double)(int32_t)((ax & 0x7fffffu) | (e ? 0x800000u : 0u));
    double p1 = m * vm__pio2_h1[idx], p2 = m * vm__pio2_h2[idx], p3 = m * vm__pio2_h3[idx];
    p1 = p1 - 4.0 * ((p1 * 0.25 + shift) - shift);   /* M h1 mod 4, in [-2, 2]: exact */
    double t = (p1 + p2) + shift;              /* n = rint(p1 + p2), in 0..4 */
    double n = t - shift;
    double f = ((p1 - n) + p2) + p3;           /* exact but the last addition */
    double r = f * pio2_hi + f * pio2_lo;
    double z = r * r;
    double s = vm__sin_poly(r, z), c = vm__cos_poly(z);
    uint32_t q = ((uint32_t)vm__d2u(t) + (uint32_t)cosine) & 3u;   /* quadrant (+1 for cos) */
    double v = vm__seld((int)(q & 1u), c, s);
    v = vm__seld((int)(q >> 1), -v, v);
    float res = (float)v;
    /* sin is odd: the sign of x; cos is even. inf / NaN: x - x = NaN */
    res = vm__u2f(vm__f2u(res) ^ (cosine ? 0u : (ux & 0x80000000u)));
    return vm__self(e == 255u, x - x, res);
}

static inline float vm_sinf(float x) { return vm__sincosf(x, 0); }
static inline float vm_cosf(float x) { return vm__sincosf(x, 1); }

#endif /* TENSOR_CPU_VMATH_H */
