"""Autocast: regions of code whose products run in a 16-bit float and whose precision-sensitive
ops run in float32, as PyTorch's torch.autocast.

>>> import tensor as T
>>> a, b = T.ones((2, 3), dtype=T.float32), T.ones((3, 4), dtype=T.float32)
>>> with T.autocast("cpu", dtype=T.bfloat16):
...     c = a @ b                 # a product: in bfloat16
...     s = c.sum()               # a reduction: in float32
>>> c.dtype.name, s.dtype.name
('bfloat16', 'float32')

Inside a region every op listed in tensor/amptable.py casts its floating tensor inputs first:
LOW ops (matmul, linear, convolutions, attention...) to the region's dtype, FP32 ops (softmax,
norms, losses, reductions, exp/log/pow...) to float32; float64 tensors, ops given an explicit
dtype= or out=, and in-place ops are left alone, as PyTorch's. The casts are ordinary recorded
ops, so gradients flow back to the float32 tensors (a parameter's gradient keeps its dtype), and
the backward of an op runs in the dtype its forward ran in: autograd's engine runs with autocast
off. Within the outermost region the cast of a leaf tensor that requires grad (a parameter) is
made once per (dtype, grad mode) and reused, until the tensor is written in place (its storage
version moves on). Regions are per thread and per device type ("cpu", "cuda"); they nest, and
`enabled=False` turns autocast off inside one. An op inside an autocast op (what conv2d's
matmul is to conv2d) is not cast again. Checkpointed segments record the autocast state of
their first run and recompute under it.
"""
from __future__ import annotations

import functools
import threading
import warnings

from . import _hook
from . import dtypes as dt
from ._tensor import Tensor
from .amptable import LOW, TABLE

_DEFAULT = {"cpu": dt.bfloat16, "cuda": dt.float16}
_LOW_DTYPES = (dt.float16, dt.bfloat16)


class _State(threading.local):
    def __init__(self) -> None:
        self.regions: dict = {}   # device type -> its innermost region's dtype, None if disabled
        self.dtypes: dict = {}    # device type -> its innermost region's dtype, disabled or not
        self.depth = 0            # nesting of regions (the cast cache lives while > 0)
        self.inside = 0           # > 0 while an autocast op runs (its inner ops are left alone)
        self.cache_enabled = True
        self.cache: dict = {}     # (id(t), dtype, grad mode) -> (t, storage version, cast)


_state = _State()
_active = 0                       # enabled regions over all threads: _hook.amp is set while > 0
_lock = threading.Lock()


def _count(delta: int) -> None:
    global _active
    with _lock:
        _active += delta
        _hook.amp = _dispatch if _active > 0 else None


def _device_type(args) -> str | None:
    """The device type of the first tensor among args (and lists/tuples in them)."""
    for a in args:
        if type(a) is Tensor:
            return a._storage.device.type
        if isinstance(a, list | tuple):
            for b in a:
                if type(b) is Tensor:
                    return b._storage.device.type
    return None


def _cast(t, to: dt.DType, st: _State):
    if type(t) is not Tensor:
        if isinstance(t, list | tuple):
            return type(t)(_cast(x, to, st) for x in t)
        return t
    d = t._dtype
    if d is to or d.kind != "f" or d is dt.float64 or (to is dt.float32 and d not in _LOW_DTYPES):
        return t
    if not (st.cache_enabled and t._requires_grad and t.grad_fn is None):
        return t.astype(to)
    g = _hook.grad_state
    key = (id(t), to, bool(g is not None and g.grad_enabled))
    cap = _hook.capture   # capturing (tensor.compile): the capture's own cache (capture.py)
    cache = cap.casts if cap is not None and cap.mine() else st.cache
    hit = cache.get(key)
    if hit is not None and hit[0] is t and hit[1] == t._storage.version:
        return hit[2]
    c = t.astype(to)
    cache[key] = (t, t._storage.version, c)
    return c


def _dispatch(name: str, run, args, kwargs):
    """Called for every public op while some thread has an enabled region: cast the inputs of
    a listed op as its class says, then run(args, kwargs) (the op's usual path)."""
    st = _state
    cls = TABLE.get(name)
    if cls is None or st.inside or not st.regions or name.endswith("_") \
            or kwargs.get("dtype") is not None or kwargs.get("out") is not None:
        return run(args, kwargs)
    low = st.regions.get(_device_type(args) or _device_type(kwargs.values()))
    if low is None:
        return run(args, kwargs)
    to = low if cls is LOW else dt.float32
    args = tuple(_cast(a, to, st) for a in args)
    if kwargs:
        kwargs = {k: _cast(v, to, st) for k, v in kwargs.items()}
    st.inside += 1
    try:
        return run(args, kwargs)
    finally:
        st.inside -= 1


def autocast_op(name: str):
    """Declare a composite function (not a recorded op) as op `name` of the autocast table:
    inside a region its inputs are cast as the table says, and its inner ops are left alone."""
    def deco(fn):
        def run(args, kwargs):
            return fn(*args, **kwargs)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            a = _hook.amp
            return fn(*args, **kwargs) if a is None else a(name, run, args, kwargs)
        wrapper.__wrapped_op__ = name   # (as a recorded op's: the table's tests find it)
        return wrapper
    return deco


class autocast:   # noqa: N801  (PyTorch's name)
    """A region in which ops run in mixed precision (see the module docstring); a context
    manager, or a decorator running the function inside one.

    device_type: "cpu" or "cuda" (the region covers ops on that device type only); dtype:
    float16 or bfloat16 (default: get_autocast_dtype(device_type) when the region is made, as
    PyTorch's: the enclosing region's, else bfloat16 on the CPU and float16 on CUDA);
    enabled=False turns autocast off for that device type inside (its dtype still counts for
    get_autocast_dtype); cache_enabled: reuse the casts of parameters within the outermost
    region (default True).
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if device_type not in _DEFAULT:
            raise ValueError(f"autocast: device_type must be 'cpu' or 'cuda', got {device_type!r}")
        d = get_autocast_dtype(device_type) if dtype is None else dt.dtype(dtype)
        if d in (dt.float32, dt.float64):
            # PyTorch's: a warning and a disabled region (nanoGPT-style code passes the training
            # dtype, float32 included, to autocast unconditionally)
            warnings.warn(f"autocast: dtype {d.name} is not a lower precision (float16 or "
                          "bfloat16); autocast is disabled in this region", stacklevel=2)
            d, enabled = get_autocast_dtype(device_type), False
        elif d not in _LOW_DTYPES:
            raise ValueError(f"autocast: dtype must be float16 or bfloat16, got {d.name} (float32 "
                             "is what runs outside a region)")
        self.device_type, self.fast_dtype = device_type, d
        self._enabled = bool(enabled)
        self._cache = cache_enabled
        self._saved: list = []

    def __enter__(self):
        st = _state
        self._saved.append((st.regions, st.dtypes, st.cache_enabled))
        st.regions = {**st.regions, self.device_type: self.fast_dtype if self._enabled else None}
        st.dtypes = {**st.dtypes, self.device_type: self.fast_dtype}
        if self._cache is not None:
            st.cache_enabled = bool(self._cache)
        st.depth += 1
        if self._enabled:
            _count(1)
        return self

    def __exit__(self, *exc) -> None:
        st = _state
        st.regions, st.dtypes, st.cache_enabled = self._saved.pop()
        st.depth -= 1
        if st.depth == 0:
            st.cache.clear()
        if self._enabled:
            _count(-1)

    def __call__(self, fn):
        @functools.wraps(fn)
        def inside(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled, self._cache):
                return fn(*args, **kwargs)
        return inside


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether ops on device_type run under an enabled autocast region in this thread."""
    return _state.regions.get(device_type) is not None


def get_autocast_dtype(device_type: str):
    """The dtype of device_type's innermost region, enabled or not (PyTorch's: a region with
    enabled=False still sets it); the device type's default outside any."""
    st = _state
    d = st.regions.get(device_type) or st.dtypes.get(device_type)
    if d is None and device_type not in _DEFAULT:
        raise ValueError(f"get_autocast_dtype: device_type must be 'cpu' or 'cuda', got {device_type!r}")
    return d if d is not None else _DEFAULT[device_type]


def get_state():
    """This thread's autocast regions (what a checkpointed segment replays under)."""
    return dict(_state.regions)


class state_as:   # noqa: N801
    """Run a block under saved regions (get_state()), with no cast cache: a checkpoint's
    recomputation, or its first run (whose casts must be its own, as the recomputation's)."""

    def __init__(self, regions: dict) -> None:
        self.regions = regions

    def __enter__(self):
        st = _state
        self._saved = (st.regions, st.cache_enabled, st.inside)
        st.regions, st.cache_enabled, st.inside = dict(self.regions), False, 0
        self._n = sum(1 for d in self.regions.values() if d is not None)
        if self._n:
            _count(self._n)
        return self

    def __exit__(self, *exc) -> None:
        st = _state
        st.regions, st.cache_enabled, st.inside = self._saved
        if self._n:
            _count(-self._n)


def suspended():
    """Autocast off in this thread for a block (autograd's backward runs so); None when it is
    off already (callers skip the context)."""
    return state_as({}) if _state.regions else None
