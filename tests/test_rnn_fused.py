"""nn/_rnn_fused.py: a recurrent layer's time loop as one autograd node.

The fused loop (forward with autograd off, hand-written reverse loop) against the per-op
recording it replaces (`usable` patched to False): outputs, final states and the gradients of
the input, the initial states and every parameter agree to ~1e-12 in float64 on both devices,
over LSTM / GRU / RNN (tanh, relu), packed sequences, bidirectional, proj_size, no bias and two
layers; the graph holds O(layers) nodes; create_graph (double backward) recomputes op by op
and matches the per-op second derivatives; PyTorch where importable.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn import _rnn_fused
from nn.utils.rnn import pack_padded_sequence

pytestmark = pytest.mark.usefixtures("device")

CASES = [  # (class, kwargs)
    (nn.LSTM, {}),
    (nn.LSTM, {"proj_size": 2, "num_layers": 2}),
    (nn.LSTM, {"bidirectional": True, "bias": False}),
    (nn.GRU, {}),
    (nn.GRU, {"bidirectional": True, "num_layers": 2}),
    (nn.RNN, {"nonlinearity": "tanh", "bidirectional": True}),
    (nn.RNN, {"nonlinearity": "relu", "num_layers": 2}),
]


def _np(t):
    return np.asarray(t.detach().to("cpu"))


def _model(cls, kw, dev):
    T.manual_seed(3)
    return cls(3, 4, dtype=T.float64, device=dev, **kw)


def _run(m, x, hx, packed_lengths=None):
    """(values, gradients) of the outputs and final states, loss weighted by fixed randoms."""
    for p in m.parameters():
        p.grad = None
    xin = x
    if packed_lengths is not None:
        xin = pack_padded_sequence(x, packed_lengths, enforce_sorted=False)
    out, h = m(xin, hx) if hx is not None else m(xin)
    if packed_lengths is not None:
        out = out.data
    states = list(h) if isinstance(h, tuple) else [h]
    rng = np.random.default_rng(11)
    loss = 0.0
    for t in [out, *states]:
        loss = loss + (t * T.asarray(rng.standard_normal(t.shape), device=t.device)).sum()
    loss.backward()
    vals = [_np(t) for t in [out, *states]]
    grads = [_np(x.grad)] + [_np(s.grad) for s in (hx if isinstance(hx, tuple) else [hx])
                             if s is not None]
    grads += [_np(p.grad) for p in m.parameters()]
    return vals, grads


def _inputs(m, dev, n=3, L=5):
    rng = np.random.default_rng(5)
    x = T.asarray(rng.standard_normal((L, n, 3)), device=dev).requires_grad_()
    dirs = 2 if m.bidirectional else 1
    out = m.proj_size or m.hidden_size
    h0 = T.asarray(rng.standard_normal((dirs * m.num_layers, n, out)), device=dev).requires_grad_()
    if m.mode != "LSTM":
        return x, h0
    c0 = T.asarray(rng.standard_normal((dirs * m.num_layers, n, 4)), device=dev).requires_grad_()
    return x, (h0, c0)


def _both(m, dev, monkeypatch, packed=None):
    """(fused, per-op) results on fresh copies of the same inputs."""
    res = []
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(_rnn_fused, "usable", lambda *a: False)
        x, hx = _inputs(m, dev)
        res.append(_run(m, x, hx, packed))
    monkeypatch.undo()
    return res


@pytest.mark.parametrize("cls,kw", CASES)
def test_fused_matches_per_op(cls, kw, device, monkeypatch):
    m = _model(cls, kw, device)
    (fv, fg), (pv, pg) = _both(m, device, monkeypatch)
    for a, b in zip(fv + fg, pv + pg):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls,kw", [CASES[1], CASES[2], CASES[4], CASES[5]])
def test_fused_matches_per_op_packed(cls, kw, device, monkeypatch):
    m = _model(cls, kw, device)
    (fv, fg), (pv, pg) = _both(m, device, monkeypatch, packed=[2, 5, 3])
    for a, b in zip(fv + fg, pv + pg):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_one_node_per_layer_and_direction(device):
    m = _model(nn.LSTM, {"num_layers": 2}, device)
    x, _ = _inputs(m, device, L=30)
    out, _ = m(x)
    seen, stack = set(), [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(e[0] if isinstance(e, tuple) else getattr(e, "node", None)
                     for e in getattr(n, "next_functions", ()) or ())
    assert len(seen) < 30     # the per-op path records ~15 nodes per step


def test_double_backward_matches_per_op(device, monkeypatch):
    m = _model(nn.GRU, {}, device)
    got = []
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(_rnn_fused, "usable", lambda *a: False)
        x, h0 = _inputs(m, device, L=3)
        out, _ = m(x, h0)
        (gx,) = ag.grad((out * out).sum(), [x], create_graph=True)
        (ggx,) = ag.grad((gx * gx).sum(), [x])
        got.append((_np(gx), _np(ggx)))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_float32_and_no_grad_paths_agree(device):
    T.manual_seed(1)
    m = nn.LSTM(3, 5, device=device)
    x = T.asarray(np.random.default_rng(2).standard_normal((6, 2, 3)).astype(np.float32),
                  device=device)
    with ag.no_grad():
        ref, _ = m(x)
    out, _ = m(x.requires_grad_())
    np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_matches_torch(mode):
    torch = pytest.importorskip("torch")
    ours = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN_TANH": nn.RNN}[mode](3, 4, num_layers=2,
                                                                     bidirectional=True,
                                                                     dtype=T.float64)
    ref = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "RNN_TANH": torch.nn.RNN}[mode](
        3, 4, num_layers=2, bidirectional=True, dtype=torch.float64)
    with torch.no_grad():
        for name, p in ref.named_parameters():
            p.copy_(torch.from_numpy(_np(getattr(ours, name))))
    xn = np.random.default_rng(4).standard_normal((7, 2, 3))
    x = T.asarray(xn).requires_grad_()
    tx = torch.from_numpy(xn).requires_grad_()
    out, _ = ours(x)
    tout, _ = ref(tx)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(_np(getattr(ours, name).grad), p.grad.numpy(), rtol=1e-10,
                                   atol=1e-12)


def _pair(fn, monkeypatch):
    """fn() on the fused path, then on the per-op one."""
    a = fn()
    monkeypatch.setattr(_rnn_fused, "usable", lambda *x: False)
    b = fn()
    monkeypatch.undo()
    return a, b


def _close(pair, tol=1e-12):
    for a, b in zip(*pair):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_outputs_changed_in_place_leave_the_gradients_right(device, monkeypatch):
    # the padded kernel path writes the states into one buffer the backward reads: the
    # returned output, h_n and c_n must be copies of it, not views
    def fn():
        m = _model(nn.LSTM, {}, device)
        x, _ = _inputs(m, device)
        out, (h, c) = m(x)
        out.add_(1.0)
        h.mul_(2.0)
        c.mul_(3.0)
        ((out * out).sum() + (h * h).sum() + (c * c).sum()).backward()
        return [_np(x.grad), _np(m.weight_hh_l0.grad), _np(m.bias_hh_l0.grad)]
    _close(_pair(fn, monkeypatch))


def test_frozen_weights_retain_graph_and_h_n_only(device, monkeypatch):
    def fn():
        m = _model(nn.GRU, {"num_layers": 2}, device)
        m.weight_hh_l0.requires_grad_(False)
        m.bias_hh_l1.requires_grad_(False)
        x, h0 = _inputs(m, device)
        out, h = m(x, T.swapaxes(T.swapaxes(h0, 0, 1).detach().copy(), 0, 1).requires_grad_())
        loss = (h * h).sum()            # the output unused: no gradient flows into it
        loss.backward(retain_graph=True)
        loss.backward()
        return [_np(x.grad), _np(m.weight_hh_l1.grad), _np(m.bias_hh_l0.grad)]
    _close(_pair(fn, monkeypatch))


def test_double_backward_lstm_projection(device, monkeypatch):
    def fn():
        m = _model(nn.LSTM, {"proj_size": 2}, device)
        x, _ = _inputs(m, device, L=3)
        out, (h, c) = m(x)
        (gx,) = ag.grad((out * out).sum() + (c * c).sum(), [x], create_graph=True)
        (gw,) = ag.grad((gx * gx).sum(), [m.weight_hh_l0])
        return [_np(gx), _np(gw)]
    _close(_pair(fn, monkeypatch))


@pytest.mark.parametrize("dtype", [T.float16, T.float32])
def test_other_dtypes_and_empty_batch(dtype, device, monkeypatch):
    # float16 runs the tensor-op loop (no step kernel), float32 the kernels; an empty batch
    def fn():
        T.manual_seed(2)
        m = nn.LSTM(3, 4, num_layers=2, dtype=dtype, device=device)
        rng = np.random.default_rng(3)
        x = T.asarray(rng.standard_normal((4, 2, 3)), device=device).astype(dtype).requires_grad_()
        out, _ = m(x)
        out.astype(T.float32).sum().backward()
        e, _ = m(T.zeros((4, 0, 3), dtype=dtype, device=device))
        return [_np(out.astype(T.float32)), _np(x.grad.astype(T.float32)), _np(e)]
    tol = 1e-5 if dtype == T.float32 else 2e-3
    _close(_pair(fn, monkeypatch), tol)


@pytest.mark.parametrize("cls", [nn.LSTMCell, nn.GRUCell])
@pytest.mark.parametrize("unbatched", [False, True])
def test_cells_fused_match_per_op(cls, unbatched, device, monkeypatch):
    # LSTMCell / GRUCell run a step as one node on the step kernel too
    def fn():
        T.manual_seed(4)
        m = cls(3, 4, dtype=T.float64, device=device)
        rng = np.random.default_rng(6)
        shape = (3,) if unbatched else (2, 3)
        xs = [T.asarray(rng.standard_normal(shape), device=device).requires_grad_()
              for _ in range(3)]
        h0 = T.asarray(rng.standard_normal(shape[:-1] + (4,)), device=device).requires_grad_()
        st = (h0, h0 * 0.5) if cls is nn.LSTMCell else h0
        loss = 0.0
        for x in xs:
            st = m(x, st)
            for s in (st if isinstance(st, tuple) else (st,)):
                loss = loss + (s * s).sum()
        (g0,) = ag.grad(loss, [h0], create_graph=True)
        (g0 * g0).sum().backward()
        vals = [_np(s) for s in (st if isinstance(st, tuple) else (st,))]
        return vals + [_np(g0), _np(xs[0].grad), _np(m.weight_hh.grad), _np(m.bias_hh.grad)]
    _close(_pair(fn, monkeypatch))
