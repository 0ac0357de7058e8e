"""nn.utils beyond gradient clipping: convert_parameters, parametrize, parametrizations
(weight_norm, spectral_norm, orthogonal), the older hook-based weight_norm / spectral_norm,
fusion, stateless.functional_call, skip_init and clip_grads_with_norm_.

Each is checked against its definition in NumPy (w = g v / ||v||, sigma = the largest singular
value, Q^T Q = I, conv -> bn in eval mode), for gradients (float64 central differences; an
optimizer step moves `original`), state_dict round trips and errors; against PyTorch's CPU
build in float64 where it is installed (with torch's random u, v and bases copied into ours);
and on the CPU and CUDA devices.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import autograd
import tensor as T
from nn.containers import Sequential
from nn.conv import Conv2d, ConvTranspose2d
from nn.linear import Linear
from nn.module import Module, Parameter
from nn.normalization import BatchNorm1d, BatchNorm2d
from nn.optim import SGD
from nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    get_total_norm,
    parameters_to_vector,
    parametrizations,
    parametrize,
    remove_spectral_norm,
    remove_weight_norm,
    skip_init,
    spectral_norm,
    vector_to_parameters,
    weight_norm,
)
from nn.utils.stateless import functional_call

F64 = T.float64


def npv(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), dtype=np.float64)   # (a copy)


def cnp(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy())   # (a copy, complex kept)


def lin(n_in: int, n_out: int, seed: int = 0, device=None) -> Linear:
    """A float64 Linear with reproducible weights."""
    m = Linear(n_in, n_out, dtype=F64, device=device)
    rng = np.random.default_rng(seed)
    with autograd.no_grad():
        m.weight.copy_(T.asarray(rng.standard_normal((n_out, n_in)), device=m.weight.device))
        m.bias.copy_(T.asarray(rng.standard_normal(n_out), device=m.weight.device))
    return m


def leaf(a):
    """A float64 leaf tensor that requires grad."""
    return T.asarray(np.asarray(a, dtype=np.float64)).requires_grad_(True)


def set_(t, a) -> None:
    with autograd.no_grad():
        t.copy_(T.asarray(np.asarray(a, dtype=np.float64), device=t.device))


class Symmetric(Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


class Scale(Module):
    def __init__(self, s: float):
        super().__init__()
        self.s = s

    def forward(self, X):
        return X * self.s

    def right_inverse(self, A):
        return A / self.s


# ------------------------------------------------------------------ convert_parameters

def test_parameters_to_vector_and_back():
    m = lin(3, 2)
    vec = parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    np.testing.assert_array_equal(npv(vec), np.concatenate([npv(m.weight).ravel(), npv(m.bias)]))
    w = m.weight
    vector_to_parameters(T.arange(8, dtype=F64), m.parameters())
    assert m.weight is w   # in place: an optimizer's references stay valid
    np.testing.assert_array_equal(npv(m.weight), [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(npv(m.bias), [6, 7])
    parameters_to_vector(m.parameters()).sum().backward()   # differentiable
    np.testing.assert_array_equal(npv(m.weight.grad), np.ones((2, 3)))


def test_vector_to_parameters_errors():
    m = lin(3, 2)
    with pytest.raises(TypeError, match="vector_to_parameters: expected a Tensor"):
        vector_to_parameters(np.zeros(8), m.parameters())
    with pytest.raises(ValueError, match="vec has 5 entries, the parameters have 8"):
        vector_to_parameters(T.zeros(5, dtype=F64), m.parameters())
    with pytest.raises(ValueError, match="at least one"):
        parameters_to_vector([])


# ------------------------------------------------------------------ parametrize

def test_register_parametrization_computes_weight_from_original():
    m = lin(3, 3)
    w0 = npv(m.weight)
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(m) is Linear
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    # right_inverse at registration: original = triu(W), so weight = sym(triu(W))
    np.testing.assert_allclose(npv(m.parametrizations.weight.original), np.triu(w0))
    np.testing.assert_allclose(npv(m.weight), np.triu(w0) + np.triu(w0, 1).T)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    # gradients reach original, and an optimizer step moves it
    x = T.asarray(np.ones((2, 3)))
    m(x).sum().backward()
    orig = m.parametrizations.weight.original
    g = npv(orig.grad)
    expect = np.triu(np.full((3, 3), 4.0))   # W_ij = W_ji = original_ij above the diagonal
    np.fill_diagonal(expect, 2.0)
    np.testing.assert_allclose(g, expect)
    before = npv(orig)
    SGD(m.parameters(), lr=0.1).step()
    np.testing.assert_allclose(npv(orig), before - 0.1 * g)
    W = npv(m.weight)
    np.testing.assert_allclose(W, W.T)


def test_assigning_runs_right_inverse_and_chains():
    m = lin(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Scale(2.0))
    assert len(m.parametrizations.weight) == 2
    A = np.arange(9.0).reshape(3, 3)
    S = A + A.T
    m.weight = T.asarray(S)        # original = triu(S / 2)
    np.testing.assert_allclose(npv(m.parametrizations.weight.original), np.triu(S / 2))
    np.testing.assert_allclose(npv(m.weight), S)
    with pytest.raises(KeyError, match="parametrized"):
        m.weight = Parameter(T.asarray(S))


def test_parametrization_gradcheck():
    m = lin(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Scale(0.5))
    x = T.asarray(np.random.default_rng(1).standard_normal((2, 3)))
    orig = leaf(np.random.default_rng(2).standard_normal((3, 3)))
    assert autograd.gradcheck(
        lambda o: functional_call(m, {"parametrizations.weight.original": o}, (x,)), (orig,))


def test_state_dict_round_trip_and_remove():
    a, b = lin(3, 3, seed=0), lin(3, 3, seed=1)
    for m in (a, b):
        parametrize.register_parametrization(m, "weight", Symmetric())
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(npv(b.weight), npv(a.weight))
    W = npv(a.weight)
    parametrize.remove_parametrizations(a, "weight")          # leave_parametrized=True
    assert type(a) is Linear and not parametrize.is_parametrized(a)
    assert list(a.state_dict()) == ["bias", "weight"]
    np.testing.assert_array_equal(npv(a.weight), W)
    orig = npv(b.parametrizations.weight.original)
    parametrize.remove_parametrizations(b, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(npv(b.weight), orig)
    assert isinstance(b.weight, Parameter)


def test_cached():
    m = lin(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert m.weight is not m.weight
    with parametrize.cached():
        w = m.weight
        assert m.weight is w
    assert m.weight is not w


def test_parametrize_errors():
    m = lin(3, 3)

    class Flat(Module):
        def forward(self, X):
            return X.reshape(-1)

    with pytest.raises(ValueError, match="no parameter, buffer or parametrized element"):
        parametrize.register_parametrization(m, "nope", Symmetric())
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", Flat())
    parametrize.register_parametrization(lin(3, 3), "weight", Flat(), unsafe=True)
    with pytest.raises(ValueError, match="has no parametrization on 'weight'"):
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(TypeError, match="must be a Module"):
        parametrize.register_parametrization(m, "weight", lambda x: x)


# ------------------------------------------------------------------ weight_norm

@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_definition(dim):
    m = lin(4, 3)
    W = npv(m.weight)
    parametrizations.weight_norm(m, dim=dim)
    p = m.parametrizations.weight
    g, v = npv(p.original0), npv(p.original1)
    norm = (np.linalg.norm(W) if dim is None else
            np.linalg.norm(W, axis=1 - dim, keepdims=True))
    np.testing.assert_allclose(g, norm.reshape(g.shape))
    np.testing.assert_allclose(npv(m.weight), W, rtol=1e-12)
    set_(p.original0, 2 * g)
    np.testing.assert_allclose(npv(m.weight), 2 * g * v / norm, rtol=1e-12)


def test_weight_norm_gradcheck_and_step():
    m = parametrizations.weight_norm(lin(3, 2))
    x = T.asarray(np.random.default_rng(3).standard_normal((4, 3)))
    g = leaf(np.array([[1.5], [0.7]]))
    v = leaf(np.random.default_rng(4).standard_normal((2, 3)))
    keys = ("parametrizations.weight.original0", "parametrizations.weight.original1")
    assert autograd.gradcheck(lambda a, b: functional_call(m, dict(zip(keys, (a, b))), x), (g, v))
    before = npv(m.parametrizations.weight.original1)
    m(x).sum().backward()
    SGD(m.parameters(), lr=0.5).step()
    assert not np.allclose(npv(m.parametrizations.weight.original1), before)


def test_old_weight_norm_hook():
    m = lin(4, 3)
    W = npv(m.weight)
    weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(npv(m.weight_g), np.linalg.norm(W, axis=1, keepdims=True))
    set_(m.weight_g, np.ones((3, 1)))
    x = T.asarray(np.ones((1, 4)))
    y = m(x)   # the pre-hook recomputes weight
    Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
    np.testing.assert_allclose(npv(y), np.ones((1, 4)) @ Wn.T + npv(m.bias), rtol=1e-12)
    y.sum().backward()
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    with pytest.raises(RuntimeError, match="two weight_norm hooks"):
        weight_norm(m)
    remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(npv(m.weight), Wn, rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        remove_weight_norm(m)


# ------------------------------------------------------------------ spectral_norm

def test_spectral_norm_definition_and_training_only_updates():
    m = parametrizations.spectral_norm(lin(5, 4), n_power_iterations=30)
    W = npv(m.parametrizations.weight.original)
    s = np.linalg.svd(W, compute_uv=False)[0]
    np.testing.assert_allclose(npv(m.weight), W / s, rtol=1e-6)
    assert np.linalg.svd(npv(m.weight), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-6)
    sn = m.parametrizations.weight[0]
    m.eval()
    u = npv(sn._u)
    _ = m.weight
    np.testing.assert_array_equal(npv(sn._u), u)     # no power iteration in eval mode
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0._u",
                                    "parametrizations.weight.0._v"]
    m.train()
    set_(m.parametrizations.weight.original, np.random.default_rng(13).standard_normal((4, 5)))
    buf = sn._u
    _ = m.weight
    assert sn._u is buf and not np.allclose(npv(sn._u), u)   # a power step, in place
    a = parametrizations.spectral_norm(lin(3, 2), n_power_iterations=1)
    x = T.asarray(np.ones((2, 3)))
    a(x).sum().backward()
    assert a.parametrizations.weight.original.grad is not None
    with pytest.raises(ValueError, match="n_power_iterations must be positive"):
        parametrizations.spectral_norm(lin(3, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="dim 3 is out of range"):
        parametrizations.spectral_norm(lin(3, 2), dim=3)


def test_spectral_norm_gradcheck_in_eval():
    m = parametrizations.spectral_norm(lin(3, 2)).eval()
    x = T.asarray(np.random.default_rng(5).standard_normal((2, 3)))
    w = leaf(np.random.default_rng(6).standard_normal((2, 3)))
    assert autograd.gradcheck(
        lambda o: functional_call(m, {"parametrizations.weight.original": o}, (x,)), (w,))


def test_old_spectral_norm_hook():
    base = lin(5, 4)
    rng = np.random.default_rng(3)   # well-separated singular values: 30 power iterations
    u0, _ = np.linalg.qr(rng.standard_normal((4, 4)))          # converge from any start
    v0, _ = np.linalg.qr(rng.standard_normal((5, 4)))
    with autograd.no_grad():
        base.weight.copy_(T.asarray(u0 @ np.diag([3.0, 1.0, 0.5, 0.2]) @ v0.T))
    m = spectral_norm(base, n_power_iterations=30)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    W = npv(m.weight_orig)
    x = T.asarray(np.ones((1, 5)))
    m(x).sum().backward()
    np.testing.assert_allclose(npv(m.weight), W / np.linalg.svd(W, compute_uv=False)[0],
                               rtol=1e-6)
    assert m.weight_orig.grad is not None
    u = npv(m.weight_u)
    m.eval()
    m(x)
    np.testing.assert_array_equal(npv(m.weight_u), u)
    remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        remove_spectral_norm(m)
    assert spectral_norm(ConvTranspose2d(2, 3, 2)).weight_u.shape == (3,)   # dim=1


# ------------------------------------------------------------------ orthogonal

@pytest.mark.parametrize("shape,omap", [((4, 4), None), ((5, 3), None), ((3, 5), None),
                                        ((4, 4), "cayley"), ((5, 3), "matrix_exp"),
                                        ((3, 5), "householder")])
def test_orthogonal(shape, omap):
    m = parametrizations.orthogonal(lin(shape[1], shape[0]), orthogonal_map=omap)
    rng = np.random.default_rng(7)
    x = T.asarray(rng.standard_normal((2, shape[1])))
    for _ in range(2):   # orthogonal at initialisation and after a gradient step
        Q = npv(m.weight)
        small = Q.T @ Q if shape[0] >= shape[1] else Q @ Q.T
        np.testing.assert_allclose(small, np.eye(min(shape)), atol=1e-12)
        m.zero_grad()
        (m(x) ** 2).sum().backward()
        SGD(m.parameters(), lr=0.1).step()


def test_orthogonal_keeps_an_orthogonal_weight_and_gradchecks():
    Q0 = np.linalg.qr(np.random.default_rng(8).standard_normal((3, 3)))[0]
    m = lin(3, 3)
    set_(m.weight, Q0)
    parametrizations.orthogonal(m)
    np.testing.assert_allclose(npv(m.weight), Q0, atol=1e-12)
    np.testing.assert_array_equal(npv(m.parametrizations.weight.original), -np.eye(3))
    x = T.asarray(np.ones((1, 3)))
    X = leaf(0.3 * np.random.default_rng(9).standard_normal((3, 3)))
    assert autograd.gradcheck(
        lambda o: functional_call(m, {"parametrizations.weight.original": o}, (x,)), (X,))


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_complex_is_unitary_and_trains(shape, omap):
    m = Linear(shape[1], shape[0], dtype=T.complex128)
    parametrizations.orthogonal(m, orthogonal_map=omap)
    for _ in range(2):   # unitary at initialisation and after a gradient step
        Q = cnp(m.weight)
        small = Q.conj().T @ Q if shape[0] >= shape[1] else Q @ Q.conj().T
        np.testing.assert_allclose(small, np.eye(min(shape)), atol=1e-12)
        m.zero_grad()
        T.real(m.weight * (1 + 2j)).sum().backward()
        assert cnp(m.parametrizations.weight.original.grad).dtype == np.complex128
        SGD(m.parameters(), lr=0.1).step()
    with pytest.raises(ValueError, match="householder map does not support complex"):
        parametrizations.orthogonal(Linear(3, 3, dtype=T.complex128), orthogonal_map="householder")


def test_geqrf_reflectors_rebuild_q():
    """geqrf's compact form (our own Householder steps): householder_product(a, tau) @ R == A,
    with LAPACK's conventions, so equal to torch.geqrf."""
    from nn.utils._weight_ops import geqrf, householder_product
    rng = np.random.default_rng(12)
    for shape, cplx in (((5, 3), False), ((4, 4), False), ((2, 4, 3), True), ((3, 0), False)):
        a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
        h, tau = geqrf(T.asarray(a))
        k = min(shape[-2:])
        Q = cnp(householder_product(h, tau))
        R = np.triu(cnp(h)[..., :k, :])
        np.testing.assert_allclose(Q @ R, a, atol=1e-13)
        eye = np.broadcast_to(np.eye(k), Q.shape[:-2] + (k, k))
        np.testing.assert_allclose(np.swapaxes(Q.conj(), -1, -2) @ Q, eye, atol=1e-13)
        t = cnp(tau)   # LAPACK's: 1 <= Re tau <= 2 and |tau - 1| <= 1, or 0
        assert (((t.real >= 1 - 1e-12) & (t.real <= 2 + 1e-12) & (abs(t - 1) <= 1 + 1e-12))
                | (t == 0)).all()
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
    h, tau = geqrf(T.asarray(a))
    th, ttau = torch.geqrf(torch.from_numpy(a))
    np.testing.assert_allclose(cnp(h), th.numpy(), atol=1e-13)
    np.testing.assert_allclose(cnp(tau), ttau.numpy(), atol=1e-13)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        parametrizations.orthogonal(lin(3, 3), orthogonal_map="svd")
    with pytest.raises(ValueError, match="expected a matrix"):
        parametrizations.orthogonal(lin(3, 3), "bias")
    with pytest.raises(ValueError, match="no parameter or buffer named 'w'"):
        parametrizations.orthogonal(lin(3, 3), "w")


# ------------------------------------------------------------------ fusion

def test_fuse_conv_bn_and_linear_bn_equal_the_sequence():
    rng = np.random.default_rng(10)
    for transpose in (False, True):
        conv = (ConvTranspose2d if transpose else Conv2d)(2, 3, 3, dtype=F64)
        bn = BatchNorm2d(3, dtype=F64)
        for t in (bn.weight, bn.bias, bn.running_mean):
            set_(t, rng.standard_normal(3))
        set_(bn.running_var, rng.uniform(0.5, 2, 3))
        conv.eval(), bn.eval()
        x = T.asarray(rng.standard_normal((2, 2, 5, 5)))
        fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
        np.testing.assert_allclose(npv(fused(x)), npv(bn(conv(x))), rtol=1e-10, atol=1e-12)
        assert fused is not conv and fused.weight.requires_grad
    linear, bn1 = lin(3, 4).eval(), BatchNorm1d(4, dtype=F64).eval()
    set_(bn1.running_mean, rng.standard_normal(4))
    set_(bn1.running_var, rng.uniform(0.5, 2, 4))
    x = T.asarray(rng.standard_normal((5, 3)))
    np.testing.assert_allclose(npv(fuse_linear_bn_eval(linear, bn1)(x)), npv(bn1(linear(x))),
                               rtol=1e-10)
    w, b = fuse_conv_bn_weights(conv.weight, None, bn.running_mean, bn.running_var, 1e-5, None,
                                None, transpose=True)   # (conv: the ConvTranspose2d)
    np.testing.assert_allclose(npv(b), -npv(bn.running_mean) / np.sqrt(npv(bn.running_var) + 1e-5))
    with pytest.raises(ValueError, match="only for eval mode"):
        fuse_conv_bn_eval(conv.train(), bn)
    with pytest.raises(ValueError, match="out_features must equal bn.num_features"):
        fuse_linear_bn_eval(linear, BatchNorm1d(3, dtype=F64).eval())


# ------------------------------------------------------------------ clipping, functional_call, skip_init

def test_clip_grads_with_norm_and_foreach():
    p = Parameter(T.zeros(2, dtype=F64))
    p.grad = T.asarray([3.0, 4.0])
    total = get_total_norm([p.grad], 2.0, foreach=None)
    clip_grads_with_norm_([p], 1.0, total, foreach=None)
    np.testing.assert_allclose(npv(p.grad), [0.6, 0.8], rtol=1e-5)
    p.grad = T.asarray([3.0, 4.0])
    assert float(clip_grad_norm_([p], 1.0, foreach=True)) == 5.0
    clip_grad_value_([p], 0.5, foreach=False)
    with pytest.raises(RuntimeError, match="non-finite"):
        get_total_norm([T.asarray([np.inf])], error_if_nonfinite=True)


def test_functional_call_swaps_and_restores():
    m = Sequential(lin(3, 2), lin(2, 1, seed=1))
    own = {k: npv(v) for k, v in m.state_dict().items()}
    w = leaf(np.ones((2, 3)))
    x = T.asarray(np.ones((1, 3)))
    y = functional_call(m, {"0.weight": w}, x)
    y.sum().backward()
    assert w.grad is not None and m[0].weight.grad is None
    assert {k: npv(v) for k, v in m.state_dict().items()}.keys() == own.keys()
    np.testing.assert_array_equal(npv(m[0].weight), own["0.weight"])

    class Boom(Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(T.zeros(1, dtype=F64))

        def forward(self, x):
            raise RuntimeError("boom")

    b = Boom()
    w0 = b.w
    with pytest.raises(RuntimeError, match="boom"):
        functional_call(b, {"w": T.ones(1, dtype=F64)}, x)
    assert b.w is w0                            # restored after the exception
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(m, {"0.weight": w}, x, strict=True)
    with pytest.raises(RuntimeError, match="Unexpected key"):
        functional_call(b, {"w": w0, "zz": w0}, x, strict=True)


def test_functional_call_ties_weights():
    class Tied(Module):
        def __init__(self):
            super().__init__()
            self.a = lin(2, 2)
            self.b = lin(2, 2)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    eye = T.eye(2, dtype=F64)
    x = T.asarray(np.ones((1, 2)))
    zero = {"a.bias": T.zeros(2, dtype=F64), "b.bias": T.zeros(2, dtype=F64)}
    np.testing.assert_allclose(npv(functional_call(m, {"a.weight": eye, **zero}, x)), [[1, 1]])
    y = functional_call(m, {"a.weight": eye, **zero}, x, tie_weights=False)
    assert not np.allclose(npv(y), [[1, 1]])
    with pytest.raises(ValueError, match="tied"):
        functional_call(m, {"a.weight": eye, "b.weight": 2 * eye}, x)


def test_skip_init():
    class Sevens(Module):
        def __init__(self, n):
            super().__init__()
            self.w = Parameter(T.zeros(n, dtype=F64))
            self.reset_parameters()

        def reset_parameters(self):
            with autograd.no_grad():
                self.w.fill_(7.0)

    reset = Linear.__dict__["reset_parameters"]
    m = skip_init(Linear, 5, 1, dtype=F64)
    assert isinstance(m, Linear) and m.weight.shape == (1, 5) and m.weight.requires_grad
    assert Linear.__dict__["reset_parameters"] is reset   # put back
    assert npv(skip_init(Sevens, 3).w).tolist() == [0.0, 0.0, 0.0]
    assert npv(Sevens(3).w).tolist() == [7.0, 7.0, 7.0]
    with pytest.raises(RuntimeError, match="expected a Module subclass"):
        skip_init(object)


# ------------------------------------------------------------------ devices

def test_parametrizations_on_device(device):
    """weight_norm, spectral_norm and orthogonal: forward and backward on the device agree
    with the CPU (the device modules load the CPU ones' state dicts: same u, v and base)."""
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    results, cpu_mods = [], []
    for dev in ("cpu", device):
        mods = [parametrizations.weight_norm(lin(3, 2, device=dev)),
                parametrizations.spectral_norm(lin(3, 2, device=dev)),
                parametrizations.orthogonal(lin(3, 3, device=dev))]
        if cpu_mods:
            for m, ref in zip(mods, cpu_mods):
                m.load_state_dict(ref.state_dict())
        else:
            cpu_mods = [copy.deepcopy(m) for m in mods]
        xs = T.asarray(x, device=dev)
        sum(m(xs).sum() for m in mods).backward()
        assert str(mods[0].weight.device).split(":")[0] == dev
        results.append([npv(m.weight) for m in mods]
                       + [npv(p.grad) for m in mods for p in m.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ PyTorch

def _torch_linear(torch, m):
    t = torch.nn.Linear(m.in_features, m.out_features).double()
    with torch.no_grad():
        t.weight.copy_(torch.from_numpy(npv(m.weight)))
        t.bias.copy_(torch.from_numpy(npv(m.bias)))
    return t


def _load_from_torch(m, t) -> None:
    m.load_state_dict({k: T.asarray(v.detach().numpy(), device=m.bias.device)
                       for k, v in t.state_dict().items()})


def test_parametrizations_match_torch():
    torch = pytest.importorskip("torch")
    P = torch.nn.utils.parametrizations
    x = np.random.default_rng(11).standard_normal((2, 4))
    for ours, theirs, kw in [(parametrizations.weight_norm, P.weight_norm, {"dim": 1}),
                             (parametrizations.spectral_norm, P.spectral_norm, {}),
                             (parametrizations.orthogonal, P.orthogonal, {}),
                             (parametrizations.orthogonal, P.orthogonal,
                              {"use_trivialization": False})]:
        m = lin(4, 3)
        t = _torch_linear(torch, m)
        ours(m, **kw)
        theirs(t, **kw)
        assert list(m.state_dict()) == list(t.state_dict())
        _load_from_torch(m, t)     # spectral: torch's u, v; orthogonal: its random base
        for _ in range(2):         # (spectral norm: a power step at each read in training)
            y, ty = m(T.asarray(x)), t(torch.from_numpy(x))
            np.testing.assert_allclose(npv(y), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
            y.sum().backward()
            ty.sum().backward()
            name = "original" if kw.get("dim") is None else "original1"
            np.testing.assert_allclose(npv(getattr(m.parametrizations.weight, name).grad),
                                       getattr(t.parametrizations.weight, name).grad.numpy(),
                                       rtol=1e-9, atol=1e-12)


def test_hooks_and_fusion_match_torch():
    torch = pytest.importorskip("torch")
    import warnings
    x = np.random.default_rng(12).standard_normal((2, 4))
    for ours, theirs in [(weight_norm, torch.nn.utils.weight_norm),
                         (spectral_norm, torch.nn.utils.spectral_norm)]:
        m = lin(4, 3)
        t = _torch_linear(torch, m)
        ours(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            theirs(t)
        _load_from_torch(m, t)
        for _ in range(2):
            np.testing.assert_allclose(npv(m(T.asarray(x))),
                                       t(torch.from_numpy(x)).detach().numpy(), rtol=1e-10)
    conv, bn = torch.nn.Conv2d(2, 3, 3).double().eval(), torch.nn.BatchNorm2d(3).double().eval()
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(-1, 1)
    ours = Conv2d(2, 3, 3, dtype=F64).eval()
    ours.weight.data = T.asarray(conv.weight.detach().numpy())
    ours.bias.data = T.asarray(conv.bias.detach().numpy())
    ob = BatchNorm2d(3, dtype=F64).eval()
    ob.load_state_dict({k: T.asarray(v.numpy()) for k, v in bn.state_dict().items()})
    f, tf = fuse_conv_bn_eval(ours, ob), torch.nn.utils.fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(npv(f.weight), tf.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(npv(f.bias), tf.bias.detach().numpy(), rtol=1e-12)


def test_stack_module_state_ensembles_with_functional_call_and_vmap():
    from autograd.func import vmap
    from nn.activation import ReLU
    from nn.utils.stateless import functional_call, stack_module_state
    models = [Sequential(Linear(3, 4), BatchNorm1d(4), ReLU(), Linear(4, 2)) for _ in range(3)]
    for i, m in enumerate(models):
        m.eval()
        m[1].running_mean.fill_(0.1 * i)
    params, buffers = stack_module_state(models)
    assert params["0.weight"].shape == (3, 4, 3) and params["0.weight"].is_leaf
    assert params["0.weight"].requires_grad and not buffers["1.running_mean"].requires_grad
    np.testing.assert_allclose(buffers["1.running_mean"].numpy()[:, 0], [0.0, 0.1, 0.2], rtol=1e-7)
    x = T.randn(5, 3, dtype=T.float32)
    out = vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, x)
    np.testing.assert_allclose(out.numpy(), np.stack([m(x).detach().numpy() for m in models]),
                               rtol=1e-6, atol=1e-6)
    out.sum().backward()   # gradients reach the stacked leaves, not the models
    assert params["3.bias"].grad.shape == (3, 2) and models[0][3].bias.grad is None
    models[1].train()
    with pytest.raises(RuntimeError, match="training/eval"):
        stack_module_state(models)
    with pytest.raises(RuntimeError, match="architecture"):
        stack_module_state([Linear(3, 2), Sequential(Linear(3, 2))])
    with pytest.raises(RuntimeError, match="at least one"):
        stack_module_state([])
