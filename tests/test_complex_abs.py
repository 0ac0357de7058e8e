"""|z| of complex64 / complex128 over the whole range (subnormal parts, huge parts, inf, NaN):
within an ulp of the exact value. The CPU's is a branch-free scaled sqrt(fma(...)) since libm's
hypot per element was ~30x NumPy's time; an unscaled one would overflow or lose the subnormals."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T


@pytest.mark.parametrize("dtype, real", [(np.complex64, np.float32), (np.complex128, np.float64)])
def test_abs_within_an_ulp_everywhere(device, dtype, real):
    rng = np.random.default_rng(1)
    fi = np.finfo(real)
    e = rng.uniform(np.log2(float(fi.smallest_subnormal)), np.log2(float(fi.max)) - 1, (4000, 2))
    parts = np.exp2(e) * rng.choice([-1.0, 1.0], e.shape)
    z = (parts[:, 0] + 1j * parts[:, 1]).astype(dtype)
    z[:4] = [complex(3e-44, 4e-44), complex(fi.max / 2, fi.max / 2), complex(fi.max, 1.0), 3 + 4j]
    got = T.abs(T.asarray(z, device=device)).to("cpu").numpy()
    assert got.dtype == real
    re, im = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    exact = np.sqrt(re * re + im * im)
    with np.errstate(over="ignore"):   # (the exact values beyond the dtype's range: inf)
        fin = np.isfinite(exact.astype(real))
        ulp = np.spacing(exact.astype(real)[fin]).astype(np.longdouble)
    assert np.all(np.abs(got[fin].astype(np.longdouble) - exact[fin]) <= ulp)
    assert np.all(np.isinf(got[~fin])) and got[3] == 5.0
    special = np.array([complex(np.nan, 1), complex(1, np.inf), complex(np.nan, np.inf),
                        complex(-np.inf, np.nan), 0j, complex(-0.0, 2.5)], dtype)
    np.testing.assert_array_equal(T.abs(T.asarray(special, device=device)).to("cpu").numpy(),
                                  np.array([np.nan, np.inf, np.inf, np.inf, 0.0, 2.5], real))
