"""CPU perf cliffs, round 5: the fast paths' values against NumPy (benchmarks/cpu_cliffs4.py
times them). nanmax / nanmin of a float tensor that needs no gradient run a NaN-skipping fold
(tensor/redtable.py INTERNAL) instead of a masked select: the same values bit for bit, checked
here against NumPy and against the select path (taken when x requires grad) on odd shapes,
views, all-NaN slices, infinities, signed zeros and empty inputs."""
import math
import warnings
import zlib

import numpy as np
import pytest

import tensor as T

FLOATS = ["float16", "float32", "float64"]


def _data(shape, dtype, rng, kind):
    a = rng.standard_normal(shape) * 5
    if kind == "nan":
        a[rng.random(shape) < 0.3] = np.nan
    elif kind == "inf":
        a[rng.random(shape) < 0.2] = np.nan
        a[rng.random(shape) < 0.2] = -np.inf
        a[rng.random(shape) < 0.1] = np.inf
    elif kind == "zeros":   # signed zeros and NaN only: which zero wins must not change
        a = np.where(rng.random(shape) < 0.5, 0.0, -0.0)
        a[rng.random(shape) < 0.3] = np.nan
    elif kind == "allnan":
        a[...] = np.nan
        if a.ndim >= 2:
            a[0, ...] = 1.5   # the other slices along axis 0 stay all-NaN
    return a.astype(dtype)


def _views(a):
    yield "contig", a, lambda t: t
    if a.ndim >= 2:
        yield "T", a.T, lambda t: t.T
        yield "step", a[::-1, ::2], lambda t: t[::-1, ::2]


def _bits(x):
    x = np.ascontiguousarray(x)
    return x.view(np.uint8 if x.dtype.itemsize == 1 else f"u{x.dtype.itemsize}")


def _same(ours, ref):
    """Equal to NumPy's values: NaN where it has NaN, else bit for bit, except which of two
    equal zeros a max picks (NumPy's depends on its SIMD order; ours is the plain max's, and
    test_fast_path_equals_the_select_path pins it bit for bit)."""
    got = ours.numpy()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(_bits(np.where(nan | (ref == 0), 0, got)),
                                  _bits(np.where(nan | (ref == 0), 0, ref)))
    np.testing.assert_array_equal(got[ref == 0], 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", ["nan", "inf", "zeros", "allnan"])
@pytest.mark.parametrize("shape", [(1,), (7,), (33,), (5, 17), (64, 3), (3, 4, 5)])
@pytest.mark.parametrize("op", ["nanmax", "nanmin"])
def test_nan_extremes_match_numpy(op, shape, kind, dtype):
    rng = np.random.default_rng(zlib.crc32(repr((op, shape, kind, dtype)).encode()))
    a = _data(shape, dtype, rng, kind)
    nf, tf = getattr(np, op), getattr(T, op)
    for _, v, view in _views(a):
        t = view(T.from_numpy(a))
        axes = [None, 0, -1] + ([(0, 1)] if v.ndim >= 2 else [])
        for ax in axes:
            for keep in (False, True):
                with _quiet():
                    ref = nf(v, axis=ax, keepdims=keep)
                ref = np.asarray(ref, dtype=v.dtype)
                _same(tf(t, axis=ax, keepdims=keep), ref)


class _quiet:
    """NumPy's All-NaN RuntimeWarning silenced (ours does not warn: no host read)."""

    def __enter__(self):
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


@pytest.mark.parametrize("dtype", FLOATS + ["bfloat16"])
@pytest.mark.parametrize("op", ["nanmax", "nanmin"])
def test_fast_path_equals_the_select_path(op, dtype):
    """No-grad (NaN-skipping fold) and requires-grad (where) paths give the same bits."""
    rng = np.random.default_rng(3)
    f = getattr(T, op)
    for kind in ("nan", "inf", "zeros", "allnan"):
        a = _data((9, 40), "float32", rng, kind)
        t = T.from_numpy(a).astype(dtype)
        g = t.astype("float32").astype(dtype) if dtype in ("float16", "bfloat16") else t.copy()
        g.requires_grad_(True)
        for ax in (None, 0, 1):
            fast, slow = f(t, axis=ax), f(g, axis=ax).detach()
            assert fast.dtype == slow.dtype == t.dtype
            fb = fast.astype("float32").numpy() if dtype == "bfloat16" else fast.numpy()
            sb = slow.astype("float32").numpy() if dtype == "bfloat16" else slow.numpy()
            np.testing.assert_array_equal(np.isnan(fb), np.isnan(sb))
            np.testing.assert_array_equal(_bits(np.nan_to_num(fb)), _bits(np.nan_to_num(sb)))


def test_nan_extremes_edges():
    # 0-d, a zero-size kept axis, integers (no NaN path), an all-NaN tensor, -inf present
    with _quiet():
        assert math.isnan(T.nanmax(T.tensor(float("nan"))).item())
        assert T.nanmin(T.tensor(-0.0)).item() == 0.0 and math.copysign(1, T.nanmin(
            T.tensor(-0.0)).item()) == -1
    e = T.from_numpy(np.zeros((0, 4), np.float32))
    with pytest.raises(ValueError, match="nanmax: zero-size"):
        T.nanmax(e, axis=0)
    assert T.nanmin(e, axis=1).shape == (0,)
    i = np.array([[3, -7, 2], [0, 9, 9]], np.int16)
    for op in ("nanmax", "nanmin"):
        got = getattr(T, op)(T.from_numpy(i), axis=1)
        assert got.dtype == T.int16
        np.testing.assert_array_equal(got.numpy(), getattr(np, op)(i, axis=1))
    x = T.from_numpy(np.array([np.nan, -np.inf, np.nan], np.float32))
    assert T.nanmax(x).item() == -np.inf and T.nanmin(x).item() == -np.inf
    y = T.from_numpy(np.full((2, 3), np.nan, np.float64))
    assert np.isnan(T.nanmax(y, axis=1).numpy()).all()


def test_nan_extremes_gradient_unchanged():
    torch = pytest.importorskip("torch")
    a = np.array([[1.0, np.nan, 3.0, 3.0], [np.nan, -2.0, np.nan, -5.0]])
    t = T.from_numpy(a).requires_grad_(True)
    T.nanmax(t, axis=1).sum().backward()
    ta = torch.tensor(a, requires_grad=True)
    # torch's nanmax analogue: amax over NaN replaced by -inf (ties share the gradient)
    torch.where(torch.isnan(ta), -torch.inf, ta).amax(dim=1).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), ta.grad.numpy())
