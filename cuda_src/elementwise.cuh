/* Elementwise kernel templates (mirror tensor/cpu/csrc/elementwise.h).
 *
 * The generated module (tensor/cuda/kernels.py) defines, per op, a functor
 *   struct NAME_fn { __device__ SO::T operator()(SA::C a[, SB::C b]) const { return SO::st(EXPR); } };
 * and an entry point
 *   extern "C" __global__ void NAME(sx_indexer<2 or 3> ix) { sx_unary<SA, SO>(ix, NAME_fn()); }
 * Operand 0 is the output; `where` takes (out, cond, a, b). The indexer comes in by value.
 * Each kernel has a contiguous fast path (no index arithmetic), a 32-bit strided path and a
 * 64-bit strided path, all grid-stride loops. */
#ifndef STRIDEX_ELEMENTWISE_CUH
#define STRIDEX_ELEMENTWISE_CUH
#include "common.cuh"

template <class SA, class SO, class F>
SX_DEV void sx_unary(const sx_indexer<2> &ix, F f) {
    typedef typename SA::T TA; typedef typename SO::T TO;
    if (ix.contig) {
        TO *o = (TO *)ix.ptr[0]; const TA *x = (const TA *)ix.ptr[1];
        if (ix.idx32) {
            uint32_t n = (uint32_t)ix.n, step = blockDim.x * gridDim.x;
            #pragma unroll 1
            for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                o[i] = f(SA::ld(x[i]));
        } else {
            int64_t n = ix.n, step = (int64_t)blockDim.x * gridDim.x;
            #pragma unroll 1
            for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                o[i] = f(SA::ld(x[i]));
        }
        return;
    }
    auto body = [&](char *(&p)[2]) { *(TO *)p[0] = f(SA::ld(*(const TA *)p[1])); };
    if (ix.idx32) sx_ew_loop_t<2, int32_t>(ix, body);
    else sx_ew_loop_t<2, int64_t>(ix, body);
}

template <class SA, class SB, class SO, class F>
SX_DEV void sx_binary(const sx_indexer<3> &ix, F f) {
    typedef typename SA::T TA; typedef typename SB::T TB; typedef typename SO::T TO;
    if (ix.contig) {
        TO *o = (TO *)ix.ptr[0];
        const TA *x = (const TA *)ix.ptr[1]; const TB *y = (const TB *)ix.ptr[2];
        if (ix.idx32) {
            uint32_t n = (uint32_t)ix.n, step = blockDim.x * gridDim.x;
            #pragma unroll 1
            for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                o[i] = f(SA::ld(x[i]), SB::ld(y[i]));
        } else {
            int64_t n = ix.n, step = (int64_t)blockDim.x * gridDim.x;
            #pragma unroll 1
            for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                o[i] = f(SA::ld(x[i]), SB::ld(y[i]));
        }
        return;
    }
    auto body = [&](char *(&p)[3]) {
        *(TO *)p[0] = f(SA::ld(*(const TA *)p[1]), SB::ld(*(const TB *)p[2]));
    };
    if (ix.idx32) sx_ew_loop_t<3, int32_t>(ix, body);
    else sx_ew_loop_t<3, int64_t>(ix, body);
}

/* out = c ? a : b, c bool (1 byte), a/b/out of dtype S: a pure copy, no conversion. */
template <class S>
SX_DEV void sx_where(const sx_indexer<4> &ix) {
    typedef typename S::T T;
    if (ix.contig) {
        T *o = (T *)ix.ptr[0]; const uint8_t *c = (const uint8_t *)ix.ptr[1];
        const T *x = (const T *)ix.ptr[2], *y = (const T *)ix.ptr[3];
        if (ix.idx32) {
            uint32_t n = (uint32_t)ix.n, step = blockDim.x * gridDim.x;
            #pragma unroll 1
            for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                o[i] = c[i] ? x[i] : y[i];
        } else {
            int64_t n = ix.n, step = (int64_t)blockDim.x * gridDim.x;
            #pragma unroll 1
            for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                o[i] = c[i] ? x[i] : y[i];
        }
        return;
    }
    auto body = [&](char *(&p)[4]) {
        *(T *)p[0] = *(const uint8_t *)p[1] ? *(const T *)p[2] : *(const T *)p[3];
    };
    if (ix.idx32) sx_ew_loop_t<4, int32_t>(ix, body);
    else sx_ew_loop_t<4, int64_t>(ix, body);
}

/* Cast: storage of SA -> compute -> storage of SO (same rounding as the CPU's casts). */
template <class SA, class SO>
struct sx_cast_fn {
    __device__ __forceinline__ typename SO::T operator()(typename SA::C a) const { return SO::st(a); }
};

#endif
