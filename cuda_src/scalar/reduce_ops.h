/* The combines of the reductions and scans, shared by the CPU's loops (tensor/cpu/csrc/
 * reduce.h, instantiated by name from tensor/reductions.py) and the CUDA op structs
 * (cuda_src/reduce.cuh), so both devices fold elements with the same expressions.
 *
 * Floats: a NaN wins max/min (the first NaN is kept by the arg forms). `|` rather than `||`
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
#define SX_ANY(a, b) ((a) | ((b) != 0))
#define SX_ALL(a, b) ((a) & ((b) != 0))
/* arg-reductions: does x beat the best so far? */
#define SX_ARGMAXF(x, best) ((x) > (best) || ((x) != (x) && (best) == (best)))
#define SX_ARGMINF(x, best) ((x) < (best) || ((x) != (x) && (best) == (best)))
#define SX_ARGMAXI(x, best) ((x) > (best))
#define SX_ARGMINI(x, best) ((x) < (best))

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

#endif
