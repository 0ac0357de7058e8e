"""Fixes from the sequence-model / Module-machinery bug hunt (hunt3/seq):

- the CPU fused attention kernel: a row whose largest score is +inf gives NaN (as the composed
  path, the CUDA kernel and PyTorch), not the 0 of a fully masked row;
- register_parameter / add_module / ParameterDict refuse a name that is another attribute;
- full backward hooks: one grad_output slot per output, one grad_input slot per argument;
- integer input to the RNN cells and MultiheadAttention; length-0 sequences; E == 0 in sdpa;
  messages and exception kinds;
- flatten_parameters / all_weights, hx as a list, Sequential / ModuleList / ParameterDict
  methods.
Each test is torch-free; PyTorch (where importable) is a second reference in a few.
"""
from __future__ import annotations

import numpy as np
import pytest

import nn
import tensor as T
from nn.sdpa import sdpa

RNG = np.random.default_rng(11)


def _np(t) -> np.ndarray:
    return np.asarray(t.detach())


# ---------------------------------------------------------------- 1. fused attention, +inf

def _softmax_attention(q, k, v, m):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + m
    with np.errstate(invalid="ignore"):
        w = np.exp(s - s.max(-1, keepdims=True))
        return (w / w.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("S", [3, 150])   # one key tile, and +inf in a later tile
def test_fused_attention_plus_inf_score_is_nan_like_composed(dtype, S):
    q, k = np.ones((1, 2, 4)), RNG.standard_normal((1, S, 4))
    v = RNG.standard_normal((1, S, 5))
    m = np.zeros((2, S))
    m[0, S - 2] = np.inf
    args = [T.asarray(a, dtype=dtype) for a in (q, k, v, m)]
    fused = _np(sdpa(*args[:3], attn_mask=args[3], path="fused"))
    composed = _np(sdpa(*args[:3], attn_mask=args[3], path="composed"))
    ref = _softmax_attention(q, k, v, m)
    assert np.isnan(fused[0, 0]).all() and np.isnan(composed[0, 0]).all()   # was 0 fused
    tol = 1e-5 if dtype == T.float32 else 1e-12
    np.testing.assert_allclose(fused[0, 1], ref[0, 1], rtol=tol, atol=tol)
    np.testing.assert_allclose(fused[0, 1], composed[0, 1], rtol=tol, atol=tol)


def test_fused_attention_overflowing_scores_and_gradients_are_nan():
    big = T.full((1, 2, 4), 1e20, dtype=T.float32)
    out = _np(sdpa(big, big, big, path="fused"))
    assert np.isnan(out).all()                       # was all 0
    q = T.asarray(np.ones((1, 2, 4))).requires_grad_()
    k = T.asarray(RNG.standard_normal((1, 3, 4)))
    m = np.zeros((2, 3))
    m[0, 1] = np.inf
    sdpa(q, k, k, attn_mask=T.asarray(m), path="fused").sum().backward()
    g = _np(q.grad)
    assert np.isnan(g[0, 0]).all()                   # was 0: the divergence was hidden
    q2 = T.asarray(np.ones((1, 2, 4))).requires_grad_()
    sdpa(q2, k, k, attn_mask=T.asarray(m), path="composed").sum().backward()
    np.testing.assert_allclose(g[0, 1], _np(q2.grad)[0, 1], rtol=1e-10, atol=1e-12)


def test_fused_attention_fully_masked_row_is_still_zero():
    q, k = T.ones((1, 2, 4)), T.asarray(RNG.standard_normal((1, 70, 4)))
    m = np.zeros((2, 70))
    m[1] = -np.inf
    out = _np(sdpa(q, k, k, attn_mask=T.asarray(m), path="fused"))
    np.testing.assert_array_equal(out[0, 1], np.zeros(4))
    np.testing.assert_allclose(out[0, 0], _softmax_attention(np.ones((1, 2, 4)), _np(k), _np(k),
                                                             m)[0, 0], rtol=1e-12)


# ---------------------------------------------------------------- 2. names already taken

def test_register_parameter_and_add_module_refuse_other_attributes():
    m = nn.Linear(2, 2)
    w = m.weight
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.add_module("weight", nn.ReLU())
    with pytest.raises(KeyError, match="attribute '_parameters' already exists"):
        m.register_parameter("_parameters", nn.Parameter(T.ones(1)))
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        m.register_parameter("forward", nn.Parameter(T.ones(1)))
    m.foo = 3
    with pytest.raises(KeyError, match="attribute 'foo' already exists"):
        m.register_parameter("foo", nn.Parameter(T.ones(1)))
    assert m.foo == 3 and m.weight is w                        # untouched
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m(T.ones((1, 2), dtype=T.float32)).shape == (1, 2)
    bn = nn.BatchNorm1d(3)
    with pytest.raises(KeyError, match="attribute 'running_mean' already exists"):
        bn.register_parameter("running_mean", nn.Parameter(T.ones(3)))
    assert "running_mean" in dict(bn.named_buffers())


def test_assignment_still_replaces_and_re_registering_is_allowed():
    m = nn.Linear(2, 2)
    m.foo = 3
    m.foo = nn.Parameter(T.ones(1))                # assignment replaces, as PyTorch
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias", "foo"]
    p = nn.Parameter(T.zeros(1))
    m.register_parameter("foo", p)                 # the same namespace: a replacement
    assert m.foo is p
    m.sub = nn.ReLU()
    m.add_module("sub", nn.Tanh())
    assert type(m.sub).__name__ == "Tanh"


def test_parameter_dict_refuses_method_names():
    pd = nn.ParameterDict()
    with pytest.raises(KeyError, match="attribute 'keys' already exists"):
        pd["keys"] = T.ones(2)
    assert len(pd) == 0 and "keys" not in pd and pd.keys() == []
    pd["a"] = "plain"                  # an entry may change kind
    pd["a"] = T.ones(2)
    assert [n for n, _ in pd.named_parameters()] == ["a"] and pd["a"].tolist() == [1.0, 1.0]
    pd["a"] = 5
    assert pd["a"] == 5 and list(pd.named_parameters()) == []
    pl = nn.ParameterList(["x"])
    pl[0] = T.ones(1)
    assert [n for n, _ in pl.named_parameters()] == ["0"]


def test_registration_errors_match_torch():
    torch = pytest.importorskip("torch")
    for lib, mk in ((nn, lambda: T.ones(1)), (torch.nn, lambda: torch.ones(1))):
        with pytest.raises(KeyError):
            lib.ParameterDict()["keys"] = mk()
        with pytest.raises(KeyError):
            lib.Linear(2, 2).add_module("weight", lib.ReLU())
        with pytest.raises(KeyError):
            lib.BatchNorm1d(3).register_parameter("running_mean", lib.Parameter(mk()))


# ---------------------------------------------------------------- 3. backward hooks

class _TwoOut(nn.Module):
    def forward(self, x, n):
        return x.detach() * 0 + 1, x * n


def test_backward_hooks_see_one_slot_per_output_and_argument():
    m, got = _TwoOut(), []
    m.register_full_backward_pre_hook(lambda mod, go: (got.append(("pre", go)),
                                                       (None, go[1] * 10))[1])
    m.register_full_backward_hook(lambda mod, gi, go: got.append(("hook", gi, go)))
    x = T.ones(3, requires_grad=True)
    m(x, 2.0)[1].sum().backward()
    (_, pre), (_, gin, gout) = got
    assert len(pre) == 2 and pre[0] is None and pre[1].tolist() == [1.0] * 3
    assert len(gout) == 2 and gout[0] is None and gout[1].tolist() == [10.0] * 3  # replaced
    assert len(gin) == 2 and gin[1] is None and gin[0].tolist() == [20.0] * 3
    assert x.grad.tolist() == [20.0] * 3       # the replacement went to output 1, by position


def test_backward_hooks_on_lstm_and_mha():
    T.manual_seed(0)
    lstm, got = nn.LSTM(3, 4), []
    lstm.register_full_backward_hook(lambda mod, gi, go: got.append(go))
    x = T.ones((5, 2, 3), dtype=T.float32, requires_grad=True)
    out, (h, c) = lstm(x)
    (out.sum() + h.sum()).backward()
    assert len(got[0]) == 2 and got[0][1] is None and got[0][0].shape == (5, 2, 4)
    np.testing.assert_array_equal(_np(got[0][0]), np.ones((5, 2, 4), np.float32))
    mha, got = nn.MultiheadAttention(4, 2), []
    mha.register_full_backward_hook(lambda mod, gi, go: got.append(go))
    q = T.ones((3, 1, 4), dtype=T.float32, requires_grad=True)
    mha(q, q, q, need_weights=False)[0].sum().backward()
    assert len(got[0]) == 2 and got[0][1] is None and got[0][0].shape == (3, 1, 4)


def test_backward_hook_slots_match_torch():
    torch = pytest.importorskip("torch")

    class TO(torch.nn.Module):
        def forward(self, x, n):
            return x.detach() * 0 + 1, x * n

    def shapes(gs):
        return [None if g is None else tuple(g.shape) for g in gs]
    seen = {}
    for lib, m, x in (("ours", _TwoOut(), T.ones(3, requires_grad=True)),
                      ("torch", TO(), torch.ones(3, requires_grad=True))):
        m.register_full_backward_hook(lambda mod, gi, go, lib=lib: seen.update(
            {lib: (shapes(gi), shapes(go))}))
        m(x, 2.0)[1].sum().backward()
    assert seen["ours"] == seen["torch"] == ([(3,), None], [None, (3,)])


# ---------------------------------------------------------------- 4. bad inputs

@pytest.mark.parametrize("cell", [nn.RNNCell, nn.LSTMCell, nn.GRUCell])
@pytest.mark.parametrize("dtype", [T.int64, T.bool_])
def test_cells_refuse_integer_input(cell, dtype):
    with pytest.raises(TypeError, match=f"{cell.__name__}: expected a floating-point input, "
                                        f"got {dtype.name}"):
        cell(3, 4)(T.ones((2, 3), dtype=dtype))


def test_mha_refuses_integer_input():
    x = T.ones((3, 2, 4), dtype=T.int64)
    with pytest.raises(TypeError, match="MultiheadAttention: expected a floating-point query, "
                                        "got int64"):
        nn.MultiheadAttention(4, 2)(x, x, x)
    f = T.ones((3, 2, 4), dtype=T.float32)
    with pytest.raises(TypeError, match="floating-point value, got bool"):
        nn.MultiheadAttention(4, 2)(f, f, T.ones((3, 2, 4), dtype=T.bool_))


@pytest.mark.parametrize("shape,kw", [((0, 2, 3), {}), ((2, 0, 3), {"batch_first": True}),
                                      ((0, 3), {})])
def test_length_zero_sequence_raises(shape, kw):
    with pytest.raises(ValueError, match=r"LSTM: expected sequence length to be larger than 0, "
                                         rf"got input of shape \({shape[0]}, "):
        nn.LSTM(3, 4, **kw)(T.ones(shape, dtype=T.float32))
    with pytest.raises(RuntimeError):   # PyTorch's kind too
        nn.GRU(3, 4, **kw)(T.ones(shape, dtype=T.float32))
    out, h = nn.GRU(3, 4)(T.ones((5, 0, 3), dtype=T.float32))   # an empty batch is fine
    assert out.shape == (5, 0, 4) and h.shape == (1, 0, 4)


# ---------------------------------------------------------------- 5. errors and E == 0

def test_sdpa_with_empty_head_dim_is_the_masks_softmax():
    v = np.arange(12.0).reshape(1, 3, 4)
    q, k = T.zeros((1, 2, 0)), T.zeros((1, 3, 0))
    out = _np(nn.functional.scaled_dot_product_attention(q, k, T.asarray(v)))
    np.testing.assert_allclose(out, np.broadcast_to(v.mean(1, keepdims=True), (1, 2, 4)))
    m = np.array([[0.0, 1.0, -np.inf], [0.0, 0.0, 0.0]])
    w = np.exp(m) / np.exp(m).sum(-1, keepdims=True)
    out = _np(nn.functional.scaled_dot_product_attention(q, k, T.asarray(v), attn_mask=T.asarray(m)))
    np.testing.assert_allclose(out[0], w @ v[0], rtol=1e-12)
    out = _np(nn.functional.scaled_dot_product_attention(q, k, T.asarray(v), is_causal=True))
    np.testing.assert_allclose(out[0], [[0, 1, 2, 3], [2, 3, 4, 5]], rtol=1e-12)
    tv = T.asarray(v).requires_grad_()
    nn.functional.scaled_dot_product_attention(q, k, tv).sum().backward()
    np.testing.assert_allclose(_np(tv.grad), np.full((1, 3, 4), 2 / 3), rtol=1e-12)


def test_sdpa_empty_head_dim_matches_torch():
    torch = pytest.importorskip("torch")
    v = RNG.standard_normal((2, 3, 4))
    ours = _np(nn.functional.scaled_dot_product_attention(T.zeros((2, 2, 0)), T.zeros((2, 3, 0)),
                                                          T.asarray(v)))
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.zeros(2, 2, 0, dtype=torch.float64), torch.zeros(2, 3, 0, dtype=torch.float64),
        torch.tensor(v)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_messages_and_exception_kinds():
    x = T.ones((3, 4), dtype=T.float32)
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(3,\) for unbatched "
                                         r"input, got \(1, 3\)$"):
        nn.MultiheadAttention(4, 2)(x, x, x, key_padding_mask=T.zeros((1, 3), dtype=T.bool_))
    with pytest.raises(TypeError):
        nn.ModuleList([nn.ReLU()])["0"]
    with pytest.raises(TypeError):
        nn.Sequential(nn.ReLU())["0"]
    for bf, lay in ((False, "(L, N, 3)"), (True, "(N, L, 3)")):
        with pytest.raises(ValueError) as e:
            nn.GRU(3, 4, batch_first=bf)(T.ones((5, 2, 4), dtype=T.float32))
        assert f"GRU: expected input of shape {lay} (batch_first={bf}) or unbatched (L, 3), " \
               "got shape (5, 2, 4)" == str(e.value)


# ---------------------------------------------------------------- 6. PyTorch API

def test_flatten_parameters_and_all_weights():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    before = [_np(p).copy() for p in m.parameters()]
    assert m.flatten_parameters() is None
    for a, p in zip(before, m.parameters()):
        np.testing.assert_array_equal(a, _np(p))
    aw = m.all_weights
    assert len(aw) == 4 and all(len(ws) == 5 for ws in aw)
    assert aw[1][0] is m.weight_ih_l0_reverse and aw[3][4] is m.weight_hr_l1_reverse
    assert [tuple(w.shape) for w in aw[2]] == [(16, 4), (16, 2), (16,), (16,), (2, 4)]
    assert len(m._flat_weights) == 20 and m._flat_weights[0] is m.weight_ih_l0
    assert [len(ws) for ws in nn.GRU(3, 4, bias=False).all_weights] == [2]


def test_all_weights_names_match_torch():
    torch = pytest.importorskip("torch")
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]


def test_lstm_hx_as_a_list():
    T.manual_seed(0)
    m, cell = nn.LSTM(3, 4), nn.LSTMCell(3, 4)
    x = T.asarray(RNG.standard_normal((2, 1, 3)), dtype=T.float32)
    h, c = (T.asarray(RNG.standard_normal((1, 1, 4)), dtype=T.float32) for _ in range(2))
    a, (ha, ca) = m(x, (h, c))
    b, (hb, cb) = m(x, [h, c])
    np.testing.assert_array_equal(_np(a), _np(b))
    np.testing.assert_array_equal(_np(ca), _np(cb))
    ra, rb = cell(x[0], (h[0], c[0])), cell(x[0], [h[0], c[0]])
    np.testing.assert_array_equal(_np(ra[1]), _np(rb[1]))
    with pytest.raises(TypeError, match=r"hx must be a tuple \(h_0, c_0\), got list"):
        m(x, [h])


def _kinds(seq):
    return [type(m).__name__ for m in seq]


def test_sequential_insert_pop_add_mul():
    s = nn.Sequential(nn.ReLU(), nn.Tanh())
    assert s.insert(1, nn.Sigmoid()) is s and _kinds(s) == ["ReLU", "Sigmoid", "Tanh"]
    s.insert(-1, nn.Identity())
    assert _kinds(s) == ["ReLU", "Sigmoid", "Identity", "Tanh"]
    s.insert(4, nn.ReLU())
    assert list(s._modules) == ["0", "1", "2", "3", "4"]
    with pytest.raises(IndexError):
        s.insert(9, nn.ReLU())
    popped = s.pop(1)
    assert type(popped).__name__ == "Sigmoid" and _kinds(s) == ["ReLU", "Identity", "Tanh", "ReLU"]
    both = nn.Sequential(nn.ReLU()) + nn.Sequential(nn.Tanh())
    assert _kinds(both) == ["ReLU", "Tanh"] and both(T.asarray([-1.0, 1.0])).tolist() == \
        [0.0, float(np.tanh(1.0))]
    with pytest.raises(ValueError):
        nn.Sequential() + nn.ModuleList()
    r = nn.Sequential(nn.ReLU())
    twice = r * 2
    assert len(twice) == 2 and twice[0] is twice[1] is r[0] and len(2 * r) == 2
    r += nn.Sequential(nn.Tanh())
    assert _kinds(r) == ["ReLU", "Tanh"]


def test_sequential_insert_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (nn, torch.nn):
        s = lib.Sequential(lib.ReLU(), lib.Tanh())
        s.insert(-1, lib.Sigmoid())
        s.pop(0)
        assert _kinds(s) == ["Sigmoid", "Tanh"] and list(s._modules) == ["0", "1"]


def test_module_list_pop_and_add():
    a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    ml = nn.ModuleList([a, b, c])
    assert ml.pop(1) is b and list(ml) == [a, c] and list(ml._modules) == ["0", "1"]
    both = ml + nn.ModuleList([b])
    assert isinstance(both, nn.ModuleList) and list(both) == [a, c, b] and len(ml) == 2
    assert list(ml + [b]) == [a, c, b]


def test_parameter_dict_setdefault_or_copy_fromkeys():
    pd = nn.ParameterDict({"a": T.ones(2)})
    a = pd["a"]
    assert pd.setdefault("a", T.zeros(2)) is a
    b = pd.setdefault("b", T.zeros(3))
    assert pd["b"] is b and b.requires_grad and b.tolist() == [0.0] * 3
    cp = pd.copy()
    assert cp is not pd and cp["a"] is a and list(cp) == ["a", "b"]
    cp["c"] = T.ones(1)
    assert "c" not in pd
    merged = pd | nn.ParameterDict({"b": T.full(1, 7.0), "d": T.ones(1)})
    assert list(merged) == ["a", "b", "d"] and merged["b"].tolist() == [7.0]
    assert pd["b"] is b                                     # | leaves both operands alone
    pd |= nn.ParameterDict({"e": T.ones(1)})
    assert list(pd) == ["a", "b", "e"]
    fk = pd.fromkeys(["x", "y"], T.ones(2))
    assert list(fk) == ["x", "y"] and [n for n, _ in fk.named_parameters()] == ["x", "y"]
    assert fk["x"].tolist() == [1.0, 1.0]
