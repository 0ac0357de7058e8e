"""scaled_dot_product_attention (nn/sdpa.py) and its fused kernels (nn/_fused_attention.py,
tensor/cpu/csrc/nn_attn.h, cuda_src/nn_attn.cuh), on both devices.

- values against a NumPy reference and PyTorch's SDPA, gradients against PyTorch's, for every
  mask kind, causal (L < S and L > S), scale, GQA, broadcast batch dims, 2-D operands,
  E != Ev, sizes that cross the kernels' tiles, non-contiguous operands;
- the fused path against the composed (public-op) path: values and gradients, every float
  dtype, dropout with the same seed; gradcheck / gradgradcheck in float64; forward mode;
- dropout: reproducible, the same bits on both devices and on both paths, the expectation;
- fully masked rows (0, zero gradients, as PyTorch), a mask that requires grad, determinism
  across thread counts, the errors, MultiheadAttention's need_weights=False path, and the
  memory of forward + backward growing linearly (benchmarks/bench_attention.py measures it).
"""
from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import helpers
import numpy as np
import pytest
from helpers import to_np

import autograd as ag
import tensor as T
from autograd.forward import jvp
from nn import _fused_attention as FA
from nn import functional as F
from nn.attention import MultiheadAttention
from nn.sdpa import sdpa
from tensor import dtypes as dt
from tensor.backend import backend_for

pytestmark = pytest.mark.usefixtures("device")

TOL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 2e-5, "float64": 1e-12}


# ---------------------------------------------------------------- references

def ref_np(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    """SDPA in float64 NumPy: PyTorch's math, fully masked rows giving 0."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    if gqa and q.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        g = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, g, axis=-3), np.repeat(v, g, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    L, S = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0.0, m))
    p = np.where(dead, 0.0, e / np.where(dead, 1.0, e.sum(-1, keepdims=True)))
    return p @ v


def tile_dims(dtype):
    """(L, S, E, Ev) that cross the kernels' tile boundaries on the test's device, small."""
    if helpers.DEVICE == "cpu":
        return 70, 67, 8, 5                 # CPU tiles: 64 rows
    e = 200 if dtype == "float64" else 400  # CUDA: head dims this wide give 8-row tiles
    return 11, 10, e, 9


# name -> (q, k, v shapes, mask spec, is_causal, scale, enable_gqa); the mask spec is
# (shape, "bool" | "float") or None; "tiles" uses tile_dims
CASES = {
    "plain": ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), None, False, None, False),
    "tiles": (None, None, None, None, False, None, False),
    "tiles_causal": (None, None, None, None, True, None, False),
    "causal_L<S": ((2, 4, 8), (2, 9, 8), (2, 9, 3), None, True, None, False),
    "causal_L>S": ((1, 9, 4), (1, 5, 4), (1, 5, 4), None, True, None, False),
    "scale": ((2, 5, 8), (2, 6, 8), (2, 6, 8), None, False, 0.3, False),
    "bool_mask_2d": ((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 3), ((5, 6), "bool"), False, None, False),
    "bool_mask_full": ((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 3), ((2, 2, 5, 6), "bool"), False,
                       None, False),
    "float_mask_heads": ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), ((2, 1, 5, 6), "float"), False,
                         None, False),
    "key_padding": ((3, 2, 5, 4), (3, 2, 6, 4), (3, 2, 6, 4), ((3, 1, 1, 6), "bool"), False, None,
                    False),
    "gqa": ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 6), ((4, 5, 7), "float"), False, None, True),
    "gqa_causal": ((1, 6, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4), None, True, None, True),
    "broadcast": ((2, 3, 5, 8), (3, 7, 8), (1, 3, 7, 6), ((1, 5, 7), "bool"), False, None, False),
    "two_d": ((5, 8), (7, 8), (7, 2), ((7,), "float"), False, None, False),
}


def case(name, dtype, seed=0):
    """(numpy q, k, v, mask, kwargs) of a case."""
    qs, ks, vs, ms, causal, scale, gqa = CASES[name]
    if qs is None:
        L, S, E, Ev = tile_dims(dtype)
        qs, ks, vs = (2, L, E), (2, S, E), (2, S, Ev)
    rng = np.random.default_rng(seed)
    npd = np.float64 if dtype == "float64" else np.float32
    q, k, v = (rng.standard_normal(s).astype(npd) for s in (qs, ks, vs))
    mask = None
    if ms is not None:
        shape, kind = ms
        if kind == "bool":
            mask = rng.random(shape) < 0.75
            mask[..., 0] = True          # no fully masked row here (tested on its own)
        else:
            mask = rng.standard_normal(shape).astype(npd)
    return q, k, v, mask, dict(is_causal=causal, scale=scale, enable_gqa=gqa)


def ours(q, k, v, mask, kw, dtype=None, path="auto", g=None, dropout_p=0.0):
    """(out, (dq, dk, dv)) of our SDPA; gradients against cotangent g (when given)."""
    d = dt.dtype(dtype) if dtype else None
    args = [T.asarray(x, dtype=d).requires_grad_(g is not None) for x in (q, k, v)]
    m = None if mask is None else T.asarray(mask, dtype=None if mask.dtype == bool else d)
    out = sdpa(*args, attn_mask=m, dropout_p=dropout_p, path=path, **kw)
    if g is None:
        return out, None
    out.backward(T.asarray(g, dtype=out.dtype))
    return out, tuple(a.grad for a in args)


def close(t, want, dtype, scale=1.0, what=""):
    got = to_np(t).astype(np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    tol = TOL[dtype] * max(1.0, scale)
    err = np.abs(got - want).max() if got.size else 0.0
    assert err <= tol * (1 + np.abs(want).max()), f"{what}: max error {err:.3g} (tol {tol:.1g})"


# ---------------------------------------------------------------- values and gradients

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_vs_numpy_and_torch(name, dtype):
    q, k, v, mask, kw = case(name, dtype)
    if name.startswith("tiles"):   # the case crosses a tile boundary of the forward kernel
        assert backend_for(helpers.DEVICE).sdpa_tile(dt.dtype(dtype), q.shape[-1], v.shape[-1]) < q.shape[-2]
    want = ref_np(q, k, v, mask, kw["is_causal"], kw["scale"], kw["enable_gqa"])
    g = np.random.default_rng(1).standard_normal(want.shape).astype(q.dtype)
    out, grads = ours(q, k, v, mask, kw, g=g)
    close(out, want, dtype, what="output vs numpy")
    torch = pytest.importorskip("torch")
    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
    tm = None if mask is None else torch.tensor(mask)
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kw)
    tout.backward(torch.tensor(g))
    close(out, tout.detach().numpy(), dtype, what="output vs torch")
    for a, t, n in zip(grads, (tq, tk, tv), "qkv"):
        close(a, t.grad.numpy(), dtype, scale=10, what=f"d{n} vs torch")


def test_noncontiguous_operands():
    """q a transposed head layout, k reversed along the keys, v stepped, a transposed mask."""
    rng = np.random.default_rng(2)
    q4 = rng.standard_normal((2, 6, 3, 8))                 # (B, L, H, E)
    k4 = rng.standard_normal((2, 3, 7, 8))
    v4 = rng.standard_normal((2, 3, 14, 5))
    mt = rng.standard_normal((2, 1, 7, 6))                 # (.., S, L): used transposed
    q = T.swapaxes(T.asarray(q4), 1, 2)
    k = T.flip(T.asarray(k4), axis=2)
    v = T.asarray(v4)[:, :, ::2]
    m = T.swapaxes(T.asarray(mt), -1, -2)
    assert not (q.is_contiguous() or k.is_contiguous() or v.is_contiguous() or m.is_contiguous())
    want = ref_np(q4.swapaxes(1, 2), k4[:, :, ::-1], v4[:, :, ::2], mt.swapaxes(-1, -2))
    for path in ("fused", "composed"):
        close(sdpa(q, k, v, m, path=path), want, "float64", what=path)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["plain", "tiles_causal", "bool_mask_full", "gqa", "broadcast"])
def test_fused_matches_composed(name, dtype):
    q, k, v, mask, kw = case(name, dtype, seed=3)
    shape = ref_np(q, k, v, mask, kw["is_causal"], kw["scale"], kw["enable_gqa"]).shape
    g = np.random.default_rng(4).standard_normal(shape)
    fo, fg = ours(q, k, v, mask, kw, dtype, "fused", g)
    co, cg = ours(q, k, v, mask, kw, dtype, "composed", g)
    assert fo.dtype == co.dtype == dt.dtype(dtype)
    close(fo, to_np(co), dtype, scale=4, what="output")
    for a, b, n in zip(fg, cg, "qkv"):
        assert a.dtype == dt.dtype(dtype)
        close(a, to_np(b), dtype, scale=40, what=f"d{n}")


@pytest.mark.parametrize("name", ["plain", "causal_L>S", "float_mask_heads", "gqa", "broadcast"])
def test_gradcheck(name):
    q, k, v, mask, kw = case(name, "float64", seed=5)
    if name == "plain":
        q, k, v = q[:1, :2], k[:1, :2], v[:1, :2]
    m = None if mask is None else T.asarray(mask)
    args = [T.asarray(x).requires_grad_() for x in (q, k, v)]
    assert ag.gradcheck(lambda a, b, c: sdpa(a, b, c, m, path="fused", **kw), args)


def test_gradgradcheck_and_forward_mode():
    q, k, v, mask, kw = case("causal_L<S", "float64", seed=6)
    q, k, v = q[:1], k[:1], v[:1]
    args = [T.asarray(x).requires_grad_() for x in (q, k, v)]
    assert ag.gradgradcheck(lambda a, b, c: sdpa(a, b, c, path="fused", **kw), args)
    rng = np.random.default_rng(7)
    tans = [T.asarray(rng.standard_normal(x.shape)) for x in (q, k, v)]
    prim = [T.asarray(x) for x in (q, k, v)]
    _, tf = jvp(lambda a, b, c: sdpa(a, b, c, path="fused", **kw), prim, tans)
    _, tc = jvp(lambda a, b, c: sdpa(a, b, c, path="composed", **kw), prim, tans)
    close(tf, to_np(tc), "float64", what="jvp")
    m = T.asarray(rng.standard_normal((q.shape[-2], k.shape[-2])))

    def masked(path):
        def f(a, b, c):
            T.manual_seed(2)
            return sdpa(a, b, c, m, dropout_p=0.3, path=path)
        return f
    _, tf = jvp(masked("fused"), prim, tans)
    _, tc = jvp(masked("composed"), prim, tans)
    close(tf, to_np(tc), "float64", what="jvp with a mask and dropout")


# ---------------------------------------------------------------- dropout

def _drop_run(seed, path, p=0.4, shape=(2, 3, 9, 4), s=11):
    rng = np.random.default_rng(8)
    q = T.asarray(rng.standard_normal(shape))
    k = T.asarray(rng.standard_normal((*shape[:-2], s, shape[-1])))
    v = T.asarray(rng.standard_normal((*shape[:-2], s, 3)))
    T.manual_seed(seed)
    return sdpa(q, k, v, dropout_p=p, path=path)


def test_dropout_is_reproducible_and_advances_the_generator():
    a, b = _drop_run(5, "fused"), _drop_run(5, "fused")
    assert np.array_equal(to_np(a), to_np(b))
    assert not np.array_equal(to_np(a), to_np(_drop_run(6, "fused")))
    T.manual_seed(5)
    st = T.random.get_rng_state()
    _drop_run(5, "fused")
    assert T.random.get_rng_state()[1] == st[1] + math.ceil(2 * 3 * 9 * 11 / 4)


def test_dropout_bits_match_composed_and_cpu():
    """q = 0 and v = identity make out[b, i, j] = keep(b, i, j) * dscale / S: the mask itself."""
    S = 13
    outs = []
    for dev, path in ((helpers.DEVICE, "fused"), (helpers.DEVICE, "composed"), ("cpu", "fused")):
        q, k = T.zeros((3, 2, 6, 4), device=dev), T.zeros((3, 2, S, 4), device=dev)
        v = T.broadcast_to(T.eye(S, device=dev), (3, 2, S, S))
        T.manual_seed(11)
        outs.append(to_np(sdpa(q, k, v, dropout_p=0.3, path=path)))
    keep = outs[0] != 0
    assert 0.5 < keep.mean() < 0.9
    for o in outs[1:]:
        assert np.array_equal(o != 0, keep)
        np.testing.assert_allclose(o, outs[0], rtol=1e-6)
    np.testing.assert_allclose(outs[0][keep], 1 / (0.7 * S), rtol=1e-6)


def test_dropout_expectation():
    """The mean over many copies of one problem (broadcast: one batch row, no copy) approaches
    the output without dropout, within 5 standard deviations of the mean's sampling error."""
    n, p = (2000 if helpers.DEVICE == "cpu" else 200), 0.3
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal(s) for s in ((1, 4, 6), (1, 8, 6), (1, 8, 3)))
    T.manual_seed(0)
    out = sdpa(*(T.broadcast_to(T.asarray(x), (n, *x.shape[1:])) for x in (q, k, v)),
               dropout_p=p, path="fused")
    s = q[0] @ k[0].T / math.sqrt(6)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    sd = np.sqrt((w ** 2) @ (v[0] ** 2) * (1 / (1 - p) - 1) / n)
    err = np.abs(to_np(out).mean(0) - w @ v[0])
    assert (err < 5 * sd + 1e-9).all(), (err / sd).max()


def test_dropout_gradients_match_composed():
    rng = np.random.default_rng(10)
    base = [rng.standard_normal(s) for s in ((2, 7, 4), (2, 9, 4), (2, 9, 5))]
    g = T.asarray(rng.standard_normal((2, 7, 5)))
    res = []
    for path in ("fused", "composed"):
        args = [T.asarray(x).requires_grad_() for x in base]
        T.manual_seed(3)
        out = sdpa(*args, dropout_p=0.5, is_causal=True, path=path)
        out.backward(g)
        res.append([to_np(out)] + [to_np(a.grad) for a in args])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)

    def f(a, b, c):
        T.manual_seed(3)
        return sdpa(a, b, c, dropout_p=0.5, path="fused")
    small = [T.asarray(x[:1, :3]).requires_grad_() for x in base]
    assert ag.gradcheck(f, small)


def test_checkpoint_redraws_the_same_dropout_mask():
    rng = np.random.default_rng(16)
    base = [rng.standard_normal(s) for s in ((2, 6, 4), (2, 7, 4), (2, 7, 3))]
    grads = []
    for ckpt in (False, True):
        args = [T.asarray(x).requires_grad_() for x in base]
        T.manual_seed(4)
        f = (lambda a, b, c: sdpa(a, b, c, dropout_p=0.5, path="fused") * 2.0)
        out = ag.checkpoint(f, *args) if ckpt else f(*args)
        out.sum().backward()
        grads.append([to_np(out)] + [to_np(a.grad) for a in args])
    for a, b in zip(*grads):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------- masks, determinism, MHA

def test_fully_masked_rows_give_zero_and_zero_gradients():
    rng = np.random.default_rng(12)
    q, k, v = (rng.standard_normal(s) for s in ((2, 4, 3), (2, 5, 3), (2, 5, 2)))
    mask = rng.random((2, 4, 5)) < 0.6
    mask[:, 0] = True
    mask[1, 2] = False
    for path in ("fused", "composed"):
        out, (dq, dk, dv) = ours(q, k, v, mask, {}, path=path, g=np.ones((2, 4, 2)))
        o = to_np(out)
        assert np.isfinite(o).all() and (o[1, 2] == 0).all()
        assert (to_np(dq)[1, 2] == 0).all() and np.isfinite(to_np(dk)).all()
        close(out, ref_np(q, k, v, mask), "float64", what=path)
    torch = pytest.importorskip("torch")
    tout = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(x) for x in (q, k, v)), attn_mask=torch.tensor(mask))
    close(out, tout.numpy(), "float64", what="vs torch")


def test_float_mask_that_requires_grad_takes_the_composed_path():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    q, k, v, mk = (rng.standard_normal(s) for s in ((2, 4, 3), (2, 5, 3), (2, 5, 2), (4, 5)))
    m = T.asarray(mk).requires_grad_()
    out = sdpa(*(T.asarray(x) for x in (q, k, v)), m)
    assert out.grad_fn is not None
    out.sum().backward()
    tm = torch.tensor(mk, requires_grad=True)
    torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(x) for x in (q, k, v)), attn_mask=tm).sum().backward()
    close(m.grad, tm.grad.numpy(), "float64", what="dmask")


def test_deterministic_across_runs_and_thread_counts():
    q, k, v, mask, kw = case("tiles_causal", "float32", seed=14)
    if helpers.DEVICE == "cpu":   # past the kernels' parallel threshold
        q, k, v = (np.concatenate([x] * 16) for x in (q, k, v))
    g = np.ones((q.shape[0], q.shape[1], v.shape[-1]), np.float32)
    runs = []
    for n in (1, 2, 2):
        old = T.get_num_threads()
        T.set_num_threads(n)
        try:
            out, grads = ours(q, k, v, mask, kw, g=g)
        finally:
            T.set_num_threads(old)
        runs.append([to_np(out)] + [to_np(x) for x in grads])
    for r in runs[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(runs[0], r))


@pytest.mark.parametrize("dropout,causal", [(0.0, False), (0.5, False), (0.0, True)])
def test_multihead_attention_need_weights_false_uses_sdpa(dropout, causal):
    T.manual_seed(0)
    mha = MultiheadAttention(8, 2, dropout=dropout, batch_first=True)
    rng = np.random.default_rng(15)
    x = T.asarray(rng.standard_normal((2, 5, 8)).astype(np.float32))
    kpm = None if causal else T.asarray(rng.random((2, 5)) < 0.3)
    res = []
    for nw in (True, False):
        T.manual_seed(1)
        out, w = mha(x, x, x, key_padding_mask=kpm, need_weights=nw, is_causal=causal)
        assert (w is None) == (not nw)
        out.sum().backward()
        res.append((to_np(out), to_np(mha.in_proj_weight.grad)))
        mha.zero_grad()
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-4, atol=1e-5)


def test_memory_grows_linearly():
    """Forward + backward at L = S = 1024 peaks far below one L x S float32 matrix."""
    if helpers.DEVICE != "cpu":
        pytest.skip("measured on the CPU (the emulator's kernels keep the same buffers)")
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        peak = importlib.import_module("bench_attention").peak_memory(1024, heads=2, e=16)
    finally:
        sys.path.remove(str(bench))
    assert peak < 1024 * 1024 * 4 / 2, peak


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("args,kwargs,exc,match", [
    (((2, 5, 8), (2, 6, 7), (2, 6, 3)), {}, ValueError, r"same last dim .*query \(2, 5, 8\)"),
    (((2, 5, 8), (2, 6, 8), (2, 7, 3)), {}, ValueError, r"same sequence length"),
    (((2, 5, 8), (3, 6, 8), (3, 6, 3)), {}, ValueError, r"batch dims .* do not broadcast"),
    (((8,), (6, 8), (6, 3)), {}, ValueError, r"at least 2 dims"),
    (((2, 4, 5, 8), (2, 3, 6, 8), (2, 3, 6, 3)), {"enable_gqa": True}, ValueError,
     r"multiple of key's"),
    (((2, 4, 5, 8), (2, 2, 6, 8), (2, 1, 6, 3)), {"enable_gqa": True}, ValueError,
     r"same number of\s+heads"),
    (((2, 5, 8), (2, 6, 8), (2, 6, 3)), {"attn_mask": (5, 7)}, ValueError,
     r"attn_mask of shape \(5, 7\) does not broadcast to .*\(2, 5, 6\)"),
    (((2, 5, 8), (2, 6, 8), (2, 6, 3)), {"attn_mask": (5, 6), "is_causal": True}, ValueError,
     r"attn_mask and is_causal=True cannot both"),
    (((2, 5, 8), (2, 6, 8), (2, 6, 3)), {"attn_mask": "int"}, TypeError,
     r"attn_mask must be bool or floating, got int64"),
    (((2, 5, 8), (2, 6, 8), (2, 6, 3)), {"dropout_p": 1.5}, ValueError, r"dropout_p must be in"),
    (((2, 5, 8), (2, 6, 8), (2, 6, 3)), {"dtype": "int32"}, TypeError, r"real floating dtype"),
])
def test_errors(args, kwargs, exc, match):
    kwargs = dict(kwargs)
    d = kwargs.pop("dtype", "float32")
    q, k, v = (T.zeros(s, dtype=T.float32).astype(d) for s in args)
    m = kwargs.pop("attn_mask", None)
    if m == "int":
        m = T.zeros((5, 6), dtype=T.int64)
    elif m is not None:
        m = T.zeros(m, dtype=T.bool_)
    with pytest.raises(exc, match=match) as e:
        F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kwargs)
    assert "scaled_dot_product_attention" in str(e.value)


def test_mixed_dtypes_and_the_fused_path_refusal():
    a, b = T.zeros((2, 3), dtype=T.float32), T.zeros((2, 3), dtype=T.float64)
    with pytest.raises(TypeError, match=r"float32, float64, float32"):
        F.scaled_dot_product_attention(a, b, a)
    z = T.zeros((2, 0, 3))
    assert F.scaled_dot_product_attention(z, z, z).shape == (2, 0, 3)
    assert not FA.fused_ok(z, z, z)
    with pytest.raises(ValueError, match="fused kernels do not take"):
        sdpa(z, z, z, path="fused")
    e = T.zeros((2, 3, 4))
    assert to_np(F.scaled_dot_product_attention(e, T.zeros((2, 0, 4)), T.zeros((2, 0, 5)))).tolist() \
        == np.zeros((2, 3, 5)).tolist()


def test_docstring_examples():
    import doctest

    from nn import sdpa as S
    if helpers.DEVICE != "cpu":
        pytest.skip("the examples build on the default device, checked once")
    for mod in (S, FA):
        r = doctest.testmod(mod)
        assert r.failed == 0 and r.attempted > 0, mod.__name__
