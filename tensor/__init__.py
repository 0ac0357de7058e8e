"""tensor: a strided n-dimensional array library with its own CPU (and CUDA) kernels."""
from . import dtypes
from ._tensor import Tensor
from .creation import (arange, array, asarray, empty, empty_like, eye, from_numpy, full, full_like,
                       linspace, ones, ones_like, tensor, tril, triu, zeros, zeros_like)
from .device import Device, device
from .dtypes import (bfloat16, bool_, can_cast, float16, float32, float64, get_default_dtype, int8,
                     int16, int32, int64, promote_types, result_type, set_default_dtype, uint8)
from .elementwise import shares_memory, where
from .cpu.kernels import get_num_threads, set_num_threads
from . import _methods  # noqa: F401  (attaches operators and methods to Tensor)

bool = bool_  # noqa: A001  (tensor.bool, as numpy.bool / torch.bool)
from .ops import FUNCS as _FUNCS, around, clamp, clip, round  # noqa: A004
from .views import (as_strided, broadcast_shapes, broadcast_to, diagonal, expand_dims, flatten, flip,
                    moveaxis, permute, ravel, reshape, squeeze, swapaxes, transpose, unsqueeze,
                    AxisError)
from .elementwise import astype, contiguous
from .interop import from_dlpack

globals().update(_FUNCS)
del _FUNCS
from . import reductions as _red

globals().update(_red.FUNCS)
from . import linalg as _linalg, random

globals().update(_linalg.FUNCS)
globals().update({k: v for k, v in random.FUNCS.items() if k != "seed"})
from . import memory, memstats as _memstats
from .memory import OutOfMemoryError

globals().update(_memstats.FUNCS)
from .indexing import (argwhere, count_nonzero, index_add, index_add_, index_put_, nonzero,
                       put_along_axis, scatter_add, scatter_add_, take, take_along_axis)
from .manipulation import (array_split, atleast_1d, atleast_2d, atleast_3d, cat, chunk, concatenate,
                           dstack, fliplr, flipud, hsplit, hstack, pad, repeat, roll, rot90, split,
                           stack, tile, unbind, vsplit, vstack)
