"""Two silent wrong results (numeric hunt 8): vector_norm of values whose powers overflow or
underflow (3e38 squared is inf in float32, 1e-30 squared 0), now scaled by a power of two; and
the regularized incomplete gamma functions for a >= 1e5 (P(1e10, 1e10) was 0.079 for 0.5), now
Temme's uniform expansion. References: float64 sums and a 40-digit series in mpmath (values
hard-coded: SciPy's own P is 20% off at a = 1e8, x = a - 8 sqrt(a))."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T


def _np(t):
    return t.to_device("cpu").numpy()


@pytest.mark.usefixtures("device")
def test_vector_norm_neither_overflows_nor_underflows(device):
    big = np.array([1e38, 1e38, 5e37], np.float32)
    tiny = np.array([[1e-30, 2e-30], [1e-40, 3e-40]], np.float32)   # (the second row subnormal)
    got = T.linalg.vector_norm(T.asarray(big, device=device)).item()
    assert got == pytest.approx(1.5e38, rel=1e-6)   # torch and the plain sum give inf
    assert T.linalg.vector_norm(T.asarray(big, device=device), ord=3).item() == \
        pytest.approx(float(np.cbrt((big.astype(np.float64) ** 3).sum())), rel=1e-6)
    got = _np(T.linalg.vector_norm(T.asarray(tiny, device=device), axis=1, keepdims=True))
    want = np.sqrt((tiny.astype(np.float64) ** 2).sum(axis=1, keepdims=True))
    assert got.shape == (2, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=4e-45)   # (a subnormal result: its quantum)
    # ordinary values: the same as before (scaling by powers of two is exact)
    r = np.random.default_rng(0).standard_normal((50, 7))
    np.testing.assert_allclose(_np(T.linalg.vector_norm(T.asarray(r, device=device), axis=1)),
                               np.linalg.norm(r, axis=1), rtol=1e-15)
    edge = _np(T.linalg.vector_norm(T.asarray([[np.inf, 1.0], [np.nan, 1.0], [0.0, 0.0]], device=device),
                                    axis=1))
    assert edge[0] == np.inf and np.isnan(edge[1]) and edge[2] == 0


def test_vector_norm_gradient_at_huge_values():
    v = T.tensor(np.array([3e38, 1e38], np.float32), requires_grad=True)
    T.linalg.vector_norm(v).backward()
    np.testing.assert_allclose(v.grad.numpy(), [3 / np.sqrt(10), 1 / np.sqrt(10)], rtol=1e-6)


# (a, x, P(a, x)) from the power series of P summed in 40-digit mpmath
_P_LARGE_A = [
    (1e6, 1e6 - 8e3, 5.24012281543083e-16),
    (1e6, 1e6 - 4e3, 3.100711821108297e-05),
    (1e6, 1e6 - 1e3, 0.15865521357430365),
    (1e8, 1e8 - 8e4, 6.11569983219279e-16),
    (1e8, 1e8 - 4e4, 3.160437711619915e-05),
    (1e8, 1e8 - 1e4, 0.15865525352814383),
]


@pytest.mark.usefixtures("device")
def test_incomplete_gamma_for_large_a(device):
    a = T.asarray([p[0] for p in _P_LARGE_A], device=device)
    x = T.asarray([p[1] for p in _P_LARGE_A], device=device)
    want = np.array([p[2] for p in _P_LARGE_A])
    np.testing.assert_allclose(_np(T.special.gammainc(a, x)), want, rtol=1e-13)
    np.testing.assert_allclose(_np(T.special.gammaincc(a, x)), 1 - want, rtol=1e-13)
    # at a = x the median: P(a, a) -> 1/2 + 1 / (3 sqrt(2 pi a)) (the old iterations gave 0.079)
    big = T.asarray([1e10], device=device)
    assert T.special.gammainc(big, big).item() == pytest.approx(0.5 + 1 / (3 * np.sqrt(2 * np.pi * 1e10)),
                                                                rel=1e-12)


def test_incomplete_gamma_is_continuous_across_the_switch():
    scipy = pytest.importorskip("scipy.special")
    for a in (99999.0, 100000.0, 100001.0):
        x = a + np.sqrt(a) * np.linspace(-5, 5, 11)
        got = T.special.gammainc(T.asarray(np.full_like(x, a)), T.asarray(x)).numpy()
        np.testing.assert_allclose(got, scipy.gammainc(a, x), rtol=1e-12, atol=1e-15)
