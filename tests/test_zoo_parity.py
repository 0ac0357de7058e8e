"""Small whole models trained for a few steps against PyTorch (skipped where it is not
installed), in float64 so that any difference is a real one: the same initial parameters
(copied through state_dict), the same data, then the loss at every step, the learning rates,
and every parameter, gradient and optimizer state entry afterwards. Also the Module API
pieces those models lean on (extra state in state_dict, get_buffer, set_submodule,
ParameterDict's order) and Embedding(scale_grad_by_freq=True), checked against NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest

import nn
import tensor as T

pytestmark = pytest.mark.usefixtures("device")

TOL = dict(rtol=1e-10, atol=1e-12)


def _np(t):
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t.cpu().numpy())


def _copy_from_torch(tm, om):
    om.load_state_dict({k: T.asarray(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def _backward_both(tl, ol) -> None:
    """The two losses (PyTorch's, ours) equal, and backward run on each."""
    np.testing.assert_allclose(float(ol.item()), tl.item(), **TOL)
    tl.backward()
    ol.backward()


def _assert_models_match(tm, om, topt, oopt):
    tsd, osd = tm.state_dict(), om.state_dict()
    assert list(tsd) == list(osd)
    for k in tsd:
        np.testing.assert_allclose(_np(osd[k]), tsd[k].numpy(), **TOL, err_msg=k)
    for (k, tp), (_, op) in zip(tm.named_parameters(), om.named_parameters()):
        assert (tp.grad is None) == (op.grad is None), k
        if tp.grad is not None:
            np.testing.assert_allclose(_np(op.grad), tp.grad.numpy(), **TOL, err_msg=k)
    ts, os_ = topt.state_dict()["state"], oopt.state_dict()["state"]
    assert sorted(ts) == sorted(os_)
    for i in ts:
        for k, v in ts[i].items():
            np.testing.assert_allclose(np.asarray(_np(os_[i][k]) if hasattr(os_[i][k], "cpu")
                                                  else os_[i][k], dtype=np.float64),
                                       v.numpy(), **TOL, err_msg=f"{i}.{k}")


# ---- fixes --------------------------------------------------------------------------------

class _WithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1, 1)
        self.v = 3

    def get_extra_state(self):
        return {"v": self.v}

    def set_extra_state(self, state):
        self.v = state["v"]


def test_extra_state_saved_and_restored():
    # caught: get_extra_state/set_extra_state were ignored (state silently lost on save/load)
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = _WithExtra()
            self.seq = nn.Sequential(_WithExtra())

    src = Outer()
    src.a.v, src.seq[0].v = 5, 6
    sd = src.state_dict()
    assert list(sd) == ["a._extra_state", "a.lin.weight", "a.lin.bias",
                        "seq.0._extra_state", "seq.0.lin.weight", "seq.0.lin.bias"]
    dst = Outer()
    assert dst.load_state_dict(sd) == ([], [])
    assert (dst.a.v, dst.seq[0].v) == (5, 6)
    del sd["seq.0._extra_state"]
    assert dst.load_state_dict(sd, strict=False).missing_keys == ["seq.0._extra_state"]
    with pytest.raises(ValueError, match="Missing key.*seq.0._extra_state"):
        dst.load_state_dict(sd)
    with pytest.raises(RuntimeError, match="get_extra_state"):
        nn.Linear(1, 1).get_extra_state()
    # a module without the override keeps no such key, and refuses one
    assert nn.Linear(1, 1).load_state_dict(
        {"weight": T.ones((1, 1)), "bias": T.ones(1), "_extra_state": 1},
        strict=False).unexpected_keys == ["_extra_state"]


def test_extra_state_through_save_load(tmp_path):
    from nn.serialization import load, save
    m = _WithExtra()
    m.v = 9
    save(m.state_dict(), tmp_path / "m.npz")
    back = _WithExtra()
    back.load_state_dict(load(tmp_path / "m.npz"))
    assert back.v == 9


def test_get_buffer_and_set_submodule():
    # caught: both were missing (AttributeError)
    m = nn.Sequential(nn.BatchNorm1d(2), nn.Sequential(nn.ReLU()))
    assert m.get_buffer("0.running_mean") is m[0].running_mean
    with pytest.raises(AttributeError, match="no buffer 'weight'"):
        m.get_buffer("0.weight")
    m.set_submodule("1.0", nn.Tanh())
    assert isinstance(m[1][0], nn.Tanh)
    m.set_submodule("1.extra", nn.ELU())
    assert isinstance(m[1].extra, nn.ELU)
    with pytest.raises(AttributeError, match="strict"):
        m.set_submodule("1.new", nn.ELU(), strict=True)
    with pytest.raises(TypeError, match="expected a Module"):
        m.set_submodule("1.0", 3)
    with pytest.raises(AttributeError, match="not a Module"):
        m.set_submodule("0.weight", nn.ELU())
    with pytest.raises(ValueError, match="target"):
        m.set_submodule("", nn.ELU())


def test_parameter_dict_sorts_a_plain_dict():
    # caught: a plain dict kept insertion order; PyTorch sorts it (OrderedDict keeps its order)
    from collections import OrderedDict
    pd = nn.ParameterDict({"b": T.zeros(1), "a": T.zeros(2)})
    assert list(pd) == ["a", "b"] and list(pd.state_dict()) == ["a", "b"]
    pd.update(OrderedDict([("z", T.zeros(1)), ("c", T.zeros(1))]))
    assert list(pd) == ["a", "b", "z", "c"]
    pd.update([("y", T.zeros(1)), ("d", T.zeros(1))])
    assert list(pd)[-2:] == ["y", "d"]
    with pytest.raises(TypeError, match="keys must be str"):
        nn.ParameterDict({1: T.zeros(1), "a": T.zeros(1)})


@pytest.mark.parametrize("sparse", [False, True])
def test_embedding_scale_grad_by_freq(sparse):
    # caught: scale_grad_by_freq=True raised NotImplementedError
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 3))
    ids = np.array([[1, 4, 1], [0, 1, 5]])
    gout = rng.standard_normal(ids.shape + (3,))
    emb = nn.Embedding(6, 3, padding_idx=0, scale_grad_by_freq=True, sparse=sparse,
                       _weight=T.asarray(w), dtype=T.float64)
    out = emb(T.asarray(ids))
    np.testing.assert_array_equal(_np(out), w[ids])
    (out * T.asarray(gout)).sum().backward()
    counts = np.bincount(ids.ravel(), minlength=6)
    want = np.zeros_like(w)
    for idx, g in zip(ids.ravel(), gout.reshape(-1, 3)):
        if idx != 0:
            want[idx] += g / counts[idx]
    g = emb.weight.grad
    np.testing.assert_allclose(_np(g.to_dense() if sparse else g), want, rtol=1e-12, atol=1e-14)


def test_embedding_scale_grad_by_freq_functional_no_grad():
    w = T.asarray(np.arange(6.0).reshape(3, 2))
    out = nn.functional.embedding(T.asarray([2, 2, 0]), w, scale_grad_by_freq=True)
    assert out.tolist() == [[4.0, 5.0], [4.0, 5.0], [0.0, 1.0]]


# ---- whole models against PyTorch -----------------------------------------------------------

def _cnn(lib):
    return lib.Sequential(lib.Conv2d(2, 4, 3, padding=1), lib.BatchNorm2d(4), lib.ReLU(),
                          lib.MaxPool2d(2), lib.Dropout(0.0), lib.Conv2d(4, 3, 3),
                          lib.BatchNorm2d(3), lib.Flatten(), lib.Linear(12, 5))


@pytest.mark.parametrize("sched", ["onecycle", "warmup_cosine", "plateau"])
def test_cnn_sgd_nesterov_with_schedulers(device, sched):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm, om = _cnn(torch.nn).double(), _cnn(nn).double()
    _copy_from_torch(tm, om)
    kw = dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    topt, oopt = torch.optim.SGD(tm.parameters(), **kw), nn.optim.SGD(om.parameters(), **kw)
    TS, OS = torch.optim.lr_scheduler, nn.optim
    if sched == "onecycle":
        ts, os_ = TS.OneCycleLR(topt, 0.5, total_steps=6), OS.OneCycleLR(oopt, 0.5, total_steps=6)
    elif sched == "warmup_cosine":
        ts = TS.SequentialLR(topt, [TS.LinearLR(topt, 0.1, 1.0, 2), TS.CosineAnnealingLR(topt, 4)], [2])
        os_ = OS.SequentialLR(oopt, [OS.LinearLR(oopt, 0.1, 1.0, 2), OS.CosineAnnealingLR(oopt, 4)], [2])
    else:
        ts, os_ = (TS.ReduceLROnPlateau(topt, patience=0, factor=0.5),
                   OS.ReduceLROnPlateau(oopt, patience=0, factor=0.5))
    rng = np.random.default_rng(1)
    steps = 2 if device == "cuda" else 4
    for s in range(steps):
        x, y = rng.standard_normal((3, 2, 8, 8)), rng.integers(0, 5, 3)
        tm.train(s != 1)
        om.train(s != 1)
        topt.zero_grad()
        oopt.zero_grad()
        tl = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
        ol = nn.functional.cross_entropy(om(T.asarray(x)), T.asarray(y))
        _backward_both(tl, ol)
        topt.step()
        oopt.step()
        if sched == "plateau":
            ts.step(tl.item())
            os_.step(ol.item())
        else:
            ts.step()
            os_.step()
        np.testing.assert_allclose(os_.get_last_lr(), ts.get_last_lr(), rtol=1e-13)
    _assert_models_match(tm, om, topt, oopt)


def _rnn_model(lib, cell):
    base = lib.Module

    class M(base):
        def __init__(self):
            super().__init__()
            self.emb = lib.Embedding(7, 4, padding_idx=0)
            self.rnn = getattr(lib, cell)(4, 5, num_layers=2, batch_first=True,
                                          bidirectional=True)
            self.fc = lib.Linear(10, 3)
    return M()


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_packed_rnn_classifier_adam_amsgrad(device, cell):
    torch = pytest.importorskip("torch")
    if device == "cuda" and cell == "GRU":
        pytest.skip("one cell is enough on the emulator")
    torch.manual_seed(0)
    tm, om = _rnn_model(torch.nn, cell).double(), _rnn_model(nn, cell).double()
    _copy_from_torch(tm, om)
    topt = torch.optim.AdamW(tm.parameters(), lr=0.01, amsgrad=True)
    oopt = nn.optim.AdamW(om.parameters(), lr=0.01, amsgrad=True)
    rng = np.random.default_rng(2)
    lens = np.array([5, 2, 4, 1])

    def run(lib, U, m, tok, lens, cat):
        out, h = m.rnn(U.pack_padded_sequence(m.emb(tok), lens, batch_first=True,
                                              enforce_sorted=False))
        out, _ = U.pad_packed_sequence(out, batch_first=True)
        h = h[0] if cell == "LSTM" else h
        return m.fc(cat([h[-2], h[-1]])) + 0.1 * out.sum()

    for _ in range(2):
        tok = rng.integers(1, 7, (4, 5))
        for i, n in enumerate(lens):
            tok[i, n:] = 0
        y = rng.integers(0, 3, 4)
        topt.zero_grad()
        oopt.zero_grad()
        tl = torch.nn.functional.cross_entropy(
            run(torch, torch.nn.utils.rnn, tm, torch.tensor(tok), torch.tensor(lens),
                lambda xs: torch.cat(xs, -1)), torch.tensor(y))
        ol = nn.functional.cross_entropy(
            run(T, nn.utils.rnn, om, T.asarray(tok), T.asarray(lens),
                lambda xs: T.concatenate(xs, axis=-1)), T.asarray(y))
        _backward_both(tl, ol)
        topt.step()
        oopt.step()
    _assert_models_match(tm, om, topt, oopt)


def _lm(lib, norm_first):
    class LM(lib.Module):
        def __init__(self):
            super().__init__()
            self.tok = lib.Embedding(11, 8, padding_idx=0)
            self.pos = lib.Embedding(6, 8)
            layer = lib.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                norm_first=norm_first)
            kw = dict(enable_nested_tensor=False) if lib.__name__.startswith("torch") else {}
            self.enc = lib.TransformerEncoder(layer, 2, **kw)
            self.head = lib.Linear(8, 11, bias=False)
            self.head.weight = self.tok.weight          # tied
    return LM()


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_lm_tied_adamw_clipped(device, norm_first):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not norm_first:
        pytest.skip("one variant is enough on the emulator")
    torch.manual_seed(0)
    tm, om = _lm(torch.nn, norm_first).double(), _lm(nn, norm_first).double()
    _copy_from_torch(tm, om)
    assert len(list(om.parameters())) == len(list(tm.parameters()))
    # SGD: Adam would amplify the rounding noise of the key bias, whose true gradient is 0
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
    oopt = nn.optim.SGD(om.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
    rng = np.random.default_rng(3)
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(6)
    mask_o = nn.Transformer.generate_square_subsequent_mask(6, dtype=T.float64)
    for _ in range(2):
        tok = rng.integers(1, 11, (3, 6))
        tok[1, 4:] = 0
        pad = tok == 0
        tgt = np.roll(tok, -1, 1).reshape(-1)
        topt.zero_grad()
        oopt.zero_grad()
        th = tm.tok(torch.tensor(tok)) + tm.pos(torch.arange(6))
        oh = om.tok(T.asarray(tok)) + om.pos(T.arange(6))
        tlog = tm.head(tm.enc(th, mask=mask_t.bool(), src_key_padding_mask=torch.tensor(pad)))
        olog = om.head(om.enc(oh, mask=T.asarray(_np(mask_o) != 0),
                              src_key_padding_mask=T.asarray(pad)))
        tl = torch.nn.functional.cross_entropy(tlog.reshape(-1, 11), torch.tensor(tgt),
                                               ignore_index=0)
        ol = nn.functional.cross_entropy(olog.reshape((-1, 11)), T.asarray(tgt), ignore_index=0)
        _backward_both(tl, ol)
        tn = torch.nn.utils.clip_grad_norm_(tm.parameters(), 0.5)
        on = nn.utils.clip_grad_norm_(om.parameters(), 0.5)
        np.testing.assert_allclose(float(on.item()), tn.item(), **TOL)
        topt.step()
        oopt.step()
    _assert_models_match(tm, om, topt, oopt)


@pytest.mark.parametrize("name,kw", [("RMSprop", dict(lr=0.01, momentum=0.9, centered=True,
                                                       weight_decay=0.01)),
                                      ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1))])
def test_vae_rmsprop_adagrad(device, name, kw):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)

    def build(lib):
        return lib.ModuleDict({"enc": lib.Sequential(lib.Linear(6, 8), lib.Tanh()),
                               "mu": lib.Linear(8, 2), "lv": lib.Linear(8, 2),
                               "dec": lib.Sequential(lib.Linear(2, 8), lib.Softplus(),
                                                     lib.Linear(8, 6))})

    def loss(F, m, x, eps):
        h = m["enc"](x)
        mu, lv = m["mu"](h), m["lv"](h)
        z = mu + (0.5 * lv).exp() * eps         # reparameterisation, fixed noise
        rec = F.binary_cross_entropy_with_logits(m["dec"](z), x, reduction="sum")
        return (rec - 0.5 * (1 + lv - mu ** 2 - lv.exp()).sum()) / x.shape[0]

    tm, om = build(torch.nn).double(), build(nn).double()
    _copy_from_torch(tm, om)
    topt, oopt = getattr(torch.optim, name)(tm.parameters(), **kw), getattr(nn.optim, name)(
        om.parameters(), **kw)
    rng = np.random.default_rng(4)
    for s in range(3):
        x = (rng.random((5, 6)) > 0.5).astype(np.float64)
        eps = rng.standard_normal((5, 2))
        topt.zero_grad()
        oopt.zero_grad(set_to_none=s % 2 == 0)
        tl = loss(torch.nn.functional, tm, torch.tensor(x), torch.tensor(eps))
        ol = loss(nn.functional, om, T.asarray(x), T.asarray(eps))
        _backward_both(tl, ol)
        topt.step()
        oopt.step()
    _assert_models_match(tm, om, topt, oopt)


def test_optimizer_state_on_another_device_is_a_clear_error(device):
    # caught: after model.to(other device) following a step, the next step failed deep inside
    # an elementwise op ("subtract: tensors are on different devices") instead of naming the
    # optimizer state; now a clear error before anything changes, and the documented remedy works
    if device == "cpu":
        pytest.skip("needs a second device")
    m = nn.Linear(2, 2, device="cpu")
    opt = nn.optim.Adam(m.parameters(), lr=0.1)
    m(T.ones((1, 2), device="cpu")).sum().backward()
    opt.step()
    m.to(device)
    opt.zero_grad()
    m(T.ones((1, 2))).sum().backward()
    before = _np(m.weight).copy()
    with pytest.raises(ValueError, match="Adam.step: state 'exp_avg' is on cpu"):
        opt.step()
    np.testing.assert_array_equal(_np(m.weight), before)
    opt.load_state_dict(opt.state_dict())
    opt.step()
    assert opt.state[m.weight]["exp_avg"].device == m.weight.device


def test_optimizers_accept_pytorch_implementation_switches():
    # caught: Adam(params, fused=True) / SGD(..., foreach=False) (common in PyTorch scripts)
    # raised TypeError; each optimizer now takes the switches PyTorch's does
    takes = {"SGD": "foreach fused differentiable", "Adam": "foreach fused capturable differentiable",
             "AdamW": "foreach fused capturable differentiable",
             "RMSprop": "foreach capturable differentiable", "Adagrad": "foreach fused differentiable",
             "Adadelta": "foreach capturable differentiable",
             "Adamax": "foreach capturable differentiable", "NAdam": "foreach capturable differentiable",
             "RAdam": "foreach capturable differentiable", "Rprop": "foreach capturable differentiable",
             "ASGD": "foreach capturable differentiable", "Adafactor": "foreach"}
    for name, flags in takes.items():
        cls = getattr(nn.optim, name)
        kw = {k: k in ("foreach", "fused") for k in flags.split()}
        ref_p, p = T.asarray([1.0, -2.0]).requires_grad_(), T.asarray([1.0, -2.0]).requires_grad_()
        ref, opt = cls([ref_p], lr=0.1), cls([p], lr=0.1, **kw)
        for q, o in ((ref_p, ref), (p, opt)):
            (q * q * q).sum().backward()
            o.step()
        np.testing.assert_array_equal(_np(p), _np(ref_p), err_msg=name)   # they change nothing
        with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
            cls([p], lr=0.1, foo=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fused'"):
        nn.optim.RMSprop([p], fused=True)           # as PyTorch's: RMSprop has no fused
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        nn.optim.Adam([p], differentiable=True)
    with pytest.raises(TypeError, match="foreach must be a bool or None"):
        nn.optim.SGD([p], lr=0.1, foreach=1)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(mode):
    # caught: embedding_bag / EmbeddingBag(scale_grad_by_freq=True) raised NotImplementedError
    rng = np.random.default_rng(1)
    w = rng.standard_normal((6, 3))
    ids, offsets = np.array([1, 2, 1, 4, 1, 5, 2]), np.array([0, 3, 5])
    gout = rng.standard_normal((3, 3))
    wt = T.asarray(w).requires_grad_()
    out = nn.functional.embedding_bag(T.asarray(ids), wt, T.asarray(offsets), mode=mode,
                                      scale_grad_by_freq=True, padding_idx=2)
    (out * T.asarray(gout)).sum().backward()
    counts = np.bincount(ids, minlength=6)
    bag = np.searchsorted(offsets, np.arange(ids.size), side="right") - 1
    sizes = np.bincount(bag[ids != 2], minlength=3)
    want = np.zeros_like(w)
    for i, b in zip(ids, bag):
        if i != 2:
            want[i] += gout[b] / counts[i] / (sizes[b] if mode == "mean" else 1)
    np.testing.assert_allclose(_np(wt.grad), want, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="mode='max' does not support scale_grad_by_freq"):
        nn.functional.embedding_bag(T.asarray(ids), wt, T.asarray(offsets), mode="max",
                                    scale_grad_by_freq=True)
