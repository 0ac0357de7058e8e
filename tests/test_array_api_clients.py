"""A client of the array API standard on our tensors: scikit-learn's array API dispatch
(StandardScaler, MinMaxScaler, accuracy_score) gives NumPy's answers on the CPU.

scikit-learn needs SCIPY_ARRAY_API=1 before scipy is first imported, so the check runs in a
fresh interpreter."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")

SCRIPT = r"""
import numpy as np, tensor as T
from sklearn import config_context
from sklearn.metrics import accuracy_score
from sklearn.preprocessing import MinMaxScaler, StandardScaler
X = np.random.RandomState(0).rand(20, 3) * [1.0, 10.0, 100.0]
y, p = np.array([0, 1, 1, 0, 2]), np.array([0, 1, 0, 0, 2])
w = np.array([1.0, 2.0, 1.0, 1.0, 3.0])
with config_context(array_api_dispatch=True):
    for est in (StandardScaler, MinMaxScaler):
        got = est().fit_transform(T.asarray(X))
        assert isinstance(got, T.Tensor), type(got)
        np.testing.assert_allclose(got.numpy(), est().fit_transform(X), rtol=1e-12, atol=1e-12)
    assert accuracy_score(T.asarray(y), T.asarray(p)) == accuracy_score(y, p) == 0.8
    got = accuracy_score(T.asarray(y), T.asarray(p), sample_weight=T.asarray(w))
    assert abs(float(got) - accuracy_score(y, p, sample_weight=w)) < 1e-12
print("ok")
"""


def test_scikit_learn_array_api_dispatch():
    env = dict(os.environ, SCIPY_ARRAY_API="1", STRIDEX_CUDA_EMULATOR="0")
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]
