"""Derivative rules of the differentiable collectives (tensor.distributed.nn.functional).

Every op is linear, so each vjp is the adjoint collective and each jvp the op itself applied to
the tangent; the rules call the recorded ops, so create_graph differentiates them again. Two
conventions (see the functional module): the plain collectives differentiate the SUM over ranks
of the ranks' losses (all_reduce <-> all_reduce, all_gather <-> reduce_scatter, broadcast <->
reduce to the root); Megatron's regions treat replicated tensors as one value (f: identity /
all-reduce, g: all-reduce / identity, gather: all-gather / own slice).

These rules run collectives: every rank must run the same backward (and forward-mode pass),
reaching these nodes in the same order. A rank that receives no gradient for a single-output
collective skips its node, and its peers then wait (until the group's timeout raises), so use
every collective's output on every rank. List outputs (all_gather) fill missing cotangents with
zeros and always run. The ops are real-linear, so no conjugation is needed (conj=False).
"""
from __future__ import annotations

import tensor as T
from tensor.distributed.nn import functional as DF

from .graph import RULES, Rule


def _linear(op: str, what: str) -> None:
    if op not in ("sum", "avg"):
        raise NotImplementedError(f"{what}: no derivative for ReduceOp.{op.upper()} (only SUM "
                                  "and AVG, which are linear, are differentiable)")


def _zeros_for(g, like):
    return g if g is not None else T.zeros(tuple(like.shape), dtype=like.dtype, device=like.device)


def _rule(name, vjp, jvp):
    RULES[name] = Rule(name, vjp, jvp, (), conj=False)


# all_reduce(tensor, op, group)
def _ar_vjp(ctx, g):
    _, op, group = ctx.args
    _linear(op, "all_reduce backward")
    return (DF.all_reduce_op(g, op, group), None, None)


def _ar_jvp(ctx, tans):
    _, op, group = ctx.args
    _linear(op, "all_reduce forward-mode")
    return None if tans[0] is None else DF.all_reduce_op(tans[0], op, group)


# all_gather(tensor, group) -> tuple
def _ag_vjp(ctx, gs):
    x, group = ctx.args
    gs = [_zeros_for(g, x) for g in gs]
    return (DF.reduce_scatter_op(gs[0].detach(), gs, "sum", group), None)


def _ag_jvp(ctx, tans):
    return None if tans[0] is None else DF.all_gather_op(tans[0], ctx.args[1])


# reduce_scatter(output, input_list, op, group)
def _rs_vjp(ctx, g):
    _, ins, op, group = ctx.args
    _linear(op, "reduce_scatter backward")
    parts = list(DF.all_gather_op(g, group))
    if op == "avg":
        parts = [p / len(parts) for p in parts]
    return (None, parts, None, None)


def _rs_jvp(ctx, tans):
    out, ins, op, group = ctx.args
    _linear(op, "reduce_scatter forward-mode")
    ts = tans[1]
    if ts is None or all(t is None for t in ts):
        return None
    ts = [_zeros_for(t, x) for t, x in zip(ts, ins)]
    return DF.reduce_scatter_op(ts[0].detach(), ts, op, group)


# broadcast(tensor, src, group) and reduce(tensor, dst, op, group): each other's adjoints
def _bc_vjp(ctx, g):
    _, src, group = ctx.args
    return (DF.reduce_op(g, src, "sum", group), None, None)


def _bc_jvp(ctx, tans):
    _, src, group = ctx.args
    return None if tans[0] is None else DF.broadcast_op(tans[0], src, group)


def _averaged(r, op: str, group, what: str):
    """r, divided by the group's size for ReduceOp.AVG (the adjoint of an average)."""
    if op != "avg":
        return r
    from tensor.distributed._group import resolve
    return r / resolve(group, what).size()


def _red_vjp(ctx, g):
    _, dst, op, group = ctx.args
    _linear(op, "reduce backward")
    return (_averaged(DF.broadcast_op(g, dst, group), op, group, "reduce"), None, None, None)


def _red_jvp(ctx, tans):
    _, dst, op, group = ctx.args
    _linear(op, "reduce forward-mode")
    return None if tans[0] is None else DF.reduce_op(tans[0], dst, op, group)


# all_gather_tensor(tensor, dim, group) and reduce_scatter_tensor(tensor, op, dim, group)
def _agt_vjp(ctx, g):
    _, dim, group = ctx.args
    return (DF.reduce_scatter_tensor_op(g, "sum", dim, group), None, None)


def _agt_jvp(ctx, tans):
    _, dim, group = ctx.args
    return None if tans[0] is None else DF.all_gather_tensor_op(tans[0], dim, group)


def _rst_vjp(ctx, g):
    _, op, dim, group = ctx.args
    _linear(op, "reduce_scatter_tensor backward")
    return (_averaged(DF.all_gather_tensor_op(g, dim, group), op, group, "reduce_scatter_tensor"),
            None, None, None)


def _rst_jvp(ctx, tans):
    _, op, dim, group = ctx.args
    _linear(op, "reduce_scatter_tensor forward-mode")
    return None if tans[0] is None else DF.reduce_scatter_tensor_op(tans[0], op, dim, group)


# all_to_all(input_list, shapes, group) -> tuple; all_to_all_single(tensor, rows, out_splits,
# in_splits, group): the adjoint sends each cotangent back to where its piece came from
def _a2a_vjp(ctx, gs):
    ins, shapes, group = ctx.args
    gs = [g if g is not None else T.zeros(sh, dtype=ins[0].dtype, device=ins[0].device)
          for g, sh in zip(gs, shapes)]
    return (list(DF.all_to_all_op(gs, tuple(tuple(x.shape) for x in ins), group)), None, None)


def _a2a_jvp(ctx, tans):
    ins, shapes, group = ctx.args
    ts = tans[0]
    if ts is None or all(t is None for t in ts):
        return None
    return DF.all_to_all_op([_zeros_for(t, x) for t, x in zip(ts, ins)], shapes, group)


def _a2as_vjp(ctx, g):
    x, _, out_splits, in_splits, group = ctx.args
    return (DF.all_to_all_single_op(g, x.shape[0], in_splits, out_splits, group),
            None, None, None, None)


def _a2as_jvp(ctx, tans):
    _, rows, out_splits, in_splits, group = ctx.args
    return None if tans[0] is None else DF.all_to_all_single_op(tans[0], rows, out_splits,
                                                                in_splits, group)


# Megatron's regions: f and g are each other's adjoints, gather and scatter likewise
def _f_vjp(ctx, g):
    return (DF.reduce_from_op(g, ctx.args[1]), None)


def _f_jvp(ctx, tans):
    return None if tans[0] is None else DF.copy_to_op(tans[0], ctx.args[1])


def _g_vjp(ctx, g):
    return (DF.copy_to_op(g, ctx.args[1]), None)


def _g_jvp(ctx, tans):
    return None if tans[0] is None else DF.reduce_from_op(tans[0], ctx.args[1])


def _gather_vjp(ctx, g):
    _, dim, group = ctx.args
    return (DF.scatter_to_op(g, dim, group), None, None)


def _gather_jvp(ctx, tans):
    _, dim, group = ctx.args
    return None if tans[0] is None else DF.gather_from_op(tans[0], dim, group)


def _scatter_vjp(ctx, g):
    _, dim, group = ctx.args
    return (DF.gather_from_op(g, dim, group), None, None)


def _scatter_jvp(ctx, tans):
    _, dim, group = ctx.args
    return None if tans[0] is None else DF.scatter_to_op(tans[0], dim, group)


_rule("dist_all_reduce", _ar_vjp, _ar_jvp)
_rule("dist_all_gather", _ag_vjp, _ag_jvp)
_rule("dist_reduce_scatter", _rs_vjp, _rs_jvp)
_rule("dist_broadcast", _bc_vjp, _bc_jvp)
_rule("dist_reduce", _red_vjp, _red_jvp)
_rule("dist_all_gather_tensor", _agt_vjp, _agt_jvp)
_rule("dist_reduce_scatter_tensor", _rst_vjp, _rst_jvp)
_rule("dist_all_to_all", _a2a_vjp, _a2a_jvp)
_rule("dist_all_to_all_single", _a2as_vjp, _a2as_jvp)
_rule("dist_copy_to_parallel", _f_vjp, _f_jvp)
_rule("dist_reduce_from_parallel", _g_vjp, _g_jvp)
_rule("dist_gather_from_parallel", _gather_vjp, _gather_jvp)
_rule("dist_scatter_to_parallel", _scatter_vjp, _scatter_jvp)
