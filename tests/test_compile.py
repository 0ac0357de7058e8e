"""tensor.compile: capture and replay (tensor/capture.py, tensor/compiled.py).

A compiled function's results must be bitwise those of the same function run eagerly: on
randomized op chains from the op table (forward and backward, with broadcasting, views, casts
and reductions), on training steps (MLP with dropout and Adam, a CNN with batch norm and SGD with
momentum, the tiny GPT with AdamW, a learning-rate schedule), call after call with new data. It
must fall back to eager, with a warning saying why and where, when a step reads a tensor on the
host or makes a data-dependent size; re-capture when the signature or the Python state it reads
changes; raise on an index out of range in a replay; and use no more memory than eager.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest
from helpers import synced
from hypothesis import given, settings
from hypothesis import strategies as st

import autograd
import nn
import tensor as T
from nn import functional as F
from nn import optim
from tensor.optable import BINARY, NO_RULE, NONE, UNARY

pytestmark = pytest.mark.usefixtures("device")


def _same(a, b):
    """Bitwise equality of two results (tensors, or nested lists/tuples of them)."""
    if isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert a.dtype is b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def _data(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [T.asarray(rng.standard_normal(s)) for s in shapes]


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a fallback warning here is a failure
        return fn(*args)


# ---------------------------------------------------------------- functions

def test_eager_then_capture_then_replay():
    calls = []

    def f(x, y):
        calls.append(1)
        return T.exp(x) @ y.T, (x * y).sum(axis=0)
    cf = T.compile(f)
    for seed in range(5):
        x, y = _data(seed, (3, 4), (3, 4))
        _same(_quiet(cf, x, y), f(x, y))
    s = cf.stats()
    assert (s["eager"], s["captures"], s["replays"]) == (1, 1, 3)
    assert len(calls) == 5 + 2   # 5 direct calls, the eager one and the capture: replays run no Python


def test_results_are_fresh_tensors():
    cf = T.compile(lambda x: x * 2)
    outs = [cf(T.full((2,), float(i))) for i in range(4)]
    assert [o.tolist() for o in outs] == [[0.0, 0.0], [2.0, 2.0], [4.0, 4.0], [6.0, 6.0]]


def test_inputs_non_contiguous_and_nested():
    cf = T.compile(lambda d: d["a"][0] + d["b"].sum())
    for seed in range(4):
        a, b = _data(seed, (4, 3), (2, 5))
        arg = {"a": (a.T, 1), "b": b[:, ::2]}
        _same(_quiet(cf, arg), a.T + b[:, ::2].sum())


def _chain(ops, x, y, extras):
    """Apply a drawn chain of table ops: unary ones to the running value, binary ones with y
    (broadcast), with the drawn extras in between (a non-contiguous view, a cast round trip,
    dropout, a matmul, an in-place op) and a reduction at the end."""
    v = x
    for k, op in enumerate(ops):
        f = getattr(T, op.name)
        v = f(v) if op.arity == 1 else f(v, y)
        extra = extras[k % len(extras)]
        if extra == "view":
            v = T.flip(v.T, 0).T   # a non-contiguous view of the same shape
        elif extra == "cast":
            v = v.astype(T.float32).astype(v.dtype)
        elif extra == "dropout":
            v = F.dropout(v, 0.3)
        elif extra == "matmul":
            v = v @ T.eye(v.shape[-1], dtype=v.dtype) * 0.5
        elif extra == "inplace":
            v = (v * 1.0).mul_(0.75)
    return v.sum(axis=0) + v.mean()


_SMOOTH = [op for op in UNARY + BINARY if "f" in op.kinds and op.grad not in (NONE, NO_RULE)
           and op.domain == "any" and op.name not in ("floor_divide", "remainder", "copysign")]
_EXTRAS = ["none", "view", "cast", "dropout", "matmul", "inplace"]


@settings(max_examples=10)
@given(st.lists(st.sampled_from(_SMOOTH), min_size=1, max_size=5), st.integers(0, 1000),
       st.lists(st.sampled_from(_EXTRAS), min_size=1, max_size=3),
       st.sampled_from(["float32", "float64"]))
def test_random_op_chains_forward_and_backward(ops, seed, extras, dtype):
    """Chains drawn from the op table, forward and backward, on both devices: the replays
    equal eager bit for bit (dropout's draws included, with the generator reseeded alike)."""
    def step(x, w):
        w.grad = None
        out = _chain(ops, x * w, T.tanh(x[:1]), extras)
        out.sum().backward()
        return out.detach(), w.grad.detach() * 1.0
    w1 = _data(seed, (3, 4))[0].astype(dtype).requires_grad_()
    w2 = w1.detach().copy().requires_grad_()
    cf = T.compile(step)
    xs = [T.tanh(_data(seed + s + 1, (3, 4))[0]).astype(dtype) for s in range(4)]
    T.manual_seed(seed)
    want = [step(x, w1) for x in xs]
    T.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [cf(x, w2) for x in xs]
    _same(got, want)
    assert cf.stats()["replays"] == 2


# ---------------------------------------------------------------- training steps

def _step(model, opt, x, y, loss_fn=F.cross_entropy, sched=None):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if sched is not None:
        sched.step()
    return loss.detach()


def _train(make, batches, compiled: bool):
    """(losses, parameters) of a model made by make() (seeded) trained on batches."""
    T.manual_seed(7)
    model, opt, sched = make()
    step = T.compile(_step) if compiled else _step
    losses = [_quiet(step, model, opt, x, y, F.cross_entropy, sched) for x, y in batches]
    return losses, [p.detach() for p in model.parameters()], step


def _classify(n, c, shape, seed):
    rng = np.random.default_rng(seed)
    return [(T.asarray(rng.standard_normal((n, *shape)).astype(np.float32)),
             T.asarray(rng.integers(0, c, n))) for _ in range(5)]


def _mlp():
    m = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
    return m, optim.Adam(m.parameters(), lr=1e-2), None


def _cnn():
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    return m, opt, optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


@pytest.mark.parametrize("make,data", [(_mlp, lambda: _classify(6, 4, (12,), 1)),
                                       (_cnn, lambda: _classify(4, 3, (1, 8, 8), 2))],
                         ids=["mlp-dropout-adam", "cnn-batchnorm-sgd-schedule"])
def test_training_steps_match_eager(make, data):
    batches = [(x.to(T.get_default_device()), y.to(T.get_default_device())) for x, y in data()]
    eager_losses, eager_params, _ = _train(lambda: _on_device(make()), batches, False)
    losses, params, step = _train(lambda: _on_device(make()), batches, True)
    _same(losses, eager_losses)
    _same(params, eager_params)
    assert step.stats()["replays"] == 3


def _on_device(made):
    model, opt, sched = made
    model.to(T.get_default_device())
    return model, opt, sched


def test_tiny_gpt_step_matches_eager(device):
    """The tiny GPT's AdamW step, captured (fused runs, reductions, epilogues; CUDA Graphs on
    CUDA), bitwise its eager steps, call after call."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    import tiny_gpt as G
    cfg = G.GPTConfig(vocab=16, context=8, d_model=16, n_heads=2, n_layers=1, batch=4)
    np.random.seed(0)
    batches = [G.random_batch(cfg) for _ in range(4)]

    def run(compiled):
        T.manual_seed(3)
        model = G.TinyGPT(cfg)
        opt = G.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
        step = T.compile(_step) if compiled else _step
        return [_quiet(step, model, opt, x, y, lambda lg, t: G.F.cross_entropy(
            lg.reshape(-1, cfg.vocab), t.reshape(-1))) for x, y in batches]
    _same(run(True), run(False))


# ---------------------------------------------------------------- what a capture refuses

def _fallback(fn, *args, match):
    cf = T.compile(fn)
    cf(*args)
    with pytest.warns(RuntimeWarning, match=match):
        got = cf(*args)
    _same(got, fn(*args))
    _same(cf(*args), fn(*args))   # eager from then on, without warning again
    assert cf.stats()["replays"] == 0 and cf.stats()["eager"] == 2


def test_host_read_falls_back_to_eager():
    def f(x):
        return x * 2 if float(x.sum()) > 0 else x * 3    # the branch depends on the data
    _fallback(f, T.ones(3), match=r"reading a tensor on the host.* at .*test_compile\.py:\d+ \(f\)")


def test_data_dependent_size_falls_back():
    _fallback(lambda x: x[x > 0].sum(), T.asarray([1.0, -2.0, 3.0]), match="data-dependent size")


def test_output_requiring_grad_falls_back():
    w = T.ones(3, requires_grad=True)
    cf = T.compile(lambda x: (x * w).sum())
    cf(T.ones(3))
    with pytest.warns(RuntimeWarning, match="requires grad"):
        y = cf(T.ones(3))
    y.backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]


def test_exception_during_capture_leaves_things_working():
    state = {"raise": False}

    def f(x):
        if state["raise"]:
            raise KeyError("boom")
        return x + 1
    cf = T.compile(f)
    cf(T.ones(2))
    state["raise"] = True
    with pytest.raises(KeyError):
        cf(T.ones(2))
    state["raise"] = False
    assert cf(T.ones(2)).tolist() == [2.0, 2.0] and (T.ones(2) * 3).tolist() == [3.0, 3.0]
    assert cf(T.ones(2)).tolist() == [2.0, 2.0] and cf.stats()["replays"] == 1


# ---------------------------------------------------------------- re-capture and guards

def test_new_signature_captures_again():
    cf = T.compile(lambda x, k: x * k)
    for shape, k in [((2,), 2), ((3,), 2), ((2,), 5)] * 3:
        assert cf(T.ones(shape), k).tolist() == [float(k)] * shape[0]
    s = cf.stats()
    assert s["captures"] == 3 and s["replays"] == 3


def test_thrashing_warns():
    cf = T.compile(lambda x: x + 1, cache_size=2)
    with pytest.warns(RuntimeWarning, match="keeps recapturing"):
        for n in range(1, 12):
            cf(T.ones(n))


def test_grad_dropped_between_steps_recaptures():
    w = T.ones(2, requires_grad=True)

    def step(x):
        (w * x).sum().backward()
        return w.grad * 1
    cf = T.compile(step)
    for i in range(4):
        w.grad = None   # outside the step: the program's .grad is gone, so it captures anew
        assert _quiet(cf, T.full((2,), float(i))).tolist() == [float(i)] * 2
    assert cf.stats()["replays"] == 0 and cf.stats()["captures"] == 3


def test_replaced_parameter_recaptures():
    lin = nn.Linear(3, 2)
    cf = T.compile(lambda x: lin(x).detach())
    x = T.ones((1, 3))
    cf(x)
    cf(x)
    lin.weight = nn.Parameter(T.zeros((2, 3)))   # the old weight is freed: no replay may read it
    _same(_quiet(cf, x), lin(x).detach())
    assert cf.stats()["captures"] == 2


def test_grads_accumulate_across_replays():
    """No zero_grad: each call adds into .grad, in place, as eagerly."""
    w = T.ones(2, requires_grad=True)
    cf = T.compile(lambda x: (w * x).sum().backward())
    for _ in range(4):
        _quiet(cf, T.full((2,), 2.0))
    assert w.grad.tolist() == [8.0, 8.0] and cf.stats()["replays"] == 2


def test_inputs_written_in_place_are_written_back():
    cf = T.compile(lambda x: x.add_(1).sum())
    x = T.zeros(3)
    for i in range(1, 5):
        assert _quiet(cf, x).item() == 3.0 * i
    assert x.tolist() == [4.0] * 3


def test_nested_compiled_functions():
    inner = T.compile(lambda x: T.sin(x) * 2)
    outer = T.compile(lambda x: inner(x) + inner(x * 2))
    for seed in range(4):
        (x,) = _data(seed, (5,))
        _same(_quiet(outer, x), T.sin(x) * 2 + T.sin(x * 2) * 2)


def test_replay_index_out_of_range_raises():
    cf = T.compile(lambda x, i: x[i] * 2)
    x = T.arange(4.0)
    for _ in range(2):
        assert cf(x, T.asarray([3, 0])).tolist() == [6.0, 0.0]
    with pytest.raises(IndexError, match="out of range"):
        synced(cf(x, T.asarray([3, 9])))   # (a GPU reports at the next synchronization)
    assert cf(x, T.asarray([1, 2])).tolist() == [2.0, 4.0]   # still usable


def test_embedding_negative_index_raises_in_replay():
    emb = nn.Embedding(5, 2)
    cf = T.compile(lambda i: emb(i).detach())
    for _ in range(2):
        cf(T.asarray([0, 4]))
    with pytest.raises(IndexError):
        synced(cf(T.asarray([0, -1])))


# ---------------------------------------------------------------- randomness and memory

def test_dropout_draws_advance_as_eager():
    drop = nn.Dropout(0.5)
    cf = T.compile(lambda x: drop(x))
    T.manual_seed(11)
    got = [_quiet(cf, T.ones(64)) for _ in range(5)]
    state = T.random.default_generator.get_state() if hasattr(T.random, "default_generator") else None
    T.manual_seed(11)
    want = [drop(T.ones(64)) for _ in range(5)]
    _same(got, want)
    assert len({tuple(g.tolist()) for g in got}) == 5     # a new mask every call
    if state is not None:
        assert T.random.default_generator.get_state() == state


def test_peak_memory_is_eager_peak(device):
    m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64)).to(device)
    opt = optim.SGD(m.parameters(), lr=0.01)
    x, y = T.ones((32, 64), device=device), T.zeros((32, 64), device=device)

    def step():
        opt.zero_grad(set_to_none=False)
        F.mse_loss(m(x), y).backward()
        opt.step()
    step()
    base = T.memory_allocated(device)
    T.reset_peak_memory_stats(device)
    step()
    eager_peak = T.max_memory_allocated(device) - base
    cf = T.compile(step)
    for _ in range(3):
        _quiet(cf)
    s = cf.stats()
    assert s["replays"] == 1 and 0 < s["pool_peak"] <= eager_peak


def test_module_mode_change_recaptures():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cf = T.compile(lambda x: m(x).detach())
    x = T.ones((2, 4))
    for _ in range(3):
        _quiet(cf, x)
    m.eval()   # dropout off: the replay of the training-mode program would be wrong
    _same(_quiet(cf, x), m(x).detach())
    assert cf.stats()["captures"] == 2 and cf.stats()["replays"] == 1


def test_arguments_sharing_memory():
    cf = T.compile(lambda a, b: a * b)
    x = T.arange(3.0)
    for _ in range(3):
        assert _quiet(cf, x, x).tolist() == [0.0, 1.0, 4.0]   # read-only sharing replays
    def f(a, b):
        return (a.add_(1) * b).sum()
    cw = T.compile(f)
    base, twin = T.arange(6.0), T.arange(6.0)
    for _ in range(4):   # a write into one argument shows in the other, as eagerly
        assert _quiet(cw, base[:4], base[2:]).item() == f(twin[:4], twin[2:]).item()
    assert base.tolist() == twin.tolist() and cw.stats()["replays"] == 2


def test_one_call_at_a_time_across_threads():
    import threading
    cf = T.compile(lambda x: (x * 2).sum())
    errors, results = [], []

    def worker(v):
        try:
            for _ in range(20):
                results.append((v, cf(T.full((50,), float(v))).item()))
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=worker, args=(v,)) for v in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and all(r == 100.0 * v for v, r in results) and len(results) == 80


def test_every_backend_function_is_classified():
    """A backend function the recorder lets through unrecorded must launch nothing: a new
    interface function is recorded unless it is listed as plain on purpose."""
    from tensor import capture, replay
    from tensor.backend import INTERFACE
    assert capture._PLAIN <= set(INTERFACE) and set(capture._CHECKED) <= set(INTERFACE)
    assert set(capture._DATA) <= set(INTERFACE) and set(replay._RANDOM) <= set(INTERFACE)
    assert capture._PLAIN == {"new_storage", "new_pool", "prepare", "fuse", "record_graph", "open_device",
                              "device_count", "allocator", "free_after_streams",
                              "layer_norm_row_block", "sdpa_tile", "fast_resolved",
                              "elementwise_resolved"}


def test_attention_step_matches_eager():
    mha = nn.MultiheadAttention(8, 2, batch_first=True, dropout=0.1)
    opt = optim.SGD(mha.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        out, _ = mha(x, x, x, need_weights=False, is_causal=True,
                     attn_mask=T.triu(T.ones((5, 5), dtype=T.bool_), 1))
        loss = (out ** 2).mean()
        loss.backward()
        opt.step()
        return loss.detach()
    xs = [T.asarray(np.random.default_rng(i).standard_normal((2, 5, 8))) for i in range(4)]
    state = [p.detach().copy() for p in mha.parameters()]
    T.manual_seed(5)
    want = [step(x) for x in xs]
    with autograd.no_grad():
        for p, s in zip(mha.parameters(), state):
            p.copy_(s)
    T.manual_seed(5)
    cf = T.compile(step)
    _same([_quiet(cf, x) for x in xs], want)
    assert cf.stats()["replays"] == 2


def test_a_draw_no_call_can_redraw_falls_back():
    """Random bits drawn where the recorder cannot re-base them would repeat at every replay."""
    def f(x):
        T.random.default_generator._take(x.numel(), 4)   # a draw no recorded call reads
        return x + 1
    _fallback(f, T.zeros(4), match="cannot redraw")


def test_generators_seeded_in_the_step():
    """Seeded inside the step, a generator draws the same bits at every call (eager reseeds
    it each time), and the replay leaves it where the step does."""
    def f(x):
        T.manual_seed(42)
        g = T.random.Generator(7)
        return x + T.rand(4) + g.rand(4)
    cf = T.compile(f)
    for _ in range(4):
        got = _quiet(cf, T.zeros(4))
        after = T.random.default_generator.get_state()
        T.rand(3)   # moves the global stream between calls: the step reseeds it anyway
        _same(got, f(T.zeros(4)))
        assert after == T.random.default_generator.get_state()
        T.rand(5)
    assert cf.stats()["replays"] == 2


def test_checkpointed_dropout_replays_as_eager():
    """A checkpoint recomputes its segment with the forward's random state (set_state back to
    a state of the step): the replayed draws stay relative to the generator, as eagerly."""
    from autograd import checkpoint
    lin = nn.Linear(6, 6)
    drop = nn.Dropout(0.5)

    def step(x):
        lin.zero_grad()
        y = checkpoint(lambda t: drop(T.tanh(lin(t))), x)
        (y ** 2).sum().backward()
        return y.detach(), lin.weight.grad * 1.0
    xs = [T.asarray(np.random.default_rng(i).standard_normal((3, 6))) for i in range(4)]
    T.manual_seed(9)
    want = [step(x) for x in xs]
    T.manual_seed(9)
    cf = T.compile(step)
    _same([_quiet(cf, x) for x in xs], want)
    assert cf.stats()["replays"] == 2


def test_capture_pools_count_in_the_device_memory_figures():
    """A cached program's pool is memory of the device: the device figures (memory_reserved,
    memory_allocated) count it, as PyTorch's count CUDA graph pools; the allocator's own not."""
    import gc

    from tensor import memstats as M
    gc.collect()
    x = T.ones(4096)
    f = T.compile(lambda a: (a * 2).sum())
    for _ in range(3):   # eager, capture, replay
        f(x)
    dev = x.device
    main = M.allocator(dev)
    pools = list(main.pools)
    assert f.stats()["pool_reserved"] > 0 and pools
    assert M.memory_reserved(dev) == main.memory_reserved() + sum(
        p.memory_reserved() for p in pools)
    assert M.memory_allocated(dev) == main.memory_allocated() + sum(
        p.memory_allocated() for p in pools)
    assert M.max_memory_reserved(dev) >= M.memory_reserved(dev)
