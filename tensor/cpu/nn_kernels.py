"""CPU versions of nn's fused kernels: the row kernels (softmax / log_softmax, layer_norm,
cross-entropy, forward and backward; tensor/cpu/csrc/nn_rows.h), fused attention (nn_attn.h),
max pooling and im2col (nn_pool.h) and the fused optimizer updates (optim.h). CUDA twin:
tensor/cuda/nn_kernels.py, with the same functions and arguments.

The host functions take contiguous Tensors of the dtypes the kernels were built for; nn
(nn/_fused.py, nn/optim/, nn/conv.py) checks shapes and dtypes and allocates the outputs.
"""
from __future__ import annotations

import cffi

from .. import dtypes as dt
from . import kernels as K

_ffi = cffi.FFI()

_P = "intptr_t"
_ROW_SIGS = (
    f"void softmax_fwd_{{s}}({_P} x, {_P} y, int64_t rows, int64_t L, int log_, int nthreads);",
    f"void softmax_bwd_{{s}}({_P} y, {_P} g, {_P} gx, int64_t rows, int64_t L, int log_, "
    "int nthreads);",
    f"void ln_fwd_{{s}}({_P} x, {_P} w, {_P} b, {_P} y, {_P} mean, {_P} rstd, int64_t rows, "
    "int64_t L, double eps, int nthreads);",
    f"void ln_bwd_{{s}}({_P} x, {_P} mean, {_P} rstd, {_P} g, {_P} w, {_P} gx, {_P} pgw, {_P} pgb, "
    "int64_t rows, int64_t L, int64_t rb, int nthreads);",
    f"int64_t ce_fwd_{{s}}({_P} x, {_P} t, {_P} w, {_P} loss, {_P} lse, int64_t rows, int64_t C, "
    "int64_t ignore, double eps, int nthreads);",
    f"void ce_bwd_{{s}}({_P} x, {_P} t, {_P} w, {_P} lse, {_P} g, {_P} gx, int64_t rows, int64_t C, "
    "int64_t ignore, double eps, double wsum, int nthreads);",
)
_ATTN_ARGS = ("const int64_t *meta, intptr_t q, intptr_t k, intptr_t v, intptr_t m, intptr_t qo, "
              "intptr_t ko, intptr_t vo, intptr_t mo, intptr_t o, intptr_t lse")
_ATTN_SIGS = (f"int sdpa_fwd_{{s}}({_ATTN_ARGS}, double scale, double dscale, int nthreads);",
              f"int sdpa_bwd_{{s}}({_ATTN_ARGS}, intptr_t do_, intptr_t dsum, intptr_t dq, "
              "intptr_t dk, intptr_t dv, double scale, double dscale, int nthreads);")
_POOL_SIG = ("void maxpool2d_{s}(intptr_t x, intptr_t y, intptr_t idx, int64_t planes, int64_t H, "
             "int64_t W, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t OH, int64_t OW, "
             "int nthreads);")
_POOL_BWD_SIG = ("void maxpool2d_bwd_{s}(intptr_t g, intptr_t idx, intptr_t gx, int64_t planes, "
                 "int64_t HW, int64_t OHW, int nthreads);")
_IM2COL_SIG = ("void im2col_{s}(intptr_t x, intptr_t out, int64_t N, int64_t C, int64_t H, "
               "int64_t W, int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW, "
               "int64_t OH, int64_t OW, int64_t PT, int64_t PL, double value, int nthreads);")
_COL2IM_SIG = ("void col2im_{s}(intptr_t cols, intptr_t out, int64_t N, int64_t C, int64_t H, "
               "int64_t W, int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW, "
               "int64_t OH, int64_t OW, int64_t PT, int64_t PL, int nthreads);")
_OPTIM_CDEF = """
void sgd_{s}(intptr_t, intptr_t, intptr_t, int64_t, double, double, double, double, int, int);
void adam_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, int64_t, double, double, double,
              double, double, double, double, double, int, int);
void rmsprop_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, int64_t, double, double,
                 double, double, double, double, int, int);
"""

K.register_family("nn_rows", lambda d: (f'#define NR_S {d.sfx}\n#include "nn_rows.h"\n',
                                        "\n".join(s.format(s=d.sfx) for s in _ROW_SIGS)))
K.register_family("nn_attn", lambda d: (f'#define NA_S {d.sfx}\n#include "nn_attn.h"\n',
                                        "\n".join(s.format(s=d.sfx) for s in _ATTN_SIGS)))
K.register_family("nn_pool", lambda d: (
    f'#include "nn_pool.h"\nSX_MAXPOOL2D({d.sfx})\nSX_MAXPOOL2D_BWD({d.sfx})\nSX_IM2COL({d.sfx})\n'
    f'SX_COL2IM({d.sfx})\n',
    "\n".join(sig.format(s=d.sfx) for sig in (_POOL_SIG, _POOL_BWD_SIG, _IM2COL_SIG, _COL2IM_SIG))))
K.register_family("optim", lambda d: (
    f'#include "optim.h"\nSX_SGD({d.sfx})\nSX_ADAM({d.sfx})\nSX_RMSPROP({d.sfx})\n',
    _OPTIM_CDEF.format(s=d.sfx)))

_MASTER_CDEF = """
void sgd_master_{s}(intptr_t, int64_t, int64_t, double, double, double, double, int, int);
void adam_master_{s}(intptr_t, int64_t, int64_t, double, double, double, double, double, double,
                     double, double, int, int);
void rmsprop_master_{s}(intptr_t, int64_t, int64_t, double, double, double, double, double,
                        double, int, int);
"""
K.register_family("optim_master", lambda d: (
    f'#include "optim.h"\nSX_SGD_MASTER({d.sfx})\nSX_ADAM_MASTER({d.sfx})\n'
    f'SX_RMSPROP_MASTER({d.sfx})\n', _MASTER_CDEF.format(s=d.sfx)))
K.register_family("amp", lambda d: (f'#include "amp.h"\nSX_AMP_UNSCALE({d.sfx})\n', (
    f"void amp_unscale_{d.sfx}(intptr_t table, int64_t n, int64_t chunk, double inv_scale, "
    "intptr_t found, int nthreads);")))

AMP_CHUNK = 1 << 16   # elements per work item of amp_unscale (amp.h) and optim_master (optim.h)

LN_BLOCKS = 64  # layer_norm weight/bias gradients: at most this many row blocks, summed in order


_FNS: dict = {}


def _k(family: str, name: str, d: dt.DType):
    fn = _FNS.get((name, d))   # (names are unique across the families)
    if fn is None:
        fn = _FNS[name, d] = K.kernel(family, d, f"{name}_{d.sfx}")
    return fn


def _p(t) -> int:
    return 0 if t is None else t.data_ptr()


# ---- nn_rows --------------------------------------------------------------------------------

def softmax_fwd(x, y, rows: int, L: int, log: bool) -> None:
    """y = softmax (or log_softmax) of each length-L row of the contiguous x."""
    _k("nn_rows", "softmax_fwd", x.dtype)(_p(x), _p(y), rows, L, int(log), K._num_threads)


def softmax_bwd(y, g, gx, rows: int, L: int, log: bool) -> None:
    _k("nn_rows", "softmax_bwd", y.dtype)(_p(y), _p(g), _p(gx), rows, L, int(log), K._num_threads)


def layer_norm_fwd(x, w, b, y, mean, rstd, rows: int, L: int, eps: float) -> None:
    """y, and per row mean and rstd (float32, float64 for float64); w and b may be None."""
    _k("nn_rows", "ln_fwd", x.dtype)(_p(x), _p(w), _p(b), _p(y), _p(mean), _p(rstd), rows, L,
                                     float(eps), K._num_threads)


def layer_norm_row_block(rows: int, L: int) -> int:
    """Rows per block of the weight/bias gradient partials (at most LN_BLOCKS blocks)."""
    return max(1, -(-rows // LN_BLOCKS))


def layer_norm_bwd(x, mean, rstd, g, w, gx, pw, pb, rows: int, L: int, rb: int) -> None:
    """gx (if not None) per row; pw / pb (if not None): (nblk, L) partial column sums of
    g * xhat and g over blocks of rb rows, which the caller sums over axis 0."""
    _k("nn_rows", "ln_bwd", x.dtype)(_p(x), _p(mean), _p(rstd), _p(g), _p(w), _p(gx), _p(pw),
                                     _p(pb), rows, L, rb, K._num_threads)


def cross_entropy_fwd(x, t, w, loss, lse, rows: int, classes: int, ignore: int,
                      eps: float) -> int:
    """Loss and lse per row; returns -1, or the first row whose target is neither in [0, C)
    nor ignore."""
    return _k("nn_rows", "ce_fwd", x.dtype)(_p(x), _p(t), _p(w), _p(loss), _p(lse), rows, classes,
                                            ignore, eps, K._num_threads)


def cross_entropy_bwd(x, t, w, lse, g, gx, rows: int, classes: int, ignore: int, eps: float,
                      wsum: float) -> None:
    """gx of the (rows, classes) logits; wsum: the sum of the class weights (classes if none)."""
    _k("nn_rows", "ce_bwd", x.dtype)(_p(x), _p(t), _p(w), _p(lse), _p(g), _p(gx), rows, classes,
                                     ignore, eps, wsum, K._num_threads)


# ---- nn_attn --------------------------------------------------------------------------------

ATTN_TILE = 64   # NA_BQ = NA_BK in nn_attn.h


def sdpa_tile(dtype, E: int, Ev: int) -> int:
    """Query/key rows per tile of the fused attention kernels for head dims E, Ev (0: none fits;
    on the CPU every size does: the tiles live in the heap)."""
    return ATTN_TILE


def _attn_call(name: str, q, k, v, mask, o, lse, a, *extra) -> None:
    meta = _ffi.new("int64_t[]", list(a.meta))
    fail = _k("nn_attn", name, q.dtype)(
        meta, _p(q), _p(k), _p(v), _p(mask), _p(a.qoff), _p(a.koff), _p(a.voff), _p(a.moff),
        _p(o), _p(lse), *extra, float(a.scale), float(a.dscale), K._num_threads)
    if fail:
        raise MemoryError(f"scaled_dot_product_attention: the {name} kernel could not allocate "
                          "its tile buffers")


def sdpa_fwd(q, k, v, mask, o, lse, a) -> None:
    """o (B, L, Ev) and lse (B, L) of fused attention; a: the op layer's AttnArgs (meta,
    per-batch element offsets qoff/koff/voff/moff, scale, dropout scale)."""
    _attn_call("sdpa_fwd", q, k, v, mask, o, lse, a)


def sdpa_bwd(q, k, v, mask, o, lse, do, dsum, dq, dk, dv, a) -> None:
    """dq, dk, dv (contiguous, the broadcast batch) of fused attention from do; dsum: scratch
    for rowsum(do * o), (B, L) of lse's dtype."""
    _attn_call("sdpa_bwd", q, k, v, mask, o, lse, a, _p(do), _p(dsum), _p(dq), _p(dk), _p(dv))


# ---- nn_pool --------------------------------------------------------------------------------

def maxpool2d(x, y, idx, planes: int, H: int, W: int, kh: int, kw: int, sh: int, sw: int,
              OH: int, OW: int) -> None:
    """Values and flat H*W indices of max pooling over (planes, H, W) contiguous x."""
    _k("nn_pool", "maxpool2d", x.dtype)(_p(x), _p(y), _p(idx), planes, H, W, kh, kw, sh, sw, OH, OW,
                                        K._num_threads)


def maxpool2d_bwd(g, idx, gx, planes: int, HW: int, OHW: int) -> None:
    """gx (planes, HW) = each output gradient of g (planes, OHW) added at its max's position idx
    (planes, OHW), outputs in order; all contiguous."""
    _k("nn_pool", "maxpool2d_bwd", g.dtype)(_p(g), _p(idx), _p(gx), planes, HW, OHW, K._num_threads)


def im2col(x, out, stride, dilation, before, value) -> None:
    """Fill out (C, KH, KW, N, OH, OW) with the windows of the contiguous x (N, C, H, W) padded
    by before=(top, left) and `value` outside it."""
    n, c, h, w = x.shape
    _, kh, kw, _, oh, ow = out.shape
    _k("nn_pool", "im2col", x.dtype)(_p(x), _p(out), n, c, h, w, kh, kw, stride[0], stride[1],
                                     dilation[0], dilation[1], oh, ow, before[0], before[1],
                                     float(value), K._num_threads)


def col2im(cols, out, stride, dilation, before) -> None:
    """out (N, C, H, W) = the crop at `before` (top, left) of the canvas whose windows are cols
    (C, KH, KW, N, OH, OW), overlapping windows summed (im2col's adjoint)."""
    n, c, h, w = out.shape
    _, kh, kw, _, oh, ow = cols.shape
    _k("nn_pool", "col2im", out.dtype)(_p(cols), _p(out), n, c, h, w, kh, kw, stride[0], stride[1],
                                       dilation[0], dilation[1], oh, ow, before[0], before[1],
                                       K._num_threads)


# ---- optim ----------------------------------------------------------------------------------

def optim_step(name: str, p, *args) -> None:
    """One fused update `name` ("sgd", "adam", "rmsprop") of p in place: the addresses of p,
    its gradient and the state buffers (0 for an absent one), the element count, the scalars
    and the flag word."""
    _k("optim", name, p.dtype)(*args, K._num_threads)


def optim_master(name: str, params: list, columns: list, scalars: tuple, flags: int) -> None:
    """One multi-tensor update `name` of the 16-bit params (one dtype) through their float32
    masters (float32 params: their own masters, the same address in both columns): columns
    are the per-parameter kernel's address arguments (master, gradient, state buffers; 0 for
    an absent one), one list each; scalars and flags as that kernel's (optim.h)."""
    from ..backend import multi_tensor_table
    table = multi_tensor_table(params, AMP_CHUNK, columns)
    _k("optim_master", f"{name}_master", params[0].dtype)(
        table.ctypes.data, len(params), AMP_CHUNK, *(float(v) for v in scalars), int(flags),
        K._num_threads)


# ---- amp ------------------------------------------------------------------------------------

def amp_unscale(tensors: list, inv_scale: float, found) -> None:
    """Each contiguous tensor (one float dtype) multiplied in place by inv_scale, found (float32,
    one element) set to 1 where a value was inf or NaN: one call for all (amp.h)."""
    from ..backend import multi_tensor_table
    table = multi_tensor_table(tensors, AMP_CHUNK)
    d = tensors[0].dtype
    _k("amp", "amp_unscale", d)(table.ctypes.data, len(tensors), AMP_CHUNK, float(inv_scale),
                                found.data_ptr(), K._num_threads)
