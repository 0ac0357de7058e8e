"""Derivative rules of the view ops (tensor/views.py): permutations, reshapes, broadcasts,
diagonal, as_strided, flip.

All of them are linear, so each jvp applies the op itself to the tangent; each vjp applies
the adjoint view (the inverse permutation, a reshape back, a sum over broadcast axes...).
Everything goes through the public (recorded) ops, so create_graph=True works.
"""
from __future__ import annotations

import inspect
import math

import tensor as T
from tensor.axes import norm_axes, norm_axis
from tensor.dtypes import real_of
from tensor.public import PUB
from tensor.views import torch_swap

from .graph import RULES, Rule
from .rules_util import bind, fit, sum_to

_SIGS: dict = {}


def params(name: str, ctx) -> dict:
    """The public call's parameters by name, defaults applied (args and kwargs alike)."""
    sig = _SIGS.get(name)
    if sig is None:
        sig = _SIGS[name] = inspect.signature(PUB[name].__wrapped__)
    return bind(sig, ctx.args, ctx.kwargs)


def same_op_jvp(name: str, op: str | None = None):
    """jvp of an op linear in its first argument: the op (or `op`) applied to the tangent with
    the same other arguments."""
    fn = PUB[op or name]

    def jvp(ctx, tans):
        t = tans[0]
        return None if t is None else fn(t, *ctx.args[1:], **ctx.kwargs)
    return jvp


def register(name, vjp, jvp=None, save=()):
    RULES[name] = Rule(name, vjp, jvp if jvp is not None else same_op_jvp(name), save)


def reshape_back(ctx, g):
    """vjp of every op that only regroups x's elements in order (reshape, squeeze...)."""
    x = ctx.args[0]
    return (fit(g.reshape(x.shape), x),)


# ---------------------------------------------------------------- permutations

def _perm_of(axes, ndim, op):
    if len(axes) == 1 and not isinstance(axes[0], int) and not hasattr(axes[0], "__index__"):
        axes = tuple(axes[0])
    return [norm_axis(a, ndim, op) for a in axes]


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _transpose_vjp(ctx, g):
    x = ctx.args[0]
    axes = params("transpose", ctx)["axes"]
    if not axes or (len(axes) == 1 and axes[0] is None):
        return (fit(T.transpose(g), x),)
    if torch_swap(x, axes):
        return (fit(T.swapaxes(g, *axes), x),)
    return (fit(T.permute(g, _inverse(_perm_of(axes, x.ndim, "transpose"))), x),)


def _permute_vjp(ctx, g):
    x = ctx.args[0]
    axes = params("permute", ctx)["axes"]
    return (fit(T.permute(g, _inverse(_perm_of(axes, x.ndim, "permute"))), x),)


def _swapaxes_vjp(ctx, g):
    p = params("swapaxes", ctx)
    return (fit(T.swapaxes(g, p["axis1"], p["axis2"]), ctx.args[0]),)


def _moveaxis_vjp(ctx, g):
    p = params("moveaxis", ctx)
    return (fit(T.moveaxis(g, p["destination"], p["source"]), ctx.args[0]),)


def _matrix_transpose_vjp(ctx, g):
    return (fit(T.matrix_transpose(g), ctx.args[0]),)


register("transpose", _transpose_vjp)
register("permute", _permute_vjp)
register("swapaxes", _swapaxes_vjp)
register("moveaxis", _moveaxis_vjp)
register("matrix_transpose", _matrix_transpose_vjp)

# ---------------------------------------------------------------- reshapes

for _n in ("flatten", "squeeze", "expand_dims", "unsqueeze"):
    register(_n, reshape_back)


def _order_vjp(op):
    """vjp of reshape / ravel, whose order='F' (NumPy's) regroups the elements of x's transpose:
    the gradient goes back the same way."""
    def vjp(ctx, g):
        x = ctx.args[0]
        if params(op, ctx)["order"] == "F":
            back = T.transpose(T.transpose(g).reshape(tuple(x.shape)[::-1]))
            return (fit(back, x),) + (None,) * (len(ctx.args) - 1)
        return reshape_back(ctx, g)
    return vjp


def _reshape_jvp(ctx, tans):
    """reshape applied to the tangent; order='A' resolved from the primal's layout (the
    tangent's own may differ: a C-contiguous tangent of a Fortran-contiguous x)."""
    t = tans[0]
    if t is None:
        return None
    kw = dict(ctx.kwargs)
    if kw.get("order") == "A":
        x = ctx.args[0]
        fortran = x.ndim > 1 and not x.is_contiguous() and T.transpose(x).is_contiguous()
        kw["order"] = "F" if fortran else "C"
    return PUB["reshape"](t, *ctx.args[1:], **kw)


register("reshape", _order_vjp("reshape"), _reshape_jvp)
register("ravel", _order_vjp("ravel"))
# view's jvp reshapes: the tangent's strides need not allow a view
register("view", reshape_back, same_op_jvp("view", "reshape"))


# ---------------------------------------------------------------- broadcasts

def _broadcast_vjp(ctx, g):
    x = ctx.args[0]
    return (fit(sum_to(g, x.shape), x),)


register("expand", _broadcast_vjp)
register("broadcast_to", _broadcast_vjp)


# ---------------------------------------------------------------- diagonal

def _diagonal_vjp(ctx, g):
    """Zeros of x's shape with the diagonal filled by g: the diagonal's two axes are moved
    last, (..., i, j) is written with index_put_ (recorded), then the axes move back."""
    x = ctx.args[0]
    p = params("diagonal", ctx)
    off = int(p["offset"])
    a1, a2 = norm_axis(p["axis1"], x.ndim, "diagonal"), norm_axis(p["axis2"], x.ndim, "diagonal")
    rest = [i for i in range(x.ndim) if i not in (a1, a2)]
    perm = rest + [a1, a2]
    z = T.zeros(tuple(x.shape[i] for i in perm), dtype=g.dtype, device=g.device)
    n = g.shape[-1]
    if n:
        i0, j0 = max(-off, 0), max(off, 0)
        key = (Ellipsis, T.arange(i0, i0 + n, device=g.device), T.arange(j0, j0 + n, device=g.device))
        z = T.index_put_(z, key, g, True)
    return (fit(T.permute(z, _inverse(perm)), x),)


register("diagonal", _diagonal_vjp)


# ---------------------------------------------------------------- as_strided

def _positions(shape, strides, off, device):
    """Storage position of every element of the (shape, strides, off) view, row-major, flat."""
    pos = T.full((1,) * len(shape), off, dtype=T.int64, device=device)
    for d, (n, s) in enumerate(zip(shape, strides)):
        sh = [1] * len(shape)
        sh[d] = n
        pos = pos + T.arange(n, device=device).reshape(sh) * s
    return pos.reshape(-1)


def _extent(shape, strides, off):
    lo = off + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = off + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return lo, hi


def element_map(src, dst, op: str):
    """For each element of the view dst = (shape, strides, offset) of the storage that the
    tensor layout src = (shape, strides, offset) views, the flat (row-major) index of the element
    of src at the same memory location; None when either is empty. NotImplementedError when src
    overlaps itself or dst reaches memory outside src (the gradient would belong to a base
    tensor the graph does not know)."""
    (xshape, xs, xo), (shape, strides, off), dev = src[:3], dst, src[3]
    nx = math.prod(xshape)
    if nx == 0 or 0 in shape:
        return None
    lo_x, hi_x = _extent(xshape, xs, xo)
    lo_o, hi_o = _extent(shape, strides, off)
    lo, hi = min(lo_x, lo_o), max(hi_x, hi_o)
    posx = _positions(xshape, xs, xo, dev) - lo
    ids = T.arange(nx, device=dev)
    m = T.full((hi - lo + 1,), nx, dtype=T.int64, device=dev)
    m[posx] = ids
    if nx > 1 and not bool(T.all(m[posx] == ids)):
        raise NotImplementedError(
            f"autograd: {op} of a tensor whose own elements overlap in memory (shape "
            f"{xshape}, strides {xs}) has no well-defined gradient; call contiguous() first")
    idx = m[_positions(shape, strides, off, dev) - lo]
    if bool(T.any(idx == nx)):
        raise NotImplementedError(
            f"autograd: {op} (shape {shape}, strides {strides}, offset {off}) reaches memory "
            f"outside its input (shape {xshape}, strides {xs}, offset {xo}), which the gradient "
            "cannot reach; apply it to the whole base tensor instead")
    return idx.reshape(shape)


def _as_strided_map(ctx):
    x = ctx.args[0]
    p = params("as_strided", ctx)
    shape, strides = tuple(p["shape"]), tuple(p["strides"])
    off = x._offset if p["offset"] is None else p["offset"]
    return element_map((x.shape, x.strides, x._offset, x.device), (shape, strides, off),
                       "as_strided"), shape


def _as_strided_vjp(ctx, g):
    x = ctx.args[0]
    idx, shape = _as_strided_map(ctx)
    if idx is None:
        return (T.zeros(x.shape, dtype=x.dtype, device=x.device),)
    buf = T.index_add(T.zeros((x.numel(),), dtype=g.dtype, device=g.device), 0, idx.reshape(-1),
                      g.reshape(-1))
    return (fit(buf.reshape(x.shape), x),)


def _as_strided_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    idx, shape = _as_strided_map(ctx)
    if idx is None:
        return T.zeros(shape, dtype=t.dtype, device=t.device)
    return t.reshape(-1)[idx]


# (the rules read the input's layout, never its values: a later write into it is harmless)
register("as_strided", _as_strided_vjp, _as_strided_jvp, save=(("layout", 0),))


# ---------------------------------------------------------------- flip

def _flip_vjp(ctx, g):
    x = ctx.args[0]
    axis = params("flip", ctx)["axis"]
    return (fit(T.flip(g, norm_axes(axis, x.ndim, "flip")), x),)


register("flip", _flip_vjp)


# ---------------------------------------------------------------- copy_slices
# The base of a view written in place (autograd.graph.rebase): the old base outside the view's
# elements, the view's new values at them. kwargs hold both layouts; the args are (base, view).

def _copy_slices_map(ctx):
    base, view = ctx.args
    shape, strides, off = ctx.kwargs["base"]
    return element_map((shape, strides, off, base.device), ctx.kwargs["view"], "in-place write")


def _copy_slices_vjp(ctx, g):
    idx = _copy_slices_map(ctx)
    if idx is None:
        return (g, T.zeros(tuple(ctx.kwargs["view"][0]), dtype=g.dtype, device=g.device))
    flat = idx.reshape(-1)
    g_view = g.reshape(-1)[flat].reshape(idx.shape)
    if not ctx.needs[0]:
        return (None, g_view)
    inside = T.zeros((g.numel(),), dtype=T.bool, device=g.device)
    inside[flat] = True
    return (T.where(inside.reshape(g.shape), 0.0, g), g_view)


def _copy_slices_jvp(ctx, tans, dtype=None):
    """The base's new tangent; dtype: the base's, or given (copy_parts: its real pairs')."""
    base = ctx.args[0]
    tb, tv = tans
    shape = tuple(ctx.kwargs["base"][0])
    new = (T.zeros(shape, dtype=dtype or base.dtype, device=base.device) if tb is None
           else T.clone(tb)).reshape(-1)
    idx = _copy_slices_map(ctx)
    if idx is not None:
        new[idx.reshape(-1)] = 0.0 if tv is None else tv.reshape(-1)
    return new.reshape(shape)


RULES["copy_slices"] = Rule("copy_slices", _copy_slices_vjp, _copy_slices_jvp, ())


# A view of the other kind of memory written in place: a real view of complex memory (x.real[...]
# = v, x.imag *= w, view_as_real(z)[...] = u) or a complex view of real memory (view_as_complex).
# autograd.graph.rebase gives both layouts in real units; kwargs["parts"] says which operand is
# complex ("base" or "view"): copy_slices' rules run on its (Re, Im) pairs.
# conj=False: the pairs' map is real-linear, not complex-linear.

def _copy_parts_vjp(ctx, g):
    if ctx.kwargs["parts"] == "base":
        gb, gv = _copy_slices_vjp(ctx, T.view_as_real(g))
        return (None if gb is None else _as_complex(gb)), gv
    gb, gv = _copy_slices_vjp(ctx, g)
    return gb, _as_complex(gv)


def _copy_parts_jvp(ctx, tans):
    tb, tv = tans
    if ctx.kwargs["parts"] == "base":
        pairs = None if tb is None else T.view_as_real(tb)
        return _as_complex(_copy_slices_jvp(ctx, (pairs, tv), real_of(ctx.args[0].dtype)))
    return _copy_slices_jvp(ctx, (tb, None if tv is None else T.view_as_real(tv)))


RULES["copy_parts"] = Rule("copy_parts", _copy_parts_vjp, _copy_parts_jvp, (), conj=False)


# ---------------------------------------------------------------- complex parts
# view_as_real maps z to its (Re z, Im z) pairs, and the gradient of z (PyTorch's convention,
# autograd.graph.Rule) is dL/dRe z + i dL/dIm z: so each view's vjp is the other view. They are
# real-linear but not complex-linear, hence conj=False. view_as_complex needs a stride-1 last
# axis of size 2 (and even strides): gradients and tangents may be any layout, so contiguous.

def _as_complex(t):
    return T.view_as_complex(T.contiguous(t))


RULES["view_as_real"] = Rule("view_as_real", lambda ctx, g: (_as_complex(g),),
                             lambda ctx, tans: None if tans[0] is None else T.view_as_real(tans[0]),
                             (), conj=False)
RULES["view_as_complex"] = Rule("view_as_complex", lambda ctx, g: (T.view_as_real(g),),
                                lambda ctx, tans: None if tans[0] is None else _as_complex(tans[0]),
                                (), conj=False)
