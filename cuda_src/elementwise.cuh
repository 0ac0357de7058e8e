/* Elementwise kernel templates (mirror tensor/cpu/csrc/elementwise.h).
 *
 * The generated module (tensor/cuda/kernels.py) defines, per op, a functor
 *   struct NAME_fn { __device__ SO::T operator()(SA::C a[, SB::C b]) const { return SO::st(EXPR); } };
 * and an entry point
 *   extern "C" __global__ void NAME(sx_indexer<2 or 3> ix) { sx_unary<SA, SO>(ix, NAME_fn()); }
 * Operand 0 is the output; `where` takes (out, cond, a, b). The indexer comes in by value.
 * Paths: contiguous (no index arithmetic; 4 elements per load when the host found every
 * operand aligned), 32-bit strided and 64-bit strided, all grid-stride loops. A Python scalar
 * operand travels inside the indexer (sval) and is read with stride 0. */
#ifndef STRIDEX_ELEMENTWISE_CUH
#define STRIDEX_ELEMENTWISE_CUH
#include "common.cuh"

template <class T>
struct alignas(sizeof(T) * 4) sx_v4 { T v[4]; };

template <class I, class F>
SX_DEV void sx_grid_loop(I lo, I n, F f) {
    I step = (I)blockDim.x * (I)gridDim.x;
#pragma unroll 1
    for (I i = lo + (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < n; i += step) f(i);
}

/* Four consecutive elements from i*4, or the scalar four times. */
template <class T>
SX_DEV sx_v4<T> sx_load4(const T *p, int64_t i, bool scal) {
    if (!scal) return ((const sx_v4<T> *)p)[i];
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
            ((sx_v4<TO> *)o)[i] = r;
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
            sx_v4<TA> a = ((const sx_v4<TA> *)x)[i];
            sx_v4<TO> r;
#pragma unroll
            for (int j = 0; j < 4; j++) r.v[j] = f(SA::ld(a.v[j]));
            ((sx_v4<TO> *)o)[i] = r;
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
    if (ix.idx32) sx_ew_loop_t<4, int32_t>(ix, b, body);
    else sx_ew_loop_t<4, int64_t>(ix, b, body);
}

/* Cast: storage of SA -> compute -> storage of SO (same rounding as the CPU's casts). */
template <class SA, class SO>
struct sx_cast_fn {
    __device__ __forceinline__ typename SO::T operator()(typename SA::C a) const { return SO::st(a); }
};

#endif
