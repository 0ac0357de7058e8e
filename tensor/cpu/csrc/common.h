/* Shared definitions of the CPU kernels: element types, 16-bit float conversions,
 * the strided N-d loop skeleton and the OpenMP policy.
 *
 * Each dtype has a suffix (f32, i8, b8, ...) and four macros:
 *   T_sfx   storage type         C_sfx   compute type
 *   LD_sfx  storage -> compute   ST_sfx  compute -> storage
 * 16-bit floats are stored as uint16_t and computed in float, converted with
 * branch-free bit arithmetic (cuda_src/scalar/types.h) so that loops over them still vectorise.
 * Signed overflow wraps: the library is built with -fwrapv, as NumPy's ints wrap. */
#ifndef STRIDEX_COMMON_H
#define STRIDEX_COMMON_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SX_INLINE static inline __attribute__((always_inline))
#define SX_MAXDIM 32
/* Below this many elements a kernel runs on the calling thread: waking a team
 * costs more than the work. */
#define SX_PAR_MIN 131072

/* Integer types and the 16-bit float conversions (sx_h2f, sx_f2h, sx_bf2f, sx_f2bf) are the
 * CUDA kernels' own: one header for both devices. */
#include "scalar/types.h"

#define T_b8 uint8_t
#define C_b8 int
#define LD_b8(x) ((int)(x))
#define ST_b8(x) ((uint8_t)((x) != 0))
#define T_i8 int8_t
#define T_u8 uint8_t
#define T_i16 int16_t
#define T_i32 int32_t
#define T_i64 int64_t
#define T_u16 uint16_t
#define T_u32 uint32_t
#define T_u64 uint64_t
#define T_f32 float
#define T_f64 double
#define T_f16 uint16_t
#define T_bf16 uint16_t
#define C_i8 int8_t
#define C_u8 uint8_t
#define C_i16 int16_t
#define C_i32 int32_t
#define C_i64 int64_t
#define C_u16 uint16_t
#define C_u32 uint32_t
#define C_u64 uint64_t
#define C_f32 float
#define C_f64 double
#define C_f16 float
#define C_bf16 float
#define LD_i8(x) (x)
#define LD_u8(x) (x)
#define LD_i16(x) (x)
#define LD_i32(x) (x)
#define LD_i64(x) (x)
#define LD_u16(x) (x)
#define LD_u32(x) (x)
#define LD_u64(x) (x)
#define LD_f32(x) (x)
#define LD_f64(x) (x)
#define LD_f16(x) sx_h2f(x)
#define LD_bf16(x) sx_bf2f(x)
#define ST_i8(x) ((int8_t)(x))
#define ST_u8(x) ((uint8_t)(x))
#define ST_i16(x) ((int16_t)(x))
#define ST_i32(x) ((int32_t)(x))
#define ST_i64(x) ((int64_t)(x))
#define ST_u16(x) ((uint16_t)(x))
#define ST_u32(x) ((uint32_t)(x))
#define ST_u64(x) ((uint64_t)(x))
#define ST_f32(x) ((float)(x))
#define ST_f64(x) ((double)(x))
/* a float rounds once to 16 bits; wider values (double, integers) through sx_d2f_odd, so that
 * they too round once */
#define ST_f16(x) _Generic((x), float: sx_f2h((float)(x)), default: sx_f2h(sx_d2f_odd((double)(x))))
#define ST_bf16(x) _Generic((x), float: sx_f2bf((float)(x)), \
                            default: sx_f2bf(sx_d2f_odd((double)(x))))
/* complex64 / complex128: the structs of scalar/complex.h (stored as computed); the
 * casts to and from them are explicit expressions (tensor/cpu/kernels.py) */
#include "scalar/complex.h"
#define T_c64 sx_cf
#define T_c128 sx_cd
#define C_c64 sx_cf
#define C_c128 sx_cd
#define LD_c64(x) (x)
#define LD_c128(x) (x)
#define ST_c64(x) (x)
#define ST_c128(x) (x)

/* A run is the innermost dimension of an N-d loop: n elements, operand k at p[k]
 * advancing by s[k] bytes. */
typedef void (*sx_run_fn)(char **p, const int64_t *s, int64_t n);

/* The N-d strided loop over `nargs` operands. meta = shape[nd], then the byte
 * strides of each operand (nd each). The linear index space is cut into one
 * contiguous slice per thread; each slice walks its multi-index in runs of the
 * last dimension, so a coalesced contiguous operand gives one long run per thread. */
/* Transposed operands (an operand whose last-dim stride is longer than its
 * second-to-last one): walk the last two dims in SX_TILE x SX_TILE tiles so the
 * lines read across rows stay in L1 while the tile's rows consume them. */
#define SX_TILE 32
SX_INLINE int sx_wants_tiles(int nargs, int nd, const int64_t *meta) {
    if (nd < 2 || meta[nd - 1] < SX_TILE || meta[nd - 2] < SX_TILE) return 0;
    for (int k = 0; k < nargs; k++) {
        int64_t a = meta[nd * (k + 1) + nd - 1], b = meta[nd * (k + 1) + nd - 2];
        if (a < 0) a = -a;
        if (b < 0) b = -b;
        if (a > b && b != 0) return 1;
    }
    return 0;
}

static __attribute__((noinline)) void sx_ew_tiled(int nargs, int nd, const int64_t *meta, char **base, int nthreads, sx_run_fn run) {
    const int64_t *shape = meta;
    int64_t R = shape[nd - 2], C = shape[nd - 1], outer = 1;
    for (int d = 0; d < nd - 2; d++) outer *= shape[d];
    int64_t tr = (R + SX_TILE - 1) / SX_TILE, tc = (C + SX_TILE - 1) / SX_TILE;
    int64_t ntiles = outer * tr * tc;
    int nt = (outer * R * C >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t t = 0; t < ntiles; t++) {
        int64_t o = t / (tr * tc), i0 = (t / tc) % tr * SX_TILE, j0 = t % tc * SX_TILE;
        int64_t ni = R - i0 < SX_TILE ? R - i0 : SX_TILE, nj = C - j0 < SX_TILE ? C - j0 : SX_TILE;
        char *p[4];
        int64_t s[4];
        for (int k = 0; k < nargs; k++) {
            const int64_t *st = meta + nd * (k + 1);
            int64_t off = 0, rem = o;
            for (int d = nd - 3; d >= 0; d--) { off += (rem % shape[d]) * st[d]; rem /= shape[d]; }
            p[k] = base[k] + off + i0 * st[nd - 2] + j0 * st[nd - 1];
            s[k] = st[nd - 1];
        }
        for (int64_t i = 0; i < ni; i++) {
            run(p, s, nj);
            for (int k = 0; k < nargs; k++) p[k] += meta[nd * (k + 1) + nd - 2];
        }
    }
}

static __attribute__((noinline)) void sx_ew_loop(int nargs, int nd, const int64_t *meta, char **base, int nthreads, sx_run_fn run) {
    const int64_t *shape = meta;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    if (n <= 0) return;
    if (sx_wants_tiles(nargs, nd, meta)) { sx_ew_tiled(nargs, nd, meta, base, nthreads, run); return; }
    int nt = (n >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = 0, T = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(); T = omp_get_num_threads();
#endif
        int64_t lo = (int64_t)((__int128)n * t / T), hi = (int64_t)((__int128)n * (t + 1) / T);
        int64_t idx[SX_MAXDIM];
        char *p[4];
        int64_t s[4];
        int64_t rem = lo;
        for (int k = 0; k < nargs; k++) p[k] = base[k];
        for (int d = nd - 1; d >= 0; d--) {
            idx[d] = rem % shape[d];
            rem /= shape[d];
            for (int k = 0; k < nargs; k++) p[k] += idx[d] * meta[nd * (k + 1) + d];
        }
        for (int k = 0; k < nargs; k++) s[k] = meta[nd * (k + 1) + nd - 1];
        int64_t inner = shape[nd - 1];
        for (int64_t i = lo; i < hi;) {
            int64_t len = inner - idx[nd - 1];
            if (len > hi - i) len = hi - i;
            run(p, s, len);
            i += len;
            if (i >= hi) break;
            for (int k = 0; k < nargs; k++) p[k] += len * s[k];
            idx[nd - 1] += len;
            for (int d = nd - 1; d > 0 && idx[d] == shape[d]; d--) {
                idx[d] = 0;
                idx[d - 1]++;
                for (int k = 0; k < nargs; k++)
                    p[k] += meta[nd * (k + 1) + d - 1] - shape[d] * meta[nd * (k + 1) + d];
            }
        }
    }
}

#define SX_FN SX_INLINE
#include "intops.h"  /* integer helpers shared with the other device */

/* NumPy's float floor_divide / remainder (Python semantics, sign of the divisor). */
#define SX_DEF_FDIVMOD(T, SUF) \
SX_INLINE T sx_fmod_py##SUF(T a, T b) { \
    T m = fmod##SUF(a, b); \
    if (b == 0) return m; \
    if (m != 0) { if ((b < 0) != (m < 0)) m += b; } else m = copysign##SUF((T)0, b); \
    return m; } \
SX_INLINE T sx_floordiv##SUF(T a, T b) { \
    if (b == 0) return a / b; \
    T m = fmod##SUF(a, b); \
    T d = (a - m) / b; \
    if (m != 0 && ((b < 0) != (m < 0))) d -= 1; \
    if (d == 0) return copysign##SUF((T)0, a / b); \
    T f = floor##SUF(d); \
    if (d - f > (T)0.5) f += 1; \
    return f; }
SX_DEF_FDIVMOD(float, f)
SX_DEF_FDIVMOD(double, )

/* logaddexp and the 16-bit nextafter: the CUDA kernels' own (one header for both devices) */
#include "scalar/float_ops.h"
#include "scalar/special.h"   /* erfinv, digamma, i0: the CUDA kernels' own */

/* Vectorisable exp/log/tanh/sigmoid (vmath.h): libm's are scalar calls that stop the
 * compiler from vectorising a loop; these are select-based and accurate to ~1 ulp. */
#include "vmath.h"
/* e / (1 + e) or 1 / (1 + e), e = exp(-|a|): no overflow of exp, subnormal results below -709 */
static inline double sx_sigmoid_d(double a) { double e = vm_exp(-fabs(a)); return (a < 0 ? e : 1.0) / (1.0 + e); }
#define SX_EXP(x) _Generic((x), float: vm_expf, default: vm_exp)(x)
#define SX_LOG(x) _Generic((x), float: vm_logf, default: vm_log)(x)
#define SX_TANH(x) _Generic((x), float: vm_tanhf, default: tanh)(x)
#define SX_SIGMOID(x) _Generic((x), float: vm_sigmoidf, default: sx_sigmoid_d)(x)
/* float arctan, sine, cosine (SX_F1(atan, a) pastes atanf, which this names): vectorisable,
 * computed in double (vmath.h) */
#define atanf vm_atanf
#define sinf vm_sinf
#define cosf vm_cosf

/* Type-generic float functions: float -> the f-suffixed libm call, double -> plain. */
#define SX_F1(name, x) _Generic((x), float: name##f, default: name)(x)
#define SX_F2(name, x, y) _Generic((x), float: name##f, default: name)(x, y)

#endif
