"""The CPU backend: the C kernels of tensor/cpu (built with the system C compiler, loaded with
cffi; single thread or OpenMP) behind the interface of tensor/backend/__init__.py.

Every kernel runs synchronously on the calling thread, so the stream and event hooks are
no-ops and copies between host tensors are plain kernels.
"""
from __future__ import annotations

from .._tensor import Storage
from ..cpu import blocks as _blocks
from ..cpu import ctc as _ctc
from ..cpu import fastpath as _fastpath
from ..cpu import fft as _fft
from ..cpu import fused as _fused
from ..cpu import gemm as _gemm
from ..cpu import grid as _grid
from ..cpu import index as _index
from ..cpu import launch as _launch
from ..cpu import linalg as _la
from ..cpu import linalg_eig as _lae
from ..cpu import maxpool_pad as _mpp
from ..cpu import misc as _misc
from ..cpu import nn_kernels as _nn
from ..cpu import random as _random
from ..cpu import rnn as _rnn
from ..cpu import segment as _segment
from ..cpu import sort as _sort
from ..cpu import sparse as _sparse
from ..cpu.alloc import cpu_allocator, private_allocator
from ..cpu.kernels import get_num_threads, set_num_threads

__all__ = ["get_num_threads", "set_num_threads"]

_alloc = None
_quick = None   # the C fast path's new_storage (tensor/cpu/fastpath.py), once installed


def new_storage(nbytes: int, device, alloc=None) -> Storage:
    global _alloc, _quick
    if alloc is None:
        q = _quick
        if q is not None:
            s = q(nbytes)
            if s is not None:
                return s
        alloc = _alloc
        if alloc is None:
            alloc = _alloc = _install_fastpath()
    block = alloc.malloc(nbytes)
    return Storage(block.ptr, nbytes, device, block, alloc)


def _install_fastpath():
    """The CPU allocator, with the C fast path (tensor/cpu/fastpath.py) installed over it."""
    global _quick
    alloc = cpu_allocator()
    _fastpath.install(alloc, new_storage)
    _quick = _fastpath.quick_storage()
    return alloc


def fast_resolved(name, dtype, other, out_dtype, kernel):
    if _alloc is None:
        _install_fastpath()
    _fastpath.register(name, dtype, other, out_dtype, kernel)


def elementwise_resolved(name, a, b, out, ins):
    _fastpath.register_plan(name, a, b, out, ins)


def new_pool(device):
    return private_allocator()


def allocator(device=None):
    return cpu_allocator()


def free_after_streams(alloc, block, streams) -> None:
    alloc.free(block)   # no streams on the CPU: every kernel has finished when it returns


def open_device(spec: str, index) -> int | None:
    """The CPU is one device: 'cpu' only."""
    if index is not None:
        raise ValueError(f"device: unknown device {spec!r}; expected 'cpu', 'cuda' or 'cuda:N'")
    return None


def device_count() -> int:
    return 1


def copy_from_host(dst, src) -> None:
    _launch.elementwise(src.dtype, f"cast_{src.dtype.sfx}_{dst.dtype.sfx}", dst, [src])


copy_to_host = copy_from_host


def synchronize(device=None) -> None:
    """Nothing is ever queued on the CPU."""


elementwise = _launch.elementwise
prepare = _launch.prepare
fuse = _fused.fuse
record_graph = None   # no graphs on the CPU: a replay runs each prepared call (tensor/graph_replay.py)
contiguous_op = _launch.contiguous_op
reduce = _launch.reduce
scan = _launch.scan
gemm = _gemm.gemm

index_offsets = _index.index_offsets
take = _index.take
check_range = _index.check_range
put = _index.put
gather = _index.gather
scatter = _index.scatter
count_nonzero = _index.count_nonzero
nonzero_prefix = _index.nonzero_prefix
nonzero_fill = _index.nonzero_fill
count_rows = _index.count_rows
repeat_index = _index.repeat_index
concat_rows = _blocks.concat_rows

sort_rows = _sort.sort_rows
topk_rows = _sort.topk_rows
partition_rows = _sort.partition_rows
searchsorted = _sort.searchsorted

iota = _misc.iota
fft_c2c = _fft.fft_c2c
spmm_csr, sddmm_csr = _sparse.spmm_csr, _sparse.sddmm_csr
segment_reduce = _segment.segment_reduce
segment_order = _segment.segment_order
la_lu, la_cholesky, la_trsm, la_lu_solve, la_qr = _la.lu, _la.cholesky, _la.trsm, _la.lu_solve, _la.qr
la_eigh, la_svd, la_eig, la_eig_real = _lae.eigh, _lae.svd, _lae.eig, _lae.eig_real
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
