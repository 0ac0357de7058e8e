"""Generate the CUDA kernel modules from the op table (mirrors tensor/cpu/kernels.py).

One module per (template family, dtype): `ew` (every unary/binary op whose loop takes the
dtype, casts from it to every dtype, `where`) and `red` (sum, prod, max, min, any, all,
argmax, argmin, cumsum, cumprod). Kernel names are the CPU's: add_f32, exp_f16,
cast_f32_i8, where_f32, sum_bf16, ...; each is an ``extern "C" __global__`` function taking
its by-value argument struct (sx_indexer<N>, sx_red_args or sx_scan_args).
"""
from __future__ import annotations

from .. import dtypes as dt
from ..optable import BINARY, UNARY

FAMILIES = ("ew", "red")


def ew_kernels(d: dt.DType) -> list[str]:
    """Names of the kernels in module ("ew", d), in source order."""
    k, s = d.kind, d.sfx
    names = [f"{op.name}_{s}" for op in UNARY + BINARY if k in op.kinds]
    names += [f"cast_{s}_{t.sfx}" for t in dt.ALL]
    return names + [f"where_{s}"]


def ew_source(d: dt.DType) -> str:
    k, s = d.kind, d.sfx
    src = ['#include "elementwise.cuh"', ""]
    for op in UNARY:
        if k in op.kinds:
            name, out = f"{op.name}_{s}", ("b8" if op.out_bool else s)
            src.append(
                f"struct {name}_fn {{ __device__ __forceinline__ sx_{out}::T operator()"
                f"(sx_{s}::C a) const {{ return sx_{out}::st({op.expr(k)}); }} }};\n"
                f'extern "C" __global__ void __launch_bounds__(SX_BLOCK) {name}(sx_indexer<2> ix) '
                f"{{ sx_unary<sx_{s}, sx_{out}>(ix, {name}_fn()); }}")
    for op in BINARY:
        if k in op.kinds:
            name, out = f"{op.name}_{s}", ("b8" if op.out_bool else s)
            src.append(
                f"struct {name}_fn {{ __device__ __forceinline__ sx_{out}::T operator()"
                f"(sx_{s}::C a, sx_{s}::C b) const {{ return sx_{out}::st({op.expr(k)}); }} }};\n"
                f'extern "C" __global__ void __launch_bounds__(SX_BLOCK) {name}(sx_indexer<3> ix) '
                f"{{ sx_binary<sx_{s}, sx_{s}, sx_{out}>(ix, {name}_fn()); }}")
    for t in dt.ALL:
        src.append(f'extern "C" __global__ void __launch_bounds__(SX_BLOCK) cast_{s}_{t.sfx}'
                   f"(sx_indexer<2> ix) {{ sx_unary<sx_{s}, sx_{t.sfx}>(ix, "
                   f"sx_cast_fn<sx_{s}, sx_{t.sfx}>()); }}")
    src.append(f'extern "C" __global__ void __launch_bounds__(SX_BLOCK) where_{s}(sx_indexer<4> ix) '
               f"{{ sx_where<sx_{s}>(ix); }}")
    return "\n".join(src) + "\n"


_ACC = {"f16": "float", "bf16": "float", "f32": "float", "f64": "double"}
RED_NAMES = ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin")
SCAN_NAMES = ("cumsum", "cumprod")


def red_kernels(d: dt.DType) -> list[str]:
    return [f"{n}_{d.sfx}" for n in RED_NAMES + SCAN_NAMES]


def red_source(d: dt.DType) -> str:
    s = d.sfx
    acc = _ACC.get(s, "int64_t")
    sum_out = s if d.kind == "f" else "i64"   # integer/bool sums and products are int64
    red = {"sum": (sum_out, f"sx_sum_op<sx_{s}, {acc}>"),
           "prod": (sum_out, f"sx_prod_op<sx_{s}, {acc}>"),
           "max": (s, f"sx_max_op<sx_{s}>"), "min": (s, f"sx_min_op<sx_{s}>"),
           "any": ("b8", f"sx_any_op<sx_{s}>"), "all": ("b8", f"sx_all_op<sx_{s}>"),
           "argmax": ("i64", f"sx_arg_op<sx_{s}, true>"),
           "argmin": ("i64", f"sx_arg_op<sx_{s}, false>")}
    src = ['#include "reduce.cuh"', ""]
    for n in RED_NAMES:
        out, op = red[n]
        src.append(f'extern "C" __global__ void __launch_bounds__(SX_RBLOCK) {n}_{s}(sx_red_args a) '
                   f"{{ sx_reduce<sx_{s}, sx_{out}, {op}>(a); }}")
    for n in SCAN_NAMES:
        op = red[n[3:]][1]
        src.append(f'extern "C" __global__ void __launch_bounds__(SX_RBLOCK) {n}_{s}(sx_scan_args a) '
                   f"{{ sx_scan<sx_{s}, sx_{sum_out}, {op}>(a); }}")
    return "\n".join(src) + "\n"


_SOURCES = {"ew": ew_source, "red": red_source}
_KERNELS = {"ew": ew_kernels, "red": red_kernels}
_DTYPES: dict = {"ew": dt.ALL, "red": dt.ALL}

# Modules under tensor/cuda that register further families when imported.
FAMILY_MODULES: tuple = ("random", "misc", "gemm", "index", "nn_kernels")


def register_family(name: str, source_fn, kernels_fn=None, dtypes=None) -> None:
    """Add a template family: source_fn(dtype or None) -> CUDA source; kernels_fn(dtype or
    None) -> its kernel names; dtypes: the dtypes it is built for ([None]: one module)."""
    _SOURCES[name] = source_fn
    if kernels_fn is not None:
        _KERNELS[name] = kernels_fn
    _DTYPES[name] = tuple(dt.ALL if dtypes is None else dtypes)


def load_families() -> None:
    """Import every family module so its register_family calls have run."""
    import importlib
    for m in FAMILY_MODULES:
        importlib.import_module(f"tensor.cuda.{m}")


def kernel_names(family: str, d: dt.DType | None) -> list[str]:
    return _KERNELS[family](d)


def module_name(family: str, d: dt.DType | None) -> str:
    return f"{family}_{d.sfx}" if d is not None else family


def source(family: str, d: dt.DType | None) -> str:
    return _SOURCES[family](d)


def all_modules() -> list[tuple[str, dt.DType | None]]:
    """Every (family, dtype) module the backend can build: what the compile test covers."""
    load_families()
    return [(f, d) for f in _SOURCES for d in _DTYPES[f]]


def cubin(family: str, d: dt.DType | None, arch: str, fast: bool = False) -> bytes:
    from . import nvrtc
    return nvrtc.compile(module_name(family, d), source(family, d), arch, fast)


# ---- host mirrors of the by-value kernel argument structs (ctypes follows C's layout) ----
MAXDIM = 16  # SX_MAXDIM in common.cuh: the most dims a launch takes after coalescing


def _ctypes():
    import ctypes as C

    i64, vp = C.c_int64, C.c_void_p

    def indexer(n: int):
        """sx_indexer<n>: operand 0 is the output; strides are in bytes."""
        return type(f"sx_indexer_{n}", (C.Structure,), {"_fields_": [
            ("ptr", vp * n), ("n", i64), ("nd", C.c_int), ("idx32", C.c_int), ("contig", C.c_int),
            ("scalar", C.c_int), ("vec", C.c_int), ("tile", C.c_int), ("sval", i64 * n),
            ("shape", i64 * MAXDIM), ("stride", (i64 * MAXDIM) * n)]})

    class RedArgs(C.Structure):  # sx_red_args
        _fields_ = [("in_", vp), ("out", vp), ("part", vp), ("mode", C.c_int), ("nk", C.c_int),
                    ("nr", C.c_int), ("vec", C.c_int), ("K", i64), ("R", i64), ("G", i64), ("chunk", i64),
                    ("ks", i64 * MAXDIM), ("kin", i64 * MAXDIM), ("kout", i64 * MAXDIM),
                    ("rs", i64 * MAXDIM), ("rin", i64 * MAXDIM)]

    class ScanArgs(C.Structure):  # sx_scan_args
        _fields_ = [("in_", vp), ("out", vp), ("nd", C.c_int), ("rows", i64), ("L", i64),
                    ("sh", i64 * MAXDIM), ("si", i64 * MAXDIM), ("so", i64 * MAXDIM)]

    return {2: indexer(2), 3: indexer(3), 4: indexer(4)}, RedArgs, ScanArgs


INDEXER, RED_ARGS, SCAN_ARGS = _ctypes()
