/* Reduction and scan templates (mirror tensor/cpu/csrc/reduce.h).
 *
 * A reduction sees the input as kept dims x reduced dims (coalesced by the caller), with
 * byte strides, in an sx_red_args passed by value. Determinism (no atomics, a fixed tree for
 * a given shape): the reduced range of output k is cut into G chunks of `chunk` elements
 * (chosen by the host from the shape only); a block of SX_RBLOCK threads reduces one chunk,
 * thread t folding elements t, t + SX_RBLOCK, ... in order, then a warp-shuffle tree and a
 * shared-memory tree across warps. mode 0: G == 1, the block writes the output. mode 1: the
 * block writes its partial to part[k * G + c]. mode 2: merge the G partials of each output
 * (same block tree) and write the output. Modes 3-5: column reductions (below).
 * 16-bit floats accumulate in float.
 *
 * Op structs: typedef ACC; init(); combine(acc, x) folds one element (x in compute type);
 * merge(a, b) folds two partials (a holds the lower indices); out(acc) -> value stored.
 * Loads: ld(p) gives the compute-typed value of the input element at p, ld.four(p, q, v) those
 * of the four at p + 4q; sx_plain_ld<SI> loads them, a captured step's fused kernel computes
 * them instead (tensor/cuda/fused.py), or (L::post) runs the elementwise ops that read output
 * k on row k of the input once it is stored (ld.row_done). */
#ifndef STRIDEX_REDUCE_CUH
#define STRIDEX_REDUCE_CUH
#include "common.cuh"

#define SX_RBLOCK 256    /* threads per reduction / scan block: part of the result's tree */
#define SX_WARPS (SX_RBLOCK / 32)

struct sx_red_args {
    const char *in;
    char *out;
    void *part;                       /* modes 1 and 2: G partials per output */
    int mode, nk, nr;
    int vec;                          /* modes 0/1, nr == 1, contiguous: every chunk starts
                                         16-byte aligned and spans whole 4-element vectors */
    int64_t K, R, G, chunk;
    int64_t ks[SX_MAXDIM], kin[SX_MAXDIM], kout[SX_MAXDIM];
    int64_t rs[SX_MAXDIM], rin[SX_MAXDIM];
};

SX_DEV int64_t sx_offset_of(int64_t i, int nd, const int64_t *shape, const int64_t *st) {
    int64_t off = 0;
#pragma unroll 1
    for (int d = nd - 1; d >= 0; d--) { off += (i % shape[d]) * st[d]; i /= shape[d]; }
    return off;
}

template <class SI>
struct sx_plain_ld {
    typedef typename SI::T T;
    typedef typename SI::C C;
    enum { post = 0 };   /* 1: row_done(k, R) runs after output k is stored (mode 0, all threads) */
    __device__ __forceinline__ void row_done(int64_t, int64_t) const {}
    __device__ __forceinline__ C operator()(const T *p) const { return SI::ld(*p); }
    /* the four elements of vector q at p (aligned: the host planned the vector path) */
    __device__ __forceinline__ void four(const T *p, int64_t q, C (&v)[4]) const {
        sx_v4<T> w = *sx_v4_at(p, q);
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = SI::ld(w.v[j]);
    }
};

/* Block-wide fixed-tree reduction; the result is valid in thread 0. All threads call it. */
template <class Op>
SX_DEV typename Op::ACC sx_block_reduce(typename Op::ACC v, typename Op::ACC *sm) {
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
    for (unsigned o = 16; o > 0; o >>= 1) v = Op::merge(v, sx_shfl_down(v, o));
    if (lane == 0) sm[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < SX_WARPS ? sm[lane] : Op::init();
#pragma unroll
        for (unsigned o = 16; o > 0; o >>= 1) v = Op::merge(v, sx_shfl_down(v, o));
    }
    __syncthreads();  /* sm is reused by the next output */
    return v;
}

/* Column reductions (modes 3-5), for inputs whose innermost kept dim is the contiguous one:
 * one THREAD per output walks its reduced range in order, so a warp reads 32 neighbouring
 * elements per step (coalesced). The range is cut into G chunks; mode 3: G == 1, write the
 * output; mode 4: write partial part[c * K + k]; mode 5: merge the G partials in order. */
template <class SI, class SO, class Op, class L>
SX_DEV void sx_reduce_cols(const sx_red_args &a, const L &ld) {
    typedef typename Op::ACC ACC;
    typedef typename SI::T TI;
    int64_t kblocks = (a.K + SX_RBLOCK - 1) / SX_RBLOCK;
    int64_t nblk = a.mode == 5 ? kblocks : kblocks * a.G;
    for (int64_t blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
        int64_t kb = a.mode == 5 ? blk : blk % kblocks, c = a.mode == 5 ? 0 : blk / kblocks;
        int64_t k = kb * SX_RBLOCK + threadIdx.x;
        if (k >= a.K) continue;
        ACC acc = Op::init();
        if (a.mode == 5) {
            const ACC *p = (const ACC *)a.part;
            for (int64_t g = 0; g < a.G; g++) acc = Op::merge(acc, p[g * a.K + k]);
        } else {
            int64_t lo = c * a.chunk, hi = lo + a.chunk < a.R ? lo + a.chunk : a.R;
            const char *base = a.in + sx_offset_of(k, a.nk, a.ks, a.kin);
            if (a.nr == 1) {
                int64_t s = a.rin[0];
#pragma unroll 4
                for (int64_t r = lo; r < hi; r++)
                    acc = Op::combine(acc, ld((const TI *)(base + r * s)), r);
            } else {
#pragma unroll 4
                for (int64_t r = lo; r < hi; r++)
                    acc = Op::combine(acc, ld((const TI *)(base + sx_offset_of(r, a.nr, a.rs, a.rin))), r);
            }
        }
        if (a.mode == 4) ((ACC *)a.part)[c * a.K + k] = acc;
        else *(typename SO::T *)(a.out + sx_offset_of(k, a.nk, a.ks, a.kout)) = SO::st(Op::out(acc));
    }
}

template <class SI, class SO, class Op, class L = sx_plain_ld<SI> >
SX_DEV void sx_reduce(const sx_red_args &a, const L &ld = L()) {
    typedef typename Op::ACC ACC;
    typedef typename SI::T TI;
    if (a.mode >= 3) {
        sx_reduce_cols<SI, SO, Op, L>(a, ld);
        return;
    }
    __shared__ ACC sm[SX_WARPS];
    int64_t nblk = a.mode == 2 ? a.K : a.K * a.G;
    for (int64_t blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
        int64_t k = a.mode == 2 ? blk : blk / a.G;
        ACC acc = Op::init();
        if (a.mode == 2) {
            const ACC *p = (const ACC *)a.part + k * a.G;
            for (int64_t c = threadIdx.x; c < a.G; c += SX_RBLOCK) acc = Op::merge(acc, p[c]);
        } else {
            int64_t c = blk - k * a.G;
            int64_t lo = c * a.chunk, hi = lo + a.chunk < a.R ? lo + a.chunk : a.R;
            const char *base = a.in + sx_offset_of(k, a.nk, a.ks, a.kin);
            if (a.vec) {   /* 4 elements per load: thread t folds 4t..4t+3, +4*SX_RBLOCK, ... */
                const TI *p = (const TI *)base;
                int64_t q_hi = hi >> 2;
#pragma unroll 2
                for (int64_t q = (lo >> 2) + threadIdx.x; q < q_hi; q += SX_RBLOCK) {
                    typename SI::C v[4];
                    ld.four(p, q, v);
#pragma unroll
                    for (int j = 0; j < 4; j++) acc = Op::combine(acc, v[j], 4 * q + j);
                }
                for (int64_t r = 4 * q_hi + threadIdx.x; r < hi; r += SX_RBLOCK)   /* tail */
                    acc = Op::combine(acc, ld((const TI *)base + r), r);
            } else if (a.nr == 1) {
                int64_t s = a.rin[0];
#pragma unroll 4
                for (int64_t r = lo + threadIdx.x; r < hi; r += SX_RBLOCK)
                    acc = Op::combine(acc, ld((const TI *)(base + r * s)), r);
            } else {
#pragma unroll 4
                for (int64_t r = lo + threadIdx.x; r < hi; r += SX_RBLOCK)
                    acc = Op::combine(acc, ld((const TI *)(base + sx_offset_of(r, a.nr, a.rs, a.rin))), r);
            }
        }
        acc = sx_block_reduce<Op>(acc, sm);
        if (threadIdx.x == 0) {
            if (a.mode == 1) ((ACC *)a.part)[blk] = acc;
            else *(typename SO::T *)(a.out + sx_offset_of(k, a.nk, a.ks, a.kout)) = SO::st(Op::out(acc));
        }
        if (L::post && a.mode == 0) {   /* a fused run on the row, reading the stored output */
            __syncthreads();
            ld.row_done(k, a.R);
        }
    }
}

/* ---- reduction ops: the combines are the CPU's (scalar/reduce_ops.h) ---- */
template <class S, class A>
struct sx_sum_op {
    typedef A ACC;
    SX_DEV ACC init() { return (ACC)0; }
    SX_DEV ACC combine(ACC acc, typename S::C x, int64_t) { return SX_ADD(acc, (ACC)x); }
    SX_DEV ACC merge(ACC a, ACC b) { return SX_ADD(a, b); }
    SX_DEV ACC out(ACC a) { return a; }
};
template <class S, class A>
struct sx_prod_op {
    typedef A ACC;
    SX_DEV ACC init() { return (ACC)1; }
    SX_DEV ACC combine(ACC acc, typename S::C x, int64_t) { return SX_MUL(acc, (ACC)x); }
    SX_DEV ACC merge(ACC a, ACC b) { return SX_MUL(a, b); }
    SX_DEV ACC out(ACC a) { return a; }
};
/* max/min: a NaN wins (float kinds); ints compare plainly (x != x is false for them). */
template <class S>
struct sx_max_op {
    typedef typename S::C ACC;
    SX_DEV ACC init() { return S::lo(); }
    SX_DEV ACC merge(ACC a, ACC b) { return SX_MAXF(a, b); }
    SX_DEV ACC combine(ACC acc, ACC x, int64_t) { return merge(acc, x); }
    SX_DEV ACC out(ACC a) { return a; }
};
template <class S>
struct sx_min_op {
    typedef typename S::C ACC;
    SX_DEV ACC init() { return S::hi(); }
    SX_DEV ACC merge(ACC a, ACC b) { return SX_MINF(a, b); }
    SX_DEV ACC combine(ACC acc, ACC x, int64_t) { return merge(acc, x); }
    SX_DEV ACC out(ACC a) { return a; }
};
/* nanmax/nanmin: NaNs lose (the identity is a NaN, kept by a slice of NaNs); integers compare
 * plainly, from lo / hi (the identities NLO_sfx / NHI_sfx of scalar/reduce_ops.h). */
template <class C> SX_DEV C sx_nan_id(C ext) { return ext; }   /* integers: lo() / hi() */
SX_DEV float sx_nan_id(float) { return SX_QNAN_F; }
SX_DEV double sx_nan_id(double) { return (double)SX_QNAN_F; }
template <class S, bool MAX>
struct sx_nanext_op {
    typedef typename S::C ACC;
    SX_DEV ACC init() { return sx_nan_id(MAX ? S::lo() : S::hi()); }
    SX_DEV ACC merge(ACC a, ACC b) { return MAX ? SX_NANMAXF(a, b) : SX_NANMINF(a, b); }
    SX_DEV ACC combine(ACC acc, ACC x, int64_t) { return merge(acc, x); }
    SX_DEV ACC out(ACC a) { return a; }
};
template <class S>
struct sx_any_op {
    typedef int ACC;
    SX_DEV ACC init() { return 0; }
    SX_DEV ACC combine(ACC acc, typename S::C x, int64_t) { return SX_ANY(acc, x); }
    SX_DEV ACC merge(ACC a, ACC b) { return a | b; }
    SX_DEV ACC out(ACC a) { return a; }
};
template <class S>
struct sx_all_op {
    typedef int ACC;
    SX_DEV ACC init() { return 1; }
    SX_DEV ACC combine(ACC acc, typename S::C x, int64_t) { return SX_ALL(acc, x); }
    SX_DEV ACC merge(ACC a, ACC b) { return a & b; }
    SX_DEV ACC out(ACC a) { return a; }
};

/* Arg-reductions: the index (logical order of the reduced space) of the first element the
 * op prefers; a NaN wins and the first NaN is kept. i < 0: empty.
 * NANSKIP (nanargmax / nanargmin: sx_nanarg_op): a NaN loses (SX_NANARGMAXF...); the index is
 * -1 for a slice of NaNs and 0 when the best is lo() / hi() (-inf / inf: every number of the
 * slice equals it, NumPy's answer), as the CPU's BETTER##_FIX. */
template <class C>
struct sx_argacc { C v; int64_t i; };

template <class S, bool MAX, bool NANSKIP = false>
struct sx_arg_op {
    typedef typename S::C C;
    typedef sx_argacc<C> ACC;
    SX_DEV bool better(C x, C best) {
        return NANSKIP ? (MAX ? SX_NANARGMAXF(x, best) : SX_NANARGMINF(x, best))
                       : (MAX ? SX_ARGMAXF(x, best) : SX_ARGMINF(x, best));
    }
    SX_DEV ACC init() { ACC r; r.v = (C)0; r.i = -1; return r; }
    SX_DEV ACC combine(ACC acc, C x, int64_t i) {
        if (acc.i < 0 || better(x, acc.v)) { acc.v = x; acc.i = i; }
        return acc;
    }
    SX_DEV ACC merge(ACC a, ACC b) {
        if (a.i < 0) return b;
        if (b.i < 0) return a;
        if (better(b.v, a.v)) return b;
        if (better(a.v, b.v)) return a;
        return b.i < a.i ? b : a;   /* equal (or both NaN): the first index */
    }
    SX_DEV int64_t out(ACC a) {
        if (!NANSKIP) return a.i;
        if (a.i < 0 || a.v != a.v) return -1;
        return a.v == (MAX ? S::lo() : S::hi()) ? 0 : a.i;
    }
};
template <class S, bool MAX>
struct sx_nanarg_op : sx_arg_op<S, MAX, true> {};

/* ---- inclusive scans along one axis ----
 * The scanned axis is last: shape[nd], byte strides st_in[nd], st_out[nd]. A block scans a
 * segment of a row in tiles of SX_RBLOCK elements, each with a warp-shuffle Hillis-Steele scan
 * and a scan of the warp totals, plus the running carry. mode 0: a segment is a whole row (a
 * block per row, grid-stride). Few long rows split into G chunks of `chunk` elements (the
 * host picks them from the shape alone, so the tree is fixed): mode 1, a block per (row,
 * chunk) folds its chunk the same way and stores the total in part[row * G + c]; mode 2, the
 * same blocks scan their chunks again, starting from the totals of the chunks before, folded
 * in order. mode 3: short rows of many, a THREAD per row folding it in order (a block a row
 * would leave most of its threads idle). */
struct sx_scan_args {
    const char *in;
    char *out;
    void *part;
    int nd, mode;
    int64_t rows, L, G, chunk;
    int64_t sh[SX_MAXDIM], si[SX_MAXDIM], so[SX_MAXDIM];
};

template <class SI, class SO, class Op>
SX_DEV void sx_scan(const sx_scan_args &a) {
    typedef typename Op::ACC ACC;
    __shared__ ACC wsum[SX_WARPS];
    __shared__ ACC carry_sm;
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    int64_t sin_ = a.si[a.nd - 1], sout = a.so[a.nd - 1];
    if (a.mode == 3) {   /* uniform across the grid: no barrier is skipped by some threads */
        for (int64_t row = (int64_t)blockIdx.x * SX_RBLOCK + threadIdx.x; row < a.rows;
             row += (int64_t)gridDim.x * SX_RBLOCK) {
            const char *pi = a.in + sx_offset_of(row, a.nd - 1, a.sh, a.si);
            char *po = a.out + sx_offset_of(row, a.nd - 1, a.sh, a.so);
            ACC v = Op::init();
            for (int64_t i = 0; i < a.L; i++) {
                v = Op::merge(v, Op::combine(Op::init(), SI::ld(*(const typename SI::T *)(pi + i * sin_)), i));
                *(typename SO::T *)(po + i * sout) = SO::st(Op::out(v));
            }
        }
        return;
    }
    ACC *part = (ACC *)a.part;
    for (int64_t b = blockIdx.x; b < a.rows * a.G; b += gridDim.x) {
        int64_t row = b / a.G, c = b % a.G;
        int64_t lo = c * a.chunk, hi = lo + a.chunk < a.L ? lo + a.chunk : a.L;
        const char *pi = a.in + sx_offset_of(row, a.nd - 1, a.sh, a.si);
        char *po = a.out + sx_offset_of(row, a.nd - 1, a.sh, a.so);
        ACC carry = Op::init();
        if (a.mode == 2) {                     /* the totals of the chunks before, in order */
            if (threadIdx.x == 0) {
                ACC p = Op::init();
                for (int64_t k = 0; k < c; k++) p = Op::merge(p, part[row * a.G + k]);
                carry_sm = p;
            }
            __syncthreads();
            carry = carry_sm;
            __syncthreads();
        }
        for (int64_t t0 = lo; t0 < hi; t0 += SX_RBLOCK) {
            int64_t i = t0 + threadIdx.x;
            ACC v = Op::init();
            if (i < hi) v = Op::combine(v, SI::ld(*(const typename SI::T *)(pi + i * sin_)), i);
#pragma unroll
            for (unsigned o = 1; o < 32; o <<= 1) {
                ACC u = sx_shfl_up(v, o);
                if (lane >= o) v = Op::merge(u, v);
            }
            if (lane == 31) wsum[warp] = v;
            __syncthreads();
            if (warp == 0) {
                ACC w = lane < SX_WARPS ? wsum[lane] : Op::init();
#pragma unroll
                for (unsigned o = 1; o < 32; o <<= 1) {
                    ACC u = sx_shfl_up(w, o);
                    if (lane >= o) w = Op::merge(u, w);
                }
                if (lane < SX_WARPS) wsum[lane] = w;   /* inclusive scan of warp totals */
            }
            __syncthreads();
            ACC pre = warp > 0 ? Op::merge(carry, wsum[warp - 1]) : carry;
            v = Op::merge(pre, v);
            if (i < hi && a.mode != 1) *(typename SO::T *)(po + i * sout) = SO::st(Op::out(v));
            if (threadIdx.x == SX_RBLOCK - 1) carry_sm = v;
            __syncthreads();
            carry = carry_sm;
            __syncthreads();
        }
        if (a.mode == 1 && threadIdx.x == 0) part[row * a.G + c] = carry;
    }
}

#endif
