"""Edge values found by the long differential fuzzer (tests/test_fuzz.py, profile "fuzz")."""
import math

import numpy as np
import pytest

import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def test_zeta_infinite_exponent():
    """zeta(inf, q) for a negative non-integer q: a term |q + k| < 1 raised to -inf, so inf (as
    SciPy's and PyTorch's); it was NaN (the sign (-1)^s of the negative terms is not defined)."""
    q = T.tensor([-102.30685282, -0.5, 0.5, 3.0], dtype=T.float64)
    got = T.zeta(T.full((4,), math.inf, dtype=T.float64), q).numpy()
    assert got[0] == got[1] == got[2] == math.inf
    for dt_ in (T.float32, T.float64):
        r = T.zeta(T.tensor([math.inf], dtype=dt_), T.tensor([-1.5], dtype=dt_)).numpy()
        assert np.isposinf(r).all()
