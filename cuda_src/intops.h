/* Integer helpers of the op table's C expressions (tensor/optable.py), shared by the CPU
 * kernels (C, tensor/cpu/csrc/common.h) and the CUDA kernels (C++, common.cuh) so both
 * devices compute the same integers. The includer defines SX_FN (the function qualifier)
 * and the fixed-width integer types first. Python semantics: floor division and modulo
 * take the divisor's sign; division by 0 gives 0 and INT_MIN / -1 wraps, as NumPy's. */
#ifndef STRIDEX_INTOPS_H
#define STRIDEX_INTOPS_H

#define SX_BITS(a) ((int)(sizeof(a) * 8))
#define SX_FLOORDIV_I(a, b) ((b) == 0 ? 0 : (b) == -1 ? -(a) : \
    ((a) / (b) - (((a) % (b) != 0) & (((a) < 0) != ((b) < 0)))))
#define SX_FLOORDIV_U(a, b) ((b) == 0 ? 0 : (a) / (b))
#define SX_MOD_I(a, b) ((b) == 0 || (b) == -1 ? 0 : \
    ((a) % (b) + ((((a) % (b)) != 0 & ((((a) % (b)) < 0) != ((b) < 0))) ? (b) : 0)))
#define SX_MOD_U(a, b) ((b) == 0 ? 0 : (a) % (b))
/* C's truncating remainder (NumPy's fmod: the dividend's sign), 0 for a zero divisor */
#define SX_FMOD_I(a, b) ((b) == 0 || (b) == -1 ? 0 : (a) % (b))
#define SX_LSHIFT(a, b) (((b) >= 0 && (b) < SX_BITS(a)) ? ((a) << (b)) : 0)
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

#endif
