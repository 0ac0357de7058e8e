# ruff: noqa: I001  (grouped by topic; _methods must come after the op modules)
"""tensor: a strided n-dimensional array library with its own CPU (C/OpenMP) kernels.

>>> import tensor as T
>>> x = T.arange(6.0).reshape(2, 3)
>>> (x.T @ x).shape, x.sum(axis=0).tolist()
((3, 3), [3.0, 5.0, 7.0])
"""
import math as _math
import sys as _sys

from . import cuda, dtypes, fft, lib, linalg, memory, random, sparse, special, testing
from ._tensor import Tensor
from .backend.cpu import get_num_threads, set_num_threads
from .convert import array, asarray, from_dlpack, from_numpy, tensor
from .creation import (arange, empty, empty_like, eye, full, full_like, linspace, ones, ones_like, zeros,
                       zeros_like)
from .device import Device, DeviceError, device, get_default_device, set_default_device
from .dtypes import (bfloat16, bool_, can_cast, complex64, complex128, float16, float32, float64,
                     get_default_dtype, int8, int16, int32, int64, promote_types, result_type,
                     set_default_dtype, uint8, uint16, uint32, uint64)
from .aliasing import shares_memory
from .memory import OutOfMemoryError
from .memstats import FUNCS as _MEMSTATS
from .public import PUB as _PUB
from .axes import AxisError
from .array_api import API_VERSION as __array_api_version__
from .array_api import array_namespace_info as __array_namespace_info__
from .array_api import finfo, iinfo, isdtype
from .array_api import namespace_method as _namespace_method
from .views import broadcast_shapes
from .compiled import compile
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .grad_scaler import GradScaler
_sys.modules[__name__ + ".amp"].GradScaler = GradScaler   # torch.amp.GradScaler (amp importing it: a circle)
from . import _methods  # noqa: F401  (attaches operators and methods to Tensor)
from . import distributions  # noqa: F401  (tensor.distributions, as torch.distributions)
from .sparse import sparse_coo_tensor, sparse_csc_tensor, sparse_csr_tensor  # noqa: F401  (torch's spelling)
from . import ufunc_methods as _ufunc_methods
from .numpy_compat import (errstate, geterr, geterrcall, ndarray, seterr, seterrcall,  # noqa: F401
                           vectorize)
from .dtypes import dtype  # noqa: F401  (NumPy's np.dtype('float32'))
from .index_tricks import c_, index_exp, mgrid, ogrid, r_, s_  # noqa: F401  (NumPy's index tricks)

bool = bool_  # noqa: A001  (tensor.bool, as numpy.bool / torch.bool)
# PyTorch's dtype names (torch.float is float32, torch.int int32, torch.long int64...) and NumPy's
# C-type names that agree with them (np.double, np.half, np.short, np.single, np.intc...)
float, double, half, single = float32, float64, float16, float32  # noqa: A001
int, long, short, intc, int_, intp = int32, int64, int16, int32, int64, int64  # noqa: A001
cfloat, cdouble, csingle, ubyte, ushort, uintc = complex64, complex128, complex64, uint8, uint16, uint32
e, pi, inf, nan, newaxis = _math.e, _math.pi, _math.inf, _math.nan, None   # the standard's constants
Tensor.__array_namespace__ = _namespace_method(_sys.modules[__name__])
globals().update({k: v for k, v in _PUB.items() if not k.endswith("_") and k not in
                  ("getitem", "setitem")})
globals().update({k: v for k, v in random.FUNCS.items() if k != "seed"})
globals().update(_MEMSTATS)
index_add_ = _PUB["index_add_"]
scatter_add_ = _PUB["scatter_add_"]
index_put_ = _PUB["index_put_"]
fill_, zero_ = _PUB["fill_"], _PUB["zero_"]   # PyTorch's function forms of the in-place fills
ix_ = _PUB["ix_"]   # (NumPy's name ends in _, which the update above leaves out)


class _ScatterModule(type(_sys)):
    """tensor.scatter: the module of index writes (tensor/scatter.py) that, called, is PyTorch's
    scatter (tensor/torch_index.py), so `T.scatter(x, dim, index, src)` and
    `from tensor import scatter` both keep working."""

    def __call__(self, *args, **kwargs):
        return _scatter_fn(*args, **kwargs)


_scatter_fn = _PUB["scatter"]
_sys.modules[__name__ + ".scatter"].__class__ = _ScatterModule
scatter = _sys.modules[__name__ + ".scatter"]
_where3, _NO = _PUB["where"], object()


def where(condition, x=_NO, y=_NO):
    """x where condition is true, else y (broadcast together; the result type of x and y); with
    the condition alone, NumPy's where(condition): nonzero(condition), a tuple of indices."""
    if x is _NO and y is _NO:
        return nonzero(condition)  # noqa: F821  (published above)
    if x is _NO or y is _NO:
        raise TypeError("where: give both x and y, or neither (then it is nonzero(condition))")
    return _where3(condition, x, y)


where.__wrapped_op__ = "where"
_GRAD_MODE = frozenset({"no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
                        "inference_mode"})


def __getattr__(name):
    # PyTorch's torch.no_grad() & co.: autograd's own (looked up late: autograd imports tensor)
    if name in _GRAD_MODE:
        from . import _hook
        return getattr(_hook.autograd(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
_ufunc_methods.attach(globals())   # np.add.at, np.maximum.accumulate, np.multiply.outer, ...
del _PUB, _MEMSTATS
# `from tensor import *`: every public name but the dtypes spelled as Python's own types (T.int,
# T.float, T.bool, T.complex stay reachable through the module), which would shadow the builtins
__all__ = [_k for _k in globals() if not _k.startswith("_") and _k not in ("int", "float", "bool", "complex")]
