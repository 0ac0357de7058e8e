"""nn.utils.rnn (packed and padded variable-length sequences) and the recurrent layers on a
PackedSequence.

- torch-free: packing against its definition in NumPy (time-major, longest first); pad / pack
  round trips in both orders; a packed RNN / LSTM / GRU equals running each sequence alone
  (unbatched, its own length, its own initial state), for outputs, final states and the
  gradients of inputs, states and parameters; float64 gradcheck through pack, a bidirectional
  LSTM and unpack; errors; the CPU and the CUDA device agree;
- PyTorch (where importable): data, batch sizes, index tensors, padded outputs, final states and
  every gradient equal torch's in float64.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn.utils import rnn as R

RNG = np.random.default_rng(11)


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().to("cpu"))


def _state_list(state, mode):
    return list(state) if mode == "LSTM" else [state]


def test_pack_matches_its_definition_and_round_trips():
    lengths = [2, 5, 1, 3]
    x = RNG.standard_normal((5, 4, 2))                      # (L, N, *)
    p = R.pack_padded_sequence(T.asarray(x), lengths, enforce_sorted=False)
    order = [1, 3, 0, 2]                                     # longest first, stable
    want = [x[t, b] for t in range(5) for b in order if lengths[b] > t]
    np.testing.assert_array_equal(_np(p.data), np.stack(want))
    assert p.batch_sizes.tolist() == [4, 3, 2, 1, 1] and p.batch_sizes.device.type == "cpu"
    assert p.sorted_indices.tolist() == order and p.unsorted_indices.tolist() == [2, 0, 3, 1]
    padded, got = R.pad_packed_sequence(p, padding_value=-3.0)
    mask = np.arange(5)[:, None] < np.array(lengths)[None, :]
    np.testing.assert_array_equal(_np(padded), np.where(mask[..., None], x, -3.0))
    assert got.tolist() == lengths and got.dtype == T.int64
    padded, _ = R.pad_packed_sequence(p, batch_first=True, total_length=7)
    assert padded.shape == (4, 7, 2)
    np.testing.assert_array_equal(_np(padded)[:, :5], np.where(mask[..., None], x, 0).swapaxes(0, 1))
    # sorted input: no index tensors, and batch_first packs the same rows
    srt = R.pack_padded_sequence(T.asarray(x[:, order].swapaxes(0, 1)), sorted(lengths)[::-1],
                                 batch_first=True)
    assert srt.sorted_indices is None and srt.unsorted_indices is None
    np.testing.assert_array_equal(_np(srt.data), _np(p.data))
    # lists of sequences: pad / unpad and pack / unpack give them back
    seqs = [T.asarray(RNG.standard_normal((k, 3))) for k in (3, 1, 4)]
    for side in ("right", "left"):
        pad = R.pad_sequence(seqs, batch_first=True, padding_value=9.0, padding_side=side)
        assert pad.shape == (3, 4, 3)
        row = _np(pad)[1]
        np.testing.assert_array_equal(row[3:] if side == "left" else row[:1], _np(seqs[1]))
        assert ((row[:3] if side == "left" else row[1:]) == 9.0).all()
    back = R.unpad_sequence(R.pad_sequence(seqs), [3, 1, 4])
    back2 = R.unpack_sequence(R.pack_sequence(seqs, enforce_sorted=False))
    for a, b, s in zip(back, back2, seqs):
        np.testing.assert_array_equal(_np(a), _np(s))
        np.testing.assert_array_equal(_np(b), _np(s))
    assert R.pad_sequence([T.ones(2, dtype=T.int32), T.ones(1, dtype=T.float32)]).dtype == T.float64


def _each_alone(m, x, lengths, states, mode):
    """Outputs and final states of m run on each sequence by itself (unbatched)."""
    outs, finals = [], []
    for b, n in enumerate(lengths):
        st = [s[:, b] for s in states]
        out, state = m(x[:n, b], tuple(st) if mode == "LSTM" else st[0])
        outs.append(out)
        finals.append(_state_list(state, mode))
    return outs, [T.stack([f[k] for f in finals], axis=1) for k in range(len(states))]


@pytest.mark.parametrize("mode,kw", [("RNN", dict(num_layers=2)),
                                     ("GRU", dict(bidirectional=True)),
                                     ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
                                     ("LSTM", dict(batch_first=True))])
def test_packed_layers_equal_each_sequence_alone(mode, kw):
    T.manual_seed(2)
    m = getattr(nn, mode)(3, 4, dtype=T.float64, **kw)
    lengths = [3, 6, 1, 4]
    x = T.asarray(RNG.standard_normal((6, 4, 3))).requires_grad_()
    dirs = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    shapes = [(dirs, 4, kw.get("proj_size") or 4)] + ([(dirs, 4, 4)] if mode == "LSTM" else [])
    states = [T.asarray(RNG.standard_normal(s)).requires_grad_() for s in shapes]
    xin = T.swapaxes(x, 0, 1) if kw.get("batch_first") else x
    p = R.pack_padded_sequence(xin, lengths, batch_first=kw.get("batch_first", False),
                               enforce_sorted=False)
    out, state = m(p, tuple(states) if mode == "LSTM" else states[0])
    assert isinstance(out, R.PackedSequence) and out.batch_sizes is p.batch_sizes
    padded, _ = R.pad_packed_sequence(out)
    alone, finals = _each_alone(m, x, lengths, states, mode)
    for b, n in enumerate(lengths):
        np.testing.assert_allclose(_np(padded[:n, b]), _np(alone[b]), rtol=1e-12, atol=1e-14)
        assert (_np(padded[n:, b]) == 0).all()
    for got, want in zip(_state_list(state, mode), finals):
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-12, atol=1e-14)
    # the gradients of the same loss, written both ways
    w = T.asarray(RNG.standard_normal(tuple(padded.shape)))
    params = list(m.parameters())
    inputs = [x] + states + params

    def loss(out_padded, finals):
        return (out_padded * w).sum() + sum((f * f).sum() for f in finals)
    g1 = ag.grad(loss(padded, _state_list(state, mode)), inputs)
    stacked = T.stack([T.concat([a, T.zeros((6 - a.shape[0],) + tuple(a.shape[1:]),
                                            dtype=a.dtype)]) for a in alone], axis=1)
    g2 = ag.grad(loss(stacked, finals), inputs)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)


def test_gradcheck_through_pack_and_unpack():
    T.manual_seed(4)
    m = nn.LSTM(2, 2, bidirectional=True, dtype=T.float64)
    x = T.asarray(RNG.standard_normal((3, 2, 2))).requires_grad_()
    h = T.asarray(RNG.standard_normal((2, 2, 2))).requires_grad_()

    def f(x, h):
        p = R.pack_padded_sequence(x, [1, 3], enforce_sorted=False)
        out, (hn, cn) = m(p, (h, 0.5 * h))
        padded, _ = R.pad_packed_sequence(out, padding_value=1.0)
        return (padded * padded).sum() + (hn * cn).sum()
    assert ag.gradcheck(f, [x, h])


def test_errors():
    x = T.ones((4, 3, 2))
    with pytest.raises(RuntimeError, match="pack_padded_sequence: lengths must be in decreasing"):
        R.pack_padded_sequence(x, [2, 4, 1])
    with pytest.raises(ValueError, match="pack_padded_sequence: every length must be greater than 0"):
        R.pack_padded_sequence(x, [4, 2, 0])
    with pytest.raises(ValueError, match="pack_padded_sequence: expected 3 lengths"):
        R.pack_padded_sequence(x, [4, 2])
    with pytest.raises(ValueError, match="a length of 5 exceeds the input's 4 time steps"):
        R.pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(TypeError, match="lengths must be a 1-D sequence of integers"):
        R.pack_padded_sequence(x, [4.0, 2.0, 1.0])
    p = R.pack_padded_sequence(x, T.tensor([4, 2, 1]))
    with pytest.raises(ValueError, match="total_length=3 is less than the longest"):
        R.pad_packed_sequence(p, total_length=3)
    with pytest.raises(TypeError, match="pad_packed_sequence: expected a PackedSequence"):
        R.pad_packed_sequence(x)
    with pytest.raises(ValueError, match="pad_sequence: the trailing shapes differ"):
        R.pad_sequence([T.ones((2, 3)), T.ones((2, 4))])
    with pytest.raises(ValueError, match="padding_side must be 'right' or 'left'"):
        R.pad_sequence([T.ones(2)], padding_side="middle")
    with pytest.raises(ValueError, match=r"GRU: expected packed data of shape \(\*, 3\)"):
        nn.GRU(3, 4)(p)
    with pytest.raises(ValueError, match=r"GRU: expected hidden state of shape \(1, 3, 4\)"):
        nn.GRU(2, 4)(p, T.zeros((1, 2, 4)))


def test_devices_agree(device):
    T.manual_seed(5)
    m = nn.GRU(3, 4, bidirectional=True, dtype=T.float32)
    x = RNG.standard_normal((5, 3, 3)).astype(np.float32)
    h = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    lengths = [2, 5, 3]
    ref, ref_h = m(R.pack_padded_sequence(T.asarray(x), lengths, enforce_sorted=False),
                   T.asarray(h))
    m.to(device)
    p = R.pack_padded_sequence(T.asarray(x, device=device), lengths, enforce_sorted=False)
    assert p.sorted_indices.device.type == device and p.batch_sizes.device.type == "cpu"
    out, hn = m(p, T.asarray(h, device=device))
    np.testing.assert_allclose(_np(out.data), _np(ref.data), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(hn), _np(ref_h), rtol=1e-5, atol=1e-6)
    padded, lens = R.pad_packed_sequence(out.to("cpu"), batch_first=True)
    assert padded.device.type == "cpu" and lens.tolist() == lengths


@pytest.mark.parametrize("mode,kw", [("RNN", dict(num_layers=2, bidirectional=True)),
                                     ("LSTM", dict(num_layers=2, proj_size=2)),
                                     ("GRU", dict(batch_first=True, bidirectional=True))])
def test_packed_layers_match_torch(mode, kw):
    torch = pytest.importorskip("torch")
    tr = torch.nn.utils.rnn
    theirs = getattr(torch.nn, mode)(2, 3, dtype=torch.float64, **kw)
    ours = getattr(nn, mode)(2, 3, dtype=T.float64, **kw)
    ours.load_state_dict({k: T.asarray(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    bf, lengths = kw.get("batch_first", False), [3, 5, 1, 4]
    x = RNG.standard_normal((4, 5, 2) if bf else (5, 4, 2))
    xt, xo = torch.tensor(x, requires_grad=True), T.asarray(x).requires_grad_()
    pt = tr.pack_padded_sequence(xt, torch.tensor(lengths), batch_first=bf, enforce_sorted=False)
    po = R.pack_padded_sequence(xo, lengths, batch_first=bf, enforce_sorted=False)
    for a, b in zip(po, pt):
        np.testing.assert_array_equal(_np(a), b.detach().numpy())
    ot, st = theirs(pt)
    oo, so = ours(po)
    pdt, lt = tr.pad_packed_sequence(ot, batch_first=bf, padding_value=-1.0, total_length=6)
    pdo, lo = R.pad_packed_sequence(oo, batch_first=bf, padding_value=-1.0, total_length=6)
    np.testing.assert_allclose(_np(pdo), pdt.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert lo.tolist() == lt.tolist()
    st, so = _state_list(st, mode), _state_list(so, mode)
    for a, b in zip(so, st):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=1e-12, atol=1e-14)
    w = RNG.standard_normal(tuple(pdt.shape))
    ((pdt * torch.tensor(w)).sum() + sum((s * s).sum() for s in st)).backward()
    ((pdo * T.asarray(w)).sum() + sum((s * s).sum() for s in so)).backward()
    np.testing.assert_allclose(_np(xo.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (k, p), (k2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert k == k2
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-10, atol=1e-12)
