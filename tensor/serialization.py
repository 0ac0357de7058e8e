"""save / load of state dicts in NumPy's .npz format, without pickle.

Tensors become arrays named by their path of keys joined with '/' (`layer.weight`,
`state/0/momentum_buffer`); a JSON entry `__tree__` records the nesting (dicts, lists, tuples,
int or str keys), the dtype of every tensor (bfloat16, which NumPy lacks, is stored as its raw
uint16 bits) and the plain values (numbers, strings, None) such as an optimizer's learning rate.
Files are read with allow_pickle=False, so loading one runs no code. save and load take a path
or a binary file object (io.BytesIO, an open file); load's map_location puts the tensors on a
device, as torch.load's.

>>> import os, tempfile, tensor as T
>>> sd = {"w": T.ones(2, dtype=T.bfloat16), "opt": {"step": 3, "state": {0: T.zeros(1)}}}
>>> path = os.path.join(tempfile.mkdtemp(), "ckpt.npz")
>>> save(sd, path); back = load(path)
>>> back["w"].dtype, back["opt"]["step"], list(back["opt"]["state"])
(tensor.bfloat16, 3, [0])
"""
from __future__ import annotations

import json
import os
import struct
import tempfile
import tokenize
import zipfile
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import dtypes as _dt
from ._tensor import Tensor
from .convert import from_numpy
from .device import Device
from .device import device as _device

_TREE = "__tree__"
_FORMAT = "stridex-state-v1"
_FORMAT_SHARED = "stridex-state-v2"   # v1 and views of shared memory entries (written only when used)
_STORAGE = "__storage__/"   # the entries holding memory that several tensors share


class CheckpointError(ValueError):
    """A file that is not a checkpoint save() wrote, or one whose entries are damaged."""


def _bits(t: Tensor, dtype) -> Tensor:
    """The same memory read as another dtype of the same size (contiguous t)."""
    return Tensor._make(t._storage, t._shape, t._strides, t._offset, _dt.dtype(dtype))


def _to_numpy(t: Tensor) -> np.ndarray:
    t = t.detach().contiguous()
    if t.dtype is _dt.bfloat16:  # tensor has no uint16: read the bits as int16, label them uint16
        return _bits(t, _dt.int16).numpy().view(np.uint16)
    return t.numpy()


def _encode(obj: Any, path: list, arrays: dict, shared: dict | None = None) -> Any:
    """The JSON description of obj; tensors go into arrays under their '/'-joined path, or, when
    they share memory with another tensor of obj, as a view of that memory's entry (shared:
    id(storage) -> (entry name, first byte) from _shared_entries)."""
    shared = {} if shared is None else shared
    if isinstance(obj, Tensor):
        name = "/".join(map(str, path))
        if name in arrays or name == _TREE or name == "" or name.startswith(_STORAGE):
            raise ValueError(f"save: the key path {path!r} gives the entry name {name!r}, which is "
                             "empty, reserved or taken by another path (keys must not contain '/')")
        got = shared.get(id(obj._storage))
        if got is not None:
            entry, lo = got
            return {"view": [entry, obj.dtype.name, list(obj.shape), list(obj._strides),
                             (obj._offset * obj.itemsize - lo) // obj.itemsize]}
        arrays[name] = _to_numpy(obj)
        return {"tensor": name, "dtype": obj.dtype.name}
    if isinstance(obj, Mapping):
        items = []
        for k, v in obj.items():
            if not isinstance(k, str | int) or isinstance(k, bool):
                raise TypeError(f"save: dict keys must be str or int, got {k!r} at {path!r}")
            items.append([k, _encode(v, path + [k], arrays, shared)])
        return {"dict": items}
    if isinstance(obj, list | tuple):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, path + [i], arrays, shared) for i, v in enumerate(obj)]}
    if obj is None or isinstance(obj, bool | int | float | str):
        return {"value": obj}
    if isinstance(obj, np.generic):
        return {"value": obj.item()}
    raise TypeError(f"save: cannot store a {type(obj).__name__} (at key path {path!r}); "
                    "tensors, dicts, lists, tuples, numbers, strings and None are supported")


def _tensors(obj: Any):
    """The tensors in obj's nesting (dicts, lists, tuples), in save's order."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, Mapping):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _tensors(v)


def _extent(t: Tensor) -> tuple[int, int]:
    """The bytes of t's storage that t reads: [first, end)."""
    isz = t.itemsize
    lo = t._offset + sum((m - 1) * s for m, s in zip(t._shape, t._strides) if s < 0)
    hi = t._offset + sum((m - 1) * s for m, s in zip(t._shape, t._strides) if s > 0)
    return lo * isz, (hi + 1) * isz


def _shared_entries(obj: Any, arrays: dict) -> dict:
    """Memory that two or more tensors of obj share (a view and its base, one tensor stored
    twice, tied weights) is stored once, as PyTorch's save does: the bytes they span go into
    arrays as a uint8 entry, and each such tensor is recorded as a view of it, so loading
    gives tensors that share memory again. Returns id(storage) -> (entry name, first byte)."""
    groups: dict = {}
    for t in _tensors(obj):
        if t.numel():
            groups.setdefault(id(t._storage), []).append(t)
    out = {}
    for ts in groups.values():
        if len(ts) < 2:
            continue
        spans = [_extent(t) for t in ts]
        lo = min(a for a, _ in spans) // 16 * 16   # (every element stays aligned to its size)
        hi = max(b for _, b in spans)
        name = f"{_STORAGE}{len(out)}"
        st = ts[0]._storage
        arrays[name] = Tensor._make(st, (hi - lo,), (1,), lo, _dt.uint8).numpy()
        out[id(st)] = (name, lo)
    return out


def _write_npz(f, arrays: dict, compress: bool) -> None:
    """What np.savez(f, **arrays) writes (an entry `name.npy` per array), without passing the
    names as keyword arguments: np.savez's own parameters (`file`, `allow_pickle`) would take
    an array of that name, or clash with it."""
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(f, "w", compression=method, allowZip64=True) as z:
        for name, a in arrays.items():
            with z.open(name + ".npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, np.asanyarray(a), allow_pickle=False)


def _is_file(f) -> bool:
    return hasattr(f, "write") or hasattr(f, "read")


def _name(f) -> str:
    """How a path or file object is named in messages."""
    return os.fspath(f) if not _is_file(f) else str(getattr(f, "name", type(f).__name__))


def save(obj: Mapping, path, compress: bool = False) -> None:
    """Write a (nested) dict of tensors and plain values to `path` as .npz (atomically), or into
    a binary file object opened for writing (at its position)."""
    if not isinstance(obj, Mapping):
        raise TypeError(f"save: expected a dict (a state_dict), got {type(obj).__name__}")
    arrays: dict = {}
    shared = _shared_entries(obj, arrays)
    tree = {"format": _FORMAT_SHARED if shared else _FORMAT, "root": _encode(obj, [], arrays, shared)}
    arrays[_TREE] = np.array(json.dumps(tree))
    if _is_file(path):
        if not hasattr(path, "write"):
            raise TypeError(f"save: the file object {_name(path)!r} is not open for writing")
        _write_npz(path, arrays, compress)
        return
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".npz")
    except OSError as e:   # (named after the target: the temporary file is ours, not the caller's)
        raise _named(e, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            _write_npz(f, arrays, compress)
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename == tmp:
            raise _named(e, path) from None
        raise


def _named(e: OSError, path: str) -> OSError:
    """e (an OSError about save's temporary file) as the same error about `path`."""
    return type(e)(e.errno, f"save: {e.strerror}", path)


def _native(a: np.ndarray) -> np.ndarray:
    """a in this machine's byte order (a file written on another machine may hold big-endian
    data, which from_numpy refuses to view)."""
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def _from_numpy(a: np.ndarray, dtype: str, name: str) -> Tensor:
    a = _native(a)
    want = "uint16" if dtype == "bfloat16" else dtype
    if a.dtype.name != want:
        raise CheckpointError(f"load: entry {name!r} holds {a.dtype.name} data but is recorded as "
                              f"{dtype}")
    if dtype == "bfloat16":
        return _bits(from_numpy(np.require(a, requirements="C").view(np.int16)), _dt.bfloat16)
    return from_numpy(a)


def _memory(entry, arrays, used: set, cache: dict) -> Tensor:
    """The uint8 tensor of a shared memory entry (one per entry, so its views share it),
    aligned for any dtype."""
    got = cache.get(entry)
    if got is None:
        if not isinstance(entry, str) or not entry.startswith(_STORAGE) or entry not in arrays.files:
            raise CheckpointError(f"load: the file has no memory entry {entry!r} (it is listed in its tree)")
        a = arrays[entry]
        if a.dtype != np.uint8 or a.ndim != 1:
            raise CheckpointError(f"load: memory entry {entry!r} holds {a.dtype} data of shape "
                                  f"{a.shape}, not bytes")
        if a.ctypes.data % 16 or not a.flags.writeable:
            a = np.empty(-(-a.size // 16), np.complex128).view(np.uint8)[:a.size]
            a[:] = arrays[entry]
        used.add(entry)
        got = cache[entry] = from_numpy(a)
    return got


def _view(spec, arrays, used: set, cache: dict) -> Tensor:
    """A tensor recorded as a view [entry, dtype, shape, strides, offset] of a memory entry,
    checked to lie inside it (a damaged file must raise, never read outside the memory)."""
    if not isinstance(spec, list) or len(spec) != 5:
        raise CheckpointError(f"load: damaged view node {spec!r}")
    entry, dtype, shape, strides, offset = spec
    ints = (shape, strides)
    if not all(isinstance(v, list) and all(type(i) is int for i in v) for v in ints) \
            or len(shape) != len(strides) or type(offset) is not int or min(shape, default=0) < 0:
        raise CheckpointError(f"load: damaged view node {spec!r}")
    try:
        d = _dt.dtype(dtype)
    except (TypeError, ValueError, KeyError):
        raise CheckpointError(f"load: view node {spec!r} has an unknown dtype") from None
    mem = _memory(entry, arrays, used, cache)
    if 0 in shape:
        offset = 0
    t = Tensor._make(mem._storage, tuple(shape), tuple(strides), offset, d)
    if t.numel():
        first, end = _extent(t)
        if first < 0 or end > mem.numel():
            raise CheckpointError(f"load: view node {spec!r} reaches outside its memory entry "
                                  f"{entry!r} of {mem.numel()} bytes")
    return t


def _decode(node: Any, arrays, used: set, cache: dict | None = None) -> Any:
    cache = {} if cache is None else cache
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise CheckpointError(f"load: damaged tree node {node!r}")
    if "view" in node and len(node) == 1:
        return _view(node["view"], arrays, used, cache)
    if "tensor" in node:
        name = node["tensor"]
        if name not in arrays.files:
            raise CheckpointError(f"load: the file has no entry {name!r} (it is listed in its tree)")
        used.add(name)
        return _from_numpy(arrays[name], node.get("dtype", ""), name)
    (kind, v), = node.items()
    if kind == "dict":
        return {k: _decode(c, arrays, used, cache) for k, c in v}
    if kind in ("list", "tuple"):
        out = [_decode(c, arrays, used, cache) for c in v]
        return out if kind == "list" else tuple(out)
    if kind == "value":
        return v
    raise CheckpointError(f"load: damaged tree node {node!r}")


# What reading a damaged file raises, from zipfile, zlib, NumPy's .npy parser, json and our
# decoder: an unknown compression method or zip version (NotImplementedError), an "encrypted"
# flag (RuntimeError), nesting past the recursion limit (RecursionError), a header claiming a
# huge array (MemoryError)... All become CheckpointError.
_DAMAGED = (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError, EOFError, OSError,
            zipfile.BadZipFile, zlib.error, struct.error, NotImplementedError, RuntimeError, MemoryError,
            SyntaxError, tokenize.TokenError)   # (NumPy >= 2.4 tokenizes the .npy header)


def _why(e: BaseException) -> str:
    if isinstance(e, RecursionError):
        return "its nesting is too deep"
    msg = f"{type(e).__name__}: {e}"
    return msg if len(msg) <= 300 else msg[:300] + "..."


def _tail(f) -> bytes:
    """The last 22 + 0xFFFF bytes of an open binary file (where a zip's end record is)."""
    f.seek(0, os.SEEK_END)
    f.seek(max(0, f.tell() - (22 + 0xFFFF)))  # the end record: 22 bytes + a comment
    return f.read()


def _check_directory(path, z: zipfile.ZipFile) -> None:
    """zipfile half-reads a damaged central directory without complaint (a corrupted length
    can swallow the entries after it), and a checkpoint missing its tree would load as a plain
    .npz of fewer arrays: the entries listed must be as many as the end record declares."""
    if _is_file(path):
        at = path.tell()
        try:
            tail = _tail(path)
        finally:
            path.seek(at)
    else:
        with open(path, "rb") as f:
            tail = _tail(f)
    name = _name(path)
    i = tail.rfind(b"PK\x05\x06")
    if i < 0 or len(tail) - i < 22:
        raise CheckpointError(f"load: {name!r} has no zip end record")
    declared = struct.unpack("<H", tail[i + 10:i + 12])[0]
    if declared != 0xFFFF and declared != len(z.infolist()):  # 0xFFFF: a ZIP64 count elsewhere
        raise CheckpointError(f"load: {name!r} is damaged: its zip directory lists {len(z.infolist())} "
                              f"entries, its end record declares {declared}")


def _placer(map_location):
    """The function load applies to every tensor (read on the CPU) for map_location, as
    torch.load's: None keeps it on the CPU; a device (or its name) moves it there; a dict maps
    the location 'cpu' to a device; a callable f(tensor, 'cpu') returns the tensor to use (None:
    keep it)."""
    if map_location is None:
        return None
    if callable(map_location):
        def place(t: Tensor) -> Tensor:
            got = map_location(t, "cpu")
            return t if got is None else got
        return place
    if isinstance(map_location, Mapping):
        target = map_location.get("cpu")
        return None if target is None else _placer(target)
    if isinstance(map_location, str | Device):
        dev = _device(map_location)
        moved: dict = {}

        def to(t: Tensor) -> Tensor:   # tensors that share memory share it on dev too
            if str(t.device) == str(dev):
                return t
            got = moved.get(id(t._storage))
            if got is None:
                st = t._storage
                raw = Tensor._make(st, (st.nbytes,), (1,), 0, _dt.uint8).to(dev)
                got = moved[id(st)] = (raw._storage, st)   # (st kept: its id stays unique)
            return Tensor._make(got[0], t._shape, t._strides, t._offset, t._dtype)
        return to
    raise TypeError(f"load: map_location must be None, a device or its name, a dict or a "
                    f"callable, got {type(map_location).__name__}")


def _place(obj, place):
    if isinstance(obj, Tensor):
        return place(obj)
    if isinstance(obj, dict):
        return {k: _place(v, place) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_place(v, place) for v in obj)
    return obj


def is_checkpoint(f) -> bool:
    """Whether f (a path or a seekable binary file, left where it was) holds what save() wrote:
    a zip with a `__tree__` entry."""
    if _is_file(f):
        if not (hasattr(f, "seek") and hasattr(f, "tell")):
            return False
        at = f.tell()
        try:
            return _has_tree(f)
        finally:
            f.seek(at)
    try:
        return os.path.isfile(f) and _has_tree(f)
    except (TypeError, ValueError):
        return False


def _has_tree(f) -> bool:
    try:
        with zipfile.ZipFile(f) as z:
            return _TREE + ".npy" in z.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False


def load(path, map_location=None, *, weights_only: bool | None = None) -> dict:
    """Read what save() wrote (from a path or a binary file object): the same nesting, with
    tensors on the CPU, or where map_location says (a device or its name, a dict
    {'cpu': device}, or a callable f(tensor, 'cpu'), as torch.load's).

    weights_only is accepted for torch.load's sake: a checkpoint here never holds code or
    arbitrary objects, so loading is always weights-only.

    A plain .npz of arrays (no `__tree__`) loads as a flat dict of tensors. A file that is not
    a checkpoint, or a damaged one, raises CheckpointError (a missing file FileNotFoundError)."""
    if weights_only not in (None, True, False):
        raise TypeError(f"load: weights_only must be a bool or None, got {weights_only!r}")
    place = _placer(map_location)
    out = _load(path)
    return out if place is None else _place(out, place)


def _load(path) -> dict:
    name = _name(path)
    try:
        arrays = np.load(path if _is_file(path) else os.fspath(path), allow_pickle=False)
    except FileNotFoundError:
        raise
    except _DAMAGED as e:
        raise CheckpointError(f"load: {name!r} is not a readable .npz file: {_why(e)}") from None
    if not isinstance(arrays, np.lib.npyio.NpzFile):
        raise CheckpointError(f"load: {name!r} holds one array, not a state dict (.npz)")
    with arrays:
        try:
            _check_directory(path, arrays.zip)
            if _TREE not in arrays.files:
                return {k: from_numpy(_native(arrays[k])) for k in arrays.files}
            tree = json.loads(str(arrays[_TREE]))
            if not isinstance(tree, dict) or tree.get("format") not in (_FORMAT, _FORMAT_SHARED):
                raise CheckpointError(f"load: unknown checkpoint format in {name!r}")
            used: set = set()
            out = _decode(tree["root"], arrays, used)
        except CheckpointError:
            raise
        except _DAMAGED as e:
            raise CheckpointError(f"load: {name!r} is damaged: {_why(e)}") from None
    extra = sorted(set(arrays.files) - used - {_TREE})
    if extra:
        raise CheckpointError(f"load: entries {extra} of {name!r} are not in its tree")
    return out


__all__ = ["save", "load", "CheckpointError"]
