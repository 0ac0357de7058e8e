"""CPU FFT kernels (tensor/cpu/csrc/fft.h: Stockham mixed radix, Bluestein for the rest, in
double precision): the backend's fft_c2c. The op layer is tensor/fft.py."""
from __future__ import annotations

from . import kernels as K

_REAL = {"c64": "float", "c128": "double"}

K.register_family("fft", lambda d: (
    f'#include "fft.h"\nSX_FFT({d.sfx}, {_REAL[d.sfx]})\n',
    f"int fft_c2c_{d.sfx}(intptr_t x, intptr_t y, int64_t batch, int64_t n, int inverse, "
    "double scale, int nthreads);"))


def fft_c2c(x, y, inverse: bool, scale: float) -> None:
    """y = scale * the DFT (inverse: exp(+2 pi i jk / n), unscaled otherwise) of each row of the
    contiguous complex x along its last axis, into the contiguous y of x's shape and dtype."""
    n = x.shape[-1]
    if n == 0 or x.numel() == 0:
        return
    rc = K.kernel("fft", x.dtype, f"fft_c2c_{x.dtype.sfx}")(
        x.data_ptr(), y.data_ptr(), x.numel() // n, n, int(bool(inverse)), float(scale),
        K._num_threads)
    if rc:
        from ..memory import OutOfMemoryError
        raise OutOfMemoryError(f"fft: could not allocate the work buffers of a length-{n} transform")


__all__ = ["fft_c2c"]
