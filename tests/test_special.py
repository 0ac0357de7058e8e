"""tensor.special (torch.special's names): the new functions against SciPy's values (hard-coded
where CI has no SciPy) and the aliases against the library's own functions."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensor as T
from tensor import special as S

# 50-digit values (mpmath; SciPy's for ndtri(1e-300), and SciPy underflows ndtr(-38) to 0)
_ERFCX = {-3.0: 16205.988853999586, -0.5: 1.952360489182557, 0.0: 1.0, 1.0: 0.427583576155807,
          4.99: 0.11091837045388811, 5.0: 0.11070463773306863, 30.0: 0.01879588886141675,
          1e10: 5.641895835477563e-11}
_NDTR = {-38.0: 2.88542835e-316, -10.0: 7.619853024160525e-24, -1.0: 0.15865525393145705,
         0.0: 0.5, 2.5: 0.9937903346742238}
_LOG_NDTR = {-40.0: -804.6084420137538, -5.5: -17.77937635262526, -1.0: -1.8410216450092636,
             0.0: -0.6931471805599453, 3.0: -0.0013508099647481938, 10.0: -7.619853024160525e-24}
_NDTRI = {1e-300: -37.0470962993612, 1e-20: -9.262340089798407, 0.025: -1.9599639845400543,
          0.5: 0.0, 0.9: 1.2815515655446004, 1 - 1e-10: 6.361340889697422}


@pytest.mark.parametrize("fn,table,rel", [(S.erfcx, _ERFCX, 1e-14), (S.ndtr, _NDTR, 1e-9),
                                          (S.log_ndtr, _LOG_NDTR, 1e-13),
                                          (S.ndtri, _NDTRI, 1e-14)])
def test_values(device, fn, table, rel):
    x = np.array(list(table))
    got = fn(T.asarray(x, device=device)).numpy()
    np.testing.assert_allclose(got, np.array(list(table.values())), rtol=rel, atol=0)


def test_against_scipy_on_grids():
    sp = pytest.importorskip("scipy.special")
    x = np.linspace(-30, 30, 1201)
    for name in ("erfcx", "ndtr", "log_ndtr"):
        np.testing.assert_allclose(getattr(S, name)(T.asarray(x)).numpy(), getattr(sp, name)(x),
                                   rtol=1e-12, err_msg=name)
    p = np.concatenate([np.logspace(-300, -1, 300), np.linspace(0.01, 0.99, 99)])
    np.testing.assert_allclose(S.ndtri(T.asarray(p)).numpy(), sp.ndtri(p), rtol=1e-13)


def test_edges_dtypes_and_gradients():
    assert S.ndtri(T.tensor([0.0, 1.0, -0.1, 1.1, 0.5])).numpy().tolist()[:2] == [-math.inf,
                                                                                   math.inf]
    assert np.isnan(S.ndtri(T.tensor([-0.1, 1.1])).numpy()).all()
    assert math.copysign(1.0, S.ndtri(T.tensor(0.5)).item()) == 1.0
    np.testing.assert_array_equal(
        S.entr(T.tensor([0.0, 1.0, -1.0, math.inf])).numpy(), [0.0, -0.0, -math.inf, -math.inf])
    np.testing.assert_array_equal(
        S.xlog1py(T.tensor([0.0, 0.0, 2.0]), T.tensor([math.nan, 1.0, 1.0])).numpy(),
        [math.nan, 0.0, 2 * math.log(2.0)])
    assert S.ndtr(T.tensor([1.0], dtype=T.float32)).dtype is T.float32
    assert S.log_ndtr(T.tensor([1])).dtype is T.get_default_dtype()
    x = T.tensor([-12.0, -1.0, 0.5, 7.0], requires_grad=True)
    S.log_ndtr(x).sum().backward()       # d/dx log ndtr = pdf / cdf; finite through every branch
    a = np.array([-12.0, -1.0, 0.5, 7.0])
    pdf = np.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(x.grad.numpy(), pdf / np.array([1.776482112077679e-33,
                               0.15865525393145705, 0.6914624612740131, 0.9999999999987201]),
                               rtol=1e-12)


def test_aliases():
    x = T.tensor([0.25, 0.5])
    for alias, target in [("expit", "sigmoid"), ("gammaln", "lgamma"), ("psi", "digamma"),
                          ("erfinv", "erfinv"), ("i0e", "i0e"), ("exp2", "exp2")]:
        np.testing.assert_array_equal(getattr(S, alias)(x).numpy(), getattr(T, target)(x).numpy())
    np.testing.assert_array_equal(S.gammainc(x, x).numpy(), T.igamma(x, x).numpy())
    np.testing.assert_array_equal(S.multigammaln(x + 2, 2).numpy(), T.mvlgamma(x + 2, 2).numpy())


def test_xlog1py_gradient_in_x_at_zero_is_log1p_y():
    # caught: d/dx x log1p(y) was 0 at x == 0 (a where around the product), PyTorch's log1p(y)
    x = T.tensor([0.0, 0.0, 0.0, 2.0], requires_grad=True)
    y = T.tensor([0.5, -0.5, float("inf"), 3.0], requires_grad=True)
    r = T.special.xlog1py(x, y)
    r.sum().backward()
    np.testing.assert_array_equal(r.detach().numpy(), [0.0, 0.0, 0.0, 2 * np.log1p(3.0)])
    assert not np.signbit(r.detach().numpy()[1])
    np.testing.assert_allclose(x.grad.numpy(), [np.log1p(0.5), np.log1p(-0.5), 0.0, np.log1p(3.0)],
                               rtol=1e-15)
    np.testing.assert_allclose(y.grad.numpy(), [0.0, 0.0, 0.0, 0.5], rtol=1e-15)
