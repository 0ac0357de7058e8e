/* Batched strided matrix multiply for every dtype of the library.
 *
 *   void gemm_<sfx>(batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk, sBn,
 *                   C, sCb, sCm, sCn, nthreads)
 *
 * computes C[b] = A[b] @ B[b] (C is overwritten; K == 0 gives zeros).  Strides
 * are in elements and may be positive, zero (broadcast) or negative; pointers
 * address element [0,0] of batch 0.  C must not alias A or B, and must not
 * overlap itself (no zero stride on an output dimension longer than 1).
 *
 * float32 / float64 (and float16 / bfloat16 through the float32 path):
 *   a packed, cache-blocked GEMM in the style of Goto / BLIS.  Panels of A
 *   (MR rows) and of B (NR columns) are copied into contiguous aligned buffers,
 *   which absorbs any stride pattern; a register-blocked micro-kernel written
 *   with GCC vector extensions computes an MR x NR tile with FMAs.
 *   Loop nest:  jc (NC cols of B)  ->  pc (KC deep)  ->  ic (MC rows of A)
 *               -> jr (NR) -> ir (MR) -> micro-kernel.
 *   Threads get disjoint (batch, row-range, col-range) tasks; K is never split,
 *   and KC depends on K only, so every element of C is summed in the same order
 *   whatever the thread count: results are bitwise reproducible.
 *   16-bit floats are widened to float while packing, accumulated in float32
 *   in a workspace and rounded to nearest-even once, on the final store.
 *   Thin problems (<= 4 rows on one side: matrix-vector and the like) skip
 *   the packing of the big operand and stream it along its contiguous axis.
 *   Small problems (M*N*K <= 64^3) take a direct register-tiled loop with no
 *   packing and no OpenMP (only a large batch of them is spread over threads).
 * Integer types: i-k-j loops over a packed block of B, accumulating in a wider
 *   unsigned type (wrapping arithmetic, truncated on store == NumPy's result).
 * Bool: C = OR_k (A AND B), output 0/1.
 * gemm_add_<sfx>(..., nthreads, D, sDb, sDm, sDn, dk, alpha, beta, epi, ctx) (float dtypes) computes
 *   C = alpha * (A @ B) + beta * D before C's one rounding: for the 16-bit floats in float32
 *   on the accumulator (PyTorch's addmm / linear with a bias), for float32 / float64 as the
 *   separate scalings and sum would (the same bits as the product, then alpha * P, beta * D
 *   and their sum each rounded).  D (C's dtype, or float32: dk) is read through its strides
 *   (0 broadcasts a bias along rows or columns) and must not overlap C; alpha 0 drops the
 *   product and beta 0 drops D (their NaN and inf too).
 * nthreads < 1 is taken as 1.  Scratch memory is allocated per call and per
 * thread and freed before returning; there is no global mutable state.
 *
 * GM_TYPES, a bit mask of the GM_T_* numbers below (all when undefined), names the types a
 * build exports: tensor/cpu/gemm.py builds float32, float64, the 16-bit floats and the
 * integers as four modules, so a first float32 product compiles a quarter of this file.
 */
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------------------ */
/* Vector width and register blocking                                        */
/* ------------------------------------------------------------------------ */
#if defined(__AVX512F__)
#define GM_VBYTES 64
#elif defined(__AVX__)
#define GM_VBYTES 32
#else
#define GM_VBYTES 16
#endif

typedef float gm_vf __attribute__((vector_size(GM_VBYTES)));
typedef double gm_vd __attribute__((vector_size(GM_VBYTES)));
#define GM_VLF (GM_VBYTES / 4)
#define GM_VLD (GM_VBYTES / 8)

/* Micro-tile: MR rows x NV vectors (6 x 32 floats / 6 x 16 doubles with
 * AVX-512).  Needs MR*NV accumulators + NV + 1 vector registers, which fits
 * the 16 registers of AVX2 / SSE as well as the 32 of AVX-512 / AArch64.
 * On Zen 4, 8x2, 12x2, 14x2, 8x3 and 6x4 tiles measured the same as 6x2
 * (all ~95% of FMA peak); 6x2 keeps edge waste and register pressure low. */
#ifndef GM_MR_F
#define GM_MR_F 6
#define GM_NV_F 2
#endif
#ifndef GM_MR_D
#define GM_MR_D 6
#define GM_NV_D 2
#endif
#define GM_NR_F (GM_NV_F * GM_VLF)
#define GM_NR_D (GM_NV_D * GM_VLD)

/* Cache blocking (elements), tuned on Zen 4 (32 KiB L1d, 1 MiB L2 per core,
 * 32 MiB L3).  MC x KC block of A (240 KiB f32 / 480 KiB f64) stays in L2 and
 * is swept once per NR-column micro-panel of B; the KC x NC panel of B lives in
 * L3.  A long KC amortises the read-modify-write of C between K blocks; the
 * kernel needs only ~13 bytes/cycle, so B micro-panels may stream from L2.
 * Only KC influences rounding (the order of the K blocks), and it depends on
 * K alone. */
#ifndef GM_KC_F
#define GM_KC_F 512
#endif
#ifndef GM_MC_F
#define GM_MC_F 120
#endif
#ifndef GM_NC_F
#define GM_NC_F 3072
#endif
#ifndef GM_KC_D
#define GM_KC_D 512
#endif
#ifndef GM_MC_D
#define GM_MC_D 120
#endif
#ifndef GM_NC_D
#define GM_NC_D 2048
#endif

/* Up to this many multiply-adds per matrix the direct loop is used. */
#ifndef GM_SMALL
#define GM_SMALL (64 * 64 * 64)
#endif
/* Below this many multiply-adds in total no thread team is started. */
#ifndef GM_PAR_MIN
#define GM_PAR_MIN (1 << 18)
#endif

#define GM_ALIGN 64

/* The element types (the gm_problem's type) and which of them this build exports. */
#define GM_T_F32 0
#define GM_T_F64 1
#define GM_T_F16 2
#define GM_T_BF16 3
#define GM_T_I8 4
#define GM_T_U8 5
#define GM_T_I16 6
#define GM_T_I32 7
#define GM_T_I64 8
#define GM_T_B8 9
#ifndef GM_TYPES
#define GM_TYPES 0x3ff
#endif
#define GM_ON(T) ((GM_TYPES >> (T)) & 1)
/* A dispatch case whose type this build leaves out calls nothing, so the compiler drops
 * that type's kernels (unreferenced static functions) before optimising them. */
#define GM_CASE(T, CALL) case T: if (GM_ON(T)) { CALL; } break;
#define GM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GM_MAX(a, b) ((a) > (b) ? (a) : (b))

static void *gm_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0) bytes = GM_ALIGN;
    bytes = (bytes + GM_ALIGN - 1) & ~(size_t)(GM_ALIGN - 1);
    if (posix_memalign(&p, GM_ALIGN, bytes) != 0) return NULL;
    return p;
}

/* ------------------------------------------------------------------------ */
/* 16-bit float conversions (branch-free, round to nearest even)             */
/* ------------------------------------------------------------------------ */
static inline float gm_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t gm_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float gm_half_to_float(uint16_t h)
{
    uint32_t mag = (uint32_t)(h & 0x7fffu);
    /* place exponent+mantissa in a float and rescale by 2^(127-15): exact for
     * normals and subnormals alike */
    float v = gm_u2f(mag << 13) * 0x1p112f;
    uint32_t r = gm_f2u(v);
    if (mag >= 0x7c00u) r = 0x7f800000u | (mag << 13); /* inf / nan */
    return gm_u2f(r | ((uint32_t)(h & 0x8000u) << 16));
}

static inline uint16_t gm_float_to_half(float f)
{
    uint32_t x = gm_f2u(f);
    uint32_t sgn = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    /* normal range: drop 13 mantissa bits with round-half-even, rebias the
     * exponent by -112; a carry out of the mantissa bumps the exponent and
     * reaches 0x7c00 (inf) for values >= 65520 */
    uint32_t nrm = (ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13;
    /* below 2^-14: adding 0.5f aligns the value to the half-subnormal ulp
     * (2^-24) and the FPU rounds to nearest-even */
    uint32_t sub = gm_f2u(gm_u2f(ax) + 0.5f) - 0x3f000000u;
    uint32_t r = ax < 0x38800000u ? sub : nrm;
    if (ax >= 0x47800000u) r = 0x7c00u;                      /* overflow */
    if (ax > 0x7f800000u) r = 0x7e00u | ((ax >> 13) & 0x3ffu); /* nan stays nan */
    return (uint16_t)(r | sgn);
}

static inline float gm_bf16_to_float(uint16_t b) { return gm_u2f((uint32_t)b << 16); }

static inline uint16_t gm_float_to_bf16(float f)
{
    uint32_t u = gm_f2u(f);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    if ((u & 0x7fffffffu) > 0x7f800000u) r = (u >> 16) | 0x40u; /* quiet nan */
    return (uint16_t)r;
}

/* Element kinds handled by the float path. */
enum { GM_K_F32 = 0, GM_K_F16 = 1, GM_K_BF16 = 2, GM_K_F64 = 3 };

/* ------------------------------------------------------------------------ */
/* Micro-kernels                                                             */
/* ------------------------------------------------------------------------ */
/* c[i*ldc + j] (=|+=) sum_k a[k*MR + i] * b[k*NR + j] for an MR x NR tile.
 * a, b: packed panels, BS elements per k in b.  c: unit column stride.  Each
 * element is accumulated in k order starting from zero, then stored (first
 * K block) or added to c. */
#define GM_DEFINE_KERNEL(NAME, T, VT, VL, MR, NV, BS)                              \
    static void NAME(int64_t kc, const T *restrict a, const T *restrict b,          \
                     T *restrict c, int64_t ldc, int first)                         \
    {                                                                               \
        VT acc[MR][NV];                                                             \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                       \
            _Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)                    \
                acc[i][j] = (VT){0};                                                \
        for (int64_t k = 0; k < kc; k++) {                                          \
            VT bv[NV];                                                              \
            _Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)                    \
                memcpy(&bv[j], b + j * VL, sizeof(VT));                            \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                 \
                T s = a[i];                                                         \
                _Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)                \
                    acc[i][j] += s * bv[j];                                         \
            }                                                                       \
            a += MR;                                                                \
            b += BS;                                                                \
        }                                                                           \
        if (first) {                                                                \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                   \
                _Pragma("GCC unroll 8") for (int j = 0; j < NV; j++)                \
                    memcpy(c + i * ldc + j * VL, &acc[i][j], sizeof(VT));           \
        } else {                                                                    \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                   \
                _Pragma("GCC unroll 8") for (int j = 0; j < NV; j++) {              \
                    VT t;                                                           \
                    memcpy(&t, c + i * ldc + j * VL, sizeof(VT));                   \
                    t += acc[i][j];                                                 \
                    memcpy(c + i * ldc + j * VL, &t, sizeof(VT));                   \
                }                                                                   \
        }                                                                           \
    }

GM_DEFINE_KERNEL(gm_kern_f, float, gm_vf, GM_VLF, GM_MR_F, GM_NV_F, GM_NR_F)
GM_DEFINE_KERNEL(gm_kern_d, double, gm_vd, GM_VLD, GM_MR_D, GM_NV_D, GM_NR_D)
/* Same tile with only the first vector of each packed B row: for the last
 * column panel when it is at most one vector wide (half the work). */
GM_DEFINE_KERNEL(gm_kern1_f, float, gm_vf, GM_VLF, GM_MR_F, 1, GM_NR_F)
GM_DEFINE_KERNEL(gm_kern1_d, double, gm_vd, GM_VLD, GM_MR_D, 1, GM_NR_D)

/* ------------------------------------------------------------------------ */
/* Packing                                                                   */
/* ------------------------------------------------------------------------ */
/* Load element i of a strided source of the given kind, widened to T. */
static inline float gm_ld_f(int kind, const void *p, int64_t i)
{
    if (kind == GM_K_F32) return ((const float *)p)[i];
    if (kind == GM_K_F16) return gm_half_to_float(((const uint16_t *)p)[i]);
    return gm_bf16_to_float(((const uint16_t *)p)[i]);
}

/* Pack an mc x kc block of A (strides sm, sk) into MR-row micro-panels:
 * dst[p*kc*MR + k*MR + i] = A[(p*MR + i)*sm + k*sk], rows past mc are zero.
 * KIND is a compile-time constant in every instantiation, so the switch in
 * the loader folds away. */
#define GM_DEFINE_PACK(NAME_A, NAME_B, T, MR, NR, LOADER, KIND)                     \
    static void NAME_A(const void *A, int64_t sm, int64_t sk, int64_t mc,           \
                       int64_t kc, T *restrict dst)                                 \
    {                                                                               \
        for (int64_t ir = 0; ir < mc; ir += MR) {                                   \
            int64_t mr = GM_MIN(MR, mc - ir);                                       \
            int64_t o = ir * sm;                                                    \
            if (mr == MR && sm == 1) {                                              \
                for (int64_t k = 0; k < kc; k++)                                    \
                    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)           \
                        dst[k * MR + i] = LOADER(KIND, A, o + k * sk + i);          \
            } else if (mr == MR) {                                                  \
                for (int64_t k = 0; k < kc; k++)                                    \
                    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)           \
                        dst[k * MR + i] = LOADER(KIND, A, o + k * sk + i * sm);     \
            } else {                                                                \
                for (int64_t k = 0; k < kc; k++) {                                  \
                    int i = 0;                                                      \
                    for (; i < mr; i++)                                             \
                        dst[k * MR + i] = LOADER(KIND, A, o + k * sk + i * sm);     \
                    for (; i < MR; i++) dst[k * MR + i] = 0;                        \
                }                                                                   \
            }                                                                       \
            dst += kc * MR;                                                         \
        }                                                                           \
    }                                                                               \
    static void NAME_B(const void *B, int64_t sk, int64_t sn, int64_t kc,           \
                       int64_t nc, T *restrict dst)                                 \
    {                                                                               \
        for (int64_t jr = 0; jr < nc; jr += NR) {                                   \
            int64_t nr = GM_MIN(NR, nc - jr);                                       \
            int64_t o = jr * sn;                                                    \
            if (nr == NR && sn == 1) {                                              \
                for (int64_t k = 0; k < kc; k++)                                    \
                    _Pragma("GCC unroll 4") for (int j = 0; j < NR; j++)            \
                        dst[k * NR + j] = LOADER(KIND, B, o + k * sk + j);          \
            } else if (nr == NR && (sk == 1 || sk == -1)) {                         \
                /* columns contiguous in k: walk each column, scatter by NR */      \
                for (int j = 0; j < NR; j++)                                        \
                    for (int64_t k = 0; k < kc; k++)                                \
                        dst[k * NR + j] = LOADER(KIND, B, o + k * sk + j * sn);     \
            } else if (nr == NR) {                                                  \
                for (int64_t k = 0; k < kc; k++)                                    \
                    _Pragma("GCC unroll 4") for (int j = 0; j < NR; j++)            \
                        dst[k * NR + j] = LOADER(KIND, B, o + k * sk + j * sn);     \
            } else {                                                                \
                for (int64_t k = 0; k < kc; k++) {                                  \
                    int j = 0;                                                      \
                    for (; j < nr; j++)                                             \
                        dst[k * NR + j] = LOADER(KIND, B, o + k * sk + j * sn);     \
                    for (; j < NR; j++) dst[k * NR + j] = 0;                        \
                }                                                                   \
            }                                                                       \
            dst += kc * NR;                                                         \
        }                                                                           \
    }

#define GM_LD_D(kind, p, i) (((const double *)(p))[i])
GM_DEFINE_PACK(gm_packA_f32, gm_packB_f32, float, GM_MR_F, GM_NR_F, gm_ld_f, GM_K_F32)
GM_DEFINE_PACK(gm_packA_f16, gm_packB_f16, float, GM_MR_F, GM_NR_F, gm_ld_f, GM_K_F16)
GM_DEFINE_PACK(gm_packA_bf16, gm_packB_bf16, float, GM_MR_F, GM_NR_F, gm_ld_f, GM_K_BF16)
GM_DEFINE_PACK(gm_packA_f64, gm_packB_f64, double, GM_MR_D, GM_NR_D, GM_LD_D, GM_K_F64)

/* ------------------------------------------------------------------------ */
/* Blocking helpers                                                          */
/* ------------------------------------------------------------------------ */
/* Split n into ceil(n/blk) nearly equal blocks, each a multiple of unit. */
static int64_t gm_even_block(int64_t n, int64_t blk, int64_t unit)
{
    if (n <= blk) return n;
    int64_t nb = (n + blk - 1) / blk;
    int64_t b = (n + nb - 1) / nb;
    b = (b + unit - 1) / unit * unit;
    return GM_MIN(b, blk);
}

/* An epilogue: called once per finished rectangle (C, rows, cols, row and column strides in
 * elements) of the result, each element of C in exactly one call, from the thread that
 * computed it (a captured step's fused elementwise ops on the product: tensor/cpu/fused.py). */
typedef void (*gm_epilogue)(const void *ctx, char *C, int64_t M, int64_t N, int64_t sCm, int64_t sCn);

/* Geometry of one task: a rectangle of one C matrix. */
typedef struct {
    const char *A, *B;
    char *C;
    int64_t M, N, K;
    int64_t sAm, sAk, sBk, sBn, sCm, sCn; /* elements */
    /* gemm_add: C = alpha * (A @ B) + beta * D (dk: GM_D_*); D addresses the task's [0, 0] */
    const char *D;
    int64_t sDm, sDn;
    int dk;
    double alpha, beta;
} gm_task;

/* What a gemm_add adds: nothing (a plain product), D of C's dtype, D of float32, or only the
 * scaling by alpha (beta 0: D is not read) */
enum { GM_D_NONE = 0, GM_D_SAME = 1, GM_D_F32 = 2, GM_D_SCALE = 3 };
#define GM_D_READ(t) ((t)->dk == GM_D_SAME || (t)->dk == GM_D_F32)
/* x is rounded to its type here (no fused multiply-add across this point: alpha * P and
 * beta * D are rounded apart, as the separate ops and PyTorch's opmath code round them) */
#define GM_ROUNDED(x) __asm__("" : "+m"(x))

/* C[i, j] of a 16-bit gemm_add before its one rounding, from the float32 sum v: alpha * v +
 * beta * D[i, j] in float32 (kind: C's, GM_K_*) */
static inline float gm_fin_f(const gm_task *t, int kind, int64_t i, int64_t j, float v)
{
    const float al = (float)t->alpha, be = (float)t->beta;
    float x = al == 1.0f ? v : al == 0.0f ? 0.0f : al * v;
    if (GM_D_READ(t)) {
        const int64_t o = i * t->sDm + j * t->sDn;
        float d = t->dk == GM_D_F32 ? ((const float *)t->D)[o] : gm_ld_f(kind, t->D, o);
        if (be != 1.0f) { d *= be; GM_ROUNDED(d); }
        if (al != 1.0f) GM_ROUNDED(x);
        x += d;
    }
    return x;
}
#define GM_FIN_N(t, i, j, v) (v)   /* float32 / float64: gm_epi adds after the product */
#define GM_FIN_H(t, i, j, v) ((t)->dk ? gm_fin_f(t, GM_K_F16, i, j, v) : (v))
#define GM_FIN_B(t, i, j, v) ((t)->dk ? gm_fin_f(t, GM_K_BF16, i, j, v) : (v))
/* FIN over n float32 values w of row i from column j0, in place (16-bit gemm_add only: the
 * plain store loops after it stay as they are) */
#define GM_FIN_ROW(FIN, NATIVE, t, i, j0, w, n)                                      \
    do {                                                                            \
        if (!(NATIVE) && (t)->dk)                                                   \
            for (int64_t j_ = 0; j_ < (n); j_++) (w)[j_] = FIN(t, i, (j0) + j_, (w)[j_]); \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Float32 / float64 blocked driver (direct accumulation into C)             */
/* ------------------------------------------------------------------------ */
#define GM_DEFINE_DRIVER(NAME, T, MR, NR, VL, KC, MC, NC, KERN, KERN1, PACKA, PACKB) \
    static void NAME(const gm_task *t, T *Ap, T *Bp)                                \
    {                                                                               \
        const int64_t M = t->M, N = t->N, K = t->K;                                 \
        const int64_t kcb = gm_even_block(K, KC, 1); /* depends on K only */        \
        const int64_t mcb = gm_even_block(M, MC, MR);                               \
        const int64_t ncb = gm_even_block(N, NC, NR);                               \
        T tile[MR * NR] __attribute__((aligned(GM_ALIGN)));                        \
        const T *A = (const T *)t->A, *B = (const T *)t->B;                         \
        T *C = (T *)t->C;                                                           \
        for (int64_t jc = 0; jc < N; jc += ncb) {                                   \
            int64_t nc = GM_MIN(ncb, N - jc);                                       \
            for (int64_t pc = 0; pc < K; pc += kcb) {                               \
                int64_t kc = GM_MIN(kcb, K - pc);                                   \
                int first = pc == 0;                                                \
                PACKB(B + pc * t->sBk + jc * t->sBn, t->sBk, t->sBn, kc, nc, Bp);   \
                for (int64_t ic = 0; ic < M; ic += mcb) {                           \
                    int64_t mc = GM_MIN(mcb, M - ic);                               \
                    PACKA(A + ic * t->sAm + pc * t->sAk, t->sAm, t->sAk, mc, kc,    \
                          Ap);                                                      \
                    for (int64_t jr = 0; jr < nc; jr += NR) {                       \
                        int64_t nr = GM_MIN(NR, nc - jr);                           \
                        const T *bp = Bp + jr * kc;                                 \
                        for (int64_t ir = 0; ir < mc; ir += MR) {                   \
                            int64_t mr = GM_MIN(MR, mc - ir);                       \
                            const T *ap = Ap + ir * kc;                             \
                            T *c = C + (ic + ir) * t->sCm + (jc + jr) * t->sCn;     \
                            if (mr == MR && nr == NR && t->sCn == 1) {              \
                                KERN(kc, ap, bp, c, t->sCm, first);                 \
                            } else if (mr == MR && nr == VL && t->sCn == 1) {       \
                                KERN1(kc, ap, bp, c, t->sCm, first);                \
                            } else {                                                \
                                if (nr <= VL)                                       \
                                    KERN1(kc, ap, bp, tile, NR, 1);                 \
                                else                                                \
                                    KERN(kc, ap, bp, tile, NR, 1);                  \
                                for (int64_t i = 0; i < mr; i++) {                  \
                                    T *ci = c + i * t->sCm;                         \
                                    if (first)                                      \
                                        for (int64_t j = 0; j < nr; j++)            \
                                            ci[j * t->sCn] = tile[i * NR + j];      \
                                    else                                            \
                                        for (int64_t j = 0; j < nr; j++)            \
                                            ci[j * t->sCn] += tile[i * NR + j];     \
                                }                                                   \
                            }                                                       \
                        }                                                           \
                    }                                                               \
                }                                                                   \
            }                                                                       \
        }                                                                           \
    }

GM_DEFINE_DRIVER(gm_drive_f32, float, GM_MR_F, GM_NR_F, GM_VLF, GM_KC_F, GM_MC_F, GM_NC_F,
                 gm_kern_f, gm_kern1_f, gm_packA_f32, gm_packB_f32)
GM_DEFINE_DRIVER(gm_drive_f64, double, GM_MR_D, GM_NR_D, GM_VLD, GM_KC_D, GM_MC_D, GM_NC_D,
                 gm_kern_d, gm_kern1_d, gm_packA_f64, gm_packB_f64)

/* ------------------------------------------------------------------------ */
/* 16-bit float driver: float32 accumulation in a workspace                  */
/* ------------------------------------------------------------------------ */
/* B for the whole depth K of an nc-column slab is packed once (capped so the
 * slab stays a few MiB), then for each MC block of rows all K blocks are
 * accumulated into the float workspace W (mc x nc) before one rounding store.
 * The K blocking (and hence the summation order) is the same as float32. */
#define GM_H_BSLAB (1 << 20) /* floats in the packed B slab */

static int64_t gm_half_nc(int64_t K)
{
    int64_t nc = GM_H_BSLAB / GM_MAX(K, 1);
    nc = nc / GM_NR_F * GM_NR_F;
    return GM_MAX(GM_NR_F, GM_MIN(nc, GM_NC_F));
}

static void gm_drive_half(const gm_task *t, int kind, float *Ap, float *Bp, float *W)
{
    const int64_t M = t->M, N = t->N, K = t->K;
    const int64_t MR = GM_MR_F, NR = GM_NR_F;
    const int64_t kcb = gm_even_block(K, GM_KC_F, 1);
    const int64_t mcb = gm_even_block(M, GM_MC_F, MR);
    const int64_t ncb = gm_even_block(N, gm_half_nc(K), NR);
    float tile[GM_MR_F * GM_NR_F] __attribute__((aligned(GM_ALIGN)));
    const uint16_t *A = (const uint16_t *)t->A, *B = (const uint16_t *)t->B;
    uint16_t *C = (uint16_t *)t->C;
    for (int64_t jc = 0; jc < N; jc += ncb) {
        int64_t nc = GM_MIN(ncb, N - jc);
        int64_t ncr = (nc + NR - 1) / NR * NR; /* padded width of a K block */
        for (int64_t pc = 0; pc < K; pc += kcb) {
            int64_t kc = GM_MIN(kcb, K - pc);
            const uint16_t *b = B + pc * t->sBk + jc * t->sBn;
            if (kind == GM_K_F16)
                gm_packB_f16(b, t->sBk, t->sBn, kc, nc, Bp + pc * ncr);
            else
                gm_packB_bf16(b, t->sBk, t->sBn, kc, nc, Bp + pc * ncr);
        }
        for (int64_t ic = 0; ic < M; ic += mcb) {
            int64_t mc = GM_MIN(mcb, M - ic);
            for (int64_t pc = 0; pc < K; pc += kcb) {
                int64_t kc = GM_MIN(kcb, K - pc);
                int first = pc == 0;
                const uint16_t *a = A + ic * t->sAm + pc * t->sAk;
                if (kind == GM_K_F16)
                    gm_packA_f16(a, t->sAm, t->sAk, mc, kc, Ap);
                else
                    gm_packA_bf16(a, t->sAm, t->sAk, mc, kc, Ap);
                const float *Bk = Bp + pc * ncr;
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    int64_t nr = GM_MIN(NR, nc - jr);
                    const float *bp = Bk + jr * kc;
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        int64_t mr = GM_MIN(MR, mc - ir);
                        const float *ap = Ap + ir * kc;
                        float *w = W + ir * ncr + jr;
                        if (mr == MR) { /* W rows are padded to whole panels */
                            if (nr <= GM_VLF)
                                gm_kern1_f(kc, ap, bp, w, ncr, first);
                            else
                                gm_kern_f(kc, ap, bp, w, ncr, first);
                        } else {
                            if (nr <= GM_VLF)
                                gm_kern1_f(kc, ap, bp, tile, NR, 1);
                            else
                                gm_kern_f(kc, ap, bp, tile, NR, 1);
                            for (int64_t i = 0; i < mr; i++)
                                for (int64_t j = 0; j < nr; j++)
                                    w[i * ncr + j] = first ? tile[i * NR + j]
                                                           : w[i * ncr + j] + tile[i * NR + j];
                        }
                    }
                }
            }
            /* round the finished block once (a gemm_add's terms added first) */
            for (int64_t i = 0; i < mc; i++) {
                uint16_t *c = C + (ic + i) * t->sCm + jc * t->sCn;
                float *w = W + i * ncr;
                if (t->dk)
                    for (int64_t j = 0; j < nc; j++) w[j] = gm_fin_f(t, kind, ic + i, jc + j, w[j]);
                if (kind == GM_K_F16) {
                    if (t->sCn == 1)
                        for (int64_t j = 0; j < nc; j++) c[j] = gm_float_to_half(w[j]);
                    else
                        for (int64_t j = 0; j < nc; j++) c[j * t->sCn] = gm_float_to_half(w[j]);
                } else {
                    if (t->sCn == 1)
                        for (int64_t j = 0; j < nc; j++) c[j] = gm_float_to_bf16(w[j]);
                    else
                        for (int64_t j = 0; j < nc; j++) c[j * t->sCn] = gm_float_to_bf16(w[j]);
                }
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* bfloat16 on AMX tiles                                                     */
/* ------------------------------------------------------------------------ */
/* Where the compiler targets AMX-BF16 (-march=native on a CPU that has it) and the kernel lets
 * the process use the tile registers (arch_prctl, asked once; refused: the float32 path), a
 * bfloat16 product runs on the tile unit (STRIDEX_AMX=0 turns it off): TDPBF16PS multiplies a 16 x 32 block of A by a
 * 32 x 16 block of B into a 16 x 16 float32 tile, about eight times the multiply-adds per cycle
 * of AVX-512 FMAs. The micro-tile is 32 x 32 of C (four accumulator tiles, two of A, two of
 * B); A panels are packed row-major 32 rows at a time and B panels in the tile unit's pair
 * layout (two consecutive k of a column in each 32-bit lane), both zero-padded to whole
 * tiles; K blocks (their order depends on K only) are summed in a float32 workspace rounded
 * once, as gm_drive_half. The rounding differs from the widened float32 path (the unit sums
 * pairs of products, and treats bfloat16 subnormals as zero), so a machine without AMX gives
 * results within float32 rounding of these, not the same bits. */
#if defined(__AMX_BF16__) && defined(__AMX_TILE__) && defined(__linux__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define GM_AMX 1
#define GM_AT 32          /* the micro-tile: GM_AT x GM_AT of C */
#define GM_AKC 512        /* K block (a multiple of 32) */
#define GM_AMC 128        /* rows of A per block (a multiple of GM_AT) */

static int gm_amx_state = -1;   /* -1: not asked yet, 0: refused, 1: granted */

static int gm_amx_ok(void)
{
    int s = __atomic_load_n(&gm_amx_state, __ATOMIC_ACQUIRE);
    if (s < 0) {   /* ARCH_REQ_XCOMP_PERM (0x1023) for XFEATURE_XTILEDATA (18) */
        const char *env = getenv("STRIDEX_AMX");   /* STRIDEX_AMX=0: the float32 path */
        s = !(env && env[0] == '0') && syscall(SYS_arch_prctl, 0x1023, 18) == 0;
        __atomic_store_n(&gm_amx_state, s, __ATOMIC_RELEASE);
    }
    return s;
}

typedef struct {
    uint8_t palette, start;
    uint8_t pad[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) gm_tilecfg;

static void gm_amx_config(void)
{
    gm_tilecfg c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int i = 0; i < 8; i++) { c.rows[i] = 16; c.colsb[i] = 64; }
    _tile_loadconfig(&c);
}

static int64_t gm_round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* dst[i*kcp + k] = A[i, k] for GM_AT-row panels, rows past mc and k past kc zero (kcp:
 * kc rounded up to 32) */
static void gm_packA_amx(const uint16_t *A, int64_t sm, int64_t sk, int64_t mc, int64_t kc,
                         int64_t kcp, uint16_t *restrict dst)
{
    for (int64_t i = 0; i < gm_round_up(mc, GM_AT); i++) {
        uint16_t *d = dst + i * kcp;
        int64_t k = 0;
        if (i < mc) {
            const uint16_t *a = A + i * sm;
            if (sk == 1) { memcpy(d, a, (size_t)kc * 2); k = kc; }
            else for (; k < kc; k++) d[k] = a[k * sk];
        }
        for (; k < kcp; k++) d[k] = 0;
    }
}

/* dst[p*GM_AT + j] = B[2p, j] | B[2p + 1, j] << 16 for GM_AT-column panels of kcp / 2 pair
 * rows each (zero past kc and nc) */
static void gm_packB_amx(const uint16_t *B, int64_t sk, int64_t sn, int64_t kc, int64_t nc,
                         int64_t kcp, uint32_t *restrict dst)
{
    for (int64_t jr = 0; jr < nc; jr += GM_AT) {
        int64_t nr = GM_MIN(GM_AT, nc - jr);
        for (int64_t p = 0; p < kcp / 2; p++) {
            uint32_t *d = dst + p * GM_AT;
            int64_t j = 0;
            if (2 * p + 1 < kc) {
                const uint16_t *b0 = B + 2 * p * sk + jr * sn, *b1 = b0 + sk;
                if (sn == 1)
                    for (; j < nr; j++) d[j] = b0[j] | (uint32_t)b1[j] << 16;
                else
                    for (; j < nr; j++) d[j] = b0[j * sn] | (uint32_t)b1[j * sn] << 16;
            } else if (2 * p < kc) {
                const uint16_t *b0 = B + 2 * p * sk + jr * sn;
                for (; j < nr; j++) d[j] = b0[j * sn];
            }
            for (; j < GM_AT; j++) d[j] = 0;
        }
        dst += kcp / 2 * GM_AT;
    }
}

/* w (row stride ldw floats) (=|+=) the 32 x 32 product of packed panels a (32 rows of kcp)
 * and b (kcp / 2 pair rows of 32 columns) */
static void gm_kern_amx(int64_t kcp, const uint16_t *a, const uint32_t *b, float *w,
                        int64_t ldw, int first)
{
    const size_t ldb = (size_t)ldw * 4;
    if (first) {
        _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    } else {
        _tile_loadd(0, w, ldb);
        _tile_loadd(1, w + 16, ldb);
        _tile_loadd(2, w + 16 * ldw, ldb);
        _tile_loadd(3, w + 16 * ldw + 16, ldb);
    }
    for (int64_t k = 0; k < kcp; k += 32) {
        _tile_loadd(4, a + k, kcp * 2);
        _tile_loadd(5, a + 16 * kcp + k, kcp * 2);
        _tile_loadd(6, b + k / 2 * GM_AT, GM_AT * 4);
        _tile_loadd(7, b + k / 2 * GM_AT + 16, GM_AT * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, w, ldb);
    _tile_stored(1, w + 16, ldb);
    _tile_stored(2, w + 16 * ldw, ldb);
    _tile_stored(3, w + 16 * ldw + 16, ldb);
}

/* Scratch of gm_drive_amx (bytes): A block, the B slab of every K block, the workspace */
static void gm_amx_scratch(int64_t M, int64_t N, int64_t K, size_t *sa, size_t *sb, size_t *sw)
{
    int64_t kcb = gm_even_block(K, GM_AKC, 1), kcp = gm_round_up(kcb, 32);
    int64_t nkb = (K + kcb - 1) / GM_MAX(kcb, 1);
    int64_t ncr = gm_round_up(GM_MIN(N, gm_half_nc(K)), GM_AT);
    int64_t mcr = gm_round_up(GM_MIN(M, GM_AMC), GM_AT);
    *sa = (size_t)mcr * kcp * 2;
    *sb = (size_t)ncr * kcp * 2 * (size_t)GM_MAX(nkb, 1);
    *sw = (size_t)mcr * ncr * 4;
}

static void gm_drive_amx(const gm_task *t, uint16_t *Ap, uint32_t *Bp, float *W)
{
    const int64_t M = t->M, N = t->N, K = t->K;
    const int64_t kcb = gm_even_block(K, GM_AKC, 1), kcp = gm_round_up(kcb, 32);
    const int64_t mcb = gm_even_block(M, GM_AMC, GM_AT);
    const int64_t ncb = gm_even_block(N, gm_half_nc(K), GM_AT);
    const uint16_t *A = (const uint16_t *)t->A, *B = (const uint16_t *)t->B;
    uint16_t *C = (uint16_t *)t->C;
    gm_amx_config();
    for (int64_t jc = 0; jc < N; jc += ncb) {
        int64_t nc = GM_MIN(ncb, N - jc), ncr = gm_round_up(nc, GM_AT);
        for (int64_t pc = 0; pc < K; pc += kcb)
            gm_packB_amx(B + pc * t->sBk + jc * t->sBn, t->sBk, t->sBn, GM_MIN(kcb, K - pc), nc,
                         kcp, Bp + pc / kcb * (kcp / 2) * ncr);
        for (int64_t ic = 0; ic < M; ic += mcb) {
            int64_t mc = GM_MIN(mcb, M - ic);
            for (int64_t pc = 0; pc < K; pc += kcb) {
                int64_t kc = GM_MIN(kcb, K - pc), kp = gm_round_up(kc, 32);
                gm_packA_amx(A + ic * t->sAm + pc * t->sAk, t->sAm, t->sAk, mc, kc, kp, Ap);
                const uint32_t *Bk = Bp + pc / kcb * (kcp / 2) * ncr;
                for (int64_t jr = 0; jr < nc; jr += GM_AT)
                    for (int64_t ir = 0; ir < mc; ir += GM_AT)
                        gm_kern_amx(kp, Ap + ir * kp, Bk + jr * (kcp / 2), W + ir * ncr + jr, ncr,
                                    pc == 0);
            }
            for (int64_t i = 0; i < mc; i++) {   /* round the finished block once */
                uint16_t *c = C + (ic + i) * t->sCm + jc * t->sCn;
                float *w = W + i * ncr;
                GM_FIN_ROW(GM_FIN_B, 0, t, ic + i, jc, w, nc);   /* (a gemm_add's terms) */
                for (int64_t j = 0; j < nc; j++) c[j * t->sCn] = gm_float_to_bf16(w[j]);
            }
        }
    }
    _tile_release();
}
#endif

/* ------------------------------------------------------------------------ */
/* Small problems: direct loops, no packing                                  */
/* ------------------------------------------------------------------------ */
/* Integers and bool (also the fallback when scratch memory cannot be had):
 * i-k-j over a strip of GM_SJ columns of one row. */
#define GM_SJ 128 /* columns per row strip */
#define GM_DEFINE_SMALL(NAME, TE, TA, LD, ST, MAC)                                     \
    static void NAME(const gm_task *t)                                              \
    {                                                                               \
        const TE *A = (const TE *)t->A, *B = (const TE *)t->B;                      \
        TE *C = (TE *)t->C;                                                         \
        TA acc[GM_SJ];                                                              \
        for (int64_t i = 0; i < t->M; i++) {                                        \
            for (int64_t j0 = 0; j0 < t->N; j0 += GM_SJ) {                          \
                int64_t nj = GM_MIN(GM_SJ, t->N - j0);                              \
                for (int64_t j = 0; j < nj; j++) acc[j] = 0;                        \
                for (int64_t k = 0; k < t->K; k++) {                                \
                    TA a = LD(A[i * t->sAm + k * t->sAk]);                          \
                    const TE *b = B + k * t->sBk + j0 * t->sBn;                     \
                    if (t->sBn == 1)                                                \
                        for (int64_t j = 0; j < nj; j++) MAC(acc[j], a, LD(b[j]));  \
                    else                                                            \
                        for (int64_t j = 0; j < nj; j++)                            \
                            MAC(acc[j], a, LD(b[j * t->sBn]));                      \
                }                                                                   \
                TE *c = C + i * t->sCm + j0 * t->sCn;                               \
                if (t->sCn == 1)                                                    \
                    for (int64_t j = 0; j < nj; j++) c[j] = ST(acc[j]);             \
                else                                                                \
                    for (int64_t j = 0; j < nj; j++) c[j * t->sCn] = ST(acc[j]);    \
            }                                                                       \
        }                                                                           \
    }

#define GM_ID(x) (x)
#define GM_MAC(acc, a, b) ((acc) += (a) * (b))
#define GM_ORAND(acc, a, b) ((acc) |= (a) & (b))
/* Floats: a register tile of GM_DR rows x GM_DV vectors read straight from
 * the strided operands (rows past M repeat the last row and are not stored;
 * columns past N are zero).  Each element: k order from zero, like the
 * blocked path's first K block. */
#ifndef GM_DR
#define GM_DR 4
#define GM_DV 2
#endif
#define GM_DEFINE_DIRECT(NAME, T, VT, VL, TE, LD, ST, NATIVE, FIN)                     \
    static void NAME(const gm_task *t)                                                 \
    {                                                                                  \
        enum { W = GM_DV * VL };                                                       \
        const TE *A = (const TE *)t->A, *B = (const TE *)t->B;                         \
        TE *C = (TE *)t->C;                                                            \
        const int64_t M = t->M, N = t->N, K = t->K;                                    \
        T tmp[W] __attribute__((aligned(GM_ALIGN)));                                   \
        T out[GM_DR][W] __attribute__((aligned(GM_ALIGN)));                            \
        for (int64_t i0 = 0; i0 < M; i0 += GM_DR) {                                    \
            const int64_t mr = GM_MIN((int64_t)GM_DR, M - i0);                         \
            const TE *ar[GM_DR];                                                       \
            for (int r = 0; r < GM_DR; r++)                                            \
                ar[r] = A + (i0 + GM_MIN((int64_t)r, mr - 1)) * t->sAm;                \
            for (int64_t j0 = 0; j0 < N; j0 += W) {                                    \
                const int64_t nw = GM_MIN((int64_t)W, N - j0);                         \
                const TE *b = B + j0 * t->sBn;                                         \
                /* unit-stride B at least one vector wide: load straight from B; \
                 * a partial last vector is shifted left to end at column nw-1, \
                 * recomputing a few columns (bitwise the same values) */         \
                const int direct = NATIVE && nw >= VL && t->sBn == 1;                  \
                int64_t off[GM_DV];                                                    \
                for (int u = 0; u < GM_DV; u++)                                        \
                    off[u] = u * VL + VL <= nw ? u * VL : (direct ? nw - VL : u * VL); \
                VT acc[GM_DR][GM_DV];                                                  \
                _Pragma("GCC unroll 4") for (int r = 0; r < GM_DR; r++)                \
                    _Pragma("GCC unroll 4") for (int u = 0; u < GM_DV; u++)            \
                        acc[r][u] = (VT){0};                                           \
                for (int j = 0; j < W; j++) tmp[j] = 0;                                \
                for (int64_t k = 0; k < K; k++) {                                      \
                    const TE *bk = b + k * t->sBk;                                     \
                    VT bv[GM_DV];                                                      \
                    if (direct) {                                                      \
                        _Pragma("GCC unroll 4") for (int u = 0; u < GM_DV; u++)        \
                            memcpy(&bv[u], bk + off[u], sizeof(VT));                   \
                    } else {                                                           \
                        for (int64_t j = 0; j < nw; j++) tmp[j] = LD(bk[j * t->sBn]);  \
                        _Pragma("GCC unroll 4") for (int u = 0; u < GM_DV; u++)        \
                            memcpy(&bv[u], tmp + u * VL, sizeof(VT));                  \
                    }                                                                  \
                    _Pragma("GCC unroll 4") for (int r = 0; r < GM_DR; r++) {          \
                        T a = LD(ar[r][k * t->sAk]);                                   \
                        _Pragma("GCC unroll 4") for (int u = 0; u < GM_DV; u++)        \
                            acc[r][u] += a * bv[u];                                    \
                    }                                                                  \
                }                                                                      \
                _Pragma("GCC unroll 4") for (int r = 0; r < GM_DR; r++)                \
                    _Pragma("GCC unroll 4") for (int u = 0; u < GM_DV; u++)            \
                        memcpy(out[r] + off[u], &acc[r][u], sizeof(VT));               \
                for (int64_t r = 0; r < mr; r++) {                                     \
                    TE *c = C + (i0 + r) * t->sCm + j0 * t->sCn;                       \
                    GM_FIN_ROW(FIN, NATIVE, t, i0 + r, j0, out[r], nw);                \
                    for (int64_t j = 0; j < nw; j++) c[j * t->sCn] = ST(out[r][j]);    \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    }

GM_DEFINE_DIRECT(gm_small_f32, float, gm_vf, GM_VLF, float, GM_ID, GM_ID, 1, GM_FIN_N)
GM_DEFINE_DIRECT(gm_small_f64, double, gm_vd, GM_VLD, double, GM_ID, GM_ID, 1, GM_FIN_N)
GM_DEFINE_DIRECT(gm_small_f16, float, gm_vf, GM_VLF, uint16_t, gm_half_to_float, gm_float_to_half, 0,
                 GM_FIN_H)
GM_DEFINE_DIRECT(gm_small_bf16, float, gm_vf, GM_VLF, uint16_t, gm_bf16_to_float, gm_float_to_bf16, 0,
                 GM_FIN_B)
/* integers: wrapping arithmetic in a wider unsigned type, truncated on store */
#define GM_U32(x) ((uint32_t)(x))
#define GM_U64(x) ((uint64_t)(x))
#define GM_TO_I8(x) ((int8_t)(x))
#define GM_TO_U8(x) ((uint8_t)(x))
#define GM_TO_I16(x) ((int16_t)(x))
#define GM_TO_I32(x) ((int32_t)(x))
#define GM_TO_I64(x) ((int64_t)(x))
GM_DEFINE_SMALL(gm_small_i8, int8_t, uint32_t, GM_U32, GM_TO_I8, GM_MAC)
GM_DEFINE_SMALL(gm_small_u8, uint8_t, uint32_t, GM_U32, GM_TO_U8, GM_MAC)
GM_DEFINE_SMALL(gm_small_i16, int16_t, uint32_t, GM_U32, GM_TO_I16, GM_MAC)
GM_DEFINE_SMALL(gm_small_i32, int32_t, uint32_t, GM_U32, GM_TO_I32, GM_MAC)
GM_DEFINE_SMALL(gm_small_i64, int64_t, uint64_t, GM_U64, GM_TO_I64, GM_MAC)
/* bool: a AND b is a*b on 0/1 values, OR-accumulate */
#define GM_B01(x) ((unsigned)((x) != 0))
#define GM_TO_B8(x) ((uint8_t)((x) != 0))
GM_DEFINE_SMALL(gm_small_b8, uint8_t, unsigned, GM_B01, GM_TO_B8, GM_ORAND)

/* ------------------------------------------------------------------------ */
/* Thin problems (matrix-vector like): at most GM_TMT rows on one side        */
/* ------------------------------------------------------------------------ */
/* After normalisation M <= GM_TMT.  The m x K operand A is copied (widened)
 * into a small contiguous buffer; B is streamed once in its own layout:
 *   axpy form (B rows contiguous, sBn == 1): C[r, j:j+JW] += A[r,k] * B[k, j:j+JW],
 *     a strip of C rows kept in L1 while GM_TK rows of B stream through it
 *   dot form  (B cols contiguous, sBk == 1): C[r, j] = dot(A[r,:], B[:,j])
 * Packing B here would cost as much memory traffic as the product itself.
 * Summation order per element depends on K (and the form, fixed by the
 * strides) only. */
#define GM_TMT 4 /* rows of the thin side */
#define GM_TW 64 /* vectors per strip of C in the axpy form (in L1) */
#define GM_TK 4  /* rows of B streamed together in the axpy form */
#define GM_TJ 4  /* columns at a time in the dot form */
_Static_assert(GM_TJ == 4, "the one-column dot form (_dot1) sums four accumulators");

#define GM_DEFINE_THIN(NAME, T, VT, VL, TE, LD, ST, NATIVE, FIN)                       \
    static inline __attribute__((always_inline)) void NAME##_axpy(                     \
        const gm_task *t, const int m, const T *restrict ap, int64_t lda, const TE *B,  \
        int64_t sBk, int64_t N, int64_t K, TE *C, int64_t sCm, int64_t sCn)            \
    {                                                                                  \
        enum { JW = GM_TW * VL };                                                      \
        T out[GM_TMT][JW] __attribute__((aligned(GM_ALIGN)));                          \
        T tmp[GM_TK][VL] __attribute__((aligned(GM_ALIGN)));                           \
        for (int64_t j0 = 0; j0 < N; j0 += JW) {                                       \
            const int64_t jw = GM_MIN((int64_t)JW, N - j0);                            \
            const int64_t nv = (jw + VL - 1) / VL;                                     \
            for (int r = 0; r < m; r++)                                                \
                memset(out[r], 0, (size_t)(nv * VL) * sizeof(T));                    \
            int64_t k0 = 0;                                                            \
            /* GM_TK rows of B at a time, streamed along n */                          \
            for (; k0 + GM_TK <= K; k0 += GM_TK) {                                     \
                const TE *bq[GM_TK];                                                   \
                T aq[GM_TMT][GM_TK];                                                   \
                for (int q = 0; q < GM_TK; q++) bq[q] = B + (k0 + q) * sBk + j0;      \
                for (int r = 0; r < m; r++)                                            \
                    for (int q = 0; q < GM_TK; q++) aq[r][q] = ap[r * lda + k0 + q];   \
                for (int64_t v = 0; v < nv; v++) {                                     \
                    const int64_t j = v * VL, cnt = GM_MIN((int64_t)VL, jw - j);       \
                    VT bv[GM_TK];                                                      \
                    _Pragma("GCC unroll 8") for (int q = 0; q < GM_TK; q++) {          \
                        if (NATIVE && cnt == VL) {                                     \
                            memcpy(&bv[q], bq[q] + j, sizeof(VT));                     \
                        } else {                                                       \
                            for (int l = 0; l < VL; l++)                               \
                                tmp[q][l] = l < cnt ? LD(bq[q][j + l]) : 0;            \
                            memcpy(&bv[q], tmp[q], sizeof(VT));                        \
                        }                                                              \
                    }                                                                  \
                    _Pragma("GCC unroll 4") for (int r = 0; r < m; r++) {              \
                        VT acc;                                                        \
                        memcpy(&acc, out[r] + j, sizeof(VT));                          \
                        _Pragma("GCC unroll 8") for (int q = 0; q < GM_TK; q++)        \
                            acc += aq[r][q] * bv[q];                                   \
                        memcpy(out[r] + j, &acc, sizeof(VT));                          \
                    }                                                                  \
                }                                                                      \
            }                                                                          \
            for (; k0 < K; k0++) { /* remaining rows one at a time */                  \
                const TE *bk = B + k0 * sBk + j0;                                      \
                for (int64_t v = 0; v < nv; v++) {                                     \
                    const int64_t j = v * VL, cnt = GM_MIN((int64_t)VL, jw - j);       \
                    VT bv;                                                             \
                    if (NATIVE && cnt == VL) {                                         \
                        memcpy(&bv, bk + j, sizeof(VT));                               \
                    } else {                                                           \
                        for (int l = 0; l < VL; l++) tmp[0][l] = l < cnt ? LD(bk[j + l]) : 0; \
                        memcpy(&bv, tmp[0], sizeof(VT));                               \
                    }                                                                  \
                    _Pragma("GCC unroll 4") for (int r = 0; r < m; r++)                \
                        {                                                              \
                            VT o;                                                      \
                            memcpy(&o, out[r] + j, sizeof(VT));                        \
                            o += ap[r * lda + k0] * bv;                                \
                            memcpy(out[r] + j, &o, sizeof(VT));                        \
                        }                                                              \
                }                                                                      \
            }                                                                          \
            for (int r = 0; r < m; r++) {                                              \
                TE *c = C + r * sCm + j0 * sCn;                                        \
                GM_FIN_ROW(FIN, NATIVE, t, r, j0, out[r], jw);                         \
                if (sCn == 1)                                                          \
                    for (int64_t j = 0; j < jw; j++) c[j] = ST(out[r][j]);             \
                else                                                                   \
                    for (int64_t j = 0; j < jw; j++) c[j * sCn] = ST(out[r][j]);       \
            }                                                                          \
        }                                                                              \
    }                                                                                  \
    /* one column: the GM_TJ accumulators of a row take consecutive vectors of K */    \
    static inline __attribute__((always_inline)) void NAME##_dot1(                     \
        const gm_task *t, const int m, const T *restrict ap, int64_t lda, const TE *b,  \
        int64_t K, TE *C, int64_t sCm, int64_t jc)                                     \
    {                                                                                  \
        enum { KW = GM_TJ * VL };                                                      \
        T tmp[GM_TJ][VL] __attribute__((aligned(GM_ALIGN)));                           \
        const int64_t kw = K / KW * KW;                                                \
        VT acc[GM_TMT][GM_TJ];                                                         \
        _Pragma("GCC unroll 4") for (int r = 0; r < m; r++)                            \
            _Pragma("GCC unroll 4") for (int c = 0; c < GM_TJ; c++)                    \
                acc[r][c] = (VT){0};                                                   \
        for (int64_t k = 0; k < kw; k += KW) {                                         \
            VT bv[GM_TJ], av;                                                          \
            _Pragma("GCC unroll 4") for (int c = 0; c < GM_TJ; c++) {                  \
                if (NATIVE) {                                                          \
                    memcpy(&bv[c], b + k + c * VL, sizeof(VT));                        \
                } else {                                                               \
                    for (int l = 0; l < VL; l++) tmp[c][l] = LD(b[k + c * VL + l]);    \
                    memcpy(&bv[c], tmp[c], sizeof(VT));                                \
                }                                                                      \
            }                                                                          \
            _Pragma("GCC unroll 4") for (int r = 0; r < m; r++)                        \
                _Pragma("GCC unroll 4") for (int c = 0; c < GM_TJ; c++) {              \
                    memcpy(&av, ap + r * lda + k + c * VL, sizeof(VT));                \
                    acc[r][c] += av * bv[c];                                           \
                }                                                                      \
        }                                                                              \
        for (int r = 0; r < m; r++) {                                                  \
            VT v = (acc[r][0] + acc[r][1]) + (acc[r][2] + acc[r][3]);                  \
            T s = 0;                                                                   \
            for (int l = 0; l < VL; l++) s += v[l];                                    \
            for (int64_t k = kw; k < K; k++) s += ap[r * lda + k] * LD(b[k]);          \
            C[r * sCm] = ST(FIN(t, r, jc, s));                                         \
        }                                                                              \
    }                                                                                  \
    static inline __attribute__((always_inline)) void NAME##_dot(                      \
        const gm_task *t, const int m, const T *restrict ap, int64_t lda, const TE *B,  \
        int64_t sBn, int64_t N, int64_t K, TE *C, int64_t sCm, int64_t sCn)            \
    {                                                                                  \
        T tmp[GM_TJ][VL] __attribute__((aligned(GM_ALIGN)));                           \
        const int64_t kv = K / VL * VL;                                                \
        for (int64_t j0 = 0; j0 < N; j0 += GM_TJ) {                                    \
            int64_t jn = GM_MIN((int64_t)GM_TJ, N - j0);                               \
            if (jn == 1) {                                                             \
                NAME##_dot1(t, m, ap, lda, B + j0 * sBn, K, C + j0 * sCn, sCm, j0);    \
                continue;                                                              \
            }                                                                          \
            const TE *bc[GM_TJ];                                                       \
            for (int c = 0; c < GM_TJ; c++) /* surplus columns repeat the last */      \
                bc[c] = B + (j0 + GM_MIN((int64_t)c, jn - 1)) * sBn;                   \
            VT acc[GM_TMT][GM_TJ];                                                     \
            _Pragma("GCC unroll 4") for (int r = 0; r < m; r++)                        \
                _Pragma("GCC unroll 4") for (int c = 0; c < GM_TJ; c++)                \
                    acc[r][c] = (VT){0};                                               \
            for (int64_t k = 0; k < kv; k += VL) {                                     \
                VT bv[GM_TJ], av[GM_TMT];                                              \
                _Pragma("GCC unroll 4") for (int c = 0; c < GM_TJ; c++) {              \
                    if (NATIVE) {                                                      \
                        memcpy(&bv[c], bc[c] + k, sizeof(VT));                         \
                    } else {                                                           \
                        for (int l = 0; l < VL; l++) tmp[c][l] = LD(bc[c][k + l]);     \
                        memcpy(&bv[c], tmp[c], sizeof(VT));                            \
                    }                                                                  \
                }                                                                      \
                _Pragma("GCC unroll 4") for (int r = 0; r < m; r++) {                  \
                    memcpy(&av[r], ap + r * lda + k, sizeof(VT));                      \
                    _Pragma("GCC unroll 4") for (int c = 0; c < GM_TJ; c++)            \
                        acc[r][c] += av[r] * bv[c];                                    \
                }                                                                      \
            }                                                                          \
            for (int r = 0; r < m; r++)                                                \
                for (int c = 0; c < jn; c++) {                                         \
                    T s = 0;                                                           \
                    for (int l = 0; l < VL; l++) s += acc[r][c][l];                    \
                    for (int64_t k = kv; k < K; k++)                                   \
                        s += ap[r * lda + k] * LD(bc[c][k]);                           \
                    C[r * sCm + (j0 + c) * sCn] = ST(FIN(t, r, j0 + c, s));            \
                }                                                                      \
        }                                                                              \
    }                                                                                  \
    /* m x K of A (strides sAm, sAk) -> ap (NULL: A's native rows are read in place, see \
     * gm_scratch), then the form chosen by B's strides */                             \
    static void NAME(const gm_task *t, T *ap, int dot)                                 \
    {                                                                                  \
        const TE *A = (const TE *)t->A, *B = (const TE *)t->B;                         \
        TE *C = (TE *)t->C;                                                            \
        const int64_t K = t->K;                                                        \
        const int m = (int)t->M;                                                       \
        const T *a = ap;                                                               \
        int64_t lda = K;                                                               \
        if (!ap) {                                                                     \
            a = (const T *)(const void *)A;                                            \
            lda = t->sAm;                                                              \
        } else {                                                                       \
            for (int r = 0; r < m; r++)                                                \
                for (int64_t k = 0; k < K; k++) ap[r * K + k] = LD(A[r * t->sAm + k * t->sAk]); \
        }                                                                              \
        if (dot) {                                                                     \
            switch (m) {                                                               \
            case 1: NAME##_dot(t, 1, a, lda, B, t->sBn, t->N, K, C, t->sCm, t->sCn); break;  \
            case 2: NAME##_dot(t, 2, a, lda, B, t->sBn, t->N, K, C, t->sCm, t->sCn); break;  \
            case 3: NAME##_dot(t, 3, a, lda, B, t->sBn, t->N, K, C, t->sCm, t->sCn); break;  \
            default: NAME##_dot(t, 4, a, lda, B, t->sBn, t->N, K, C, t->sCm, t->sCn); break; \
            }                                                                          \
        } else {                                                                       \
            switch (m) {                                                               \
            case 1: NAME##_axpy(t, 1, a, lda, B, t->sBk, t->N, K, C, t->sCm, t->sCn); break;  \
            case 2: NAME##_axpy(t, 2, a, lda, B, t->sBk, t->N, K, C, t->sCm, t->sCn); break;  \
            case 3: NAME##_axpy(t, 3, a, lda, B, t->sBk, t->N, K, C, t->sCm, t->sCn); break;  \
            default: NAME##_axpy(t, 4, a, lda, B, t->sBk, t->N, K, C, t->sCm, t->sCn); break; \
            }                                                                          \
        }                                                                              \
    }

GM_DEFINE_THIN(gm_thin_f32, float, gm_vf, GM_VLF, float, GM_ID, GM_ID, 1, GM_FIN_N)
GM_DEFINE_THIN(gm_thin_f64, double, gm_vd, GM_VLD, double, GM_ID, GM_ID, 1, GM_FIN_N)
GM_DEFINE_THIN(gm_thin_f16, float, gm_vf, GM_VLF, uint16_t, gm_half_to_float, gm_float_to_half, 0,
               GM_FIN_H)
GM_DEFINE_THIN(gm_thin_bf16, float, gm_vf, GM_VLF, uint16_t, gm_bf16_to_float, gm_float_to_bf16, 0,
               GM_FIN_B)

/* ------------------------------------------------------------------------ */
/* Integer and bool kernels                                                  */
/* ------------------------------------------------------------------------ */
/* Block of B packed into the accumulation type: KCI x NCI. */
#define GM_KCI 256
#define GM_NCI 512

/* Integer: products and sums wrap modulo 2^bits; computing them in a wider
 * unsigned type and truncating on store gives the same bits.  Partial sums
 * between K blocks are kept in C itself (truncation commutes with +). */
#define GM_DEFINE_INT(NAME, TE, TA)                                                 \
    static void NAME(const gm_task *t, TA *Bp)                                      \
    {                                                                               \
        const TE *A = (const TE *)t->A, *B = (const TE *)t->B;                      \
        TE *C = (TE *)t->C;                                                         \
        TA acc[GM_NCI];                                                             \
        for (int64_t jc = 0; jc < t->N; jc += GM_NCI) {                             \
            int64_t nc = GM_MIN(GM_NCI, t->N - jc);                                 \
            for (int64_t pc = 0; pc < t->K; pc += GM_KCI) {                         \
                int64_t kc = GM_MIN(GM_KCI, t->K - pc);                             \
                for (int64_t k = 0; k < kc; k++) {                                  \
                    const TE *b = B + (pc + k) * t->sBk + jc * t->sBn;              \
                    TA *d = Bp + k * nc;                                            \
                    if (t->sBn == 1)                                                \
                        for (int64_t j = 0; j < nc; j++) d[j] = (TA)b[j];           \
                    else                                                            \
                        for (int64_t j = 0; j < nc; j++) d[j] = (TA)b[j * t->sBn];  \
                }                                                                   \
                for (int64_t i = 0; i < t->M; i++) {                                \
                    TE *c = C + i * t->sCm + jc * t->sCn;                           \
                    const TE *a = A + i * t->sAm + pc * t->sAk;                     \
                    if (pc == 0)                                                    \
                        for (int64_t j = 0; j < nc; j++) acc[j] = 0;                \
                    else                                                            \
                        for (int64_t j = 0; j < nc; j++) acc[j] = (TA)c[j * t->sCn];\
                    for (int64_t k = 0; k < kc; k++) {                              \
                        TA av = (TA)a[k * t->sAk];                                  \
                        const TA *d = Bp + k * nc;                                  \
                        for (int64_t j = 0; j < nc; j++) acc[j] += av * d[j];       \
                    }                                                               \
                    if (t->sCn == 1)                                                \
                        for (int64_t j = 0; j < nc; j++) c[j] = (TE)acc[j];         \
                    else                                                            \
                        for (int64_t j = 0; j < nc; j++) c[j * t->sCn] = (TE)acc[j];\
                }                                                                   \
            }                                                                       \
        }                                                                           \
    }

GM_DEFINE_INT(gm_int_i8, int8_t, uint32_t)
GM_DEFINE_INT(gm_int_u8, uint8_t, uint32_t)
GM_DEFINE_INT(gm_int_i16, int16_t, uint32_t)
GM_DEFINE_INT(gm_int_i32, int32_t, uint32_t)
GM_DEFINE_INT(gm_int_i64, int64_t, uint64_t)

static void gm_bool(const gm_task *t, uint8_t *Bp)
{
    const uint8_t *A = (const uint8_t *)t->A, *B = (const uint8_t *)t->B;
    uint8_t *C = (uint8_t *)t->C;
    uint8_t acc[GM_NCI];
    for (int64_t jc = 0; jc < t->N; jc += GM_NCI) {
        int64_t nc = GM_MIN(GM_NCI, t->N - jc);
        for (int64_t pc = 0; pc < t->K; pc += GM_KCI) {
            int64_t kc = GM_MIN(GM_KCI, t->K - pc);
            for (int64_t k = 0; k < kc; k++) {
                const uint8_t *b = B + (pc + k) * t->sBk + jc * t->sBn;
                uint8_t *d = Bp + k * nc;
                for (int64_t j = 0; j < nc; j++) d[j] = b[j * t->sBn] != 0;
            }
            for (int64_t i = 0; i < t->M; i++) {
                uint8_t *c = C + i * t->sCm + jc * t->sCn;
                const uint8_t *a = A + i * t->sAm + pc * t->sAk;
                if (pc == 0)
                    memset(acc, 0, (size_t)nc);
                else
                    for (int64_t j = 0; j < nc; j++) acc[j] = c[j * t->sCn];
                for (int64_t k = 0; k < kc; k++) {
                    if (!a[k * t->sAk]) continue;
                    const uint8_t *d = Bp + k * nc;
                    for (int64_t j = 0; j < nc; j++) acc[j] |= d[j];
                }
                for (int64_t j = 0; j < nc; j++) c[j * t->sCn] = acc[j];
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Task decomposition and the thread team                                    */
/* ------------------------------------------------------------------------ */
enum {
    GM_F32 = GM_T_F32, GM_F64 = GM_T_F64, GM_F16 = GM_T_F16, GM_BF16 = GM_T_BF16,
    GM_I8 = GM_T_I8, GM_U8 = GM_T_U8, GM_I16 = GM_T_I16, GM_I32 = GM_T_I32, GM_I64 = GM_T_I64,
    GM_B8 = GM_T_B8
};

typedef struct {
    int type, esize;
    int64_t batch, M, N, K;
    const char *A, *B;
    char *C;
    int64_t sAb, sAm, sAk, sBb, sBk, sBn, sCb, sCm, sCn;
    int64_t mp, np, mu, nu; /* parts along M / N and their granularity */
    int thin, dot;          /* thin path, and its form */
    gm_epilogue epi;        /* run on each finished rectangle of C, or NULL */
    const void *epi_ctx;
    const char *D;          /* gemm_add's D (dk: GM_D_*), its strides in elements */
    int64_t sDb, sDm, sDn;
    int dk;
    double alpha, beta;
} gm_problem;

/* C = alpha * C + beta * D over a task's rectangle, in C's type: float32 / float64 after the
 * product, which they accumulate in C (the rounding of separate ops) */
#define GM_DEFINE_ADD(NAME, T)                                                        \
    static void NAME(const gm_task *t)                                                \
    {                                                                                 \
        const T al = (T)t->alpha, be = (T)t->beta;                                    \
        for (int64_t i = 0; i < t->M; i++)                                            \
            for (int64_t j = 0; j < t->N; j++) {                                      \
                T *c = (T *)(void *)t->C + i * t->sCm + j * t->sCn;                   \
                T x = al == 1 ? *c : al == 0 ? 0 : al * *c;                           \
                if (GM_D_READ(t)) {                                                   \
                    const int64_t o = i * t->sDm + j * t->sDn;                        \
                    T d = t->dk == GM_D_F32 ? (T)((const float *)t->D)[o]             \
                                            : ((const T *)(const void *)t->D)[o];     \
                    if (be != 1) { d *= be; GM_ROUNDED(d); }                          \
                    if (al != 1) GM_ROUNDED(x);                                       \
                    x += d;                                                           \
                }                                                                     \
                *c = x;                                                               \
            }                                                                         \
    }
GM_DEFINE_ADD(gm_add_f32, float)
GM_DEFINE_ADD(gm_add_f64, double)

/* The same for 16-bit C when K == 0 (C holds zeros): gm_fin_f's float32 value, rounded once */
static void gm_add_half(const gm_task *t, int kind)
{
    for (int64_t i = 0; i < t->M; i++)
        for (int64_t j = 0; j < t->N; j++) {
            uint16_t *c = (uint16_t *)(void *)t->C + i * t->sCm + j * t->sCn;
            float x = gm_fin_f(t, kind, i, j, gm_ld_f(kind, c, 0));
            *c = kind == GM_K_F16 ? gm_float_to_half(x) : gm_float_to_bf16(x);
        }
}

/* The epilogue of a task's rectangle of C (final values: K is never split): a gemm_add's terms
 * where the product did not add them before its rounding, then the fused ops' epilogue. */
static void gm_epi(const gm_problem *p, const gm_task *t)
{
    if (t->dk && (p->type == GM_F32 || p->type == GM_F64 || t->K == 0)) {
        switch (p->type) {
        GM_CASE(GM_F32, gm_add_f32(t))
        GM_CASE(GM_F64, gm_add_f64(t))
        GM_CASE(GM_F16, gm_add_half(t, GM_K_F16))
        GM_CASE(GM_BF16, gm_add_half(t, GM_K_BF16))
        }
    }
    if (p->epi) p->epi(p->epi_ctx, t->C, t->M, t->N, t->sCm, t->sCn);
}

/* A task's D and add terms: batch b, rows from m0, columns from n0 of the problem's */
static void gm_task_add(const gm_problem *p, int64_t b, int64_t m0, int64_t n0, gm_task *t)
{
    t->dk = p->dk;
    t->alpha = p->alpha;
    t->beta = p->beta;
    t->sDm = p->sDm;
    t->sDn = p->sDn;
    t->D = NULL;
    if (p->D && GM_D_READ(p)) {
        int64_t de = p->dk == GM_D_F32 ? 4 : p->esize;
        t->D = p->D + (b * p->sDb + m0 * p->sDm + n0 * p->sDn) * de;
    }
}

/* Rows [m0, m1) of part i of mp, cut at multiples of unit. */
static void gm_part(int64_t n, int64_t parts, int64_t unit, int64_t i, int64_t *lo, int64_t *hi)
{
    int64_t nb = (n + unit - 1) / unit;
    *lo = GM_MIN(n, nb * i / parts * unit);
    *hi = GM_MIN(n, nb * (i + 1) / parts * unit);
}

/* Choose how many parts to cut each matrix into so that batch*mp*np tasks
 * keep nt threads busy; prefer cutting M (packed B slabs are then shared
 * work per thread, A blocks are not duplicated). */
static void gm_split(gm_problem *p, int nt)
{
    p->mp = p->np = 1;
    if (nt <= 1) return;
    if (p->batch % nt == 0 || p->batch >= 4 * (int64_t)nt) return;
    int64_t mb = (p->M + p->mu - 1) / p->mu, nb = (p->N + p->nu - 1) / p->nu;
    int64_t best = -1;
    for (int64_t mp = 1; mp <= nt; mp++) {
        if (nt % mp) continue;
        int64_t np = nt / mp;
        if (mp > mb || np > nb) continue;
        /* work of the largest task, in units; ties favour more M parts */
        int64_t w = ((mb + mp - 1) / mp) * ((nb + np - 1) / np);
        if (best < 0 || w <= best) {
            best = w;
            p->mp = mp;
            p->np = np;
        }
    }
    if (best < 0) { /* too small to cut nt ways: cut as much as it allows */
        p->mp = GM_MIN(mb, nt);
        p->np = 1;
    }
}

static void gm_task_of(const gm_problem *p, int64_t id, gm_task *t)
{
    int64_t per = p->mp * p->np;
    int64_t b = id / per, r = id % per;
    int64_t m0, m1, n0, n1;
    gm_part(p->M, p->mp, p->mu, r / p->np, &m0, &m1);
    gm_part(p->N, p->np, p->nu, r % p->np, &n0, &n1);
    int64_t e = p->esize;
    t->M = m1 - m0;
    t->N = n1 - n0;
    t->K = p->K;
    t->A = p->A + (b * p->sAb + m0 * p->sAm) * e;
    t->B = p->B + (b * p->sBb + n0 * p->sBn) * e;
    t->C = p->C + (b * p->sCb + m0 * p->sCm + n0 * p->sCn) * e;
    t->sAm = p->sAm; t->sAk = p->sAk;
    t->sBk = p->sBk; t->sBn = p->sBn;
    t->sCm = p->sCm; t->sCn = p->sCn;
    gm_task_add(p, b, m0, n0, t);
}

/* Bytes of per-thread scratch for any task of this problem (upper bound). */
static void gm_scratch(const gm_problem *p, size_t *sa, size_t *sb, size_t *sw)
{
    *sa = *sb = *sw = 0;
    const int64_t M = p->M, N = p->N, K = p->K;
    if (p->thin) {   /* A's rows: packed (widened), or read in place when native and contiguous */
        if ((p->type == GM_F32 || p->type == GM_F64) && p->sAk == 1) return;
        *sa = (size_t)GM_TMT * K * (p->type == GM_F64 ? sizeof(double) : sizeof(float));
        return;
    }
    switch (p->type) {
    case GM_F32: {
        int64_t kc = gm_even_block(K, GM_KC_F, 1);
        *sa = (size_t)(GM_MIN(M, GM_MC_F) + GM_MR_F) * kc * sizeof(float);
        *sb = (size_t)(GM_MIN(N, GM_NC_F) + GM_NR_F) * kc * sizeof(float);
        break;
    }
    case GM_F64: {
        int64_t kc = gm_even_block(K, GM_KC_D, 1);
        *sa = (size_t)(GM_MIN(M, GM_MC_D) + GM_MR_D) * kc * sizeof(double);
        *sb = (size_t)(GM_MIN(N, GM_NC_D) + GM_NR_D) * kc * sizeof(double);
        break;
    }
    case GM_F16:
    case GM_BF16: {
#ifdef GM_AMX
        if (p->type == GM_BF16 && gm_amx_ok()) {
            gm_amx_scratch(M, N, K, sa, sb, sw);
            break;
        }
#endif
        int64_t kc = gm_even_block(K, GM_KC_F, 1);
        int64_t nc = GM_MIN(N, gm_half_nc(K)) + GM_NR_F;
        int64_t mc = GM_MIN(M, GM_MC_F) + GM_MR_F;
        *sa = (size_t)mc * kc * sizeof(float);
        *sb = (size_t)nc * K * sizeof(float);
        *sw = (size_t)mc * nc * sizeof(float);
        break;
    }
    default: {
        size_t e = p->type == GM_I64 ? 8 : p->type == GM_B8 ? 1 : 4;
        *sb = (size_t)GM_MIN(K, GM_KCI) * GM_MIN(N, GM_NCI) * e;
        break;
    }
    }
}

static void gm_small_task(int type, const gm_task *t)
{
    switch (type) {
    GM_CASE(GM_F32, gm_small_f32(t))
    GM_CASE(GM_F64, gm_small_f64(t))
    GM_CASE(GM_F16, gm_small_f16(t))
    GM_CASE(GM_BF16, gm_small_bf16(t))
    GM_CASE(GM_I8, gm_small_i8(t))
    GM_CASE(GM_U8, gm_small_u8(t))
    GM_CASE(GM_I16, gm_small_i16(t))
    GM_CASE(GM_I32, gm_small_i32(t))
    GM_CASE(GM_I64, gm_small_i64(t))
    GM_CASE(GM_B8, gm_small_b8(t))
    }
}

/* Run tasks id0, id0+step, ... with one set of scratch buffers. */
static void gm_run_tasks(const gm_problem *p, int64_t id0, int64_t id1, int64_t step)
{
    size_t sa, sb, sw;
    gm_scratch(p, &sa, &sb, &sw);
    void *Ap = sa ? gm_alloc(sa) : NULL;
    void *Bp = sb ? gm_alloc(sb) : NULL;
    void *W = sw ? gm_alloc(sw) : NULL;
    if ((sa && !Ap) || (sb && !Bp) || (sw && !W)) {
        /* out of memory: fall back to the direct loop, which needs none */
        free(Ap); free(Bp); free(W);
        for (int64_t id = id0; id < id1; id += step) {
            gm_task t;
            gm_task_of(p, id, &t);
            if (t.M > 0 && t.N > 0) { gm_small_task(p->type, &t); gm_epi(p, &t); }
        }
        return;
    }
    for (int64_t id = id0; id < id1; id += step) {
        gm_task t;
        gm_task_of(p, id, &t);
        if (t.M <= 0 || t.N <= 0) continue;
        if (p->thin) {
            switch (p->type) {
            GM_CASE(GM_F32, gm_thin_f32(&t, (float *)Ap, p->dot))
            GM_CASE(GM_F64, gm_thin_f64(&t, (double *)Ap, p->dot))
            GM_CASE(GM_F16, gm_thin_f16(&t, (float *)Ap, p->dot))
            GM_CASE(GM_BF16, gm_thin_bf16(&t, (float *)Ap, p->dot))
            }
            gm_epi(p, &t);
            continue;
        }
        switch (p->type) {
        GM_CASE(GM_F32, gm_drive_f32(&t, (float *)Ap, (float *)Bp))
        GM_CASE(GM_F64, gm_drive_f64(&t, (double *)Ap, (double *)Bp))
        GM_CASE(GM_F16, gm_drive_half(&t, GM_K_F16, (float *)Ap, (float *)Bp, (float *)W))
        case GM_BF16:
            if (!GM_ON(GM_BF16)) break;
#ifdef GM_AMX
            if (gm_amx_ok()) { gm_drive_amx(&t, (uint16_t *)Ap, (uint32_t *)Bp, (float *)W); break; }
#endif
            gm_drive_half(&t, GM_K_BF16, (float *)Ap, (float *)Bp, (float *)W);
            break;
        GM_CASE(GM_I8, gm_int_i8(&t, (uint32_t *)Bp))
        GM_CASE(GM_U8, gm_int_u8(&t, (uint32_t *)Bp))
        GM_CASE(GM_I16, gm_int_i16(&t, (uint32_t *)Bp))
        GM_CASE(GM_I32, gm_int_i32(&t, (uint32_t *)Bp))
        GM_CASE(GM_I64, gm_int_i64(&t, (uint64_t *)Bp))
        GM_CASE(GM_B8, gm_bool(&t, (uint8_t *)Bp))
        }
        gm_epi(p, &t);
    }
    free(Ap); free(Bp); free(W);
}

static void gm_small_one(const gm_problem *p, int64_t b)
{
    gm_task t;
    int64_t e = p->esize;
    t.M = p->M; t.N = p->N; t.K = p->K;
    t.A = p->A + b * p->sAb * e;
    t.B = p->B + b * p->sBb * e;
    t.C = p->C + b * p->sCb * e;
    t.sAm = p->sAm; t.sAk = p->sAk;
    t.sBk = p->sBk; t.sBn = p->sBn;
    t.sCm = p->sCm; t.sCn = p->sCn;
    gm_task_add(p, b, 0, 0, &t);
    gm_small_task(p->type, &t);
    gm_epi(p, &t);
}

static void gm_zero(const gm_problem *p)
{
    int64_t e = p->esize;
    for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t i = 0; i < p->M; i++) {
            char *c = p->C + (b * p->sCb + i * p->sCm) * e;
            if (p->sCn == 1)
                memset(c, 0, (size_t)(p->N * e));
            else
                for (int64_t j = 0; j < p->N; j++) memset(c + j * p->sCn * e, 0, (size_t)e);
        }
        gm_task t;
        memset(&t, 0, sizeof t);
        t.C = p->C + b * p->sCb * e;
        t.M = p->M; t.N = p->N;
        t.sCm = p->sCm; t.sCn = p->sCn;
        gm_task_add(p, b, 0, 0, &t);
        gm_epi(p, &t);
    }
}

/* C^T = B^T A^T: swap the roles of A and B.  Per-element arithmetic is
 * unchanged (fma(a, b, c) == fma(b, a, c)). */
static void gm_transpose_problem(gm_problem *p)
{
    const char *tp = p->A; p->A = p->B; p->B = tp;
    int64_t x;
    x = p->M; p->M = p->N; p->N = x;
    x = p->sAb; p->sAb = p->sBb; p->sBb = x;
    int64_t am = p->sAm, ak = p->sAk;
    p->sAm = p->sBn; p->sAk = p->sBk;
    p->sBk = ak; p->sBn = am;
    x = p->sCm; p->sCm = p->sCn; p->sCn = x;
    x = p->sDm; p->sDm = p->sDn; p->sDn = x;
}

/* Pick the thin path when one side has at most GM_TMT rows and the other
 * operand can be streamed along a contiguous dimension.  Depends on shapes
 * and strides only. */
static int gm_thin_form(const gm_problem *p)
{
    const int64_t vl = p->type == GM_F64 ? GM_VLD : GM_VLF;
    const int64_t M = p->M, N = p->N, K = p->K;
    if (M <= GM_TMT && p->sBn == 1 && N >= vl) return 1;        /* rows of B */
    if (N <= GM_TMT && p->sAm == 1 && M >= vl) return 2;        /* columns of A */
    if (M <= GM_TMT && p->sBk == 1 && K >= 2 * vl) return 3;    /* columns of B */
    if (N <= GM_TMT && p->sAk == 1 && K >= 2 * vl) return 4;    /* rows of A */
    return 0;
}

static void gm_choose_thin(gm_problem *p)
{
    const int form = gm_thin_form(p);
    p->thin = form != 0;
    p->dot = form >= 3;
    if (form == 2 || form == 4) gm_transpose_problem(p);
}

/* Whether a product small enough for the direct loop should take the thin path instead:
 * inner-product shapes (a tiny C, a long K: a vector dot took 94 us for K 4096 in the direct
 * loop, NumPy 2 us), and thin shapes whose rows of B the direct loop cannot load as vectors
 * (fewer columns than a vector, or strided columns: it gathers them lane by lane; a 512 x 512
 * matrix times a vector took 850 us there, NumPy 33), or with fewer rows than its row tile
 * (it computes GM_DR rows whatever M is). */
static int gm_small_goes_thin(const gm_problem *p)
{
    const int64_t vl = p->type == GM_F64 ? GM_VLD : GM_VLF;
    if (p->type > GM_BF16 || !gm_thin_form(p)) return 0;
    if (p->M * p->N <= GM_TMT && p->K >= 256) return 1;
    return (p->N < vl || p->sBn != 1 || p->M < GM_DR) && p->M * p->N * p->K >= 2048;
}

static void gm_run(gm_problem *p, int nthreads)
{
    if (p->batch <= 0 || p->M <= 0 || p->N <= 0) return;
    if (p->K <= 0) {
        gm_zero(p);
        return;
    }
    const int is_float = p->type <= GM_BF16;
    double work = (double)p->batch * (double)p->M * (double)p->N * (double)p->K;
    int nt = nthreads < 1 ? 1 : nthreads;
    if (work < GM_PAR_MIN) nt = 1;

    /* the direct small path, but for the thin shapes it is slow at */
    if ((double)p->M * p->N * p->K <= GM_SMALL && !gm_small_goes_thin(p)) {
        if (nt > 1 && p->batch >= 2) {
            if (nt > p->batch) nt = (int)p->batch;
#pragma omp parallel for num_threads(nt) schedule(static)
            for (int64_t b = 0; b < p->batch; b++) gm_small_one(p, b);
        } else {
            for (int64_t b = 0; b < p->batch; b++) gm_small_one(p, b);
        }
        return;
    }
    if (is_float) gm_choose_thin(p);
    /* Column-major C: compute C^T so the micro-kernel writes along contiguous
     * memory. */
    if (is_float && !p->thin && p->sCn != 1 &&
        (p->sCm == 1 || p->sCm == -1 || (p->sCm != 0 && llabs(p->sCm) < llabs(p->sCn))))
        gm_transpose_problem(p);

    if (p->thin) {
        p->mu = GM_TMT;
        p->nu = p->dot ? GM_TJ * 4 : 4 * (p->type == GM_F64 ? GM_VLD : GM_VLF);
    } else {
        switch (p->type) {
        case GM_F32: case GM_F16: case GM_BF16: p->mu = GM_MR_F; p->nu = GM_NR_F; break;
        case GM_F64: p->mu = GM_MR_D; p->nu = GM_NR_D; break;
        default: p->mu = 8; p->nu = 64; break;
        }
    }
    gm_split(p, nt);
    int64_t ntask = p->batch * p->mp * p->np;
    if (nt > ntask) nt = (int)ntask;
    if (nt <= 1) {
        gm_run_tasks(p, 0, ntask, 1);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
#ifdef _OPENMP
        int64_t me = omp_get_thread_num(), team = omp_get_num_threads();
#else
        int64_t me = 0, team = 1;
#endif
        gm_run_tasks(p, me, ntask, team);
    }
}

/* ------------------------------------------------------------------------ */
/* Exported entry points                                                     */
/* ------------------------------------------------------------------------ */
/* gemm_SFX(...) and gemm_epi_SFX(..., nthreads, epi, ctx): the same with an epilogue
 * (gm_epilogue, its context) run on every finished rectangle of C. */
#define GM_ARGS                                                                     \
    int64_t batch, int64_t M, int64_t N, int64_t K,                                 \
    intptr_t A, int64_t sAb, int64_t sAm, int64_t sAk,                              \
    intptr_t B, int64_t sBb, int64_t sBk, int64_t sBn,                              \
    intptr_t C, int64_t sCb, int64_t sCm, int64_t sCn, int nthreads
#define GM_FILL(TYPE, ESIZE)                                                        \
    gm_problem p;                                                                   \
    memset(&p, 0, sizeof p);                                                        \
    p.type = TYPE; p.esize = ESIZE;                                                 \
    p.batch = batch; p.M = M; p.N = N; p.K = K;                                     \
    p.A = (const char *)A; p.sAb = sAb; p.sAm = sAm; p.sAk = sAk;                   \
    p.B = (const char *)B; p.sBb = sBb; p.sBk = sBk; p.sBn = sBn;                   \
    p.C = (char *)C; p.sCb = sCb; p.sCm = sCm; p.sCn = sCn
#define GM_EXPORT(SFX, TYPE, ESIZE)                                                 \
    void gemm_epi_##SFX(GM_ARGS, intptr_t epi, intptr_t ctx)                        \
    {                                                                               \
        GM_FILL(TYPE, ESIZE);                                                       \
        p.epi = (gm_epilogue)epi; p.epi_ctx = (const void *)ctx;                    \
        gm_run(&p, nthreads);                                                       \
    }                                                                               \
    void gemm_##SFX(int64_t batch, int64_t M, int64_t N, int64_t K,                 \
                    intptr_t A, int64_t sAb, int64_t sAm, int64_t sAk,              \
                    intptr_t B, int64_t sBb, int64_t sBk, int64_t sBn,              \
                    intptr_t C, int64_t sCb, int64_t sCm, int64_t sCn,              \
                    int nthreads)                                                   \
    {                                                                               \
        gemm_epi_##SFX(batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk, sBn,          \
                       C, sCb, sCm, sCn, nthreads, 0, 0);                           \
    }

/* gemm_add_SFX(..., nthreads, D, sDb, sDm, sDn, dk, alpha, beta, epi, ctx): C = alpha *
 * (A @ B) + beta * D (dk: GM_D_*) with one rounding of C (float dtypes), then the epilogue
 * (0: none) on the final values, as gemm_epi_SFX's */
#define GM_EXPORT_ADD(SFX, TYPE, ESIZE)                                             \
    void gemm_add_##SFX(GM_ARGS, intptr_t D, int64_t sDb, int64_t sDm, int64_t sDn, \
                        int dk, double alpha, double beta, intptr_t epi, intptr_t ctx) \
    {                                                                               \
        GM_FILL(TYPE, ESIZE);                                                       \
        p.D = (const char *)D; p.sDb = sDb; p.sDm = sDm; p.sDn = sDn;               \
        p.dk = dk; p.alpha = alpha; p.beta = beta;                                  \
        p.epi = (gm_epilogue)epi; p.epi_ctx = (const void *)ctx;                    \
        gm_run(&p, nthreads);                                                       \
    }

#if GM_ON(GM_T_F32)
GM_EXPORT(f32, GM_F32, 4)
GM_EXPORT_ADD(f32, GM_F32, 4)
#endif
#if GM_ON(GM_T_F64)
GM_EXPORT(f64, GM_F64, 8)
GM_EXPORT_ADD(f64, GM_F64, 8)
#endif
#if GM_ON(GM_T_F16)
GM_EXPORT(f16, GM_F16, 2)
GM_EXPORT_ADD(f16, GM_F16, 2)
#endif
#if GM_ON(GM_T_BF16)
GM_EXPORT(bf16, GM_BF16, 2)
GM_EXPORT_ADD(bf16, GM_BF16, 2)
#endif
#if GM_ON(GM_T_I8)
GM_EXPORT(i8, GM_I8, 1)
#endif
#if GM_ON(GM_T_U8)
GM_EXPORT(u8, GM_U8, 1)
#endif
#if GM_ON(GM_T_I16)
GM_EXPORT(i16, GM_I16, 2)
/* Unsigned products wrap to the same bits as signed ones of the same width (the result is
 * taken modulo 2^bits), so the unsigned dtypes run the signed kernels. */
GM_EXPORT(u16, GM_I16, 2)
#endif
#if GM_ON(GM_T_I32)
GM_EXPORT(i32, GM_I32, 4)
GM_EXPORT(u32, GM_I32, 4)
#endif
#if GM_ON(GM_T_I64)
GM_EXPORT(i64, GM_I64, 8)
GM_EXPORT(u64, GM_I64, 8)
#endif
#if GM_ON(GM_T_B8)
GM_EXPORT(b8, GM_B8, 1)
#endif

/* Whether bfloat16 products run on AMX tiles in this process (1) or widened to float32 (0). */
int gemm_bf16_amx(void)
{
#ifdef GM_AMX
    return gm_amx_ok();
#else
    return 0;
#endif
}
