"""Fixes from the manipulation hunt (hunt 5): NumPy's other pad modes, unflatten with a 0-size
axis elsewhere, ravel(order='F'), arange with float arguments and an integer dtype, linspace's
retstep / axis / array end points, *_like(shape=), repeat_interleave of a 0-d tensor. Each test
says what it caught on the old code."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T

pytestmark = pytest.mark.usefixtures("device")

RNG = np.random.default_rng(7)
X34 = RNG.standard_normal((3, 4))


def _t(a):
    return T.asarray(a)


# ---------------------------------------------------------------- pad: the other NumPy modes
# (caught: every mode below raised "mode ... is not supported", reflect_type was a TypeError)

PAD_CASES = [
    dict(mode="linear_ramp"),
    dict(mode="linear_ramp", end_values=((1, 2), (3, -4))),
    dict(mode="maximum"),
    dict(mode="minimum", stat_length=2),
    dict(mode="mean"),
    dict(mode="mean", stat_length=((1, 3), (2, 1))),
    dict(mode="median"),
    dict(mode="median", stat_length=2),
    dict(mode="reflect", reflect_type="odd"),
    dict(mode="symmetric", reflect_type="odd"),
]


@pytest.mark.parametrize("kw", PAD_CASES, ids=lambda kw: "-".join(str(v) for v in kw.values()))
@pytest.mark.parametrize("width", [((2, 5), (1, 3)), 7, {1: (0, 4)}])
def test_pad_extra_modes_match_numpy(kw, width):
    for a in (X34, X34.T[::-1], RNG.integers(-9, 9, (3, 4))):
        want = np.pad(a, width, **kw)
        got = T.pad(_t(a), width, **kw).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_pad_odd_reflection_of_short_axes_and_empty_mode():
    for n in (1, 2, 3):
        a = np.arange(1.0, n + 1)
        for mode in ("reflect", "symmetric"):
            want = np.pad(a, (9, 6), mode=mode, reflect_type="odd")
            np.testing.assert_array_equal(T.pad(_t(a), (9, 6), mode=mode, reflect_type="odd").numpy(), want)
    got = T.pad(_t(X34), ((1, 2), (3, 0)), mode="empty")
    assert got.shape == (6, 7)
    np.testing.assert_array_equal(got.numpy()[1:4, 3:], X34)   # the pad area is left unset


def test_pad_extra_modes_errors():
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        T.pad(_t(X34), 1, mode="edge", stat_length=2)
    with pytest.raises(ValueError, match="stat_length of 0"):
        T.pad(_t(X34), 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        T.pad(T.zeros((0, 3)), 1, mode="mean")
    with pytest.raises(ValueError, match="reflect_type"):
        T.pad(_t(X34), 1, mode="reflect", reflect_type="sideways")


@pytest.mark.parametrize("kw", [dict(mode="linear_ramp", end_values=2.0), dict(mode="mean", stat_length=2),
                                dict(mode="reflect", reflect_type="odd"),
                                dict(mode="symmetric", reflect_type="odd")],
                         ids=["ramp", "mean", "reflect-odd", "symmetric-odd"])
def test_pad_extra_modes_gradients(kw):
    # (caught: these modes did not exist; the old rule would have gathered through a reflect index)
    x = T.asarray(X34[:2, :3]).requires_grad_()
    assert autograd.gradcheck(lambda a: T.pad(a, ((2, 5), (1, 3)), **kw) ** 2, (x,))
    t = T.asarray(RNG.standard_normal((2, 3)))
    _, tan = autograd.jvp(lambda a: T.pad(a, ((2, 5), (1, 3)), **kw), (T.asarray(X34[:2, :3]),), (t,))
    eps = 1e-6
    fd = (T.pad(x.detach() + eps * t, ((2, 5), (1, 3)), **kw).numpy()
          - T.pad(x.detach() - eps * t, ((2, 5), (1, 3)), **kw).numpy()) / (2 * eps)
    np.testing.assert_allclose(tan.numpy(), fd, atol=1e-6)


def test_pad_selecting_modes_refuse_gradients():
    x = T.asarray(X34).requires_grad_()
    with pytest.raises(NotImplementedError, match="'median' is not differentiable"):
        T.pad(x, 1, mode="median").sum().backward()


# ---------------------------------------------------------------- unflatten, ravel, repeat_interleave

def test_unflatten_with_a_zero_size_axis_elsewhere():
    # caught: the -1 went to a full reshape, which cannot resolve it next to a 0-size axis
    assert T.unflatten(T.zeros((0, 6)), 1, (2, -1)).shape == (0, 2, 3)
    assert T.unflatten(T.zeros((4, 0)), 0, (-1, 2)).shape == (2, 2, 0)
    assert T.unflatten(T.zeros((3, 4)), 1, (-1, 2)).shape == (3, 2, 2)


def test_ravel_order_f_values_and_gradient():
    # caught: TypeError (no order=)
    a = np.arange(24.0).reshape(2, 3, 4)
    for x in (a, a.transpose(2, 0, 1)[::-1]):
        np.testing.assert_array_equal(T.ravel(_t(x), order="F").numpy(), np.ravel(x, order="F"))
        np.testing.assert_array_equal(_t(x).ravel(order="C").numpy(), np.ravel(x))
    w = T.arange(24.0)
    xg = T.asarray(a).requires_grad_()
    assert autograd.gradcheck(lambda t: T.ravel(t, order="F") * w, (xg,))
    with pytest.raises(ValueError, match="order must be 'C' or 'F'"):
        T.ravel(_t(a), order="K")


def test_repeat_interleave_zero_d_with_dim():
    # caught: IndexError 'tuple index out of range'
    assert T.repeat_interleave(T.asarray(2.0), 3, dim=0).tolist() == [2.0, 2.0, 2.0]


# ---------------------------------------------------------------- creation

@pytest.mark.parametrize("args", [(-1.5, 3), (0.5, 3, 0.7), (3.7, -2.2, -0.5), (-0.9, 2, 0.3)])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_arange_float_arguments_integer_dtype(args, dtype):
    # caught: each float value truncated on its own ([-1, 0, 0, 1, 2] for arange(-1.5, 3));
    # NumPy (and PyTorch) step by int(start + step) - int(start) from int(start)
    np.testing.assert_array_equal(T.arange(*args, dtype=dtype).numpy(), np.arange(*args, dtype=dtype))


def test_linspace_retstep_axis_and_array_end_points():
    # caught: TypeError for retstep= and axis=; a broadcasting error for array end points
    y, step = T.linspace(0, 1, 5, retstep=True)
    assert step == 0.25 and y.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    lo, hi = np.array([[0.0], [1.0]]), np.array([1.0, 3.0, 5.0])
    want, wstep = np.linspace(lo, hi, 4, axis=1, retstep=True)
    got, gstep = T.linspace(_t(lo), _t(hi), 4, axis=1, retstep=True)
    np.testing.assert_allclose(got.numpy(), want)
    np.testing.assert_allclose(gstep.numpy(), wstep)
    np.testing.assert_array_equal(T.linspace(0, _t(np.array([10, 20])), 4, dtype="int64").numpy(),
                                  np.linspace(0, np.array([10, 20]), 4, dtype=np.int64))


def test_like_functions_take_shape():
    # caught: TypeError (NumPy 2's shape= missing)
    x = T.arange(3)
    assert T.zeros_like(x, shape=(2, 2)).tolist() == [[0, 0], [0, 0]]
    assert T.ones_like(x, shape=4).dtype == x.dtype
    assert T.full_like(x, 7, shape=()).tolist() == 7
    assert T.empty_like(x, shape=[2, 0]).shape == (2, 0)


def test_squeeze_axis_zero_of_a_zero_d_tensor():
    # caught: AxisError; NumPy and PyTorch give the 0-d tensor back for axis 0 or -1
    a = T.asarray(3.0)
    assert T.squeeze(a, 0).shape == () and T.squeeze(a, -1).tolist() == 3.0
    with pytest.raises(Exception, match="out of bounds"):
        T.squeeze(a, 1)


@pytest.mark.parametrize("a", [np.array([True, False, False]), np.array([1, 2, 7], np.uint8),
                               np.array([-3, -2, 8], np.int8), np.array([1.5, 2.25, 3.0], np.float16)],
                         ids=lambda a: a.dtype.name)
def test_pad_extra_modes_small_dtypes(a):
    # (caught while fixing: bool odd reflection came back as int64)
    for kw in (dict(mode="mean"), dict(mode="median"), dict(mode="maximum"),
               dict(mode="linear_ramp", end_values=(0, 9)), dict(mode="reflect", reflect_type="odd"),
               dict(mode="symmetric", reflect_type="odd")):
        want = np.pad(a, (2, 3), **kw)
        got = T.pad(_t(a), (2, 3), **kw).numpy()
        assert got.dtype == want.dtype, kw
        np.testing.assert_array_equal(got, want, err_msg=str(kw))
