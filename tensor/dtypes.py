"""Data types and NumPy-2 type promotion (NEP 50: Python scalars are weakly typed).

>>> from tensor import dtypes
>>> dtypes.result_type(dtypes.int8, dtypes.float16).name
'float16'
>>> dtypes.result_type(dtypes.int8, 3).name   # the Python int adopts the tensor's dtype
'int8'
"""
from __future__ import annotations

import numpy as np


class DType:
    """One element type. `kind` is 'b' (bool), 'i' (signed), 'u' (unsigned), 'f' (float) or
    'c' (complex: two floats, real part first, as NumPy's)."""

    __slots__ = ("name", "itemsize", "kind", "ctype", "sfx", "code", "np")

    def __init__(self, name: str, itemsize: int, kind: str, ctype: str, sfx: str, code: int, npdt):
        self.name, self.itemsize, self.kind = name, itemsize, kind
        self.ctype, self.sfx, self.code = ctype, sfx, code
        self.np = npdt  # the NumPy dtype with the same bits (None for bfloat16)

    @property
    def is_floating_point(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_signed(self) -> bool:
        return self.kind in "ifc"

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    @property
    def dtype(self):
        """The NumPy dtype with the same bits, so that NumPy reads ours wherever it takes a dtype
        (``np.dtype(T.float32)``, ``np.zeros(3, T.int8)``, np.array_repr of a tensor)."""
        if self.np is None:
            raise AttributeError(f"{self.name} has no NumPy dtype")
        return self.np

    def __repr__(self) -> str:
        return f"tensor.{self.name}"

    # __call__ (NumPy's np.float32(1.5)): tensor/numpy_compat.py

    def __reduce__(self):
        return (_by_name, (self.name,))

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        try:
            return self is dtype(other)
        except TypeError:
            return False

    def __hash__(self):
        return hash(self.name)


bool_ = DType("bool", 1, "b", "uint8_t", "b8", 0, np.dtype(np.bool_))
int8 = DType("int8", 1, "i", "int8_t", "i8", 1, np.dtype(np.int8))
uint8 = DType("uint8", 1, "u", "uint8_t", "u8", 2, np.dtype(np.uint8))
int16 = DType("int16", 2, "i", "int16_t", "i16", 3, np.dtype(np.int16))
int32 = DType("int32", 4, "i", "int32_t", "i32", 4, np.dtype(np.int32))
int64 = DType("int64", 8, "i", "int64_t", "i64", 5, np.dtype(np.int64))
# codes are serialization ids (pickles, the kernel caches' keys): new dtypes take new numbers
uint16 = DType("uint16", 2, "u", "uint16_t", "u16", 10, np.dtype(np.uint16))
uint32 = DType("uint32", 4, "u", "uint32_t", "u32", 11, np.dtype(np.uint32))
uint64 = DType("uint64", 8, "u", "uint64_t", "u64", 12, np.dtype(np.uint64))
float16 = DType("float16", 2, "f", "uint16_t", "f16", 6, np.dtype(np.float16))
bfloat16 = DType("bfloat16", 2, "f", "uint16_t", "bf16", 7, None)
float32 = DType("float32", 4, "f", "float", "f32", 8, np.dtype(np.float32))
float64 = DType("float64", 8, "f", "double", "f64", 9, np.dtype(np.float64))
# complex values are the structs sx_cf / sx_cd of cuda_src/scalar/complex.h on both devices
complex64 = DType("complex64", 8, "c", "sx_cf", "c64", 13, np.dtype(np.complex64))
complex128 = DType("complex128", 16, "c", "sx_cd", "c128", 14, np.dtype(np.complex128))

REAL = (bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, float32,
        float64)
COMPLEX = (complex64, complex128)
ALL = REAL + COMPLEX
INTEGER = (int8, uint8, int16, uint16, int32, uint32, int64, uint64)
FLOATING = (float16, bfloat16, float32, float64)
NUMERIC = INTEGER + FLOATING + COMPLEX

_ALIASES = {
    "bool": bool_, "?": bool_, "b1": bool_,
    "half": float16, "f2": float16, "e": float16,
    "float": float32, "f4": float32, "single": float32,
    "double": float64, "f8": float64, "d": float64,
    "i1": int8, "u1": uint8, "i2": int16, "short": int16, "i4": int32, "int": int64,
    "i8": int64, "long": int64, "bf16": bfloat16, "u2": uint16, "u4": uint32, "u8": uint64,
    "ushort": uint16, "uint": uint64, "ulong": uint64,
    "c8": complex64, "c16": complex128, "F": complex64, "D": complex128, "cfloat": complex64,
    "cdouble": complex128, "complex": complex128,
}
_NAMES = {d.name: d for d in ALL}
_NP_TO = {d.np: d for d in ALL if d.np is not None}

_NP_DTYPE_TYPES = {type(d.np) for d in ALL if d.np is not None}
_default_float = float64


def _by_name(name: str) -> DType:
    return _NAMES[name]


def dtype(x) -> DType:
    """Convert a dtype-like (DType, name, NumPy dtype, Python type) to a DType."""
    if isinstance(x, DType):
        return x
    if type(x) in _NP_DTYPE_TYPES:
        d = _NP_TO.get(x)
        if d is not None:
            return d
    if isinstance(x, str):
        d = _NAMES.get(x) or _ALIASES.get(x)
        if d is not None:
            return d
    elif x is bool:
        return bool_
    elif x is int:
        return int64
    elif x is float:
        return _default_float
    elif x is complex:
        return complex_of(_default_float)
    if x is not None:
        try:
            nd = np.dtype(x)
        except Exception:  # noqa: BLE001 - NumPy raises TypeError, ValueError, SyntaxError...: not a dtype
            nd = None
        if nd is not None:
            if nd.name == "bfloat16":  # ml_dtypes.bfloat16
                return bfloat16
            d = _NP_TO.get(nd.newbyteorder("=")) if nd.isnative or nd.byteorder != "|" else _NP_TO.get(nd)
            if d is not None:
                return d
    raise TypeError(f"dtype: unsupported data type {x!r}{_missing_hint(x)}; supported: {', '.join(_NAMES)}")


def _missing_hint(x) -> str:
    """Why a NumPy dtype has no counterpart here: the kinds this library does not have."""
    try:
        nd = np.dtype(x)
    except Exception:  # noqa: BLE001 - not a NumPy dtype either
        return ""
    if nd.kind == "c":
        return " (complex64 and complex128 are the complex dtypes: no extended precision)"
    return ""


def complex_of(d: DType) -> DType:
    """The complex dtype whose parts are float dtype d (complex128 for float64, else complex64)."""
    return complex128 if d is float64 or d is complex128 else complex64


def real_of(d: DType) -> DType:
    """The dtype of a complex dtype's parts (float32 / float64); other dtypes are their own."""
    return {complex64: float32, complex128: float64}.get(d, d)


def get_default_dtype() -> DType:
    """The floating dtype of Python floats and of float-producing creation functions (float64, as NumPy)."""
    return _default_float


def set_default_dtype(d) -> None:
    """Set the default floating dtype (float32 or float64; PyTorch users often want float32)."""
    global _default_float
    d = dtype(d)
    if d not in (float32, float64):
        raise TypeError(f"set_default_dtype: only float32 or float64 can be the default, got {d.name}")
    _default_float = d


def _promote_pair(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a is bfloat16 or b is bfloat16:
        other = b if a is bfloat16 else a
        if other.kind == "c":
            return other
        if other.kind != "f":
            return bfloat16
        return float32 if other is float16 else (float64 if other is float64 else float32)
    return _NP_TO[np.promote_types(a.np, b.np)]


_TABLE = {(a, b): _promote_pair(a, b) for a in ALL for b in ALL}


def promote_types(a, b) -> DType:
    """The smallest dtype both a and b convert to safely (NumPy's table, plus bfloat16)."""
    return _TABLE[dtype(a), dtype(b)]


# Python scalar "kinds": weak operands only decide the category, not the width.
_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def scalar_kind(x) -> str | None:
    """'b', 'i', 'f' or 'c' for Python (and NumPy) scalars, None for anything else."""
    if isinstance(x, bool | np.bool_):
        return "b"
    if isinstance(x, int):
        return "i"
    if isinstance(x, float):
        return "f"
    if isinstance(x, complex):
        return "c"
    return None


def result_type(*args) -> DType:
    """NumPy-2 result type of DTypes, tensors (anything with .dtype) and weak Python scalars."""
    strong = None
    strongs = []
    weak = -1
    for a in args:
        if isinstance(a, DType):
            d = a
        elif isinstance(a, str | np.dtype | type):   # a dtype's name or NumPy's (NumPy takes them)
            try:
                d = dtype(a)
            except TypeError as e:
                raise TypeError(f"result_type: {e}") from None
        elif hasattr(a, "dtype") and not isinstance(a, np.generic):
            d = dtype(a.dtype)
        else:
            k = scalar_kind(a)
            if k is None:
                if isinstance(a, np.generic):
                    d = dtype(a.dtype)
                else:
                    raise TypeError(f"result_type: cannot interpret {type(a).__name__} as a dtype or scalar")
            else:
                weak = max(weak, _KIND_RANK[k])
                continue
        strongs.append(d)
    if len(strongs) > 2 and bfloat16 not in strongs and any(d is not strongs[0] for d in strongs):
        strong = _smallest_common(strongs)
    elif strongs:
        strong = strongs[0]
        for d in strongs[1:]:
            strong = _TABLE[strong, d]
    if strong is None:
        return (bool_, int64, _default_float, complex_of(_default_float))[weak]
    if weak < 0 or weak <= _KIND_RANK[strong.kind]:
        return strong
    if weak == 3:   # a complex scalar: the complex dtype of the float one would give
        return complex_of(strong if strong.kind == "f" and strong.itemsize >= 4 else
                          float32 if strong.kind == "f" else _default_float)
    return int64 if weak == 1 else _default_float


_CAST_KIND = {"b": 0, "u": 1, "i": 2, "f": 3, "c": 4}  # NumPy's 'same_kind' order: int -> uint is not


def _smallest_common(ds) -> DType:
    """NumPy's n-ary promotion: the first dtype (in NumPy's order) every input casts to
    safely. Pairwise promotion is not associative: int8, uint8, float16 -> float16."""
    for cand in (bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32,
                 float64, complex64, complex128):
        if all(_TABLE[d, cand] is cand for d in ds):
            return cand
    return complex128


def can_cast(src, dst, casting: str = "safe") -> bool:
    """NumPy's can_cast for dtypes: casting is 'no', 'equiv', 'safe', 'same_kind' or 'unsafe'."""
    src, dst = dtype(src), dtype(dst)
    if casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return src is dst
    if casting == "same_kind":
        return _CAST_KIND[src.kind] <= _CAST_KIND[dst.kind]
    if casting != "safe":
        raise ValueError(f"can_cast: casting must be 'no', 'equiv', 'safe', 'same_kind' or "
                         f"'unsafe', got {casting!r}")
    return promote_types(src, dst) is dst


_BOUNDS = {d: (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max)) for d in INTEGER}
_BOUNDS[bool_] = (0, 1)


def iinfo_bounds(d: DType) -> tuple[int, int]:
    """(min, max) of an integer or bool dtype."""
    return _BOUNDS[d]


def show_int(v: int) -> str:
    """An int for an error message: in full, or its leading digits and length when huge."""
    s = str(v)
    return s if len(s) <= 40 else f"{s[:20]}...({len(s.lstrip('-'))} digits)"


def float_of(d: DType) -> DType:
    """The float dtype NumPy's float functions (exp, sqrt, true_divide...) give for an input dtype."""
    if d.kind in "fc":
        return d
    return {1: float16, 2: float32}.get(d.itemsize, float64) if d is not bool_ else float16
