"""Numeric edge cases found by the hunt-8 numeric2 pass (both devices via the device fixture)."""
import math

import numpy as np
import pytest

import tensor as T


@pytest.mark.parametrize("vals, dtype, want", [
    ([3e30, 4e30], "float32", 5e30),      # caught: the squares overflowed, inf came back
    ([3e-30, 4e-30], "float32", 5e-30),   # caught: the squares underflowed, 0 came back
    ([3e200, 4e200], "float64", 5e200),   # caught: inf
    ([3e-200, 4e-200], "float64", 5e-200),  # caught: 0
])
def test_vector_norm_no_spurious_overflow(device, vals, dtype, want):
    x = T.asarray(np.array(vals, dtype), device=device)
    r = T.linalg.vector_norm(x)
    assert r.dtype == x.dtype
    assert math.isclose(r.item(), want, rel_tol=1e-6)
    # ord=3 scales the same way (was inf / 0 too)
    want3 = (abs(vals[0]) ** 3 + abs(vals[1]) ** 3) ** (1 / 3) if dtype == "float64" and vals[0] < 1 else None
    r3 = T.linalg.vector_norm(x, ord=3).item()
    assert math.isfinite(r3) and r3 > 0
    if want3 is not None and want3 > 0:
        assert math.isclose(r3, want3, rel_tol=1e-12)


def test_matrix_fro_norm_no_overflow(device):
    m = T.asarray(np.full((2, 2), 1e30, np.float32), device=device)   # caught: inf
    assert math.isclose(T.linalg.matrix_norm(m).item(), 2e30, rel_tol=1e-6)


def test_vector_norm_ordinary_values_unchanged(device):
    # the power-of-two scaling is exact: same bits as NumPy's unscaled sqrt(sum(x*x)) for float64
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7))
    r = T.linalg.vector_norm(T.asarray(a, device=device), axis=1).to("cpu").numpy()
    np.testing.assert_allclose(r, np.sqrt((a * a).sum(axis=1)), rtol=1e-15)
    z = T.asarray(np.array([0.0, 0.0]), device=device)
    assert T.linalg.vector_norm(z).item() == 0.0
    i = T.asarray(np.array([np.inf, 1.0]), device=device)
    assert T.linalg.vector_norm(i).item() == math.inf
    n = T.asarray(np.array([np.nan, 1.0]), device=device)
    assert math.isnan(T.linalg.vector_norm(n).item())


# P(a, x) for large a: the iterations stopped early (P(1e10, 1e10) came out 0.079). Reference
# values from mpmath (50 digits; SciPy 1.x itself is wrong in the lower tail for a >= 1e8).
@pytest.mark.parametrize("a, x, p, q", [
    (1e10, 1e10, None, None),
    (1e8, 1e8 * 0.999, 7.36993106689699e-24, None),
    (1e6, 1e6 * 0.99, 5.44664469301081e-24, None),
    (1e6, 1e6 * 1.01, None, 1.06069974775869e-23),
    (1e8, 1e8 * 1.001, None, 7.87785617869678e-24),
])
def test_gammainc_large_a(a, x, p, q):
    P = T.special.gammainc(T.asarray([a]), T.asarray([x])).item()
    Q = T.special.gammaincc(T.asarray([a]), T.asarray([x])).item()
    if p is None and q is None:   # x = a: P = 1/2 + 1 / (3 sqrt(2 pi a)) + O(1/a)
        assert math.isclose(P, 0.5 + 1 / (3 * math.sqrt(2 * math.pi * a)), rel_tol=1e-12)
        assert math.isclose(P + Q, 1.0, rel_tol=1e-14)
    if p is not None:
        assert math.isclose(P, p, rel_tol=1e-12)
    if q is not None:
        assert math.isclose(Q, q, rel_tol=1e-12)
