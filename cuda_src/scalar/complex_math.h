/* The bodies of scalar/complex.h's functions for one complex type; complex.h includes this
 * file once per type (no include guard on purpose) with
 *   SXR / SXC      the real and complex types       SXN(f)   f's name for this type
 *   SXF(fn)        the real math function (expf...)  SXL(v)   a literal of type SXR
 *   SXINF, SXMAX   infinity, the largest finite value (NaN is SXINF - SXINF), and the
 *                  thresholds SX_CX_* (complex.h).
 * Float instances compute in float throughout.
 *
 * Where this deliberately differs from NumPy 2.x (each follows the array API standard or is
 * more accurate; NumPy's results there are wrong or unspecified):
 *   expm1: +inf+0j -> inf+0j and NaN+0j -> NaN+0j (the standard; NumPy: imag NaN), -0+0j ->
 *     +0+0j (the standard; NumPy: -0); -inf+bj
 *          -> exactly -1 + 0*sin(b) j; no spurious overflow for Re z > log(max).
 *   log1p: accurate for tiny |z| (NumPy's log(hypot(1+x, y)) returns 0 for |z| < eps);
 *          log1p(x + 0j) = log1p(x) + 0j for x > -1 (so -0 + 0j keeps its -0).
 *   sign:  NaN+NaNj when either part is NaN (the standard; NumPy gives +-1 for inf+NaNj);
 *          z with |z| > max or subnormal is scaled (NumPy: 0+1j for 1.7e308+1.7e308j).
 *   tanh:  +-inf+bj -> +-1 + copysign(0, b) j (the standard's "1 + 0j"; NumPy follows C99's
 *          1 + 0*sin(2b) j).
 *   div:   Smith's method as NumPy, dividing by the denominator rather than multiplying by its
 *          reciprocal (NumPy's 1/d overflows for subnormal divisors: 1/(5e-324+0j) = inf+NaNj
 *          there, inf+0j here) -- also in pow's negative integer powers.
 *   tan:   x +- inf j -> copysign(0, x) +- 1j, following tanh through tan z = -i tanh(iz).
 *   sqrt, log, asin... on the cuts: as NumPy (glibc, C99 Annex G); the unspecified signs of
 *          Annex G's special values as glibc chooses them. */

SX_SCALAR_FN SXC SX_CX_MAKE(SXR re, SXR im) { SXC z; z.re = re; z.im = im; return z; }

/* ---- real helpers (comparisons: the same on every compiler, no libm classification) ---- */
SX_SCALAR_FN int SXN(sx_cx_isinf)(SXR v) { return SXF(fabs)(v) == SXINF; }
SX_SCALAR_FN int SXN(sx_cx_isfin)(SXR v) { return SXF(fabs)(v) <= SXMAX; }

/* a * b, never fused into a neighbouring add, whatever the compiler's contraction: where
 * NumPy's own code is unfused (division, npy_cpow), fusing changes exact results (z/z would
 * not be exactly 1) and which overflowing sums are inf - inf = NaN. */
SX_SCALAR_FN SXR SXN(sx_cx_mulrn)(SXR a, SXR b) {
#if defined(__cplusplus)
    return SX_CX_MULRN(a, b);                  /* CUDA's never-contracted __fmul_rn / __dmul_rn */
#else   /* an empty asm hides the product from gcc's contraction (also after vectorization,
         * which __builtin_assoc_barrier does not survive) */
    SXR p = a * b;
#if defined(__GNUC__) && defined(__x86_64__)
    __asm__("" : "+x"(p));
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__("" : "+w"(p));
#else
    volatile SXR q = p;
    p = q;
#endif
    return p;
#endif
}
#define SX_CX_MULRN_(a, b) SXN(sx_cx_mulrn)(a, b)

/* log|x + iy| without overflow or underflow. Near |z| = 1 it is log1p(|z|^2 - 1) / 2, with
 * |z|^2 - 1 from the exact products (fma recovers their rounding errors), so the cancellation
 * there costs nothing; elsewhere log(big) + log1p((small/big)^2) / 2. */
SX_SCALAR_FN SXR SXN(sx_cx_loghypot)(SXR x, SXR y) {
    SXR ax = SXF(fabs)(x), ay = SXF(fabs)(y);
    if (ax == SXINF || ay == SXINF) return SXINF;
    if (ax != ax || ay != ay) return ax + ay;
    SXR big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
    if (big == 0) return -SXINF;
    if (small == 0) return SXF(log)(big);
    if (big >= SXL(0.5) && big <= SXL(1.5)) {
        SXR p = big * big, q = small * small;
        SXR ep = SXF(fma)(big, big, -p), eq = SXF(fma)(small, small, -q);
        return SXL(0.5) * SXF(log1p)(((p - 1) + q) + (ep + eq));
    }
    SXR r = small / big;
    return SXF(log)(big) + SXL(0.5) * SXF(log1p)(r * r);
}

/* ---- arithmetic ---- */
SX_SCALAR_FN SXC SXN(sx_cadd)(SXC a, SXC b) { return SX_CX_MAKE(a.re + b.re, a.im + b.im); }
SX_SCALAR_FN SXC SXN(sx_csub)(SXC a, SXC b) { return SX_CX_MAKE(a.re - b.re, a.im - b.im); }
SX_SCALAR_FN SXC SXN(sx_cneg)(SXC a) { return SX_CX_MAKE(-a.re, -a.im); }
SX_SCALAR_FN SXC SXN(sx_cconj)(SXC a) { return SX_CX_MAKE(a.re, -a.im); }

/* The textbook product with one product fused into the other, as NumPy's SIMD loops compute
 * it (fmaddsub): explicit fma gives the same bits on every device whatever the compiler's
 * contraction (an unfused re of (M + Mj)^2 would be inf - inf = NaN; NumPy gives -inf). */
SX_SCALAR_FN SXC SXN(sx_cmul)(SXC a, SXC b) {
    return SX_CX_MAKE(SXF(fma)(a.re, b.re, -(a.im * b.im)), SXF(fma)(a.re, b.im, a.im * b.re));
}
SX_SCALAR_FN SXC SXN(sx_csquare)(SXC a) { return SXN(sx_cmul)(a, a); }

/* Smith's method with NumPy's branches and unfused products (so its results, z/z = 1 exactly
 * included): no overflow in |b|^2. A zero divisor divides each part by +0. */
SX_SCALAR_FN SXC SXN(sx_cdiv)(SXC a, SXC b) {
    SXR abr = SXF(fabs)(b.re), abi = SXF(fabs)(b.im);
    if (abr >= abi) {
        if (abr == 0 && abi == 0) return SX_CX_MAKE(a.re / abr, a.im / abi);
        SXR rat = b.im / b.re, den = b.re + SX_CX_MULRN_(b.im, rat);
        return SX_CX_MAKE((a.re + SX_CX_MULRN_(a.im, rat)) / den,
                          (a.im - SX_CX_MULRN_(a.re, rat)) / den);
    }
    SXR rat = b.re / b.im, den = b.im + SX_CX_MULRN_(b.re, rat);  /* also for NaN, as NumPy */
    return SX_CX_MAKE((SX_CX_MULRN_(a.re, rat) + a.im) / den,
                      (SX_CX_MULRN_(a.im, rat) - a.re) / den);
}

/* 1/a as NumPy's reciprocal (its own Smith form: 1/(0+0j) is NaN+NaNj there, not inf). */
SX_SCALAR_FN SXC SXN(sx_crecip)(SXC a) {
    if (SXF(fabs)(a.im) <= SXF(fabs)(a.re)) {
        SXR r = a.im / a.re, d = a.re + SX_CX_MULRN_(a.im, r);
        return SX_CX_MAKE(1 / d, -r / d);
    }
    SXR r = a.re / a.im, d = SX_CX_MULRN_(a.re, r) + a.im;
    return SX_CX_MAKE(r / d, -1 / d);
}

/* |z| = hypot (inf if either part is, even with a NaN); a zero part gives the other's |.|
 * exactly, as the standard requires, whatever the device's hypot. */
SX_SCALAR_FN SXR SXN(sx_cabs)(SXC z) {
    SXR ax = SXF(fabs)(z.re), ay = SXF(fabs)(z.im);
    if (ax == SXINF || ay == SXINF) return SXINF;
    return SX_CX_ABS(ax, ay);
}
SX_SCALAR_FN SXR SXN(sx_carg)(SXC z) { return SXF(atan2)(z.im, z.re); }

/* z/|z| (the standard's sign): 0 at 0, NaN+NaNj if a part is NaN; an infinite part gives
 * +-1 on its axis (NumPy), both infinite NaN+NaNj (NumPy). |z| beyond the range or
 * subnormal (too few bits) is taken of z scaled by a power of 2. */
SX_SCALAR_FN SXC SXN(sx_csign)(SXC z) {
    SXR x = z.re, y = z.im, nan = SXINF - SXINF;
    if (x != x || y != y) return SX_CX_MAKE(nan, nan);
    if (SXN(sx_cx_isinf)(x))
        return SXN(sx_cx_isinf)(y) ? SX_CX_MAKE(nan, nan)
                                   : SX_CX_MAKE(SXF(copysign)(SXL(1.0), x), 0);
    if (SXN(sx_cx_isinf)(y)) return SX_CX_MAKE(0, SXF(copysign)(SXL(1.0), y));
    if (x == 0 && y == 0) return SX_CX_MAKE(0, 0);
    SXR h = SXN(sx_cabs)(z);
    if (h == SXINF) { x *= SXL(0.5); y *= SXL(0.5); h = SXN(sx_cabs)(SX_CX_MAKE(x, y)); }
    if (h < SX_CX_TINY) { x *= SX_CX_UP; y *= SX_CX_UP; h = SXN(sx_cabs)(SX_CX_MAKE(x, y)); }
    return SX_CX_MAKE(x / h, y / h);
}

SX_SCALAR_FN SXC SXN(sx_crint)(SXC z) { return SX_CX_MAKE(SXF(rint)(z.re), SXF(rint)(z.im)); }
SX_SCALAR_FN int SXN(sx_cisnan)(SXC z) { return z.re != z.re || z.im != z.im; }
SX_SCALAR_FN int SXN(sx_cisinf)(SXC z) {
    return SXN(sx_cx_isinf)(z.re) || SXN(sx_cx_isinf)(z.im);
}
SX_SCALAR_FN int SXN(sx_cisfinite)(SXC z) {
    return SXN(sx_cx_isfin)(z.re) && SXN(sx_cx_isfin)(z.im);
}
SX_SCALAR_FN int SXN(sx_ceq)(SXC a, SXC b) { return a.re == b.re && a.im == b.im; }
SX_SCALAR_FN int SXN(sx_cne)(SXC a, SXC b) { return !(a.re == b.re && a.im == b.im); }
SX_SCALAR_FN int SXN(sx_cnonzero)(SXC z) { return z.re != 0 || z.im != 0; }

/* ---- sqrt, exp, log ---- */

/* Principal square root (C99 Annex G): t = sqrt((|x| + |z|) / 2) has no cancellation; the
 * other part is |y| / 2t. Operands near overflow are scaled by 1/4, tiny ones by UP. */
SX_SCALAR_FN SXC SXN(sx_csqrt)(SXC z) {
    SXR x = z.re, y = z.im, ax = SXF(fabs)(x), ay = SXF(fabs)(y), s = 1;
    if (ay == SXINF) return SX_CX_MAKE(SXINF, y);               /* any x, NaN too */
    if (x != x) return SX_CX_MAKE(x, x);
    if (ax == SXINF) {                  /* -inf: 0 +- inf j (NaN +- inf j); +inf: inf + 0j */
        if (x < 0) return SX_CX_MAKE(SXF(fabs)(y - y), SXF(copysign)(SXINF, y));
        return SX_CX_MAKE(x, SXF(copysign)(y - y, y));
    }
    if (x == 0 && y == 0) return SX_CX_MAKE(0, y);
    if (ax > SXMAX / 4 || ay > SXMAX / 4) {
        ax *= SXL(0.25); ay *= SXL(0.25); s = 2;
    } else if (ax < SX_CX_TINY && ay < SX_CX_TINY) {
        ax *= SX_CX_UP; ay *= SX_CX_UP; s = SX_CX_DOWN;
    }
    SXR t = SXF(sqrt)((ax + SXF(hypot)(ax, ay)) * SXL(0.5));
    SXR u = ay / (2 * t);                                       /* NaN when y is */
    if (x >= 0) return SX_CX_MAKE(t * s, SXF(copysign)(u * s, y));
    return SX_CX_MAKE(u * s, SXF(copysign)(t * s, y));
}

/* e^x cis(y); for x >= LNMAX as (e^(x/2) cis(y)) e^(x/2), finite wherever the result is. */
SX_SCALAR_FN SXC SXN(sx_cexp)(SXC z) {
    SXR x = z.re, y = z.im;
    if (y == 0) return SX_CX_MAKE(SXF(exp)(x), y);              /* NaN + 0j, inf + 0j */
    if (!SXN(sx_cx_isfin)(y)) {
        if (x == SXINF) return SX_CX_MAKE(x, y - y);            /* inf + NaN j */
        if (x == -SXINF) return SX_CX_MAKE(0, SXF(copysign)(SXL(0.0), y));
        return SX_CX_MAKE(y - y, y - y);
    }
    SXR c = SXF(cos)(y), s = SXF(sin)(y);
    if (x < SX_CX_LNMAX) { SXR e = SXF(exp)(x); return SX_CX_MAKE(e * c, e * s); }
    SXR e = SXF(exp)(SXL(0.5) * x);
    return SX_CX_MAKE((e * c) * e, (e * s) * e);
}

/* e^z - 1 with the real part as expm1(x) cos(y) - 2 sin^2(y/2) (no cancellation near 0);
 * for x >= LNMAX the 1 is below an ulp of e^z. Special values: the standard's table. */
SX_SCALAR_FN SXC SXN(sx_cexpm1)(SXC z) {
    SXR x = z.re, y = z.im;
    /* the standard's expm1(+-0 + 0j) = +0 + 0j (NumPy and the real expm1 keep -0) */
    if (y == 0) return SX_CX_MAKE(x == 0 ? SXL(0.0) : SXF(expm1)(x), y);
    if (!SXN(sx_cx_isfin)(y)) {
        if (x == SXINF) return SX_CX_MAKE(x, y - y);
        if (x == -SXINF) return SX_CX_MAKE(-1, SXF(copysign)(SXL(0.0), y));
        return SX_CX_MAKE(y - y, y - y);
    }
    if (x == -SXINF) return SX_CX_MAKE(-1, 0 * SXF(sin)(y));
    if (x >= SX_CX_LNMAX) { SXC w = SXN(sx_cexp)(z); return SX_CX_MAKE(w.re - 1, w.im); }
    SXR h = SXF(sin)(SXL(0.5) * y);
    return SX_CX_MAKE(SXF(expm1)(x) * SXF(cos)(y) - 2 * h * h, SXF(exp)(x) * SXF(sin)(y));
}

/* log|z| + i arg z: atan2 gives the branch cut's signed zeros and the Annex G angles. */
SX_SCALAR_FN SXC SXN(sx_clog)(SXC z) {
    return SX_CX_MAKE(SXN(sx_cx_loghypot)(z.re, z.im), SXF(atan2)(z.im, z.re));
}
SX_SCALAR_FN SXC SXN(sx_clog2)(SXC z) {                 /* log(z) * log2(e), as NumPy */
    SXC w = SXN(sx_clog)(z);
    return SX_CX_MAKE(w.re * SX_CX_LOG2E, w.im * SX_CX_LOG2E);
}
SX_SCALAR_FN SXC SXN(sx_clog10)(SXC z) {
    SXC w = SXN(sx_clog)(z);
    return SX_CX_MAKE(w.re * SX_CX_LOG10E, w.im * SX_CX_LOG10E);
}

/* log(1 + z). Where |1 + z| is within [0.5, 1.5] (tiny z included) the real part is
 * log1p(2x + x^2 + y^2) / 2, keeping the bits 1 + x would round away; elsewhere
 * log|1 + z|, 1 + x being exact (x in [-2, -0.5]) or harmless. Special values: log(1 + z)'s. */
SX_SCALAR_FN SXC SXN(sx_clog1p)(SXC z) {
    SXR x = z.re, y = z.im, u = 1 + x;
    SXR im = SXF(atan2)(y, u);
    if (y == 0 && x > -1) return SX_CX_MAKE(SXF(log1p)(x), im);
    SXR au = SXF(fabs)(u), ay = SXF(fabs)(y), m = au > ay ? au : ay;
    if (m >= SXL(0.5) && m <= SXL(1.5))
        return SX_CX_MAKE(SXL(0.5) * SXF(log1p)(SXF(fma)(x, 2 + x, y * y)), im);
    return SX_CX_MAKE(SXN(sx_cx_loghypot)(u, y), im);
}

/* ---- hyperbolic and trigonometric ---- */

/* sinh(x) cos(y) + i cosh(x) sin(y); Annex G's special values (the signs it leaves open
 * as glibc, hence NumPy, chooses). For |x| >= LNMAX, sinh and cosh are e^|x| / 2, taken as
 * in cexp so that a finite result does not overflow. */
SX_SCALAR_FN SXC SXN(sx_csinh)(SXC z) {
    SXR x = z.re, y = z.im, ax = SXF(fabs)(x);
    if (SXN(sx_cx_isfin)(x) && SXN(sx_cx_isfin)(y)) {
        if (y == 0) return SX_CX_MAKE(SXF(sinh)(x), y);
        SXR c = SXF(cos)(y), s = SXF(sin)(y);
        if (ax < SX_CX_LNMAX) return SX_CX_MAKE(SXF(sinh)(x) * c, SXF(cosh)(x) * s);
        SXR e = SXF(exp)(SXL(0.5) * ax), h = SXF(copysign)(SXL(0.5), x) * e;
        return SX_CX_MAKE((h * c) * e, (SXL(0.5) * e * s) * e);
    }
    if (x == 0) return SX_CX_MAKE(x, y - y);                  /* +-0 + NaN j */
    if (x != x) return SX_CX_MAKE(x, y == 0 ? y : x);
    if (ax == SXINF) {
        if (y == 0) return SX_CX_MAKE(x, y);
        if (SXN(sx_cx_isfin)(y)) return SX_CX_MAKE(x * SXF(cos)(y), SXINF * SXF(sin)(y));
        return SX_CX_MAKE(SXINF, y - y);
    }
    return SX_CX_MAKE(y - y, y - y);                          /* finite x != 0, y inf/NaN */
}

/* cosh(x) cos(y) + i sinh(x) sin(y), even; as csinh. */
SX_SCALAR_FN SXC SXN(sx_ccosh)(SXC z) {
    SXR x = z.re, y = z.im, ax = SXF(fabs)(x);
    if (SXN(sx_cx_isfin)(x) && SXN(sx_cx_isfin)(y)) {
        if (y == 0) return SX_CX_MAKE(SXF(cosh)(x), SXF(copysign)(SXL(0.0), x) * y);
        SXR c = SXF(cos)(y), s = SXF(sin)(y);
        if (ax < SX_CX_LNMAX) return SX_CX_MAKE(SXF(cosh)(x) * c, SXF(sinh)(x) * s);
        SXR e = SXF(exp)(SXL(0.5) * ax), h = SXF(copysign)(SXL(0.5), x) * e;
        return SX_CX_MAKE((SXL(0.5) * e * c) * e, (h * s) * e);
    }
    if (x == 0) return SX_CX_MAKE(y - y, 0);                  /* NaN + 0j */
    if (x != x) return SX_CX_MAKE(x, y == 0 ? y : x);
    if (ax == SXINF) {
        if (y == 0) return SX_CX_MAKE(SXINF, SXF(copysign)(SXL(0.0), x) * y);
        if (SXN(sx_cx_isfin)(y)) return SX_CX_MAKE(SXINF * SXF(cos)(y), x * SXF(sin)(y));
        return SX_CX_MAKE(SXINF, y - y);
    }
    return SX_CX_MAKE(y - y, y - y);
}

/* Kahan's formula: with t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2),
 * tanh z = (b r s + i t) / (1 + b s^2) -- accurate near the poles, no cancellation. Above
 * TANHX the real part is +-1 and the imaginary 4 sin y cos y e^(-2|x|). */
SX_SCALAR_FN SXC SXN(sx_ctanh)(SXC z) {
    SXR x = z.re, y = z.im, ax = SXF(fabs)(x);
    if (SXN(sx_cx_isfin)(x) && SXN(sx_cx_isfin)(y)) {
        if (y == 0) return SX_CX_MAKE(SXF(tanh)(x), y);
        if (ax > SX_CX_TANHX) {
            SXR e = SXF(exp)(-2 * ax);
            return SX_CX_MAKE(SXF(copysign)(SXL(1.0), x), 4 * SXF(sin)(y) * SXF(cos)(y) * e);
        }
        SXR t = SXF(tan)(y), b = 1 + t * t, s = SXF(sinh)(x), r = SXF(sqrt)(1 + s * s);
        SXR d = 1 + b * s * s;
        return SX_CX_MAKE(b * r * s / d, t / d);
    }
    /* +-inf + bj: the standard's +-1 + 0j with conj symmetry (C99 has 0 * sin(2b)) */
    if (ax == SXINF) return SX_CX_MAKE(SXF(copysign)(SXL(1.0), x), SXF(copysign)(SXL(0.0), y));
    if (x != x) return SX_CX_MAKE(x, y == 0 ? y : x);
    if (x == 0) return SX_CX_MAKE(x, y - y);                  /* +-0 + NaN j */
    return SX_CX_MAKE(y - y, y - y);
}

/* sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz): the standard defines their
 * special values so. */
SX_SCALAR_FN SXC SXN(sx_csin)(SXC z) {
    SXC w = SXN(sx_csinh)(SX_CX_MAKE(-z.im, z.re));
    if (w.im != w.im && SXN(sx_cx_isinf)(w.re)) return SX_CX_MAKE(w.im, SXINF);  /* glibc's */
    return SX_CX_MAKE(w.im, -w.re);
}
SX_SCALAR_FN SXC SXN(sx_ccos)(SXC z) { return SXN(sx_ccosh)(SX_CX_MAKE(-z.im, z.re)); }
SX_SCALAR_FN SXC SXN(sx_ctan)(SXC z) {
    SXC w = SXN(sx_ctanh)(SX_CX_MAKE(-z.im, z.re));
    return SX_CX_MAKE(w.im, -w.re);
}

/* ---- inverse functions ----
 * Finite moderate z: Kahan's formulas ("Branch cuts for complex elementary functions",
 * 1987) from the principal square roots of 1 +- z: each real / imaginary part is a sum of
 * same-signed products (no cancellation), and csqrt's signed zeros put the branch cuts'
 * values on the right side. |z| > BIG: the asymptotic log(2z) forms; |z| < SMALL: z itself
 * (asinh, atanh) or pi/2 - z (acos). */

/* asinh z = -i asin(iz); with w = iz: asin w = atan(Re w / Re(s1 s2)) + i asinh(Im(conj(s1) s2)),
 * s1 = sqrt(1 - w), s2 = sqrt(1 + w). */
SX_SCALAR_FN SXC SXN(sx_casinh)(SXC z) {
    SXR x = z.re, y = z.im, ax = SXF(fabs)(x), ay = SXF(fabs)(y);
    if (!SXN(sx_cx_isfin)(x) || !SXN(sx_cx_isfin)(y)) {
        if (x != x) {                                /* NaN + 0j, inf + NaN j, else NaN */
            if (y == 0) return z;
            return SX_CX_MAKE(ay == SXINF ? SXINF : x, x);
        }
        if (y != y) return SX_CX_MAKE(ax == SXINF ? x : y, y);   /* +-inf + NaN j, NaN */
        SXR im = ax == SXINF ? (ay == SXINF ? SX_CX_PI_4 : 0) : SX_CX_PI_2;
        return SX_CX_MAKE(SXF(copysign)(SXINF, x), SXF(copysign)(im, y));
    }
    SXR m = ax > ay ? ax : ay;
    if (m < SX_CX_SMALL) return z;
    if (y == 0) return SX_CX_MAKE(SXF(asinh)(x), y);
    if (m > SX_CX_BIG) {
        SXR l = SX_CX_LN2 + SXN(sx_cx_loghypot)(x, y);
        return SX_CX_MAKE(SXF(copysign)(l, x), SXF(copysign)(SXF(atan2)(ay, ax), y));
    }
    SXC s1 = SXN(sx_csqrt)(SX_CX_MAKE(1 + y, -x)), s2 = SXN(sx_csqrt)(SX_CX_MAKE(1 - y, x));
    SXR re = s1.re * s2.im - s1.im * s2.re, den = s1.re * s2.re - s1.im * s2.im;
    return SX_CX_MAKE(SXF(asinh)(re), SXF(atan2)(y, den));
}
SX_SCALAR_FN SXC SXN(sx_casin)(SXC z) {              /* asin z = -i asinh(iz) */
    SXC w = SXN(sx_casinh)(SX_CX_MAKE(-z.im, z.re));
    if (z.im != z.im && SXN(sx_cx_isinf)(z.re)) return SX_CX_MAKE(z.im, SXINF);  /* glibc's */
    return SX_CX_MAKE(w.im, -w.re);
}

/* acos z = 2 atan(Re s1 / Re s2) + i asinh(Im(conj(s2) s1)), s1 = sqrt(1 - z), s2 = sqrt(1 + z). */
SX_SCALAR_FN SXC SXN(sx_cacos)(SXC z) {
    SXR x = z.re, y = z.im, ax = SXF(fabs)(x), ay = SXF(fabs)(y);
    if (!SXN(sx_cx_isfin)(x) || !SXN(sx_cx_isfin)(y)) {
        if (x != x) return SX_CX_MAKE(x, ay == SXINF ? -y : x);    /* NaN -+ inf j */
        if (y != y) {                                 /* pi/2 + NaN j at 0; NaN - inf j */
            if (x == 0) return SX_CX_MAKE(SX_CX_PI_2, y);
            return SX_CX_MAKE(y, ax == SXINF ? -SXINF : y);
        }
        if (ay == SXINF) {
            SXR re = ax == SXINF ? (x < 0 ? SX_CX_3PI_4 : SX_CX_PI_4) : SX_CX_PI_2;
            return SX_CX_MAKE(re, -y);
        }
        return SX_CX_MAKE(x < 0 ? SX_CX_PI : 0, SXF(copysign)(SXINF, -y));
    }
    SXR m = ax > ay ? ax : ay;
    if (m < SX_CX_SMALL) return SX_CX_MAKE(SX_CX_PI_2 - x, -y);
    if (y == 0 && ax <= 1) return SX_CX_MAKE(SXF(acos)(x), -y);
    if (m > SX_CX_BIG) {
        SXR l = SX_CX_LN2 + SXN(sx_cx_loghypot)(x, y);
        return SX_CX_MAKE(SXF(atan2)(ay, x), SXF(copysign)(l, -y));
    }
    SXC s1 = SXN(sx_csqrt)(SX_CX_MAKE(1 - x, -y)), s2 = SXN(sx_csqrt)(SX_CX_MAKE(1 + x, y));
    SXR im = s2.re * s1.im - s2.im * s1.re;
    return SX_CX_MAKE(2 * SXF(atan2)(s1.re, s2.re), SXF(asinh)(im));
}

/* acosh z = +-i acos z, the sign making the real part >= 0 (C99: i acos z above the real
 * axis); the imaginary part takes y's sign, so the cut (-inf, 1] keeps its signed zeros. */
SX_SCALAR_FN SXC SXN(sx_cacosh)(SXC z) {
    SXC w = SXN(sx_cacos)(z);
    return SX_CX_MAKE(SXF(fabs)(w.im), SXF(copysign)(w.re, z.im));
}

/* atanh z = log((1 + z) / (1 - z)) / 2. Real part (odd in x) log1p(4|x| / ((1-|x|)^2 + y^2)) / 4,
 * or, where that denominator would lose bits to underflow (z next to +-1), the difference
 * log|1 + |x| + iy| - log|1 - |x| - iy| (no cancellation there); imaginary part
 * atan2(2y, (1 - x)(1 + x) - y^2) / 2 (its cancellation near |z| = 1 is harmless: atan2 of a
 * small second operand). |z| > BIG: atanh z = 1/z +- i pi/2 + O(1/z^3). */
SX_SCALAR_FN SXC SXN(sx_catanh)(SXC z) {
    SXR x = z.re, y = z.im, ax = SXF(fabs)(x), ay = SXF(fabs)(y);
    if (!SXN(sx_cx_isfin)(x) || !SXN(sx_cx_isfin)(y)) {
        if (ax == SXINF || ay == SXINF)              /* +-0 + (+-pi/2 or NaN) j */
            return SX_CX_MAKE(SXF(copysign)(SXL(0.0), x),
                              y != y ? y : SXF(copysign)(SX_CX_PI_2, y));
        if (x == 0) return SX_CX_MAKE(x, y);         /* +-0 + NaN j */
        return SX_CX_MAKE(x + y, x + y);
    }
    SXR m = ax > ay ? ax : ay;
    if (m < SX_CX_SMALL) return z;
    if (y == 0 && ax < 1) return SX_CX_MAKE(SXF(atanh)(x), y);
    if (m > SX_CX_BIG) {
        SXC r = SXN(sx_crecip)(z);
        return SX_CX_MAKE(r.re, SXF(copysign)(SX_CX_PI_2, y) + r.im);
    }
    SXR u = 1 - ax, d = u * u + ay * ay, re;
    if (d > SX_CX_TINY) re = SXL(0.25) * SXF(log1p)(4 * ax / d);
    else re = SXL(0.5) * (SXN(sx_cx_loghypot)(1 + ax, ay) - SXN(sx_cx_loghypot)(u, ay));
    SXR im = SXL(0.5) * SXF(atan2)(2 * y, (1 - x) * (1 + x) - y * y);
    return SX_CX_MAKE(SXF(copysign)(re, x), im);
}
SX_SCALAR_FN SXC SXN(sx_catan)(SXC z) {              /* atan z = -i atanh(iz) */
    SXC w = SXN(sx_catanh)(SX_CX_MAKE(-z.im, z.re));
    return SX_CX_MAKE(w.im, -w.re);
}

/* The unfused textbook product of npy_cpow's cmul and glibc's cpow. */
SX_SCALAR_FN SXC SXN(sx_cx_mulu)(SXC a, SXC b) {
    return SX_CX_MAKE(SX_CX_MULRN_(a.re, b.re) - SX_CX_MULRN_(a.im, b.im),
                      SX_CX_MULRN_(a.re, b.im) + SX_CX_MULRN_(a.im, b.re));
}

/* ---- power ----
 * NumPy's npy_cpow: b = 0 gives 1 (a NaN too); a = 0 gives 0 when Re b > 0, else NaN+NaNj;
 * integer b in (-100, 100) by repeated multiplication (1/that for b < 0); else exp(b log a). */
SX_SCALAR_FN SXC SXN(sx_cpow)(SXC a, SXC b) {
    if (b.re == 0 && b.im == 0) return SX_CX_MAKE(1, 0);
    if (a.re == 0 && a.im == 0) {
        if (b.re > 0) return SX_CX_MAKE(0, 0);
        SXR nan = SXINF - SXINF;
        return SX_CX_MAKE(nan, nan);
    }
    if (b.im == 0 && b.re > -100 && b.re < 100 && (SXR)(int)b.re == b.re) {
        int n = (int)b.re, k = n < 0 ? -n : n, mask = 1;
        if (n == 1) return a;
        if (n == 2) return SXN(sx_cx_mulu)(a, a);
        if (n == 3) return SXN(sx_cx_mulu)(a, SXN(sx_cx_mulu)(a, a));
        SXC acc = SX_CX_MAKE(1, 0), p = a;
        for (;;) {                                   /* square-and-multiply, as NumPy */
            if (k & mask) acc = SXN(sx_cx_mulu)(acc, p);
            mask <<= 1;
            if (k < mask) break;
            p = SXN(sx_cx_mulu)(p, p);
        }
        return n < 0 ? SXN(sx_cdiv)(SX_CX_MAKE(1, 0), acc) : acc;
    }
    return SXN(sx_cexp)(SXN(sx_cx_mulu)(b, SXN(sx_clog)(a)));
}
#undef SX_CX_MULRN_

/* 2^z = e^(z ln 2) (NumPy's complex exp2), and 1 / sqrt(z) (PyTorch's rsqrt) */
SX_SCALAR_FN SXC SXN(sx_cexp2)(SXC z) {
    return SXN(sx_cexp)(SX_CX_MAKE(z.re * SX_CX_LN2, z.im * SX_CX_LN2));
}
SX_SCALAR_FN SXC SXN(sx_crsqrt)(SXC z) { return SXN(sx_crecip)(SXN(sx_csqrt)(z)); }

/* this instance's parameters: the next one defines its own */
#undef SXR
#undef SXC
#undef SX_CX_S
#undef SX_CX_MAKE
#undef SXF
#undef SXL
#undef SXINF
#undef SXMAX
#undef SX_CX_LNMAX
#undef SX_CX_BIG
#undef SX_CX_SMALL
#undef SX_CX_TANHX
#undef SX_CX_TINY
#undef SX_CX_UP
#undef SX_CX_DOWN
#undef SX_CX_MULRN
#undef SX_CX_ABS
