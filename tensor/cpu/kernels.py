"""Generate the CPU kernel modules from the op tables (optable.py, redtable.py) and load them.

One module per (template family, input dtype): a cold start compiles a few modules, not one
file per kernel. A family registered with a `part` function is split further by kernel name:
the elementwise table of one dtype (120 ops, ~10 s of gcc) is four modules, so a first add
builds the ops most programs use (~2 s), not the Bessel functions; the reductions of one dtype
are six. `kernel(family, dtype, name)` returns the cffi function, cached.
"""
from __future__ import annotations

import operator
import os
import re
import warnings

from .. import dtypes as dt
from ..optable import ew_specs
from ..redtable import KERNELS
from . import build

_EW_UN = "void {}(int nd, const int64_t *meta, intptr_t out, intptr_t a, int nthreads);"
_EW_BIN = "void {}(int nd, const int64_t *meta, intptr_t out, intptr_t a, intptr_t b, int nthreads);"
_EW_WHERE = ("void {}(int nd, const int64_t *meta, intptr_t out, intptr_t c, intptr_t a, "
             "intptr_t b, int nthreads);")


# The elementwise ops most programs use (arithmetic, comparisons, logic, where, min / max,
# rounding, exp / log, the activations' tanh and sigmoid): built together at their first use
_EW_CORE = frozenset((
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power", "negative",
    "positive", "abs", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "tanh",
    "sigmoid", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf",
    "isfinite", "floor", "ceil", "trunc", "rint", "where", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "left_shift", "right_shift", "conjugate"))
# Special functions: rarely used, and the costliest to compile
_EW_SPECIAL = re.compile(r"bessel|polynomial|airy|zeta|gamma|erfinv|i[01]e?$")


def ew_part(name: str) -> str:
    """The module of the "ew" family that holds kernel `name` (add_f32, cast_f32_i8, ...):
    "core", "cast", "special" or "math" (the other functions)."""
    if name.startswith("cast_"):
        return "cast"
    base = name.rsplit("_", 1)[0]
    if base in _EW_CORE:
        return "core"
    return "special" if _EW_SPECIAL.search(base) else "math"


def ew_source(d: dt.DType, part: str | None = None) -> tuple[str, str]:
    """Elementwise ops whose loop takes dtype d, `where`, and casts from d to every dtype (those
    of module `part` of ew_part only, when given)."""
    src, cdef = ['#include "elementwise.h"'], []
    for name, (arity, ins, out, expr) in ew_specs(d).items():
        if part is not None and ew_part(name) != part:
            continue
        if arity == 1:
            src.append(f"SX_UNARY({name}, {ins[0]}, {out}, {expr})")
            cdef.append(_EW_UN.format(name))
        elif arity == 2:
            src.append(f"SX_BINARY({name}, {ins[0]}, {ins[1]}, {out}, {expr})")
            cdef.append(_EW_BIN.format(name))
        else:
            src.append(f"SX_WHERE({name}, {out})")
            cdef.append(_EW_WHERE.format(name))
    return "\n".join(src) + "\n", "\n".join(cdef)


_RED = "void {}(const int64_t *meta, intptr_t in, intptr_t out, int nthreads);"


# (reduction, dtype suffix) -> its vector fold in reduce.h (sx_vfold_..., sx_vargfold_...)
_VFOLDS = {**{(r, s): f"vfold_{r}_{s}" for r in ("max", "min") for s in ("f32", "f64", "i32", "i64")},
           **{(f"nan{r}", s): f"vfold_nan{r}_{s}" for r in ("max", "min") for s in ("f32", "f64")},
           **{(f"nan{r}", s): f"vfold_{r}_{s}" for r in ("max", "min") for s in ("i32", "i64")},
           **{(f"arg{r}", s): f"vargfold_{r}_{s}" for r in ("max", "min")
              for s in ("f32", "f64", "i32", "i64")},
           **{(r, s): f"vfold_{r}_u8" for r in ("any", "all") for s in ("b8", "u8")}}
_GIDX = {"f32": "int32_t", "i32": "int32_t", "f64": "int64_t", "i64": "int64_t"}
_VFOLD_OFF = ("#undef SX_VFOLD\n#undef SX_VFOLD_ON\n#undef SX_VFOLD_GIDX\n#define SX_VFOLD SX_VFOLD_NONE\n"
              "#define SX_VFOLD_ON 0\n#define SX_VFOLD_GIDX int64_t")


# The "red" family's modules: each reduction costs ~2 s of gcc, so a first sum builds sum only
_RED_PARTS = {"max": "minmax", "min": "minmax", "nanmax": "nanminmax", "nanmin": "nanminmax",
              "any": "anyall", "all": "anyall",
              "argmax": "arg", "argmin": "arg", "cumsum": "scan", "cumprod": "scan"}


def red_part(name: str) -> str:
    """The module of the "red" family that holds kernel `name` (sum_f32, argmax_i64, ...)."""
    base = name.rsplit("_", 1)[0]
    return _RED_PARTS.get(base, base)


def red_source(d: dt.DType, part: str | None = None) -> tuple[str, str]:
    """The reductions and scans of input dtype d (reduce.h's templates, one line per entry; those
    of module `part` of red_part only, when given)."""
    s = d.sfx
    src = ['#include "reduce.h"']
    reductions = [r for r in KERNELS if part is None or red_part(f"{r.name}_{s}") == part]
    for r in reductions:
        n, o, mac = f"{r.name}_{s}", r.out_dtype(d).sfx, r.macro(d)
        fold = _VFOLDS.get((r.name, s))
        if fold:   # reduce.h's vector fold of this op and dtype, for this one instantiation
            src.append(f"#undef SX_VFOLD\n#undef SX_VFOLD_ON\n#undef SX_VFOLD_GIDX\n"
                       f"#define SX_VFOLD sx_{fold}\n#define SX_VFOLD_ON 1\n"
                       f"#define SX_VFOLD_GIDX {_GIDX.get(s, 'int64_t')}")
        if r.form == "reduce":  # combine and merge of partial folds are the same operation
            src.append(f"SX_REDUCE({n}, {s}, {o}, {r.acc_c(d)}, {r.init_c(d)}, {mac}, {mac})")
        elif r.form == "arg":
            src.append(f"SX_ARGREDUCE({n}, {s}, {mac})")
        else:
            src.append(f"SX_SCAN({n}, {s}, {o}, {r.acc_c(d)}, {r.init_c(d)}, {mac})")
        if fold:
            src.append(_VFOLD_OFF)
    cdef = "\n".join(_RED.format(f"{r.name}_{s}") for r in reductions)
    return "\n".join(src) + "\n", cdef


_SOURCES = {"ew": ew_source, "red": red_source}
_PARTS = {"ew": ew_part, "red": red_part}   # split families: kernel name -> its module's part
_fns: dict = {}


def register_family(name: str, source_fn, part=None) -> None:
    """Add a template family: source_fn(dtype or None) -> (C source, cdef); with `part`
    (kernel name -> a part's name), source_fn(dtype, part) gives one part's module and
    source_fn(dtype) the whole family (the architecture tests read its names)."""
    _SOURCES[name] = source_fn
    if part is not None:
        _PARTS[name] = part


def module(family: str, d: dt.DType | None, name: str | None = None):
    """The loaded module of `family` and dtype d that holds kernel `name` (which a split family
    needs to pick its part)."""
    label, part_of = family, _PARTS.get(family)
    if part_of is None:
        src, cdef = _SOURCES[family](d)
    else:
        if name is None:
            raise TypeError(f"kernels.module: family {family!r} is split by kernel: name one")
        part = part_of(name)
        src, cdef = _SOURCES[family](d, part)
        label = f"{family}_{part}"
    return build.load(f"{label}_{d.sfx}" if d is not None else label, src, cdef)


def modules(family: str, d: dt.DType | None) -> list:
    """Every module of `family` and dtype d (all parts of a split family), built: a warm-up."""
    part_of = _PARTS.get(family)
    if part_of is None:
        return [module(family, d)]
    names = re.findall(r"(\w+)\s*\(", _SOURCES[family](d)[1])
    firsts = {part_of(n): n for n in reversed(names)}
    return [module(family, d, n) for n in firsts.values()]


def kernel(family: str, d: dt.DType | None, name: str):
    key = (family, d, name)
    fn = _fns.get(key)
    if fn is None:
        fn = getattr(module(family, d, name), name)
        _fns[key] = fn
    return fn


_num_threads = int(os.environ.get("STRIDEX_NUM_THREADS", 0)) or (os.cpu_count() or 1)


def get_num_threads() -> int:
    """Threads the CPU kernels use (1 = single core; more uses OpenMP)."""
    return _num_threads


def set_num_threads(n: int) -> None:
    """Set the CPU kernels' thread count (also from the STRIDEX_NUM_THREADS variable)."""
    global _num_threads
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"set_num_threads: need an int, got {type(n).__name__} {n!r}") from None
    if n < 1:
        raise ValueError(f"set_num_threads: need a positive count, got {n}")
    if n > 1 and build.forked_after_openmp:
        warnings.warn(f"set_num_threads({n}): this process was forked after its parent ran "
                      "multi-threaded kernels; GNU OpenMP cannot start threads in such a child, so "
                      "its kernels may hang (they run on one thread unless told otherwise; start "
                      "workers with multiprocessing's 'spawn' or 'forkserver' context for more)",
                      RuntimeWarning, stacklevel=2)
    _num_threads = n
