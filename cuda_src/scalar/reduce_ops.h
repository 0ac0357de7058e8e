/* The combines of the reductions and scans, shared by the CPU's loops (tensor/cpu/csrc/
 * reduce.h, instantiated by name from tensor/reductions.py) and the CUDA op structs
 * (cuda_src/reduce.cuh), so both devices fold elements with the same expressions.
 *
 * Floats: a NaN wins max/min (the first NaN is kept by the arg forms) and loses nanmax/nanmin. `|` rather than `||`
 * keeps the selects branch-free so the CPU's loops vectorise; both operands are free of side
 * effects, so the value is the same. LO_sfx / HI_sfx are the identities of max / min. */
#ifndef STRIDEX_SCALAR_REDUCE_OPS_H
#define STRIDEX_SCALAR_REDUCE_OPS_H
#include "scalar/types.h"

/* integer sums and products wrap (types.h sx_wadd) */
#define SX_ADD(a, b) sx_wadd(a, b)
#define SX_MUL(a, b) sx_wmul(a, b)
#define SX_MAXF(a, b) ((((b) > (a)) | ((b) != (b))) ? (b) : (a))
#define SX_MINF(a, b) ((((b) < (a)) | ((b) != (b))) ? (b) : (a))
#define SX_MAXI(a, b) ((b) > (a) ? (b) : (a))
#define SX_MINI(a, b) ((b) < (a) ? (b) : (a))
/* NaN-skipping max / min (nanmax, nanmin): b when it is better or a is NaN (the identity, or
 * a slice of NaNs so far), so a NaN is taken only while no number has been; a slice of NaNs
 * gives NaN. On a NaN-free input they select what SX_MAXF / SX_MINF do (strictly better
 * values: the earlier of equal ones, -0.0 and 0.0 alike, is kept). Integers: plain max / min. */
#define SX_NANMAXF(a, b) ((((b) > (a)) | ((a) != (a))) ? (b) : (a))
#define SX_NANMINF(a, b) ((((b) < (a)) | ((a) != (a))) ? (b) : (a))
#define SX_ANY(a, b) ((a) | ((b) != 0))
#define SX_ALL(a, b) ((a) & ((b) != 0))
/* arg-reductions: does x beat the best so far? */
#define SX_ARGMAXF(x, best) ((x) > (best) || ((x) != (x) && (best) == (best)))
#define SX_ARGMINF(x, best) ((x) < (best) || ((x) != (x) && (best) == (best)))
#define SX_ARGMAXI(x, best) ((x) > (best))
#define SX_ARGMINI(x, best) ((x) < (best))
/* nanargmax / nanargmin: x beats the best so far when it is better, or when the best is NaN
 * and x is not, so a NaN is kept only while no number has been (a slice of NaNs keeps its
 * first). The CPU's loops and the CUDA op then map a NaN best to index -1 (an all-NaN slice,
 * which the caller refuses) and a best equal to LO / HI (-inf / inf: every number of the slice
 * is it) to index 0, NumPy's answer (its argmax over NaN replaced by -inf / inf). */
#define SX_NANARGMAXF(x, best) ((x) > (best) || ((best) != (best) && (x) == (x)))
#define SX_NANARGMINF(x, best) ((x) < (best) || ((best) != (best) && (x) == (x)))

#define LO_b8 0
#define HI_b8 1
#define LO_i8 (-128)
#define HI_i8 127
#define LO_u8 0
#define HI_u8 255
#define LO_i16 (-32768)
#define HI_i16 32767
#define LO_i32 (-2147483647 - 1)
#define HI_i32 2147483647
#define LO_i64 (-9223372036854775807LL - 1)
#define HI_i64 9223372036854775807LL
#define LO_u16 0
#define HI_u16 65535
#define LO_u32 0u
#define HI_u32 4294967295u
#define LO_u64 0ull
#define HI_u64 18446744073709551615ull
#define LO_f16 (-SX_INF_F)
#define HI_f16 SX_INF_F
#define LO_bf16 (-SX_INF_F)
#define HI_bf16 SX_INF_F
#define LO_f32 (-SX_INF_F)
#define HI_f32 SX_INF_F
#define LO_f64 (-SX_INF_D)
#define HI_f64 SX_INF_D
/* the identities of nanmax / nanmin: a quiet NaN for floats (16-bit ones compute in float),
 * LO / HI for integers and bool */
#define SX_QNAN_F sx_as_float(0x7fc00000u)
#define NLO_b8 LO_b8
#define NHI_b8 HI_b8
#define NLO_i8 LO_i8
#define NHI_i8 HI_i8
#define NLO_u8 LO_u8
#define NHI_u8 HI_u8
#define NLO_i16 LO_i16
#define NHI_i16 HI_i16
#define NLO_i32 LO_i32
#define NHI_i32 HI_i32
#define NLO_i64 LO_i64
#define NHI_i64 HI_i64
#define NLO_u16 LO_u16
#define NHI_u16 HI_u16
#define NLO_u32 LO_u32
#define NHI_u32 HI_u32
#define NLO_u64 LO_u64
#define NHI_u64 HI_u64
#define NLO_f16 SX_QNAN_F
#define NHI_f16 SX_QNAN_F
#define NLO_bf16 SX_QNAN_F
#define NHI_bf16 SX_QNAN_F
#define NLO_f32 SX_QNAN_F
#define NHI_f32 SX_QNAN_F
#define NLO_f64 ((double)SX_QNAN_F)
#define NHI_f64 ((double)SX_QNAN_F)

#endif
