"""The eager fast path in C (csrc/fastpath.c, fp_alloc.h, fp_graph.h, fp_unary.h): the hottest Python paths
of a small op, done in C on the same objects, with the Python code as the reference and the
fallback (README "The eager fast path").

- ``Storage.__del__`` parks a CPU cache block in the allocator's exact-size cache;
- ``new_storage(nbytes)`` serves a CPU Storage from that cache (the CPU backend asks it first);
- ``Tensor.__add__``, ``__sub__``, ``__mul__``, ``__truediv__``, their reflected forms,
  ``__neg__`` and the comparisons (``__lt__``, ``__le__``, ``__gt__``, ``__ge__``, ``__eq__``,
  ``__ne__``: same-shape operands or a scalar only, no plans; their bool result carries no
  gradient, so a call autograd must see goes to Python) run their kernel directly when the
  Python path would run it without casts:
  contiguous operands of one shape and dtype on the CPU (or a Python float/int), from a table
  that elementwise._fast fills (`register`, through the backend's ``fast_resolved``); or any
  operand layout elementwise.binary's general path has run before (`register_plan`, through
  ``elementwise_resolved``: broadcasting, strided views). C runs only calls Python decided,
  with the same kernel and result. No capture may be running (it must see every call).
- the public unary functions (``T.exp``, ``x.exp()``, ``T.abs``, ``abs(x)``, ``T.sigmoid``... every
  elementwise unary op published as made: tensor/_methods.py offers them in
  ``_tensor.FAST_FUNCS``) are replaced, among Tensor's methods and in the ``tensor`` namespace and
  PUB, by C functions (csrc/fp_unary.h) that take a call with one contiguous, non-empty CPU
  tensor whose kernel elementwise._fast has resolved (the table above), put the node autograd's
  record would, and hand everything else (keywords, views, promotion, autocast, capture, forward
  mode, saved-tensor hooks) to the Python function; ``STRIDEX_FASTPATH_UNARY=0`` leaves them
  Python. T.exp(a) on 8x8 float32: ~2 us instead of ~5 (benchmarks/bench_overhead.py).
- autograd's ``record`` (``make_record``, installed through ``tensor._hook.set_record``): the
  common call (no keyword arguments, no forward mode, not in place, tensors as positional
  arguments, one tensor result) puts the same node on the graph as the Python record; the
  fast operators put theirs directly.

A 1-element add costs ~1.1 us this way instead of ~4.4 us, ~1.9 us instead of ~10.4 us with
requires_grad (benchmarks/bench_cpu.py). It is installed on the first CPU allocation;
``STRIDEX_FASTPATH=0`` leaves the Python paths alone, ``STRIDEX_FASTPATH_RECORD=0`` only
autograd's record. Where the C module cannot be built (no Python headers) the Python paths run,
as they did before.
"""
from __future__ import annotations

import os
import threading

from .. import _tensor
from .. import dtypes as dt
from .._tensor import Storage, Tensor
from ..device import CPU
from ..memory import _BUSY, _QUICK_MAX, Block, CachingAllocator, _Segment
from ..optable import UNARY
from . import build, launch
from . import kernels as K

_mod = None        # the C module once installed
_tried = False
_lock = threading.Lock()
_KIND = {"f": 1, "i": 2}   # elementwise._fast's scalar kinds -> the C table's (0: a tensor)
_CODE = {"f32": 1, "f64": 2, "i32": 3, "i64": 4}   # dtypes whose Python scalars C encodes


def enabled() -> bool:
    return os.environ.get("STRIDEX_FASTPATH", "1") != "0"


def install(alloc, new_storage) -> None:
    """Build (or load) the C module and put its methods on Tensor and Storage; once. Only for
    the plain CachingAllocator (the sanitizers' poisoning one keeps its Python paths)."""
    global _mod, _tried
    if _tried:
        return
    with _lock:
        if _tried:
            return
        _tried = True
        if not enabled() or type(alloc) is not CachingAllocator:
            return
        src = (build.CSRC / "fastpath.c").read_text()
        mod = build.load_extension("fastpath", src)
        if mod is None:
            return
        # the hook module Storage reads (`capture`): the C paths step aside while one runs
        hook = _tensor._hook
        mod.install(Tensor, Storage, Block, _Segment, alloc, _BUSY, hook, K, CPU, new_storage,
                    _QUICK_MAX)
        mod.add_ops([op.name for op in UNARY])   # (before register() can be asked for them)
        _mod = mod
        if os.environ.get("STRIDEX_FASTPATH_UNARY", "1") != "0":
            _stand_in(mod)
        if os.environ.get("STRIDEX_FASTPATH_RECORD", "1") != "0":
            hook.record_accel = mod.make_record   # autograd's record, in C (once it is loaded)
            if hook.record is not None:
                hook.record = mod.make_record(hook.record)


def _stand_in(mod) -> None:
    """Put the C functions of the offered public unary functions (_tensor.FAST_FUNCS: T.exp,
    x.exp()...) where the Python ones are: among Tensor's methods and in _tensor.FAST_HOSTS.
    Names bound before (`from tensor import exp`) keep the Python function, which gives the
    same results."""
    subst = {id(f): (f, mod.fast_function(name, f)) for name, f in _tensor.FAST_FUNCS.items()}
    for host in _tensor.FAST_HOSTS:
        for k, v in list(host.items()):
            s = subst.get(id(v))
            if s is not None and s[0] is v:
                host[k] = s[1]
    for k, v in list(vars(Tensor).items()):
        s = subst.get(id(v))
        if s is not None and s[0] is v:
            setattr(Tensor, k, s[1])


def quick_storage():
    """The C module's new_storage(nbytes) -> a CPU Storage from the exact-size cache, or None
    (the allocator's Python path then); None where the C path is not installed."""
    return None if _mod is None else _mod.new_storage


def counters() -> dict:
    """Calls the C paths served (op_hits, storage_hits, del_hits) and operator calls they
    handed to Python (op_misses), since the start; empty where not installed."""
    return {} if _mod is None else _mod.counters()


_PLANNED = frozenset(("add", "subtract", "multiply", "true_divide"))   # the C dunders' ops


def _address(d: dt.DType, kernel: str) -> int:
    """The address of elementwise kernel `kernel` of dtype d's module (cached: finding the
    module means building its source)."""
    a = _ADDR.get((d, kernel))
    if a is None:
        a = _ADDR[(d, kernel)] = build.address(K.module("ew", d, kernel), kernel)
    return a


_ADDR: dict = {}


def register_plan(name: str, a, b, out, ins) -> None:
    """Enter elementwise.binary's general path: out = name(a, b) ran its loop-dtype kernel over
    ins (a and b broadcast, or a _Scalar) into out, a fresh tensor, without casts; the C
    operators take the same call for operands of the same layout from then on."""
    m = _mod
    if m is None or name not in _PLANNED:
        return
    key = (name, _layout_key(a), _layout_key(b))
    if key in _SEEN:   # (the general path hands every call over: the plan is made once)
        return
    x = ins[0] if type(ins[0]) is Tensor else ins[1]
    ld = x._dtype if type(x) is Tensor else x.dtype
    kname = f"{name}_{ld.sfx}"
    call = launch.elementwise_call(ld, kname, out, ins)
    addr = _address(ld, kname)
    if call is None or not addr:
        return
    nd, meta = call[1][0], call[1][1]
    if m.register_plan(name, a, b, out, ld, ld.itemsize, _CODE.get(ld.sfx, 0), out._dtype.itemsize,
                       addr, nd, list(meta), out._dtype.kind in "fc"):
        if len(_SEEN) >= _MAX_PLANS:   # the C table empties itself at this size too
            _SEEN.clear()
        _SEEN.add(key)


def _layout_key(x):
    """What of an operand a C plan is keyed by (its dtype, shape and strides; a scalar's type)."""
    if type(x) is Tensor:
        return x._dtype.sfx, x._shape, x._strides
    return type(x)


_SEEN: set = set()   # register_plan's keys the C module took (its own checks may refuse one)
_MAX_PLANS = 4096    # fastpath.c's MAX_PLANS


def register(name: str, d: dt.DType, other, od: dt.DType, kernel: str) -> None:
    """Enter elementwise._fast's resolution of `d name other` (other: d's suffix for a tensor
    of dtype d, "f"/"i" for a Python scalar) computing kernel `kernel` into dtype od."""
    m = _mod
    if m is None:
        return
    kind = 0 if other == d.sfx else _KIND.get(other)
    if kind is None or kind and d.sfx not in _CODE:
        return
    addr = _address(d, kernel)
    if addr:
        m.register(name, d, d.itemsize, _CODE.get(d.sfx, 0), kind, od, od.itemsize, addr,
                   od.kind in "fc")
