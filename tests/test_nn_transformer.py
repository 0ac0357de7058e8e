"""Transformer modules (nn/transformer.py).

- torch-free: shapes in both layouts and unbatched; the stacks' layers are independent deep
  copies; generate_square_subsequent_mask's values; a causal mask hides later positions and a
  padding mask hides padded ones (the outputs they may not see do not change when those
  inputs do); causal-mask detection; the user errors; float64 gradcheck of both layers in eval
  mode; dropout only in train mode, each Dropout once per forward; the same model on cpu and
  cuda; the docstring examples.
- with torch: each layer, the stacks and the full Transformer against torch.nn's (every
  parameter set to random values, copied by state_dict name; eval mode, float64): outputs,
  input gradients and every parameter gradient, in both layouts, pre- and post-norm, relu and
  gelu, with a causal float mask and boolean key padding masks.
"""
from __future__ import annotations

import copy
import doctest
import warnings

import numpy as np
import pytest

import autograd as ag
import tensor as T
from nn.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

# torch deprecates a bool padding mask beside a float attention mask (it converts both, as we
# do): the tests below pass that pair on purpose
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning")

F64 = T.float64
causal_mask = Transformer.generate_square_subsequent_mask


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def ten(a, dtype=F64, grad=False, device=None):
    t = T.asarray(np.asarray(a), device=device).astype(dtype)
    return t.requires_grad_() if grad else t


def randomize(m, seed=1, scale=0.5):
    """Every parameter to random values: weights, biases and LayerNorm's affine ones (which
    start as ones and zeros, so a swap of two norms' or biases' roles would not show)."""
    rng = np.random.default_rng(seed)
    m.load_state_dict({k: ten(rng.standard_normal(v.shape) * scale, v.dtype, device=v.device)
                       for k, v in m.state_dict().items()})
    return m


def small(cls, **kw):
    """A tiny float64 layer in eval mode with random parameters."""
    kw = {"d_model": 8, "nhead": 2, "dim_feedforward": 12, "dtype": F64, **kw}
    return randomize(cls(**kw)).eval()


def padding(n, s, pads):
    """(n, s) bool key padding mask: True on the last pads[i] positions of batch element i."""
    m = np.zeros((n, s), dtype=bool)
    for i, p in enumerate(pads):
        if p:
            m[i, s - p:] = True
    return m


def batch(a, batch_first):
    """An (N, L, E) array in the module's layout: (N, L, E) or (L, N, E)."""
    return a if batch_first else np.ascontiguousarray(a.transpose(1, 0, 2))


def assert_same(a, b, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- shapes and structure

@pytest.mark.parametrize("batch_first", [False, True])
def test_output_shapes(batch_first):
    n, s, t, e = 2, 5, 3, 8
    src = ten(batch(arr(n, s, e), batch_first), T.float32)
    tgt = ten(batch(arr(n, t, e, seed=1), batch_first), T.float32)
    kw = dict(d_model=e, nhead=2, dim_feedforward=16, batch_first=batch_first)
    out_s = (n, s, e) if batch_first else (s, n, e)
    out_t = (n, t, e) if batch_first else (t, n, e)
    enc_layer, dec_layer = TransformerEncoderLayer(**kw), TransformerDecoderLayer(**kw)
    assert enc_layer(src).shape == out_s
    assert dec_layer(tgt, src).shape == out_t
    assert TransformerEncoder(enc_layer, 2)(src).shape == out_s
    assert TransformerDecoder(dec_layer, 2)(tgt, src).shape == out_t
    model = Transformer(num_encoder_layers=1, num_decoder_layers=2, **kw)
    y = model(src, tgt, tgt_mask=causal_mask(t))
    assert y.shape == out_t and y.dtype == T.float32
    # unbatched (S, E) and (T, E)
    assert model(src[0] if batch_first else src[:, 0], tgt[0] if batch_first else tgt[:, 0]).shape \
        == (t, e)


def test_structure_and_parameter_names():
    enc = TransformerEncoderLayer(8, 2, 16)
    assert [k for k, _ in enc.named_children()] == [
        "self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2"]
    dec = TransformerDecoderLayer(8, 2, 16, bias=False)
    assert [k for k, _ in dec.named_children()] == [
        "self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
        "norm3", "dropout1", "dropout2", "dropout3"]
    assert not any(k.endswith("bias") for k in dec.state_dict())   # bias=False reaches all
    m = Transformer(8, 2, 2, 1, 16)
    keys = list(m.state_dict())
    assert "encoder.layers.1.self_attn.in_proj_weight" in keys and "encoder.norm.weight" in keys
    assert "decoder.layers.0.multihead_attn.out_proj.weight" in keys
    assert "decoder.norm.bias" in keys and not any(k.startswith("decoder.layers.1") for k in keys)
    assert len(keys) == 2 * 12 + 2 + 18 + 2     # (4 attention + 4 linear + 2 per norm)


def test_stack_layers_are_independent_deep_copies():
    layer = TransformerEncoderLayer(8, 2, 16)
    enc = TransformerEncoder(layer, num_layers=3)
    assert len(enc.layers) == 3 and enc.num_layers == 3
    w0 = layer.linear1.weight.numpy().copy()
    for sub in enc.layers:
        assert sub is not layer and sub.linear1.weight is not layer.linear1.weight
        np.testing.assert_array_equal(sub.linear1.weight.numpy(), w0)   # copies of its values
    with ag.no_grad():
        enc.layers[0].linear1.weight.fill_(7.0)
        enc.layers[1].self_attn.in_proj_weight.fill_(-3.0)
    np.testing.assert_array_equal(enc.layers[2].linear1.weight.numpy(), w0)
    np.testing.assert_array_equal(enc.layers[1].linear1.weight.numpy(), w0)
    np.testing.assert_array_equal(layer.linear1.weight.numpy(), w0)
    assert float(T.max(T.abs(enc.layers[2].self_attn.in_proj_weight + 3.0))) > 0.1
    assert len(list(enc.parameters())) == 3 * len(list(layer.parameters()))
    dec = TransformerDecoder(TransformerDecoderLayer(8, 2, 16), 2)
    a, b = (d.multihead_attn.out_proj.weight for d in dec.layers)
    assert a is not b and a.data_ptr() != b.data_ptr()


def test_transformer_xavier_init():
    T.manual_seed(0)
    m = Transformer(16, 4, 1, 1, 32)
    for name, p in m.named_parameters():
        if p.ndim > 1:   # xavier_uniform_: U(-b, b), b = sqrt(6 / (fan_in + fan_out))
            bound = (6.0 / (p.shape[0] + p.shape[1])) ** 0.5
            v = np.abs(p.numpy())
            assert v.max() <= bound and v.max() > 0.8 * bound, name
    assert m.encoder.layers[0].norm1.weight.tolist() == [1.0] * 16
    assert m.decoder.layers[0].self_attn.in_proj_bias.tolist() == [0.0] * 48


def test_generate_square_subsequent_mask():
    m = Transformer.generate_square_subsequent_mask(4)
    assert m.shape == (4, 4) and m.dtype == T.float32
    expect = np.triu(np.full((4, 4), -np.inf, dtype=np.float32), 1)
    np.testing.assert_array_equal(m.numpy(), expect)
    assert m.tolist()[1] == [0.0, 0.0, -np.inf, -np.inf]
    m64 = Transformer.generate_square_subsequent_mask(3, dtype=F64)
    assert m64.dtype == F64 and m64.tolist() == [[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf],
                                                 [0.0, 0.0, 0.0]]
    assert causal_mask(1).tolist() == [[0.0]] and causal_mask(0).shape == (0, 0)


# ---------------------------------------------------------------- masks: what they hide

@pytest.mark.parametrize("norm_first", [False, True])
def test_causal_mask_hides_later_positions(norm_first):
    enc = small(TransformerEncoderLayer, norm_first=norm_first)
    dec = small(TransformerDecoderLayer, norm_first=norm_first, batch_first=True)
    x, x2 = arr(5, 2, 8), arr(5, 2, 8, seed=1)
    x2[:3] = x[:3]                          # the same first 3 positions, different later ones
    ys = [enc(ten(a), src_mask=causal_mask(5)) for a in (x, x2)]
    assert_same(ys[0][:3], ys[1][:3])
    assert np.abs(ys[0][3:].numpy() - ys[1][3:].numpy()).min() > 1e-6
    unmasked = enc(ten(x)).numpy()
    assert np.abs(unmasked[:3] - ys[0][:3].numpy()).max() > 1e-3   # the mask did something
    mem = ten(arr(2, 6, 8, seed=3))
    t, t2 = arr(2, 4, 8, seed=4), arr(2, 4, 8, seed=5)
    t2[:, :2] = t[:, :2]
    zs = [dec(ten(a), mem, tgt_mask=causal_mask(4)) for a in (t, t2)]
    assert_same(zs[0][:, :2], zs[1][:, :2])
    assert np.abs(zs[0][:, 2:].numpy() - zs[1][:, 2:].numpy()).min() > 1e-6


def test_key_padding_masks_hide_padded_positions():
    enc = small(TransformerEncoderLayer, batch_first=True)
    pad = ten(padding(2, 5, [2, 0]), T.bool_)
    x, x2 = arr(2, 5, 8), arr(2, 5, 8, seed=1)
    x2[1], x2[0, :3] = x[1], x[0, :3]      # differ only in batch 0's two padded positions
    ys = [enc(ten(a), src_key_padding_mask=pad) for a in (x, x2)]
    assert_same(ys[0][0, :3], ys[1][0, :3])
    assert_same(ys[0][1], ys[1][1])
    assert np.abs(enc(ten(x)).numpy()[0, :3] - ys[0][0, :3].numpy()).max() > 1e-3
    # memory_key_padding_mask: padded memory positions do not reach the decoder's output
    dec = small(TransformerDecoderLayer, batch_first=True)
    tgt = ten(arr(2, 3, 8, seed=7))
    mpad = ten(padding(2, 5, [0, 3]), T.bool_)
    zs = [dec(tgt, ten(a), memory_key_padding_mask=mpad) for a in (x, x2)]
    x3 = x.copy()
    x3[1, 2:] += 1.0
    z3 = dec(tgt, ten(x3), memory_key_padding_mask=mpad)
    assert_same(zs[1][1], z3[1])
    assert np.abs(zs[0][0].numpy() - zs[1][0].numpy()).max() > 1e-6    # batch 0 saw the change


def test_causal_mask_detection_and_forms_agree():
    layer = small(TransformerEncoderLayer)
    enc = randomize(TransformerEncoder(layer, 2, norm=None)).eval()
    x = ten(arr(4, 2, 8))
    ref = enc(x, mask=causal_mask(4, dtype=F64))
    boolean = T.triu(T.ones((4, 4), dtype=T.bool_), 1)
    assert_same(enc(x, mask=boolean), ref)
    assert_same(enc(x, is_causal=True), ref)     # no mask: is_causal asks for the causal one
    assert_same(enc(x, mask=causal_mask(4), is_causal=True), ref)
    assert np.abs(enc(x).numpy() - ref.numpy()).max() > 1e-3
    from nn.transformer import _is_causal_mask
    assert _is_causal_mask(causal_mask(4), None, 4) and _is_causal_mask(boolean, None, 4)
    assert not _is_causal_mask(causal_mask(4), False, 4)
    assert not _is_causal_mask(causal_mask(3), None, 4)
    assert not _is_causal_mask(T.zeros((4, 4)), None, 4) and not _is_causal_mask(None, None, 4)


# ---------------------------------------------------------------- errors

def Z(*shape):
    return T.zeros(shape, dtype=T.float32)


@pytest.mark.parametrize("make, match", [
    (lambda: TransformerEncoderLayer(10, 3), r"TransformerEncoderLayer: d_model \(10\) .* nhead \(3\)"),
    (lambda: TransformerDecoderLayer(8, 3), r"TransformerDecoderLayer: d_model \(8\) .* nhead \(3\)"),
    (lambda: Transformer(12, 5, 1, 1, 8), r"Transformer: d_model \(12\) .*divisible by nhead \(5\)"),
    (lambda: TransformerEncoderLayer(8, 2, activation="tanh"),
     r"TransformerEncoderLayer: activation should be 'relu', 'gelu' or a callable, got 'tanh'"),
    (lambda: TransformerDecoderLayer(8, 2, activation="swish"),
     r"TransformerDecoderLayer: activation .* got 'swish'"),
    (lambda: Transformer(8, 2, 1, 1, 16, activation="elu"), r"Transformer: activation .*'elu'"),
    (lambda: TransformerEncoderLayer(8, 2, dim_feedforward=0),
     r"TransformerEncoderLayer: dim_feedforward must be positive, got 0"),
    (lambda: TransformerEncoder(TransformerEncoderLayer(8, 2, 16), -1),
     r"TransformerEncoder: num_layers must be a non-negative int, got -1"),
    (lambda: Transformer(8, 2, 1, 1, 16)(Z(5, 2, 8), Z(4, 3, 8)),
     r"Transformer: the batch sizes of src \(2\) and tgt \(3\) must be equal, got shapes "
     r"\(5, 2, 8\) and \(4, 3, 8\)"),
    (lambda: Transformer(8, 2, 1, 1, 16, batch_first=True)(Z(2, 5, 8), Z(3, 5, 8)),
     r"Transformer: the batch sizes of src \(2\) and tgt \(3\)"),
    (lambda: Transformer(8, 2, 1, 1, 16)(Z(5, 2, 6), Z(4, 2, 8)),
     r"Transformer: the feature sizes of src \(5, 2, 6\) and tgt \(4, 2, 8\) must both equal "
     r"d_model \(8\)"),
    (lambda: Transformer(8, 2, 1, 1, 16)(Z(5, 2, 8), Z(4, 2, 4)),
     r"Transformer: the feature sizes .* d_model \(8\)"),
    (lambda: Transformer(8, 2, 1, 1, 16)(Z(5, 2, 8), Z(4, 8)), r"Transformer: src \(5, 2, 8\) and "
     r"tgt \(4, 8\) must both be batched"),
    (lambda: TransformerEncoderLayer(8, 2, 16)(Z(5, 2, 6)),
     r"TransformerEncoderLayer: expected src of shape \(S, N, 8\) or \(S, 8\), got \(5, 2, 6\)"),
    (lambda: TransformerDecoderLayer(8, 2, 16, batch_first=True)(Z(2, 4, 8), Z(3, 5, 8)),
     r"TransformerDecoderLayer: the batch sizes of tgt \(2\) and memory \(3\)"),
    (lambda: TransformerDecoderLayer(8, 2, 16)(Z(4, 2, 8), Z(5, 2, 7)),
     r"TransformerDecoderLayer: expected memory of shape \(S, N, 8\) or \(S, 8\), got"),
    (lambda: Transformer.generate_square_subsequent_mask(-2),
     r"generate_square_subsequent_mask: sz must be a non-negative int, got -2"),
])
def test_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_type_errors():
    with pytest.raises(TypeError, match=r"TransformerEncoderLayer: activation .* got int"):
        TransformerEncoderLayer(8, 2, activation=3)
    with pytest.raises(TypeError, match=r"TransformerEncoder: expected a Module .* got str"):
        TransformerEncoder("layer", 2)


def test_callable_activation():
    a = small(TransformerEncoderLayer, activation="gelu")
    b = copy.deepcopy(a)
    b.activation = lambda v: v * 0.5 * (1.0 + T.erf(v / 2.0 ** 0.5))   # exact gelu by hand
    x = ten(arr(3, 2, 8))
    assert_same(a(x), b(x))
    c = copy.deepcopy(a)
    c.activation = lambda v: v
    assert np.abs(c(x).numpy() - a(x).numpy()).max() > 1e-3


# ---------------------------------------------------------------- gradients, train / eval

@pytest.mark.parametrize("norm_first", [False, True])
def test_gradcheck_encoder_layer(norm_first):
    layer = small(TransformerEncoderLayer, d_model=4, dim_feedforward=6, norm_first=norm_first,
                  activation="gelu")
    x = ten(arr(3, 2, 4), grad=True)
    pad = ten(padding(2, 3, [0, 1]), T.bool_)
    assert ag.gradcheck(lambda t: layer(t, src_mask=causal_mask(3, dtype=F64),
                                        src_key_padding_mask=pad), (x,))


def test_gradcheck_decoder_layer():
    layer = small(TransformerDecoderLayer, d_model=4, dim_feedforward=6, batch_first=True)
    tgt, mem = ten(arr(2, 2, 4), grad=True), ten(arr(2, 3, 4, seed=1), grad=True)
    assert ag.gradcheck(lambda a, b: layer(a, b, tgt_mask=causal_mask(2, dtype=F64)), (tgt, mem))


def test_dropout_only_in_train_mode():
    T.manual_seed(0)
    m = randomize(Transformer(8, 2, 1, 1, 16, dropout=0.3, dtype=F64))
    src, tgt = ten(arr(5, 2, 8)), ten(arr(4, 2, 8, seed=1))
    m.eval()
    ev = m(src, tgt).numpy()
    assert_same(m(src, tgt), ev, rtol=0, atol=0)           # eval is deterministic
    m.train()
    tr1, tr2 = m(src, tgt).numpy(), m(src, tgt).numpy()
    assert np.abs(tr1 - ev).max() > 1e-3 and np.abs(tr1 - tr2).max() > 1e-3
    assert all(mod.training for mod in m.modules())
    # with p = 0 train mode computes what eval mode does: dropout is the only difference
    m0 = copy.deepcopy(m)
    for mod in m0.modules():
        if hasattr(mod, "p"):
            mod.p = 0.0
        if hasattr(mod, "dropout") and isinstance(mod.dropout, float):
            mod.dropout = 0.0
    assert_same(m0.train()(src, tgt), ev)


@pytest.mark.parametrize("norm_first", [False, True])
def test_every_dropout_runs_once_per_layer(norm_first):
    """Each Dropout submodule sits on its own branch (dropout inside the feed-forward block,
    dropout1..3 on the residual branches), as PyTorch's: each runs once per forward."""
    from nn.dropout import Dropout
    m = Transformer(8, 2, 1, 1, 16, dropout=0.2, norm_first=norm_first)
    calls = {}
    for name, mod in m.named_modules():
        if isinstance(mod, Dropout):
            calls[name] = 0
            mod.register_forward_hook(lambda mod, a, out, name=name: calls.__setitem__(
                name, calls[name] + 1))
    m(T.ones((5, 2, 8), dtype=T.float32), T.ones((3, 2, 8), dtype=T.float32))
    assert sorted(calls) == sorted(
        [f"encoder.layers.0.{d}" for d in ("dropout", "dropout1", "dropout2")]
        + [f"decoder.layers.0.{d}" for d in ("dropout", "dropout1", "dropout2", "dropout3")])
    assert set(calls.values()) == {1}
    assert {mod.dropout for mod in m.modules() if hasattr(mod, "num_heads")} == {0.2}


def test_same_model_on_cpu_and_device(device):
    T.manual_seed(3)
    cpu = Transformer(8, 2, 1, 1, 16, batch_first=True, norm_first=True, device="cpu").eval()
    randomize(cpu)
    rng = np.random.default_rng(0)
    src, tgt = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 4, 8))
    pad = padding(2, 5, [1, 0])
    ref = cpu(ten(src, T.float32, device="cpu"), ten(tgt, T.float32, device="cpu"),
              tgt_mask=causal_mask(4, device="cpu"),
              src_key_padding_mask=ten(pad, T.bool_, device="cpu")).numpy()
    m = copy.deepcopy(cpu).to(device)
    assert m.encoder.layers[0].linear1.weight.device == T.asarray(0.0, device=device).device
    y = m(ten(src, T.float32, device=device), ten(tgt, T.float32, device=device),
          tgt_mask=causal_mask(4, device=device),
          src_key_padding_mask=ten(pad, T.bool_, device=device))
    assert y.dtype == T.float32 and np.isfinite(ref).all()
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_docstring_examples():
    import nn.transformer as mod
    r = doctest.testmod(mod)
    assert r.failed == 0 and r.attempted > 5


# ---------------------------------------------------------------- against torch

def torch_copy(m, tm, torch):
    """tm (a torch module of the same class) with m's parameters, by state_dict name."""
    ours, theirs = m.state_dict(), tm.state_dict()
    assert list(ours) == list(theirs)
    with torch.no_grad():
        for k, v in ours.items():
            theirs[k].copy_(torch.from_numpy(v.numpy().copy()))
    return tm.eval()


def compare(m, tm, torch, inputs, masks=None, tmasks=None, **kw):
    """Forward both on the same float64 inputs (and masks), backward a weighted sum (a plain
    sum of a LayerNorm's output has a zero gradient), compare output, input and parameter
    gradients."""
    xs = [ten(a, grad=True) for a in inputs]
    txs = [torch.from_numpy(a.copy()).requires_grad_() for a in inputs]
    y = m(*xs, **(masks or {}), **kw)
    ty = tm(*txs, **(tmasks or {}), **kw)
    g = arr(*ty.shape, seed=99)
    (y * ten(g)).sum().backward()
    (ty * torch.from_numpy(g)).sum().backward()
    assert_same(y, ty)
    for x, tx in zip(xs, txs):
        assert_same(x.grad, tx.grad)
    tp = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        assert_same(p.grad, tp[name].grad)


def both_masks(torch, **masks):
    """The same masks for us and for torch: a "causal:L" entry from each library's own
    generate_square_subsequent_mask, an array as a tensor of its dtype."""
    ours, theirs = {}, {}
    for k, v in masks.items():
        if isinstance(v, str):
            n = int(v.split(":")[1])
            ours[k] = Transformer.generate_square_subsequent_mask(n, dtype=F64)
            theirs[k] = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64)
        else:
            ours[k] = ten(v, T.bool_ if v.dtype == bool else F64)
            theirs[k] = torch.from_numpy(v.copy())
    return ours, theirs


CONFIGS = [(bf, nf, act) for bf in (False, True) for nf in (False, True) for act in ("relu", "gelu")]


@pytest.mark.parametrize("batch_first, norm_first, activation", CONFIGS)
def test_encoder_layer_vs_torch(batch_first, norm_first, activation):
    torch = pytest.importorskip("torch")
    kw = dict(d_model=8, nhead=2, dim_feedforward=12, batch_first=batch_first,
              norm_first=norm_first, activation=activation)
    m = small(TransformerEncoderLayer, **kw)
    tm = torch_copy(m, torch.nn.TransformerEncoderLayer(**kw, dtype=torch.float64), torch)
    masks = both_masks(torch, src_mask="causal:5", src_key_padding_mask=padding(2, 5, [0, 2]))
    compare(m, tm, torch, [batch(arr(2, 5, 8), batch_first)], *masks)


@pytest.mark.parametrize("mask_kind", ["none", "causal_hint", "float_padding", "unbatched"])
def test_encoder_layer_mask_forms_vs_torch(mask_kind):
    torch = pytest.importorskip("torch")
    kw = dict(d_model=8, nhead=4, dim_feedforward=12, norm_first=True)
    m = small(TransformerEncoderLayer, **kw)
    tm = torch_copy(m, torch.nn.TransformerEncoderLayer(**kw, dtype=torch.float64), torch)
    x, masks, extra = arr(4, 3, 8), ({}, {}), {}
    if mask_kind == "causal_hint":
        masks, extra = both_masks(torch, src_mask="causal:4"), {"is_causal": True}
    elif mask_kind == "float_padding":
        kpm = np.where(padding(3, 4, [1, 0, 3]), -np.inf, 0.0) + arr(3, 4, seed=5) * 0.1
        masks = both_masks(torch, src_key_padding_mask=kpm)
    elif mask_kind == "unbatched":
        x = x[:, 0].copy()
    compare(m, tm, torch, [x], *masks, **extra)


@pytest.mark.parametrize("batch_first, norm_first, activation", CONFIGS)
def test_decoder_layer_vs_torch(batch_first, norm_first, activation):
    torch = pytest.importorskip("torch")
    kw = dict(d_model=8, nhead=2, dim_feedforward=12, batch_first=batch_first,
              norm_first=norm_first, activation=activation)
    m = small(TransformerDecoderLayer, **kw)
    tm = torch_copy(m, torch.nn.TransformerDecoderLayer(**kw, dtype=torch.float64), torch)
    masks = both_masks(torch, tgt_mask="causal:4", tgt_key_padding_mask=padding(2, 4, [1, 0]),
                       memory_key_padding_mask=padding(2, 5, [0, 3]),
                       memory_mask=arr(4, 5, seed=6) * 0.5)
    inputs = [batch(arr(2, 4, 8), batch_first), batch(arr(2, 5, 8, seed=1), batch_first)]
    compare(m, tm, torch, inputs, *masks)


@pytest.mark.parametrize("batch_first, norm_first", [(False, False), (True, True)])
def test_stacks_vs_torch(batch_first, norm_first):
    torch = pytest.importorskip("torch")
    kw = dict(d_model=8, nhead=2, dim_feedforward=12, batch_first=batch_first,
              norm_first=norm_first, activation="gelu")
    from nn.normalization import LayerNorm
    enc = randomize(TransformerEncoder(TransformerEncoderLayer(**kw, dtype=F64), 2,
                                       LayerNorm(8, dtype=F64)), seed=4).eval()
    tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**kw, dtype=torch.float64),
                                       2, torch.nn.LayerNorm(8, dtype=torch.float64),
                                       enable_nested_tensor=False)
    torch_copy(enc, tenc, torch)
    x = batch(arr(2, 5, 8), batch_first)
    compare(enc, tenc, torch, [x], *both_masks(torch, mask="causal:5",
                                               src_key_padding_mask=padding(2, 5, [2, 0])))
    dec = randomize(TransformerDecoder(TransformerDecoderLayer(**kw, dtype=F64), 2), seed=5).eval()
    tdec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(**kw, dtype=torch.float64), 2)
    torch_copy(dec, tdec, torch)
    inputs = [batch(arr(2, 3, 8, seed=2), batch_first), x]
    compare(dec, tdec, torch, inputs, *both_masks(torch, tgt_mask="causal:3"))


@pytest.mark.parametrize("batch_first, norm_first, activation",
                         [(False, False, "relu"), (True, False, "gelu"), (True, True, "relu"),
                          (False, True, "gelu")])
def test_transformer_vs_torch(batch_first, norm_first, activation):
    torch = pytest.importorskip("torch")
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=12,
              batch_first=batch_first, norm_first=norm_first, activation=activation)
    m = randomize(Transformer(**kw, dtype=F64), seed=2).eval()
    with warnings.catch_warnings():      # torch's note on nested tensors: not about results
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(**kw, dtype=torch.float64)
    torch_copy(m, tm, torch)
    masks = both_masks(torch, tgt_mask="causal:4", src_key_padding_mask=padding(2, 6, [0, 2]),
                       tgt_key_padding_mask=padding(2, 4, [1, 0]),
                       memory_key_padding_mask=padding(2, 6, [0, 2]))
    inputs = [batch(arr(2, 6, 8), batch_first), batch(arr(2, 4, 8, seed=1), batch_first)]
    compare(m, tm, torch, inputs, *masks)


def test_transformer_default_init_and_mask_vs_torch():
    """Our own init (not randomize) through torch: the same outputs from the same weights, and
    the same generate_square_subsequent_mask."""
    torch = pytest.importorskip("torch")
    m = Transformer(8, 2, 1, 1, 12, dtype=F64).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(8, 2, 1, 1, 12, dtype=torch.float64)
    torch_copy(m, tm, torch)
    for n in (1, 3, 6):
        np.testing.assert_array_equal(causal_mask(n).numpy(),
                                      torch.nn.Transformer.generate_square_subsequent_mask(n).numpy())
    compare(m, tm, torch, [arr(5, 2, 8), arr(3, 2, 8, seed=1)],
            *both_masks(torch, tgt_mask="causal:3"))
