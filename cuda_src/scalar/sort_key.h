/* Order-preserving sort keys, shared by the CPU sort kernels (tensor/cpu/csrc/sort.h) and the
 * CUDA ones (cuda_src/sort.cuh): a stable sort by these unsigned keys is the sort of the
 * values, so both devices give the same permutation bit for bit.
 *
 * sx_sort_key_<sfx>(raw, desc): raw is the element's bits as an unsigned integer of its width;
 * the key uses the low SX_SORT_BITS(width) bits (bool: 1), so a radix sort needs only those.
 *   integers: the sign bit flipped (two's complement order becomes unsigned order), unsigned
 *     ones as they are;
 *   floats: the sign-magnitude bits mapped to unsigned order (negatives inverted, positives
 *     with the sign bit set); -0.0 takes +0.0's key (they compare equal, so a stable sort
 *     keeps their order); every NaN takes the largest key, so NaNs sort last ascending
 *     (NumPy) and first descending (PyTorch: NaN is the greatest value), in input order.
 *   desc: the key inverted within its width, so a stable ascending sort of it is the stable
 *     descending sort (equal elements keep their order; not NumPy's flip of the ascending
 *     sort, which reverses them). */
#ifndef STRIDEX_SCALAR_SORT_KEY_H
#define STRIDEX_SCALAR_SORT_KEY_H

#include "types.h"

SX_SCALAR_FN uint64_t sx_key_fin(uint64_t k, int desc, uint64_t mask) {
    return desc ? (~k & mask) : k;
}

/* A float's key, computed without a branch on the sign (a select on it compiles to a branch,
 * mispredicted half the time on random data: a CPU key 3.4x slower): a negative flips every bit
 * (an arithmetic shift spreads the sign), a positive the sign bit; -0.0 takes +0.0's key and a
 * NaN the largest (rare: their selects predict well). U: the unsigned type of the width, I: the
 * signed one. */
#define SX_FKEY_DEF(S, U, I, SIGN, INF, MASK)                                                   \
    SX_SCALAR_FN uint64_t sx_sort_key_##S(U r, int desc) {                                      \
        U k = r ^ ((U)((I)r >> (8 * sizeof(U) - 1)) | (U)(SIGN));                               \
        k = r == (U)(SIGN) ? (U)(SIGN) : k;                                                     \
        k = (U)(r & ~(U)(SIGN)) > (U)(INF) ? (U)(MASK) : k;                                     \
        return sx_key_fin(k, desc, MASK);                                                       \
    }

SX_SCALAR_FN uint64_t sx_sort_key_b8(uint8_t r, int desc) { return sx_key_fin(r != 0, desc, 1); }
SX_SCALAR_FN uint64_t sx_sort_key_u8(uint8_t r, int desc) { return sx_key_fin(r, desc, 0xffu); }
SX_SCALAR_FN uint64_t sx_sort_key_i8(uint8_t r, int desc) { return sx_key_fin(r ^ 0x80u, desc, 0xffu); }
SX_SCALAR_FN uint64_t sx_sort_key_i16(uint16_t r, int desc) {
    return sx_key_fin(r ^ 0x8000u, desc, 0xffffu);
}
SX_SCALAR_FN uint64_t sx_sort_key_i32(uint32_t r, int desc) {
    return sx_key_fin(r ^ 0x80000000u, desc, 0xffffffffu);
}
SX_SCALAR_FN uint64_t sx_sort_key_i64(uint64_t r, int desc) {
    return sx_key_fin(r ^ 0x8000000000000000ull, desc, ~0ull);
}
SX_SCALAR_FN uint64_t sx_sort_key_u16(uint16_t r, int desc) { return sx_key_fin(r, desc, 0xffffu); }
SX_SCALAR_FN uint64_t sx_sort_key_u32(uint32_t r, int desc) { return sx_key_fin(r, desc, 0xffffffffu); }
SX_SCALAR_FN uint64_t sx_sort_key_u64(uint64_t r, int desc) { return sx_key_fin(r, desc, ~0ull); }
SX_FKEY_DEF(f16, uint16_t, int16_t, 0x8000u, 0x7c00u, 0xffffu)
SX_FKEY_DEF(bf16, uint16_t, int16_t, 0x8000u, 0x7f80u, 0xffffu)
SX_FKEY_DEF(f32, uint32_t, int32_t, 0x80000000u, 0x7f800000u, 0xffffffffu)
SX_FKEY_DEF(f64, uint64_t, int64_t, 0x8000000000000000ull, 0x7ff0000000000000ull, ~0ull)
#undef SX_FKEY_DEF

#endif
