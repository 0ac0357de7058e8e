/* Shared definitions of the CUDA kernels (NVRTC, C++17): element types, 16-bit float
 * conversions, the by-value N-d strided indexer and the device versions of the macros the
 * op table's C expressions use. Mirrors tensor/cpu/csrc/common.h; what both compute alike
 * lives in scalar/, compiled by both.
 *
 * Each dtype has a traits struct sx_<sfx> (sx_f32, sx_i8, sx_b8, ...):
 *   T      storage type          C   compute type
 *   ld(x)  storage -> compute    st(x)  compute -> storage (a template: any arithmetic x)
 * 16-bit floats are stored as uint16_t and computed in float, converted with our own bit
 * arithmetic (scalar/types.h, shared with the CPU), so no CUDA toolkit header (cuda_fp16.h,
 * cuda_bf16.h) is needed.
 * Signed overflow: the expressions do integer arithmetic in int/int64 and st() truncates,
 * which wraps as NumPy's ints do. */
#ifndef STRIDEX_COMMON_CUH
#define STRIDEX_COMMON_CUH

#include "scalar/types.h"   /* integer types, 16-bit float conversions (the CPU's too) */
#include "scalar/reduce_ops.h" /* LO_sfx / HI_sfx: the identities of max / min */
#if !defined(__CUDACC_RTC__)
#include <math.h>
#endif

#define SX_DEV static __device__ __forceinline__

/* The kernel's dynamic shared memory (sized by the launch; above 48 KiB the function needs
 * its MAX_DYNAMIC_SHARED_SIZE_BYTES attribute raised first: runtime.Kernel.allow_shared). */
#ifndef SX_EXTERN_SHARED
#define SX_EXTERN_SHARED(T, name) extern __shared__ __align__(128) T name[]
#endif
#define SX_MAXDIM 16     /* maximum rank of a launch (after coalescing) */
#define SX_MAXARGS 4     /* operands of one elementwise launch: out + up to 3 inputs */
#define SX_BLOCK 256     /* threads per block of the elementwise kernels */

/* ---- dtype traits: lo/hi are the identities of max/min (scalar/reduce_ops.h) ---- */
#define SX_PLAIN_TRAITS(SFX, TY)                                           \
struct sx_##SFX {                                                          \
    typedef TY T; typedef TY C;                                            \
    SX_DEV C ld(T x) { return x; }                                         \
    template <class X> SX_DEV T st(X x) { return (T)x; }                   \
    SX_DEV C lo() { return (C)LO_##SFX; }                                  \
    SX_DEV C hi() { return (C)HI_##SFX; }                                  \
};
SX_PLAIN_TRAITS(i8, int8_t)
SX_PLAIN_TRAITS(u8, uint8_t)
SX_PLAIN_TRAITS(i16, int16_t)
SX_PLAIN_TRAITS(i32, int32_t)
SX_PLAIN_TRAITS(i64, int64_t)
SX_PLAIN_TRAITS(u16, uint16_t)
SX_PLAIN_TRAITS(u32, uint32_t)
SX_PLAIN_TRAITS(u64, uint64_t)
SX_PLAIN_TRAITS(f32, float)
SX_PLAIN_TRAITS(f64, double)
#undef SX_PLAIN_TRAITS

struct sx_b8 {
    typedef uint8_t T; typedef int C;
    SX_DEV C ld(T x) { return (int)x; }
    template <class X> SX_DEV T st(X x) { return (T)(x != 0); }
    SX_DEV C lo() { return LO_b8; }
    SX_DEV C hi() { return HI_b8; }
};
/* the float a 16-bit store rounds from: a float as it is, a wider value (double, integers)
 * rounded to odd, so that the store rounds once (as the CPU's ST_f16 / ST_bf16) */
SX_DEV float sx_st16_src(float x) { return x; }
template <class X> SX_DEV float sx_st16_src(X x) { return sx_d2f_odd((double)x); }

struct sx_f16 {
    typedef uint16_t T; typedef float C;
    SX_DEV C ld(T x) { return sx_h2f(x); }
    template <class X> SX_DEV T st(X x) { return sx_f2h(sx_st16_src(x)); }
    SX_DEV C lo() { return LO_f16; }
    SX_DEV C hi() { return HI_f16; }
};
struct sx_bf16 {
    typedef uint16_t T; typedef float C;
    SX_DEV C ld(T x) { return sx_bf2f(x); }
    template <class X> SX_DEV T st(X x) { return sx_f2bf(sx_st16_src(x)); }
    SX_DEV C lo() { return LO_bf16; }
    SX_DEV C hi() { return HI_bf16; }
};

/* complex64 / complex128: the structs of scalar/complex.h (the CPU's too), computed as
 * stored; the casts to and from them are explicit expressions (optable.cast_expr). + lets
 * the dtype-generic templates (scatter-add) accumulate them. */
#include "scalar/complex.h"
#define SX_COMPLEX_TRAITS(SFX, TY)                                         \
struct sx_##SFX {                                                          \
    typedef TY T; typedef TY C;                                            \
    SX_DEV C ld(T x) { return x; }                                         \
    SX_DEV T st(T x) { return x; }                                         \
};                                                                         \
SX_DEV TY operator+(TY a, TY b) { return sx_cadd(a, b); }
SX_COMPLEX_TRAITS(c64, sx_cf)
SX_COMPLEX_TRAITS(c128, sx_cd)
#undef SX_COMPLEX_TRAITS

/* Full-warp __shfl_{down,up,xor}_sync of any trivially copyable value, 4 bytes at a time
 * (sx_shfl_down(v, delta), sx_shfl_up(v, delta), sx_shfl_xor(v, lane_mask)). */
#define SX_SHFL_ANY(NAME, INTRIN)                                          \
template <class T>                                                         \
SX_DEV T NAME(T v, unsigned arg) {                                         \
    constexpr int W = (int)((sizeof(T) + 3) / 4);                          \
    union U { T v; unsigned w[W]; } u;                                     \
    u.v = v;                                                               \
    _Pragma("unroll")                                                      \
    for (int j = 0; j < W; j++) u.w[j] = INTRIN(0xffffffffu, u.w[j], arg); \
    return u.v;                                                            \
}
SX_SHFL_ANY(sx_shfl_down, __shfl_down_sync)
SX_SHFL_ANY(sx_shfl_up, __shfl_up_sync)
SX_SHFL_ANY(sx_shfl_xor, __shfl_xor_sync)
#undef SX_SHFL_ANY

/* Four consecutive elements, loaded or stored as one vector (aligned to 4 elements). */
template <class T>
struct alignas(sizeof(T) * 4) sx_v4 { T v[4]; };

/* The i-th sx_v4 at p: a GPU faults on a vector access that is not aligned to its size (the
 * host plans vector paths only for aligned operands); the emulator's x86 would not, so it
 * traps there instead, naming the kernel. */
template <class T>
SX_DEV sx_v4<T> *sx_v4_at(const T *p, int64_t i) {
#ifdef SX_EMULATE
    if ((uintptr_t)(p + 4 * i) % sizeof(sx_v4<T>)) __trap();
#endif
    return (sx_v4<T> *)(p + 4 * i);
}

/* ---- the N-d strided indexer, passed by value as a kernel argument ----
 * shape and per-operand BYTE strides (as the CPU meta), operand 0 is the output.
 * idx32: the host sets it when n and every operand's extreme offsets fit in int32, and the
 * kernel then does its index arithmetic in 32 bits. contig: every tensor operand is
 * contiguous over the (single, merged) dim, so offsets are i * itemsize. scalar: bit k set
 * when operand k is a Python scalar whose bytes are in sval[k] (read with stride 0). vec: the
 * contiguous operands are aligned to 4 elements, so the kernel may load 4 at a time.
 * tile: nonzero selects the tiled path (elementwise.cuh, sx_ew_tiled) for operands whose
 * memory orders differ: the host ordered the dims so that dim nd-1 is the output's fastest
 * (A) and dim nd-2 (B) the fastest of the inputs whose bit k is set in `tile`; those are
 * staged through shared memory tile by tile so that both their reads and the output's
 * writes are coalesced. The host sets tile only together with idx32. */
template <int N>
struct sx_indexer {
    char *ptr[N];
    int64_t n;                        /* element count */
    int nd, idx32, contig, scalar, vec, tile;
    int64_t sval[N];
    int64_t shape[SX_MAXDIM];
    int64_t stride[N][SX_MAXDIM];
};

/* Byte offsets of linear (row-major) index i for every operand. The dim loop stays rolled
 * (`unroll 1`): unrolled copies of the 64-bit div/mod doubled NVRTC's compile time. */
template <int N, class I>
SX_DEV void sx_offsets(const sx_indexer<N> &ix, I i, I (&off)[N]) {
#pragma unroll
    for (int k = 0; k < N; k++) off[k] = 0;
#pragma unroll 1
    for (int d = ix.nd - 1; d >= 0; d--) {
        I s = (I)ix.shape[d];
        I c = i % s;
        i /= s;
#pragma unroll
        for (int k = 0; k < N; k++) off[k] += c * (I)ix.stride[k][d];
    }
}

/* Grid-stride loop: f(ptrs) for every element, pointers already offset. base[k] is operand
 * k's address (a scalar operand points at the thread's copy of its bytes, stride 0). */
template <int N, class I, class F>
SX_DEV void sx_ew_loop_t(const sx_indexer<N> &ix, char *const (&base)[N], F f) {
    I n = (I)ix.n;
    I step = (I)blockDim.x * (I)gridDim.x;
#pragma unroll 1
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < n; i += step) {
        I off[N];
        sx_offsets<N, I>(ix, i, off);
        char *p[N];
#pragma unroll
        for (int k = 0; k < N; k++) p[k] = base[k] + off[k];
        f(p);
    }
}

#define SX_FN SX_DEV
#include "intops.h"  /* integer helpers shared with the other device */

/* Float functions by overload (replaces the CPU's _Generic): sx1_NAME / sx2_NAME for float
 * (the f-suffixed CUDA function) and double. SX_F1(name, x) / SX_F2(name, x, y) pick them. */
#define SX_DEF_F1(NAME)                                                  \
SX_DEV float sx1_##NAME(float x) { return NAME##f(x); }                  \
SX_DEV double sx1_##NAME(double x) { return NAME(x); }
#define SX_DEF_F2(NAME)                                                  \
SX_DEV float sx2_##NAME(float x, float y) { return NAME##f(x, y); }      \
SX_DEV double sx2_##NAME(double x, double y) { return NAME(x, y); }
SX_DEF_F1(fabs) SX_DEF_F1(exp) SX_DEF_F1(expm1) SX_DEF_F1(log) SX_DEF_F1(log1p)
SX_DEF_F1(log2) SX_DEF_F1(log10) SX_DEF_F1(sqrt) SX_DEF_F1(sin) SX_DEF_F1(cos)
SX_DEF_F1(tan) SX_DEF_F1(asin) SX_DEF_F1(acos) SX_DEF_F1(atan) SX_DEF_F1(sinh)
SX_DEF_F1(cosh) SX_DEF_F1(tanh) SX_DEF_F1(erf) SX_DEF_F1(floor) SX_DEF_F1(ceil)
SX_DEF_F1(trunc) SX_DEF_F1(rint) SX_DEF_F1(acosh) SX_DEF_F1(asinh) SX_DEF_F1(atanh)
SX_DEF_F2(pow) SX_DEF_F2(atan2) SX_DEF_F2(fmod) SX_DEF_F2(copysign) SX_DEF_F2(hypot)
SX_DEF_F2(nextafter) SX_DEF_F1(cbrt) SX_DEF_F1(exp2) SX_DEF_F1(erfc) SX_DEF_F1(lgamma)
#undef SX_DEF_F1
#undef SX_DEF_F2

/* NumPy's float floor_divide / remainder (Python semantics, sign of the divisor). */
template <class T>
SX_DEV T sx_fmod_py_t(T a, T b) {
    T m = sx2_fmod(a, b);
    if (b == 0) return m;
    if (m != 0) { if ((b < 0) != (m < 0)) m += b; } else m = sx2_copysign((T)0, b);
    return m;
}
template <class T>
SX_DEV T sx_floordiv_t(T a, T b) {
    if (b == 0) return a / b;
    T m = sx2_fmod(a, b);
    T d = (a - m) / b;
    if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
    if (d == 0) return sx2_copysign((T)0, a / b);
    T f = sx1_floor(d);
    if (d - f > (T)0.5) f += 1;
    return f;
}
SX_DEV float sx2_sx_fmod_py(float a, float b) { return sx_fmod_py_t<float>(a, b); }
SX_DEV double sx2_sx_fmod_py(double a, double b) { return sx_fmod_py_t<double>(a, b); }
SX_DEV float sx2_sx_floordiv(float a, float b) { return sx_floordiv_t<float>(a, b); }
SX_DEV double sx2_sx_floordiv(double a, double b) { return sx_floordiv_t<double>(a, b); }

#include "scalar/float_ops.h"   /* logaddexp, the 16-bit nextafter (the CPU's too) */
#include "scalar/special.h"     /* erfinv, digamma, i0 (the CPU's too) */

/* e / (1 + e) or 1 / (1 + e) with e = exp(-|x|): never exp of a large positive value, so
 * sigmoid(-89) is the subnormal e^-89 (as the CPU's vm_sigmoidf), not 1 / inf = 0 */
SX_DEV float sx_sigmoid(float x) { float e = expf(-fabsf(x)); return (x < 0.0f ? e : 1.0f) / (1.0f + e); }
SX_DEV double sx_sigmoid(double x) { double e = exp(-fabs(x)); return (x < 0.0 ? e : 1.0) / (1.0 + e); }

#define SX_F1(name, x) sx1_##name(x)
#define SX_F2(name, x, y) sx2_##name(x, y)
#define SX_EXP(x) sx1_exp(x)
#define SX_LOG(x) sx1_log(x)
#define SX_TANH(x) sx1_tanh(x)
#define SX_SIGMOID(x) sx_sigmoid(x)

#endif
