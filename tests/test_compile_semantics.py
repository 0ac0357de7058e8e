"""tensor.compile against eager on what a replay could get wrong without a warning (cases a
fuzzer found): writes into arguments when a capture gives up or raises, reductions fused onto a
run of fewer elements, the state of .grad and requires_grad between calls, grad mode and
autocast, arguments reached through other tensors, read-only aliases of written arguments,
named tuples and float scalars by their bits. Each compares every call with eager's."""
from __future__ import annotations

import collections
import warnings

import pytest

import autograd
import nn
import tensor as T
from nn import optim


def both(fn):
    """(eager fn, compiled fn), run side by side."""
    return fn, T.compile(fn)


def test_writes_into_arguments_survive_a_refused_or_raising_capture():
    def f(x):
        x.add_(1)
        return x[x > 0].sum()            # a boolean mask: not captured
    fe, fc = both(f)
    xe, xc = T.zeros(3), T.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for _ in range(3):
            assert fe(xe).item() == fc(xc).item()
            assert xe.tolist() == xc.tolist()

    def g(x):
        x.add_(1)
        raise ValueError("after a write")
    gc, x = T.compile(g), T.zeros(2)
    for k in range(3):
        with pytest.raises(ValueError):
            gc(x)
        assert x.tolist() == [k + 1.0] * 2


def test_a_reduction_is_not_fused_onto_a_run_of_fewer_elements():
    def f(a):
        v = a * 2
        v[0] = 1.0                        # a one-element run just before the sum
        return v, v.sum()
    fe, fc = both(f)
    for k in range(4):
        x = T.full((3,), float(k))
        (ve, se), (vc, sc) = fe(x), fc(x)
        assert vc.tolist() == ve.tolist() and sc.item() == se.item() == 1 + 4 * k
    ge, gc = both(lambda a: T.concatenate([a, a]).sum())
    for k in range(4):
        x = T.full((3,), k + 1.0)
        assert gc(x).item() == ge(x).item() == 6 * (k + 1)


def test_gradient_accumulation_follows_grad_between_calls():
    we, wc = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
    fe = lambda x: (we * x).sum().backward()                   # noqa: E731
    fc = T.compile(lambda x: (wc * x).sum().backward())
    for k in range(8):
        if k % 4 == 0:                    # zero_grad every 4 micro-steps, outside the step
            we.grad = wc.grad = None
        fe(T.ones(2))
        fc(T.ones(2))
        assert wc.grad.tolist() == we.grad.tolist() == [k % 4 + 1.0] * 2
    assert fc.stats()["replays"] > 0
    # a .grad someone else holds: accumulated in place, as PyTorch's (the holder sees the sum)
    w = T.ones(2, requires_grad=True)
    f = T.compile(lambda x: (w * x).sum().backward())
    f(T.ones(2))
    kept = w.grad
    for _ in range(3):
        f(T.ones(2))
    assert w.grad.tolist() == [4.0, 4.0] and kept.tolist() == [4.0, 4.0]


def test_freezing_a_parameter_between_calls_is_seen():
    def make():
        T.manual_seed(0)
        m = nn.Linear(2, 1)
        o = optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            o.zero_grad()
            m(x).sum().backward()
            o.step()
        return m, step
    (me, se), (mc, sc) = make(), make()
    sc = T.compile(sc)
    x = T.ones((1, 2))
    for k in range(5):
        if k == 3:
            me.bias.requires_grad_(False)
            mc.bias.requires_grad_(False)
        se(x)
        sc(x)
        assert mc.bias.tolist() == me.bias.tolist() and mc.weight.tolist() == me.weight.tolist()
    assert sc.stats()["replays"] > 0


def test_grad_mode_and_autocast_are_part_of_the_signature():
    x = T.full((2, 2), 1.001, dtype=T.float32)
    f = T.compile(lambda a, b: a @ b)
    with T.autocast("cpu", dtype=T.bfloat16):
        for _ in range(3):
            assert f(x, x).dtype is T.bfloat16
    assert f(x, x).dtype is T.float32 and f(x, x).tolist() == (x @ x).tolist()
    lin = nn.Linear(2, 2)
    g = T.compile(lambda a: (lin(a) * 2).sum().detach())
    with autograd.no_grad():
        g(x[:1])
        g(x[:1])
    lin.zero_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        h = T.compile(lambda a: lin(a).sum())
        with autograd.no_grad():
            h(x[:1])
            h(x[:1])
        out = h(x[:1])
    assert out.requires_grad      # not the no_grad program's result


def test_an_argument_reached_through_a_closure_is_not_captured():
    def make(state):
        def f(x):
            x.add_(1)
            return state * 1              # x is `state`
        return f
    se, sc = T.zeros(3), T.zeros(3)
    fe, fc = make(se), T.compile(make(sc))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = [(fe(se).tolist(), fc(sc).tolist()) for _ in range(5)]
    assert any("reaches an argument's memory" in str(m.message) for m in w)
    # (the capturing call ran on a copy of x: its result is the old value, then eager again)
    assert all(a == b for a, b in got[2:]) and se.tolist() == sc.tolist() == [5.0] * 3


def test_a_broadcast_alias_of_a_written_argument():
    f = T.compile(lambda a, b: (a.add_(1), b.sum(axis=0))[1])
    for _ in range(3):
        x = T.arange(4.0)
        assert f(x, T.broadcast_to(x, (3, 4))).tolist() == [3.0, 6.0, 9.0, 12.0]
        assert x.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_named_tuples_and_float_bits_in_the_signature():
    B = collections.namedtuple("B", "x y")
    g = T.compile(lambda b: b.x + b.y)
    for k in range(4):
        b = B(T.full((2,), float(k)), T.full((2,), 10.0 * k))
        assert g(b).tolist() == [11.0 * k] * 2
        del b                              # (its id may be reused by the next one)
    f = T.compile(lambda x, s: x * s)
    x = T.ones(2)
    for s in (0.0, 0.0, 0.0, -0.0):
        r = f(x, s)
    assert [str(v) for v in r.tolist()] == ["-0.0", "-0.0"]
