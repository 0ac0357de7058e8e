/* PyTorch's torch.special Bessel functions, Airy's Ai and the classical orthogonal polynomials,
 * shared by the CPU kernels (C) and the CUDA kernels (C++) through scalar/special.h. Each is
 * written in double; the float instance rounds the double result once (float32 loops, and the
 * 16-bit floats, which compute in float).
 *
 *   J0, J1, Y0, Y1 (x > 0): the power series (Y's with the harmonic numbers) up to x = 2;
 *       Miller's backward recurrence from order N ~ x + 40 up to x = 25, normalized by
 *       J0 + 2 (J2 + J4 + ...) = 1, whose terms also give Y0 and Y1 (Neumann's series); Hankel's
 *       asymptotic expansion above, with cos(x - pi/4) written as (cos x + sin x) / sqrt 2 so
 *       that libm reduces x itself (x = 1e300 keeps its digits). J0 even, J1 odd; Y NaN below
 *       0, -inf at +-0. At +-inf they give NaN, as PyTorch's.
 *   K0, K1 (and e^x K): the series up to x = 1; above, the trapezoidal rule on
 *       e^x K_nu(x) = int_0^inf exp(-2 x sinh^2(t/2)) cosh(nu t) dt, which converges
 *       geometrically (an analytic integrand); truncated where the exponent reaches -41, with
 *       about 20 + 5 T points over [0, T] (a fixed count for every large x: the peak's width and
 *       T both scale as 1 / sqrt x). NaN below 0, inf at 0, 0 at inf.
 *   Ai: the Taylor series of Ai'' = x Ai around the nearest integer in [-10, 1] (Ai and Ai'
 *       there computed with mpmath) for -10.5 <= x < 1.5; (1/pi) sqrt(x/3) K_{1/3}(2/3 x^3/2)
 *       by the same trapezoidal rule above; the asymptotic expansion of Ai(-z) below -10.5,
 *       whose smallest term is ~e^-45 there, its phase zeta = 2/3 |x|^3/2 carried in two
 *       doubles (~1e-32 relative: full accuracy down to x = -1e10, 1e-9 at -1e16; NaN below
 *       x = -2.5e19, where no digit of the phase is left). NaN at +-inf (PyTorch's).
 *   Orthogonal polynomials (x, n): n truncated to an integer as PyTorch's (int64) cast does,
 *       and 0 for n < 0, NaN n or n past int64's range; PyTorch's special cases at x = +-1
 *       and its closed forms for |x| < 1 (cos(n acos x) for T when n > 6; U, V, W's when
 *       n > 8), else the three-term recurrence (n steps; it stops early once NaN). Where
 *       that recurrence would run past n = 2^16 (65536) the result is NaN: PyTorch's loop
 *       has no bound (n = 1e15 hangs it), and bounded values (Legendre's for |x| < 1,
 *       Laguerre's for x > 0) never stop it early. */
#ifndef STRIDEX_SCALAR_BESSEL_H
#define STRIDEX_SCALAR_BESSEL_H

#define SX_BS_PI 3.14159265358979323846264338327950288
#define SX_BS_2_PI 0.636619772367581343075535053490057   /* 2 / pi */
#define SX_BS_EULER 0.577215664901532860606512090082402
#define SX_BS_SQRTPI 1.77245385090551602729816748334114518
/* the long functions are called, not inlined: one copy per module instead of one per kernel
 * (NVRTC's time in the compile check, the CPU modules' build) */
#ifdef __cplusplus
#define SX_BS_FN static __device__ __noinline__
#else
#define SX_BS_FN static __attribute__((noinline))
#endif

/* J0, J1 and, when y is set, Y0, Y1 at a finite x > 0, into r[0..3] */
SX_BS_FN void SX_TNAME(sx_bessel_jy, f64)(double x, int y, double *r) {
    if (x <= 2.0) {   /* power series: terms decrease from the first, no cancellation to speak of */
        double q = -0.25 * x * x, t0 = 1.0, t1 = 0.5 * x, j0 = t0, j1 = t1, s0 = 0.0, s1 = t1, h = 0.0;
        for (int k = 1; k < 20; k++) {
            double hk = h + 1.0 / k;          /* H_k; s1 sums (H_k + H_k+1) t1_k */
            t0 *= q / ((double)k * k);
            t1 *= q / ((double)k * (k + 1));
            j0 += t0;
            j1 += t1;
            s0 += hk * t0;
            s1 += (hk + hk + 1.0 / (k + 1)) * t1;
            h = hk;
        }
        r[0] = j0;
        r[1] = j1;
        if (y) {
            double lg = log(0.5 * x) + SX_BS_EULER;
            r[2] = SX_BS_2_PI * (lg * j0 - s0);
            r[3] = -SX_BS_2_PI / x + SX_BS_2_PI * lg * j1 - s1 / SX_BS_PI;
        }
        return;
    }
    if (x < 25.0) {   /* Miller: f_k ~ J_k up to one factor, from f_N+1 = 0, f_N = 1 down */
        int n = 2 * (int)(0.5 * x + 20.0);
        double fk1 = 0.0, fk = 1.0, norm = 0.0, s0 = 0.0, s1 = 0.0, f1 = 0.0;
        for (int k = n; k >= 1; k--) {
            if (k % 2 == 0) {
                norm += 2.0 * fk;
                s0 += ((k / 2) % 2 ? -fk : fk) / (0.5 * k);            /* (-1)^m J_2m / m */
            } else if (k >= 3) {                                       /* the J_2m-1 - J_2m+1 */
                s1 += (((k + 1) / 2) % 2 ? -fk : fk) * 4.0 * k / ((double)k * k - 1.0);   /* of Y1 */
            } else {
                f1 = fk;
            }
            double fm = (2.0 * k / x) * fk - fk1;
            fk1 = fk;
            fk = fm;
        }
        norm += fk;
        double j0 = fk / norm, j1 = f1 / norm;
        r[0] = j0;
        r[1] = j1;
        if (y) {
            double lg = log(0.5 * x) + SX_BS_EULER;
            r[2] = SX_BS_2_PI * (lg * j0 - 2.0 * s0 / norm);
            r[3] = SX_BS_2_PI * (-j0 / x + lg * j1 + (s1 - f1) / norm);
        }
        return;
    }
    /* Hankel: P_nu ~ sum (-1)^k a_2k / x^2k, Q_nu ~ sum (-1)^k a_2k+1 / x^2k+1 */
    double p0 = 1.0, q0 = 0.0, p1 = 1.0, q1 = 0.0, t0 = 1.0, t1 = 1.0, z = 8.0 * x;
    for (int k = 1; k < 60; k++) {
        double m = (2.0 * k - 1.0) * (2.0 * k - 1.0);
        t0 *= -m / (k * z);
        t1 *= (4.0 - m) / (k * z);
        int sg = (k / 2) % 2 ? -1 : 1;
        if (k % 2) { q0 += sg * t0; q1 += sg * t1; } else { p0 += sg * t0; p1 += sg * t1; }
        if (fabs(t0) + fabs(t1) < 1e-18) break;
    }
    double c = cos(x), s = sin(x), a = 1.0 / (SX_BS_SQRTPI * sqrt(x));   /* sqrt(pi x): 1e308 */
    r[0] = a * (p0 * (c + s) - q0 * (s - c));
    r[1] = a * (p1 * (s - c) + q1 * (s + c));
    r[2] = a * (p0 * (s - c) + q0 * (c + s));
    r[3] = a * (q1 * (s - c) - p1 * (s + c));
}

SX_SCALAR_FN double SX_TNAME(sx_bessel_j0, f64)(double x) {
    double r[4];
    if (x != x || x - x != 0.0) return SX_INF_D - SX_INF_D;   /* NaN, and NaN at +-inf */
    if (x == 0.0) return 1.0;
    SX_TNAME(sx_bessel_jy, f64)(fabs(x), 0, r);
    return r[0];
}
SX_SCALAR_FN double SX_TNAME(sx_bessel_j1, f64)(double x) {
    double r[4];
    if (x != x || x - x != 0.0) return SX_INF_D - SX_INF_D;
    if (x == 0.0) return x;
    SX_TNAME(sx_bessel_jy, f64)(fabs(x), 0, r);
    return x < 0 ? -r[1] : r[1];
}
SX_SCALAR_FN double SX_TNAME(sx_bessel_y, f64)(double x, int which) {
    double r[4];
    if (x != x || x < 0.0 || x == SX_INF_D) return SX_INF_D - SX_INF_D;
    if (x == 0.0) return -SX_INF_D;
    SX_TNAME(sx_bessel_jy, f64)(x, 1, r);
    return r[2 + which];
}
SX_SCALAR_FN double SX_TNAME(sx_bessel_y0, f64)(double x) { return SX_TNAME(sx_bessel_y, f64)(x, 0); }
SX_SCALAR_FN double SX_TNAME(sx_bessel_y1, f64)(double x) { return SX_TNAME(sx_bessel_y, f64)(x, 1); }

/* e^x K_nu(x) for a finite x > 0 by the trapezoidal rule (see above) */
SX_BS_FN double SX_TNAME(sx_kscaled_trap, f64)(double x, double nu) {
    double top = 2.0 * asinh(sqrt(20.5 / x));
    int n = 20 + (int)(5.0 * top);
    double h = top / n, sum = 0.5;
    for (int j = 1; j <= n; j++) {
        double t = j * h, sh = sinh(0.5 * t);
        sum += exp(-2.0 * x * sh * sh) * (nu == 0.0 ? 1.0 : cosh(nu * t));
    }
    return h * sum;
}
/* K_nu(x) (nu = 0, 1), times e^x when scaled */
SX_BS_FN double SX_TNAME(sx_bessel_k, f64)(double x, int nu, int scaled) {
    if (x != x || x < 0.0) return SX_INF_D - SX_INF_D;
    if (x == 0.0) return SX_INF_D;
    if (x == SX_INF_D) return 0.0;
    if (x > 1.0) {
        double ke = SX_TNAME(sx_kscaled_trap, f64)(x, (double)nu);
        return scaled ? ke : ke * exp(-x);
    }
    /* K0 = -(log(x/2) + gamma) I0 + sum H_k q^k / k!^2,
     * K1 = 1/x + (log(x/2) + gamma) I1 - 1/2 sum (H_k + H_k+1) (x/2) q^k / (k! (k+1)!) */
    double q = 0.25 * x * x, t0 = 1.0, t1 = 0.5 * x, i0 = t0, i1 = t1, s0 = 0.0, s1 = t1, h = 0.0;
    for (int k = 1; k < 16; k++) {
        double hk = h + 1.0 / k;
        t0 *= q / ((double)k * k);
        t1 *= q / ((double)k * (k + 1));
        i0 += t0;
        i1 += t1;
        s0 += hk * t0;
        s1 += (hk + hk + 1.0 / (k + 1)) * t1;
        h = hk;
    }
    double lg = log(0.5 * x) + SX_BS_EULER;
    double k = nu == 0 ? s0 - lg * i0 : 1.0 / x + lg * i1 - 0.5 * s1;
    return scaled ? k * exp(x) : k;
}
SX_SCALAR_FN double SX_TNAME(sx_bessel_k0, f64)(double x) { return SX_TNAME(sx_bessel_k, f64)(x, 0, 0); }
SX_SCALAR_FN double SX_TNAME(sx_bessel_k1, f64)(double x) { return SX_TNAME(sx_bessel_k, f64)(x, 1, 0); }
SX_SCALAR_FN double SX_TNAME(sx_bessel_k0e, f64)(double x) { return SX_TNAME(sx_bessel_k, f64)(x, 0, 1); }
SX_SCALAR_FN double SX_TNAME(sx_bessel_k1e, f64)(double x) { return SX_TNAME(sx_bessel_k, f64)(x, 1, 1); }

/* sin(x) / x: 1 at 0, 0 at +-inf (PyTorch's) */
SX_SCALAR_FN double SX_TNAME(sx_spherical_j0, f64)(double x) {
    if (x != x) return x;
    if (x == 0.0) return 1.0;
    if (x - x != 0.0) return 0.0;
    return sin(x) / x;
}

/* zeta = 2/3 z^3/2 as hi + *lo (z > 0): the phase (and decay) of Ai keep their digits where
 * zeta's own rounding would cost zeta * 1e-16 */
SX_SCALAR_FN double SX_TNAME(sx_airy_zeta, f64)(double z, double *lo) {
    double s = sqrt(z), sl = fma(-s, s, z) / (s + s);     /* sqrt z = s + sl */
    double p = z * s, pl = fma(z, s, -p) + z * sl;        /* z^3/2 = p + pl */
    double c = 0.66666666666666663, cl = 3.700743415417188e-17;   /* 2/3 = c + cl */
    double h = c * p, l = fma(c, p, -h) + (c * pl + cl * p), hi = h + l;
    *lo = l - (hi - h);
    return hi;
}

SX_BS_FN double SX_TNAME(sx_airy_ai, f64)(double x) {
    /* Ai(k), Ai'(k) for k = -10 .. 1 (mpmath, 30 digits, rounded) */
    const double av[12] = {0.04024123848644319, -0.022133721547341403, -0.0527050503563862,
                           0.18428083525050565, -0.3291451736298231, 0.35076100902411433,
                           -0.07026553294928951, -0.37881429367765806, 0.22740742820168558,
                           0.5355608832923521, 0.3550280538878172, 0.13529241631288141};
    const double ad[12] = {0.99626504413279, -0.9756639809263316, 0.9355609381983065,
                           -0.7710081684101265, 0.3459354872813429, 0.32719281855444315,
                           -0.7906285753685813, 0.3145837692165988, 0.618259020741691,
                           -0.01016056711664521, -0.2588194037928068, -0.1591474412967932};
    if (x != x || x - x != 0.0) return SX_INF_D - SX_INF_D;   /* NaN, and at +-inf */
    if (x >= 1.5) {
        if (x > 120.0) return 0.0;   /* (below the smallest subnormal) */
        double lo, zeta = SX_TNAME(sx_airy_zeta, f64)(x, &lo);
        return sqrt(x / 3.0) / SX_BS_PI * (exp(-zeta) * (1.0 - lo))
               * SX_TNAME(sx_kscaled_trap, f64)(zeta, 1.0 / 3.0);
    }
    if (x >= -10.5) {   /* b_n = a_n h^n: b_n+2 = h^2 (x0 b_n + h b_n-1) / ((n+1)(n+2)) */
        double x0 = floor(x + 0.5), hh = x - x0;
        int i = (int)x0 + 10;
        double bm = 0.0, b0 = av[i], b1 = ad[i] * hh, sum = b0 + b1;
        for (int n = 0; n < 40; n++) {
            double b2 = hh * hh * (x0 * b0 + hh * bm) / ((n + 1.0) * (n + 2.0));
            sum += b2;
            bm = b0;
            b0 = b1;
            b1 = b2;
        }
        return sum;
    }
    /* Ai(-z) ~ (sin(zeta + pi/4) sum (-1)^k u_2k zeta^-2k - cos(zeta + pi/4)
     * sum (-1)^k u_2k+1 zeta^-2k-1) / (sqrt(pi) z^1/4) */
    double z = -x, lo, zeta = SX_TNAME(sx_airy_zeta, f64)(z, &lo), t = 1.0, a = 1.0, b = 0.0;
    if (zeta > 1e28) return SX_INF_D - SX_INF_D;   /* hi + lo holds zeta to ~1e-32: no phase left */
    for (int k = 1; k < 60; k++) {
        t *= (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0) / ((2.0 * k - 1.0) * 216.0 * k * zeta);
        int sg = (k / 2) % 2 ? -1 : 1;
        if (k % 2) b += sg * t; else a += sg * t;
        if (fabs(t) < 1e-18) break;
    }
    double s0 = sin(zeta), c0 = cos(zeta), sl = sin(lo), cl = cos(lo);   /* sin, cos of hi + lo */
    double s = s0 * cl + c0 * sl, c = c0 * cl - s0 * sl;
    return ((s + c) * a - (c - s) * b) / (1.4142135623730951 * SX_BS_SQRTPI * sqrt(sqrt(z)));
}

/* the orthogonal polynomials: n as PyTorch's int64 cast reads it; -1 for "the value is 0" */
SX_SCALAR_FN long long sx_poly_degree(double n) {
    double t = trunc(n);
    return (t >= 0.0 && t < 9.2233720368547758e18) ? (long long)t : -1;
}
/* the three-term recurrence q_k = (a_k x + b_k) q_k-1 - c_k q_k-2 from q_0 = 1, q_1: kind
 * 0: Chebyshev's (2x, 1), 1: Hermite's H (2x, 2(k-1)), 2: He (x, k-1), 3: Laguerre's, 4: Legendre's */
SX_BS_FN double SX_TNAME(sx_poly_rec, f64)(double x, long long n, double q, int kind) {
    double p = 1.0;
    if (n > 65536) return SX_INF_D - SX_INF_D;   /* 2^16 steps at most: NaN beyond */
    for (long long k = 2; k <= n && q == q; k++) {
        double dk = (double)k, r;
        if (kind == 0) r = (x + x) * q - p;
        else if (kind == 1) r = (x + x) * q - (dk + dk - 2.0) * p;
        else if (kind == 2) r = x * q - (dk - 1.0) * p;
        else if (kind == 3) r = ((dk + dk - 1.0 - x) * q - (dk - 1.0) * p) / dk;
        else r = ((dk + dk - 1.0) * x * q - (dk - 1.0) * p) / dk;
        p = q;
        q = r;
    }
    return q;
}
/* Chebyshev's T, U, V, W (kind 0..3) */
SX_BS_FN double SX_TNAME(sx_chebyshev, f64)(double x, double nf, int kind) {
    long long n = sx_poly_degree(nf);
    if (n < 0) return 0.0;
    double dn = (double)n, odd = (double)(n % 2);
    if (fabs(x) == 1.0) {
        if (kind == 0) return (x > 0 || !odd) ? 1.0 : -1.0;
        if (kind == 1) return (x > 0 || !odd) ? dn + 1.0 : -(dn + 1.0);
        if (kind == 2) return x > 0 ? 1.0 : (!odd ? dn + dn + 1.0 : -(dn + dn + 1.0));
        return x > 0 ? dn + dn + 1.0 : (!odd ? 1.0 : -1.0);
    }
    if (fabs(x) < 1.0 && n > (kind == 0 ? 6 : 8)) {
        double th = acos(x);
        if (kind == 0) return cos(dn * th);
        if (kind == 1) return sin((dn + 1.0) * th) / sin(th);
        if (kind == 2) return cos((dn + 0.5) * th) / cos(0.5 * th);
        return sin((dn + 0.5) * th) / sin(0.5 * th);
    }
    if (n == 0) return 1.0;
    double q1 = kind == 0 ? x : kind == 1 ? x + x : kind == 2 ? x + x - 1.0 : x + x + 1.0;
    return n == 1 ? q1 : SX_TNAME(sx_poly_rec, f64)(x, n, q1, 0);
}
SX_SCALAR_FN double SX_TNAME(sx_hermite_h, f64)(double x, double nf) {
    long long n = sx_poly_degree(nf);
    if (n < 0) return 0.0;
    return n == 0 ? 1.0 : n == 1 ? x + x : SX_TNAME(sx_poly_rec, f64)(x, n, x + x, 1);
}
SX_SCALAR_FN double SX_TNAME(sx_hermite_he, f64)(double x, double nf) {
    long long n = sx_poly_degree(nf);
    if (n < 0) return 0.0;
    return n == 0 ? 1.0 : n == 1 ? x : SX_TNAME(sx_poly_rec, f64)(x, n, x, 2);
}
SX_SCALAR_FN double SX_TNAME(sx_laguerre_l, f64)(double x, double nf) {
    long long n = sx_poly_degree(nf);
    if (n < 0) return 0.0;
    if (x == 0.0 || n == 0) return 1.0;
    return n == 1 ? 1.0 - x : SX_TNAME(sx_poly_rec, f64)(x, n, 1.0 - x, 3);
}
SX_SCALAR_FN double SX_TNAME(sx_legendre_p, f64)(double x, double nf) {
    long long n = sx_poly_degree(nf);
    if (n < 0) return 0.0;
    if (fabs(x) == 1.0) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
    return n == 0 ? 1.0 : n == 1 ? x : SX_TNAME(sx_poly_rec, f64)(x, n, x, 4);
}
#define SX_BS_CHEB(name, kind, shift) \
    SX_SCALAR_FN double SX_TNAME(name, f64)(double x, double n) { \
        return SX_TNAME(sx_chebyshev, f64)(shift ? x + x - 1.0 : x, n, kind); }
SX_BS_CHEB(sx_chebyshev_t, 0, 0)
SX_BS_CHEB(sx_chebyshev_u, 1, 0)
SX_BS_CHEB(sx_chebyshev_v, 2, 0)
SX_BS_CHEB(sx_chebyshev_w, 3, 0)
SX_BS_CHEB(sx_shifted_chebyshev_t, 0, 1)
SX_BS_CHEB(sx_shifted_chebyshev_u, 1, 1)
SX_BS_CHEB(sx_shifted_chebyshev_v, 2, 1)
SX_BS_CHEB(sx_shifted_chebyshev_w, 3, 1)
#undef SX_BS_CHEB

#define SX_BS_F32(name) \
    SX_SCALAR_FN float SX_TNAME(name, f32)(float x) { return (float)SX_TNAME(name, f64)((double)x); }
#define SX_BS_F32_2(name) SX_SCALAR_FN float SX_TNAME(name, f32)(float x, float n) { \
        return (float)SX_TNAME(name, f64)((double)x, (double)n); }
SX_BS_F32(sx_bessel_j0)
SX_BS_F32(sx_bessel_j1)
SX_BS_F32(sx_bessel_y0)
SX_BS_F32(sx_bessel_y1)
SX_BS_F32(sx_bessel_k0)
SX_BS_F32(sx_bessel_k1)
SX_BS_F32(sx_bessel_k0e)
SX_BS_F32(sx_bessel_k1e)
SX_BS_F32(sx_spherical_j0)
SX_BS_F32(sx_airy_ai)
SX_BS_F32_2(sx_chebyshev_t)
SX_BS_F32_2(sx_chebyshev_u)
SX_BS_F32_2(sx_chebyshev_v)
SX_BS_F32_2(sx_chebyshev_w)
SX_BS_F32_2(sx_shifted_chebyshev_t)
SX_BS_F32_2(sx_shifted_chebyshev_u)
SX_BS_F32_2(sx_shifted_chebyshev_v)
SX_BS_F32_2(sx_shifted_chebyshev_w)
SX_BS_F32_2(sx_hermite_h)
SX_BS_F32_2(sx_hermite_he)
SX_BS_F32_2(sx_laguerre_l)
SX_BS_F32_2(sx_legendre_p)
#undef SX_BS_F32
#undef SX_BS_F32_2
#undef SX_BS_PI
#undef SX_BS_2_PI
#undef SX_BS_EULER
#undef SX_BS_SQRTPI
#undef SX_BS_FN

/* SX_BS(name, a[, b]): the float or double instance, by a's type */
#ifdef __cplusplus
#define SX_BS(name, a) sx_##name(a)
#define SX_BS2(name, a, b) sx_##name(a, b)
#else
#define SX_BS(name, a) _Generic((a), float: sx_##name##_f32, default: sx_##name##_f64)(a)
#define SX_BS2(name, a, b) _Generic((a), float: sx_##name##_f32, default: sx_##name##_f64)(a, b)
#endif

#endif
