"""Selective activation checkpointing (PyTorch's torch.utils.checkpoint SAC API): inside a
checkpointed function, a policy says which ops' outputs are kept from the forward pass; the
recomputation in backward takes those outputs instead of running the ops again, and recomputes
the rest. Saving the expensive ops (matmuls) and recomputing the cheap ones (elementwise) buys
most of checkpointing's memory for little compute.

>>> import functools, tensor as T
>>> from autograd.checkpoint import checkpoint
>>> w = T.ones((3, 3), requires_grad=True)
>>> ctx = functools.partial(create_selective_checkpoint_contexts, ["matmul"])
>>> y = checkpoint(lambda x: T.tanh(x @ w) @ w, T.ones((2, 3)), context_fn=ctx)
>>> y.sum().backward()   # the two matmuls are not run again; tanh is
>>> w.grad.shape
(3, 3)

How it works here: while a policy is active, every op autograd records (tensor/_hook.py's
record; the C fast path steps aside) goes through `_Cache.run`. The forward pass keeps, per op
call in order, the policy's answer and a detached alias of the output of each op to save; the
recomputation walks the same calls in the same order and hands back those aliases (its graph
records them as the op's outputs). Only ops that record a node are asked (ops on tensors that
need no gradient always run again); in-place ops and ops whose output shares an input's memory
(views) always run again, whatever the policy, as their outputs must be the recomputed tensors.
A saved op that drew random numbers moves the default generator as it did in the forward pass.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from tensor import random as _random
from tensor._tensor import Tensor

from . import graph
from .grad_mode import state
from .saved_hooks import _count_context

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    """What a policy function answers for an op: keep its output (SAVE) or run it again
    (RECOMPUTE). MUST_ and PREFER_ are the same here (PyTorch's compiler may override PREFER_)."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


_SAVES = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)


@dataclass
class SelectiveCheckpointContext:
    """The first argument of a policy function: is_recompute tells the recomputation's calls
    from the forward pass's."""
    is_recompute: bool


class Op:
    """The op a policy function is asked about: equal to its name ('matmul') and to the public
    function that runs it (T.matmul); `name` holds the name."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        if isinstance(other, Op):
            return other.name == self.name
        if isinstance(other, str):
            return other == self.name
        return getattr(other, "__wrapped_op__", None) == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"Op({self.name!r})"


def _op_name(op) -> str:
    if isinstance(op, str):
        return op
    if isinstance(op, Op):
        return op.name
    name = getattr(op, "__wrapped_op__", None)
    if name is None:
        raise TypeError(f"create_selective_checkpoint_contexts: {op!r} is not an op this library records; "
                        "give the op's name (as a node's .op shows it, e.g. 'matmul', 'linear') or a "
                        "public op such as T.matmul")
    return name


def _detached(out):
    if type(out) is Tensor:
        return out.detach()
    if isinstance(out, list | tuple):
        return type(out)(_detached(o) for o in out)
    return out


def _tensors(x):
    if type(x) is Tensor:
        yield x
    elif isinstance(x, list | tuple):
        for v in x:
            yield from _tensors(v)


class _Cache:
    """One checkpoint call's record of its ops: per call in order (name, saved by the policy,
    the saved output or None, its storages' versions, the generator's position after it)."""

    def __init__(self, policy, allow_mutation: bool):
        self.policy, self.allow_mutation = policy, allow_mutation
        self.calls = []
        self.pos = 0          # the recomputation's next call
        self.recomputing = False

    def ask(self, name: str, args, kwargs):
        p = self.policy(SelectiveCheckpointContext(self.recomputing), Op(name), *args, **kwargs)
        if not isinstance(p, CheckpointPolicy):
            raise TypeError(f"checkpoint: the selective checkpointing policy must return a "
                            f"CheckpointPolicy, got {p!r} for op {name!r}")
        return p in _SAVES

    def run(self, name, fn, args, kwargs):
        save = self.ask(name, args, kwargs)
        if self.recomputing:
            return self._replay(name, fn, args, kwargs, save)
        gen = _random.default_generator
        before = gen.get_state()
        out = fn(*args, **kwargs)
        kept = None
        if save and name not in graph.INPLACE:
            ins = {id(t._storage) for t in _tensors(args)}
            outs = list(_tensors(out))
            if outs and not any(id(o._storage) in ins for o in outs):   # (no view of an input)
                after = gen.get_state()
                kept = (_detached(out), [(o._storage, o._storage.version) for o in outs],
                        after if after != before else None)
        self.calls.append((name, save, kept))
        return out

    def _replay(self, name, fn, args, kwargs, save: bool):
        i = self.pos
        self.pos += 1
        if i >= len(self.calls) or self.calls[i][0] != name:
            was = self.calls[i][0] if i < len(self.calls) else "nothing"
            raise RuntimeError(f"checkpoint: the recomputation's op #{i} is {name!r} where the forward "
                               f"pass ran {was!r}; fn must run the same ops when run again")
        _, saved, kept = self.calls[i]
        if save != saved:
            raise RuntimeError(f"checkpoint: the selective checkpointing policy answered differently for "
                               f"op #{i} ({name!r}) in the recomputation ({'save' if save else 'recompute'}) "
                               "than in the forward pass; it must give the same answer (ctx.is_recompute "
                               "tells the two apart for other uses)")
        if kept is None:
            return fn(*args, **kwargs)
        out, versions, rng = kept
        if not self.allow_mutation:
            for s, v in versions:
                if s.version != v:
                    raise RuntimeError(
                        f"checkpoint: the output of op #{i} ({name!r}), kept for the recomputation, was "
                        "modified in place after the forward pass; the gradient would use the modified "
                        "value (pass allow_cache_entry_mutation=True to accept that, or recompute the op)")
        if rng is not None:
            _random.default_generator.set_state(rng)
        return _detached(out)


class _Context:
    """The forward or the recomputation side of a policy: while entered (in this thread),
    recorded ops go through the cache. May be entered again (a second backward recomputes)."""
    reusable = True

    def __init__(self, cache: _Cache, recompute: bool):
        self.cache, self.recompute, self.saved = cache, recompute, []

    def __enter__(self):
        c = self.cache
        if self.recompute:
            c.recomputing, c.pos = True, 0
        self.saved.append(state.sac)
        state.sac = c.run
        _count_context(1)   # (every op recorded in Python while a policy is entered)
        return self

    def __exit__(self, *exc):
        state.sac = self.saved.pop()
        self.cache.recomputing = False
        _count_context(-1)
        return False


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False):
    """checkpoint's context_fn for selective checkpointing (with functools.partial): the pair of
    contexts (forward, recomputation) for one checkpoint call.

    policy_fn_or_list: a function (ctx, op, *args, **kwargs) -> CheckpointPolicy, asked for each
    recorded op in the forward pass and again in the recomputation (ctx.is_recompute), which
    must answer alike; or a list of ops (names or public ops such as T.matmul) whose outputs
    are kept, every other op being recomputed. allow_cache_entry_mutation: accept a kept output
    written in place after the forward pass (by default that is an error in backward)."""
    if callable(policy_fn_or_list):
        policy = policy_fn_or_list
    elif isinstance(policy_fn_or_list, list | tuple | set | frozenset):
        names = frozenset(_op_name(o) for o in policy_fn_or_list)

        def policy(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op.name in names else CheckpointPolicy.PREFER_RECOMPUTE
    else:
        raise TypeError("create_selective_checkpoint_contexts: expected a policy function or a list of "
                        f"ops, got {type(policy_fn_or_list).__name__}")
    cache = _Cache(policy, bool(allow_cache_entry_mutation))
    return _Context(cache, False), _Context(cache, True)
