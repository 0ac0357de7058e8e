"""The reductions table: every reduction and scan kernel, defined once (the sibling of
optable.py).

An entry gives the op's name, its form (a fold over axes, an arg-reduction, an inclusive scan),
the identity of an empty fold, its combine (the C macro of tensor/cpu/csrc/reduce.h and the
functor of cuda_src/reduce.cuh), its accumulator per input dtype, its output dtype rule, its
public aliases and whether it has a derivative. The CPU and CUDA kernel sources (KERNELS: the
public REDUCTIONS and the kernel-only INTERNAL folds), the output dtypes in
tensor/reductions.py, the public functions, the reduction derivative rules and the tests all
iterate over it.

>>> from tensor.redtable import RED
>>> from tensor import dtypes as dt
>>> RED["sum"].out_dtype(dt.int8).name, RED["max"].out_dtype(dt.int8).name
('int64', 'int8')
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import dtypes as dt

# accumulator C type of a "wide" fold: 16-bit floats add in float, unsigned integers in uint64,
# signed ones and bool in int64 (NumPy's sum/prod/cumsum dtypes)
_WIDE = {"f16": "float", "bf16": "float", "f32": "float", "f64": "double", "u8": "uint64_t",
         "u16": "uint64_t", "u32": "uint64_t", "u64": "uint64_t"}


@dataclass(frozen=True)
class Red:
    name: str
    form: str        # "reduce" (fold over axes), "arg" (index of the first best), "scan" (inclusive)
    identity: str    # C value of an empty fold: "0", "1", "LO"/"HI" (the dtype's LO_f32...), "NLO"/"NHI"
    #                  (NLO_f32...: a NaN for floats, else LO / HI); arg: ""
    combine: tuple   # reduce.h macros (float kinds, other kinds): COMBINE(acc, x); arg: BETTER(x, best)
    cuda: str        # reduce.cuh functor over {s} (input suffix) and {acc} (accumulator C type)
    acc: str         # "wide" (see _WIDE), "same" (the input's compute type), "int"; arg: ""
    out: str         # output dtype: "wide" (floats keep theirs, unsigned uint64, else int64), "same",
    #                  "bool", "int64"
    ref: object = None  # NumPy reference (for tests)
    aliases: tuple = ()
    grad: bool = True  # False: integer or bool results, nothing to differentiate

    def out_dtype(self, d: dt.DType) -> dt.DType:
        if self.out == "wide":
            return d if d.kind in "fc" else (dt.uint64 if d.kind == "u" else dt.int64)
        return {"same": d, "bool": dt.bool_, "int64": dt.int64}[self.out]

    def acc_c(self, d: dt.DType) -> str:
        """The accumulator's C type (the CPU's spelling; CUDA's functors take the wide one). An
        "int" fold (any / all: 0 or 1) of bytes keeps bytes, so its lanes vectorise at the input's
        width (any / all of a bool matrix over its leading axis took 2x NumPy's time in int)."""
        if self.acc == "int":
            return "uint8_t" if d.itemsize == 1 else "int"
        return {"wide": _WIDE.get(d.sfx, "int64_t"), "same": f"C_{d.sfx}"}[self.acc]

    def init_c(self, d: dt.DType) -> str:
        return f"{self.identity}_{d.sfx}" if self.identity in ("LO", "HI", "NLO", "NHI") else self.identity

    def macro(self, d: dt.DType) -> str:
        return self.combine[0] if d.kind == "f" else self.combine[-1]

    def functor(self, d: dt.DType) -> str:
        return self.cuda.format(s=d.sfx, acc=_WIDE.get(d.sfx, "int64_t"))

    @property
    def order_free(self) -> bool:
        """The result does not depend on the visiting order (the kernel may walk memory in
        order); arg-reductions keep the first index, so they walk in logical order."""
        return self.form == "reduce"


REDUCTIONS = [
    Red("sum", "reduce", "0", ("SX_ADD",), "sx_sum_op<sx_{s}, {acc}>", "wide", "wide", np.sum),
    Red("prod", "reduce", "1", ("SX_MUL",), "sx_prod_op<sx_{s}, {acc}>", "wide", "wide", np.prod),
    Red("max", "reduce", "LO", ("SX_MAXF", "SX_MAXI"), "sx_max_op<sx_{s}>", "same", "same", np.max,
        aliases=("amax",)),
    Red("min", "reduce", "HI", ("SX_MINF", "SX_MINI"), "sx_min_op<sx_{s}>", "same", "same", np.min,
        aliases=("amin",)),
    Red("any", "reduce", "0", ("SX_ANY",), "sx_any_op<sx_{s}>", "int", "bool", np.any, grad=False),
    Red("all", "reduce", "1", ("SX_ALL",), "sx_all_op<sx_{s}>", "int", "bool", np.all, grad=False),
    Red("argmax", "arg", "", ("SX_ARGMAXF", "SX_ARGMAXI"), "sx_arg_op<sx_{s}, true>", "", "int64",
        np.argmax, grad=False),
    Red("argmin", "arg", "", ("SX_ARGMINF", "SX_ARGMINI"), "sx_arg_op<sx_{s}, false>", "", "int64",
        np.argmin, grad=False),
    Red("cumsum", "scan", "0", ("SX_ADD",), "sx_sum_op<sx_{s}, {acc}>", "wide", "wide", np.cumsum),
    Red("cumprod", "scan", "1", ("SX_MUL",), "sx_prod_op<sx_{s}, {acc}>", "wide", "wide",
        np.cumprod),
]

# Kernel-only folds: no public function of their own (so no entry above, which public.py and
# the derivative rules iterate), called through reductions.py's dispatch by the compositions in
# nanfuncs.py on float tensors that need no gradient. nanmax / nanmin skip NaNs in one pass: a
# slice of NaNs gives NaN; integers and bools fold as max / min. nanargmax / nanargmin: the first
# index of the best number, -1 for a slice of NaNs (nanfuncs.py raises NumPy's ValueError), 0
# where every number is -inf / inf (NumPy's argmax over NaN replaced by -inf / inf).
INTERNAL = [
    Red("nanmax", "reduce", "NLO", ("SX_NANMAXF", "SX_MAXI"), "sx_nanext_op<sx_{s}, true>", "same",
        "same", np.nanmax, grad=False),
    Red("nanmin", "reduce", "NHI", ("SX_NANMINF", "SX_MINI"), "sx_nanext_op<sx_{s}, false>", "same",
        "same", np.nanmin, grad=False),
    Red("nanargmax", "arg", "", ("SX_NANARGMAXF", "SX_ARGMAXI"), "sx_nanarg_op<sx_{s}, true>", "",
        "int64", np.nanargmax, grad=False),
    Red("nanargmin", "arg", "", ("SX_NANARGMINF", "SX_ARGMINI"), "sx_nanarg_op<sx_{s}, false>", "",
        "int64", np.nanargmin, grad=False),
]

KERNELS = REDUCTIONS + INTERNAL   # every kernel of the "red" family, on both devices
RED = {r.name: r for r in KERNELS}


def fold_of(kernel: str, d: dt.DType) -> Red | None:
    """The fold (form "reduce") whose kernel for input dtype d is named `kernel`, else None."""
    for r in REDUCTIONS:
        if r.form == "reduce" and f"{r.name}_{d.sfx}" == kernel:
            return r
    return None
