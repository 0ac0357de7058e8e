"""CUDA matmul (family "gemm", cuda_src/gemm.cuh): the device side of tensor/products.py's
_gemm_batched, with the CPU gemm's semantics (tensor/cpu/csrc/gemm.c): every dtype; floats
accumulate in float32 (16-bit floats too, rounded once on store) or float64; integers wrap
(bit-identical to the CPU); bool is OR of ANDs. No cuBLAS, no atomics, K is never split.

Kernels per dtype (by-value `sx_gemm_args`, 256 threads):
  float dtypes: gemm_<sfx>_<la><lb> for the operand layouts (la: A row-major "n" = unit stride
  along k, transposed "t" = unit stride along m; lb: B row-major "n" = unit stride along n,
  transposed "t" = unit stride along k), and gemm_<sfx>_gen for any strides; gemm_add_<sfx>_...
  the same with gemm_add's store (each kernel is its own compile unit: built when first used);
  integers / bool: gemm_<sfx> (any strides).
float32/float64: SIMT register-blocked tiles; float16/bfloat16: tensor cores (mma.sync, on
TC_SMEM bytes of dynamic shared memory) from compute capability 8.0 (`tensor_cores`); before
that (no cp.async, no bf16 mma) tensor/products.py runs 16-bit matmuls through the float32
kernel on float32 copies and rounds once on the way back: the same fp32 accumulation.
gemm_add_batched: the gemm_add_ kernels' store adds alpha * product + beta * D on the
accumulator before the one rounding (the CPU's gemm_add_<sfx>; dk and the rounding as there).
"""
from __future__ import annotations

import ctypes

from .. import dtypes as dt
from . import kernels as CK

FAMILY = "gemm"
BLOCK = 256
FLOAT_LAYOUTS = ("nn", "nt", "tn", "tt", "gen")
_KC, _OC, _GEN = "SX_GM_KC", "SX_GM_OC", "SX_GM_GEN"
# kernel suffix -> (A layout, B layout) template arguments
_LAYOUT_ARGS = {"nn": (_KC, _OC), "nt": (_KC, _KC), "tn": (_OC, _OC), "tt": (_OC, _KC),
                "gen": (_GEN, _GEN)}
# block tile (rows, cols) of each kernel kind
_TILE = {"f32": (128, 128), "f64": (64, 64), "f16": (128, 128), "bf16": (128, 128)}
_INT_TILE = (64, 64)
_INT_ACC = {"i8": "uint32_t", "u8": "uint32_t", "i16": "uint32_t", "i32": "uint32_t",
            "i64": "uint64_t", "u16": "uint32_t", "u32": "uint32_t", "u64": "uint64_t"}
MAX_GRID_X = 2**31 - 1
MAX_GRID_Z = 65535
TC_STAGES, TC_TILE_K = 3, 32   # SX_TC_STAGES, SX_TC_BK
TC_SMEM = TC_STAGES * (_TILE["f16"][0] + _TILE["f16"][1]) * TC_TILE_K * 2   # SX_TC_SMEM
TC_MIN_CC = (8, 0)


def kernel_call(name: str, epi: str = "sx_gm_no_epi") -> tuple[str, str]:
    """(the template call a gemm kernel's entry makes, over `p` (sx_gemm_args), its launch
    bounds) for kernel `name` (gemm_<sfx>_<layout> or gemm_<sfx>): the entries, and a captured
    step's matmul with a fused epilogue (tensor/cuda/fused.py; epi: its functor type, which an
    ADD instance names and the others deduce), make the same call."""
    parts = name.split("_")
    add = parts[1] == "add"   # gemm_add_<sfx>_<layout>: the ADD instance
    parts = parts[1:] if add else parts
    s = parts[1]
    if s in ("f32", "f64", "f16", "bf16"):
        fn = (f"sx_gemm_simt<{'float' if s == 'f32' else 'double'}, {{}}, {{}}{{}}>" if s in ("f32", "f64")
              else f"sx_gemm_tc<sx_tc_{s}, {{}}, {{}}{{}}>")
        return (fn.format(*_LAYOUT_ARGS[parts[2]], f", {epi}, true" if add else ""),
                "__launch_bounds__(SX_GM_THREADS, 2)")
    if s == "b8":
        return "sx_gemm_int<uint8_t, uint32_t, true>", "__launch_bounds__(SX_GM_THREADS)"
    return f"sx_gemm_int<sx_{s}::T, {_INT_ACC[s]}, false>", "__launch_bounds__(SX_GM_THREADS)"


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s = d.sfx
    names = ([f"gemm_{k}{s}_{lay}" for k in ("", "add_") for lay in FLOAT_LAYOUTS] if d.kind == "f"
             else [f"gemm_{s}"])
    src = {}
    for name in names:
        call, bounds = kernel_call(name)
        src[name] = f'extern "C" __global__ void {bounds} {name}(sx_gemm_args p) {{ {call}(p); }}'
    return '#include "gemm.cuh"\n', src


CK.register_family(FAMILY, entries, dt.REAL)


class GemmArgs(ctypes.Structure):
    """Host mirror of sx_gemm_args (cuda_src/gemm.cuh); strides in elements."""
    _fields_ = [("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("c", ctypes.c_void_p),
                ("M", ctypes.c_int64), ("N", ctypes.c_int64), ("K", ctypes.c_int64),
                ("batch", ctypes.c_int64),
                ("sab", ctypes.c_int64), ("sam", ctypes.c_int64), ("sak", ctypes.c_int64),
                ("sbb", ctypes.c_int64), ("sbk", ctypes.c_int64), ("sbn", ctypes.c_int64),
                ("scb", ctypes.c_int64), ("scm", ctypes.c_int64), ("scn", ctypes.c_int64),
                ("d", ctypes.c_void_p), ("sdb", ctypes.c_int64), ("sdm", ctypes.c_int64),
                ("sdn", ctypes.c_int64), ("alpha", ctypes.c_double), ("beta", ctypes.c_double),
                ("dk", ctypes.c_int64)]   # (gemm_add's: dk 0, a plain product, when left out)


def _operand_layout(so: int, sk: int, no: int, K: int):
    """Layout of an (outer x K) operand with strides so / sk: ("k" unit stride along k,
    "o" along outer, "g" neither) and the strides to pass (a length-1 dimension's stride
    is free, set to 1 when that makes the operand unit-stride)."""
    if sk == 1 and (K > 1 or so != 1):
        return "k", so, sk
    if so == 1:
        return "o", so, sk
    if K == 1:
        return "k", so, 1
    if no == 1:
        return "o", 1, sk
    return "g", so, sk


def choose_kernel(d: dt.DType, M: int, N: int, K: int, sam: int, sak: int, sbk: int, sbn: int):
    """(kernel name, (sam, sak, sbk, sbn)) for a problem: the layout specialisation follows
    the operands' unit strides (a length-1 dimension's stride may be normalised)."""
    if d.kind != "f":
        return f"gemm_{d.sfx}", (sam, sak, sbk, sbn)
    la, sam, sak = _operand_layout(sam, sak, M, K)
    lb, sbn, sbk = _operand_layout(sbn, sbk, N, K)
    if la == "g" or lb == "g":
        lay = "gen"
    else:
        lay = ("n" if la == "k" else "t") + ("n" if lb == "o" else "t")
    return f"gemm_{d.sfx}_{lay}", (sam, sak, sbk, sbn)


def launch(d: dt.DType, device, M: int, N: int, K: int, batch: int,
           pa: int, sab: int, sam: int, sak: int,
           pb: int, sbb: int, sbk: int, sbn: int,
           pc: int, scb: int, scm: int, scn: int, add: tuple = ()) -> None:
    """One batched launch: C[z] = A[z] @ B[z] for z < batch, pointers are device addresses of
    element [0, 0] of batch 0, strides in elements; add: gemm_add's (D address, its batch, row
    and column strides, alpha, beta, dk), or () for a plain product."""
    from . import runtime as R
    if batch <= 0 or M <= 0 or N <= 0:
        return
    name, grid, args, shared = plan(d, M, N, K, batch, pa, sab, sam, sak, pb, sbb, sbk, sbn,
                                    pc, scb, scm, scn, add)
    R.kernel(FAMILY, d, name, device)(grid, BLOCK, args, shared=shared)


def plan(d: dt.DType, M: int, N: int, K: int, batch: int, pa: int, sab: int, sam: int, sak: int,
         pb: int, sbb: int, sbk: int, sbn: int, pc: int, scb: int, scm: int, scn: int,
         add: tuple = ()):
    """(kernel name, grid, GemmArgs, dynamic shared bytes) of launch(...)'s problem."""
    name, (sam, sak, sbk, sbn) = choose_kernel(d, M, N, K, sam, sak, sbk, sbn)
    if add:
        name = "gemm_add_" + name[5:]
    bm, bn = _TILE.get(d.sfx, _INT_TILE)
    tiles = ((M + bm - 1) // bm) * ((N + bn - 1) // bn)
    grid = (min(tiles, MAX_GRID_X), 1, min(batch, MAX_GRID_Z))
    args = GemmArgs(pa, pb, pc, M, N, K, batch, sab, sam, sak, sbb, sbk, sbn, scb, scm, scn, *add)
    return name, grid, args, TC_SMEM if d.sfx in ("f16", "bf16") else 0


def tensor_cores(device) -> bool:
    """Whether the 16-bit tensor-core kernels run on this device (compute capability 8.0+)."""
    from . import runtime as R
    return R.device_state(device.index or 0).cc >= TC_MIN_CC


def gemm_batched(a, b, c) -> None:
    """c[...] = a[...] @ b[...] for CUDA tensors a: (*batch, M, K), b: (*batch, K, N),
    c: (*batch, M, N), already broadcast (batch strides may be 0), all of c's dtype.

    The batch dims are coalesced jointly by views.gemm_batches (as on the CPU); when they do
    not collapse to one (count, stride) per operand, the outer ones take one launch each."""
    _check(a, b, c)
    if any(s == 0 for s in c.shape):   # (K == 0 launches: the kernel writes zeros)
        return
    for args in batch_args(a, b, c):
        launch(c.dtype, c.device, *args)


def gemm_add_batched(a, b, c, d, alpha, beta, dk: int) -> None:
    """c = alpha * (a @ b) + beta * d with one rounding of c (tensor/cpu/gemm.py gemm_add's
    contract; dk: views.gemm_add_mode's) for CUDA float tensors, 2-D or 3-D."""
    _check(a, b, c)
    if any(s == 0 for s in c.shape):
        return
    add = add_terms(c, d, alpha, beta, dk)
    for args in batch_args(a, b, c):
        launch(c.dtype, c.device, *args, add)


def add_terms(c, d, alpha, beta, dk: int) -> tuple:
    """launch(...)'s `add` of c = alpha * (a @ b) + beta * d: (D's address, its batch, row and
    column strides, alpha, beta, dk)."""
    from ..views import GEMM_D_SCALE
    pd, sd = (d.data_ptr(), d.strides) if dk != GEMM_D_SCALE else (0, (0,) * c.ndim)
    return (pd, sd[0] if len(sd) == 3 else 0, sd[-2], sd[-1], float(alpha), float(beta), dk)


def _check(a, b, c) -> None:
    d = c.dtype
    if a.dtype != d or b.dtype != d:
        raise TypeError(f"matmul: CUDA gemm needs one dtype, got {a.dtype}, {b.dtype} -> {d}")
    if a.device != c.device or b.device != c.device:
        raise ValueError(f"matmul: tensors are on different devices: {a.device}, {b.device}, "
                         f"{c.device}")


def batch_args(a, b, c) -> list:
    """launch(...)'s arguments after the dtype and device for each launch of c = a @ b (the
    batch dims walked by views.gemm_batches)."""
    from ..views import gemm_batches
    M, K = a.shape[-2:]
    N = b.shape[-1]
    (sam, sak), (sbk, sbn), (scm, scn) = a.strides[-2:], b.strides[-2:], c.strides[-2:]
    return [(M, N, K, cnt, pa, sa, sam, sak, pb, sb, sbk, sbn, pc, sc, scm, scn)
            for cnt, pa, sa, pb, sb, pc, sc in gemm_batches(a, b, c)]
