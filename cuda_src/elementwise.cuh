/* Elementwise kernel templates (mirror tensor/cpu/csrc/elementwise.h).
 *
 * The generated module (tensor/cuda/kernels.py) defines, per op, a functor
 *   struct NAME_fn { __device__ SO::T operator()(SA::C a[, SB::C b]) const { return SO::st(EXPR); } };
 * and an entry point
 *   extern "C" __global__ void NAME(sx_indexer<2 or 3> ix) { sx_unary<SA, SO>(ix, NAME_fn()); }
 * Operand 0 is the output; `where` takes (out, cond, a, b). The indexer comes in by value.
 * Paths: contiguous (no index arithmetic; 4 elements per load when the host found every
 * operand aligned), 32-bit strided and 64-bit strided, all grid-stride loops. A Python scalar
 * operand travels inside the indexer (sval) and is read with stride 0.
 * Tiled path (ix.tile != 0): operands whose memory orders differ (out row-major, an input
 * transposed): see sx_ew_tiled. */
#ifndef STRIDEX_ELEMENTWISE_CUH
#define STRIDEX_ELEMENTWISE_CUH
#include "common.cuh"


template <class I, class F>
SX_DEV void sx_grid_loop(I lo, I n, F f) {
    I step = (I)blockDim.x * (I)gridDim.x;
#pragma unroll 1
    for (I i = lo + (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < n; i += step) f(i);
}

/* Four consecutive elements from i*4, or the scalar four times. */
template <class T>
SX_DEV sx_v4<T> sx_load4(const T *p, int64_t i, bool scal) {
    if (!scal) return *sx_v4_at(p, i);
    sx_v4<T> r;
#pragma unroll
    for (int j = 0; j < 4; j++) r.v[j] = *p;
    return r;
}

/* Operand k's base: its tensor address, or the thread's copy of the scalar's bytes. */
template <int N>
SX_DEV void sx_bases(const sx_indexer<N> &ix, int64_t (&sv)[N], char *(&base)[N]) {
#pragma unroll
    for (int k = 0; k < N; k++) {
        sv[k] = ix.sval[k];
        base[k] = ((ix.scalar >> k) & 1) ? (char *)&sv[k] : ix.ptr[k];
    }
}

/* ---- tiled path: operands in different memory orders ----
 * The host (tensor/cuda/launch.py) ordered the dims so that dim nd-1 (A) is the output's
 * fastest and dim nd-2 (B) the fastest of the inputs flagged in ix.tile. A block takes one
 * SX_TILE x SX_TILE tile of (B, A) at a time (grid-stride over tiles x the outer dims):
 *   1. each flagged input's tile is read along B -- its contiguous dim, so a warp reads
 *      consecutive addresses -- into shared memory laid out [a][b] with a padded row
 *      (SX_TILE + 1 elements: column reads hit distinct banks);
 *   2. __syncthreads; every thread then computes SX_TILE / SX_TROWS outputs along A (a warp
 *      writes consecutive output addresses), reading flagged inputs from shared memory and
 *      the others (A-fast, broadcast or scalar) directly;
 *   3. __syncthreads before the next tile overwrites shared memory.
 * The tile loop's bounds depend on blockIdx only and edge elements are masked, never
 * skipped as a whole, so every thread of a block reaches every barrier. body(p) is the
 * strided path's body: p[k] points at operand k's element (global or shared memory).
 * Launched with blockDim.x == SX_BLOCK (the thread -> tile mapping assumes it).
 * 32-bit index arithmetic only (the host sets ix.tile only together with ix.idx32; larger
 * launches take the 64-bit strided path): a second instantiation per kernel would double
 * the extra NVRTC compile time this path costs. */
#define SX_TILE 32                     /* tile edge, elements */
#define SX_TROWS (SX_BLOCK / SX_TILE)  /* thread rows of a block: 8 */

SX_DEV void sx_copy_elem(char *d, const char *s, int es) {
    if (es == 1) *(uint8_t *)d = *(const uint8_t *)s;
    else if (es == 2) *(uint16_t *)d = *(const uint16_t *)s;
    else if (es == 4) *(uint32_t *)d = *(const uint32_t *)s;
    else if (es == 8) *(uint64_t *)d = *(const uint64_t *)s;
    else { ((uint64_t *)d)[0] = ((const uint64_t *)s)[0]; ((uint64_t *)d)[1] = ((const uint64_t *)s)[1]; }
}

template <int N, class I, class F>
SX_DEV void sx_ew_tiled(const sx_indexer<N> &ix, char *const (&base)[N], char *const (&sm)[N],
                        const int (&es)[N], F body) {
    const int nd = ix.nd, mask = ix.tile;
    const I na = (I)ix.shape[nd - 1], nb = (I)ix.shape[nd - 2];
    const I ta = (na + SX_TILE - 1) / SX_TILE, tb = (nb + SX_TILE - 1) / SX_TILE;
    const I ntiles = ta * tb * ((I)ix.n / (na * nb));
    I sa[N], sb[N];
#pragma unroll
    for (int k = 0; k < N; k++) {
        sa[k] = (I)ix.stride[k][nd - 1];
        sb[k] = (I)ix.stride[k][nd - 2];
    }
    const int tx = (int)threadIdx.x % SX_TILE, ty = (int)threadIdx.x / SX_TILE;
#pragma unroll 1
    for (I t = (I)blockIdx.x; t < ntiles; t += (I)gridDim.x) {
        I r = t / ta;
        const I a0 = (t - r * ta) * SX_TILE;
        I o = r / tb;
        const I b0 = (r - o * tb) * SX_TILE;
        I off[N];
#pragma unroll
        for (int k = 0; k < N; k++) off[k] = 0;
#pragma unroll 1
        for (int d = nd - 3; d >= 0; d--) {   /* the outer dims */
            I s = (I)ix.shape[d];
            I c = o % s;
            o /= s;
#pragma unroll
            for (int k = 0; k < N; k++) off[k] += c * (I)ix.stride[k][d];
        }
        char *q[N];
#pragma unroll
        for (int k = 0; k < N; k++) q[k] = base[k] + off[k];
#pragma unroll
        for (int k = 1; k < N; k++) {
            if (!((mask >> k) & 1)) continue;
            const I b = b0 + tx;
#pragma unroll
            for (int j = 0; j < SX_TILE; j += SX_TROWS) {
                const I a = a0 + ty + j;
                if (a < na && b < nb)
                    sx_copy_elem(sm[k] + ((ty + j) * (SX_TILE + 1) + tx) * es[k],
                                 q[k] + a * sa[k] + b * sb[k], es[k]);
            }
        }
        __syncthreads();
        const I a = a0 + tx;
#pragma unroll
        for (int j = 0; j < SX_TILE; j += SX_TROWS) {
            const I b = b0 + ty + j;
            if (a < na && b < nb) {
                char *p[N];
#pragma unroll
                for (int k = 0; k < N; k++)
                    p[k] = ((mask >> k) & 1) ? sm[k] + (tx * (SX_TILE + 1) + ty + j) * es[k]
                                             : q[k] + a * sa[k] + b * sb[k];
                body(p);
            }
        }
        __syncthreads();
    }
}

/* Shared-memory tile of one operand: [a][b], rows padded to SX_TILE + 1 elements. */
#define SX_SMEM_TILE(NAME, T) __shared__ T NAME[SX_TILE][SX_TILE + 1]

template <class I, class SA, class SB, class SO, class F>
SX_DEV void sx_binary_contig(const sx_indexer<3> &ix, char *const (&b)[3], F f) {
    typedef typename SA::T TA; typedef typename SB::T TB; typedef typename SO::T TO;
    TO *o = (TO *)b[0];
    const TA *x = (const TA *)b[1];
    const TB *y = (const TB *)b[2];
    const bool xs = (ix.scalar >> 1) & 1, ys = (ix.scalar >> 2) & 1;
    const I n = (I)ix.n, xst = xs ? 0 : 1, yst = ys ? 0 : 1;
    I lo = 0;
    if (ix.vec) {
        I n4 = n >> 2;
        sx_grid_loop<I>(0, n4, [&](I i) {
            sx_v4<TA> a = sx_load4<TA>(x, i, xs);
            sx_v4<TB> c = sx_load4<TB>(y, i, ys);
            sx_v4<TO> r;
#pragma unroll
            for (int j = 0; j < 4; j++) r.v[j] = f(SA::ld(a.v[j]), SB::ld(c.v[j]));
            *sx_v4_at(o, i) = r;
        });
        lo = n4 * 4;
    }
    sx_grid_loop<I>(lo, n, [&](I i) { o[i] = f(SA::ld(x[i * xst]), SB::ld(y[i * yst])); });
}

template <class SA, class SB, class SO, class F>
SX_DEV void sx_binary(const sx_indexer<3> &ix, F f) {
    typedef typename SA::T TA; typedef typename SB::T TB; typedef typename SO::T TO;
    int64_t sv[3];
    char *b[3];
    sx_bases<3>(ix, sv, b);
    if (ix.contig) {
        if (ix.idx32) sx_binary_contig<uint32_t, SA, SB, SO>(ix, b, f);
        else sx_binary_contig<int64_t, SA, SB, SO>(ix, b, f);
        return;
    }
    auto body = [&](char *(&p)[3]) {
        *(TO *)p[0] = f(SA::ld(*(const TA *)p[1]), SB::ld(*(const TB *)p[2]));
    };
    if (ix.tile) {   /* the host sets tile only with idx32 */
        SX_SMEM_TILE(sa, TA);
        SX_SMEM_TILE(sb, TB);
        char *const sm[3] = {nullptr, (char *)&sa[0][0], (char *)&sb[0][0]};
        const int es[3] = {(int)sizeof(TO), (int)sizeof(TA), (int)sizeof(TB)};
        sx_ew_tiled<3, int32_t>(ix, b, sm, es, body);
        return;
    }
    if (ix.idx32) sx_ew_loop_t<3, int32_t>(ix, b, body);
    else sx_ew_loop_t<3, int64_t>(ix, b, body);
}

template <class I, class SA, class SO, class F>
SX_DEV void sx_unary_contig(const sx_indexer<2> &ix, char *const (&b)[2], F f) {
    typedef typename SA::T TA; typedef typename SO::T TO;
    TO *o = (TO *)b[0];
    const TA *x = (const TA *)b[1];
    const I n = (I)ix.n;
    if ((ix.scalar >> 1) & 1) {   /* a fill */
        const TO c = f(SA::ld(*x));
        sx_grid_loop<I>(0, n, [&](I i) { o[i] = c; });
        return;
    }
    I lo = 0;
    if (ix.vec) {
        I n4 = n >> 2;
        sx_grid_loop<I>(0, n4, [&](I i) {
            sx_v4<TA> a = *sx_v4_at(x, i);
            sx_v4<TO> r;
#pragma unroll
            for (int j = 0; j < 4; j++) r.v[j] = f(SA::ld(a.v[j]));
            *sx_v4_at(o, i) = r;
        });
        lo = n4 * 4;
    }
    sx_grid_loop<I>(lo, n, [&](I i) { o[i] = f(SA::ld(x[i])); });
}

template <class SA, class SO, class F>
SX_DEV void sx_unary(const sx_indexer<2> &ix, F f) {
    typedef typename SA::T TA; typedef typename SO::T TO;
    int64_t sv[2];
    char *b[2];
    sx_bases<2>(ix, sv, b);
    if (ix.contig) {
        if (ix.idx32) sx_unary_contig<uint32_t, SA, SO>(ix, b, f);
        else sx_unary_contig<int64_t, SA, SO>(ix, b, f);
        return;
    }
    auto body = [&](char *(&p)[2]) { *(TO *)p[0] = f(SA::ld(*(const TA *)p[1])); };
    if (ix.tile) {   /* the host sets tile only with idx32 */
        SX_SMEM_TILE(sa, TA);
        char *const sm[2] = {nullptr, (char *)&sa[0][0]};
        const int es[2] = {(int)sizeof(TO), (int)sizeof(TA)};
        sx_ew_tiled<2, int32_t>(ix, b, sm, es, body);
        return;
    }
    if (ix.idx32) sx_ew_loop_t<2, int32_t>(ix, b, body);
    else sx_ew_loop_t<2, int64_t>(ix, b, body);
}

/* out = c ? a : b, c bool (1 byte), a/b/out of dtype S: a pure copy, no conversion. */
template <class S>
SX_DEV void sx_where(const sx_indexer<4> &ix) {
    typedef typename S::T T;
    int64_t sv[4];
    char *b[4];
    sx_bases<4>(ix, sv, b);
    if (ix.contig) {
        T *o = (T *)b[0];
        const uint8_t *c = (const uint8_t *)b[1];
        const T *x = (const T *)b[2], *y = (const T *)b[3];
        const int64_t cs = (ix.scalar >> 1) & 1 ? 0 : 1, xs = (ix.scalar >> 2) & 1 ? 0 : 1,
                      ys = (ix.scalar >> 3) & 1 ? 0 : 1;
        sx_grid_loop<int64_t>(0, ix.n, [&](int64_t i) { o[i] = c[i * cs] ? x[i * xs] : y[i * ys]; });
        return;
    }
    auto body = [&](char *(&p)[4]) {
        *(T *)p[0] = *(const uint8_t *)p[1] ? *(const T *)p[2] : *(const T *)p[3];
    };
    if (ix.tile) {   /* the host sets tile only with idx32 */
        SX_SMEM_TILE(sc, uint8_t);
        SX_SMEM_TILE(sa, T);
        SX_SMEM_TILE(sb, T);
        char *const sm[4] = {nullptr, (char *)&sc[0][0], (char *)&sa[0][0], (char *)&sb[0][0]};
        const int es[4] = {(int)sizeof(T), 1, (int)sizeof(T), (int)sizeof(T)};
        sx_ew_tiled<4, int32_t>(ix, b, sm, es, body);
        return;
    }
    if (ix.idx32) sx_ew_loop_t<4, int32_t>(ix, b, body);
    else sx_ew_loop_t<4, int64_t>(ix, b, body);
}

#endif
