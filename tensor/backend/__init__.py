"""Backends: one flat interface per device type.

Op modules (elementwise, reductions, indexing, linalg, creation, random, nn's fused kernels
and optimizers) decide shapes, dtypes, broadcasting and errors on the host, then make one
call on `backend_for(device)`. Only the backends know kernels, launches, copies and streams:
`tensor/backend/cpu.py` over the C kernels of tensor/cpu, `tensor/backend/cuda.py` over the
NVRTC kernels of tensor/cuda (the CUDA emulator is a driver/compiler choice inside
tensor/cuda, made once). A new device is one more module here with the functions of
INTERFACE, not branches across the op modules.

>>> import tensor as T
>>> from tensor.backend import backend_for
>>> backend_for(T.device("cpu")).__name__
'tensor.backend.cpu'
"""
from __future__ import annotations

import importlib

from ..kernel_cache import header_defines

# The functions every backend module defines (tests/test_architecture.py checks names and
# signatures). Tensors handed to a backend are on its device; shapes, dtypes and strides
# have been checked by the op layer.
INTERFACE = {
    # memory and copies
    "new_storage": "(nbytes, device, alloc=None) -> Storage from the device's caching allocator "
                   "(or from alloc, a pool of new_pool's)",
    "new_pool": "(device) -> a private CachingAllocator over the device's memory (a capture's)",
    "prepare": "(name, args, kwargs) -> a callable making backend call `name` again with its host "
               "work done once (a captured step's replay), or None",
    "fuse": "(fused) -> a callable running a run of elementwise calls (tensor.fusion.Fused) as "
            "one kernel, or None",
    "record_graph": "(device, fn) -> (replay, None): fn's work on the device recorded into a "
                    "graph (not run) that replay() launches; or (None, error): something fn did "
                    "could not be recorded (nothing kept). None: the device has no graphs",
    "fast_resolved": "(name, dtype, other, out_dtype, kernel): elementwise's fast path resolved "
                     "`dtype name other` (other: dtype's sfx for a tensor, 'f'/'i' for a Python "
                     "scalar) to elementwise kernel `kernel` into out_dtype (a C fast path may "
                     "take such calls from then on)",
    "elementwise_resolved": "(name, a, b, out, ins): elementwise's general path ran binary op "
                            "`name` of operands a, b (tensors or Python scalars) without casts "
                            "into out, a fresh tensor, as kernel inputs ins (a C fast path may "
                            "take calls of the same operand layout from then on)",
    "open_device": "(spec, index) -> the checked device index (DeviceError says why not)",
    "device_count": "() -> how many devices of this type are present (0 when none can be used)",
    "allocator": "(device) -> the device's CachingAllocator",
    "free_after_streams": "(alloc, block, streams): free once the other streams pass this point",
    "copy_from_host": "(dst, src): contiguous host tensor src into contiguous dst on this device",
    "copy_to_host": "(dst, src): contiguous src on this device into contiguous host tensor dst",
    "synchronize": "(device): wait for the work queued on the device's current stream",
    # elementwise, reductions, scans
    "elementwise": "(d, name, out, ins): out = kernel(ins); Tensors broadcast to out or _Scalars",
    "contiguous_op": "(d, name, out, n, a, b=None): the same, all contiguous of one shape",
    "reduce": "(d, name, x, out, ks, kin, kout, rs, rin): reduce the rs dims of x into out",
    "scan": "(d, name, x, out, sh, si, so): inclusive scan along the last of dims sh",
    # matrix products
    "gemm": "(a, b, c, *, d=None, alpha=1, beta=1): c[...] = a[...] @ b[...] over broadcast "
            "batch dims, one dtype; with d or alpha != 1 (float, 2-D or 3-D): c = alpha * a @ b "
            "+ beta * d rounded once (d of c's dtype or float32; 16-bit: on the accumulator)",
    # indexing: offsets, gather/scatter, masks
    # checks return a verdict: the first bad position or -1 (an int), or a device's deferred
    # Verdict (tensor/cuda/checks.py) read at its stream's next synchronization; the op layer
    # hands it to report() below with the error to raise
    "index_offsets": "(device, shape, ptrs, strides, sizes, xst, off) -> verdict of the first "
                     "bad index",
    "take": "(device, itemsize, nb, idx_ptr, istride, size, xs, osb, src, dst) -> verdict",
    "check_range": "(device, n, idx_ptr, lo, hi) -> verdict of the first i < n with the "
                   "contiguous int64 idx[i] outside [lo, hi)",
    "put": "(device, itemsize, nb, idx_ptr, istride, size, xs, val, vs, dst) -> bad or -1, "
           "or None: no fused x[idx] = v (it scatters)",
    "gather": "(device, itemsize, nb, off, osb, rshape, sst, dst_st, src, dst)",
    "scatter": "(device, dtype, accumulate, bshape, vbs, off, rshape, dst_st, vrs, val, dst, "
               "bounds=None, guard=None): bounds (lo, hi, unit) of the offsets, or None when "
               "they are unique; guard, the offsets' verdict: nothing written if bad",
    "count_nonzero": "(m) -> number of true elements of the contiguous bool tensor m",
    "nonzero_prefix": "(m) -> (count, exclusive prefix counts or None)",
    "nonzero_fill": "(m, mode, coords=(), off=None, st=(), toff=None): coordinates / offsets",
    "count_rows": "(rows, length, m, out): true elements per row of m",
    "repeat_index": "(n, counts) -> (total, int64 index tensor) of repeat with counts",
    "concat_rows": "(out, ins, outer): contiguous out as `outer` rows, each the rows of the "
                   "contiguous ins (out's dtype) end to end; None: one copy per input",
    # sorting (stable, by the keys of cuda_src/scalar/sort_key.h: the same order on every device)
    "sort_rows": "(x, values_out, indices_out, rows, L, descending): each contiguous row of "
                 "length L sorted stably; int64 positions into indices_out, values (or None)",
    "topk_rows": "(x, k, values_out, indices_out, rows, L, largest): the first k of each "
                 "contiguous row's stable sort (descending when largest), into (rows, k) outputs "
                 "(values_out may be None); None: topk cuts a whole sort_rows",
    "partition_rows": "(x, kth, values_out, indices_out, rows, L): NumPy's partition of each "
                      "contiguous row at the ascending distinct positions kth (values_out may be "
                      "None); None: partition takes the whole sort_rows",
    "searchsorted": "(a, v, out, right): int64 insertion points of v in the ascending 1-d a",
    # creation and random numbers (Philox: the same bits on every device)
    "iota": "(out, n, start, step): out[i] = start + i * step",
    # segmented reductions (tensor/segment.py), deterministic: no atomics
    "segment_reduce": "(values, seg, order, offsets, out, reduce, include_self): row t of the "
                      "contiguous out (m, inner) combined in order with the rows "
                      "order[offsets[t]..offsets[t+1]) of the contiguous values (n, inner); order "
                      "int64 or None (identity); order and offsets both None: row i goes to row "
                      "seg[i] (contiguous int64), in the order of i; reduce sum/prod/amax/amin; "
                      "include_self: start from out's row, else the first row; empty segments "
                      "untouched",
    "segment_order": "(keys, m) -> (order, offsets): the stable order of the contiguous int64 keys "
                     "(each in [0, m)) and the m + 1 starts of their runs, new int64 tensors; or "
                     "(None, None) where segment_reduce's direct form costs less",
    # sparse CSR kernels (tensor/sparse): float32 / float64, int64 crow (m + 1) / col (nnz)
    "spmm_csr": "(crow, col, values, b, out, balanced): out (m, n) = A @ b, A in CSR, b (k, n) "
                "and out contiguous; balanced: rows skewed (a hint: nnz-balanced kernel)",
    "sddmm_csr": "(crow, col, s, x, y, out, beta, alpha): out[j] = beta * s[j] + alpha * "
                 "dot(x[row j], y[col j]) per nonzero; x (m, d), y (ncols, d) contiguous",
    # FFTs (tensor/fft.py)
    "fft_c2c": "(x, y, inverse, scale): y = scale * the DFT (inverse: conjugate roots) of each "
               "row of the contiguous complex x along its last axis",
    # linear algebra (tensor/linalg): float64 / complex128 matrices (B, m, n), unit last stride,
    # any row and batch strides; in place; info int64 (B,): 0 or a failure code per matrix
    "la_lu": "(a, piv, info): P A = L U packed in a, partial pivoting; piv int64 (B, min(m, n)) "
             "0-based swaps; info j + 1 for the first exactly zero pivot",
    "la_cholesky": "(a, info): A = L L^H from a's lower triangle, L into a (upper zeroed); info "
                   "j + 1 for the first pivot not > 0",
    "la_trsm": "(a, b, lower, unit, trans): b = op(A)^-1 b, A triangular, op by trans 0/1/2 "
               "(A, A^T, A^H)",
    "la_lu_solve": "(lu, piv, b, trans): b = op(A)^-1 b with A given by la_lu's lu and piv",
    "la_qr": "(a, q, r, info): Householder A = Q R; q (B, m, k or m) or None, r (B, k or m, n); a "
             "is scratch",
    "la_eigh": "(a, w, vectors, info): eigenvalues ascending (float64 w) of the Hermitian A (lower "
               "triangle), orthonormal eigenvectors into a's columns when vectors",
    "la_svd": "(a, s, u, vh, info): A = U diag(s) Vh, s descending; u, vh None or reduced / full "
              "bases; a is scratch",
    "la_eig": "(a, w, v, info): eigenvalues w and unit-norm right eigenvectors v (or None) of the "
              "complex128 A; a is scratch",
    "la_eig_real": "(a, w, v, info): la_eig of the float64 A (scratch) through its real Schur form: w, "
                   "v complex128; real eigenvalues (imag 0) with real vectors, conjugate pairs "
                   "adjacent (positive imaginary part first) with conjugate vectors; info n + 1 "
                   "for a non-finite A",
    "random_fill": "(name, out, n, seed, offset, *params): rand_uniform/normal/int64/bits",
    "randperm": "(out, n, seed, offset): a random permutation of range(n)",
    # nn's fused row kernels, pooling, optimizer updates
    "softmax_fwd": "(x, y, rows, L, log)",
    "softmax_bwd": "(y, g, gx, rows, L, log)",
    "layer_norm_fwd": "(x, w, b, y, mean, rstd, rows, L, eps)",
    "layer_norm_row_block": "(rows, L) -> rows per block of the weight/bias partials",
    "layer_norm_bwd": "(x, mean, rstd, g, w, gx, pw, pb, rows, L, rb)",
    "cross_entropy_fwd": "(x, t, w, loss, lse, rows, classes, ignore, eps) -> verdict of the "
                         "first bad row",
    "cross_entropy_bwd": "(x, t, w, lse, g, gx, rows, classes, ignore, eps, wsum)",
    "sdpa_tile": "(dtype, E, Ev) -> rows per tile of the fused attention kernels, 0 if none fits",
    "sdpa_fwd": "(q, k, v, mask, o, lse, a): fused attention forward (a: meta, batch offsets, "
                "scale, dropout scale; nn/_fused_attention.py)",
    "sdpa_bwd": "(q, k, v, mask, o, lse, do, dsum, dq, dk, dv, a): its backward, no atomics",
    "maxpool2d": "(x, y, idx, planes, H, W, kh, kw, sh, sw, OH, OW)",
    "maxpool2d_bwd": "(g, idx, gx, planes, HW, OHW): gx = zeros, each output gradient of g added "
                     "at its max's position idx, outputs in order",
    "im2col": "(x, out, stride, dilation, before, value): out (C, KH, KW, N, OH, OW) = the "
              "windows of x (N, C, H, W) padded by before=(top, left) and value outside it",
    "col2im": "(cols, out, stride, dilation, before): out = the crop at before=(top, left) of the "
              "canvas whose windows (C, KH, KW, N, OH, OW) are cols, overlaps summed",
    "optim_step": "(name, p, *args): fused sgd/adam/rmsprop update of p in place",
    "optim_master": "(name, params, columns, scalars, flags): update `name` (sgd/adam/rmsprop) of "
                    "many float16/bfloat16 params (one dtype) through float32 masters in one "
                    "kernel call; columns: optim_step's addresses (master, grad, state) per param; "
                    "float32 params are their own masters (one launch for many)",
    "rnn_cell_fwd": "(mode, gx, gh, prev, acts, out, c_out, rows, H): one LSTM (prev the cell "
                    "state; out h, c_out c) or GRU (prev the hidden state; out h) step; acts (rows, "
                    "4H) the gate activations for rnn_cell_bwd (nn/_rnn_fused.py)",
    "rnn_cell_bwd": "(mode, acts, prev, c, dh, dc, d1, d2, d3, rows, H): that step's backward: "
                    "LSTM d1 = d(gates), d2 = d(previous c); GRU d1 / d2 = d(gates from x / h), "
                    "d3 = dh * z",
    "ctc_fwd": "(lp, ext, il, tl, alpha, ll): the CTC alpha recursion (alpha float64 (steps, N, "
               "W)) and log-likelihoods ll (N,) of log-probabilities lp (steps, N, C) against the "
               "extended targets ext (N, W) (nn/_ctc_fused.py)",
    "ctc_bwd": "(lp, ext, il, tl, alpha, ll, gll, grad, scratch): grad (steps, N, C) = gll[n] * "
               "d ll[n] / d lp by the beta recursion; scratch (N, 2 W) float64",
    "grid_sample2d_fwd": "(inp, ix, iy, out, nearest): out (N, C, P) = inp (N, C, H, W) sampled "
                         "bilinearly (or nearest) at pixel coordinates ix, iy (N, P), zero outside",
    "grid_sample2d_bwd": "(inp, ix, iy, gout, ginp, gix, giy, nearest): the gradients of the input "
                         "(ginp) and of the coordinates (gix, giy); a None result is skipped",
    "maxpool2d_pad": "(x, y, idx, planes, H, W, kernel, stride, padding, dilation, OH, OW): 2-D "
                     "max pooling with padding (never winning) and dilation, (h, w) pairs; idx the "
                     "flat H*W index of each max, for maxpool2d_bwd",
    "amp_unscale": "(tensors, inv_scale, found): every contiguous tensor (one float dtype) times "
                   "inv_scale in place, found (float32, 1 element) set to 1 where a value was inf "
                   "or NaN; one kernel call for all (GradScaler)",
}

def multi_tensor_table(tensors: list, chunk: int, columns=()):
    """The table of a multi-tensor kernel (amp_unscale, optim_master) over these contiguous
    tensors: their addresses, each of `columns` (more addresses, one per tensor), their sizes,
    the index of the first chunk (of `chunk` elements) of each, then the total chunk count;
    int64 NumPy."""
    import numpy as np
    n, k = len(tensors), 1 + len(columns)
    table = np.empty((k + 2) * n + 1, dtype=np.int64)
    sizes = np.fromiter((t.numel() for t in tensors), dtype=np.int64, count=n)
    table[:n] = [t.data_ptr() for t in tensors]
    for j, col in enumerate(columns, 1):
        table[j * n:(j + 1) * n] = col
    table[k * n:(k + 1) * n] = sizes
    table[(k + 1) * n] = 0
    np.cumsum(-(-sizes // chunk), out=table[(k + 1) * n + 1:])
    return table


# a backend may set these to None (the op layer then takes another path)
OPTIONAL = {"put", "record_graph", "topk_rows", "concat_rows", "partition_rows"}

# The flag word of optim_step, read from the header the kernels of both devices include.
OPTIM_FLAGS = {k[len("SX_OPT_"):].lower(): v for k, v in
               header_defines("scalar/optim_step.h").items() if k.startswith("SX_OPT_")}

_MODULES = {"cpu": "tensor.backend.cpu", "cuda": "tensor.backend.cuda"}
_LOADED: dict = {}


def backend_for(device):
    """The backend module of a Device (or of a device type string)."""
    try:
        be = device._be   # bound on the Device object: one attribute read on the hot path
    except AttributeError:
        return _load(device)
    if be is None:
        be = device._be = _load(device.type)
    return be


def _load(device: str):
    be = _LOADED.get(device)
    if be is None:
        if device not in _MODULES:
            raise ValueError(f"no backend for device type {device!r}; known: {sorted(_MODULES)}")
        be = _LOADED[device] = importlib.import_module(_MODULES[device])
    return be


def report(verdict, raise_bad) -> None:
    """Raise an index check's error: raise_bad(position) raises it for the first bad position.
    An int verdict (-1: none bad) is decided now; a device's deferred Verdict
    (tensor/cuda/checks.py) when its stream next synchronizes with the host."""
    if isinstance(verdict, int):
        if verdict >= 0:
            raise_bad(verdict)
    else:
        verdict.then(raise_bad)


def settled(verdict) -> int:
    """An index check's verdict as an int now (a device's is read: one synchronization)."""
    return verdict if isinstance(verdict, int) else verdict.value()
