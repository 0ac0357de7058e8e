"""Selective activation checkpointing (autograd/checkpoint_selective.py): a policy keeps some ops'
outputs; the recomputation hands them back instead of running those ops again."""
import functools

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from autograd.checkpoint import (
    CheckpointPolicy,
    SelectiveCheckpointContext,
    checkpoint,
    create_selective_checkpoint_contexts,
)
from autograd.graph import RULES, Rule
from tensor._hook import differentiable

CALLS = []


def _square(x):
    CALLS.append(x.shape)
    return x * x   # (inside a recorded op: not recorded itself)


square = differentiable("sac_test_square", _square)
RULES["sac_test_square"] = Rule("sac_test_square", lambda ctx, g: (2 * ctx.args[0] * g,), None, (0,))


def _sac(policy, **kw):
    return functools.partial(create_selective_checkpoint_contexts, policy, **kw)


def _grads(run, params):
    for p in params:
        p.grad = None
    run().sum().backward()
    return [p.grad.numpy().copy() for p in params]


@pytest.mark.parametrize("policy", [["sac_test_square"], [square], ["matmul", "sac_test_square"]])
def test_a_kept_op_is_not_run_again(policy):
    x = T.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    w = T.tensor([[1.0, 2.0], [0.5, -0.5], [0.25, 1.0]], requires_grad=True)

    def f(x):
        return T.tanh(square(x) @ w)

    CALLS.clear()
    ref = _grads(lambda: f(x), [x, w])
    assert len(CALLS) == 1
    CALLS.clear()
    got = _grads(lambda: checkpoint(f, x, context_fn=_sac(policy)), [x, w])
    assert len(CALLS) == 1   # forward only: the recomputation took the kept output
    CALLS.clear()
    plain = _grads(lambda: checkpoint(f, x), [x, w])
    assert len(CALLS) == 2   # without a policy the recomputation runs it again
    for a, b, c in zip(ref, got, plain):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_policy_function_sees_both_passes():
    seen = []

    def policy(ctx, op, *args, **kwargs):
        assert isinstance(ctx, SelectiveCheckpointContext)
        seen.append((ctx.is_recompute, op.name))
        return CheckpointPolicy.MUST_SAVE if op == T.matmul else CheckpointPolicy.PREFER_RECOMPUTE

    x = T.randn((4, 5), requires_grad=True)
    w = T.randn((5, 3), requires_grad=True)
    y = checkpoint(lambda x: T.exp(T.sin(x) @ w), x, context_fn=_sac(policy))
    y.sum().backward()
    fwd = [n for r, n in seen if not r]
    rec = [n for r, n in seen if r]
    assert fwd == rec and "matmul" in fwd and "sin" in fwd
    xs, ws = x.detach().numpy(), w.detach().numpy()
    e = np.exp(np.sin(xs) @ ws)
    np.testing.assert_allclose(w.grad.numpy(), np.sin(xs).T @ e, rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), (e @ ws.T) * np.cos(xs), rtol=1e-5)


def test_mlp_with_dropout_equals_no_checkpoint():
    T.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 16), nn.Tanh(),
                      nn.Dropout(0.2), nn.Linear(16, 3))
    x = T.randn((8, 6))
    params = list(m.parameters())
    for policy in (["linear"], ["linear", "multiply"], ["relu", "tanh"], []):
        T.manual_seed(1)
        ref = _grads(lambda: m(x), params)
        T.manual_seed(1)
        got = _grads(lambda p=policy: checkpoint(m, x, context_fn=_sac(p)), params)
        for a, b in zip(ref, got):
            np.testing.assert_array_equal(a, b)


def _noisy(x):
    return x + T.rand(x.shape, dtype=x.dtype)   # draws inside a recorded op


noisy = differentiable("sac_test_noisy", _noisy)
RULES["sac_test_noisy"] = Rule("sac_test_noisy", lambda ctx, g: (g,), None, ())


def test_kept_random_op_keeps_the_generator_in_step():
    # a kept op that draws must leave the generator where the forward pass left it, or the
    # dropout after it draws another mask in the recomputation
    x = T.randn((64,), requires_grad=True)

    def f(x):
        return nn.functional.dropout(noisy(x) * 3.0, 0.5)

    T.manual_seed(3)
    ref = _grads(lambda: f(x), [x])
    T.manual_seed(3)
    got = _grads(lambda: checkpoint(f, x, context_fn=_sac(["sac_test_noisy"])), [x])
    np.testing.assert_array_equal(ref[0], got[0])
    assert 10 < np.count_nonzero(ref[0]) < 54


def test_retain_graph_recomputes_twice_with_the_same_cache():
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    CALLS.clear()
    y = checkpoint(lambda x: T.sin(square(x)), x, context_fn=_sac(["sac_test_square"])).sum()
    y.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1)
    assert len(CALLS) == 1
    np.testing.assert_allclose(g1, np.cos(np.array([1.0, 4.0, 9.0])) * 2 * np.array([1.0, 2.0, 3.0]),
                               rtol=1e-6)


def test_create_graph_through_a_kept_op():
    x = T.tensor([0.3, -0.7], dtype=T.float64, requires_grad=True)
    y = checkpoint(lambda x: T.sin(square(x)), x, context_fn=_sac(["sac_test_square"])).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), 2 * xs * np.cos(xs * xs), rtol=1e-12)


def test_views_and_inplace_ops_always_run_again():
    x = T.randn((3, 4), requires_grad=True)
    seen = set()

    def policy(ctx, op, *a, **k):   # keeps all but the add (its output is written in place below)
        seen.add(op.name)
        return CheckpointPolicy.PREFER_RECOMPUTE if op == "add" else CheckpointPolicy.MUST_SAVE

    def f(x):
        y = (T.exp(x) + 0.5).T.reshape(4, 3)
        y.add_(1.0)
        return y * y

    ref = _grads(lambda: f(x), [x])
    got = _grads(lambda: checkpoint(f, x, context_fn=_sac(policy)), [x])
    np.testing.assert_array_equal(ref[0], got[0])
    assert {"exp", "reshape", "add_"} <= seen


def test_mutated_kept_output_is_refused_unless_allowed():
    x = T.tensor([1.0, 2.0], requires_grad=True)
    held = []

    def f(x):
        s = square(x)
        held.append(s)
        return T.sin(s)

    y = checkpoint(f, x, context_fn=_sac(["sac_test_square"])).sum()
    with autograd.no_grad():
        held[0].add_(1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward()
    held.clear()
    y = checkpoint(f, x, context_fn=_sac(["sac_test_square"], allow_cache_entry_mutation=True)).sum()
    with autograd.no_grad():
        held[0].add_(1.0)
    y.backward()   # accepted: the gradient uses the modified value (PyTorch's rule)


def test_policy_must_agree_and_answer_a_policy():
    x = T.tensor([1.0, 2.0], requires_grad=True)

    def flip(ctx, op, *a, **k):
        return CheckpointPolicy.PREFER_RECOMPUTE if ctx.is_recompute else CheckpointPolicy.MUST_SAVE

    y = checkpoint(lambda x: T.sin(x) * 2.0, x, context_fn=_sac(flip)).sum()
    with pytest.raises(RuntimeError, match="answered differently"):
        y.backward()
    with pytest.raises(TypeError, match="CheckpointPolicy"):
        checkpoint(lambda x: T.sin(x), x, context_fn=_sac(lambda ctx, op, *a, **k: True))
    with pytest.raises(TypeError, match="not an op"):
        create_selective_checkpoint_contexts([len])
    with pytest.raises(TypeError, match="two context managers"):
        checkpoint(lambda x: T.sin(x), x, context_fn=lambda: None)
    y = T.sin(x).sum()   # nothing left behind: the fast path and plain recording work
    y.backward()


def test_other_contexts_are_entered_around_both_runs():
    events = []

    class Mark:
        def __init__(self, tag):
            self.tag = tag

        def __enter__(self):
            events.append(("in", self.tag))

        def __exit__(self, *exc):
            events.append(("out", self.tag))

    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda x: T.sin(x), x, context_fn=lambda: (Mark("fwd"), Mark("re"))).sum()
    assert events == [("in", "fwd"), ("out", "fwd")]
    y.backward()
    assert events[2:] == [("in", "re"), ("out", "re")]
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0, 2.0]), rtol=1e-6)


def test_torch_selective_checkpoint_gradients_match():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import CheckpointPolicy as TP
    from torch.utils.checkpoint import checkpoint as tcp
    from torch.utils.checkpoint import create_selective_checkpoint_contexts as tcc
    rng = np.random.default_rng(0)
    xs, w1, w2 = (rng.standard_normal(s) for s in ((5, 4), (4, 8), (8, 2)))

    def ours():
        x = T.tensor(xs, requires_grad=True)
        a, b = T.tensor(w1, requires_grad=True), T.tensor(w2, requires_grad=True)
        y = checkpoint(lambda x: T.tanh(T.relu(x @ a) @ b), x,
                       context_fn=_sac(lambda c, op, *r, **k: CheckpointPolicy.MUST_SAVE if op == "matmul"
                                       else CheckpointPolicy.PREFER_RECOMPUTE))
        y.sum().backward()
        return [t.grad.numpy() for t in (x, a, b)]

    def theirs():
        x = torch.tensor(xs, requires_grad=True)
        a, b = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)
        mm = torch.ops.aten.mm.default
        y = tcp(lambda x: torch.tanh(torch.relu(x @ a) @ b), x, use_reentrant=False,
                context_fn=functools.partial(tcc, lambda c, op, *r, **k: TP.MUST_SAVE if op == mm
                                             else TP.PREFER_RECOMPUTE))
        y.sum().backward()
        return [t.grad.numpy() for t in (x, a, b)]

    for a, b in zip(ours(), theirs()):
        np.testing.assert_allclose(a, b, rtol=1e-12)
