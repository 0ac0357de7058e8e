/* Special functions of the op table (tensor/optable.py) that C's libm lacks: one
 * implementation shared by the CPU kernels (C, tensor/cpu/csrc/common.h) and the CUDA kernels
 * (C++, cuda_src/common.cuh), so both devices compute the same values. Each is written in
 * double; the float instance rounds the double result once (float32 loops, and the 16-bit
 * floats, which compute in float). The includer has the math functions declared.
 *
 *   SX_ERFINV(a)    the inverse error function: a rational first guess (Giles, "Approximating
 *                   the erfinv function", 2010), then two Halley steps on erf for |a| <= 1/2,
 *                   four Newton steps on log erfc above (1 - |a| is exact there, so the tails
 *                   keep their precision)
 *   SX_DIGAMMA(a)   psi = Gamma'/Gamma: reflection below 0, recurrence up to x >= 10, the
 *                   asymptotic series; PyTorch's special values (psi(+-0) = -+inf, NaN at the
 *                   negative integers and -inf)
 *   SX_I0(a)        the modified Bessel function I0: Cephes' Chebyshev series (NumPy's
 *                   np.i0 coefficients); I0(+-inf) = inf (PyTorch's; NumPy's gives NaN)
 *   SX_I0E(a)       I0(x) e^-|x| from the same series, finite everywhere
 *   SX_I1(a), SX_I1E(a)  I1 and I1(x) e^-|x|: power series, then Hankel's expansion
 *   SX_ZETA(s, q)   the Hurwitz zeta function (PyTorch's polygamma is built on it) */
#ifndef STRIDEX_SCALAR_SPECIAL_H
#define STRIDEX_SCALAR_SPECIAL_H
#include "scalar/types.h"

#define SX_SP_PI 3.14159265358979323846264338327950288
#define SX_SP_2_SQRTPI 1.12837916709551257389615890312154517

SX_SCALAR_FN double SX_TNAME(sx_erfinv, f64)(double y) {
    double ay = fabs(y);
    if (y != y) return y;
    if (ay > 1.0) return SX_INF_D - SX_INF_D;                     /* NaN */
    if (ay == 1.0) return y * SX_INF_D;
    if (y == 0.0) return y;                                        /* keeps -0's sign */
    double w = -log((1.0 - ay) * (1.0 + ay)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;   p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;  p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;   p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;      p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;   p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;   p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;    p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;       p = 2.83297682 + p * w;
    }
    double x = p * ay;                  /* solve erf(x) = ay for x > 0 */
    if (ay <= 0.5) {
        for (int i = 0; i < 2; i++) {
            double u = (erf(x) - ay) / (SX_SP_2_SQRTPI * exp(-x * x));   /* f / f' */
            x -= u / (1.0 + x * u);                                     /* Halley: f''/f' = -2x */
        }
    } else {   /* Newton on log erfc(x) = log t, nearly a parabola in x; t = 1 - ay is exact */
        double lt = log(1.0 - ay);
        for (int i = 0; i < 4; i++) {
            double e = erfc(x);
            x += (log(e) - lt) * e / (SX_SP_2_SQRTPI * exp(-x * x));
        }
    }
    return y < 0 ? -x : x;
}
SX_SCALAR_FN float SX_TNAME(sx_erfinv, f32)(float y) {
    return (float)SX_TNAME(sx_erfinv, f64)((double)y);
}

SX_SCALAR_FN double SX_TNAME(sx_digamma, f64)(double x) {
    if (x != x || x == SX_INF_D) return x;
    if (x == 0.0) return 1.0 / x < 0 ? SX_INF_D : -SX_INF_D;
    double r = 0.0;
    if (x < 0.0) {
        double n = rint(x);                                 /* x - n: exact, in [-1/2, 1/2] */
        if (x == n) return SX_INF_D - SX_INF_D;          /* the poles, and -inf: NaN */
        r = -SX_SP_PI / tan(SX_SP_PI * (x - n));          /* psi(x) = psi(1 - x) - pi / tan(pi x) */
        x = 1.0 - x;
    }
    while (x < 10.0) { r -= 1.0 / x; x += 1.0; }
    double z = 1.0 / (x * x);
    double s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132
               - z * (691.0 / 32760 - z * (1.0 / 12 - z * (3617.0 / 8160))))))));
    return r + log(x) - 0.5 / x - s;
}
SX_SCALAR_FN float SX_TNAME(sx_digamma, f32)(float x) {
    return (float)SX_TNAME(sx_digamma, f64)((double)x);
}

/* one step of Cephes' chbevl (Clenshaw's recurrence for a Chebyshev series) */
#define SX_CHB(c) b2 = b1; b1 = b0; b0 = y * b1 - b2 + (c);
SX_SCALAR_FN double SX_TNAME(sx_i0e, f64)(double x) {   /* I0(x) e^-|x| */
    x = fabs(x);
    if (x == SX_INF_D) return 0.0;
    if (x != x) return x;
    double b0, b1 = 0.0, b2 = 0.0, y;
    if (x <= 8.0) {
        y = x / 2.0 - 2.0;
        b0 = -4.4153416464793395e-18;
        SX_CHB(3.3307945188222384e-17) SX_CHB(-2.431279846547955e-16)
        SX_CHB(1.715391285555133e-15) SX_CHB(-1.1685332877993451e-14)
        SX_CHB(7.676185498604936e-14) SX_CHB(-4.856446783111929e-13)
        SX_CHB(2.95505266312964e-12) SX_CHB(-1.726826291441556e-11)
        SX_CHB(9.675809035373237e-11) SX_CHB(-5.189795601635263e-10)
        SX_CHB(2.6598237246823866e-09) SX_CHB(-1.300025009986248e-08)
        SX_CHB(6.046995022541919e-08) SX_CHB(-2.670793853940612e-07)
        SX_CHB(1.1173875391201037e-06) SX_CHB(-4.4167383584587505e-06)
        SX_CHB(1.6448448070728896e-05) SX_CHB(-5.754195010082104e-05)
        SX_CHB(0.00018850288509584165) SX_CHB(-0.0005763755745385824)
        SX_CHB(0.0016394756169413357) SX_CHB(-0.004324309995050576)
        SX_CHB(0.010546460394594998) SX_CHB(-0.02373741480589947)
        SX_CHB(0.04930528423967071) SX_CHB(-0.09490109704804764)
        SX_CHB(0.17162090152220877) SX_CHB(-0.3046826723431984)
        SX_CHB(0.6767952744094761)
        return 0.5 * (b0 - b2);
    }
    y = 32.0 / x - 2.0;
    b0 = -7.233180487874754e-18;
    SX_CHB(-4.830504485944182e-18) SX_CHB(4.46562142029676e-17)
    SX_CHB(3.461222867697461e-17) SX_CHB(-2.8276239805165836e-16)
    SX_CHB(-3.425485619677219e-16) SX_CHB(1.7725601330565263e-15)
    SX_CHB(3.8116806693526224e-15) SX_CHB(-9.554846698828307e-15)
    SX_CHB(-4.150569347287222e-14) SX_CHB(1.54008621752141e-14)
    SX_CHB(3.8527783827421426e-13) SX_CHB(7.180124451383666e-13)
    SX_CHB(-1.7941785315068062e-12) SX_CHB(-1.3215811840447713e-11)
    SX_CHB(-3.1499165279632416e-11) SX_CHB(1.1889147107846439e-11)
    SX_CHB(4.94060238822497e-10) SX_CHB(3.3962320257083865e-09)
    SX_CHB(2.266668990498178e-08) SX_CHB(2.0489185894690638e-07)
    SX_CHB(2.8913705208347567e-06) SX_CHB(6.889758346916825e-05)
    SX_CHB(0.0033691164782556943) SX_CHB(0.8044904110141088)
    return 0.5 * (b0 - b2) / sqrt(x);
}
#undef SX_CHB
SX_SCALAR_FN double SX_TNAME(sx_i0, f64)(double x) {
    x = fabs(x);
    if (x == SX_INF_D || x != x) return x;
    double h = exp(0.5 * x);   /* e^x in two halves: finite as long as the result is */
    return h * SX_TNAME(sx_i0e, f64)(x) * h;
}

/* I1(x) e^-|x|, odd: the power series sum (x/2)^(2k+1) / (k! (k+1)!) below 25 (positive terms,
 * no cancellation), Hankel's asymptotic expansion e^x / sqrt(2 pi x) sum_k a_k(1) / x^k above
 * (its terms shrink until k ~ 2x, far past double precision there) */
SX_SCALAR_FN double SX_TNAME(sx_i1e, f64)(double x) {
    double ax = fabs(x), s;
    if (ax != ax) return x;
    if (ax == SX_INF_D) return x > 0 ? 0.0 : -0.0;
    if (ax < 25.0) {
        double h = 0.5 * ax, h2 = h * h, t = h;
        s = t;
        for (int k = 1; k < 100 && t > 1e-18 * s; k++) {
            t *= h2 / ((double)k * (double)(k + 1));
            s += t;
        }
        s *= exp(-ax);
    } else {
        double t = 1.0, z = 8.0 * ax;
        s = 1.0;
        for (int k = 1; k < 60 && fabs(t) > 1e-18 * fabs(s); k++) {
            double m = 2.0 * k - 1.0;
            t *= (m * m - 4.0) / ((double)k * z);   /* -(4 nu^2 - m^2) / (k 8x), nu = 1 */
            s += t;
        }
        s /= sqrt(2.0 * SX_SP_PI * ax);
    }
    return x < 0 ? -s : s;
}
SX_SCALAR_FN double SX_TNAME(sx_i1, f64)(double x) {
    double ax = fabs(x);
    if (ax == SX_INF_D || ax != ax) return x;
    double h = exp(0.5 * ax);
    return h * SX_TNAME(sx_i1e, f64)(x) * h;
}

/* the Hurwitz zeta function sum_k (q + k)^-s (PyTorch's special.zeta, Cephes' domain). For
 * q > 0 (sx_zeta_pos): the terms summed while q + k < 10 (or k < 9), then Euler-Maclaurin's
 * tail at a = q + k, a^(1-s) / (s-1) + a^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2)
 * a^(-s-2j+1), cut where it stops mattering. inf at s == 1 and at the poles q = 0, -1, ...;
 * NaN for s < 1, and for q < 0 with a non-integer s (the power is not real). A negative q
 * has n negative terms, of sizes r, r + 1, ..., r + n - 1 with r = -(q + n - 1) in (0, 1), and
 * positive ones from p = q + n = 1 - r: the first 32 of each are summed in pairs, smallest
 * first (for an odd s they nearly cancel: at q = -1.5 exactly, where a difference of two zetas
 * left 1e15-sized rounding on a 5e-21 result), the rest as (-1)^s (zeta(s, r + 32) -
 * zeta(s, r + n)) + zeta(s, p + 32): a bounded amount of work however far below 0 q is */
SX_SCALAR_FN double SX_TNAME(sx_zeta_pos, f64)(double s, double q) {
    /* B_2j / (2j)!, j = 1..12 */
    const double bf[12] = {1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160,
                           -691.0 / 1307674368000.0, 1.0 / 74724249600.0,
                           -3617.0 / 10670622842880000.0, 43867.0 / 5109094217170944000.0,
                           -174611.0 / 802857662698291200000.0,
                           77683.0 / 14101100039391805440000.0,
                           -236364091.0 / 1693824136731743669452800000.0};
    if (q == SX_INF_D) return 0.0;
    double sum = 0.0, a = q;
    for (int k = 0; a < 10.0 || k < 9; k++, a += 1.0) {
        double b = pow(a, -s);
        sum += b;
        if (fabs(b) < 1e-17 * fabs(sum)) return sum;
    }
    double ap = pow(a, -s);   /* a^-s */
    sum += a * ap / (s - 1.0) + 0.5 * ap;
    double f = s * ap / a, a2 = a * a;   /* s (s+1)...(s+2j-2) a^(-s-2j+1) */
    for (int j = 0; j < 12; j++) {
        double t = bf[j] * f;
        sum += t;
        if (fabs(t) < 1e-17 * fabs(sum)) break;
        f *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0) / a2;
    }
    return sum;
}
SX_SCALAR_FN double SX_TNAME(sx_zeta, f64)(double s, double q) {
    if (s != s || q != q) return s + q;
    if (s == 1.0) return SX_INF_D;
    if (s < 1.0) return SX_INF_D - SX_INF_D;
    if (q > 0.0) return SX_TNAME(sx_zeta_pos, f64)(s, q);
    if (q == floor(q)) return SX_INF_D;                 /* the poles, and -inf */
    if (s != floor(s)) return SX_INF_D - SX_INF_D;
    if (s == SX_INF_D) return SX_INF_D;   /* the term |q + k| < 1 to the power -inf (Cephes') */
    double n = floor(-q) + 1.0, p = q + n, r = -(q + (n - 1.0));   /* p, r in (0, 1): exact */
    double sg = fmod(s, 2.0) == 0.0 ? 1.0 : -1.0, m = n < 32.0 ? n : 32.0;
    double acc = SX_TNAME(sx_zeta_pos, f64)(s, p + m);   /* the tails: with r == p and an odd s */
    if (n > m)                                              /* the first two cancel exactly */
        acc = (acc + sg * SX_TNAME(sx_zeta_pos, f64)(s, r + m)) - sg * SX_TNAME(sx_zeta_pos, f64)(s, r + n);
    for (double j = m - 1.0; j >= 0.0; j -= 1.0) {   /* the largest terms, each negative one */
        if (sg < 0.0 && p == r) continue;              /* with its positive mirror: they cancel */
        acc += pow(p + j, -s) + sg * pow(r + j, -s);
    }
    return acc;
}
SX_SCALAR_FN float SX_TNAME(sx_zeta, f32)(float s, float q) {
    return (float)SX_TNAME(sx_zeta, f64)((double)s, (double)q);
}
#define SX_SP_F32(name) \
    SX_SCALAR_FN float SX_TNAME(name, f32)(float x) { return (float)SX_TNAME(name, f64)((double)x); }
SX_SP_F32(sx_i0)
SX_SP_F32(sx_i0e)
SX_SP_F32(sx_i1)
SX_SP_F32(sx_i1e)
#undef SX_SP_F32

#undef SX_SP_PI
#undef SX_SP_2_SQRTPI

/* the Bessel functions J, Y, K, spherical j0, Airy's Ai, the orthogonal polynomials:
 * SX_BS(name, a), SX_BS2(name, a, b) */
#include "scalar/bessel.h"

#ifdef __cplusplus
#define SX_ERFINV(a) sx_erfinv(a)
#define SX_DIGAMMA(a) sx_digamma(a)
#define SX_I0(a) sx_i0(a)
#define SX_I0E(a) sx_i0e(a)
#define SX_I1(a) sx_i1(a)
#define SX_I1E(a) sx_i1e(a)
#define SX_ZETA(a, b) sx_zeta(a, b)
#else
#define SX_ERFINV(a) _Generic((a), float: sx_erfinv_f32, default: sx_erfinv_f64)(a)
#define SX_DIGAMMA(a) _Generic((a), float: sx_digamma_f32, default: sx_digamma_f64)(a)
#define SX_I0(a) _Generic((a), float: sx_i0_f32, default: sx_i0_f64)(a)
#define SX_I0E(a) _Generic((a), float: sx_i0e_f32, default: sx_i0e_f64)(a)
#define SX_I1(a) _Generic((a), float: sx_i1_f32, default: sx_i1_f64)(a)
#define SX_I1E(a) _Generic((a), float: sx_i1e_f32, default: sx_i1e_f64)(a)
#define SX_ZETA(a, b) _Generic((a), float: sx_zeta_f32, default: sx_zeta_f64)(a, b)
#endif

#endif
