"""A client of the array API standard on our tensors: scikit-learn's array API dispatch
(StandardScaler, MinMaxScaler, accuracy_score, and through tensor.linalg PCA with the full SVD
solver, LinearDiscriminantAnalysis and Ridge with the SVD solver) gives NumPy's answers on the
CPU.

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
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge
rng = np.random.RandomState(0)
X = rng.rand(40, 5) @ rng.rand(5, 5)
y, yr = rng.randint(0, 3, 40), X @ rng.rand(5) + rng.rand(40)
pca = PCA(n_components=3, svd_solver="full").fit(X)
lda = LinearDiscriminantAnalysis(solver="svd").fit(X, y)
ridge = Ridge(alpha=0.5, solver="svd").fit(X, yr)
close = lambda a, b, rtol=1e-10: np.testing.assert_allclose(a.numpy(), b, rtol=rtol, atol=1e-12)
with config_context(array_api_dispatch=True):
    p = PCA(n_components=3, svd_solver="full").fit(T.asarray(X))
    assert isinstance(p.components_, T.Tensor)
    close(abs(p.components_), np.abs(pca.components_))    # signs: sklearn's svd_flip makes them equal too
    close(p.components_, pca.components_)
    close(p.explained_variance_, pca.explained_variance_)
    close(p.transform(T.asarray(X)), pca.transform(X), 1e-9)
    d = LinearDiscriminantAnalysis(solver="svd").fit(T.asarray(X), T.asarray(y))
    np.testing.assert_array_equal(d.predict(T.asarray(X)).numpy(), lda.predict(X))
    close(d.predict_proba(T.asarray(X)), lda.predict_proba(X), 1e-8)
    r = Ridge(alpha=0.5, solver="svd").fit(T.asarray(X), T.asarray(yr))
    close(r.coef_, ridge.coef_)
    close(r.predict(T.asarray(X)), ridge.predict(X))
print("ok")
"""


def test_scikit_learn_array_api_dispatch():
    env = dict(os.environ, SCIPY_ARRAY_API="1", STRIDEX_CUDA_EMULATOR="0")
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]
