"""CPU kernel of 2-D max pooling with padding / dilation / any output size
(tensor/cpu/csrc/nn_maxpool_pad.h), for nn/_fused_ops.py through the backend interface
(maxpool2d_pad). CUDA twin: tensor/cuda/maxpool_pad.py. float32 and float64; contiguous
arrays allocated by the caller."""
from __future__ import annotations

from . import kernels as K

_SIG = ("void maxpool2d_pad_{s}(intptr_t, intptr_t, intptr_t, int64_t, int64_t, int64_t, int64_t, "
        "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int);")

K.register_family("nn_maxpool_pad", lambda d: (
    f'#include "nn_maxpool_pad.h"\nSX_MAXPOOL2D_PAD({d.sfx})\n', _SIG.format(s=d.sfx)))


def maxpool2d_pad(x, y, idx, planes: int, H: int, W: int, kernel, stride, padding, dilation,
                  OH: int, OW: int) -> None:
    """Values y and flat H*W indices idx (planes, OH, OW) of max pooling over (planes, H, W)
    contiguous x; kernel / stride / padding / dilation are (h, w) pairs."""
    K.kernel("nn_maxpool_pad", x.dtype, f"maxpool2d_pad_{x.dtype.sfx}")(
        x.data_ptr(), y.data_ptr(), idx.data_ptr(), planes, H, W, *kernel, *stride, *padding,
        *dilation, OH, OW, K._num_threads)
