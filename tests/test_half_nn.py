"""16-bit inputs of softmax / log_softmax (tensor), silu and gelu (nn.functional): computed in
float32 and rounded once to the input's dtype, as PyTorch's (they ran in 16 bits, rounding at
every step: 2792 of 4773 float16 softmax values were off the float64 value rounded once)."""
import math

import numpy as np
import pytest

import nn
import tensor as T

F = nn.functional
X = np.random.default_rng(0).standard_normal((37, 129)) * 3


def _once(v64: np.ndarray, d: str) -> np.ndarray:
    """The float64 value v64 rounded once to d, back in float64."""
    return T.asarray(v64).astype(d).astype("float64").numpy()


def _softmax64(v, log):
    z = v - v.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True)) if log else np.exp(z) / np.exp(z).sum(1, keepdims=True)


@pytest.mark.parametrize("d", ["float16", "bfloat16"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_16_bit_rounds_once(d, log):
    x = T.asarray(X).astype(d)
    fn = T.log_softmax if log else T.softmax
    got = fn(x, dim=1)
    assert got.dtype == x.dtype
    want = _once(_softmax64(x.astype("float64").numpy(), log), d)
    np.testing.assert_array_equal(got.astype("float64").numpy(), want)
    # dtype= still names the result's dtype; the gradient reaches a 16-bit input
    assert fn(x, dim=1, dtype=T.float32).dtype == T.float32
    xg = x[:3, :5].detach().requires_grad_(True)
    (fn(xg, dim=1) * T.arange(5)).sum().backward()
    assert xg.grad.dtype == x.dtype and xg.grad.shape == (3, 5)


def _silu64(v):
    return v / (1 + np.exp(-v))


def _gelu64(v, approximate):
    if approximate == "none":
        return 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))
    return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))


@pytest.mark.parametrize("d", ["float16", "bfloat16"])
@pytest.mark.parametrize("which", ["silu", "gelu", "gelu_tanh"])
def test_activations_of_16_bit_round_once(d, which):
    x = T.asarray(X.reshape(-1)).astype(d)
    v = x.astype("float64").numpy()
    if which == "silu":
        got, want = F.silu(x), _silu64(v)
    else:
        approx = "none" if which == "gelu" else "tanh"
        got, want = F.gelu(x, approximate=approx), _gelu64(v, approx)
    assert got.dtype == x.dtype
    off = got.astype("float64").numpy() != _once(want, d)
    # float32 inside: a 16-bit result differs from the float64 one rounded once only where the
    # float32 value sits near a 16-bit rounding boundary or float32 cancels (1 + erf(x / sqrt 2)
    # for x < -2: as PyTorch's, 4-7% here); in 16 bits 20-45% of them were off
    assert off.mean() < 0.1, off.mean()


def test_silu_in_place_of_16_bit():
    x = T.asarray(X[0]).astype("bfloat16")
    want = F.silu(x)
    y = x.clone()
    assert F.silu(y, inplace=True) is y
    np.testing.assert_array_equal(y.astype("float64").numpy(), want.astype("float64").numpy())
