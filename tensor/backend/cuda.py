"""The CUDA backend: the NVRTC kernels of cuda_src, launched through tensor/cuda (driver,
streams, compile cache; the CPU emulator is a driver/compiler choice made there, once),
behind the interface of tensor/backend/__init__.py.

Kernels go onto the current stream and return at once; only copies to the host synchronize
(index checks report there: tensor/cuda/checks.py).
"""
from __future__ import annotations

import functools

from .. import dtypes as dt
from .._tensor import Storage, Tensor, empty
from ..cuda import checks as _checks
from ..cuda import ctc as _ctc
from ..cuda import fft as _fft
from ..cuda import gemm as _gemm
from ..cuda import grid as _grid
from ..cuda import index as _index
from ..cuda import launch as _launch
from ..cuda import linalg as _la
from ..cuda import linalg_eig as _lae
from ..cuda import maxpool_pad as _mpp
from ..cuda import misc as _misc
from ..cuda import nn_kernels as _nn
from ..cuda import random as _random
from ..cuda import rnn as _rnn
from ..cuda import runtime as R
from ..cuda import segment as _segment
from ..cuda import sort as _sort
from ..cuda import sparse as _sparse
from ..cuda import streams as _streams
from ..device import DeviceError
from ..views import gemm_add_mode

_STATE: dict = {}   # device index -> (runtime device state, streams.current_stream_id)


def new_storage(nbytes: int, device, alloc=None) -> Storage:
    hit = _STATE.get(device.index)
    if hit is None:
        hit = _STATE[device.index] = (R.device_state(device.index or 0), _streams.current_stream_id)
    st, stream_id = hit
    if alloc is None:
        alloc = st.allocator
    if st.deferred:
        st.poll_deferred()
    block = alloc.malloc(nbytes, stream_id(st))
    return Storage(block.ptr, nbytes, device, block, alloc)


def prepare(name, args, kwargs):
    """No prepared calls yet: a replay makes each call itself (the next step on a GPU is one
    CUDA Graph for the whole step)."""
    return None


def record_graph(device, fn):
    """fn()'s work on device recorded into a CUDA Graph: (its replay, None), or (None, the
    CudaError) when something fn does cannot be recorded (tensor/cuda/graphs.py)."""
    from ..cuda.graphs import CUDAGraph, graph
    if (device.index or 0) != R.current_device_index():
        return None, R.CudaError(f"record_graph: cuda:{device.index} is not the current device")
    g = CUDAGraph()
    try:
        with graph(g):
            fn()
    except R.CudaError as e:
        return None, e
    return g.replay, None


def fast_resolved(name, dtype, other, out_dtype, kernel):
    """No C fast path on CUDA: its eager calls take the Python path."""


def elementwise_resolved(name, a, b, out, ins):
    """No C fast path on CUDA."""


def fuse(fused):
    """A captured run of elementwise calls as one generated kernel (tensor/cuda/fused.py)."""
    from ..cuda.fused import fuse as make
    return make(fused)


def allocator(device):
    return R.device_state(device.index).allocator


def new_pool(device):
    return R.device_state(device.index).private_allocator()


free_after_streams = _streams.free_after_streams


def open_device(spec: str, index: int | None) -> int:
    """The index of cuda / cuda:N, checked against the driver (DeviceError says why not)."""
    try:
        n = R.drv() and R.device_count()
    except DeviceError as e:
        raise DeviceError(f"device {spec!r}: {e}. Use device='cpu'.") from None
    i = R.current_device_index() if index is None else index
    if not 0 <= i < n:
        raise DeviceError(f"device {spec!r}: no such CUDA device ({n} present)")
    R.device_state(i)
    return i


device_count = R.device_count


def copy_from_host(dst, src) -> None:
    """One async copy on the current stream (src: contiguous host memory)."""
    R.memcpy_htod(R.device_state(dst.device.index), dst.data_ptr(), src.data_ptr(), src.nbytes)


def copy_to_host(dst, src) -> None:
    """Copy and wait for it: the host reads the bytes next. A synchronization: the index checks
    that ran on the stream raise here (tensor/cuda/checks.py)."""
    st = R.device_state(src.device.index)
    R.memcpy_dtoh(st, dst.data_ptr(), src.data_ptr(), src.nbytes)
    _checks.flush_current(st)


def synchronize(device) -> None:
    """Wait for the work queued on the device's current stream (a consumer on another stream,
    such as a DLPack importer, reads next); the index checks that ran on it raise here."""
    _streams.current_stream(device).synchronize()


elementwise = _launch.elementwise
contiguous_op = _launch.contiguous_op
reduce = _launch.reduce
scan = _launch.scan


def _cast(x, d: dt.DType):
    out = empty(x.shape, d, x.device)
    _launch.elementwise(x.dtype, f"cast_{x.dtype.sfx}_{d.sfx}", out, [x])
    return out


def gemm(a, b, c, *, d=None, alpha=1.0, beta=1.0) -> None:
    """c[...] = a[...] @ b[...] (one dtype, broadcast batch dims); with d or alpha != 1
    (keywords; float dtypes, 2-D or 3-D): c = alpha * (a @ b) + beta * d rounded once, d of c's
    dtype or float32 (broadcast strides allowed, not overlapping c; beta 0: not read), as the
    CPU's. 16-bit floats before sm_80 (no 16-bit tensor-core kernel) compute as float32
    products and sums (on float32 copies), rounded once."""
    cd = c.dtype
    add = d is not None or alpha != 1
    dk = gemm_add_mode(c, d, beta) if add else 0
    if cd.kind == "f" and cd.itemsize == 2 and not _gemm.tensor_cores(c.device):
        c32 = empty(c.shape, dt.float32, c.device)
        a32, b32 = _cast(a, dt.float32), _cast(b, dt.float32)
        if add:
            d32 = _cast(d, dt.float32) if dk == 1 else d
            _gemm.gemm_add_batched(a32, b32, c32, d32, alpha, beta, gemm_add_mode(c32, d32, beta))
        else:
            _gemm.gemm_batched(a32, b32, c32)
        _launch.elementwise(dt.float32, f"cast_f32_{cd.sfx}", c, [c32])
    elif add:
        _gemm.gemm_add_batched(a, b, c, d, alpha, beta, dk)
    else:
        _gemm.gemm_batched(a, b, c)


index_offsets = _index.index_offsets
take = _index.take
check_range = _index.check_range
put = None   # no fused put kernel: x[idx] = v scatters (sorted, deterministic) on the device
scatter = _index.scatter
gather = _index.gather
count_nonzero = _index.count_nonzero
nonzero_prefix = _index.nonzero_prefix
nonzero_fill = _index.nonzero_fill
count_rows = _index.count_rows
repeat_index = _index.repeat_index

sort_rows = _sort.sort_rows
concat_rows = None   # concatenate / stack copy each input (one launch each)
topk_rows = None   # topk cuts a whole row sort (the short-row CUDA sort serves it)
partition_rows = None   # partition takes the whole stable sort (the CPU selects)
searchsorted = _sort.searchsorted


iota = _misc.iota
fft_c2c = _fft.fft_c2c
spmm_csr, sddmm_csr = _sparse.spmm_csr, _sparse.sddmm_csr
segment_reduce = _segment.segment_reduce
segment_order = _segment.segment_order
la_lu, la_cholesky, la_trsm, la_lu_solve = _la.lu, _la.cholesky, _la.trsm, _la.lu_solve

# The QR, eigen and singular value kernels run one block a matrix: a single large matrix keeps
# one SM busy (n = 512 on an H200, 2026-11-28: qr 0.27 s, svd 2.0 s, eigh 5.8 s; cuSOLVER 2-28
# ms; the CPU kernels on 2 cores 22-142 ms). Matrices of HOST_LINALG rows or columns or more
# are therefore solved by the CPU backend's kernels on a host copy (a synchronization, as any
# result read on the host), except while a CUDA graph captures; blocked GPU algorithms (panels
# through the GEMM, as LU and Cholesky have) would bring them back. The kernels themselves
# stay tested at every size (tests/test_la_cuda_eig.py calls them directly).
HOST_LINALG = 64


def _host_linalg(name: str, on_device):
    @functools.wraps(on_device)   # (its signature: the backends' parameters agree)
    def run(a, *rest):
        st = R.device_state(a.device.index or 0)
        if max(a.shape[-2:]) < HOST_LINALG or st.capturing:
            return on_device(a, *rest)
        from ..device import device as _dev
        from . import cpu
        host, back = [], []
        for t in (a, *rest):
            if not isinstance(t, Tensor):
                host.append(t)
                continue
            c = t if t.is_contiguous() else empty(t.shape, t.dtype, t.device)
            if c is not t:
                elementwise(t.dtype, f"cast_{t.dtype.sfx}_{t.dtype.sfx}", c, [t])
            h = empty(t.shape, t.dtype, _dev("cpu"))
            copy_to_host(h, c)
            host.append(h)
            back.append((t, c, h))
        getattr(cpu, name)(*host)
        for t, c, h in back:
            copy_from_host(c, h)
            if c is not t:
                elementwise(t.dtype, f"cast_{t.dtype.sfx}_{t.dtype.sfx}", t, [c])
    return run


la_qr = _host_linalg("la_qr", _la.qr)
la_eigh = _host_linalg("la_eigh", _lae.eigh)
la_svd = _host_linalg("la_svd", _lae.svd)
la_eig = _host_linalg("la_eig", _lae.eig)
la_eig_real = _host_linalg("la_eig_real", _lae.eig_real)
random_fill = _random.fill
randperm = _random.randperm

softmax_fwd = _nn.softmax_fwd
softmax_bwd = _nn.softmax_bwd
layer_norm_fwd = _nn.layer_norm_fwd
layer_norm_row_block = _nn.layer_norm_row_block
layer_norm_bwd = _nn.layer_norm_bwd
cross_entropy_fwd = _nn.cross_entropy_fwd
cross_entropy_bwd = _nn.cross_entropy_bwd
sdpa_tile = _nn.sdpa_tile
sdpa_fwd = _nn.sdpa_fwd
sdpa_bwd = _nn.sdpa_bwd
maxpool2d = _nn.maxpool2d
maxpool2d_bwd = _nn.maxpool2d_bwd
im2col = _nn.im2col
col2im = _nn.col2im
optim_step = _nn.optim_step
amp_unscale = _nn.amp_unscale
rnn_cell_fwd = _rnn.rnn_cell_fwd
rnn_cell_bwd = _rnn.rnn_cell_bwd
ctc_fwd = _ctc.ctc_fwd
ctc_bwd = _ctc.ctc_bwd
grid_sample2d_fwd = _grid.grid_sample2d_fwd
grid_sample2d_bwd = _grid.grid_sample2d_bwd
maxpool2d_pad = _mpp.maxpool2d_pad
optim_master = _nn.optim_master
