"""nn.RNN / LSTM / GRU and their cells (nn/recurrent.py).

- torch-free: one step of each against its formula in NumPy; float64 gradcheck through a
  two-step, two-layer sequence; shapes of every layout; parameter names; dropout between
  layers only in training; errors; the same results on the CPU and the CUDA device;
- PyTorch (where importable): state_dict loads across by name; outputs, final states and the
  gradients of the input, the initial states and every parameter equal torch's in float64,
  over layers, directions, batch_first, bias, proj_size, unbatched input and the cells.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T

RNG = np.random.default_rng(7)


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().to("cpu"))


def _w(m, name):
    return _np(getattr(m, name))


def test_one_step_matches_the_formulas():
    x, h, c = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))
    tx, th, tc = T.asarray(x), T.asarray(h), T.asarray(c)
    m = nn.LSTMCell(3, 4, dtype=T.float64)
    g = x @ _w(m, "weight_ih").T + _w(m, "bias_ih") + h @ _w(m, "weight_hh").T + _w(m, "bias_hh")
    i, f, gg, o = _sig(g[:, :4]), _sig(g[:, 4:8]), np.tanh(g[:, 8:12]), _sig(g[:, 12:])
    c2 = f * c + i * gg
    h2, c2_ours = m(tx, (th, tc))
    np.testing.assert_allclose(_np(c2_ours), c2, rtol=1e-12)
    np.testing.assert_allclose(_np(h2), o * np.tanh(c2), rtol=1e-12)
    m = nn.GRUCell(3, 4, dtype=T.float64)
    gi = x @ _w(m, "weight_ih").T + _w(m, "bias_ih")
    gh = h @ _w(m, "weight_hh").T + _w(m, "bias_hh")
    r, z = _sig(gi[:, :4] + gh[:, :4]), _sig(gi[:, 4:8] + gh[:, 4:8])
    n = np.tanh(gi[:, 8:] + r * gh[:, 8:])
    np.testing.assert_allclose(_np(m(tx, th)), (1 - z) * n + z * h, rtol=1e-12)
    m = nn.RNNCell(3, 4, nonlinearity="relu", dtype=T.float64)
    want = np.maximum(x @ _w(m, "weight_ih").T + _w(m, "bias_ih") + h @ _w(m, "weight_hh").T
                      + _w(m, "bias_hh"), 0)
    np.testing.assert_allclose(_np(m(tx, th)), want, rtol=1e-12)
    # a sequence layer runs the same step over time: its last state is the cell's after 2 steps
    seq = nn.GRU(3, 4, dtype=T.float64)
    cell = nn.GRUCell(3, 4, dtype=T.float64)
    with ag.no_grad():
        for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, k).copy_(getattr(seq, k + "_l0"))
    xs = T.asarray(RNG.standard_normal((2, 2, 3)))
    out, hn = seq(xs, T.expand_dims(th, 0))
    step = cell(xs[1], cell(xs[0], th))
    np.testing.assert_allclose(_np(hn[0]), _np(step), rtol=1e-12)
    np.testing.assert_allclose(_np(out[1]), _np(step), rtol=1e-12)


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
def test_gradcheck(cls):
    T.manual_seed(1)
    m = cls(2, 2, num_layers=2, bidirectional=True, dtype=T.float64)
    x = T.asarray(RNG.standard_normal((2, 1, 2))).requires_grad_()
    h = T.asarray(RNG.standard_normal((4, 1, 2))).requires_grad_()

    def f(x, h):
        out, state = m(x, (h, h * 0.5) if cls is nn.LSTM else h)
        last = state[1] if cls is nn.LSTM else state
        return (out * out).sum() + (last * last).sum()
    assert ag.gradcheck(f, [x, h])


def test_shapes_names_and_layouts():
    m = nn.LSTM(5, 4, num_layers=2, bidirectional=True, proj_size=3, batch_first=True)
    names = [n for n, _ in m.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                         "weight_hr_l0"]
    assert "weight_hr_l1_reverse" in names and len(names) == 20
    assert m.weight_ih_l1.shape == (16, 6) and m.weight_hh_l0.shape == (16, 3)
    out, (h, c) = m(T.ones((2, 7, 5)))
    assert out.shape == (2, 7, 6) and h.shape == (4, 2, 3) and c.shape == (4, 2, 4)
    out, (h, c) = m(T.ones((7, 5)))                          # unbatched
    assert out.shape == (7, 6) and h.shape == (4, 3) and c.shape == (4, 4)
    g = nn.GRU(5, 4, bias=False)
    assert [n for n, _ in g.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    out, h = g(T.ones((7, 2, 5)), T.zeros((1, 2, 4)))
    assert out.shape == (7, 2, 4) and h.shape == (1, 2, 4)
    bound = 1 / np.sqrt(4)
    assert all(np.abs(_np(p)).max() <= bound for p in g.parameters())
    assert "GRU(5, 4, bias=False)" == repr(g)


def test_dropout_acts_between_layers_in_training_only():
    T.manual_seed(0)
    m = nn.GRU(3, 8, num_layers=2, dropout=0.5)
    x = T.asarray(RNG.standard_normal((4, 2, 3)).astype(np.float32))
    a, b = m(x)[0], m(x)[0]
    assert not np.allclose(_np(a), _np(b))
    m.eval()
    np.testing.assert_array_equal(_np(m(x)[0]), _np(m(x)[0]))
    with pytest.warns(UserWarning, match="GRU: dropout acts between recurrent layers"):
        one = nn.GRU(3, 8, dropout=0.5)   # one layer: nothing to drop between (torch warns too)
    np.testing.assert_array_equal(_np(one(x)[0]), _np(one(x)[0]))


def test_errors():
    m = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match=r"LSTM: expected input of shape \(L, N, 3\)"):
        m(T.ones((2, 2, 5)))
    with pytest.raises(ValueError, match=r"LSTM: expected hidden state of shape \(1, 2, 4\)"):
        m(T.ones((6, 2, 3)), (T.zeros((1, 3, 4)), T.zeros((1, 2, 4))))
    with pytest.raises(TypeError, match=r"LSTM: hx must be a tuple \(h_0, c_0\)"):
        m(T.ones((6, 2, 3)), T.zeros((1, 2, 4)))
    with pytest.raises(TypeError, match="GRU: hx must be a tensor h_0, got tuple"):
        nn.GRU(3, 4)(T.ones((6, 2, 3)), (T.zeros((1, 2, 4)),))
    with pytest.raises(TypeError, match="LSTM: expected a floating-point input, got int64"):
        m(T.ones((6, 2, 3), dtype=T.int64))
    with pytest.raises(TypeError, match="LSTM: expected a Tensor or a PackedSequence input, got list"):
        m([T.ones((2, 3))])
    with pytest.raises(ValueError, match="LSTM: proj_size must be 0, or .* in \\[1, hidden_size=4\\)"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="RNN: nonlinearity must be 'tanh' or 'relu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="RNN: hidden_size must be a positive integer"):
        nn.RNN(3, 0)
    with pytest.raises(ValueError, match=r"GRUCell: expected hidden state of shape \(2, 4\)"):
        nn.GRUCell(3, 4)(T.ones((2, 3)), T.zeros((3, 4)))


def test_devices_agree(device):
    T.manual_seed(3)
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True)
    x = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    ref_out, (ref_h, _) = m(T.asarray(x))
    m.to(device)
    xd = T.asarray(x, device=device).requires_grad_()
    out, (h, c) = m(xd)
    (out * out).sum().backward()
    np.testing.assert_allclose(_np(out), _np(ref_out), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(h), _np(ref_h), rtol=1e-5, atol=1e-6)
    assert xd.grad.shape == xd.shape and m.weight_ih_l0.grad.device == xd.device


# ---------------------------------------------------------------- against PyTorch

def _copy_into(ours, theirs, torch):
    sd = ours.state_dict()
    assert set(sd) == set(theirs.state_dict())
    with torch.no_grad():
        for k, v in theirs.state_dict().items():
            v.copy_(torch.from_numpy(_np(sd[k])))


def _flat(r) -> list:
    """out, h or (h, c) as one list of tensors."""
    got = []
    for v in r if isinstance(r, tuple) else (r,):
        got.extend(v if isinstance(v, tuple) else (v,))
    return got


def _check_against_torch(ours, theirs, x, states=None):
    torch = pytest.importorskip("torch")
    _copy_into(ours, theirs, torch)
    xo, xt = T.asarray(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    so = st = None
    if states is not None:
        so = tuple(T.asarray(s).requires_grad_() for s in states)
        st = tuple(torch.from_numpy(s).requires_grad_() for s in states)
    o = ours(xo, so if len(states or ()) != 1 else so[0])
    t = theirs(xt, st if len(states or ()) != 1 else st[0])
    flat_o, flat_t = _flat(o), _flat(t)
    assert len(flat_o) == len(flat_t)
    loss_o = sum((v * v).sum() for v in flat_o)
    loss_t = sum((v * v).sum() for v in flat_t)
    for a, b in zip(flat_o, flat_t):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    loss_o.backward()
    loss_t.backward()
    np.testing.assert_allclose(_np(xo.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for a, b in zip(so or (), st or ()):
        np.testing.assert_allclose(_np(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(_np(p.grad), tp[name].grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)


CASES = [("RNN", dict(num_layers=2)), ("RNN", dict(nonlinearity="relu", bias=False)),
         ("LSTM", dict(num_layers=2, bidirectional=True)),
         ("LSTM", dict(batch_first=True, proj_size=2)),
         ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
         ("GRU", dict(bias=False))]


@pytest.mark.parametrize("name,kw", CASES)
@pytest.mark.parametrize("with_state", [False, True])
def test_layers_match_torch(name, kw, with_state):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, name)(3, 4, dtype=T.float64, **kw)
    theirs = getattr(torch.nn, name)(3, 4, dtype=torch.float64, **kw)
    x = RNG.standard_normal((2, 5, 3) if kw.get("batch_first") else (5, 2, 3))
    states = None
    if with_state:
        n = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
        states = [RNG.standard_normal((n, 2, kw.get("proj_size") or 4))]
        if name == "LSTM":
            states.append(RNG.standard_normal((n, 2, 4)))
    _check_against_torch(ours, theirs, x, states)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_and_cells_match_torch(name):
    torch = pytest.importorskip("torch")
    _check_against_torch(getattr(nn, name)(3, 4, dtype=T.float64),
                         getattr(torch.nn, name)(3, 4, dtype=torch.float64),
                         RNG.standard_normal((5, 3)))
    cell = name + "Cell"
    states = [RNG.standard_normal((2, 4))] * (2 if name == "LSTM" else 1)
    _check_against_torch(getattr(nn, cell)(3, 4, dtype=T.float64),
                         getattr(torch.nn, cell)(3, 4, dtype=torch.float64),
                         RNG.standard_normal((2, 3)), states)
    _check_against_torch(getattr(nn, cell)(3, 4, dtype=T.float64),
                         getattr(torch.nn, cell)(3, 4, dtype=torch.float64),
                         RNG.standard_normal(3))
