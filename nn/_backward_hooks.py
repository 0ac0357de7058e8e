"""Module backward hooks (PyTorch's register_full_backward_hook / _pre_hook): identity
autograd Functions at the module's boundary. The one on the outputs sees grad_output first
(backward pre-hooks may replace it); the one on the inputs sees grad_input, calls the
backward hooks with both, and passes on what they return.

>>> import tensor as T, nn
>>> m = nn.Linear(2, 1)
>>> seen = []
>>> _ = m.register_full_backward_hook(lambda mod, gin, gout: seen.append(gout[0].shape))
>>> m(T.ones((3, 2), requires_grad=True)).sum().backward()
>>> seen
[(3, 1)]
"""
from __future__ import annotations

from autograd import Function, is_grad_enabled
from tensor import Tensor


class _Boundary(Function):
    """Identity on its tensors; backward hands their gradients to on_grads, which returns the
    gradients to pass on (forward mode: the tangents pass through). materialize=False keeps
    an output's missing gradient None (PyTorch's grad_output) instead of zeros."""

    @staticmethod
    def forward(ctx, on_grads, materialize, *xs):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(materialize)
        return xs

    @staticmethod
    def backward(ctx, *gs):
        return (None, None) + tuple(ctx.on_grads(gs))

    @staticmethod
    def jvp(ctx, _, __, *tans):
        return tans


def _checked(what: str, r, like: tuple) -> tuple:
    r = tuple(r) if isinstance(r, tuple | list) else (r,)
    if len(r) != len(like):
        raise ValueError(f"{what} returned {len(r)} gradients for {len(like)}")
    return r


def _wrap(on_grads, materialize: bool, items: list, idx: list) -> None:
    """Replace items[i] (i in idx) by its identity through one _Boundary."""
    for i, w in zip(idx, _Boundary.apply(on_grads, materialize, *(items[i] for i in idx))):
        items[i] = w


def call_with_backward_hooks(module, args: tuple, run):
    """run(args) (the module's forward and forward hooks) with its tensor inputs and outputs
    wrapped so that the module's backward hooks see grad_input and grad_output: as PyTorch's,
    one slot per positional argument / per element of the output tuple, None where it is not
    a tensor or no gradient flows."""
    if not is_grad_enabled():
        return run(args)
    box: dict = {}
    live = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]

    def call_hooks(gin: tuple) -> tuple:
        for hook in list(module._backward_hooks.values()):
            r = hook(module, gin, box["gout"])
            if r is not None:
                gin = _checked("register_full_backward_hook: the hook", r, gin)
        return gin

    def on_inputs(gs):
        gin = [None] * len(args)
        for k, g in zip(live, gs):
            gin[k] = g
        gin = call_hooks(tuple(gin))
        return [gin[k] for k in live]

    if live:
        args = list(args)
        _wrap(on_inputs, True, args, live)
        args = tuple(args)
    out = run(args)
    single = isinstance(out, Tensor)
    outs = (out,) if single else out if isinstance(out, tuple) else None
    if outs is None:
        return out
    idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not idx:
        return out

    def on_outputs(gs):
        gout = [None] * len(outs)
        for k, g in zip(idx, gs):
            gout[k] = g
        gout = tuple(gout)
        for hook in list(module._backward_pre_hooks.values()):
            r = hook(module, gout)
            if r is not None:
                gout = _checked("register_full_backward_pre_hook: the hook", r, gout)
        box["gout"] = gout
        if not live:   # no input needs a gradient: the hooks run now, grad_input all None
            call_hooks((None,) * len(args))
        return [gout[k] for k in idx]

    outs = list(outs)
    _wrap(on_outputs, False, outs, idx)
    return outs[0] if single else tuple(outs)
