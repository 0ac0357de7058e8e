/* Integer helpers of the op table's C expressions (tensor/optable.py), shared by the CPU
 * kernels (C, tensor/cpu/csrc/common.h) and the CUDA kernels (C++, common.cuh) so both
 * devices compute the same integers. The includer defines SX_FN (the function qualifier)
 * and the fixed-width integer types first. Python semantics: floor division and modulo
 * take the divisor's sign; division by 0 gives 0 and INT_MIN / -1 wraps, as NumPy's. */
#ifndef STRIDEX_INTOPS_H
#define STRIDEX_INTOPS_H

#define SX_BITS(a) ((int)(sizeof(a) * 8))
#define SX_FLOORDIV_I(a, b) ((b) == 0 ? 0 : (b) == -1 ? sx_wneg(a) : \
    ((a) / (b) - (((a) % (b) != 0) & (((a) < 0) != ((b) < 0)))))
#define SX_FLOORDIV_U(a, b) ((b) == 0 ? 0 : (a) / (b))
#define SX_MOD_I(a, b) ((b) == 0 || (b) == -1 ? 0 : \
    ((a) % (b) + ((((a) % (b)) != 0 & ((((a) % (b)) < 0) != ((b) < 0))) ? (b) : 0)))
#define SX_MOD_U(a, b) ((b) == 0 ? 0 : (a) % (b))
/* C's truncating remainder (NumPy's fmod: the dividend's sign), 0 for a zero divisor */
#define SX_FMOD_I(a, b) ((b) == 0 || (b) == -1 ? 0 : (a) % (b))
#define SX_LSHIFT(a, b) (((b) >= 0 && (b) < SX_BITS(a)) ? sx_wshl(a, b) : 0)
#define SX_RSHIFT(a, b) (((b) >= 0 && (b) < SX_BITS(a)) ? ((a) >> (b)) : ((a) < 0 ? -1 : 0))

SX_FN int64_t sx_ipow(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    uint64_t r = 1, x = (uint64_t)a;   /* unsigned: wrapping products, as NumPy's */
    while (b) { if (b & 1) r *= x; x *= x; b >>= 1; }
    return (int64_t)r;
}

/* unsigned exponents: no negative case, and one past int64 must not read as negative */
SX_FN uint64_t sx_upow(uint64_t a, uint64_t b) {
    uint64_t r = 1;
    while (b) { if (b & 1) r *= a; a *= a; b >>= 1; }
    return r;
}

/* gcd / lcm on magnitudes, as NumPy's npy_gcd / npy_lcm: |a| as a uint64 (|INT64_MIN| = 2^63
 * too); the result wraps into the operands' type when the includer stores it (lcm(-128, 127)
 * of int8 is -128, gcd(INT64_MIN, 0) is INT64_MIN), as NumPy's */
#define SX_UABS(a) ((a) < 0 ? (uint64_t)0 - (uint64_t)(a) : (uint64_t)(a))
SX_FN uint64_t sx_gcd_u(uint64_t a, uint64_t b) {
    while (b) { uint64_t t = a % b; a = b; b = t; }
    return a;
}
SX_FN uint64_t sx_lcm_u(uint64_t a, uint64_t b) {
    uint64_t g = sx_gcd_u(a, b);
    return g == 0 ? 0 : a / g * b;
}
#define SX_GCD(a, b) sx_gcd_u(SX_UABS(a), SX_UABS(b))
#define SX_LCM(a, b) sx_lcm_u(SX_UABS(a), SX_UABS(b))
/* the 1 bits of |a| (NumPy 2's bitwise_count), by the same bit arithmetic on both devices */
SX_FN int sx_popcount(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

#endif
