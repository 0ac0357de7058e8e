"""Attention and transformer layers against torch.nn, differentially (a hunt for silent wrong
results; torch is imported only here, and the tests skip without it).

- MultiheadAttention over every option PyTorch has (batch_first, kdim / vdim, bias, add_bias_kv,
  add_zero_attn, key_padding_mask and attn_mask of both kinds and shapes, both together, the
  causal hint, unbatched input, head-averaged or per-head weights), both need_weights paths:
  output, weights and the gradient of every parameter and input; zero-size batches and
  sequences; static_k / static_v; the dtype errors and the mixed-mask warning;
- the transformer layers' dropout wiring (each Dropout, and each attention's, alone at p=1 in
  train mode gives torch's exact result) and an activation Module's parameters in state_dict;
- scaled_dot_product_attention: a transposed mask view, a broadcast mask's gradient under GQA,
  head dims past the kernels' tiles;
- flex_attention: a gradient through a tensor the score_mod captures (torch's CPU build has no
  backward: a dense torch reference), a B=1 block mask over a batch of 2, BlockMask indexing
  (block summaries, packed query lengths, the mask_mod to set again).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensor as T
from nn import functional as F
from nn.attention import flex_attention as FX
from nn.multihead_attention import MultiheadAttention
from nn.transformer import TransformerDecoderLayer, TransformerEncoderLayer

F64 = T.float64
E, H = 8, 2


def torch_or_skip():
    return pytest.importorskip("torch")


def near(ours, theirs, tol=1e-9):
    a = ours.astype(F64).numpy() if hasattr(ours, "astype") else np.asarray(ours)
    b = theirs.detach().double().numpy()
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


def copy_into(ours, theirs):
    """ours with theirs' parameters (state_dict names must agree)."""
    sd = theirs.state_dict()
    assert sorted(sd) == sorted(ours.state_dict())
    ours.load_state_dict({k: T.asarray(v.detach().double().numpy()) for k, v in sd.items()})
    return ours


def pair(torch, a, grad=False):
    """The same values as (ours, torch's) tensors."""
    o, t = T.asarray(a), torch.from_numpy(np.array(a))
    if grad:
        o.requires_grad = True
        t.requires_grad_()
    return o, t


# ---------------------------------------------------------------- MultiheadAttention

def _mha_run(torch, *, L=4, S=5, N=3, bf=False, kdim=None, vdim=None, bias=True, abkv=False,
             azero=False, kpm=None, am=None, need=True, avg=True, causal=False, unb=False,
             self_attn=False, heads=H, seed=0):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    kw = dict(bias=bias, add_bias_kv=abkv, add_zero_attn=azero, kdim=kdim, vdim=vdim,
              batch_first=bf)
    tm = torch.nn.MultiheadAttention(E, heads, dtype=torch.float64, **kw).eval()
    om = copy_into(MultiheadAttention(E, heads, dtype=F64, **kw), tm).eval()

    def shp(n, d):
        return (n, d) if unb else ((N, n, d) if bf else (n, N, d))
    q, tq = pair(torch, rng.standard_normal(shp(L, E)), grad=True)
    if self_attn:
        k = v = q
        tk = tv = tq
    else:
        k, tk = pair(torch, rng.standard_normal(shp(S, kdim or E)), grad=True)
        v, tv = pair(torch, rng.standard_normal(shp(S, vdim or E)), grad=True)
    masks = [None if m is None else pair(torch, m) for m in (kpm, am)]
    (okpm, tkpm), (oam, tam) = ((None, None) if m is None else m for m in masks)
    fw = dict(need_weights=need, average_attn_weights=avg, is_causal=causal)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Support for mismatched")
        rout, rw = tm(tq, tk, tv, key_padding_mask=tkpm, attn_mask=tam, **fw)
        out, w = om(q, k, v, key_padding_mask=okpm, attn_mask=oam, **fw)
    near(out, rout)
    if need:
        near(w, rw)
    else:
        assert w is None
    g = rng.standard_normal(tuple(rout.shape))
    rout.backward(torch.from_numpy(g))
    out.backward(T.asarray(g))
    tp = dict(tm.named_parameters())
    for name, p in om.named_parameters():
        near(p.grad, tp[name].grad)
    for a, b in ((q, tq), (k, tk), (v, tv)):
        near(a.grad, b.grad)


_R = np.random.default_rng(7)
_KPM = _R.random((3, 5)) > 0.6
_KPM[:, 0] = False
_AM = _R.random((4, 5)) > 0.6
_AM[:, 0] = False
_CAUSAL = np.triu(np.ones((4, 4), bool), 1)
MHA_CASES = {
    "plain": {},
    "batch_first": dict(bf=True),
    "self": dict(self_attn=True, S=4),
    "self_batch_first": dict(self_attn=True, S=4, bf=True),
    "kdim_vdim": dict(kdim=6, vdim=3),
    "kdim_vdim_batch_first": dict(kdim=6, vdim=3, bf=True),
    "no_bias": dict(bias=False),
    "bias_kv_zero_attn": dict(abkv=True, azero=True),
    "kpm_bool": dict(kpm=_KPM),
    "kpm_float": dict(kpm=_R.standard_normal((3, 5))),
    "am_bool": dict(am=_AM),
    "am_float_3d": dict(am=_R.standard_normal((6, 4, 5))),
    "am_bool_3d": dict(am=_R.random((6, 4, 5)) > 0.7),
    "both_mixed_kinds": dict(am=_AM, kpm=_R.standard_normal((3, 5))),
    "both_bias_kv_zero_attn": dict(am=_AM, kpm=_KPM, abkv=True, azero=True),
    "per_head_weights": dict(avg=False, bf=True, am=_R.standard_normal((4, 5))),
    "unbatched": dict(unb=True, kpm=np.array([False, True, False, False, True])),
    "unbatched_3d_mask_per_head": dict(unb=True, avg=False, am=_R.standard_normal((2, 4, 5))),
    "unbatched_everything": dict(unb=True, abkv=True, azero=True, kdim=5, vdim=3,
                                 kpm=np.array([0, 1, 0, 0, 1], bool),
                                 am=_R.standard_normal((2, 4, 5))),
    "causal_hint": dict(self_attn=True, S=4, am=_CAUSAL, causal=True),
    "causal_hint_float_and_kpm": dict(self_attn=True, S=4, am=np.where(_CAUSAL, -np.inf, 0.0),
                                      kpm=_KPM[:, :4], causal=True),
    "causal_hint_bias_kv": dict(self_attn=True, S=4, am=_CAUSAL, causal=True, abkv=True),
    "one_head_per_feature": dict(heads=E, kpm=_KPM),
    "one_head": dict(heads=1, am=_AM),
}


@pytest.mark.parametrize("need", [True, False])
@pytest.mark.parametrize("case", sorted(MHA_CASES))
def test_mha_vs_torch(case, need):
    _mha_run(torch_or_skip(), need=need, **MHA_CASES[case])


@pytest.mark.parametrize("need", [True, False])
@pytest.mark.parametrize("sizes", [dict(N=0), dict(L=0), dict(S=0), dict(S=0, azero=True)])
def test_mha_zero_size_vs_torch(sizes, need):
    # (a reshape with -1 refused these: an empty batch or query sequence raised)
    _mha_run(torch_or_skip(), need=need, **sizes)


@pytest.mark.parametrize("need", [True, False])
@pytest.mark.parametrize("unb, azero, which, masks", [
    (False, False, "kv", False), (False, True, "kv", True), (False, False, "k", True),
    (True, False, "kv", True), (True, True, "v", False), (True, False, "v", True)])
def test_mha_static_kv_vs_torch(unb, azero, which, masks, need):
    # (static_k / static_v raised NotImplementedError)
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    L, N, S = 4, 3, 5
    n = 1 if unb else N
    s2 = 7 if which == "kv" else S      # one static tensor alone must keep key's length
    q = rng.standard_normal((L, E) if unb else (L, N, E))
    k = rng.standard_normal((S, E) if unb else (S, N, E))
    sk, sv = (rng.standard_normal((n * H, s2, E // H)) for _ in range(2))
    kpm = (rng.random((s2,) if unb else (N, s2)) > 0.5) if masks else None
    # (torch checks a 2-D attn_mask against key's length, so only where the statics keep it)
    am = rng.standard_normal((L, S)) if masks and s2 == S and not azero else None
    iw, ib = rng.standard_normal((3 * E, E)), rng.standard_normal(3 * E)
    ow, ob = rng.standard_normal((E, E)), rng.standard_normal(E)
    res = []
    for lib, conv in ((F, T.asarray), (torch.nn.functional, lambda a: torch.from_numpy(a))):
        def c(a, conv=conv):
            return None if a is None else conv(np.array(a))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Support for mismatched")
            res.append(lib.multi_head_attention_forward(
                c(q), c(k), c(k), E, H, c(iw), c(ib), None, None, azero, 0.0, c(ow), c(ob),
                training=False, need_weights=need, key_padding_mask=c(kpm), attn_mask=c(am),
                static_k=c(sk) if "k" in which else None,
                static_v=c(sv) if "v" in which else None))
    near(res[0][0], res[1][0])
    if need:
        near(res[0][1], res[1][1])


def test_mha_static_kv_errors():
    m = MultiheadAttention(E, H, dtype=F64)
    x = T.ones((4, 3, E), dtype=F64)
    args = (x, x, x, E, H, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,
            m.out_proj.weight, m.out_proj.bias)
    with pytest.raises(ValueError, match=r"static_k must have shape \(N\*num_heads, S, head_dim\)"):
        F.multi_head_attention_forward(*args, static_k=T.ones((5, 7, 4), dtype=F64))
    with pytest.raises(ValueError, match="keys and values differ in length"):
        F.multi_head_attention_forward(*args, static_k=T.ones((6, 7, 4), dtype=F64))
    with pytest.raises(TypeError, match="static_v is float32 but query is float64"):
        F.multi_head_attention_forward(*args, static_v=T.ones((6, 4, 4), dtype=T.float32))
    b = T.ones((1, 1, E), dtype=F64)
    with pytest.raises(ValueError, match="cannot be added to a static key"):
        F.multi_head_attention_forward(*args[:7], b, b, *args[9:],
                                       static_k=T.ones((6, 4, 4), dtype=F64))


@pytest.mark.parametrize("need", [True, False])
def test_mha_mixed_dtypes_raise(need):
    # (need_weights=True silently promoted a float32 query against float64 keys; False raised
    # scaled_dot_product_attention's error; PyTorch raises in both)
    m = MultiheadAttention(E, H)
    x = T.ones((4, 3, E), dtype=T.float32)
    with pytest.raises(TypeError, match="MultiheadAttention: query, key and value must have one "
                                        "dtype, got float32, float64, float64"):
        m(x, x.astype(F64), x.astype(F64), need_weights=need)


def test_mha_mixed_mask_kinds_warn_as_torch():
    m = MultiheadAttention(E, H)
    x = T.ones((4, 3, E), dtype=T.float32)
    kpm = T.zeros((3, 4), dtype=T.bool_)
    with pytest.warns(UserWarning, match=r"mismatched key_padding_mask \(bool\) and attn_mask "
                                         r"\(float32\)"):
        m(x, x, x, key_padding_mask=kpm, attn_mask=T.zeros((4, 4), dtype=T.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(x, x, x, key_padding_mask=kpm, attn_mask=T.zeros((4, 4), dtype=T.bool_))


def _random_config(seed):
    """A random MultiheadAttention configuration (options, shapes, masks) for _mha_run."""
    r = np.random.default_rng(seed)
    unb, self_attn = bool(r.random() < 0.25), bool(r.random() < 0.3)
    L = int(r.integers(1, 6))
    S = L if self_attn else int(r.integers(1, 7))
    N = 1 if unb else int(r.integers(1, 4))
    heads = int(r.choice([1, 2, 4, 8]))
    dims = [None if self_attn or r.random() < 0.6 else int(r.integers(2, 9)) for _ in range(2)]
    causal = self_attn and bool(r.random() < 0.3)
    kpm = am = None
    if r.random() < 0.4:
        shp = (S,) if unb else (N, S)
        kpm = r.random(shp) > 0.6 if r.random() < 0.6 else r.standard_normal(shp)
    if causal:
        am = np.triu(np.ones((L, L), bool), 1)
        am = am if r.random() < 0.5 else np.where(am, -np.inf, 0.0)
    elif r.random() < 0.4:
        shp = (L, S) if r.random() < 0.5 else (N * heads, L, S)
        am = r.random(shp) > 0.7 if r.random() < 0.5 else r.standard_normal(shp)
    return dict(L=L, S=S, N=N, bf=bool(r.random() < 0.5), kdim=dims[0], vdim=dims[1],
                bias=bool(r.random() < 0.8), abkv=bool(r.random() < 0.3),
                azero=bool(r.random() < 0.3), kpm=kpm, am=am, need=bool(r.random() < 0.5),
                avg=bool(r.random() < 0.5), causal=causal, unb=unb, self_attn=self_attn,
                heads=heads, seed=seed)


@pytest.mark.parametrize("seed", range(40))
def test_mha_random_configs_vs_torch(seed):
    """Random combinations of every option (a 250-seed run of this found no difference)."""
    _mha_run(torch_or_skip(), **_random_config(seed))


# ---------------------------------------------------------------- transformer layers

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_layer_dropout_wiring_vs_torch(kind, norm_first):
    """In train mode, each dropout alone at p=1 (the others 0) zeroes exactly its branch: the
    result is deterministic and must equal torch's."""
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    torch.manual_seed(0)
    cls, tcls = ((TransformerEncoderLayer, torch.nn.TransformerEncoderLayer) if kind == "encoder"
                 else (TransformerDecoderLayer, torch.nn.TransformerDecoderLayer))
    kw = dict(dim_feedforward=16, dropout=0.0, norm_first=norm_first)
    tm = tcls(E, H, dtype=torch.float64, **kw)
    om = copy_into(cls(E, H, dtype=F64, **kw), tm)
    x = rng.standard_normal((4, 3, E))
    mem = rng.standard_normal((5, 3, E))
    targets = [n for n, mod in tm.named_modules() if isinstance(mod, torch.nn.Dropout)]
    targets += [n for n in ("self_attn", "multihead_attn") if hasattr(tm, n)]
    assert len(targets) == (4 if kind == "encoder" else 6)
    for target in targets:
        for mods in (dict(tm.named_modules()), dict(om.named_modules())):
            for n, mod in mods.items():
                if n in ("dropout", "dropout1", "dropout2", "dropout3"):
                    mod.p = 1.0 if n == target else 0.0
                if n in ("self_attn", "multihead_attn"):
                    mod.dropout = 1.0 if n == target else 0.0
        tm.train()
        om.train()
        ta = (torch.from_numpy(x),) + ((torch.from_numpy(mem),) if kind == "decoder" else ())
        oa = (T.asarray(x),) + ((T.asarray(mem),) if kind == "decoder" else ())
        near(om(*oa), tm(*ta))


def test_activation_module_parameters_vs_torch():
    torch = torch_or_skip()
    import nn
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, dtype=torch.float64,
                                          activation=torch.nn.PReLU(dtype=torch.float64)).eval()
    with torch.no_grad():
        tm.activation.weight.fill_(0.3)
    om = copy_into(TransformerEncoderLayer(E, H, 16, dropout=0.0, dtype=F64,
                                           activation=nn.PReLU(dtype=F64)), tm).eval()
    assert "activation.weight" in om.state_dict()
    x = np.random.default_rng(2).standard_normal((4, 3, E))
    near(om(T.asarray(x)), tm(torch.from_numpy(x)))


# ---------------------------------------------------------------- scaled_dot_product_attention

@pytest.mark.parametrize("L, S, Ed, Ev", [(3, 200, 65, 3), (130, 70, 129, 96), (5, 9, 257, 7)])
def test_sdpa_tiles_and_transposed_mask_vs_torch(L, S, Ed, Ev):
    torch = torch_or_skip()
    rng = np.random.default_rng(L)
    (q, tq), (k, tk), (v, tv) = (pair(torch, rng.standard_normal(s), grad=True)
                                 for s in ((2, L, Ed), (2, S, Ed), (2, S, Ev)))
    m = rng.standard_normal((S, L))
    m[:, 1] = -np.inf                       # a fully masked query row
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=T.swapaxes(T.asarray(m), 0, 1))
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv,
                                                           attn_mask=torch.from_numpy(m).T)
    near(out, ref)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(T.asarray(g))
    ref.backward(torch.from_numpy(g))
    for a, b in ((q, tq), (k, tk), (v, tv)):
        near(a.grad, b.grad, 1e-8)


def test_sdpa_broadcast_mask_gradient_with_gqa_vs_torch():
    torch = torch_or_skip()
    rng = np.random.default_rng(4)
    q, tq = pair(torch, rng.standard_normal((2, 6, 4, 5)))
    k, tk = pair(torch, rng.standard_normal((1, 2, 6, 5)))
    v, tv = pair(torch, rng.standard_normal((2, 2, 6, 3)))
    m, tm = pair(torch, rng.standard_normal((4, 6)), grad=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True)
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm,
                                                           enable_gqa=True)
    near(out, ref)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(T.asarray(g))
    ref.backward(torch.from_numpy(g))
    near(m.grad, tm.grad)


# ---------------------------------------------------------------- flex_attention

def test_flex_gradient_through_captured_tensor_vs_torch():
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    q, tq = pair(torch, rng.standard_normal((2, 2, 6, 8)), grad=True)
    k, tk = pair(torch, rng.standard_normal((2, 2, 10, 8)), grad=True)
    bias, tbias = pair(torch, rng.standard_normal((6, 10)), grad=True)
    mask = FX.create_block_mask(lambda b, h, i, j: j <= i + 2, None, None, 6, 10, BLOCK_SIZE=4)
    out = FX.flex_attention(q, k, k, score_mod=lambda s, b, h, i, j: s + bias[i, j],
                            block_mask=mask)
    allowed = torch.arange(10)[None, :] <= torch.arange(6)[:, None] + 2
    scores = tq @ tk.transpose(-1, -2) / math.sqrt(8) + tbias
    ref = torch.softmax(scores.masked_fill(~allowed, -math.inf), -1) @ tk
    near(out, ref)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(T.asarray(g))
    ref.backward(torch.from_numpy(g))
    for a, b in ((bias, tbias), (q, tq), (k, tk)):
        near(a.grad, b.grad)


def test_flex_single_batch_block_mask_over_a_batch_vs_torch():
    torch = torch_or_skip()
    from torch.nn.attention import flex_attention as tfx
    rng = np.random.default_rng(6)
    q, tq = pair(torch, rng.standard_normal((2, 2, 6, 8)))
    k, tk = pair(torch, rng.standard_normal((2, 2, 10, 8)))

    def mod(b, h, i, j):
        return i >= j + b
    bt = tfx.create_block_mask(mod, 1, 1, 6, 10, device="cpu", BLOCK_SIZE=2)
    bo = FX.create_block_mask(mod, 1, 1, 6, 10, BLOCK_SIZE=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = tfx.flex_attention(tq, tk, tk, block_mask=bt)
    near(FX.flex_attention(q, k, k, block_mask=bo), ref)


def _summary_equal(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    for cnt, idx in (("kv_num_blocks", "kv_indices"), ("full_kv_num_blocks", "full_kv_indices"),
                     ("q_num_blocks", "q_indices"), ("full_q_num_blocks", "full_q_indices")):
        n = getattr(theirs, cnt).numpy()
        np.testing.assert_array_equal(getattr(ours, cnt).numpy(), n)
        a, b = getattr(ours, idx).numpy(), getattr(theirs, idx).numpy()
        for at in np.ndindex(n.shape):
            np.testing.assert_array_equal(a[at][:n[at]], b[at][:n[at]])


@pytest.mark.parametrize("index", [
    1, -1, (slice(None), 1), (0, 0, -1), (slice(None), slice(None), slice(1, None)),
    (slice(None), slice(None), slice(0, None, 2)), (slice(None), slice(None), 3), (slice(1, 3),),
    (slice(None), slice(None), [0, 3])])
def test_flex_block_mask_indexing_vs_torch(index):
    # (a BlockMask could not be indexed: TypeError)
    torch = torch_or_skip()
    from torch.nn.attention import flex_attention as tfx

    def mod(b, h, i, j):
        return (i + b >= j) | (h == 1)
    bt = tfx.create_block_mask(mod, 3, 2, 7, 10, device="cpu", BLOCK_SIZE=(2, 3))
    bo = FX.create_block_mask(mod, 3, 2, 7, 10, BLOCK_SIZE=(2, 3))
    ti = tuple(torch.tensor(i) if isinstance(i, list) else i for i in index) \
        if isinstance(index, tuple) else index
    oi = tuple(T.asarray(np.array(i)) if isinstance(i, list) else i for i in index) \
        if isinstance(index, tuple) else index
    st, so = bt[ti], bo[oi]
    _summary_equal(so, st)
    assert so.sparsity() == pytest.approx(st.sparsity())


def test_flex_indexed_block_mask_needs_a_new_mask_mod_as_torch():
    torch = torch_or_skip()
    from torch.nn.attention import flex_attention as tfx

    def mod(b, h, i, j):
        return (i + b >= j) | (h == 1)
    st = tfx.create_block_mask(mod, 3, 2, 7, 10, device="cpu", BLOCK_SIZE=(2, 3))[1:2, :, 1:]
    so = FX.create_block_mask(mod, 3, 2, 7, 10, BLOCK_SIZE=(2, 3))[1:2, :, 1:]
    rng = np.random.default_rng(8)
    q, tq = pair(torch, rng.standard_normal((1, 2, 5, 8)))
    k, tk = pair(torch, rng.standard_normal((1, 2, 10, 8)))
    with pytest.raises(RuntimeError, match="set a mask_mod for its positions"):
        FX.flex_attention(q, k, k, block_mask=so)

    def moved(b, h, i, j):   # the old mask at batch 1, query rows from 2
        return (i + 2 + b + 1 >= j) | (h == 1)
    st.mask_mod = so.mask_mod = moved
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = tfx.flex_attention(tq, tk, tk, block_mask=st)
    near(FX.flex_attention(q, k, k, block_mask=so), ref)


# ---------------------------------------------------------------- devices

@pytest.mark.parametrize("need", [True, False])
def test_mha_every_option_same_on_device(device, need):
    """The same MultiheadAttention (kdim / vdim, bias_kv, zero_attn, both masks, static_v) on
    `device` as on the CPU: output, weights and every gradient (the cuda case runs on a GPU or
    the CUDA emulator)."""
    rng = np.random.default_rng(9)
    x, y, z = (rng.standard_normal(s) for s in ((4, 3, E), (5, 3, 6), (5, 3, 3)))
    kpm, am = rng.random((3, 5)) > 0.6, rng.standard_normal((4, 5))
    sv = rng.standard_normal((3 * H, 5, E // H))
    res = []
    for dev in ("cpu", device):
        T.manual_seed(0)
        m = MultiheadAttention(E, H, kdim=6, vdim=3, add_zero_attn=True, dtype=F64, device=dev)
        q, k, v = (T.asarray(a, device=dev) for a in (x, y, z))
        for t in (q, k, v):
            t.requires_grad = True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, w = F.multi_head_attention_forward(
                q, k, v, E, H, None, m.in_proj_bias, None, None, True, 0.0, m.out_proj.weight,
                m.out_proj.bias, training=False, key_padding_mask=T.asarray(kpm, device=dev),
                need_weights=need, attn_mask=T.asarray(am, device=dev),
                use_separate_proj_weight=True, q_proj_weight=m.q_proj_weight,
                k_proj_weight=m.k_proj_weight, v_proj_weight=m.v_proj_weight,
                static_v=T.asarray(sv, device=dev))
        out.sum().backward()
        got = [out] + ([w] if need else []) + [t.grad for t in (q, k)] + \
            [p.grad for p in m.parameters() if p.grad is not None]
        res.append([a.to("cpu").numpy() for a in got])
    assert len(res[0]) == len(res[1])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12, equal_nan=True)


# ---------------------------------------------------------------- nn.attention.bias

@pytest.mark.parametrize("L, S", [(3, 7), (7, 7), (7, 3), (1, 5)])
@pytest.mark.parametrize("which", ["causal_upper_left", "causal_lower_right"])
def test_causal_bias_vs_torch(which, L, S):
    # (nn.attention.bias did not exist: no lower-right causal attention)
    torch = torch_or_skip()
    from torch.nn.attention import bias as tb

    from nn.attention import bias as ob
    rng = np.random.default_rng(L * 10 + S)
    (q, tq), (k, tk), (v, tv) = (pair(torch, rng.standard_normal(s), grad=True)
                                 for s in ((2, 2, L, 8), (2, 2, S, 8), (2, 2, S, 4)))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ours = getattr(ob, which)(L, S)
    assert len(seen) == (which == "causal_lower_right" and L > S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(tb, which)(L, S)
    np.testing.assert_array_equal(ours._materialize().numpy(), theirs._materialize().numpy())
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=ours)
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=theirs)
    near(out, ref)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(T.asarray(g))
    ref.backward(torch.from_numpy(g))
    for a, b in ((q, tq), (k, tk), (v, tv)):
        near(a.grad, b.grad)


def test_causal_bias_errors_and_doctests():
    import doctest

    from nn.attention import bias as ob
    q = T.ones((1, 2, 4))
    with pytest.raises(ValueError, match="CausalBias attn_mask should not be used with "
                                         "is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ob.causal_lower_right(2, 2),
                                       is_causal=True)
    with pytest.raises(ValueError, match=r"causal_lower_right: takes the two sizes"):
        ob.causal_lower_right(2)
    with pytest.raises(TypeError, match="variant must be a CausalVariant"):
        ob.CausalBias(2, 3, 3)
    with pytest.raises(ValueError, match="does not broadcast"):   # the lengths must fit
        F.scaled_dot_product_attention(q, q, q, attn_mask=ob.causal_lower_right(2, 3))
    assert doctest.testmod(ob).failed == 0
