"""CUDA kernel of 2-D max pooling with padding / dilation / any output size
(cuda_src/nn_maxpool_pad.cuh): the CPU's tensor/cpu/maxpool_pad.py on a CUDA device, same
function and arguments. Family "nn_maxpool_pad", float32 and float64."""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from . import kernels as CK

BLOCK = 256   # MPP_BLOCK

_PARAMS = ("const {T} *x, {T} *y, int64_t *idx, int64_t planes, int64_t H, int64_t W, int64_t kh, "
           "int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, "
           "int64_t OH, int64_t OW")
_CALL = "mpp_fwd<sx_{s}>(x, y, idx, planes, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)"


CK.register_table("nn_maxpool_pad", "nn_maxpool_pad.cuh", "MPP_BLOCK",
                  {"maxpool2d_pad": (_PARAMS, _CALL)}, [dt.float32, dt.float64])


def maxpool2d_pad(x, y, idx, planes: int, H: int, W: int, kernel, stride, padding, dilation,
                  OH: int, OW: int) -> None:
    """The CPU's maxpool2d_pad (tensor/cpu/maxpool_pad.py) on CUDA."""
    from . import runtime as R
    k = R.kernel("nn_maxpool_pad", x.dtype, f"maxpool2d_pad_{x.dtype.sfx}", x.device)
    dims = (planes, H, W, *kernel, *stride, *padding, *dilation, OH, OW)
    k(R.blocks_for(max(planes * OH * OW, 1), BLOCK, x.device), BLOCK, C.c_void_p(x.data_ptr()),
      C.c_void_p(y.data_ptr()), C.c_void_p(idx.data_ptr()), *[C.c_int64(v) for v in dims])
