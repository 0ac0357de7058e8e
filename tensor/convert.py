"""Tensors from data: Python numbers and nested sequences, NumPy arrays (shared when a tensor
can view their memory), DLPack producers and other tensors (asarray, array, tensor,
from_numpy, from_dlpack). Values no dtype here can hold raise rather than change.

>>> import numpy as np, tensor as T
>>> T.tensor([[1, 2], [3, 4]]).dtype, T.asarray(np.arange(3.0)).tolist()
(tensor.int64, [0.0, 1.0, 2.0])
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from . import _hook
from . import dtypes as dt
from ._dlpack import parse_capsule
from ._tensor import Storage, Tensor, contiguous_strides, new_storage
from .device import CPU
from .device import device as parse_device


def _dtype_or(d, default):
    return default if d is None else dt.dtype(d)


def _unshareable(a: np.ndarray) -> str | None:
    """Why a tensor cannot view a's memory as it is, or None when it can."""
    isz = a.itemsize
    if not a.dtype.isnative:
        return (f"its dtype {a.dtype.str!r} is not in this machine's byte order; convert it first "
                f"with a.astype(a.dtype.newbyteorder('='))")
    if a.size and a.ctypes.data % isz:
        return (f"its data address is not a multiple of its itemsize {isz} (a misaligned view); "
                "copy it first with a.copy()")
    if a.size and any(s % isz for n, s in zip(a.shape, a.strides) if n > 1):
        return (f"its strides {a.strides} (bytes) are not multiples of its itemsize {isz}; copy it "
                "first with a.copy()")
    return None


def _wrap_numpy(a: np.ndarray) -> Tensor:
    """Zero-copy view of a NumPy array's memory (the storage keeps the array alive; the caller
    checked _unshareable). A read-only array gives a read-only tensor."""
    d = dt.dtype(a.dtype)
    isz = a.itemsize
    # a size-1 axis may carry any stride in NumPy (never stepped along: 0 serves as well)
    strides = tuple(s // isz if s % isz == 0 else 0 for s in a.strides)
    lo = sum((n - 1) * s for n, s in zip(a.shape, strides) if s < 0) if a.size else 0
    hi = sum((n - 1) * s for n, s in zip(a.shape, strides) if s > 0) if a.size else 0
    st = Storage(a.ctypes.data + lo * isz, (hi - lo + 1) * isz if a.size else 0, CPU, owner=a,
                 readonly=not a.flags.writeable)
    return Tensor._make(st, tuple(a.shape), strides, -lo, d)


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (writes are seen by both). It never copies:
    a read-only array gives a read-only tensor, and an array whose memory a tensor cannot view
    (non-native byte order, misaligned data, strides that are not multiples of the itemsize)
    raises ValueError, as PyTorch's; so does a bool array holding bytes other than 0 and 1.

    >>> import numpy as np, tensor as T
    >>> a = np.arange(3.0); a.flags.writeable = False
    >>> t = T.from_numpy(a); t.flags.writeable, T.from_numpy(a).data_ptr() == a.ctypes.data
    (False, True)
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}")
    dt.dtype(a.dtype)  # an unsupported dtype is the first thing to report (TypeError)
    why = _unshareable(a)
    if why is None and _noncanonical_bools(a):
        why = ("it holds bytes other than 0 and 1, which NumPy reads as True and the kernels "
               "would not; make a canonical copy with a.view(np.uint8) != 0")
    if why is not None:
        raise ValueError(f"from_numpy: cannot share the memory of this {a.dtype} array of shape "
                         f"{a.shape}: {why}")
    return _wrap_numpy(a)


def _noncanonical_bools(a: np.ndarray) -> bool:
    """Whether a bool array holds bytes other than 0 and 1 (a uint8 buffer viewed as bool,
    np.frombuffer(..., dtype=bool)): NumPy reads any nonzero byte as True, the kernels (which
    load bool bytes as the integers 0 and 1) would not."""
    return a.dtype == np.bool_ and a.size > 0 and int(a.view(np.uint8).max()) > 1


def _numpy_tensor(a: np.ndarray, copy: bool | None) -> Tensor:
    """asarray's view of a NumPy array: shared when a tensor can view it (read-only arrays
    stay read-only), else a native, aligned copy (an error with copy=False). A bool array
    with bytes other than 0 and 1 is copied with them made 1 (True, as NumPy reads them)."""
    if _noncanonical_bools(a):
        if copy is False:
            raise ValueError("asarray: copy=False but this bool array holds bytes other than 0 and 1, "
                             "which are copied as True")
        a = a.view(np.uint8) != 0
    why = _unshareable(a)
    if why is not None:
        if copy is False:
            raise ValueError(f"asarray: copy=False but this {a.dtype} array cannot be shared: {why}")
        a = np.array(a, dtype=a.dtype.newbyteorder("="), copy=True)
    return _wrap_numpy(a)


def _np_from_data(data, d, op: str = "tensor") -> np.ndarray:
    """NumPy's reading of Python data (numbers, nested sequences) as dtype d (None: NumPy's
    choice), in a dtype this library has; values no dtype here can hold raise (see asarray)."""
    if isinstance(data, str | bytes):
        raise TypeError(f"{op}: cannot make a tensor from a {type(data).__name__} ({data!r:.40}); "
                        "expected numbers, nested sequences of numbers, arrays or tensors")
    # bfloat16: read as float64, so astype rounds each value once (through float32: twice)
    target = None if d is None else (np.dtype(np.float64) if d is dt.bfloat16 else d.np)
    if target is not None and d.kind != "c" and _holds_complex(data):  # NumPy would drop the imaginary parts
        raise TypeError(f"{op}: cannot convert complex values to {d.name}; use a complex dtype "
                        "(complex64, complex128)")
    try:
        a = np.asarray(data, dtype=target)
    except OverflowError as e:  # NumPy 2: a Python int the dtype cannot hold
        bad = next((x for x in _leaves(data) if _int_overflows(x, target)), None)
        if bad is None:
            raise OverflowError(f"{op}: {e}") from None
        raise OverflowError(f"{op}: Python integer {dt.show_int(bad)} out of bounds for {d.name}") from None
    except (ValueError, TypeError) as e:
        if any(isinstance(x, complex | np.complexfloating) for x in _leaves(data)):
            raise TypeError(f"{op}: cannot convert complex values to {d.name}; use a complex "
                            "dtype (complex64, complex128)") from None
        # NumPy's type: ValueError for ragged data or NaN into an int dtype (as PyTorch), TypeError
        # for an object that is no number
        raise type(e)(f"{op}: cannot convert {type(data).__name__} to a tensor: {e}") from None
    if d is dt.bfloat16:
        a = _bf16_ints_once(data, a)
    if a.dtype == object:  # Python ints past uint64 (NumPy: object), or ragged / mixed data
        bad = next((x for x in _leaves(data) if type(x) is int and not -2**63 <= x < 2**64), None)
        if bad is not None:
            raise OverflowError(f"{op}: Python integer {dt.show_int(bad)} out of bounds for uint64, the "
                                "widest unsigned dtype" if bad > 0 else
                                f"{op}: Python integer {dt.show_int(bad)} out of bounds for int64")
        raise TypeError(f"{op}: cannot build a tensor from ragged or mixed data: {data!r:.80}")
    return _convertible(a, d, op)


def _bf16_ints_once(data, a: np.ndarray) -> np.ndarray:
    """Python data read for bfloat16 as float64 (`a`), with each integer past 2**53 (where
    float64 had already rounded it once, and the cast to bfloat16 would round it again:
    2**60 + 2**52 + 1 became 2**60, not 2**60 + 2**53) replaced by its bfloat16 rounding, which
    float64 holds exactly: every value then rounds once."""
    if a.dtype != np.float64 or a.size == 0:
        return a
    with np.errstate(invalid="ignore"):
        if not (np.abs(a) > 2.0 ** 53).any():   # (NaN compares False)
            return a
    try:
        leaves = np.asarray(data, dtype=object)
    except (ValueError, TypeError):
        return a
    if leaves.shape != a.shape:
        return a
    out = a.copy().reshape(-1)
    for i, x in enumerate(leaves.reshape(-1).tolist()):
        if isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_) and abs(int(x)) > 2 ** 53:
            m = abs(int(x))
            sh = m.bit_length() - 8                 # bfloat16 keeps 8 significant bits
            q, r = divmod(m, 1 << sh)
            if 2 * r > 1 << sh or (2 * r == 1 << sh and q & 1):   # to nearest, ties to even
                q += 1
            out[i] = math.copysign(float(q << sh), int(x))
    return out.reshape(a.shape)


def _holds_complex(data) -> bool:
    """Whether data holds a complex value that NumPy casts to a real dtype with only a warning
    (NumPy complex scalars; Python ones raise there): data is read once without a dtype."""
    if isinstance(data, complex | np.complexfloating):
        return True
    if not isinstance(data, list | tuple):
        return False
    try:
        return np.asarray(data).dtype.kind == "c"
    except (ValueError, TypeError, OverflowError):  # ragged, mixed...: the real conversion reports
        return False


def _leaves(data):
    """The non-sequence items of nested lists and tuples (and object arrays), in order."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, list | tuple):
            stack.extend(reversed(x))
        elif isinstance(x, np.ndarray) and x.dtype == object:
            stack.extend(reversed(x.ravel().tolist()))
        else:
            yield x


def _int_overflows(x, target) -> bool:
    if not isinstance(x, int) or isinstance(x, bool):
        return False
    try:
        np.asarray(x, dtype=target)
    except OverflowError:
        return True
    return False


def _convertible(a: np.ndarray, d, op: str) -> np.ndarray:
    """a itself when its dtype is one of ours, else a converted copy in the closest dtype we
    have, where no value changes (the rule asarray documents); TypeError / OverflowError naming
    the dtype or value otherwise. d: the dtype asked for (None: a's own)."""
    try:
        dt.dtype(a.dtype)
        return a
    except TypeError:
        pass
    k = a.dtype.kind
    if k == "O":  # Python objects: read them as Python data
        return _np_from_data(a.tolist(), d, op)
    if k == "c":  # long double complex: rounded to complex128, as NumPy's astype
        return a.astype(np.complex128)
    if k == "f":  # long double: rounded to float64, as NumPy's astype
        return a.astype(np.float64)
    raise TypeError(f"{op}: cannot make a tensor from an array of dtype {a.dtype}: only booleans, "
                    "integers and floats are numbers here")


def _fill_scalar(v, op: str):
    """A fill value checked as a number: text raises TypeError, NumPy scalars of dtypes we lack
    convert by asarray's rule."""
    if isinstance(v, np.generic):
        return _convertible(np.asarray(v), None, op)[()]
    if dt.scalar_kind(v) is None:
        raise TypeError(f"{op}: the fill value must be a number or a tensor, got {type(v).__name__} "
                        f"({v!r:.40})")
    return v


def asarray(obj, dtype=None, copy: bool | None = None, device=None) -> Tensor:
    """NumPy's asarray: no copy when obj already is a tensor (or array) of that dtype.

    Python ints read as NumPy 2 reads them: int64, uint64 when every one is past int64 (and
    within uint64), float64 when such ints mix with int64 ones ([0, 2**63]); past uint64 or
    below int64 an OverflowError naming the int (NumPy gives object); Python complex values
    give complex128; strings, and complex values asked to fit a real dtype, raise TypeError;
    ragged lists, and NaN into an int dtype, ValueError (NumPy's types). Under
    set_default_dtype, Python floats give the default float and complex values its complex
    (float32: complex64, PyTorch's rule), while ints that read as float64 stay float64. A
    NumPy array of a dtype this library lacks converts by value (a copy): long double to
    float64, long double complex to complex128; string and date arrays raise TypeError. from_numpy, which
    never copies, refuses them all.

    >>> import numpy as np, tensor as T
    >>> T.asarray([2**63]).dtype
    tensor.uint64
    >>> T.asarray([2**64])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    OverflowError: asarray: Python integer 18446744073709551616 out of bounds for uint64, ...
    """
    d = _dtype_or(dtype, None)
    dev = parse_device(device) if device is not None else None
    if not isinstance(obj, Tensor):
        target = dev if dev is not None else parse_device(None)
        if target is not CPU:   # build on the host, then one copy to the device
            return asarray(asarray(obj, dtype, copy, CPU), device=target)
    if isinstance(obj, Tensor):
        if dev is not None and dev != obj.device:
            if copy is False:
                raise ValueError("asarray: copy=False but the tensor is on another device")
            return obj.to(dev) if d is None else obj.to(dev).astype(d)
        if (d is None or d is obj.dtype) and not copy:
            return obj
        if copy is False:
            raise ValueError(f"asarray: copy=False but converting {obj.dtype.name} to {d.name} copies")
        return obj.astype(d or obj.dtype)
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        return asarray(from_dlpack(obj), dtype=d, copy=copy)
    if isinstance(obj, np.ndarray):
        conv = _convertible(obj, d, "asarray")  # a dtype we lack (object, long double...): converted
        if conv is not obj:
            if copy is False:
                raise ValueError(f"asarray: copy=False but the {obj.dtype} array must be converted (a copy)")
            obj = conv
        t = _numpy_tensor(obj, copy)
        if copy:
            t = t.copy() if d is None or d is t.dtype else t.astype(d)
        elif d is not None and d is not t.dtype:
            if copy is False:
                raise ValueError("asarray: copy=False but the dtype conversion copies")
            t = t.astype(d)
        return t
    if copy is False:
        raise ValueError(f"asarray: copy=False but converting a {type(obj).__name__} copies")
    return _tensor_from(obj, d, CPU, "asarray")   # (built on the host: moved above when asked)


def array(obj, dtype=None, copy: bool = True) -> Tensor:
    """NumPy's array: copies by default."""
    return asarray(obj, dtype=dtype, copy=copy)


def tensor(data, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of data (nested lists, scalars, arrays or tensors); data no
    dtype here holds raises as asarray documents. Without device=, a tensor's copy stays on its
    device (PyTorch's rule), as does a list of tensors all on one device; other data goes to
    the default device. pin_memory=True: in pinned host memory (tensor/pinned.py).

    >>> import tensor as T
    >>> T.tensor(T.ones(2, device="cpu")).device.type
    'cpu'
    """
    if pin_memory:
        t = _tensor_from(data, _dtype_or(dtype, None), device, "tensor", False).pin_memory()
        return t.requires_grad_() if requires_grad else t
    return _tensor_from(data, _dtype_or(dtype, None), device, "tensor", requires_grad)


def _default_for(a: np.ndarray, data):
    """The dtype Python data that NumPy read as `a` takes under set_default_dtype (None: a's):
    float64 from Python floats is the default float, complex128 its complex (PyTorch's rule);
    float64 from ints alone (int64 ones mixed with ones past int64) stays float64, NumPy's
    reading (PyTorch refuses such ints), which the default float could not hold exactly."""
    if a.dtype == np.complex128:
        return dt.complex_of(dt.get_default_dtype())
    if a.dtype != np.float64:
        return None
    first = _first_leaf(data)
    if isinstance(first, int) and not any(isinstance(x, float | np.floating) for x in _leaves(data)):
        return None
    return dt.get_default_dtype()


def _first_leaf(data):
    while isinstance(data, list | tuple) and data:
        data = data[0]
    return data


def _data_device(data):
    """The device of a tensor, or of the tensors in a list that holds them (all on one
    device); None for other data (the default device)."""
    if isinstance(data, Tensor):
        return data.device
    if not isinstance(_first_leaf(data), Tensor):   # (a list of numbers: no walk)
        return None
    devs = {x.device for x in _leaves(data) if isinstance(x, Tensor)}
    return devs.pop() if len(devs) == 1 else None


def _foreign(x) -> bool:
    """x is another library's array that NumPy may not read (PyTorch's bfloat16): it comes in
    through DLPack."""
    return hasattr(x, "__dlpack__") and not isinstance(x, Tensor | np.ndarray | np.generic)


def _tensor_leaves(data):
    """data (nested lists of tensors, another library's arrays or bfloat16 tensors among them)
    as host arrays NumPy can read, and the dtype to give the result (bfloat16 when every leaf
    is; None: NumPy's promotion), or None when NumPy reads data as it is."""
    first = _first_leaf(data)
    if not (isinstance(first, Tensor) or _foreign(first)):   # (a list of numbers: no walk)
        return None
    leaves = list(_leaves(data))
    if not all(isinstance(x, Tensor) or _foreign(x) for x in leaves):
        return None
    if not any(_foreign(x) or x.dtype is dt.bfloat16 for x in leaves):
        return None
    ours = [x if isinstance(x, Tensor) else from_dlpack(x) for x in leaves]
    every_bf16 = all(x.dtype is dt.bfloat16 for x in ours)
    it = iter(ours)

    def host(x):   # bfloat16 -> float32 is exact
        if isinstance(x, list | tuple):
            return [host(e) for e in x]
        t = next(it).detach()
        return (t.astype(dt.float32) if t.dtype is dt.bfloat16 else t).numpy()
    return host(data), (dt.bfloat16 if every_bf16 else None)


def _tensor_from(data, d, device, op: str, requires_grad: bool = False) -> Tensor:
    if _foreign(data):   # (a PyTorch tensor: DLPack carries every dtype, bfloat16 included)
        data = from_dlpack(data)
    dev = parse_device(device) if device is not None else _data_device(data)
    hosted = _tensor_leaves(data) if isinstance(data, list | tuple) else None
    if hosted is not None:   # bfloat16 or foreign leaves, read on the host
        data, d_leaves = hosted
        a = _np_from_data(data, None if d is dt.bfloat16 else d, op)
        out = asarray(a, device=CPU).astype(d or d_leaves or dt.dtype(a.dtype))
    elif isinstance(data, Tensor):
        out = data.detach().astype(d or data.dtype)   # (astype copies)
    else:
        a = _convertible(data, d, op) if isinstance(data, np.ndarray) else _np_from_data(data, d, op)
        if d is None and not isinstance(data, np.ndarray):
            d = _default_for(a, data)
        out = _host_copy(a, d or dt.dtype(a.dtype))
        if out is None:
            src = asarray(a, device=CPU)
            out = src.astype(d or src.dtype)   # a new tensor (the array may be the caller's)
    dev = parse_device(None) if dev is None else dev
    if dev != out.device:
        out = out.to(dev)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _host_copy(a: np.ndarray, d: dt.DType) -> Tensor | None:
    """A new CPU tensor of dtype d holding a's values, copied byte for byte, where a is a
    C-contiguous array in this machine's byte order whose dtype is d's NumPy dtype (what
    NumPy reads from Python data mostly is), or one NumPy casts to it exactly as the cast
    kernels do (float64 to the default float32; any rounding is IEEE round-to-nearest-even in
    both); None otherwise: bfloat16, bools, other dtypes take asarray's view and astype's copy."""
    if (d.np is None or not (a.flags.c_contiguous and a.dtype.isnative) or d.kind == "b"
            or a.dtype.kind == "b" or _hook.capture is not None):   # (a capture sees kernels, not
        return None                                                 # this memmove)
    if a.dtype != d.np:   # (d.np None would compare equal to float64: NumPy reads None so)
        if not (a.dtype.kind == d.kind and d.kind in "fc"):
            return None
        with np.errstate(over="ignore"):   # (an overflow to inf, as the kernels: no warning)
            a = a.astype(d.np)
    shape = a.shape
    out = Tensor._make(new_storage(a.nbytes, CPU), shape, contiguous_strides(shape), 0, d)
    if a.nbytes:
        ctypes.memmove(out._storage.ptr, a.__array_interface__["data"][0], a.nbytes)
    return out


# ---------------------------------------------------------------- DLPack

_FROM_DL = {(6, 8): dt.bool_, (0, 8): dt.int8, (1, 8): dt.uint8, (0, 16): dt.int16,
            (0, 32): dt.int32, (0, 64): dt.int64, (1, 16): dt.uint16, (1, 32): dt.uint32,
            (1, 64): dt.uint64, (2, 16): dt.float16, (4, 16): dt.bfloat16,
            (2, 32): dt.float32, (2, 64): dt.float64, (5, 64): dt.complex64, (5, 128): dt.complex128}


def from_dlpack(x, /, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor sharing memory with any DLPack producer (NumPy arrays, other libraries).

    The array API standard's keywords: device= puts the result there (a copy when the producer
    is elsewhere), copy=True always copies, copy=False never does (a ValueError when device=
    would need one)."""
    t, copied = (x, False) if isinstance(x, Tensor) else _import_dlpack(x, copy)
    if copied:   # (a misaligned or non-0/1 bool producer: copied already)
        copy = None
    if device is not None and parse_device(device) != t.device:
        if copy is False:
            raise ValueError(f"from_dlpack: the data is on {t.device}; device={device!r} needs "
                             "a copy, which copy=False forbids")
        return t.to_device(parse_device(device))   # (Tensor's methods are attached by then)
    return t.copy() if copy else t


def _import_dlpack(obj, copy: bool | None = None) -> tuple[Tensor, bool]:
    """The producer's memory as a tensor, and whether it had to be copied (see _host_fixup)."""
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(obj).__name__} does not implement __dlpack__")
    dev_type, dev_id = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
    if dev_type not in (1, 2):
        raise ValueError(f"from_dlpack: DLPack device type {dev_type} is not supported here "
                         "(CPU and CUDA only)")
    kw = {"stream": 1} if dev_type == 2 else {}  # CUDA: order the producer's work before ours
    try:
        cap = obj.__dlpack__(max_version=(1, 0), **kw)
    except TypeError:
        cap = obj.__dlpack__(**kw)
    v = parse_capsule(cap)
    d = _FROM_DL.get((v.dtype_code, v.bits))
    if d is None or v.lanes != 1:
        v.release()
        raise TypeError(f"from_dlpack: unsupported DLPack dtype (code {v.dtype_code}, "
                        f"{v.bits} bits, {v.lanes} lanes)")
    shape, strides = tuple(v.shape), tuple(v.strides)
    isz = d.itemsize
    n = 1
    for s in shape:
        n *= s
    lo = sum((m - 1) * s for m, s in zip(shape, strides) if s < 0) if n else 0
    hi = sum((m - 1) * s for m, s in zip(shape, strides) if s > 0) if n else 0
    device = CPU if dev_type == 1 else parse_device(f"cuda:{dev_id}")
    nbytes = (hi - lo + 1) * isz if n else 0
    start = v.ptr + lo * isz
    if n and device is CPU:
        try:
            fixed = _host_fixup(start, nbytes, d, shape, copy)
        except BaseException:
            v.release()
            raise
        if fixed is not None:   # our own aligned, canonical copy: the producer's memory is let go
            v.release()
            return Tensor._make(fixed._storage, shape, strides, -lo, d), True
    st = Storage(start, nbytes, device, owner=v, release=v.release, readonly=v.read_only)
    return Tensor._make(st, shape, strides, -lo, d), False


def _host_fixup(start: int, nbytes: int, d, shape, copy: bool | None):
    """None when host memory at start can be shared as dtype d; else a uint8 tensor holding
    an aligned copy of its nbytes (bool bytes other than 0 and 1 made 0 / 1, as asarray does
    for such NumPy arrays), or a ValueError when copy=False forbids it. Kernels assume
    aligned elements and bool bytes of 0 and 1 (others give wrong sums, ~, ==)."""
    import ctypes
    why = None
    if start % d.itemsize:
        why = f"its data pointer is not aligned to the {d.itemsize}-byte {d.name} elements"
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(start))
    if why is None and d is dt.bool_ and bool((raw > 1).any()):
        why = "its bool bytes hold values other than 0 and 1"
    if why is None:
        return None
    if copy is False:
        raise ValueError(f"from_dlpack: copy=False but the {d.name} data of shape {shape} cannot be "
                         f"shared: {why}")
    own = (raw != 0).view(np.uint8) if d is dt.bool_ else raw.copy()
    return _wrap_numpy(own)
