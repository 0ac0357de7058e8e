"""nn.attention: flex_attention (score_mod, BlockMask from mask_mod) against a NumPy reference and
torch.nn.attention.flex_attention (values, lse, block summaries), gradients against central
differences (captured tensors, rows that attend to nothing), both devices; sdpa_kernel."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensor as T
from autograd import grad
from nn.attention import SDPBackend, sdpa_kernel
from nn.attention.flex_attention import (
    AuxRequest,
    and_masks,
    create_block_mask,
    create_mask,
    flex_attention,
    noop_mask,
    or_masks,
)
from nn.sdpa import scaled_dot_product_attention

RNG = np.random.default_rng(3)
B, H, HKV, L, S, E, EV = 2, 4, 2, 13, 17, 8, 5


def _inputs():
    return (RNG.standard_normal((B, H, L, E)), RNG.standard_normal((B, HKV, S, E)),
            RNG.standard_normal((B, HKV, S, EV)), RNG.standard_normal((H, L, S)),
            RNG.integers(0, 3, size=S))


def _reference(q, k, v, bias=None, allowed=None):
    """NumPy: GQA heads, scores + bias, masked softmax (empty rows: 0 and lse -inf)."""
    k, v = np.repeat(k, H // HKV, axis=1), np.repeat(v, H // HKV, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(E)
    if bias is not None:
        s = s + bias
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isinf(top), 0.0, top)
    e = np.exp(s - top)
    tot = e.sum(-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(tot > 0, e / np.where(tot > 0, tot, 1), 0.0) @ v
        lse = np.where(tot > 0, np.log(np.where(tot > 0, tot, 1)) + top, -np.inf)[..., 0]
    return out, lse


def _mods(bias, doc):
    def biased(score, b, h, q_idx, kv_idx):
        return score + bias[h, q_idx, kv_idx]

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def same_doc(b, h, q_idx, kv_idx):
        return doc[q_idx % S] == doc[kv_idx]

    def not_row_3(b, h, q_idx, kv_idx):
        return q_idx != 3
    return biased, causal, same_doc, not_row_3


def test_against_numpy(device):
    q0, k0, v0, bias0, doc0 = _inputs()
    q, k, v = (T.asarray(a, device=device) for a in (q0, k0, v0))
    biased, causal, same_doc, not_row_3 = _mods(T.asarray(bias0, device=device),
                                                 T.asarray(doc0, device=device))
    out, lse = flex_attention(q, k, v, enable_gqa=True, return_lse=True)
    want, want_lse = _reference(q0, k0, v0)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(lse.numpy(), want_lse, rtol=1e-13)
    mask = create_block_mask(and_masks(causal, same_doc, not_row_3), None, None, L, S,
                             device=device, BLOCK_SIZE=4)
    out, aux = flex_attention(q, k, v, score_mod=biased, block_mask=mask, enable_gqa=True,
                              return_aux=AuxRequest(lse=True, max_scores=True))
    qi, ki = np.arange(L)[:, None], np.arange(S)[None, :]
    allowed = (qi >= ki) & (doc0[qi % S] == doc0[ki]) & (qi != 3)
    want, want_lse = _reference(q0, k0, v0, bias0, allowed)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-13)
    assert np.all(out.numpy()[:, :, 3] == 0) and np.all(np.isneginf(aux.lse.numpy()[:, :, 3]))
    fin = np.isfinite(want_lse)
    np.testing.assert_allclose(aux.lse.numpy()[fin], want_lse[fin], rtol=1e-13)
    assert aux.max_scores.shape == (B, H, L)
    dense = create_mask(and_masks(causal, not_row_3), None, None, L, S, device=device)
    assert dense.shape == (1, 1, L, S)
    np.testing.assert_array_equal(dense.numpy()[0, 0], (qi >= ki) & (qi != 3))


def test_gradients_against_central_differences():
    q0, k0, v0, bias0, _ = _inputs()
    q0, k0, v0, bias0 = q0[:1, :, :5], k0[:1], v0[:1], bias0[:, :5]
    mask = create_block_mask(lambda b, h, qi, ki: (qi >= ki) & (qi != 1), None, None, 5, S,
                             BLOCK_SIZE=2)

    def f(q, k, v, bias):
        out, lse = flex_attention(q, k, v, lambda s, b, h, qi, ki: s + bias[h, qi, ki], mask,
                                  enable_gqa=True, return_lse=True)
        return (out * out).sum() + T.where(T.isinf(lse), 0.0, lse).sum()
    args = [T.tensor(a, requires_grad=True) for a in (q0, k0, v0, bias0)]
    gs = grad(f(*args), args)
    assert all(np.isfinite(g.numpy()).all() for g in gs)
    assert np.all(gs[0].numpy()[:, :, 1] == 0)   # the row that attends to nothing
    for i, (a, g) in enumerate(zip((q0, k0, v0, bias0), gs)):
        flat = [tuple(RNG.integers(0, n) for n in a.shape) for _ in range(4)]
        for at in flat:
            def at_(d, a=a, at=at, i=i):
                x = a.copy()
                x[at] += d
                vals = [T.asarray(x) if j == i else T.asarray(b)
                        for j, b in enumerate((q0, k0, v0, bias0))]
                return float(f(*vals))
            fd = (at_(1e-6) - at_(-1e-6)) / 2e-6
            assert g.numpy()[at] == pytest.approx(fd, rel=1e-5, abs=1e-7), (i, at)


def test_float16_computes_in_float32():
    q0, k0, v0, _, _ = _inputs()
    q, k, v = (T.asarray(a, dtype=T.float16) for a in (q0, k0, v0))
    out, lse = flex_attention(q, k, v, enable_gqa=True, return_lse=True)
    assert out.dtype is T.float16 and lse.dtype is T.float32
    want, _ = _reference(*(np.asarray(a, np.float16).astype(np.float64) for a in (q0, k0, v0)))
    np.testing.assert_allclose(out.astype(T.float64).numpy(), want, atol=2e-3)


@pytest.mark.parametrize("kind", ["causal", "doc_window", "or_full", "no_full"])
def test_against_torch(kind):
    torch = pytest.importorskip("torch")
    TF = pytest.importorskip("torch.nn.attention.flex_attention")
    q0, k0, v0, bias0, doc0 = _inputs()
    results = []
    for lib, F in ((torch, TF), (T, None)):
        mods = _mods(lib.tensor(bias0), lib.tensor(doc0))
        cbm = F.create_block_mask if F else create_block_mask
        ands, ors = (F.and_masks, F.or_masks) if F else (and_masks, or_masks)
        biased, causal, same_doc, _ = mods
        kw = {"device": "cpu"}
        score = None
        if kind == "causal":
            bm = cbm(causal, None, None, L, S, BLOCK_SIZE=4, **kw)
        elif kind == "doc_window":
            bm = cbm(ands(same_doc, causal), B, None, L, S, BLOCK_SIZE=(2, 8), **kw)
        elif kind == "or_full":
            bm, score = cbm(ors(causal, lambda b, h, qi, ki: ki == 0), None, H, L, S, **kw), biased
        else:
            bm = cbm(causal, None, None, L, S, BLOCK_SIZE=4, separate_full_blocks=False, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fa = F.flex_attention if F else flex_attention
            out, lse = fa(lib.tensor(q0), lib.tensor(k0), lib.tensor(v0), score_mod=score,
                          block_mask=bm, enable_gqa=True, return_lse=True)
        summary = [bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks, bm.full_kv_indices,
                   bm.q_num_blocks, bm.q_indices, bm.full_q_num_blocks, bm.full_q_indices,
                   bm.to_dense()]
        results.append((np.asarray(out), np.asarray(lse),
                        [None if t is None else np.asarray(t) for t in summary], bm.sparsity()))
    (o1, l1, s1, p1), (o2, l2, s2, p2) = results
    np.testing.assert_allclose(o2, o1, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(l2, l1, rtol=1e-13)
    for a, b in zip(s1, s2):
        assert (a is None and b is None) or np.array_equal(a, b)
    assert p2 == pytest.approx(p1)


def test_masks_and_bad_input():
    z = T.asarray(0, dtype=T.int32)
    assert bool(noop_mask(z, z, z, z)) and bool(and_masks()(z, z, z, z))
    assert not bool(or_masks()(z, z, z, z))
    q = T.ones((1, 2, 3, 4))
    with pytest.raises(ValueError, match="block_mask was made for"):
        flex_attention(q, q, q, block_mask=create_block_mask(noop_mask, None, None, 4, 3))
    with pytest.raises(ValueError, match="4 heads, key / value 2"):
        flex_attention(T.ones((1, 4, 3, 4)), q, q)
    with pytest.raises(ValueError, match="4-D"):
        flex_attention(q[0], q[0], q[0])
    with pytest.raises(TypeError, match="score_mod"):
        create_block_mask(lambda s, b, h, qi, ki: s, None, None, 3, 3)
    with pytest.raises(TypeError, match="bool tensor"):
        create_block_mask(lambda b, h, qi, ki: qi - ki, None, None, 3, 3)
    with pytest.raises(ValueError, match="not both"):
        flex_attention(q, q, q, return_lse=True, return_aux=AuxRequest(lse=True))
    with pytest.raises(ValueError, match="score_mod must return"):
        flex_attention(q, q, q, score_mod=lambda s, b, h, qi, ki: s[..., :1])
    m = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 3, 3)
    assert "BlockMask(shape=(1, 1, 3, 3)" in repr(m) and m.sparsity() == 0.0


def test_sdpa_kernel_chooses_the_path():
    q, k, v = (T.asarray(RNG.standard_normal((2, 3, 5, 4)), dtype=T.float32) for _ in range(3))
    auto = scaled_dot_product_attention(q, k, v, is_causal=True)
    with sdpa_kernel([SDPBackend.MATH]):
        np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, is_causal=True).numpy(),
                                   auto.numpy(), rtol=1e-5, atol=1e-6)
    mask = T.zeros((5, 5), dtype=T.float32, requires_grad=True)   # only the composed path
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), pytest.raises(RuntimeError, match="no available"):
        scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):   # falls back
        scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward()
    assert mask.grad is not None
    with pytest.raises(TypeError, match="SDPBackend"):
        with sdpa_kernel(["math"]):
            pass
    scaled_dot_product_attention(q, k, v, attn_mask=mask)   # the restriction ended
