/* Batched strided matrix multiply on the GPU (mirrors tensor/cpu/csrc/gemm.c).
 *
 * C[z] = A[z] @ B[z] for z < batch; A: M x K, B: K x N, C: M x N. Every operand is read
 * through its element strides (any sign, 0 allowed on the batch dimension), pointers address
 * element [0,0] of batch 0. C is overwritten; K == 0 gives zeros. The batch runs over
 * blockIdx.z, output tiles over blockIdx.x (both grid-stride loops, so any count works);
 * tiles are visited in groups of SX_GM_GROUP tile-rows for L2 reuse.
 *
 * Operand layouts (a template argument, chosen by the host from the strides). An operand
 * tile is seen as "outer x k" (outer = m for A, n for B):
 *   SX_GM_KC   unit stride along k      (A row-major, B transposed / column-major)
 *   SX_GM_OC   unit stride along outer  (A transposed,  B row-major)
 *   SX_GM_GEN  any strides (scalar loads)
 * Vector (16-byte) global loads / cp.async are used for a chunk when the operand's base
 * pointer and its non-unit strides allow 16-byte alignment (checked once per launch, inside
 * the kernel) and the chunk lies inside the matrix; edge chunks take bounds-checked scalar
 * loads that fill zeros.
 *
 * float32 / float64: SIMT kernel, 256 threads, BM x BN block tile (128 x 128 / 64 x 64),
 *   BK = 8, TM x TN = 8x8 / 4x4 outputs per thread in four quadrants (conflict-free 16-byte
 *   shared loads), double-buffered shared memory with the next tile prefetched into
 *   registers (one __syncthreads per k tile). Each output is one fp32/fp64 sum in k order.
 * float16 / bfloat16: tensor cores, mma.sync.m16n8k16 (fp32 accumulation), 128 x 128 x 32
 *   block tile, 8 warps of 64 x 32, ldmatrix from XOR-swizzled shared memory, 3-stage
 *   cp.async pipeline in dynamic shared memory (SX_TC_SMEM = 48 KiB: the host raises the
 *   function's limit when a configuration needs more); the result is rounded to the storage
 *   type once. Needs sm_80 (cp.async, bf16 mma): built for an older arch the kernel only
 *   traps, and the host runs 16-bit matmuls there through the float32 kernel. Under
 *   the CPU emulator (arch.cuh) ldmatrix / mma / cp.async are replaced by plain C++ that
 *   builds the same fragments with __shfl_sync; the fallback mma adds the 16 exact products
 *   of one k16 step to the accumulator one by one in k order, while the hardware's order and
 *   intermediate rounding within one mma are unspecified (results may differ in the last
 *   bits of fp32 before the final rounding).
 * Integers: 64 x 64 tiles, accumulation in uint32 (8/16/32-bit types) or uint64 (int64):
 *   wrapping arithmetic truncated on store, bit-identical to the CPU. Bool: OR of ANDs.
 * gemm_add (the float kernels' ADD instances, gemm_add_<sfx>_<layout>: tensor/cuda/gemm.py;
 *   gemm.c's gemm_add_<sfx>) store C = alpha * (A @ B) + beta * D computed on the accumulator (float32 for the
 *   16-bit types) before C's one rounding; D (C's dtype or float32) is read through its
 *   strides (0 broadcasts a bias), alpha 0 drops the product, beta 0 D (their NaN too); the
 *   scalings and the sum are rounded apart, never contracted (as the CPU's).
 * Deterministic: no atomics, K is never split.
 */
#ifndef STRIDEX_GEMM_CUH
#define STRIDEX_GEMM_CUH
#include "common.cuh"
#include "arch.cuh"   /* ldmatrix, mma.sync, cp.async, 16-byte stores */

struct sx_gemm_args {
    const void *a;
    const void *b;
    void *c;
    int64_t M, N, K, batch;
    int64_t sab, sam, sak;   /* element strides: batch, row, column of A */
    int64_t sbb, sbk, sbn;
    int64_t scb, scm, scn;
    /* gemm_add (the ADD instances): D's addend kind dk (1 / 2: D of C's dtype / float32, 3: no
     * D read, beta 0), D's strides, alpha scaling the product, beta D; a plain product leaves
     * them out */
    const void *d;
    int64_t sdb, sdm, sdn;
    double alpha, beta;
    int64_t dk;
};

#define SX_GM_KC 0
#define SX_GM_OC 1
#define SX_GM_GEN 2
#define SX_GM_THREADS 256
#define SX_GM_GROUP 8
#define SX_GM_MEM __device__ __forceinline__ /* member functions (SX_DEV is static) */

/* Tile t of a tm x tn grid of tiles, grouped by SX_GM_GROUP tile-rows. */
SX_DEV void sx_gm_tile(int64_t t, int64_t tm, int64_t tn, int64_t &bm, int64_t &bn) {
    const int64_t per = (int64_t)SX_GM_GROUP * tn;
    const int64_t grp = t / per;
    const int64_t first = grp * SX_GM_GROUP;
    const int64_t gs = tm - first < SX_GM_GROUP ? tm - first : SX_GM_GROUP;
    const int64_t r = t - grp * per;
    bm = first + r % gs;
    bn = r / gs;
}

SX_DEV bool sx_gm_aligned(const void *p, int64_t s1, int64_t s2, int vl) {
    return ((uint64_t)p & 15u) == 0 && s1 % vl == 0 && s2 % vl == 0;
}

/* A gemm_add's value of C[z][r][c] from the accumulator v, in S::C (the accumulator type;
 * S: C's dtype traits, whose ld widens D) */
template <class S>
SX_DEV typename S::C sx_gm_fin(const sx_gemm_args &p, int64_t z, int64_t r, int64_t c,
                               typename S::C v) {
    typedef typename S::C A;
    const A al = (A)p.alpha, be = (A)p.beta;
    A x = al == A(1) ? v : al == A(0) ? A(0) : sx_rn_mul(al, v);
    if (p.dk == 1 || p.dk == 2) {
        const int64_t o = z * p.sdb + r * p.sdm + c * p.sdn;
        A d = p.dk == 2 ? (A)((const float *)p.d)[o] : (A)S::ld(((const typename S::T *)p.d)[o]);
        if (be != A(1)) d = sx_rn_mul(be, d);
        x = sx_rn_add(x, d);
    }
    return x;
}

/* ======================================================================================
 * float32 / float64: SIMT
 * ====================================================================================== */
/* Epilogues: ep(p) runs after the element at p of C got its final value, in the thread that
 * stored it, once per element (a captured step's fused elementwise ops on the product:
 * tensor/cuda/fused.py); sx_gm_no_epi does nothing. */
struct sx_gm_no_epi {
    template <class T> __device__ __forceinline__ void operator()(T *) const {}
};

template <class T> struct sx_gm_cfg;
template <> struct sx_gm_cfg<float> {
    enum { BM = 128, BN = 128, BK = 8, TM = 8, TN = 8 };
    typedef sx_f32 S;
};
template <> struct sx_gm_cfg<double> {
    enum { BM = 64, BN = 64, BK = 8, TM = 4, TN = 4 };
    typedef sx_f64 S;
};

/* Global -> registers -> shared loader of one BO x BK operand tile, stored as S[k][outer].
 * Thread chunk i is VL elements: along k (KC) or along outer (OC, GEN) at tile position
 * (o[i], k[i]); q[i] points at its first element in the current k tile. */
template <class T, int BO, int BK, int L>
struct sx_gm_ldr {
    enum { VL = 16 / (int)sizeof(T), NV = BO * BK / VL / SX_GM_THREADS };
    static_assert(NV >= 1 && NV * VL * SX_GM_THREADS == BO * BK, "tile / thread mismatch");
    const T *q[NV];
    int o[NV], k[NV];
    int on[NV];          /* KC: row inside the matrix (0/1); OC, GEN: valid elements (0..VL) */
    T r[NV][VL];

    SX_GM_MEM void init(int tid) {
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int c = tid + i * SX_GM_THREADS;
            if (L == SX_GM_KC) { o[i] = c / (BK / VL); k[i] = (c % (BK / VL)) * VL; }
            else { k[i] = c / (BO / VL); o[i] = (c % (BO / VL)) * VL; }
        }
    }

    /* a new output tile: p is its element (0, 0), no the rows left from its origin
     * (clamped to BO) */
    SX_GM_MEM void begin(const T *p, int64_t so, int64_t sk, int no) {
#pragma unroll
        for (int i = 0; i < NV; i++) {
            if (L == SX_GM_KC) {
                q[i] = p + o[i] * so + k[i];
                on[i] = o[i] < no;
            } else {
                q[i] = p + (L == SX_GM_OC ? (int64_t)o[i] : o[i] * so) + k[i] * sk;
                const int left = no - o[i];
                on[i] = left <= 0 ? 0 : left >= VL ? VL : left;
            }
        }
    }

    SX_GM_MEM void advance(int64_t d) {
#pragma unroll
        for (int i = 0; i < NV; i++) q[i] += d;
    }

    /* registers <- the current k tile; nk: k left from its origin (clamped to BK) */
    SX_GM_MEM void load(int nk, int64_t so, bool vec) {
#pragma unroll
        for (int i = 0; i < NV; i++) {
            const T *src = q[i];
            if (L == SX_GM_KC) {
                if (vec && on[i] && k[i] + VL <= nk) {
                    sx_v16<T> v = *(const sx_v16<T> *)src;
#pragma unroll
                    for (int j = 0; j < VL; j++) r[i][j] = v.v[j];
                } else {
#pragma unroll
                    for (int j = 0; j < VL; j++) {
                        T x = T(0);
                        if (on[i] && k[i] + j < nk) x = src[j];
                        r[i][j] = x;
                    }
                }
            } else {
                const bool kin = k[i] < nk;
                if (L == SX_GM_OC && vec && kin && on[i] == VL) {
                    sx_v16<T> v = *(const sx_v16<T> *)src;
#pragma unroll
                    for (int j = 0; j < VL; j++) r[i][j] = v.v[j];
                } else {
#pragma unroll
                    for (int j = 0; j < VL; j++) {
                        T x = T(0);
                        if (kin && j < on[i]) x = src[L == SX_GM_OC ? j : j * so];
                        r[i][j] = x;
                    }
                }
            }
        }
    }

    template <int P>
    SX_GM_MEM void store(T (*S)[P]) const {
#pragma unroll
        for (int i = 0; i < NV; i++) {
            if (L == SX_GM_KC) {
#pragma unroll
                for (int j = 0; j < VL; j++) S[k[i] + j][o[i]] = r[i][j];
            } else {
                sx_v16<T> v;
#pragma unroll
                for (int j = 0; j < VL; j++) v.v[j] = r[i][j];
                *(sx_v16<T> *)&S[k[i]][o[i]] = v;
            }
        }
    }
};

template <class T, int LA, int LB, class E = sx_gm_no_epi, bool ADD = false>
SX_DEV void sx_gemm_simt(const sx_gemm_args &p, const E &ep = E()) {
    typedef sx_gm_cfg<T> CF;
    enum { BM = CF::BM, BN = CF::BN, BK = CF::BK, TM = CF::TM, TN = CF::TN };
    enum { VL = 16 / (int)sizeof(T), HM = TM / 2, HN = TN / 2 };
    static_assert(HM == VL && HN == VL, "a quadrant row is one 16-byte vector");
    static_assert(BM == 16 * TM && BN == 16 * TN, "16 x 16 threads");
    enum { PA = BM + VL, PB = BN + VL };  /* padding: conflict-free transposed stores */
    alignas(16) __shared__ T As[2][BK][PA];
    alignas(16) __shared__ T Bs[2][BK][PB];

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int64_t M = p.M, N = p.N, K = p.K;
    const int64_t tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN, ntile = tm * tn;
    const T *A = (const T *)p.a, *B = (const T *)p.b;
    T *C = (T *)p.c;
    const bool va = LA == SX_GM_KC ? sx_gm_aligned(A, p.sam, p.sab, VL)
                  : LA == SX_GM_OC ? sx_gm_aligned(A, p.sak, p.sab, VL) : false;
    const bool vb = LB == SX_GM_KC ? sx_gm_aligned(B, p.sbn, p.sbb, VL)
                  : LB == SX_GM_OC ? sx_gm_aligned(B, p.sbk, p.sbb, VL) : false;
    const bool vc = p.scn == 1 && sx_gm_aligned(C, p.scm, p.scb, VL);
    const int64_t dka = (int64_t)BK * (LA == SX_GM_KC ? 1 : p.sak);
    const int64_t dkb = (int64_t)BK * (LB == SX_GM_KC ? 1 : p.sbk);

    sx_gm_ldr<T, BM, BK, LA> la;
    sx_gm_ldr<T, BN, BK, LB> lb;
    la.init(tid);
    lb.init(tid);

    for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
        for (int64_t t = blockIdx.x; t < ntile; t += gridDim.x) {
            int64_t bm, bn;
            sx_gm_tile(t, tm, tn, bm, bn);
            const int64_t m0 = bm * BM, n0 = bn * BN;
            const int rm = M - m0 < BM ? (int)(M - m0) : BM;  /* rows / cols of this tile */
            const int rn = N - n0 < BN ? (int)(N - n0) : BN;
            T acc[TM][TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = T(0);

            if (K > 0) {
                la.begin(A + z * p.sab + m0 * p.sam, p.sam, p.sak, rm);
                lb.begin(B + z * p.sbb + n0 * p.sbn, p.sbn, p.sbk, rn);
                int64_t kl = K;  /* k left from the current k tile's origin */
                la.load(kl < BK ? (int)kl : BK, p.sam, va);
                lb.load(kl < BK ? (int)kl : BK, p.sbn, vb);
                la.store(As[0]);
                lb.store(Bs[0]);
                __syncthreads();
                int cur = 0;
#pragma unroll 1
                while (true) {
                    const bool more = kl > BK;
                    if (more) {  /* prefetch the next k tile into registers */
                        const int kn = kl - BK < BK ? (int)(kl - BK) : BK;
                        la.advance(dka);
                        lb.advance(dkb);
                        la.load(kn, p.sam, va);
                        lb.load(kn, p.sbn, vb);
                    }
#pragma unroll
                    for (int kk = 0; kk < BK; kk++) {
                        sx_v16<T> a0 = *(const sx_v16<T> *)&As[cur][kk][ty * HM];
                        sx_v16<T> a1 = *(const sx_v16<T> *)&As[cur][kk][BM / 2 + ty * HM];
                        sx_v16<T> b0 = *(const sx_v16<T> *)&Bs[cur][kk][tx * HN];
                        sx_v16<T> b1 = *(const sx_v16<T> *)&Bs[cur][kk][BN / 2 + tx * HN];
                        T av[TM], bv[TN];
#pragma unroll
                        for (int i = 0; i < HM; i++) { av[i] = a0.v[i]; av[HM + i] = a1.v[i]; }
#pragma unroll
                        for (int j = 0; j < HN; j++) { bv[j] = b0.v[j]; bv[HN + j] = b1.v[j]; }
#pragma unroll
                        for (int i = 0; i < TM; i++)
#pragma unroll
                            for (int j = 0; j < TN; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
                    }
                    if (more) {
                        la.store(As[cur ^ 1]);
                        lb.store(Bs[cur ^ 1]);
                    }
                    __syncthreads();
                    if (!more) break;
                    kl -= BK;
                    cur ^= 1;
                }
            }

            /* epilogue: four quadrants, each row of a quadrant one 16-byte vector */
            T *pc = C + z * p.scb + m0 * p.scm + n0 * p.scn;
            if (ADD) {
#pragma unroll
                for (int i = 0; i < TM; i++) {
                    const int r = i < HM ? ty * HM + i : BM / 2 + ty * HM + (i - HM);
#pragma unroll
                    for (int j = 0; j < TN; j++) {
                        const int c = j < HN ? tx * HN + j : BN / 2 + tx * HN + (j - HN);
                        if (r < rm && c < rn)
                            acc[i][j] = sx_gm_fin<typename CF::S>(p, z, m0 + r, n0 + c, acc[i][j]);
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < TM; i++) {
                const int r = i < HM ? ty * HM + i : BM / 2 + ty * HM + (i - HM);
                if (r >= rm) continue;
                T *cr = pc + r * p.scm;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int c = h * (BN / 2) + tx * HN;
                    if (vc && c + HN <= rn) {
                        sx_v16<T> v;
#pragma unroll
                        for (int j = 0; j < HN; j++) v.v[j] = acc[i][h * HN + j];
                        sx_st16(cr + c, v);
#pragma unroll
                        for (int j = 0; j < HN; j++) ep(cr + c + j);
                    } else {
#pragma unroll
                        for (int j = 0; j < HN; j++)
                            if (c + j < rn) { cr[(c + j) * p.scn] = acc[i][h * HN + j]; ep(cr + (c + j) * p.scn); }
                    }
                }
            }
        }
    }
}

/* ======================================================================================
 * float16 / bfloat16: tensor cores (mma.sync m16n8k16, fp32 accumulation)
 * ====================================================================================== */
#define SX_TC_BM 128
#define SX_TC_BN 128
#define SX_TC_BK 32
#define SX_TC_STAGES 3
#define SX_TC_SMEM (SX_TC_STAGES * (SX_TC_BM + SX_TC_BN) * SX_TC_BK * 2)   /* bytes */

/* Shared tile forms (16-bit elements, 16-byte chunks XOR-swizzled so that ldmatrix's eight
 * row reads and the 16-byte fills hit distinct banks):
 *   KC form [outer][k]: 32 k per row (4 chunks), chunk c of row o at c ^ ((o >> 1) & 3)
 *   OC form [k][outer]: 128 outer per row (16 chunks), chunk c of row k at c ^ (k & 7) */
SX_DEV int sx_tc_off_kc(int o, int k) { return o * 32 + ((((k >> 3) ^ (o >> 1)) & 3) << 3) + (k & 7); }
SX_DEV int sx_tc_off_oc(int o, int k) { return k * 128 + (((o >> 3) ^ (k & 7)) << 3) + (o & 7); }

/* element traits of the tensor-core kernel: the dtype's plus the mma type flag */
struct sx_tc_f16 : sx_f16 { enum { is_bf16 = 0 }; };
struct sx_tc_bf16 : sx_bf16 { enum { is_bf16 = 1 }; };

/* One operand tile (128 outer x 32 k) of stage s: 512 16-byte chunks, 2 per thread. */
template <int L>
SX_DEV void sx_tc_load(uint16_t *S, const uint16_t *p, int64_t so, int64_t sk, int64_t no,
                       int64_t k0, int64_t K, bool vec, int tid) {
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int q = tid + i * SX_GM_THREADS;
        if (L == SX_GM_OC) {
            const int k = q >> 4, o = (q & 15) * 8;
            uint16_t *dst = S + sx_tc_off_oc(o, k);
            const uint16_t *src = p + o + (k0 + k) * sk;
            const bool kin = k0 + k < K;
            if (vec && kin && o + 8 <= no) {
                sx_cp16(dst, src);
            } else {
                sx_v16<uint16_t> v;
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    uint16_t x = 0;
                    if (kin && o + j < no) x = src[j];
                    v.v[j] = x;
                }
                *(sx_v16<uint16_t> *)dst = v;
            }
        } else {
            const int o = q >> 2, k = (q & 3) * 8;
            uint16_t *dst = S + sx_tc_off_kc(o, k);
            const bool oin = o < no;
            if (L == SX_GM_KC && vec && oin && k0 + k + 8 <= K) {
                sx_cp16(dst, p + o * so + (k0 + k));
            } else {
                const int64_t s = L == SX_GM_KC ? 1 : sk;
                const uint16_t *src = p + o * so + (k0 + k) * s;
                sx_v16<uint16_t> v;
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    uint16_t x = 0;
                    if (oin && k0 + k + j < K) x = src[j * s];
                    v.v[j] = x;
                }
                *(sx_v16<uint16_t> *)dst = v;
            }
        }
    }
}

template <class S, int LA, int LB, class E = sx_gm_no_epi, bool ADD = false>
SX_DEV void sx_gemm_tc(const sx_gemm_args &p, const E &ep = E()) {
#ifdef SX_TC_UNSUPPORTED
    __trap();   /* the host never launches it here (see tensor/cuda/gemm.py) */
#else
    enum { BM = SX_TC_BM, BN = SX_TC_BN, BK = SX_TC_BK, NS = SX_TC_STAGES };
    enum { FA = LA == SX_GM_OC, FB = LB == SX_GM_OC };  /* shared form: 1 = OC ([k][outer]) */
    SX_EXTERN_SHARED(uint16_t, sx_tc_smem);   /* SX_TC_SMEM bytes: As stages, then Bs */
    uint16_t (*As)[BM * BK] = (uint16_t (*)[BM * BK])sx_tc_smem;
    uint16_t (*Bs)[BN * BK] = (uint16_t (*)[BN * BK])(sx_tc_smem + NS * BM * BK);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;  /* warp tile 64 x 32 */
    const int g = lane >> 2, t4 = lane & 3, lr = lane & 7, lj = lane >> 3;
    const int64_t M = p.M, N = p.N, K = p.K;
    const int64_t tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN, ntile = tm * tn;
    const int64_t nk = (K + BK - 1) / BK;
    const uint16_t *A = (const uint16_t *)p.a, *B = (const uint16_t *)p.b;
    uint16_t *C = (uint16_t *)p.c;
    const bool va = LA == SX_GM_KC ? sx_gm_aligned(A, p.sam, p.sab, 8)
                  : LA == SX_GM_OC ? sx_gm_aligned(A, p.sak, p.sab, 8) : false;
    const bool vb = LB == SX_GM_KC ? sx_gm_aligned(B, p.sbn, p.sbb, 8)
                  : LB == SX_GM_OC ? sx_gm_aligned(B, p.sbk, p.sbb, 8) : false;
    const bool vc = p.scn == 1 && ((uint64_t)C & 3u) == 0 && p.scm % 2 == 0 && p.scb % 2 == 0;

    /* ldmatrix row addresses of this lane (element offsets within a stage), per k16 step */
    int offa[2][4], offb[2][2];
#pragma unroll
    for (int ks = 0; ks < 2; ks++) {
#pragma unroll
        for (int mi = 0; mi < 4; mi++) {
            const int m = wm + mi * 16;
            offa[ks][mi] = FA ? sx_tc_off_oc(m + (lj & 1) * 8, ks * 16 + lr + (lj >> 1) * 8)
                              : sx_tc_off_kc(m + lr + (lj & 1) * 8, ks * 16 + (lj >> 1) * 8);
        }
#pragma unroll
        for (int np = 0; np < 2; np++) {
            const int n = wn + np * 16;
            offb[ks][np] = FB ? sx_tc_off_oc(n + (lj >> 1) * 8, ks * 16 + lr + (lj & 1) * 8)
                              : sx_tc_off_kc(n + lr + (lj >> 1) * 8, ks * 16 + (lj & 1) * 8);
        }
    }

    for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
        for (int64_t t = blockIdx.x; t < ntile; t += gridDim.x) {
            int64_t bm, bn;
            sx_gm_tile(t, tm, tn, bm, bn);
            const int64_t m0 = bm * BM, n0 = bn * BN;
            const uint16_t *pa = A + z * p.sab + m0 * p.sam;
            const uint16_t *pb = B + z * p.sbb + n0 * p.sbn;
            float acc[4][4][4];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

#pragma unroll
            for (int s = 0; s < NS - 1; s++) {
                if (s < nk) {
                    sx_tc_load<LA>(As[s], pa, p.sam, p.sak, M - m0, (int64_t)s * BK, K, va, tid);
                    sx_tc_load<LB>(Bs[s], pb, p.sbn, p.sbk, N - n0, (int64_t)s * BK, K, vb, tid);
                }
                sx_cp_commit();
            }
#pragma unroll 1
            for (int64_t kt = 0; kt < nk; kt++) {
                sx_cp_wait<NS - 2>();
                __syncthreads();  /* stage kt landed; everyone is done with stage kt - 1 */
                const int64_t nx = kt + NS - 1;
                if (nx < nk) {
                    const int sn = (int)(nx % NS);
                    sx_tc_load<LA>(As[sn], pa, p.sam, p.sak, M - m0, nx * BK, K, va, tid);
                    sx_tc_load<LB>(Bs[sn], pb, p.sbn, p.sbk, N - n0, nx * BK, K, vb, tid);
                }
                sx_cp_commit();
                const int sc = (int)(kt % NS);
                const uint16_t *as = As[sc], *bs = Bs[sc];
#pragma unroll
                for (int ks = 0; ks < 2; ks++) {
                    uint32_t af[4][4], bf[2][4];
#pragma unroll
                    for (int mi = 0; mi < 4; mi++) sx_ldsm_x4<FA>(as, offa[ks][mi], af[mi]);
#pragma unroll
                    for (int np = 0; np < 2; np++) sx_ldsm_x4<FB>(bs, offb[ks][np], bf[np]);
#pragma unroll
                    for (int mi = 0; mi < 4; mi++)
#pragma unroll
                        for (int ni = 0; ni < 4; ni++)
                            sx_mma16816<S>(acc[mi][ni], af[mi], bf[ni >> 1][(ni & 1) * 2],
                                           bf[ni >> 1][(ni & 1) * 2 + 1]);
                }
            }
            sx_cp_wait<0>();
            __syncthreads();  /* the next tile refills the stages */

            uint16_t *pc = C + z * p.scb;
#pragma unroll
            for (int mi = 0; mi < 4; mi++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int64_t row = m0 + wm + mi * 16 + g + h * 8;
                    if (row >= M) continue;
                    uint16_t *cr = pc + row * p.scm;
#pragma unroll
                    for (int ni = 0; ni < 4; ni++) {
                        const int64_t col = n0 + wn + ni * 8 + 2 * t4;
                        float v0 = acc[mi][ni][2 * h], v1 = acc[mi][ni][2 * h + 1];
                        if (ADD) {
                            if (col < N) v0 = sx_gm_fin<S>(p, z, row, col, v0);
                            if (col + 1 < N) v1 = sx_gm_fin<S>(p, z, row, col + 1, v1);
                        }
                        const uint16_t x0 = S::st(v0);
                        const uint16_t x1 = S::st(v1);
                        if (vc && col + 1 < N) {
                            *(uint32_t *)(cr + col) = (uint32_t)x0 | ((uint32_t)x1 << 16);
                            ep(cr + col);
                            ep(cr + col + 1);
                        } else {
                            if (col < N) { cr[col * p.scn] = x0; ep(cr + col * p.scn); }
                            if (col + 1 < N) { cr[(col + 1) * p.scn] = x1; ep(cr + (col + 1) * p.scn); }
                        }
                    }
                }
            }
        }
    }
#endif
}

/* ======================================================================================
 * Integers and bool: wrapping accumulation in TA (uint32 / uint64), bool: OR of ANDs
 * ====================================================================================== */
template <class TE, class TA, bool BOOL, class E = sx_gm_no_epi>
SX_DEV void sx_gemm_int(const sx_gemm_args &p, const E &ep = E()) {
    enum { BM = 64, BN = 64, BK = 16 };
    __shared__ TA As[BK][BM + 1];
    __shared__ TA Bs[BK][BN + 1];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int64_t M = p.M, N = p.N, K = p.K;
    const int64_t tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN, ntile = tm * tn;
    const TE *A = (const TE *)p.a, *B = (const TE *)p.b;
    TE *C = (TE *)p.c;
    const bool akc = p.sak == 1, bkc = p.sbk == 1 && p.sbn != 1;

    for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
        for (int64_t t = blockIdx.x; t < ntile; t += gridDim.x) {
            int64_t bm, bn;
            sx_gm_tile(t, tm, tn, bm, bn);
            const int64_t m0 = bm * BM, n0 = bn * BN;
            const TE *pa = A + z * p.sab + m0 * p.sam;
            const TE *pb = B + z * p.sbb + n0 * p.sbn;
            TA acc[4][4];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = 0;
#pragma unroll 1
            for (int64_t k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
                for (int i = 0; i < BM * BK / SX_GM_THREADS; i++) {
                    const int q = tid + i * SX_GM_THREADS;
                    int o, k;
                    if (akc) { k = q % BK; o = q / BK; } else { o = q % BM; k = q / BM; }
                    TA x = 0;
                    if (m0 + o < M && k0 + k < K) {
                        TE e = pa[o * p.sam + (k0 + k) * p.sak];
                        x = BOOL ? (TA)(e != 0) : (TA)e;
                    }
                    As[k][o] = x;
                }
#pragma unroll
                for (int i = 0; i < BN * BK / SX_GM_THREADS; i++) {
                    const int q = tid + i * SX_GM_THREADS;
                    int o, k;
                    if (bkc) { k = q % BK; o = q / BK; } else { o = q % BN; k = q / BN; }
                    TA x = 0;
                    if (n0 + o < N && k0 + k < K) {
                        TE e = pb[o * p.sbn + (k0 + k) * p.sbk];
                        x = BOOL ? (TA)(e != 0) : (TA)e;
                    }
                    Bs[k][o] = x;
                }
                __syncthreads();
#pragma unroll 4
                for (int kk = 0; kk < BK; kk++) {
                    TA av[4], bv[4];
#pragma unroll
                    for (int i = 0; i < 4; i++) av[i] = As[kk][ty + 16 * i];
#pragma unroll
                    for (int j = 0; j < 4; j++) bv[j] = Bs[kk][tx + 16 * j];
#pragma unroll
                    for (int i = 0; i < 4; i++)
#pragma unroll
                        for (int j = 0; j < 4; j++) {
                            if (BOOL) acc[i][j] |= av[i] & bv[j];
                            else acc[i][j] += av[i] * bv[j];
                        }
                }
                __syncthreads();
            }
            TE *pc = C + z * p.scb;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int64_t row = m0 + ty + 16 * i;
                if (row >= M) continue;
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const int64_t col = n0 + tx + 16 * j;
                    if (col < N) {
                        TE *q = pc + row * p.scm + col * p.scn;
                        *q = BOOL ? (TE)(acc[i][j] != 0) : (TE)acc[i][j];
                        ep(q);
                    }
                }
            }
        }
    }
}

#endif
