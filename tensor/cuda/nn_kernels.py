"""CUDA versions of nn's fused kernels: the row kernels (softmax / log_softmax, layer_norm,
cross-entropy, forward and backward; cuda_src/nn_rows.cuh), fused attention
(cuda_src/nn_attn.cuh), max pooling and im2col (cuda_src/nn_pool.cuh) and the fused optimizer
updates (cuda_src/optim.cuh).

Four kernel families, registered with `tensor.cuda.kernels` on import: "nn_rows", "nn_attn"
and "nn_pool" for float16, bfloat16, float32 and float64, "optim" for float32 and float64 (as
the CPU's). The host functions take Tensors already on one CUDA device, contiguous, of the
dtypes the kernels were built for; nn (nn/_fused.py, nn/optim/, nn/conv.py) does the shape
and dtype checks and allocates the outputs, then calls these through the backend interface
(tensor/backend/cuda.py; the CPU twins are in tensor/cpu/nn_kernels.py).

Row kernels run a row on one warp when it is at most WARP_ROW_MAX long, else on one
256-thread block; the choice depends on the shape only, so results are deterministic.
"""
from __future__ import annotations

import ctypes as C
import os

from .. import dtypes as dt
from . import kernels as CK
from .launch import upload

BLOCK = 256          # NR_BLOCK / NP_BLOCK / SO_BLOCK in the headers
WARP_ROW_MAX = 1024  # rows up to this long run on one warp each
# Row kernels come uncached (every pass reads the row again, mostly from L2) and cached (rows
# of up to ROW_NC elements a thread kept in registers, read once, at the cost of occupancy);
# ROW_CACHE picks (STRIDEX_ROW_CACHE=0/1; benchmarks/bench_rows.py measures both).
ROW_NC = 16
ROW_CACHE = os.environ.get("STRIDEX_ROW_CACHE", "0") == "1"
LN_COLS_THREADS = 1 << 15  # layer_norm dw/db pass one: aim for this many (block, column) sums
LN_MIN_BLOCKS = 64         # ... and at least this many row blocks (as the CPU's)

_FLOATS = [dt.float16, dt.bfloat16, dt.float32, dt.float64]

# Entry points: name -> (parameters, call). {T}: storage type, {A}: compute/statistics type,
# {S}: the dtype's traits struct, {TPR}: threads per row, {NC}: elements a thread caches (0:
# none). Row kernels come four times: NAME_SFX (a block per row), NAME_w_SFX (a warp per row)
# and their cached variants NAME_c_SFX, NAME_wc_SFX.
_ROW_KERNELS = {
    "softmax_fwd": ("const {T} *x, {T} *y, int64_t rows, int64_t L, int log_",
                    "nr_softmax_fwd<{S}, {TPR}, {NC}>(x, y, rows, L, log_)"),
    "softmax_bwd": ("const {T} *y, const {T} *g, {T} *gx, int64_t rows, int64_t L, int log_",
                    "nr_softmax_bwd<{S}, {TPR}, {NC}>(y, g, gx, rows, L, log_)"),
    "ln_fwd": ("const {T} *x, const {T} *w, const {T} *b, {T} *y, {A} *mean, {A} *rstd, "
               "int64_t rows, int64_t L, double eps",
               "nr_ln_fwd<{S}, {TPR}, {NC}>(x, w, b, y, mean, rstd, rows, L, eps)"),
    "ln_bwd": ("const {T} *x, const {A} *mean, const {A} *rstd, const {T} *g, const {T} *w, "
               "{T} *gx, int64_t rows, int64_t L",
               "nr_ln_bwd<{S}, {TPR}, {NC}>(x, mean, rstd, g, w, gx, rows, L)"),
    "ce_fwd": ("const {T} *x, const int64_t *t, const {T} *w, {T} *loss, {A} *lse, int64_t rows, "
               "int64_t C, int64_t ignore, double eps, unsigned long long *bad",
               "nr_ce_fwd<{S}, {TPR}, {NC}>(x, t, w, loss, lse, rows, C, ignore, eps, bad)"),
}
_FLAT_KERNELS = {  # grid-stride kernels of nn_rows
    "ln_bwd_cols": ("const {T} *x, const {A} *mean, const {A} *rstd, const {T} *g, {A} *pw, "
                    "{A} *pb, int64_t rows, int64_t L, int64_t rb",
                    "nr_ln_bwd_cols<{S}>(x, mean, rstd, g, pw, pb, rows, L, rb)"),
    "ce_bwd": ("const {T} *x, const int64_t *t, const {T} *w, const {A} *lse, const {T} *g, "
               "{T} *gx, int64_t rows, int64_t C, int64_t ignore, double eps, double wsum",
               "nr_ce_bwd<{S}>(x, t, w, lse, g, gx, rows, C, ignore, eps, wsum)"),
}
_ATTN_OPS = ("const {T} *q, const {T} *k, const {T} *v, const {A} *mask, const int64_t *qo, "
             "const int64_t *ko, const int64_t *vo, const int64_t *mo")
_ATTN_KERNELS = {   # na_meta m: the CPU's meta[] plus the forward and backward tile sizes
    "sdpa_fwd": (f"na_meta m, {_ATTN_OPS}, {{T}} *o, {{A}} *lse, double scale, double dscale",
                 "na_fwd<{S}>(m, q, k, v, mask, qo, ko, vo, mo, o, lse, scale, dscale)"),
    "sdpa_bwd_rowdot": ("na_meta m, const {T} *o, const {T} *dout, {A} *D",
                        "na_rowdot<{S}>(m, o, dout, D)"),
    "sdpa_bwd": (f"na_meta m, {_ATTN_OPS}, const {{T}} *dout, const {{A}} *lse, const {{A}} *D, "
                 "{T} *dk, {T} *dv, double scale, double dscale",
                 "na_dkv<{S}>(m, q, k, v, mask, qo, ko, vo, mo, dout, lse, D, dk, dv, scale, dscale)"),
    "sdpa_bwd_dq": (f"na_meta m, {_ATTN_OPS}, const {{T}} *dout, const {{A}} *lse, const {{A}} *D, "
                    "{T} *dq, double scale, double dscale",
                    "na_dq<{S}>(m, q, k, v, mask, qo, ko, vo, mo, dout, lse, D, dq, scale, dscale)"),
}
_POOL_KERNELS = {
    "maxpool2d": ("const {T} *x, {T} *y, int64_t *idx, int64_t planes, int64_t H, int64_t W, "
                  "int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t OH, int64_t OW",
                  "np_maxpool2d<{S}>(x, y, idx, planes, H, W, kh, kw, sh, sw, OH, OW)"),
    "maxpool2d_bwd": ("const {T} *g, const int64_t *idx, {T} *gx, int64_t planes, int64_t HW, "
                      "int64_t OHW", "np_maxpool2d_bwd<{S}>(g, idx, gx, planes, HW, OHW)"),
    "im2col": ("const {T} *x, {T} *out, int64_t N, int64_t C, int64_t H, int64_t W, int64_t KH, "
               "int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW, int64_t OH, int64_t OW, "
               "int64_t PT, int64_t PL, double value",
               "np_im2col<{S}>(x, out, N, C, H, W, KH, KW, SH, SW, DH, DW, OH, OW, PT, PL, value)"),
    "col2im": ("const {T} *cols, {T} *out, int64_t N, int64_t C, int64_t H, int64_t W, int64_t KH, "
               "int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW, int64_t OH, int64_t OW, "
               "int64_t PT, int64_t PL",
               "np_col2im<{S}>(cols, out, N, C, H, W, KH, KW, SH, SW, DH, DW, OH, OW, PT, PL)"),
}
_OPTIM_KERNELS = {
    "sgd": ("{T} *p, const {T} *g, {T} *buf, int64_t n, double neg_lr, double momentum, "
            "double one_minus_damp, double wd, int flags",
            "so_sgd(p, g, buf, n, neg_lr, momentum, one_minus_damp, wd, flags)"),
    "adam": ("{T} *p, const {T} *g, {T} *m, {T} *v, {T} *vmax, int64_t n, double decay, "
             "double wd, double w1, double beta2, double c2, double bc2s, double eps, "
             "double neg_step, int flags",
             "so_adam(p, g, m, v, vmax, n, decay, wd, w1, beta2, c2, bc2s, eps, neg_step, flags)"),
    "rmsprop": ("{T} *p, const {T} *g, {T} *sq, {T} *ga, {T} *buf, int64_t n, double alpha, "
                "double c, double eps, double neg_lr, double momentum, double wd, int flags",
                "so_rmsprop(p, g, sq, ga, buf, n, alpha, c, eps, neg_lr, momentum, wd, flags)"),
}


def _entries(header: str, block: str, d: dt.DType, kernels: list) -> tuple[str, dict[str, str]]:
    """(prelude, entries): the header and one extern "C" entry point per (name, params, call)."""
    s = d.sfx
    sub = {"T": f"sx_{s}::T", "A": f"sx_{s}::C", "S": f"sx_{s}"}
    src = {}
    for name, params, call, tpr, *nc in kernels:
        sub["TPR"], sub["NC"] = tpr, nc[0] if nc else 0
        src[f"{name}_{s}"] = (f'extern "C" __global__ void __launch_bounds__({block}) {name}_{s}('
                              f"{params.format(**sub)}) {{ {call.format(**sub)}; }}")
    return f'#include "{header}"\n', src


def _row_list() -> list:
    out = []
    for sfx, tpr, nc in (("", "NR_BLOCK", 0), ("_w", "32", 0), ("_c", "NR_BLOCK", ROW_NC),
                         ("_wc", "32", ROW_NC)):
        out += [(n + sfx, p, c, tpr, nc) for n, (p, c) in _ROW_KERNELS.items()]
    return out + [(n, p, c, "") for n, (p, c) in _FLAT_KERNELS.items()]


def rows_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    return _entries("nn_rows.cuh", "NR_BLOCK", d, _row_list())


def attn_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    return _entries("nn_attn.cuh", "NA_BLOCK", d, [(n, p, c, "") for n, (p, c) in _ATTN_KERNELS.items()])


def pool_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    return _entries("nn_pool.cuh", "NP_BLOCK", d, [(n, p, c, "") for n, (p, c) in _POOL_KERNELS.items()])


def optim_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    return _entries("optim.cuh", "SO_BLOCK", d, [(n, p, c, "") for n, (p, c) in _OPTIM_KERNELS.items()])


_MASTER_ARGS = {   # the per-parameter kernels' scalars, after (table, n, chunk)
    "sgd": ("double neg_lr, double momentum, double one_minus_damp, double wd, int flags",
            "neg_lr, momentum, one_minus_damp, wd, flags"),
    "adam": ("double decay, double wd, double w1, double beta2, double c2, double bc2s, "
             "double eps, double neg_step, int flags",
             "decay, wd, w1, beta2, c2, bc2s, eps, neg_step, flags"),
    "rmsprop": ("double alpha, double c, double eps, double neg_lr, double momentum, double wd, "
                "int flags", "alpha, c, eps, neg_lr, momentum, wd, flags"),
}


def master_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    return _entries("optim.cuh", "SO_BLOCK", d, [
        (f"{n}_master", f"const int64_t *table, int64_t n, int64_t chunk, {params}",
         f"so_{n}_master<{{S}}>(table, n, chunk, {call})", "")
        for n, (params, call) in _MASTER_ARGS.items()])


def amp_entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    return _entries("amp.cuh", "SA_BLOCK", d, [(
        "amp_unscale", "const int64_t *table, int64_t n, int64_t chunk, double inv_scale, "
        "float *found", "sa_unscale<{S}>(table, n, chunk, inv_scale, found)", "")])


# name -> (entries_fn, dtypes): what this module adds to tensor.cuda.kernels
FAMILIES = {
    "nn_rows": (rows_entries, _FLOATS),
    "nn_attn": (attn_entries, _FLOATS),
    "nn_pool": (pool_entries, _FLOATS),
    "optim": (optim_entries, [dt.float32, dt.float64]),
    "amp": (amp_entries, _FLOATS),
    "optim_master": (master_entries, [dt.float16, dt.bfloat16, dt.float32]),
}


for _name, (_ents, _dts) in FAMILIES.items():
    CK.register_family(_name, _ents, _dts, exact=_name.startswith("optim"))   # = CPU's step


# ---- launching ------------------------------------------------------------------------------

def _rt():
    from . import runtime as R
    return R


def _p(t) -> C.c_void_p:
    return C.c_void_p(0 if t is None else t.data_ptr())


def _i(v: int) -> C.c_int64:
    return C.c_int64(int(v))


def _launch(family: str, t, name: str, n_items: int, *args) -> None:
    """Launch kernel NAME_sfx of (family, t.dtype) on t's device over n_items work items."""
    R = _rt()
    k = R.kernel(family, t.dtype, f"{name}_{t.dtype.sfx}", t.device)
    k(R.blocks_for(n_items, BLOCK, t.device), BLOCK, *args)


def _rows(family: str, t, name: str, rows: int, L: int, *args) -> None:
    """A row kernel: one warp per row for short rows, one block per row for long ones, with
    the row in registers when ROW_CACHE and it fits."""
    warp = L <= WARP_ROW_MAX
    tpr = 32 if warp else BLOCK
    cached = ROW_CACHE and L <= tpr * ROW_NC
    _launch(family, t, name + ("_w" if warp else "") + ("c" if warp and cached else
                                                         "_c" if cached else ""),
            rows * tpr, *args)


# ---- nn_rows --------------------------------------------------------------------------------

def softmax_fwd(x, y, rows: int, L: int, log: bool) -> None:
    """y = softmax (or log_softmax) of each length-L row of the contiguous x."""
    _rows("nn_rows", x, "softmax_fwd", rows, L, _p(x), _p(y), _i(rows), _i(L), C.c_int(int(log)))


def softmax_bwd(y, g, gx, rows: int, L: int, log: bool) -> None:
    _rows("nn_rows", y, "softmax_bwd", rows, L, _p(y), _p(g), _p(gx), _i(rows), _i(L),
          C.c_int(int(log)))


def layer_norm_fwd(x, w, b, y, mean, rstd, rows: int, L: int, eps: float) -> None:
    """y, and per row mean and rstd (float32, float64 for float64); w and b may be None."""
    _rows("nn_rows", x, "ln_fwd", rows, L, _p(x), _p(w), _p(b), _p(y), _p(mean), _p(rstd),
          _i(rows), _i(L), C.c_double(eps))


def layer_norm_row_block(rows: int, L: int) -> int:
    """Rows per block of the weight/bias gradient partials: enough blocks that pass one has
    about LN_COLS_THREADS (block, column) sums, at least LN_MIN_BLOCKS; from the shape only."""
    nblk = min(rows, max(LN_MIN_BLOCKS, -(-LN_COLS_THREADS // max(L, 1))))
    return max(1, -(-rows // max(nblk, 1)))


def layer_norm_bwd(x, mean, rstd, g, w, gx, pw, pb, rows: int, L: int, rb: int) -> None:
    """gx (if not None) per row; pw / pb (if not None): (nblk, L) partial column sums of
    g * xhat and g over blocks of rb rows, which the caller sums over axis 0 (pass two)."""
    if gx is not None:
        _rows("nn_rows", x, "ln_bwd", rows, L, _p(x), _p(mean), _p(rstd), _p(g), _p(w), _p(gx),
              _i(rows), _i(L))
    if pw is not None or pb is not None:
        nblk = -(-rows // rb)
        _launch("nn_rows", x, "ln_bwd_cols", nblk * L, _p(x), _p(mean), _p(rstd), _p(g), _p(pw),
                _p(pb), _i(rows), _i(L), _i(rb))


def cross_entropy_fwd(x, t, w, loss, lse, rows: int, classes: int, ignore: int, eps: float):
    """Loss and lse per row; returns the Verdict of the first row whose target is neither in
    [0, C) nor ignore (tensor/cuda/checks.py: read at the next synchronization)."""
    from .checks import verdict
    flag = verdict(x.device)
    _rows("nn_rows", x, "ce_fwd", rows, classes, _p(x), _p(t), _p(w), _p(loss), _p(lse),
          _i(rows), _i(classes), _i(ignore), C.c_double(eps), C.c_void_p(flag.ptr()))
    return flag


def cross_entropy_bwd(x, t, w, lse, g, gx, rows: int, classes: int, ignore: int, eps: float,
                      wsum: float) -> None:
    """gx of the (rows, classes) logits; wsum: the sum of the class weights (classes if none)."""
    _launch("nn_rows", x, "ce_bwd", rows * classes, _p(x), _p(t), _p(w), _p(lse), _p(g), _p(gx),
            _i(rows), _i(classes), _i(ignore), C.c_double(eps), C.c_double(wsum))


# ---- nn_attn --------------------------------------------------------------------------------

ATTN_BLOCK = 128           # NA_BLOCK in cuda_src/nn_attn.cuh
ATTN_SMEM = 48 * 1024      # shared memory per block the tiles may use (no opt-in needed)
ATTN_TILES = (64, 32, 16, 8)


class _AttnMeta(C.Structure):   # na_meta
    _fields_ = [("v", C.c_int64 * 16)]


def _attn_tiles(d: dt.DType, E: int, Ev: int) -> tuple[int, int]:
    """(forward, backward) tile sizes: the largest whose shared memory fits ATTN_SMEM (0: none)."""
    a = 8 if d is dt.float64 else 4
    fwd = next((t for t in ATTN_TILES if t * (2 * E + 2 * Ev + t + 3) * a <= ATTN_SMEM), 0)
    bwd = next((t for t in ATTN_TILES if t * (3 * E + 3 * Ev + 2 * t + 2) * a <= ATTN_SMEM), 0)
    return fwd, bwd


def _attn_smem(d: dt.DType, E: int, Ev: int, kernel: str, t: int) -> int:
    per = {"fwd": 2 * E + 2 * Ev + t + 3, "dkv": 3 * E + 3 * Ev + 2 * t + 2,
           "dq": 3 * E + 2 * Ev + t + 2}[kernel]
    return t * per * (8 if d is dt.float64 else 4)


def sdpa_tile(dtype, E: int, Ev: int) -> int:
    """Rows per tile of the forward kernel (the backward's may be smaller); 0 when even the
    smallest tiles of either do not fit the shared memory."""
    fwd, bwd = _attn_tiles(dtype, E, Ev)
    return fwd if fwd and bwd else 0


def _attn_prep(q, v, a):
    E, Ev = q.shape[-1], v.shape[-1]
    fwd, bwd = _attn_tiles(q.dtype, E, Ev)
    m = _AttnMeta()
    m.v[:] = (*a.meta, fwd, bwd)
    ops = [_p(x) for x in (a.qoff, a.koff, a.voff, a.moff)]
    return m, E, Ev, fwd, bwd, ops


def _attn_launch(t, name: str, blocks: int, smem: int, *args) -> None:
    R = _rt()
    k = R.kernel("nn_attn", t.dtype, f"{name}_{t.dtype.sfx}", t.device)
    k(blocks, ATTN_BLOCK, *args, shared=smem)


def sdpa_fwd(q, k, v, mask, o, lse, a) -> None:
    """o (B, L, Ev) and lse (B, L) of fused attention (see tensor/cpu/nn_kernels.py)."""
    m, E, Ev, t, _, offs = _attn_prep(q, v, a)
    B, L = a.meta[0], a.meta[1]
    _attn_launch(q, "sdpa_fwd", B * -(-L // t), _attn_smem(q.dtype, E, Ev, "fwd", t), m,
                 _p(q), _p(k), _p(v), _p(mask), *offs, _p(o), _p(lse), C.c_double(a.scale),
                 C.c_double(a.dscale))


def sdpa_bwd(q, k, v, mask, o, lse, do, dsum, dq, dk, dv, a) -> None:
    """dq, dk, dv of fused attention: rowsum(do * o) into dsum, then the key-tile pass (dk, dv)
    and the query-tile pass (dq); no atomics."""
    m, E, Ev, _, t, offs = _attn_prep(q, v, a)
    B, L, S = a.meta[0], a.meta[1], a.meta[2]
    ops = (m, _p(q), _p(k), _p(v), _p(mask), *offs, _p(do), _p(lse), _p(dsum))
    sc = (C.c_double(a.scale), C.c_double(a.dscale))
    _attn_launch(q, "sdpa_bwd_rowdot", _rt().blocks_for(B * L, ATTN_BLOCK, q.device), 0, m,
                 _p(o), _p(do), _p(dsum))
    _attn_launch(q, "sdpa_bwd", B * -(-S // t), _attn_smem(q.dtype, E, Ev, "dkv", t), *ops,
                 _p(dk), _p(dv), *sc)
    _attn_launch(q, "sdpa_bwd_dq", B * -(-L // t), _attn_smem(q.dtype, E, Ev, "dq", t), *ops,
                 _p(dq), *sc)


# ---- nn_pool --------------------------------------------------------------------------------

def maxpool2d(x, y, idx, planes: int, H: int, W: int, kh: int, kw: int, sh: int, sw: int,
              OH: int, OW: int) -> None:
    """Values and flat H*W indices of max pooling over (planes, H, W) contiguous x."""
    _launch("nn_pool", x, "maxpool2d", planes * OH * OW, _p(x), _p(y), _p(idx),
            *map(_i, (planes, H, W, kh, kw, sh, sw, OH, OW)))


def maxpool2d_bwd(g, idx, gx, planes: int, HW: int, OHW: int) -> None:
    """gx (planes, HW) = each output gradient of g (planes, OHW) added at its max's position idx
    (planes, OHW), outputs in order; all contiguous."""
    _launch("nn_pool", g, "maxpool2d_bwd", planes, _p(g), _p(idx), _p(gx), *map(_i, (planes, HW, OHW)))


def im2col(x, out, stride, dilation, before, value) -> None:
    """Fill out (C, KH, KW, N, OH, OW) with the windows of the contiguous x (N, C, H, W) padded
    by before=(top, left) and `value` outside it."""
    n, c, h, w = x.shape
    _, kh, kw, _, oh, ow = out.shape
    _launch("nn_pool", x, "im2col", out.numel(), _p(x), _p(out),
            *map(_i, (n, c, h, w, kh, kw, stride[0], stride[1], dilation[0], dilation[1], oh, ow,
                      before[0], before[1])), C.c_double(float(value)))


def col2im(cols, out, stride, dilation, before) -> None:
    """out (N, C, H, W) = the crop at `before` (top, left) of the canvas whose windows are cols
    (C, KH, KW, N, OH, OW), overlapping windows summed (im2col's adjoint)."""
    n, c, h, w = out.shape
    _, kh, kw, _, oh, ow = cols.shape
    _launch("nn_pool", out, "col2im", out.numel(), _p(cols), _p(out),
            *map(_i, (n, c, h, w, kh, kw, stride[0], stride[1], dilation[0], dilation[1], oh, ow,
                      before[0], before[1])))


# ---- optim ----------------------------------------------------------------------------------

_OPTIM_PTRS = {"sgd": 3, "adam": 5, "rmsprop": 5}  # leading pointer arguments of each kernel


def optim_step(name: str, p, *args) -> None:
    """One fused update `name` ("sgd", "adam", "rmsprop") of the CUDA parameter p, with the CPU
    kernel's arguments (less its trailing thread count): the device addresses of p, its
    gradient and the state buffers (0 for an absent one), the element count, the scalars
    (doubles) and the flag word. Asynchronous: nothing is read back."""
    k = _OPTIM_PTRS[name]
    ptrs, n, scalars, flags = args[:k], args[k], args[k + 1:-1], args[-1]
    conv = [C.c_void_p(int(a) if a else 0) for a in ptrs]
    conv += [_i(n)] + [C.c_double(float(a)) for a in scalars] + [C.c_int(int(flags))]
    _launch("optim", p, name, int(n), *conv)


# ---- amp ------------------------------------------------------------------------------------

AMP_CHUNK = 1 << 12   # elements a block takes at a time (amp.cuh, the master kernels of optim.cuh)


def optim_master(name: str, params: list, columns: list, scalars: tuple, flags: int) -> None:
    """The CPU's optim_master on CUDA: one launch over all the params (optim.cuh)."""
    from ..backend import multi_tensor_table
    table = multi_tensor_table(params, AMP_CHUNK, columns)
    dev_table = upload(table, dt.int64, params[0].device)   # freed after: the stream orders reuse
    _launch("optim_master", params[0], f"{name}_master", int(table[-1]) * BLOCK, _p(dev_table),
            _i(len(params)), _i(AMP_CHUNK), *(C.c_double(float(v)) for v in scalars),
            C.c_int(int(flags)))


def amp_unscale(tensors: list, inv_scale: float, found) -> None:
    """Each contiguous CUDA tensor (one float dtype) multiplied in place by inv_scale, found
    (float32, one element) set to 1 where a value was inf or NaN: one launch for all, its table
    copied to the device first. Asynchronous: nothing is read back."""
    from ..backend import multi_tensor_table
    table = multi_tensor_table(tensors, AMP_CHUNK)
    t0 = tensors[0]
    dev_table = upload(table, dt.int64, t0.device)
    _launch("amp", t0, "amp_unscale", int(table[-1]) * BLOCK, _p(dev_table), _i(len(tensors)),
            _i(AMP_CHUNK), C.c_double(float(inv_scale)), _p(found))


__all__ = ["FAMILIES", "sdpa_tile", "sdpa_fwd", "sdpa_bwd", "softmax_fwd", "softmax_bwd",
           "layer_norm_fwd", "layer_norm_bwd", "layer_norm_row_block", "cross_entropy_fwd",
           "cross_entropy_bwd", "maxpool2d", "im2col", "optim_step", "optim_master",
           "amp_unscale"]
