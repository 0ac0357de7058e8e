"""16-bit matrix products with an addend, rounded once (gemm.c's gemm_add_<sfx>, gemm.cuh's
ADD kernels, backend gemm(..., d=, alpha=, beta=)): nn.functional.linear with a bias, addmm,
addmv, baddbmm, addbmm against PyTorch's CPU results, which sum in float32, add beta * input
to the float32 accumulator and round once (addbmm: once per batch).

Our float32 sums run in another order than PyTorch's, so a few results may differ from its in
the last bits: a difference counts as explained only where ours is the 16-bit rounding of a
value within the float32 accumulation error bound of the exact (float64) result, and only a
few (3%) may differ. Rounding the product before adding (the fixed bug: a third of the results
differed) fails that: its error is half a 16-bit step of the product, not a float32 one.
Both devices (the CUDA cases on the emulator without a GPU: small shapes).
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from tensor import elementwise as ew
from tensor.backend import backend_for

torch = pytest.importorskip("torch")

_T = {torch.float16: T.float16, torch.bfloat16: T.bfloat16, torch.float32: T.float32,
      torch.float64: T.float64}
HALF = [torch.float16, torch.bfloat16]


def _ours(x, d, device, view=None):
    """torch tensor x as ours on device; view "t": a transposed view of a copy, "s": a view
    stepping over every other column of a wider matrix."""
    a = x.double().numpy()
    if view == "t":
        return T.tensor(np.ascontiguousarray(a.T)).astype(_T[d]).to(device).T
    if view == "s":
        w = np.zeros(a.shape[:-1] + (2 * a.shape[-1],))
        w[..., ::2] = a
        return T.tensor(w).astype(_T[d]).to(device)[..., ::2]
    return T.tensor(a).astype(_T[d]).to(device)


def _torch(t, d):
    return torch.from_numpy(t.to("cpu").astype(T.float64).numpy()).to(d)


def _step(x: np.ndarray, d) -> np.ndarray:
    """The 16-bit spacing at |x| (the larger one at a power of two)."""
    mant = 10 if d is torch.float16 else 7
    e = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** -14 if d is torch.float16 else 2.0 ** -126)))
    return 2.0 ** (e - mant)


def _check(got, want, exact, bound, d, what=""):
    """got == want bitwise but where explained (module docstring): at most 3% of the results
    (and 2) differ, each the 16-bit rounding of a value within the float32 bound of exact."""
    g, w = got.double().numpy(), want.double().numpy()
    diff = ~((g == w) | (np.isnan(g) & np.isnan(w)))
    if not diff.any():
        return
    gd, wd, ex, bd = g[diff], w[diff], exact[diff], bound[diff]
    bad = ~(np.abs(gd - ex) <= bd + _step(gd, d) / 2 * 1.0001)
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {g.size} differ from torch beyond the "
                           f"float32 sum order: ours {gd[bad][:4]}, torch {wd[bad][:4]}, "
                           f"exact {ex[bad][:4]}")
    assert diff.sum() <= max(2, 0.03 * g.size), f"{what}: {int(diff.sum())} of {g.size} differ from torch"


def _exact(inp, a, b, alpha, beta):
    """(exact float64 result, float32 accumulation bound) of beta * inp + alpha * (a @ b)."""
    a64, b64, i64 = a.double().numpy(), b.double().numpy(), inp.double().numpy()
    k = a64.shape[-1]
    prod = a64 @ b64
    mag = np.abs(a64) @ np.abs(b64)
    ex = (beta * i64 if beta else 0) + alpha * prod
    bound = (k + 2) * 2.0 ** -24 * (abs(alpha) * mag + abs(beta) * np.abs(i64) + np.abs(ex)) + 1e-30
    return np.broadcast_to(ex, prod.shape), np.broadcast_to(bound, prod.shape)


SHAPES = [(37, 64, 64), (1, 50, 30), (30, 50, 1), (64, 1, 33), (5, 0, 7), (3, 700, 20), (9, 130, 5)]


@pytest.mark.parametrize("d", HALF, ids=["f16", "bf16"])
@pytest.mark.parametrize("M,K,N", SHAPES)
def test_linear_bias_rounds_once_as_torch(device, d, M, K, N):
    if device == "cuda" and M * K * N > 40000:
        pytest.skip("the emulator is slow: small shapes on cuda")
    g = torch.Generator().manual_seed(M * 1000 + K * 10 + N)
    x = torch.randn(M, K, generator=g).to(d)
    w = torch.randn(N, K, generator=g).to(d)
    b = torch.randn(N, generator=g).to(d)
    want = torch.nn.functional.linear(x, w, b)
    got = _torch(nn.functional.linear(_ours(x, d, device), _ours(w, d, device), _ours(b, d, device)), d)
    ex, bound = _exact(b, x, w.T, 1.0, 1.0)
    _check(got, want, ex, bound, d, f"linear {M}x{K}x{N}")


@pytest.mark.parametrize("d", HALF, ids=["f16", "bf16"])
def test_linear_3d_input_float32_bias_and_views(device, d):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 7, 48, generator=g).to(d)
    w = torch.randn(24, 48, generator=g).to(d)
    b = torch.randn(24, generator=g).to(d)
    want = torch.nn.functional.linear(x, w, b)
    ox, ow = _ours(x, d, device, "s"), _ours(w, d, device, "t").T.T   # strided input
    got = _torch(nn.functional.linear(ox, ow, _ours(b, d, device)), d)
    ex, bound = _exact(b, x.reshape(-1, 48), w.T, 1.0, 1.0)
    _check(got.reshape(-1, 24), want.reshape(-1, 24), ex, bound, d, "linear 3-d")
    # a float32 bias is added in float32 too: one rounding of the 16-bit result
    b32 = torch.randn(24, generator=g)
    ob32 = _ours(b32, torch.float32, device)
    got = _torch(nn.functional.linear(_ours(x, d, device), _ours(w, d, device), ob32), d)
    want = (x.float() @ w.float().T + b32).to(d)   # (torch refuses mixed dtypes)
    ex, bound = _exact(b32, x.reshape(-1, 48), w.T, 1.0, 1.0)
    _check(got.reshape(-1, 24), want.reshape(-1, 24), ex, bound, d, "linear, float32 bias")


@pytest.mark.parametrize("d", HALF, ids=["f16", "bf16"])
@pytest.mark.parametrize("alpha,beta", [(1, 1), (0.5, 2.0), (-1.5, 0.25), (3, 0), (0.3, 1.7)])
@pytest.mark.parametrize("inp_shape", [(20, 12), (12,), (20, 1), ()], ids=["full", "row", "col", "0d"])
@pytest.mark.parametrize("views", [(None, None), ("t", "t"), ("s", "t")], ids=["nn", "tt", "st"])
def test_addmm_matches_torch(device, d, alpha, beta, inp_shape, views):
    g = torch.Generator().manual_seed(7)
    a = torch.randn(20, 40, generator=g).to(d)
    b = torch.randn(40, 12, generator=g).to(d)
    inp = torch.randn(inp_shape, generator=g).to(d)
    if beta == 0:
        inp = torch.full(inp_shape, float("nan")).to(d)   # beta 0: not read, NaN included
    want = torch.addmm(inp, a, b, beta=beta, alpha=alpha)
    got = _torch(T.addmm(_ours(inp, d, device), _ours(a, d, device, views[0]), _ours(b, d, device, views[1]),
                         beta=beta, alpha=alpha), d)
    ex, bound = _exact(inp, a, b, alpha, beta)
    _check(got, want, ex, bound, d, f"addmm alpha={alpha} beta={beta} input {inp_shape}")
    assert not np.isnan(got.double().numpy()).any()


@pytest.mark.parametrize("d", HALF, ids=["f16", "bf16"])
@pytest.mark.parametrize("M,K,N", [(1, 9, 17), (17, 9, 1), (6, 0, 5), (6, 1, 5), (2, 3000, 3)])
def test_addmm_edge_shapes(device, d, M, K, N):
    g = torch.Generator().manual_seed(M + K + N)
    a, b = torch.randn(M, K, generator=g).to(d), torch.randn(K, N, generator=g).to(d)
    inp = torch.randn(M, N, generator=g).to(d)
    want = torch.addmm(inp, a, b, beta=0.5, alpha=2)
    oi, oa, ob = (_ours(t, d, device) for t in (inp, a, b))
    got = _torch(T.addmm(oi, oa, ob, beta=0.5, alpha=2), d)
    ex, bound = _exact(inp, a, b, 2.0, 0.5)
    _check(got, want, ex, bound, d, f"addmm {M}x{K}x{N}")


@pytest.mark.parametrize("d", HALF, ids=["f16", "bf16"])
def test_addmm_alpha_zero_ignores_the_product(device, d):
    """alpha 0 drops the product, an inf in it included (the project's rule, as PyTorch's for
    float32; PyTorch's 16-bit CPU kernel gives NaN there)."""
    a = T.tensor([[float("inf"), 1.0], [1.0, 1.0]]).astype(_T[d]).to(device)
    inp = T.tensor([[1.0, -2.0], [3.0, 4.0]]).astype(_T[d]).to(device)
    got = T.addmm(inp, a, T.eye(2).astype(_T[d]).to(device), alpha=0, beta=2)
    assert got.to("cpu").astype(T.float32).tolist() == [[2.0, -4.0], [6.0, 8.0]]


@pytest.mark.parametrize("d", HALF, ids=["f16", "bf16"])
def test_addmv_baddbmm_addbmm_match_torch(device, d):
    g = torch.Generator().manual_seed(3)
    mat, vec, i1 = torch.randn(19, 70, generator=g).to(d), torch.randn(70, generator=g).to(d), \
        torch.randn(19, generator=g).to(d)
    got = _torch(T.addmv(_ours(i1, d, device), _ours(mat, d, device, "t"), _ours(vec, d, device),
                         beta=0.5), d)
    ex, bound = _exact(i1[:, None], mat, vec[:, None], 1.0, 0.5)
    _check(got, torch.addmv(i1, mat, vec, beta=0.5), ex[:, 0], bound[:, 0], d, "addmv")
    b1, b2 = torch.randn(3, 7, 20, generator=g).to(d), torch.randn(3, 20, 9, generator=g).to(d)
    for ib in (torch.randn(7, 1, generator=g).to(d), torch.randn(3, 7, 9, generator=g).to(d)):
        got = _torch(T.baddbmm(_ours(ib, d, device), _ours(b1, d, device), _ours(b2, d, device, "t"),
                               alpha=-2), d)
        ex, bound = _exact(ib, b1, b2, -2.0, 1.0)
        _check(got, torch.baddbmm(ib, b1, b2, alpha=-2), ex, bound, d, f"baddbmm input {tuple(ib.shape)}")
    # addbmm: PyTorch rounds after each batch (result = beta * input + alpha * b1[0] @ b2[0], then
    # + alpha * b1[i] @ b2[i]); so do we
    ib = torch.randn(7, 9, generator=g).to(d)
    want = torch.addbmm(ib, b1, b2, beta=0.5, alpha=1.5)
    got = _torch(T.addbmm(_ours(ib, d, device), _ours(b1, d, device), _ours(b2, d, device), beta=0.5,
                          alpha=1.5), d)
    r = torch.addmm(ib, b1[0], b2[0], beta=0.5, alpha=1.5)
    ex, bound = _exact(ib, b1[0], b2[0], 1.5, 0.5)
    for i in (1, 2):   # (the last step's bound: its input is PyTorch's rounded partial sum)
        ex, bound = _exact(r, b1[i], b2[i], 1.5, 1.0)
        r = torch.addmm(r, b1[i], b2[i], alpha=1.5)
    if not (got == want).all():   # an earlier step's sum order may flip a rounding: then the
        assert (got.double() - want.double()).abs().max() <= 4 * _step(want.double().numpy(), d).max()
    else:
        _check(got, want, ex, bound, d, "addbmm")
    empty = _torch(T.addbmm(_ours(ib, d, device), _ours(b1[:0], d, device), _ours(b2[:0], d, device),
                            beta=0.5), d)
    assert torch.equal(empty, torch.addbmm(ib, b1[:0], b2[:0], beta=0.5))


@pytest.mark.parametrize("tdt", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("alpha,beta", [(1, 1), (0.3, 1.7), (2, 0), (-1, 0.5)])
def test_float32_float64_keep_the_bits_of_the_separate_ops(device, tdt, alpha, beta):
    """gemm_add for float32 / float64 gives the bits of alpha * (a @ b) + beta * d as separate
    ops (each rounded), which is what addmm computed before."""
    rng = np.random.default_rng(5)
    d = _T[tdt]
    for M, K, N in [(13, 70, 9), (1, 300, 40), (40, 300, 1), (5, 0, 4), (130, 200, 70)]:
        a = T.tensor(rng.standard_normal((M, K))).astype(d).to(device)
        b = T.tensor(rng.standard_normal((K, N))).astype(d).to(device).T.copy().T   # transposed
        inp = T.tensor(rng.standard_normal((N,))).astype(d).to(device)
        prod = T.matmul(a, b)
        scaled = prod if alpha == 1 else prod * alpha
        want = scaled + (0 if beta == 0 else (inp if beta == 1 else inp * beta))
        c = ew.empty_tensor((M, N), d, a.device)
        backend_for(a.device).gemm(a, b, c, d=T.broadcast_to(inp, (M, N)), alpha=alpha, beta=beta)
        np.testing.assert_array_equal(c.to("cpu").numpy(), want.to("cpu").numpy(), f"{M}x{K}x{N}")


def test_gradients_match_torch_and_the_value_does_not_depend_on_tracking(device):
    g = torch.Generator().manual_seed(11)
    for d in HALF + [torch.float32]:
        a, b, i = torch.randn(6, 5, generator=g), torch.randn(5, 4, generator=g), torch.randn(4, generator=g)
        a, b, i = (x.to(d).requires_grad_() for x in (a, b, i))
        out = torch.addmm(i, a, b, beta=0.5, alpha=2.0)
        out.float().sum().backward()
        ours = [_ours(x.detach(), d, device).requires_grad_() for x in (a, b, i)]
        o = T.addmm(ours[2], ours[0], ours[1], beta=0.5, alpha=2.0)
        plain = T.addmm(*(x.detach() for x in (ours[2], ours[0], ours[1])), beta=0.5, alpha=2.0)
        np.testing.assert_array_equal(o.detach().to("cpu").astype(T.float32).numpy(),
                                      plain.to("cpu").astype(T.float32).numpy())
        o.astype(T.float32).sum().backward()
        for x, y in zip(ours, (a, b, i)):
            np.testing.assert_allclose(x.grad.to("cpu").astype(T.float32).numpy(), y.grad.float().numpy(),
                                       rtol=1e-2, atol=1e-2)
    # linear: its rule, the bias's gradient included
    x, w, bb = (T.tensor(np.random.default_rng(2).standard_normal(s)).to(device).requires_grad_()
                for s in ((3, 4), (5, 4), (5,)))
    gx, gw, gb = autograd.grad(nn.functional.linear(x, w, bb).sum(), [x, w, bb])
    tx, tw, tb = (torch.tensor(t.detach().to("cpu").numpy(), requires_grad=True) for t in (x, w, bb))
    torch.nn.functional.linear(tx, tw, tb).sum().backward()
    for ours_g, t in ((gx, tx), (gw, tw), (gb, tb)):
        np.testing.assert_allclose(ours_g.to("cpu").numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_compiled_linear_replays_the_eager_bits(device):
    lin = nn.Linear(16, 8)
    lin.to(device)
    lin.half()

    def f(x):
        with autograd.no_grad():
            return lin(x)
    step = T.compile(f)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = T.tensor(rng.standard_normal((5, 16))).astype(T.float16).to(device)
        np.testing.assert_array_equal(step(x).to("cpu").numpy(), lin(x).to("cpu").numpy())
    assert step.stats()["replays"] >= 1


def test_addend_errors_are_clear(device):
    a = T.ones((2, 3), dtype=T.float16, device=device)
    b = T.ones((3, 4), dtype=T.float16, device=device)
    c = ew.empty_tensor((2, 4), T.float16, a.device)
    with pytest.raises(TypeError, match="gemm_add: the addend is float64"):
        backend_for(a.device).gemm(a, b, c, d=T.ones((2, 4), dtype=T.float64, device=device))
    with pytest.raises(ValueError, match="addmm: shapes \\(3,\\) and \\(2, 4\\) cannot be broadcast"):
        T.addmm(T.ones((3,), dtype=T.float16, device=device), a, b)
    with pytest.raises(TypeError, match="addmm: input is float32 but the product is float16"):
        T.addmm(T.ones((4,), dtype=T.float32, device=device), a, b)
    with pytest.raises(ValueError, match="baddbmm: batch sizes differ"):
        T.baddbmm(T.ones((4,), dtype=T.float16, device=device), a[None].repeat(2, 0), b[None])


def test_pre_sm80_16bit_path_rounds_once(monkeypatch):
    """Before sm_80 (no 16-bit tensor-core kernel) the CUDA backend runs the float32 kernel on
    float32 copies with the addend and rounds once: the same value as the CPU's."""
    from conftest import CUDA_OK
    if not CUDA_OK:
        pytest.skip("no CUDA device (nor the emulator)")
    from tensor.cuda import gemm as G
    monkeypatch.setattr(G, "tensor_cores", lambda device: False)
    g = torch.Generator().manual_seed(4)
    for d in HALF:
        a, b, i = (torch.randn(s, generator=g).to(d) for s in ((9, 33), (33, 6), (6,)))
        want = torch.addmm(i, a, b, beta=2.0, alpha=0.5)
        got = _torch(T.addmm(_ours(i, d, "cuda"), _ours(a, d, "cuda"), _ours(b, d, "cuda"), beta=2.0,
                             alpha=0.5), d)
        ex, bound = _exact(i, a, b, 0.5, 2.0)
        _check(got, want, ex, bound, d, "addmm before sm_80")
