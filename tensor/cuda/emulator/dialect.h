/* CPU emulation of the CUDA device side, part 1: the dialect (force-included:
 * g++ -include dialect.h module.cu). The unchanged module source compiles with g++ as C++17:
 * the qualifiers, builtin variables and vector types NVRTC has built in, and the intrinsics
 * (sync and warp operations, atomics, bit casts, integer and float intrinsics). The sync and
 * warp intrinsics are the scheduler's barriers (scheduler.h: every kernel thread is a fiber
 * on the calling OS thread).
 *
 * __shared__ is `static`: one block runs at a time, so a function-local static is the block's
 * shared memory (it persists across blocks and launches; CUDA leaves it uninitialized anyway).
 *
 * SX_EMULATE tells cuda_src/arch.cuh (the one kernel header that tests it) to use its plain
 * C++ forms of the inline-PTX intrinsics. */
#ifndef STRIDEX_EMU_DIALECT_H
#define STRIDEX_EMU_DIALECT_H

#define SX_EMULATE 1

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <cmath>
#include <type_traits>
#include <utility>
#include <time.h>
#include <sys/mman.h>

/* ---------------- qualifiers ---------------- */
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__

#define EMU_API extern "C" __attribute__((visibility("default"), used))

/* ---------------- builtin variables ---------------- */
struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
#define warpSize 32

/* ---------------- vector types (NVRTC has them built in) ---------------- */
#define EMU_VEC2(N, T, A) struct __attribute__((aligned(A))) N { T x, y; }; \
    static inline N make_##N(T x, T y) { N r; r.x = x; r.y = y; return r; }
#define EMU_VEC3(N, T) struct N { T x, y, z; }; \
    static inline N make_##N(T x, T y, T z) { N r; r.x = x; r.y = y; r.z = z; return r; }
#define EMU_VEC4(N, T, A) struct __attribute__((aligned(A))) N { T x, y, z, w; }; \
    static inline N make_##N(T x, T y, T z, T w) { N r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
EMU_VEC2(char2, signed char, 2) EMU_VEC4(char4, signed char, 4)
EMU_VEC2(uchar2, unsigned char, 2) EMU_VEC4(uchar4, unsigned char, 4)
EMU_VEC2(short2, short, 4) EMU_VEC4(short4, short, 8)
EMU_VEC2(ushort2, unsigned short, 4) EMU_VEC4(ushort4, unsigned short, 8)
EMU_VEC2(int2, int, 8) EMU_VEC3(int3, int) EMU_VEC4(int4, int, 16)
EMU_VEC2(uint2, unsigned, 8) EMU_VEC4(uint4, unsigned, 16)
EMU_VEC2(float2, float, 8) EMU_VEC3(float3, float) EMU_VEC4(float4, float, 16)
EMU_VEC2(double2, double, 16) EMU_VEC2(longlong2, long long, 16)
EMU_VEC2(ulonglong2, unsigned long long, 16)
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { uint3 r; r.x = x; r.y = y; r.z = z; return r; }
#undef EMU_VEC2
#undef EMU_VEC3
#undef EMU_VEC4

#include "scheduler.h"   /* the fibers, barriers and launches the intrinsics below use */

/* ---------------- sync intrinsics ---------------- */
static inline void __syncthreads() { emu_block_sync(0); }
static inline int __syncthreads_count(int p) { return emu_block_sync(p); }
static inline int __syncthreads_and(int p) { int c = emu_block_sync(p); return c == emu.bar_alive; }
static inline int __syncthreads_or(int p) { return emu_block_sync(p) != 0; }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { emu_warp_op(mask, EMU_K_SYNC, 0, 0); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline unsigned __activemask() { emu_check_fiber(); return emu_my_warp()->alive; }
static inline unsigned __ballot_sync(unsigned mask, int p) {
    return (unsigned)emu_warp_op(mask, EMU_K_VOTE, p != 0, 0);
}
static inline int __any_sync(unsigned mask, int p) { return __ballot_sync(mask, p) != 0; }
static inline int __all_sync(unsigned mask, int p) {
    uint64_t r = emu_warp_op(mask, EMU_K_VOTE, p != 0, 0);
    return (unsigned)r == (unsigned)(r >> 32);
}
static inline unsigned __lanemask_lt() { return (1u << emu_lane()) - 1u; }
[[noreturn]] static inline void __trap() {
    emu_check_fiber();
    emu_fail("__trap() in kernel %s, block (%u,%u,%u), thread (%u,%u,%u)", emu.kernel,
             blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
    emu.fib[emu.cur].state = EMU_DONE;
    emu_to_sched();
    abort();   /* never resumed */
}
static inline void __brkpt() { __trap(); }
static inline long long clock64() {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static inline void __nanosleep(unsigned) {}

/* Shuffles, PTX shfl.sync semantics: c = ((32 - width) << 8) | clamp; the lane offset or
 * index uses its low 5 bits; an out-of-segment source gives the caller its own value. */
enum { EMU_SH_IDX, EMU_SH_UP, EMU_SH_DOWN, EMU_SH_XOR };
static inline int emu_shfl_src(int mode, int b, int width) {
    int lane = emu_lane();
    if (width <= 0 || width > 32 || (width & (width - 1))) width = 32;
    int segmask = (32 - width) & 31;          /* high bits: the segment */
    int bval = b & 31;
    int minLane = lane & segmask;
    int maxLane = (mode == EMU_SH_UP) ? minLane : (minLane | (31 & ~segmask));
    int j; bool ok;
    switch (mode) {
    case EMU_SH_UP: j = lane - bval; ok = j >= maxLane; break;
    case EMU_SH_DOWN: j = lane + bval; ok = j <= maxLane; break;
    case EMU_SH_XOR: j = lane ^ bval; ok = j <= maxLane; break;
    default: j = minLane | (bval & ~segmask); ok = j <= maxLane; break;
    }
    return ok ? j : lane;
}
template <class T>
static inline T emu_shfl(unsigned mask, T v, int mode, int b, int width) {
    static_assert(sizeof(T) <= 8, "shuffle of more than 8 bytes");
    uint64_t u = 0;
    memcpy(&u, &v, sizeof(T));
    u = emu_warp_op(mask, EMU_K_SHFL, u, emu_shfl_src(mode, b, width));
    T r;
    memcpy(&r, &u, sizeof(T));
    return r;
}
#define EMU_SHFL_T(T)                                                                          \
static inline T __shfl_sync(unsigned m, T v, int s, int w = 32) { return emu_shfl(m, v, EMU_SH_IDX, s, w); } \
static inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) { return emu_shfl(m, v, EMU_SH_UP, (int)d, w); } \
static inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) { return emu_shfl(m, v, EMU_SH_DOWN, (int)d, w); } \
static inline T __shfl_xor_sync(unsigned m, T v, int d, int w = 32) { return emu_shfl(m, v, EMU_SH_XOR, d, w); }
EMU_SHFL_T(int) EMU_SHFL_T(unsigned) EMU_SHFL_T(long) EMU_SHFL_T(unsigned long)
EMU_SHFL_T(long long) EMU_SHFL_T(unsigned long long) EMU_SHFL_T(float) EMU_SHFL_T(double)
#undef EMU_SHFL_T

/* ---------------- atomics: one OS thread, fibers switch only at sync points ---------------- */
#define EMU_ATOMIC_INT(T)                                                                 \
static inline T atomicAdd(T *p, T v) { T o = *p; *p = (T)(o + v); return o; }            \
static inline T atomicSub(T *p, T v) { T o = *p; *p = (T)(o - v); return o; }            \
static inline T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }                    \
static inline T atomicMax(T *p, T v) { T o = *p; *p = o > v ? o : v; return o; }         \
static inline T atomicMin(T *p, T v) { T o = *p; *p = o < v ? o : v; return o; }         \
static inline T atomicAnd(T *p, T v) { T o = *p; *p = o & v; return o; }                 \
static inline T atomicOr(T *p, T v) { T o = *p; *p = o | v; return o; }                  \
static inline T atomicXor(T *p, T v) { T o = *p; *p = o ^ v; return o; }                 \
static inline T atomicCAS(T *p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
EMU_ATOMIC_INT(int) EMU_ATOMIC_INT(unsigned) EMU_ATOMIC_INT(unsigned long long)
EMU_ATOMIC_INT(long long)
#undef EMU_ATOMIC_INT
static inline unsigned short atomicCAS(unsigned short *p, unsigned short c, unsigned short v) {
    unsigned short o = *p; if (o == c) *p = v; return o;
}
static inline float atomicAdd(float *p, float v) { float o = *p; *p = o + v; return o; }
static inline double atomicAdd(double *p, double v) { double o = *p; *p = o + v; return o; }
static inline float atomicExch(float *p, float v) { float o = *p; *p = v; return o; }
static inline unsigned atomicInc(unsigned *p, unsigned v) { unsigned o = *p; *p = o >= v ? 0 : o + 1; return o; }
static inline unsigned atomicDec(unsigned *p, unsigned v) {
    unsigned o = *p; *p = (o == 0 || o > v) ? v : o - 1; return o;
}
#define EMU_ATOMIC_ALIAS(N) \
template <class T, class... A> static inline auto N##_block(T *p, A... a) { return N(p, a...); } \
template <class T, class... A> static inline auto N##_system(T *p, A... a) { return N(p, a...); }
EMU_ATOMIC_ALIAS(atomicAdd) EMU_ATOMIC_ALIAS(atomicSub) EMU_ATOMIC_ALIAS(atomicExch)
EMU_ATOMIC_ALIAS(atomicMax) EMU_ATOMIC_ALIAS(atomicMin) EMU_ATOMIC_ALIAS(atomicAnd)
EMU_ATOMIC_ALIAS(atomicOr) EMU_ATOMIC_ALIAS(atomicXor) EMU_ATOMIC_ALIAS(atomicCAS)
#undef EMU_ATOMIC_ALIAS

/* ---------------- bit casts, integer intrinsics ---------------- */
template <class To, class From>
static inline To emu_bitcast(From f) { static_assert(sizeof(To) == sizeof(From), "size"); To t; memcpy(&t, &f, sizeof t); return t; }
static inline float __int_as_float(int x) { return emu_bitcast<float>(x); }
static inline int __float_as_int(float x) { return emu_bitcast<int>(x); }
static inline float __uint_as_float(unsigned x) { return emu_bitcast<float>(x); }
static inline unsigned __float_as_uint(float x) { return emu_bitcast<unsigned>(x); }
static inline double __longlong_as_double(long long x) { return emu_bitcast<double>(x); }
static inline long long __double_as_longlong(double x) { return emu_bitcast<long long>(x); }
static inline int __double2hiint(double x) { return (int)(emu_bitcast<unsigned long long>(x) >> 32); }
static inline int __double2loint(double x) { return (int)emu_bitcast<unsigned long long>(x); }
static inline double __hiloint2double(int hi, int lo) {
    return emu_bitcast<double>(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);
}
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned)((v >> (((s >> (4 * i)) & 7u) * 8)) & 0xffu) << (8 * i);
    return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned)((v << (s & 31)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned)(v >> (s & 31));
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline int __mul24(int a, int b) { return (int)((unsigned)((a << 8) >> 8) * (unsigned)((b << 8) >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __sad(int a, int b, unsigned c) { return (int)((a > b ? (unsigned)(a - b) : (unsigned)(b - a)) + c); }
static inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return (a > b ? a - b : b - a) + c; }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }
static inline unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }

template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline T __ldca(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldlu(const T *p) { return *p; }
template <class T> static inline T __ldcv(const T *p) { return *p; }
template <class T> static inline void __stcg(T *p, T v) { *p = v; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline void __stwb(T *p, T v) { *p = v; }
template <class T> static inline void __stwt(T *p, T v) { *p = v; }

/* ---------------- float intrinsics (SSE arithmetic is IEEE single/double) ---------------- */
static inline float emu_fopaque(float x) { __asm__("" : "+x"(x)); return x; }   /* no contraction */
static inline double emu_dopaque(double x) { __asm__("" : "+x"(x)); return x; }
static inline float __fadd_rn(float a, float b) { return emu_fopaque(a + b); }
static inline float __fsub_rn(float a, float b) { return emu_fopaque(a - b); }
static inline float __fmul_rn(float a, float b) { return emu_fopaque(a * b); }
static inline float __fdiv_rn(float a, float b) { return emu_fopaque(a / b); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __frcp_rn(float a) { return emu_fopaque(1.0f / a); }
static inline float __fadd_rz(float a, float b) { return emu_fopaque(a + b); }  /* rz: not emulated */
static inline float __fmul_rz(float a, float b) { return emu_fopaque(a * b); }
static inline double __dadd_rn(double a, double b) { return emu_dopaque(a + b); }
static inline double __dsub_rn(double a, double b) { return emu_dopaque(a - b); }
static inline double __dmul_rn(double a, double b) { return emu_dopaque(a * b); }
static inline double __ddiv_rn(double a, double b) { return emu_dopaque(a / b); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline double __drcp_rn(double a) { return emu_dopaque(1.0 / a); }
/* glibc declares __expf, __logf, __sinf, ... itself (aliases of expf, ...): macros instead */
#define __expf(x) expf(x)
#define __exp10f(x) powf(10.0f, (x))
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __sincosf(x, s, c) (*(s) = sinf(x), *(c) = cosf(x), (void)0)
#define __powf(x, y) powf((x), (y))
static inline float __fdividef(float x, float y) { return x / y; }
static inline float fdividef(float x, float y) { return x / y; }
static inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
static inline float sinpif(float x) { return sinf((float)M_PI * x); }
static inline float cospif(float x) { return cosf((float)M_PI * x); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
static inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
static inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
static inline long long __float2ll_rz(float x) { return (long long)x; }
static inline int __double2int_rn(double x) { return (int)nearbyint(x); }
static inline int __double2int_rz(double x) { return (int)x; }
static inline long long __double2ll_rn(double x) { return (long long)nearbyint(x); }
static inline long long __double2ll_rz(double x) { return (long long)x; }
static inline float __double2float_rn(double x) { return (float)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }

/* CUDA's global min/max overloads */
#define EMU_MINMAX(A, B, R)                                                       \
static inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }              \
static inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
EMU_MINMAX(int, int, int) EMU_MINMAX(unsigned, unsigned, unsigned)
EMU_MINMAX(int, unsigned, unsigned) EMU_MINMAX(unsigned, int, unsigned)
EMU_MINMAX(long, long, long) EMU_MINMAX(unsigned long, unsigned long, unsigned long)
EMU_MINMAX(long long, long long, long long)
EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
EMU_MINMAX(long long, unsigned long long, unsigned long long)
EMU_MINMAX(unsigned long long, long long, unsigned long long)
#undef EMU_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(float a, double b) { return fmin((double)a, b); }
static inline double max(float a, double b) { return fmax((double)a, b); }
static inline double min(double a, float b) { return fmin(a, (double)b); }
static inline double max(double a, float b) { return fmax(a, (double)b); }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }

#endif
