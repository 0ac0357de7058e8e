"""Generate the CUDA kernel sources from the op tables (mirrors tensor/cpu/kernels.py).

A template family ("ew", "red", and those tensor/cuda registers: "gemm", "index", ...) gives,
per dtype, a *prelude* (its header include) and one *entry* per kernel: the
``extern "C" __global__`` function (with any functor it needs) taking a by-value argument
struct (sx_indexer<N>, sx_red_args, ...). Kernel names are the CPU's: add_f32, exp_f16,
cast_f32_i8, where_f32, sum_bf16, ...

Contraction: NVRTC fuses a * b + c into an FMA unless told not to (--fmad=false); so does the
CPU's gcc within an expression (-std=gnu11 defaults to -ffp-contract=fast, and -march=native
has FMA on current hosts), which is why the CPU sources of the families below write their
multiply-adds as explicit fma() calls (what gcc may still contract there is exact: checked by
disassembly for the random fills) and why a cross-device comparison of an elementwise op with
a multiply-add inside allows an ulp (sx_logaddexp2 is built uncontracted on the CPU, to equal
NumPy's). The emulator's g++ contracts as NVRTC does, per family: emulator.contraction.
Families whose float results must equal the CPU's bit for bit (reductions and scatter-adds:
the CPU's order of additions; random fills, iota and the optimizer updates: the CPU's
formulas) are registered `exact` and built without contraction (explicit fma() calls stay
fused). Float scans are the exception in "red": a block scans its tiles in a parallel
(Hillis-Steele) order, which a sequential row walk would make slow on long rows, so cumsum /
cumprod equal the CPU's within rounding, not bitwise (as PyTorch's CUDA scans). The
elementwise kernels are built without contraction too: a captured step's fused kernel
(tensor/cuda/fused.py, built the same way) then rounds as the unfused kernels, and its
replay is eager's bit for bit (contracting a multiply in one op with an add in the next would
round once less); memory-bound kernels lose nothing by it. Gemm and the nn row kernels keep
contraction: faster, as accurate, and their cross-device tests compare to a few ulps.

Compile units: a *module* is a family's prelude with every entry of one dtype (what the compile
check and the emulator build); a *unit* is the prelude with the entries of one kernel only,
which is what the runtime compiles with NVRTC on first use. NVRTC's cost is in optimising
entries, not in parsing headers: ew_f16 whole takes ~11 s, add_f16 alone ~0.2 s.
"""
from __future__ import annotations

from functools import cache

from .. import dtypes as dt
from ..optable import ew_specs
from ..redtable import KERNELS

FAMILIES = ("ew", "red")
_EXTERN = 'extern "C" __global__ void __launch_bounds__'


def ew_functor(name: str, spec: tuple) -> str:
    """The functor of elementwise kernel `name` (spec: optable.ew_specs' entry, arity 1 or 2):
    operator() takes the compute-typed operands and returns the stored output value."""
    arity, ins, out, expr = spec
    params = ", ".join(f"sx_{sfx}::C {v}" for sfx, v in zip(ins, "ab"))
    return (f"struct {name}_fn {{ __device__ __forceinline__ sx_{out}::T operator()"
            f"({params}) const {{ return sx_{out}::st({expr}); }} }};")


def ew_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    """Module ("ew", d): every unary/binary op whose loop takes d, casts from d, where
    (optable.ew_specs)."""
    out: dict[str, str] = {}
    for name, spec in ew_specs(d).items():
        arity, ins, o = spec[:3]
        if arity == 3:
            out[name] = f"{_EXTERN}(SX_BLOCK) {name}(sx_indexer<4> ix) {{ sx_where<sx_{o}>(ix); }}"
            continue
        call = (f"sx_unary<sx_{ins[0]}, sx_{o}>" if arity == 1
                else f"sx_binary<sx_{ins[0]}, sx_{ins[1]}, sx_{o}>")
        out[name] = (f"{ew_functor(name, spec)}\n"
                     f"{_EXTERN}(SX_BLOCK) {name}(sx_indexer<{arity + 1}> ix) {{ {call}(ix, {name}_fn()); }}")
    return '#include "elementwise.cuh"\n', out


def red_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    """Module ("red", d): the reductions and scans of d (tensor/redtable.py)."""
    s, out = d.sfx, {}
    for r in KERNELS:
        o = r.out_dtype(d).sfx
        if r.form == "scan":
            out[f"{r.name}_{s}"] = (f"{_EXTERN}(SX_RBLOCK) {r.name}_{s}(sx_scan_args a) "
                                    f"{{ sx_scan<sx_{s}, sx_{o}, {r.functor(d)}>(a); }}")
        else:
            out[f"{r.name}_{s}"] = (f"{_EXTERN}(SX_RBLOCK) {r.name}_{s}(sx_red_args a) "
                                    f"{{ sx_reduce<sx_{s}, sx_{o}, {r.functor(d)}>(a); }}")
    return '#include "reduce.cuh"\n', out


_ENTRIES = {"ew": ew_entries, "red": red_entries}
_DTYPES: dict = {"ew": dt.ALL, "red": dt.REAL}   # complex reductions compose (reductions.py)
_EXACT = {"red", "ew"}   # families built without FMA contraction (see the module docstring)

# Modules under tensor/cuda that register further families when imported.
FAMILY_MODULES: tuple = ("random", "misc", "gemm", "index", "nn_kernels", "sort", "fft", "linalg",
                          "linalg_eig", "segment", "sparse", "rnn", "ctc",
                          "grid", "maxpool_pad")


def register_family(name: str, entries_fn, dtypes=None, exact: bool = False) -> None:
    """Add a template family: entries_fn(dtype or None) -> (prelude, {kernel name: source of
    its entry}); dtypes: the dtypes it is built for ([None]: one dtype-free module); exact:
    float results equal the CPU's bit for bit, so no FMA contraction."""
    _ENTRIES[name] = entries_fn
    _DTYPES[name] = tuple(dt.ALL if dtypes is None else dtypes)
    if exact:
        _EXACT.add(name)
    entries.cache_clear()


def register_table(name: str, header: str, block: str, table: dict, dtypes) -> None:
    """register_family for a family of plain entries: table {kernel: (parameters, call)}, each
    an extern "C" kernel `kernel`_<dtype suffix> bounded by the macro `block`, with
    {T} in the parameters the dtype's C type and {s} in the call its suffix; header: the .cuh
    the calls are in."""
    def entries_fn(d: dt.DType) -> tuple[str, dict[str, str]]:
        s, ty = d.sfx, f"sx_{d.sfx}::T"
        return f'#include "{header}"\n', {
            f"{k}_{s}": (f'extern "C" __global__ void __launch_bounds__({block}) {k}_{s}('
                         f"{params.format(T=ty)}) {{ {call.format(s=s)}; }}")
            for k, (params, call) in table.items()}
    register_family(name, entries_fn, dtypes)


def fmad(family: str) -> bool:
    """Whether NVRTC may contract a * b + c into an FMA in this family's kernels."""
    return family not in _EXACT


def load_families() -> None:
    """Import every family module so its register_family calls have run."""
    import importlib
    for m in FAMILY_MODULES:
        importlib.import_module(f"tensor.cuda.{m}")


@cache
def entries(family: str, d: dt.DType | None) -> tuple[str, dict[str, str]]:
    """(prelude, {kernel name: entry source}) of module (family, d)."""
    return _ENTRIES[family](d)


def kernel_names(family: str, d: dt.DType | None) -> list[str]:
    return list(entries(family, d)[1])


def module_name(family: str, d: dt.DType | None) -> str:
    return f"{family}_{d.sfx}" if d is not None else family


def unit_name(family: str, d: dt.DType | None, kernel: str) -> str:
    """Name of the compile unit holding just `kernel` (its NVRTC program and cache file)."""
    return f"{module_name(family, d)}.{kernel}"


def source(family: str, d: dt.DType | None, names=None) -> str:
    """CUDA source of module (family, d), or of the unit with only the kernels `names`."""
    prelude, ents = entries(family, d)
    if names is None:
        names = ents
    else:
        missing = [n for n in names if n not in ents]
        if missing:
            raise KeyError(f"CUDA kernels {missing} are not in module {module_name(family, d)}")
    return prelude + "\n" + "\n".join(ents[n] for n in names) + "\n"


def all_modules() -> list[tuple[str, dt.DType | None]]:
    """Every (family, dtype) module the backend can build: what the compile test covers."""
    load_families()
    return [(f, d) for f in _ENTRIES for d in _DTYPES[f]]


def all_kernels() -> list[tuple[str, dt.DType | None, str]]:
    """Every (family, dtype, kernel) the backend can launch."""
    return [(f, d, n) for f, d in all_modules() for n in kernel_names(f, d)]


def cubin(family: str, d: dt.DType | None, arch: str, fast: bool = False, names=None) -> bytes:
    """CUBIN of module (family, d), or of the unit of the kernels `names`."""
    from . import nvrtc
    name = module_name(family, d) if names is None else unit_name(family, d, ".".join(names))
    return nvrtc.compile(name, source(family, d, names), arch, fast, fmad(family))


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
        _fields_ = [("in_", vp), ("out", vp), ("part", vp), ("nd", C.c_int), ("mode", C.c_int),
                    ("rows", i64), ("L", i64), ("G", i64), ("chunk", i64),
                    ("sh", i64 * MAXDIM), ("si", i64 * MAXDIM), ("so", i64 * MAXDIM)]

    return {2: indexer(2), 3: indexer(3), 4: indexer(4)}, RedArgs, ScanArgs


INDEXER, RED_ARGS, SCAN_ARGS = _ctypes()
