"""Function transforms in torch.func's shape: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian and vmap. Each takes a function and returns one; they compose (grad of grad, vmap of
grad for per-sample gradients, jacfwd of jacrev).

grad and the Jacobians run the tape (reverse mode) or the tangents (forward mode) of this
package. A transform's result stays differentiable where an outer transform needs it (inside
another transform, or when an argument requires grad); a gradient with respect to a tensor that
f only captures (a module's parameter) is differentiable when one of the arguments requires grad
(pass parameters as arguments, nn.utils.stateless.functional_call, to be sure; torch.func's
stack_module_state for ensembles is there too).

vmap maps f over a dimension by calling it once per index and stacking the results: the
semantics of torch.func.vmap (in_dims / out_dims trees, randomness), at the cost of one call
per batch element (no batching rules yet, so no speed-up over a loop).

>>> import tensor as T
>>> from autograd.func import grad, vmap
>>> grad(lambda x: (x ** 3).sum())(T.tensor([1.0, 2.0])).tolist()
[3.0, 12.0]
>>> vmap(lambda r: r.sum())(T.ones((3, 4))).tolist()
[4.0, 4.0, 4.0]
"""
from __future__ import annotations

import numbers
import threading

import tensor as T
from tensor import random as _random
from tensor._tensor import Tensor

from . import forward as _fw
from .engine import grad as _grad
from .functional import jacobian as _jacobian
from .grad_mode import enable_grad, is_grad_enabled
from .graph import meta_of

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "linearize"]



class _Depth(threading.local):
    """Transforms being evaluated in this thread: inside one, results keep their graph (per
    thread: another thread's transform must not make this one's results keep theirs)."""
    n = 0


_depth = _Depth()


# ---------------------------------------------------------------- small trees (tuple, list, dict)


def _flatten(tree) -> tuple[list, object]:
    if isinstance(tree, tuple | list):
        parts = [_flatten(t) for t in tree]
        return [x for p in parts for x in p[0]], (type(tree), [p[1] for p in parts])
    if isinstance(tree, dict):
        parts = [_flatten(v) for v in tree.values()]
        return [x for p in parts for x in p[0]], (dict, list(tree), [p[1] for p in parts])
    return [tree], None


def _unflatten(leaves, spec, start: int = 0):
    """(tree, next index) from the leaves of _flatten's spec."""
    if spec is None:
        return leaves[start], start + 1
    if spec[0] is dict:
        out = {}
        for k, s in zip(spec[1], spec[2]):
            out[k], start = _unflatten(leaves, s, start)
        return out, start
    kind, subs = spec
    items = []
    for s in subs:
        v, start = _unflatten(leaves, s, start)
        items.append(v)
    return (kind(*items) if hasattr(kind, "_fields") else kind(items)), start


def _broadcast_spec(prefix, tree, op: str, what: str) -> list:
    """prefix (an int / None, or a tree over tree's top) expanded to one entry per leaf."""
    if prefix is None or isinstance(prefix, numbers.Integral) and not isinstance(prefix, bool):
        return [prefix] * len(_flatten(tree)[0])
    if not isinstance(prefix, tuple | list | dict):
        raise TypeError(f"{op}: {what} must be an int, None, or a tuple / list / dict of them, got "
                        f"{type(prefix).__name__}")
    if isinstance(prefix, tuple | list) and isinstance(tree, tuple | list) and len(prefix) == len(tree):
        return [d for p, t in zip(prefix, tree) for d in _broadcast_spec(p, t, op, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict) and set(prefix) == set(tree):
        return [d for k in tree for d in _broadcast_spec(prefix[k], tree[k], op, what)]
    raise ValueError(f"{op}: {what}={prefix!r} does not match the structure of the "
                     f"{'inputs' if what == 'in_dims' else 'outputs'} (an int, None, or a "
                     "tuple / list / dict with one entry per element)")


# ---------------------------------------------------------------- reverse and forward mode


def _argnums(argnums, n: int, op: str) -> tuple[tuple, bool]:
    single = isinstance(argnums, numbers.Integral)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError(f"{op}: argnums must name at least one argument")
    for a in nums:
        if not isinstance(a, numbers.Integral) or not -n <= a < n:
            raise ValueError(f"{op}: argnums {argnums!r} out of range for {n} positional "
                             "argument(s)")
    return tuple(a % n for a in nums), single


def _keeps_graph(args) -> bool:
    """Whether results must stay differentiable: inside another transform, or an argument
    requires grad (and grad mode is on)."""
    if not is_grad_enabled():
        return False
    return _depth.n > 0 or any(isinstance(x, Tensor) and x.requires_grad
                                for x in _flatten(list(args))[0])


def _stand_ins(args, nums, op: str, keep: bool) -> list:
    """args with those at nums replaced by differentiable stand-ins (every tensor of a tree)."""
    xs = list(args)
    for a in nums:
        leaves, spec = _flatten(args[a])
        for i, x in enumerate(leaves):
            if not isinstance(x, Tensor) or x.dtype.kind not in "fc":
                raise TypeError(f"{op}: argument {a} must be floating-point or complex tensors, "
                                f"got {type(x).__name__ if not isinstance(x, Tensor) else x.dtype.name}")
            leaves[i] = _stand_in(x, keep)
        xs[a] = _unflatten(leaves, spec)[0]
    return xs


def _stand_in(x: Tensor, keep: bool) -> Tensor:
    """A leaf that requires grad standing for x: linked to x's graph where results must stay
    differentiable, and carrying x's tangent inside a forward-mode transform (jacfwd of grad)."""
    a = _fw._alias(x) if keep and x.requires_grad else x.detach().requires_grad_()
    tangent = x._ag.tangent if x._ag is not None else None
    if tangent is not None:
        meta_of(a).tangent = tangent
    return a


def _call(f, xs, kwargs, has_aux: bool, op: str):
    _depth.n += 1
    try:
        with enable_grad():
            out = f(*xs, **kwargs)
    finally:
        _depth.n -= 1
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"{op}: with has_aux=True, f must return a pair (output, aux), got "
                        f"{type(out).__name__}")
    return out


def _grads(outs, ins, cotangents, keep: bool) -> list:
    """d outs / d ins contracted with cotangents; zeros where unused; detached unless keep."""
    live = [(o, c) for o, c in zip(outs, cotangents) if o.requires_grad]
    gs = _grad([o for o, _ in live], ins, [c for _, c in live], retain_graph=True,
               create_graph=keep, allow_unused=True) if live else [None] * len(ins)
    return [T.zeros_like(x) if g is None else g if keep else g.detach() for g, x in zip(gs, ins)]


def grad_and_value(f, argnums=0, has_aux: bool = False):
    """A function returning (gradient, value) of f, whose output must be a one-element tensor:
    the gradient with respect to the argument(s) argnums (an int, or a tuple giving a tuple of
    gradients; an argument may be a tuple / list / dict of tensors, its gradient then the same
    tree). With has_aux, f returns (output, aux) and the value is (output, aux)."""
    op = "grad_and_value"

    def wrapped(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), op)
        keep = _keeps_graph(args)
        xs = _stand_ins(args, nums, op, keep)
        out, aux = _call(f, xs, kwargs, has_aux, op)
        if not isinstance(out, Tensor) or out.size != 1:
            raise ValueError(f"{op}: f must return a one-element tensor to differentiate, got "
                             f"{type(out).__name__ if not isinstance(out, Tensor) else out.shape}")
        trees = [_flatten(xs[a]) for a in nums]
        leaves = [x for ls, _ in trees for x in ls]
        gs = _grads([out], leaves, [T.ones_like(out)], keep)
        res, k = [], 0
        for ls, spec in trees:
            res.append(_unflatten(gs[k:k + len(ls)], spec)[0])
            k += len(ls)
        g = res[0] if single else tuple(res)
        value = out if keep else out.detach()
        return g, ((value, aux) if has_aux else value)
    return wrapped


def grad(f, argnums=0, has_aux: bool = False):
    """The gradient of f (a one-element output) with respect to argument(s) argnums, as a
    function; with has_aux, (gradient, aux). torch.func.grad's semantics.

    >>> import tensor as T
    >>> grad(grad(lambda x: x ** 3))(T.tensor(2.0)).item()    # d2/dx2 x^3 = 6x
    12.0
    """
    gv = grad_and_value(f, argnums, has_aux)

    def wrapped(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapped


def vjp(f, *primals, has_aux: bool = False):
    """(f(*primals), vjp_fn[, aux]): vjp_fn(cotangents) returns one gradient per primal, each
    cotangent tree shaped as f's output; vjp_fn may be called many times."""
    op = "vjp"
    keep = _keeps_graph(primals)
    xs = _stand_ins(primals, range(len(primals)), op, keep)
    out, aux = _call(f, xs, {}, has_aux, op)
    outs, out_spec = _flatten(out)
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise TypeError(f"{op}: f's output {i} must be a Tensor, got {type(o).__name__}")
    trees = [_flatten(x) for x in xs]
    leaves = [x for ls, _ in trees for x in ls]

    def vjp_fn(*cotangents):
        cts = _flatten(cotangents[0] if len(cotangents) == 1 else cotangents)[0]
        if len(cts) != len(outs):
            raise ValueError(f"{op}: f returned {len(outs)} tensor(s) but {len(cts)} cotangent(s) "
                             "were given")
        for i, (o, c) in enumerate(zip(outs, cts)):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                raise ValueError(f"{op}: cotangent {i} must be a tensor of shape {o.shape}, got "
                                 f"{c.shape if isinstance(c, Tensor) else type(c).__name__}")
        gs = _grads(outs, leaves, cts, keep or _keeps_graph(cts))
        res, k = [], 0
        for ls, spec in trees:
            res.append(_unflatten(gs[k:k + len(ls)], spec)[0])
            k += len(ls)
        return tuple(res)

    value = out if keep else _unflatten([o.detach() for o in outs], out_spec)[0]
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(f, primals, tangents, *, has_aux: bool = False):
    """(f(*primals), J tangents[, aux]) in one forward pass (forward mode); primals and
    tangents are tuples of tensors of the same shapes."""
    op = "jvp"
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise TypeError(f"{op}: primals and tangents must be tuples (of tensors), got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    aux_box = []

    def g(*xs):
        out, aux = _call(f, xs, {}, has_aux, op)
        aux_box.append(aux)
        return out
    out, tan = _fw.jvp(g, primals, tangents)
    return (out, tan, aux_box[0]) if has_aux else (out, tan)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is func's Jacobian at primals times tangents
    (torch.func.linearize). Each jvp_fn call is one forward-mode pass at copies of the primals
    taken now (so later writes to them change nothing), like jvp itself.

    >>> import tensor as T
    >>> out, jvp_fn = linearize(T.sin, T.zeros(2))
    >>> jvp_fn(T.ones(2)).tolist()
    [1.0, 1.0]
    """
    op = "linearize"
    if not primals:
        raise TypeError(f"{op}: expects at least one primal tensor")
    _tensor_args(primals, range(len(primals)), op)
    at = tuple(p.detach().clone() for p in primals)
    out = func(*at)

    def jvp_fn(*tangents):
        if len(tangents) != len(at):
            raise ValueError(f"{op}: jvp_fn expects {len(at)} tangent(s), one per primal, got "
                             f"{len(tangents)}")
        return jvp(func, at, tangents)[1]
    return out, jvp_fn


def _tensor_args(args, nums, op: str) -> None:
    for a in nums:
        if not isinstance(args[a], Tensor):
            raise TypeError(f"{op}: argument {a} must be a Tensor, got {type(args[a]).__name__}")


def _leaf_check(args, nums, op: str) -> list:
    """The (leaves, spec) of each argument at nums: tensors, or trees (tuple / list / dict) of
    them, as torch.func takes a dict of parameters."""
    trees = [_flatten(args[a]) for a in nums]
    for a, (leaves, _) in zip(nums, trees):
        for x in leaves:
            if not isinstance(x, Tensor):
                raise TypeError(f"{op}: argument {a} must be a Tensor or a tuple / list / dict of "
                                f"tensors, got {type(x).__name__}")
    return trees


def _by_argument(blocks, trees, single: bool):
    """Per-leaf blocks regrouped as the arguments' trees (a tuple over argnums unless single)."""
    res, k = [], 0
    for leaves, spec in trees:
        res.append(_unflatten(list(blocks[k:k + len(leaves)]), spec)[0])
        k += len(leaves)
    return res[0] if single else tuple(res)


def _per_output(outs, ins, rows_of, trees, single: bool, out_spec):
    """Blocks o.shape + x.shape per output o and input leaf x (rows_of(o) gives, per leaf, the
    o.size gradients or tangents), as a tree of f's outputs of the arguments' trees."""
    res = []
    for o in outs:
        rows = rows_of(o)
        blocks = [T.zeros(o.shape + x.shape, dtype=x.dtype, device=x.device) if not r
                  else T.stack(r).reshape(o.shape + x.shape) for r, x in zip(rows, ins)]
        res.append(_by_argument(blocks, trees, single))
    return _unflatten(res, out_spec)[0]


def jacrev(f, argnums=0, *, has_aux: bool = False):
    """The Jacobian of f with respect to argument(s) argnums by reverse mode (one backward
    pass per output element): shape output.shape + input.shape; a tuple over the arguments
    where argnums is a tuple, an argument's tree (a dict of parameters...) of blocks where it is
    a tree, and f's output structure over its outputs (torch.func.jacrev)."""
    op = "jacrev"

    def wrapped(*args):
        nums, single = _argnums(argnums, len(args), op)
        _leaf_check(args, nums, op)
        keep = _keeps_graph(args)
        xs = _stand_ins(args, nums, op, keep)
        out, aux = _call(f, xs, {}, has_aux, op)
        outs, spec = _flatten(out)
        trees = [_flatten(xs[a]) for a in nums]
        ins = [x for leaves, _ in trees for x in leaves]

        def rows_of(o):
            rows = [[] for _ in ins]
            for k in range(o.size if o.requires_grad else 0):
                e = T.zeros(o.size, dtype=o.dtype, device=o.device)
                e[k] = 1
                for r, g in zip(rows, _grads([o], ins, [e.reshape(o.shape)], keep)):
                    r.append(g)
            return rows
        jac = _per_output(outs, ins, rows_of, trees, single, spec)
        return (jac, aux) if has_aux else jac
    return wrapped


def jacfwd(f, argnums=0):
    """The Jacobian of f by forward mode (one forward pass per input element); jacrev's shapes
    and trees. (Forward mode does not nest here: jacfwd of jacfwd raises; hessian is jacfwd of
    jacrev.)"""
    op = "jacfwd"

    def wrapped(*args):
        nums, single = _argnums(argnums, len(args), op)
        trees = _leaf_check(args, nums, op)
        if _keeps_graph(args):   # the result is differentiated again: reverse mode's Jacobian
            return jacrev(f, argnums)(*args)   # is the same, and its graph is the tape's
        leaves = [x for ls, _ in trees for x in ls]
        out_spec = []

        def g(*picked):   # f of the arguments' leaves, its outputs flattened
            full, k = list(args), 0
            for a, (ls, spec) in zip(nums, trees):
                full[a] = _unflatten(list(picked[k:k + len(ls)]), spec)[0]
                k += len(ls)
            outs, spec = _flatten(f(*full))
            out_spec[:] = [spec]
            return tuple(outs)
        _depth.n += 1
        try:
            jac = _jacobian(g, tuple(leaves), create_graph=False, strategy="forward-mode")
        finally:
            _depth.n -= 1
        per_out = [_by_argument(blocks, trees, single) for blocks in jac]
        return _unflatten(per_out, out_spec[0])[0]
    return wrapped


def hessian(f, argnums=0):
    """The Hessian of f (a one-element output) with respect to argument argnums: jacfwd of
    jacrev, shape input.shape * 2."""
    return jacfwd(jacrev(f, argnums), argnums)


# ---------------------------------------------------------------- vmap


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """func mapped over a dimension of its inputs: in_dims says which dim of each positional
    argument (an int, None for not mapped, or a tree matching the arguments), out_dims where
    the mapped dim goes in each output. Keyword arguments are passed unmapped.

    randomness: 'error' (func may not draw from the global generator), 'different' (each
    element draws its own numbers) or 'same' (every element sees the same draws).
    Evaluated as one call per element, stacked (see the module's docstring).

    >>> import tensor as T
    >>> vmap(T.dot)(T.ones((2, 3)), T.ones((2, 3))).tolist()
    [3.0, 3.0]
    """
    op = "vmap"
    if randomness not in ("error", "different", "same"):
        raise ValueError(f"{op}: randomness must be 'error', 'different' or 'same', got "
                         f"{randomness!r}")
    if chunk_size is not None and (not isinstance(chunk_size, numbers.Integral) or chunk_size < 1):
        raise ValueError(f"{op}: chunk_size must be a positive int or None, got {chunk_size!r}")
    if not callable(func):
        raise TypeError(f"{op}: func must be callable, got {type(func).__name__}")

    def wrapped(*args, **kwargs):
        leaves, spec = _flatten(list(args))
        top = list(in_dims) if isinstance(in_dims, tuple | list) else in_dims
        if isinstance(top, list) and len(top) != len(args):
            raise ValueError(f"{op}: in_dims has {len(top)} entries for {len(args)} positional "
                             "argument(s)")
        dims = _broadcast_spec(top, list(args), op, "in_dims")
        size, norm = None, []
        for i, (x, d) in enumerate(zip(leaves, dims)):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"{op}: in_dims maps input {i}, a {type(x).__name__}: only "
                                 "tensors can be mapped (give None for the others)")
            if not -x.ndim <= d < x.ndim:
                raise ValueError(f"{op}: in_dim {d} is out of range for input {i} of shape "
                                 f"{x.shape}")
            d %= x.ndim
            if size is None:
                size = x.shape[d]
            elif x.shape[d] != size:
                raise ValueError(f"{op}: the mapped dims have different sizes: input {i} has "
                                 f"{x.shape[d]} at dim {d}, an earlier one {size}")
            norm.append(d)
        if size is None:
            raise ValueError(f"{op}: no input is mapped (in_dims={in_dims!r}): at least one "
                             "tensor must have a mapped dimension")
        if size == 0:
            raise ValueError(f"{op}: the mapped dimension has size 0 (func would never run, so "
                             "the outputs' shapes are unknown)")
        start = _random.get_rng_state()
        results = []
        for b in range(size):
            if randomness == "same":
                _random.set_rng_state(start)
            sliced = [x if d is None else x.select(d, b) for x, d in zip(leaves, norm)]
            before = _random.get_rng_state() if randomness == "error" else None
            out = func(*_unflatten(sliced, spec)[0], **kwargs)
            if before is not None and _random.get_rng_state() != before:
                raise RuntimeError(f"{op}: func drew random numbers; pass randomness='different' "
                                   "(each element its own) or 'same' (shared draws)")
            results.append(out)
        return _stack(results, out_dims, op)
    return wrapped


def _stack(results, out_dims, op):
    outs = [_flatten(r) for r in results]
    spec = outs[0][1]
    dims = _broadcast_spec(out_dims, results[0], op, "out_dims")
    stacked = []
    for j, d in enumerate(dims):
        column = [o[0][j] for o in outs]
        if not isinstance(column[0], Tensor):
            if isinstance(column[0], numbers.Number):
                column = [T.asarray(c) for c in column]
            else:
                raise TypeError(f"{op}: func's output {j} is a {type(column[0]).__name__}; "
                                "outputs must be tensors (or numbers)")
        if d is None:
            stacked.append(column[0])
            continue
        nd = column[0].ndim + 1
        if not -nd <= d < nd:
            raise ValueError(f"{op}: out_dim {d} is out of range for output {j} of "
                             f"{column[0].ndim} dim(s) (+1 mapped)")
        stacked.append(T.stack(column, axis=d % nd))
    return _unflatten(stacked, spec)[0]
