"""The eager shortcuts of small ops (tensor/elementwise.py, reductions.py, views.py, indexing.py,
creation.py, cpu/launch.py, cpu/fastpath.py): each one against NumPy, and each one's fallback
(views, broadcasting, dtype mixes, bad input, requires_grad, forward mode, capture, autocast)
taking the general path with the same results and errors.

- where: three tensors of one dtype, or a float tensor and a Python number, without the general
  path's conversions (elementwise._where_fast);
- binary ops on two tensors of one dtype in a layout the general path ran before (a plan:
  elementwise._BIN_PLANS), and the C plans registered once (fastpath._SEEN);
- copy / clone straight into a fresh tensor;
- shapes given as tuples of ints (views.int_sizes, creation._shape), zeros / full of a Python
  number, basic indexing (ints, slices, None, Ellipsis);
- reductions without the public calls inside (mean's casts, keepdims' reshape).
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import forward_ad as fw
from tensor import elementwise as ew

RNG = np.random.default_rng(7)


def _same(t, want):
    """t's values and dtype are NumPy's want (bitwise, NaNs included)."""
    got = t.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _close(t, want):
    """_same for sums (their order of additions is not NumPy's): exact for integers."""
    got = t.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "fc":
        tol = {2: 2e-3, 4: 2e-6}.get(want.dtype.itemsize, 1e-14)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


def _views(a):
    """a as a contiguous tensor, a transposed view, a negative-step view and a stepped one, with
    the NumPy arrays they hold."""
    t = T.asarray(a)
    out = [(t, a)]
    if a.ndim == 2:
        out.append((T.asarray(np.ascontiguousarray(a.T)).T, a))
        out.append((T.asarray(a[::-1].copy())[::-1], a))
        w = np.repeat(a, 2, axis=1)
        out.append((T.asarray(w)[:, ::2], w[:, ::2]))
    return out


# ---------------------------------------------------------------- where

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16"])
def test_where_tensors_of_one_dtype(dtype):
    a = (RNG.standard_normal((5, 6)) * 4).astype(dtype)
    b = (RNG.standard_normal((5, 6)) * 4).astype(dtype)
    c = RNG.standard_normal((5, 6)) > 0
    for (ta, na), (tb, nb), (tc, nc) in zip(_views(a), _views(b)[::-1], _views(c)):
        for _ in range(2):
            _same(T.where(tc, ta, tb), np.where(nc, na, nb))
    # 0-d and 0-size
    _same(T.where(T.asarray(True), T.asarray(a[0, 0]), T.asarray(b[0, 0])), np.where(True, a[0, 0], b[0, 0]))
    e = np.zeros((0, 3), dtype)
    _same(T.where(T.asarray(e > 0), T.asarray(e), T.asarray(e)), np.where(e > 0, e, e))


def test_where_fallbacks():
    a = RNG.standard_normal((4, 3)).astype(np.float32)
    b = RNG.standard_normal((3,)).astype(np.float64)
    c = a > 0
    ta, tb, tc = T.asarray(a), T.asarray(b), T.asarray(c)
    _same(T.where(tc, ta, tb), np.where(c, a, b))                          # promotion
    _same(T.where(tc, ta, T.asarray(a[0])), np.where(c, a, a[0]))          # broadcast
    _same(T.where(tc[0], ta, ta), np.where(c[0], a, a))                    # cond broadcast
    _same(T.where(T.asarray(a), ta, ta), np.where(a, a, a))                # a float cond
    ti = T.asarray(np.arange(12).reshape(4, 3))
    _same(T.where(tc, ti, 0.5), np.where(c, np.arange(12).reshape(4, 3), 0.5))   # int + float
    _same(T.where(tc, ti, 7), np.where(c, np.arange(12).reshape(4, 3), 7))
    _same(T.where(True, ta, 2.0), np.where(True, a, np.float32(2.0)))     # a Python cond
    _same(T.where(c, a, b), np.where(c, a, b))                             # NumPy operands
    with pytest.raises(ValueError, match=r"where: shapes .* cannot be broadcast"):
        T.where(tc, ta, T.zeros((2, 3)))
    with pytest.raises(ValueError, match="where"):
        T.where(tc, ta[:, :2], 1.0)
    with pytest.raises(OverflowError):
        T.where(tc, ti.astype("int8"), 1000)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_where_float_tensor_and_python_number(dtype):
    """The scalar is weak (NumPy 2): the result has the tensor's dtype, the number rounded to it
    (bfloat16, which NumPy lacks: float32 values rounded to it, exact for these numbers)."""
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    t = T.asarray(a).astype(dtype)
    wide = "float32" if dtype == "bfloat16" else dtype
    ref = t.astype(wide).numpy()
    c = ref > 0
    for s in (0.0, -0.0, 2, 1e300, float("nan"), float("-inf")):
        for got, want in ((T.where(T.asarray(c), t, s), np.where(c, ref, s)),
                          (T.where(T.asarray(c), s, t[0]), np.where(c, s, ref[0]))):  # broadcast
            assert got.dtype is t.dtype
            _same(got.astype(wide), T.asarray(want).astype(dtype).astype(wide).numpy())
    assert np.signbit(T.where(T.asarray([True]), T.asarray([1.0]), -0.0).numpy()[0]) == np.False_
    assert np.signbit(T.where(T.asarray([False]), T.asarray([1.0]), -0.0).numpy()[0])


def test_where_gradients_forward_mode_capture_and_autocast():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((4, 3))
    b = RNG.standard_normal((4, 3))
    c = a > b
    ta = T.asarray(a, dtype="float64").requires_grad_()
    tb = T.asarray(b, dtype="float64").requires_grad_()
    (T.where(T.asarray(c), ta, tb) * T.asarray(a)).sum().backward()
    xa = torch.tensor(a, requires_grad=True)
    xb = torch.tensor(b, requires_grad=True)
    (torch.where(torch.tensor(c), xa, xb) * torch.tensor(a)).sum().backward()
    np.testing.assert_array_equal(ta.grad.numpy(), xa.grad.numpy())
    np.testing.assert_array_equal(tb.grad.numpy(), xb.grad.numpy())
    # a Python number and a tensor that requires grad
    tb.grad = None
    T.where(T.asarray(c), 0.0, tb).sum().backward()
    np.testing.assert_array_equal(tb.grad.numpy(), (~c).astype(np.float64))
    # forward mode
    with fw.dual_level():
        x = fw.make_dual(T.asarray(a), T.asarray(b))
        p, tan = fw.unpack_dual(T.where(T.asarray(c), x, 3.0))
        np.testing.assert_array_equal(p.numpy(), np.where(c, a, 3.0))
        np.testing.assert_array_equal(tan.numpy(), np.where(c, b, 0.0))
    # capture and replay
    f = T.compile(lambda m, x, y: T.where(m, x, y) + T.where(m, 0.5, y))
    for s in range(4):
        m, x, y = T.asarray(c ^ (s % 2 == 1)), T.asarray(a * s), T.asarray(b)
        _same(f(m, x, y), np.where(m.numpy(), a * s, b) + np.where(m.numpy(), 0.5, b))
    # autocast: where is no low-precision op, its result keeps the values' dtype
    with T.autocast("cpu", dtype=T.bfloat16):
        r = T.where(T.asarray(c), T.asarray(a, dtype="float32"), T.asarray(b, dtype="float32"))
    assert r.dtype is T.float32
    _same(r, np.where(c, a.astype(np.float32), b.astype(np.float32)))


# ---------------------------------------------------------------- binary plans

@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "true_divide", "maximum", "greater",
                                "equal", "arctan2", "floor_divide", "logical_and", "bitwise_and"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "float64"])
def test_binary_plans_match_numpy(op, dtype):
    fn = getattr(np, op)
    a = (RNG.standard_normal((4, 5)) * 5).astype(dtype)
    b = (RNG.standard_normal((4, 1)) * 5).astype(dtype)
    try:
        with np.errstate(all="ignore"):
            fn(a, b)
    except TypeError:   # (bitwise ops of floats, arctan2 of bools...): ours refuses them too
        with pytest.raises(TypeError):
            getattr(T, op)(T.asarray(a), T.asarray(b))
        return
    for _ in range(3):   # the general path, then the plan (twice)
        for (ta, na), (tb, nb) in ((x, y) for x in _views(a) for y in [(T.asarray(b), b)]):
            with np.errstate(all="ignore"):
                _same(getattr(T, op)(ta, tb), fn(na, nb))
            with np.errstate(all="ignore"):
                _same(getattr(T, op)(tb, ta), fn(nb, na))


def test_binary_plans_are_keyed_by_dtype_shape_and_strides():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4,)).astype(np.float32)
    ta, tb = T.asarray(a), T.asarray(b)
    _same(T.subtract(ta, tb), a - b)
    _same(T.subtract(ta, tb), a - b)
    _same(T.subtract(ta.T.T, tb), a - b)
    tt = T.asarray(np.ascontiguousarray(a.T)).T   # same shape and dtype, other strides
    r = T.subtract(tt, tb)
    _same(r, a - b)
    assert r.strides == (1, 3)   # the transposed operand's layout, as the general path keeps it
    _same(T.subtract(ta.astype("float64"), tb), a.astype(np.float64) - b)     # other dtypes
    _same(T.subtract(ta, tb.astype("float64")), a - b.astype(np.float64))
    _same(T.subtract(ta[:2], tb), a[:2] - b)                                  # other shape
    # the result is fresh every time, and writable
    r1, r2 = T.subtract(ta, tb), T.subtract(ta, tb)
    assert not T.shares_memory(r1, r2) and r1.flags.writeable and r1._version == 0


def test_integer_power_is_never_planned():
    """An integer power checks the exponents' values on every call (NumPy refuses negative ones)."""
    a = T.asarray(np.arange(6).reshape(2, 3))
    b = T.asarray(np.array([2, 1, 0]))
    for _ in range(2):
        _same(T.power(a, b), np.arange(6).reshape(2, 3) ** np.array([2, 1, 0]))
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        T.power(a, T.asarray(np.array([2, -1, 0])))


def test_binary_plans_with_gradients_forward_mode_and_capture():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((3, 4))
    b = RNG.standard_normal((3, 1))
    for _ in range(2):
        ta = T.asarray(a).requires_grad_()
        tb = T.asarray(b).requires_grad_()
        (T.multiply(ta, tb) * T.asarray(a)).sum().backward()
        xa, xb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        (torch.mul(xa, xb) * torch.tensor(a)).sum().backward()
        np.testing.assert_allclose(ta.grad.numpy(), xa.grad.numpy(), rtol=1e-15)
        np.testing.assert_allclose(tb.grad.numpy(), xb.grad.numpy(), rtol=1e-15)
    with fw.dual_level():
        x = fw.make_dual(T.asarray(a), T.ones((3, 4), dtype="float64"))
        p, tan = fw.unpack_dual(T.multiply(x, T.asarray(b)))
        np.testing.assert_array_equal(p.numpy(), a * b)
        np.testing.assert_array_equal(tan.numpy(), np.broadcast_to(b, (3, 4)))
    f = T.compile(lambda x, y: T.subtract(x, y) * 2.0)
    for s in range(4):
        _same(f(T.asarray(a * s), T.asarray(b)), (a * s - b) * 2.0)


def test_c_plans_are_registered_once_and_still_serve():
    from tensor.cpu import fastpath
    if not fastpath.counters():
        pytest.skip("the C fast path is not built here")
    a = T.asarray(RNG.standard_normal((6, 7)).astype(np.float32))
    b = T.asarray(RNG.standard_normal((6, 1)).astype(np.float32))
    want = a.numpy() - b.numpy()
    _same(T.subtract(a, b), want)   # the general path: registers the C plan
    assert ("subtract", fastpath._layout_key(a), fastpath._layout_key(b)) in fastpath._SEEN
    hits = fastpath.counters()["op_hits"]
    for _ in range(3):
        _same(a - b, want)
    assert fastpath.counters()["op_hits"] == hits + 3


# ---------------------------------------------------------------- copies

@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "complex64", "float16"])
def test_copy_and_clone(dtype):
    a = (RNG.standard_normal((4, 6)) * 3).astype(dtype)
    more = [(T.asarray(a[0, 0]), a[0, 0]), (T.zeros((0, 2), dtype=dtype), np.zeros((0, 2), dtype))]
    for t, n in _views(a) + more:
        for fn in (T.copy, T.clone, lambda x: x.clone(), ew.copy):
            r = fn(t)
            _same(r, np.array(n))
            assert not T.shares_memory(r, t) and r._version == 0 and r.flags.writeable
    t = T.asarray(a)
    t.flags.writeable = False
    assert T.clone(t).flags.writeable   # a copy of a read-only tensor is writeable
    tt = T.asarray(np.ascontiguousarray(a.T)).T
    assert T.clone(tt).strides == tt.strides   # a dense permutation keeps its layout
    _same(T.clone([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))


def test_clone_gradient_and_capture():
    x = T.asarray(RNG.standard_normal((3, 2))).requires_grad_()
    (T.clone(x.T) * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 2), 3.0))
    f = T.compile(lambda y: T.clone(y[:, ::-1]) + 1.0)
    for _ in range(4):
        y = RNG.standard_normal((3, 4))
        _same(f(T.asarray(y)), y[:, ::-1] + 1.0)


# ---------------------------------------------------------------- shapes, fills, indexing

def test_shapes_as_tuples_of_ints_and_their_errors():
    x = T.arange(24.0)
    _same(x.reshape((2, 3, 4)), np.arange(24.0).reshape(2, 3, 4))
    _same(x.reshape(np.int64(4), -1), np.arange(24.0).reshape(4, -1))
    _same(x.view((4, 6)), np.arange(24.0).reshape(4, 6))
    _same(T.broadcast_to(T.ones(3), (2, 3)), np.ones((2, 3)))
    for bad in ((2, 12.0), (True, 24), (2.0, 12)):
        with pytest.raises(TypeError, match="reshape: shape must be"):
            x.reshape(bad)
        with pytest.raises(TypeError, match="broadcast_to"):
            T.broadcast_to(T.ones(1), bad)
    with pytest.raises(ValueError, match="only one dimension can be -1"):
        x.reshape(-1, -1)
    with pytest.raises(ValueError, match="invalid shape"):
        x.reshape(-2, -12)
    with pytest.raises(ValueError, match=r"cannot reshape tensor of shape \(24,\)"):
        x.reshape(5, -1)
    with pytest.raises(ValueError, match="24 elements"):
        x.reshape(5, 5)
    _same(T.zeros((0, 3)).reshape(-1, 3), np.zeros((0, 3)))


@pytest.mark.parametrize("dtype", [None, "float32", "int64", "int8", "bool", "float16", "complex64",
                                   "uint64"])
def test_zeros_ones_full(dtype):
    npd = np.float64 if dtype is None else dtype
    for shape in ((2, 3), (), (0, 4), np.int64(3), [2, 2], (np.int64(2), 1)):
        _same(T.zeros(shape, dtype=dtype), np.zeros(shape, npd))
        _same(T.ones(shape, dtype=dtype), np.ones(shape, npd))
        for v in (0, 1, 2.5, True, -0.0, np.float32(1.5)):
            if dtype in ("int64", "int8", "uint64") and isinstance(v, float):
                want = np.full(shape, int(v), npd)
            elif dtype in ("uint64",) and v == -0.0:
                want = np.full(shape, 0, npd)
            else:
                want = np.full(shape, v, npd if dtype is not None else None)
            got = T.full(shape, v, dtype=dtype)
            assert got._version == 0
            _same(got, want)
    for shape in ((-1, 2), (2.0, 1), (True,), "ab"):
        with pytest.raises((TypeError, ValueError), match="zeros"):
            T.zeros(shape, dtype=dtype)
    with pytest.raises(TypeError, match="full: the fill value"):
        T.full((2,), "x", dtype=dtype)


def test_full_values_and_requires_grad():
    _same(T.full((2,), 2**63, dtype=None), np.full((2,), 2**63, dtype=np.uint64))
    _same(T.full((2,), -0.0), np.full((2,), -0.0))
    with pytest.raises(ValueError, match="cannot convert"):
        T.full((2,), float("nan"), dtype="int32")
    with pytest.raises(OverflowError, match="int8"):
        T.full((2,), 300, dtype="int8")
    t = T.zeros((2, 2), requires_grad=True)
    assert t.requires_grad and t.is_leaf
    _same(T.full((2,), T.asarray(3.0)), np.full((2,), 3.0))


def test_basic_indexing():
    a = np.arange(60.0).reshape(3, 4, 5)
    t = T.asarray(a)
    keys = [(1, slice(None), 2), (slice(1, 3), 2), (Ellipsis, None), (None, 0, Ellipsis, -1),
            (np.int64(2), slice(None, None, -2)), (slice(None, None, 2), None, slice(4, 0, -3)),
            (-3,), (Ellipsis,), (), (0, 0, 0), (slice(10, 20),), (1, Ellipsis, None, slice(1, 2))]
    for k in keys:
        for v, n in ((t, a), (t[:, ::-1], a[:, ::-1]), (T.asarray(a.T.copy()).T, a)):
            r = v[k]
            _same(r, n[k])
            assert T.shares_memory(r, v) or r.numel() == 0
    _same(t[1:3, np.array([0, 2])], a[1:3, np.array([0, 2])])   # advanced keys still work
    _same(t[t > 30], a[a > 30])
    _same(t[[0, 2], 1], a[[0, 2], 1])
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., 0, ...]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        t[0, 4]
    with pytest.raises(IndexError):
        t[0, 1.5]
    x = T.asarray(a).requires_grad_()
    (x[1:3, 2][..., None] * 2.0).sum().backward()
    want = np.zeros_like(a)
    want[1:3, 2] = 2.0
    np.testing.assert_array_equal(x.grad.numpy(), want)


# ---------------------------------------------------------------- reductions

@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool", "float64"])
def test_reductions(dtype):
    a = (RNG.standard_normal((4, 5)) * 3).astype(dtype)
    for t, n in _views(a):
        for axis in (None, 0, 1, (0, 1), -1):
            for kd in (False, True):
                _close(T.sum(t, axis=axis, keepdims=kd), np.asarray(np.sum(n, axis=axis, keepdims=kd)))
                _same(T.max(t, axis=axis, keepdims=kd), np.max(n, axis=axis, keepdims=kd))
                want = np.mean(n, axis=axis, keepdims=kd)
                if dtype == "float16":   # ours accumulates in float32, rounding once
                    want = np.mean(n.astype(np.float32), axis=axis, keepdims=kd).astype(np.float16)
                _close(T.mean(t, axis=axis, keepdims=kd), np.asarray(want))
        _close(t.sum(dim=1, dtype="float64"), n.sum(axis=1, dtype=np.float64))
        _close(t.sum(1, True), n.sum(axis=1, keepdims=True))
    with pytest.raises(ValueError, match="zero-size reduction"):
        T.max(T.zeros((0, 3), dtype=dtype), axis=0)
    _same(T.max(T.zeros((0, 3), dtype=dtype), axis=1), np.zeros((0,), dtype))
    with pytest.raises(TypeError, match="give axis or dim"):
        T.sum(T.asarray(a), axis=0, dim=0)


def test_reduction_gradients_and_capture():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((3, 4))
    x = T.asarray(a).requires_grad_()
    (x.mean(axis=1, keepdims=True) * T.asarray(a)).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    (xt.mean(dim=1, keepdim=True) * torch.tensor(a)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-14)
    x.grad = None
    T.linalg.trace(x[:, :3] * 2.0).backward()
    want = np.zeros((3, 4))
    want[range(3), range(3)] = 2.0
    np.testing.assert_array_equal(x.grad.numpy(), want)
    _same(T.linalg.trace(T.asarray(np.arange(9).reshape(3, 3)), dtype="float32"),
          np.asarray(np.trace(np.arange(9).reshape(3, 3)), np.float32))
    with fw.dual_level():
        y = fw.make_dual(T.asarray(a), T.ones((3, 4), dtype="float64"))
        p, tan = fw.unpack_dual(y.mean(axis=0))
        np.testing.assert_allclose(p.numpy(), a.mean(axis=0), rtol=1e-15)
        np.testing.assert_array_equal(tan.numpy(), np.ones(4))
    f = T.compile(lambda z: z.mean(axis=1, keepdims=True) + z.sum() + z.max(axis=0))
    for _ in range(4):
        z = RNG.standard_normal((3, 4))
        r = f(T.asarray(z))
        np.testing.assert_allclose(r.numpy(), z.mean(axis=1, keepdims=True) + z.sum() + z.max(axis=0),
                                   rtol=1e-14)
    with autograd.no_grad():
        _close(T.asarray(a).mean(), np.asarray(a.mean()))


# ---------------------------------------------------------------- C comparisons

CMP = {"less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b, "greater": lambda a, b: a > b,
       "greater_equal": lambda a, b: a >= b, "equal": lambda a, b: a == b,
       "not_equal": lambda a, b: a != b}
CMP_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64",
              "complex64", "bool"]


def _rand(shape, dtype, rng):
    if dtype == "bool":
        return T.asarray(rng.random(shape) > 0.5)
    if dtype.startswith(("int", "uint")):
        return T.asarray(rng.integers(0, 4, shape)).astype(dtype)
    v = np.round(rng.standard_normal(shape) * 2) / 2   # repeats, so == and != meet both answers
    if dtype.startswith("complex"):
        v = v + 1j * (rng.random(shape) > 0.5)
    return T.asarray(v).astype(dtype)


def _same_call(op, a, b):
    """The operator (the C path where it applies) against the public function (Python): the
    same dtype, shape and values, or the same exception."""
    try:
        want = getattr(T, op)(a, b)
    except Exception as e:   # noqa: BLE001 - the operator must raise the same
        with pytest.raises(type(e)):
            CMP[op](a, b)
        return
    got = CMP[op](a, b)
    assert got.dtype is want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
@pytest.mark.parametrize("dtype", CMP_DTYPES)
@pytest.mark.parametrize("op", list(CMP))
def test_comparisons_match_the_python_path(op, dtype):
    rng = np.random.default_rng(len(op) * 7 + len(dtype))
    for shape in [(), (1,), (7,), (3, 5), (0, 4), (40000,)]:
        a, b = _rand(shape, dtype, rng), _rand(shape, dtype, rng)
        for _ in range(2):   # the Python path decides, then C may take it
            _same_call(op, a, b)
    a = _rand((5,), dtype, rng)
    for s in [2, -3, 0, 1.5, -0.0, float("inf"), float("nan"), 1e300, 2**24 + 1, 2**53 + 1, 2**63 - 1,
              2**70, -(2**31), 127, 300, True, 0.5 + 1j]:
        for _ in range(2):
            _same_call(op, a, s)
            _same_call(op, s, a)   # reflected: Python asks a's mirrored comparison
    x = _rand((4, 6), dtype, rng)   # views, broadcasting, mixed dtypes: the Python path
    _same_call(op, x.T, x.T)
    _same_call(op, x[:, ::2], x[:, 1::2])
    _same_call(op, x, x[0])
    _same_call(op, x, x.astype("float64"))
    _same_call(op, x, np.ones(6, dtype="float32"))


def test_comparisons_in_c_and_what_they_leave_to_python():
    from tensor.cpu import fastpath
    b = T.ones((2, 3), dtype="float64")   # (the first CPU allocation installs the C module)
    if not fastpath.counters():
        pytest.skip("the C fast path is not built here")
    a = T.asarray(np.arange(6.0).reshape(2, 3))
    a > 2, a < b, 2.5 > a   # noqa: B018 - the Python path decides these once (alone, or first)
    c0 = fastpath.counters()
    r1, r2, r3 = a > 2, a < b, 2.5 > a
    c1 = fastpath.counters()
    assert c1["op_hits"] - c0["op_hits"] == 3 and c1["op_misses"] == c0["op_misses"]
    _same(r1, np.arange(6.0).reshape(2, 3) > 2)
    _same(r2, np.arange(6.0).reshape(2, 3) < 1)
    _same(r3, np.arange(6.0).reshape(2, 3) < 2.5)
    # objects that hold no numbers: Python's identity fallback (the Python operator's)
    assert (a == None) is False and (a != "auto") is True   # noqa: E711
    assert a in [a] and T.asarray(1.0) not in [None, "x"]
    # autograd: the result never requires grad, in C or in Python
    w = T.asarray(np.arange(6.0).reshape(2, 3)).requires_grad_()
    m = w > 2
    assert not m.requires_grad and m.grad_fn is None and m.dtype is T.bool_
    with fw.dual_level():
        x = fw.make_dual(T.asarray([1.0, 3.0]), T.asarray([1.0, 1.0]))
        r = x > 2.0
        assert r.tolist() == [False, True] and fw.unpack_dual(r).tangent is None
    f = T.compile(lambda x, y: T.where(x > y, x, y) * (x != 0.0))
    for s in range(4):
        u, v = np.arange(4.0) - s, np.full(4, 1.0)
        _same(f(T.asarray(u), T.asarray(v)), np.where(u > v, u, v) * (u != 0))
