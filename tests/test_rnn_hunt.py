"""The recurrent layers and nn.utils.rnn against torch.nn, differentially (a hunt for silent
wrong results).

- a sweep of RNN (tanh, relu) / LSTM (with and without proj_size) / GRU configurations against
  torch in float32 and float64: outputs, final states and the gradients of the input, h0 / c0
  and every parameter (weights copied by name), over 1-3 layers, bidirectional, bias=False,
  batch_first, unbatched input, h0 omitted, sequence length 1, a 0-size batch, a transposed
  (non-contiguous) input and an input that needs no gradient;
- packed sequences against torch (sorted and unsorted, h0 given or not, pad_packed_sequence's
  padding_value / total_length, float32); a PackedSequence built by hand from sorted_indices
  alone gets its unsorted_indices as torch's does (it was left None: the batch came back in
  sorted order); batch sizes that do not fit the data are refused;
- dropout between layers is exactly the composition of one-layer modules with F.dropout on the
  same seed (values and gradients); eval mode equals dropout=0; the mask keeps 1 - p, scaled;
- second derivatives (create_graph) of a packed bidirectional stack and forward-mode tangents
  of a packed stack against torch / central differences;
- the hidden state's dtype and device are checked (an integer h0 promoted silently);
  reprs equal torch's; the CUDA device equals the CPU for a few configurations.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn import _functional as F
from nn.utils import rnn as R

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")
TR = torch.nn.utils.rnn

MODES = [("LSTM", {}), ("LSTM", {"proj_size": 2}), ("GRU", {}), ("RNN", {}),
         ("RNN", {"nonlinearity": "relu"})]


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().to("cpu"))


def _pair(mode, kw, dtype="float64", device="cpu"):
    """(ours, torch's) with torch's initial weights copied into ours by name."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(3, 4, **kw).to(getattr(torch, dtype))
    ours = getattr(nn, mode)(3, 4, dtype=getattr(T, dtype), device=device, **kw)
    ours.load_state_dict({k: T.asarray(v.detach().numpy(), device=device)
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _states(ours, n, unbatched, rng, npd):
    dirs = 2 if ours.bidirectional else 1
    out = ours.proj_size or ours.hidden_size
    lead = (dirs * ours.num_layers,) if unbatched else (dirs * ours.num_layers, n)
    got = [rng.standard_normal(lead + (out,)).astype(npd)]
    if ours.mode == "LSTM":
        got.append(rng.standard_normal(lead + (ours.hidden_size,)).astype(npd))
    return got


def _flat(r):
    out, s = r
    return [out] + (list(s) if isinstance(s, tuple) else [s])


def _close(a, b, tol, what):
    b = b.detach().numpy()
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(_np(a) if not isinstance(a, np.ndarray) else a, b, rtol=tol,
                               atol=tol, err_msg=what)


def _compare(ours, theirs, x, states, tol, xgrad=True, view=None):
    """Values and every gradient of ours(x, states) against theirs; view(x) makes our input a
    non-contiguous view of equal values."""
    lstm = ours.mode == "LSTM"
    xo = T.asarray(x) if view is None else view(x)
    if xgrad:
        xo.requires_grad_()
    xt = torch.tensor(x, requires_grad=xgrad)
    so = [T.asarray(s).requires_grad_() for s in states or ()]
    st = [torch.tensor(s, requires_grad=True) for s in states or ()]
    args_o = () if states is None else ((tuple(so) if lstm else so[0]),)
    args_t = () if states is None else ((tuple(st) if lstm else st[0]),)
    ro, rt = _flat(ours(xo, *args_o)), _flat(theirs(xt, *args_t))
    for i, (a, b) in enumerate(zip(ro, rt)):
        _close(a, b, tol, f"output {i}")
    rng = np.random.default_rng(7)
    ws = [rng.standard_normal(tuple(b.shape)).astype(x.dtype) for b in rt]
    sum((a * T.asarray(w)).sum() for a, w in zip(ro, ws)).backward()
    sum((b * torch.tensor(w)).sum() for b, w in zip(rt, ws)).backward()
    if xgrad:
        _close(xo.grad, xt.grad, tol, "d input")
    for i, (a, b) in enumerate(zip(so, st)):
        _close(a.grad, b.grad, tol, f"d state {i}")
    tp = dict(theirs.named_parameters())
    for k, p in ours.named_parameters():
        _close(p.grad, tp[k].grad, 10 * tol, "d " + k)


CONFIGS = [  # (module kwargs, L, N, unbatched, h0 given, non-contiguous x, x needs grad)
    ({"num_layers": 3}, 4, 2, False, True, True, True),
    ({"num_layers": 2, "bidirectional": True, "batch_first": True}, 3, 2, False, True, True,
     True),
    ({"bidirectional": True, "bias": False}, 1, 3, False, False, False, True),
    ({"num_layers": 2, "bidirectional": True}, 3, 0, False, True, False, True),
    ({"num_layers": 2, "batch_first": True}, 4, 1, True, True, False, True),
    ({"bidirectional": True}, 3, 2, True, False, True, False),
    ({"num_layers": 2, "bias": False}, 2, 2, False, True, False, False),
]


@pytest.mark.parametrize("mode,extra", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("conf", range(len(CONFIGS)))
def test_layers_match_torch_sweep(mode, extra, dtype, conf):
    kw, L, n, unbatched, with_h, strided, xgrad = CONFIGS[conf]
    ours, theirs = _pair(mode, dict(extra, **kw), dtype)
    npd = np.dtype(dtype)
    rng = np.random.default_rng(conf)
    bf = kw.get("batch_first", False)
    shape = (L, 3) if unbatched else ((n, L, 3) if bf else (L, n, 3))
    x = rng.standard_normal(shape).astype(npd)
    view = None
    if strided:   # the values of x, as a transposed view of a buffer laid out the other way
        def view(a):
            return T.swapaxes(T.asarray(np.ascontiguousarray(np.swapaxes(a, 0, -1))), 0, -1)
    states = _states(ours, n, unbatched, rng, npd) if with_h else None
    _compare(ours, theirs, x, states, 1e-10 if dtype == "float64" else 3e-5, xgrad, view)


# ---------------------------------------------------------------- packed sequences

@pytest.mark.parametrize("mode,extra", MODES)
@pytest.mark.parametrize("lengths,sort,bf,with_h,dtype", [
    ([1, 3, 4, 3], False, False, True, "float64"),
    ([4, 2, 2, 1], True, True, False, "float64"),
    ([2, 4, 1], False, True, True, "float32"),
    ([3], False, False, True, "float64"),
])
def test_packed_layers_match_torch_sweep(mode, extra, lengths, sort, bf, with_h, dtype):
    ours, theirs = _pair(mode, dict(extra, num_layers=2, bidirectional=True, batch_first=bf),
                         dtype)
    tol = 1e-10 if dtype == "float64" else 3e-5
    npd = np.dtype(dtype)
    rng = np.random.default_rng(3)
    n, L = len(lengths), max(lengths)
    x = rng.standard_normal((n, L, 3) if bf else (L, n, 3)).astype(npd)
    states = _states(ours, n, False, rng, npd) if with_h else []
    xo, xt = T.asarray(x).requires_grad_(), torch.tensor(x, requires_grad=True)
    so = [T.asarray(s).requires_grad_() for s in states]
    st = [torch.tensor(s, requires_grad=True) for s in states]
    po = R.pack_padded_sequence(xo, lengths, batch_first=bf, enforce_sorted=sort)
    pt = TR.pack_padded_sequence(xt, torch.tensor(lengths), batch_first=bf, enforce_sorted=sort)
    lstm = mode == "LSTM"
    ro = ours(po, *([tuple(so) if lstm else so[0]] if so else []))
    rt = theirs(pt, *([tuple(st) if lstm else st[0]] if st else []))
    pado, lo = R.pad_packed_sequence(ro[0], batch_first=bf, padding_value=-2.5,
                                     total_length=L + 1)
    padt, lt = TR.pad_packed_sequence(rt[0], batch_first=bf, padding_value=-2.5,
                                      total_length=L + 1)
    assert lo.tolist() == lt.tolist() == lengths
    outs_o, outs_t = [pado] + _flat(ro)[1:], [padt] + _flat(rt)[1:]
    for i, (a, b) in enumerate(zip(outs_o, outs_t)):
        _close(a, b, tol, f"output {i}")
    ws = [rng.standard_normal(tuple(b.shape)).astype(npd) for b in outs_t]
    sum((a * T.asarray(w)).sum() for a, w in zip(outs_o, ws)).backward()
    sum((b * torch.tensor(w)).sum() for b, w in zip(outs_t, ws)).backward()
    _close(xo.grad, xt.grad, tol, "d input")
    for i, (a, b) in enumerate(zip(so, st)):
        _close(a.grad, b.grad, tol, f"d state {i}")
    tp = dict(theirs.named_parameters())
    for k, p in ours.named_parameters():
        _close(p.grad, tp[k].grad, 10 * tol, "d " + k)


def test_packed_sequence_from_sorted_indices_alone():
    """PackedSequence(data, batch_sizes, sorted_indices) fills unsorted_indices in (torch's
    constructor does); it stayed None, so pad_packed_sequence and a layer's h_n came back in
    the sorted order."""
    x = np.random.default_rng(0).standard_normal((3, 3, 2))
    lengths = [1, 3, 2]
    p = R.pack_padded_sequence(T.asarray(x), lengths, enforce_sorted=False)
    q = R.PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
    pt = TR.pack_padded_sequence(torch.tensor(x), torch.tensor(lengths), enforce_sorted=False)
    qt = TR.PackedSequence(pt.data, pt.batch_sizes, pt.sorted_indices)
    assert q.unsorted_indices.tolist() == qt.unsorted_indices.tolist() == [2, 0, 1]
    padded, lens = R.pad_packed_sequence(q, batch_first=True)
    assert lens.tolist() == lengths
    _close(padded, TR.pad_packed_sequence(qt, batch_first=True)[0], 0, "padded")
    g = nn.GRU(2, 4, dtype=T.float64)
    gt = torch.nn.GRU(2, 4, dtype=torch.float64)
    g.load_state_dict({k: T.asarray(v.detach().numpy()) for k, v in gt.state_dict().items()})
    h0 = np.random.default_rng(1).standard_normal((1, 3, 4))
    _, h = g(q, T.asarray(h0))
    _, ht = gt(qt, torch.tensor(h0))
    _close(h, ht, 1e-12, "h_n")


def test_packed_sequence_constructor_forms_and_casts(device):
    data = T.asarray(np.arange(12.0).reshape(6, 2), device=device)
    legacy = R.PackedSequence((data, T.asarray([3, 2, 1], device="cpu")))
    assert legacy.batch_sizes.tolist() == [3, 2, 1] and legacy.sorted_indices is None
    from_list = R.PackedSequence(data, [3, 2, 1])
    assert from_list.batch_sizes.device.type == "cpu" and from_list.batch_sizes.dtype == T.int64
    with pytest.raises(TypeError, match=r"PackedSequence: expected \(data, batch_sizes\)"):
        R.PackedSequence(data)
    moved = R.PackedSequence(data, T.asarray([3, 2, 1], device=device))
    assert moved.batch_sizes.device.type == "cpu" and moved.batch_sizes.tolist() == [3, 2, 1]
    p = R.PackedSequence(data, T.asarray([3, 2, 1], device="cpu"), T.asarray([2, 0, 1], device=device))
    assert p.unsorted_indices.device == data.device and p.unsorted_indices.tolist() == [1, 2, 0]
    for meth, dt in [("half", T.float16), ("long", T.int64), ("int", T.int32),
                     ("short", T.int16), ("char", T.int8), ("byte", T.uint8),
                     ("double", T.float64), ("float", T.float32)]:
        q = getattr(p, meth)()
        assert isinstance(q, R.PackedSequence) and q.data.dtype == dt, meth
        assert q.unsorted_indices.tolist() == [1, 2, 0]
    assert p.is_pinned() is False and p._replace(data=data).unsorted_indices is p.unsorted_indices


def test_packed_batch_sizes_must_fit_the_data():
    """A hand-made PackedSequence whose batch sizes do not describe its rows was run (the last
    step read whatever rows were left) or padded silently."""
    bad = R.PackedSequence(T.ones((5, 2)), T.asarray([3, 3]))
    with pytest.raises(ValueError, match=r"GRU: batch_sizes must be .* data's 5 rows, got \[3, 3\]"):
        nn.GRU(2, 3)(bad)
    with pytest.raises(ValueError, match="pad_packed_sequence: batch_sizes must be"):
        R.pad_packed_sequence(bad)
    with pytest.raises(ValueError, match="LSTM: batch_sizes must be positive and non-increasing"):
        nn.LSTM(2, 3)(R.PackedSequence(T.ones((5, 2)), T.asarray([2, 3])))
    with pytest.raises(ValueError, match=r"RNN: sorted_indices must have one entry per sequence"):
        nn.RNN(2, 3)(R.PackedSequence(T.ones((3, 2)), T.asarray([2, 1]), T.asarray([0, 1, 2])))


def test_pad_pack_utilities_match_torch():
    rng = np.random.default_rng(4)
    for shapes in ([(3, 2), (1, 2), (4, 2)], [(2,), (0,), (3,)]):
        arrs = [rng.standard_normal(s) for s in shapes]
        for bf in (False, True):
            for side in ("right", "left"):
                xo = [T.asarray(a).requires_grad_() for a in arrs]
                xt = [torch.tensor(a, requires_grad=True) for a in arrs]
                po = R.pad_sequence(xo, batch_first=bf, padding_value=3.0, padding_side=side)
                pt = TR.pad_sequence(xt, batch_first=bf, padding_value=3.0, padding_side=side)
                _close(po, pt, 0, "pad_sequence")
                w = rng.standard_normal(tuple(pt.shape))
                (po * T.asarray(w)).sum().backward()
                (pt * torch.tensor(w)).sum().backward()
                for a, b in zip(xo, xt):
                    _close(a.grad, b.grad, 0, "pad_sequence grad")
            lens = [s[0] for s in shapes]
            pad_o, pad_t = R.pad_sequence([T.asarray(a) for a in arrs], batch_first=bf), \
                TR.pad_sequence([torch.tensor(a) for a in arrs], batch_first=bf)
            for a, b in zip(R.unpad_sequence(pad_o, T.asarray(lens), batch_first=bf),
                            TR.unpad_sequence(pad_t, torch.tensor(lens), batch_first=bf)):
                _close(a, b, 0, "unpad_sequence")
    arrs = [rng.standard_normal((k, 2)) for k in (2, 4, 1)]
    po = R.pack_sequence([T.asarray(a) for a in arrs], enforce_sorted=False)
    pt = TR.pack_sequence([torch.tensor(a) for a in arrs], enforce_sorted=False)
    _close(po.data, pt.data, 0, "pack_sequence")
    assert po.sorted_indices.tolist() == pt.sorted_indices.tolist()
    for a, b in zip(R.unpack_sequence(po), TR.unpack_sequence(pt)):
        _close(a, b, 0, "unpack_sequence")


# ---------------------------------------------------------------- dropout

@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_dropout_is_the_composition_of_layers(mode):
    """Training-mode dropout acts on each layer's input from the second layer on (the
    concatenated directions), and nowhere else: the stack equals one-layer modules with
    F.dropout between them on the same seed, in values and gradients."""
    p = 0.4
    T.manual_seed(0)
    m = getattr(nn, mode)(3, 4, num_layers=3, dropout=p, bidirectional=True, dtype=T.float64)
    layers = []
    for k in range(3):
        one = getattr(nn, mode)(3 if k == 0 else 8, 4, bidirectional=True, dtype=T.float64)
        one.load_state_dict({n.replace(f"_l{k}", "_l0"): v for n, v in m.state_dict().items()
                             if f"_l{k}" in n})
        layers.append(one)
    x = T.asarray(np.random.default_rng(0).standard_normal((5, 2, 3))).requires_grad_()
    T.manual_seed(11)
    out, _ = m(x)
    (out * out).sum().backward()
    gx = _np(x.grad)
    x.grad = None
    T.manual_seed(11)
    y = x
    for k, one in enumerate(layers):
        if k:
            y = F.dropout(y, p, True)
        y, _ = one(y)
    (y * y).sum().backward()
    np.testing.assert_array_equal(_np(out), _np(y))
    np.testing.assert_allclose(gx, _np(x.grad), rtol=1e-13, atol=1e-14)
    grads = dict(m.named_parameters())
    for k, one in enumerate(layers):
        for n, q in one.named_parameters():
            np.testing.assert_allclose(_np(grads[n.replace("_l0", f"_l{k}")].grad), _np(q.grad),
                                       rtol=1e-12, atol=1e-14)
    m.eval()
    plain = getattr(nn, mode)(3, 4, num_layers=3, bidirectional=True, dtype=T.float64)
    plain.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(_np(m(x)[0]), _np(plain(x)[0]))


def test_dropout_mask_statistics_and_seed():
    p = 0.3
    m = nn.GRU(64, 64, num_layers=2, dropout=p, dtype=T.float64)
    x = T.asarray(np.random.default_rng(0).standard_normal((4, 64, 64)))
    first = m.weight_ih_l1
    seen = []
    m.weight_ih_l1 = nn.Parameter(T.eye(192, 64, dtype=T.float64))  # layer 2's gx = its input
    orig = F.linear

    def spy(a, w, b=None):
        if w is m.weight_ih_l1:
            seen.append(_np(a))
        return orig(a, w, b)
    nn.recurrent.F.linear = spy
    try:
        T.manual_seed(5)
        a = m(x)[0]
        T.manual_seed(5)
        b = m(x)[0]
        m.eval()
        m(x)
    finally:
        nn.recurrent.F.linear = orig
        m.weight_ih_l1 = first
    np.testing.assert_array_equal(_np(a), _np(b))
    dropped, _, clean = seen
    kept = dropped != 0
    assert abs(kept.mean() - (1 - p)) < 0.02
    np.testing.assert_allclose(dropped[kept], clean[kept] / (1 - p), rtol=1e-14)


# ---------------------------------------------------------------- higher order, forward mode

@pytest.mark.parametrize("mode,extra", MODES[:4])
def test_double_backward_packed_bidirectional_matches_torch(mode, extra):
    ours, theirs = _pair(mode, dict(extra, num_layers=2, bidirectional=True))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 3))
    h = _states(ours, 3, False, rng, np.float64)[0]
    lengths = [2, 4, 1]
    xo, xt = T.asarray(x).requires_grad_(), torch.tensor(x, requires_grad=True)
    ho, ht = T.asarray(h).requires_grad_(), torch.tensor(h, requires_grad=True)
    lstm = mode == "LSTM"
    c = np.zeros((4, 3, 4))
    oo, so = ours(R.pack_padded_sequence(xo, lengths, enforce_sorted=False),
                  (ho, T.asarray(c)) if lstm else ho)
    ot, st = theirs(TR.pack_padded_sequence(xt, torch.tensor(lengths), enforce_sorted=False),
                    (ht, torch.tensor(c)) if lstm else ht)
    so, st = (so[0], st[0]) if lstm else (so, st)
    go = ag.grad([(oo.data ** 2).sum() + (so ** 3).sum()], [xo, ho], create_graph=True)
    gt = torch.autograd.grad((ot.data ** 2).sum() + (st ** 3).sum(), [xt, ht], create_graph=True)
    for a, b in zip(go, gt):
        _close(a, b, 1e-10, "first derivative")
    ((go[0] ** 2).sum() + (go[1] * go[1] * 0.5).sum()).backward()
    ((gt[0] ** 2).sum() + (gt[1] * gt[1] * 0.5).sum()).backward()
    _close(xo.grad, xt.grad, 1e-9, "d2 input")
    _close(ho.grad, ht.grad, 1e-9, "d2 h0")
    tp = dict(theirs.named_parameters())
    for k, p in ours.named_parameters():
        _close(p.grad, tp[k].grad, 1e-9, "d2 " + k)


@pytest.mark.parametrize("mode,extra", MODES[:4])
def test_forward_mode_packed_matches_central_differences(mode, extra):
    import autograd.forward_ad as fwd
    ours, theirs = _pair(mode, dict(extra, num_layers=2, bidirectional=True))
    rng = np.random.default_rng(6)
    x, v = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 3, 3))
    lengths = [2, 4, 3]
    with fwd.dual_level():
        p = R.pack_padded_sequence(fwd.make_dual(T.asarray(x), T.asarray(v)), lengths,
                                   enforce_sorted=False)
        out, s = ours(p)
        tan = [fwd.unpack_dual(t).tangent for t in _flat((out.data, s))]

    def f(a):
        o, s = theirs(TR.pack_padded_sequence(torch.tensor(a), torch.tensor(lengths),
                                              enforce_sorted=False))
        return _flat((o.data, s))
    eps = 1e-6
    for a, hi, lo in zip(tan, f(x + eps * v), f(x - eps * v)):
        _close(a, (hi - lo) / (2 * eps), 1e-7, "tangent")


# ---------------------------------------------------------------- errors, repr, devices

def test_hidden_state_dtype_and_device_checked(device):
    """An integer h0 promoted into the float products silently (PyTorch refuses it)."""
    with pytest.raises(TypeError, match="GRU: expected a floating-point hidden state, got int64"):
        nn.GRU(3, 4)(T.ones((2, 1, 3)), T.zeros((1, 1, 4), dtype=T.int64))
    with pytest.raises(TypeError, match="LSTM: expected a floating-point hidden state, got bool"):
        nn.LSTM(3, 4)(T.ones((2, 1, 3)), (T.zeros((1, 1, 4)), T.zeros((1, 1, 4), dtype=T.bool)))
    with pytest.raises(TypeError, match="GRUCell: expected a floating-point hidden state"):
        nn.GRUCell(3, 4)(T.ones((1, 3)), T.zeros((1, 4), dtype=T.int32))
    with pytest.raises(TypeError, match="LSTMCell: expected the hidden state as a Tensor"):
        nn.LSTMCell(3, 4)(T.ones((1, 3)), ([0.0] * 4, T.zeros((1, 4))))
    if device == "cuda":
        m = nn.LSTM(3, 4)
        with pytest.raises(ValueError, match="LSTM: the hidden state is on cpu, the parameters "
                                             "on cuda"):
            m(T.ones((2, 1, 3)), (T.zeros((1, 1, 4), device="cpu"), T.zeros((1, 1, 4))))
        with pytest.raises(ValueError, match="LSTM: the input is on cpu, the parameters on cuda"):
            m(T.ones((2, 1, 3), device="cpu"))
        with pytest.raises(ValueError, match="GRUCell: the hidden state is on cpu"):
            nn.GRUCell(3, 4)(T.ones((1, 3)), T.zeros((1, 4), device="cpu"))


def test_reprs_and_state_dict_keys_match_torch():
    cases = [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2, batch_first=True,
                           dropout=0.25)),
             ("GRU", dict(bias=False)), ("RNN", dict(nonlinearity="relu", num_layers=2)),
             ("RNNCell", dict(nonlinearity="relu", bias=False)), ("LSTMCell", {}),
             ("GRUCell", dict(bias=False))]
    for name, kw in cases:
        ours, theirs = getattr(nn, name)(3, 4, **kw), getattr(torch.nn, name)(3, 4, **kw)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        if hasattr(theirs, "flatten_parameters"):
            ours.flatten_parameters()


@pytest.mark.parametrize("mode,extra,packed", [("LSTM", {"proj_size": 2}, True),
                                               ("GRU", {}, False), ("LSTM", {}, False),
                                               ("RNN", {"nonlinearity": "relu"}, True)])
def test_cuda_equals_cpu(device, mode, extra, packed):
    if device == "cpu":
        pytest.skip("compares the cuda device with the cpu")
    res = []
    for dev in ("cpu", "cuda"):
        T.manual_seed(0)
        m = getattr(nn, mode)(3, 4, num_layers=2, bidirectional=True, dropout=0.3,
                              dtype=T.float64, **extra).to(dev)
        x = T.asarray(np.random.default_rng(0).standard_normal((4, 3, 3)), device=dev)
        x.requires_grad_()
        inp = R.pack_padded_sequence(x, [4, 1, 3], enforce_sorted=False) if packed else x
        T.manual_seed(9)
        out, s = m(inp)
        outs = _flat((out.data if packed else out, s))
        sum((o * o).sum() for o in outs).backward()
        res.append([_np(o) for o in outs] + [_np(x.grad)] + [_np(p.grad) for p in m.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13)


def test_one_layer_dropout_warns_and_torch_attributes():
    with pytest.warns(UserWarning, match=r"LSTM: dropout acts between recurrent layers, .* "
                                         r"dropout=0.5 and num_layers=1"):
        nn.LSTM(3, 4, dropout=0.5)
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    assert ours._all_weights == theirs._all_weights
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(p.shape) for p in ps] for ps in ours.all_weights] == \
        [[tuple(p.shape) for p in ps] for ps in theirs.all_weights]


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "LSTMCell", "GRUCell"])
def test_float32_input_into_float64_weights_takes_the_fused_loop(mode, monkeypatch):
    """The omitted states are zeros of the promoted dtype (they were the input's), so the
    float64 products run as one fused node, equal to a float64 input's results."""
    from nn import _rnn_fused
    calls = []
    real = _rnn_fused.run
    monkeypatch.setattr(_rnn_fused, "run", lambda *a: calls.append(1) or real(*a))
    T.manual_seed(0)
    m = getattr(nn, mode)(3, 4, dtype=T.float64)
    x = np.random.default_rng(0).standard_normal((2, 3) if "Cell" in mode else (5, 2, 3))
    x = x.astype(np.float32)
    outs = []
    for xin in (T.asarray(x), T.asarray(x.astype(np.float64))):
        r = m(xin)
        outs.append(_np(r[0] if isinstance(r, tuple) else r))
    assert len(calls) == 2 and outs[0].dtype == np.float64
    np.testing.assert_array_equal(outs[0], outs[1])
