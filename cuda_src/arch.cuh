/* The one place where CUDA kernels and the CPU emulator differ: wrappers of the intrinsics
 * (inline PTX: ldmatrix, mma.sync, cp.async, vector stores, shared-memory addresses) and of
 * the correctly rounded arithmetic, each with the plain C++ the emulator's g++ runs instead.
 * Only this file tests SX_EMULATE (defined by tensor/cuda/emulator/dialect.h); kernels call
 * the wrappers and stay the same source on both.
 *
 * Rounding: NVRTC contracts a * b + c into an FMA by default (--fmad=true), so code whose
 * results must equal the CPU's bit for bit (optim_step.h) calls the sx_rn_* operations: the
 * round-to-nearest intrinsics, which the compiler never fuses (division and sqrt the IEEE
 * ones). The emulator uses the plain operators with contraction turned off, as the C kernels
 * do: SX_NO_CONTRACT turns it off for the rest of an emulated file (GCC contracts after
 * inlining, with the caller's options, so it goes before the callers; nothing on NVRTC). */
#ifndef STRIDEX_ARCH_CUH
#define STRIDEX_ARCH_CUH
#include "common.cuh"

/* ---- correctly rounded arithmetic, never contracted ---- */
#ifdef SX_EMULATE
#if defined(__clang__)
#define SX_NO_CONTRACT _Pragma("STDC FP_CONTRACT OFF")
#elif defined(__GNUC__)
#define SX_NO_CONTRACT _Pragma("GCC optimize(\"fp-contract=off\")")
#else
#define SX_NO_CONTRACT
#endif
SX_DEV float sx_rn_mul(float a, float b) { return a * b; }
SX_DEV double sx_rn_mul(double a, double b) { return a * b; }
SX_DEV float sx_rn_add(float a, float b) { return a + b; }
SX_DEV double sx_rn_add(double a, double b) { return a + b; }
SX_DEV float sx_rn_sub(float a, float b) { return a - b; }
SX_DEV double sx_rn_sub(double a, double b) { return a - b; }
SX_DEV float sx_rn_div(float a, float b) { return a / b; }
SX_DEV double sx_rn_div(double a, double b) { return a / b; }
SX_DEV float sx_rn_sqrt(float a) { return sqrtf(a); }
SX_DEV double sx_rn_sqrt(double a) { return sqrt(a); }
#else
#define SX_NO_CONTRACT
SX_DEV float sx_rn_mul(float a, float b) { return __fmul_rn(a, b); }
SX_DEV double sx_rn_mul(double a, double b) { return __dmul_rn(a, b); }
SX_DEV float sx_rn_add(float a, float b) { return __fadd_rn(a, b); }
SX_DEV double sx_rn_add(double a, double b) { return __dadd_rn(a, b); }
SX_DEV float sx_rn_sub(float a, float b) { return __fsub_rn(a, b); }
SX_DEV double sx_rn_sub(double a, double b) { return __dsub_rn(a, b); }
SX_DEV float sx_rn_div(float a, float b) { return __fdiv_rn(a, b); }
SX_DEV double sx_rn_div(double a, double b) { return __ddiv_rn(a, b); }
SX_DEV float sx_rn_sqrt(float a) { return __fsqrt_rn(a); }
SX_DEV double sx_rn_sqrt(double a) { return __dsqrt_rn(a); }
#endif

/* ---- memory ---- */
/* 16 bytes of any element type (vector loads and stores). */
template <class T>
struct alignas(16) sx_v16 {
    T v[16 / sizeof(T)];
};

/* 16-byte store (one st.v4.f32 / st.v2.f64 via PTX: NVVM otherwise merges the vector store
 * into the scalar strided branch of the epilogue). Generic addressing: global or shared. */
SX_DEV void sx_st16(float *p, const sx_v16<float> &v) {
#ifndef SX_EMULATE
    asm volatile("st.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(v.v[0]), "f"(v.v[1]),
                 "f"(v.v[2]), "f"(v.v[3]) : "memory");
#else
    *(sx_v16<float> *)p = v;
#endif
}
SX_DEV void sx_st16(double *p, const sx_v16<double> &v) {
#ifndef SX_EMULATE
    asm volatile("st.v2.f64 [%0], {%1, %2};" :: "l"(p), "d"(v.v[0]), "d"(v.v[1]) : "memory");
#else
    *(sx_v16<double> *)p = v;
#endif
}

/* ---- tensor cores (gemm.cuh's float16 / bfloat16 kernel) ---- */
#if !defined(SX_EMULATE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define SX_TC_UNSUPPORTED 1   /* no cp.async / bf16 mma.sync before sm_80 */
#endif

#ifndef SX_EMULATE
SX_DEV unsigned sx_smem_addr(const void *p) {
    unsigned r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}
#endif

/* 16-byte global -> shared copy (cp.async.cg: bypasses L1). */
SX_DEV void sx_cp16(void *dst, const void *src) {
#ifndef SX_EMULATE
    asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %1; cp.async.cg.shared.global [%0], [g], 16; }\n"
                 :: "r"(sx_smem_addr(dst)), "l"(src) : "memory");
#else
    *(sx_v16<uint16_t> *)dst = *(const sx_v16<uint16_t> *)src;
#endif
}

SX_DEV void sx_cp_commit() {
#ifndef SX_EMULATE
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
SX_DEV void sx_cp_wait() {
#ifndef SX_EMULATE
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#endif
}

/* ldmatrix .x4: lane l gives the address (element offset from base) of row l % 8 of
 * matrix l / 8; register j receives matrix j: row lane / 4, elements 2 (lane % 4) + {0, 1}
 * (TRANS: column lane / 4, rows 2 (lane % 4) + {0, 1}); low half = first element. */
template <bool TRANS>
SX_DEV void sx_ldsm_x4(const uint16_t *base, int off, uint32_t (&r)[4]) {
#ifndef SX_EMULATE
    unsigned a = sx_smem_addr(base + off);
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
#else
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (!TRANS) {
            unsigned ro = __shfl_sync(0xffffffffu, (unsigned)off, 8 * j + g);
            r[j] = (uint32_t)base[ro + 2 * t] | ((uint32_t)base[ro + 2 * t + 1] << 16);
        } else {
            unsigned r0 = __shfl_sync(0xffffffffu, (unsigned)off, 8 * j + 2 * t);
            unsigned r1 = __shfl_sync(0xffffffffu, (unsigned)off, 8 * j + 2 * t + 1);
            r[j] = (uint32_t)base[r0 + g] | ((uint32_t)base[r1 + g] << 16);
        }
    }
#endif
}

/* d += A (16 x 16, row) * B (16 x 8, col) with PTX's m16n8k16 fragment layouts:
 *   a[0] = A[g][2t..2t+1]  a[1] = A[g+8][2t..]  a[2] = A[g][2t+8..]  a[3] = A[g+8][2t+8..]
 *   b[0] = B[2t..2t+1][g]  b[1] = B[2t+8..][g]
 *   d[0..1] = D[g][2t..2t+1]  d[2..3] = D[g+8][2t..2t+1]      (g = lane / 4, t = lane % 4) */
template <class S>
SX_DEV void sx_mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#ifndef SX_EMULATE
    if (S::is_bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    float ar[2][16], bc[2][16];  /* rows g, g+8 of A; columns 2t, 2t+1 of B */
#pragma unroll
    for (int u = 0; u < 4; u++) {  /* lane 4 g + u holds k = 2u, 2u+1, 2u+8, 2u+9 */
        uint32_t x0 = __shfl_sync(0xffffffffu, a[0], 4 * g + u);
        uint32_t x1 = __shfl_sync(0xffffffffu, a[1], 4 * g + u);
        uint32_t x2 = __shfl_sync(0xffffffffu, a[2], 4 * g + u);
        uint32_t x3 = __shfl_sync(0xffffffffu, a[3], 4 * g + u);
        uint32_t y0 = __shfl_sync(0xffffffffu, b0, 4 * (2 * t) + u);
        uint32_t y1 = __shfl_sync(0xffffffffu, b1, 4 * (2 * t) + u);
        uint32_t w0 = __shfl_sync(0xffffffffu, b0, 4 * (2 * t + 1) + u);
        uint32_t w1 = __shfl_sync(0xffffffffu, b1, 4 * (2 * t + 1) + u);
        ar[0][2 * u] = S::ld((uint16_t)x0);     ar[0][2 * u + 1] = S::ld((uint16_t)(x0 >> 16));
        ar[1][2 * u] = S::ld((uint16_t)x1);     ar[1][2 * u + 1] = S::ld((uint16_t)(x1 >> 16));
        ar[0][2 * u + 8] = S::ld((uint16_t)x2); ar[0][2 * u + 9] = S::ld((uint16_t)(x2 >> 16));
        ar[1][2 * u + 8] = S::ld((uint16_t)x3); ar[1][2 * u + 9] = S::ld((uint16_t)(x3 >> 16));
        bc[0][2 * u] = S::ld((uint16_t)y0);     bc[0][2 * u + 1] = S::ld((uint16_t)(y0 >> 16));
        bc[0][2 * u + 8] = S::ld((uint16_t)y1); bc[0][2 * u + 9] = S::ld((uint16_t)(y1 >> 16));
        bc[1][2 * u] = S::ld((uint16_t)w0);     bc[1][2 * u + 1] = S::ld((uint16_t)(w0 >> 16));
        bc[1][2 * u + 8] = S::ld((uint16_t)w1); bc[1][2 * u + 9] = S::ld((uint16_t)(w1 >> 16));
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float s = d[i];
        for (int k = 0; k < 16; k++) s += ar[i >> 1][k] * bc[i & 1][k];  /* products are exact */
        d[i] = s;
    }
#endif
}

#endif
