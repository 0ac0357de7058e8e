"""Generate the CPU kernel modules from the op tables (optable.py, redtable.py) and load them.

One module per (template family, input dtype): a cold start compiles a few modules, not one
file per kernel. `kernel(family, dtype, name)` returns the cffi function, cached.
"""
from __future__ import annotations

import operator
import os
import warnings

from .. import dtypes as dt
from ..optable import ew_specs
from ..redtable import REDUCTIONS
from . import build

_EW_UN = "void {}(int nd, const int64_t *meta, intptr_t out, intptr_t a, int nthreads);"
_EW_BIN = "void {}(int nd, const int64_t *meta, intptr_t out, intptr_t a, intptr_t b, int nthreads);"
_EW_WHERE = ("void {}(int nd, const int64_t *meta, intptr_t out, intptr_t c, intptr_t a, "
             "intptr_t b, int nthreads);")


def ew_source(d: dt.DType) -> tuple[str, str]:
    """Elementwise ops whose loop takes dtype d, `where`, and casts from d to every dtype."""
    src, cdef = ['#include "elementwise.h"'], []
    for name, (arity, ins, out, expr) in ew_specs(d).items():
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
           **{(f"arg{r}", s): f"vargfold_{r}_{s}" for r in ("max", "min")
              for s in ("f32", "f64", "i32", "i64")},
           **{(r, s): f"vfold_{r}_u8" for r in ("any", "all") for s in ("b8", "u8")}}
_GIDX = {"f32": "int32_t", "i32": "int32_t", "f64": "int64_t", "i64": "int64_t"}
_VFOLD_OFF = ("#undef SX_VFOLD\n#undef SX_VFOLD_ON\n#undef SX_VFOLD_GIDX\n#define SX_VFOLD SX_VFOLD_NONE\n"
              "#define SX_VFOLD_ON 0\n#define SX_VFOLD_GIDX int64_t")


def red_source(d: dt.DType) -> tuple[str, str]:
    """The reductions and scans of input dtype d (reduce.h's templates, one line per entry)."""
    s = d.sfx
    src = ['#include "reduce.h"']
    for r in REDUCTIONS:
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
    cdef = "\n".join(_RED.format(f"{r.name}_{s}") for r in REDUCTIONS)
    return "\n".join(src) + "\n", cdef


_SOURCES = {"ew": ew_source, "red": red_source}
_fns: dict = {}


def register_family(name: str, source_fn) -> None:
    """Add a template family: source_fn(dtype or None) -> (C source, cdef)."""
    _SOURCES[name] = source_fn


def module(family: str, d: dt.DType | None):
    src, cdef = _SOURCES[family](d)
    return build.load(f"{family}_{d.sfx}" if d is not None else family, src, cdef)


def kernel(family: str, d: dt.DType | None, name: str):
    key = (family, d, name)
    fn = _fns.get(key)
    if fn is None:
        fn = getattr(module(family, d), name)
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
