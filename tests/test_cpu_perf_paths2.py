"""Correctness of the faster paths of hunt 8 (performance, round 2): each case runs the path a
change added and compares with NumPy / PyTorch / the path it replaced, exactly. No timings here
(benchmarks/cpu_cliffs2.py times them).

- topk's selection kernel (tensor/cpu/csrc/sort.h SX_TOPK_DEF, family "topk"): the same values
  and indices as the stable sort cut to k, every dtype, ties, NaN, signed zeros, any axis;
- pad's edge / wrap / reflect / symmetric as block copies (tensor/pad_modes.py pad_by_index),
  and nn.functional.pad's reflect / replicate / circular through it;
- concatenate / stack of many contiguous tensors in one kernel call (tensor/cpu/blocks.py);
- item() / float() read straight from host memory, x[i] of an int key as one view;
- adaptive average pooling to size 1 as one mean.
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from tensor import sorting

REAL = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
        "uint16", "uint32", "uint64", "bool"]


def _bits(t) -> np.ndarray:
    if t.dtype == T.bfloat16:
        t = t.astype(T.float32)   # exact
    return np.ascontiguousarray(t.numpy())


def _sorted_topk(x, k, dim, largest):
    """topk as it was: the stable argsort cut to k (the selection kernel switched off)."""
    keep = sorting.TOPK_SELECT_MAX
    sorting.TOPK_SELECT_MAX = 0
    try:
        return T.topk(x, k, dim, largest)
    finally:
        sorting.TOPK_SELECT_MAX = keep


def _ties_and_nans(rng, shape, d):
    if d == "bool":
        return T.asarray(rng.random(shape) > 0.5)
    a = rng.integers(-4, 5, shape).astype(np.float64)
    if d in ("float32", "float64", "float16", "bfloat16"):
        a[rng.random(shape) < 0.1] = np.nan
        a[rng.random(shape) < 0.1] = -0.0
        a[rng.random(shape) < 0.05] = -np.inf
    elif d.startswith("uint"):
        a = np.abs(a)
    return T.asarray(a).astype(d)


# ------------------------------------------------------------------------ topk

@pytest.mark.parametrize("d", REAL)
def test_topk_selection_equals_the_sort_prefix(d):
    # the new kernel (a bounded heap) must give the stable sort's first k bit for bit: ties by
    # position, NaN the largest, -0.0 == +0.0 in input order
    rng = np.random.default_rng(REAL.index(d))
    for shape, dim in (((3, 97), -1), ((97, 4), 0), ((5, 40, 6), 1), ((300,), 0)):
        x = _ties_and_nans(rng, shape, d)
        for k in (1, 3, shape[dim] // 4):
            for largest in (True, False):
                got, want = T.topk(x, k, dim, largest), _sorted_topk(x, k, dim, largest)
                assert sorting._selects(x, k, dim % x.ndim)
                np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
                assert got.values.dtype == want.values.dtype
                assert _bits(got.values).tobytes() == _bits(want.values).tobytes()


def test_topk_selection_against_numpy_and_torch():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((20, 500)).astype(np.float32)
    a[3, 17] = a[3, 400] = 9.0     # a tie at the top: the smaller index first
    a[5, 9] = np.nan               # NaN is the largest (PyTorch's rule)
    r = T.topk(T.from_numpy(a), 5)
    order = np.argsort(-np.where(np.isnan(a), np.inf, a), axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(r.indices.numpy(), order)
    np.testing.assert_array_equal(r.values.numpy(), np.take_along_axis(a, order, 1))
    assert r.indices.numpy()[3, :2].tolist() == [17, 400] and r.indices.numpy()[5, 0] == 9
    torch = pytest.importorskip("torch")
    b = rng.standard_normal((7, 300)).astype(np.float64)   # no ties: torch's order is unique
    for largest in (True, False):
        got, want = T.topk(T.from_numpy(b), 6, 1, largest), torch.topk(torch.from_numpy(b), 6, 1, largest)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


def test_topk_selection_layouts_and_edges():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 48)).astype(np.float32)
    x = T.from_numpy(a)
    for v in (x.T, x[::-2], x[:, ::3], T.flip(x, 1)):   # non-contiguous inputs
        for dim in (0, 1):
            k = v.shape[dim] // 5
            got, want = T.topk(v, k, dim), _sorted_topk(v, k, dim, True)
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    # sorted input (every element enters the heap), constant input, empty rows
    asc = T.arange(1000, dtype=T.float32)
    assert T.topk(asc, 4).indices.tolist() == [999, 998, 997, 996]
    assert T.topk(asc, 4, largest=False).indices.tolist() == [0, 1, 2, 3]
    assert T.topk(T.zeros(500), 3).indices.tolist() == [0, 1, 2]
    e = T.topk(T.zeros((0, 40)), 2)
    assert e.values.shape == (0, 2) and e.indices.shape == (0, 2)
    # sorted=False returns the same (sorted) result, as before
    np.testing.assert_array_equal(T.topk(x, 3, sorted=False).indices.numpy(),
                                  T.topk(x, 3).indices.numpy())


def test_topk_selection_keeps_the_gradient():
    x = T.tensor(np.arange(40.0).reshape(2, 20)[:, ::-1].copy(), requires_grad=True)
    T.topk(x, 3).values.sum().backward()
    g = np.zeros((2, 20))
    g[:, :3] = 1
    np.testing.assert_array_equal(x.grad.numpy(), g)


@pytest.mark.usefixtures("device")
def test_topk_on_each_device_agrees():
    a = np.tile(np.array([3.0, np.nan, 1.0, 3.0, -0.0, 0.0, 7.0, 7.0], np.float32), 6)
    r = T.topk(T.asarray(a), 5)
    order = np.argsort(-np.where(np.isnan(a), np.inf, a), kind="stable")[:5]
    np.testing.assert_array_equal(r.indices.numpy(), order)
    np.testing.assert_array_equal(r.values.numpy(), a[order])


# ------------------------------------------------------------------------ pad

@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric"])
def test_pad_index_modes_as_block_copies(mode):
    # the block-copy path must equal NumPy's pad (the corners from values padded before);
    # caught while writing it: a wrong base offset along the padded axis itself
    rng = np.random.default_rng(["edge", "wrap", "reflect", "symmetric"].index(mode))
    for shape, w in (((6,), [(7, 8)]), ((3, 6, 4), [(8, 6), (0, 5), (5, 3)]), ((1, 5), [(2, 3), (4, 4)]),
                     ((4, 5), [(2, 2), (0, 0)]), ((5, 4), [(0, 0), (1, 9)])):
        a = rng.standard_normal(shape).astype(np.float32)
        for v, av in ((T.from_numpy(a), a), (T.flip(T.from_numpy(a), 0), a[::-1])):
            np.testing.assert_array_equal(T.pad(v, w, mode=mode).numpy(), np.pad(av, w, mode=mode))
    b = rng.random((3, 4)) > 0.5
    np.testing.assert_array_equal(T.pad(T.asarray(b), 2, mode=mode).numpy(), np.pad(b, 2, mode=mode))
    z = T.pad(T.zeros((0, 3)), [(0, 0), (1, 1)], mode=mode)
    assert z.shape == (0, 5)


@pytest.mark.usefixtures("device")
def test_pad_reflect_on_each_device():
    a = np.arange(12.0).reshape(3, 4)
    got = T.pad(T.asarray(a), 2, mode="reflect").numpy()
    np.testing.assert_array_equal(got, np.pad(a, 2, mode="reflect"))


def test_nn_pad_modes_match_torch_and_differentiate():
    torch = pytest.importorskip("torch")
    import nn.functional as F
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    for mode, p in (("reflect", (2, 1, 4, 0)), ("replicate", (3, 0, 1, 7)), ("circular", (6, 2, 5, 1)),
                    ("circular", (-1, 2, 0, 3)), ("reflect", (1, -2, 0, 0))):
        got = F.pad(T.from_numpy(a), p, mode=mode).numpy()
        np.testing.assert_array_equal(got, torch.nn.functional.pad(torch.from_numpy(a), p, mode=mode).numpy())
    x = T.tensor(a, requires_grad=True)
    F.pad(x, (1, 2, 2, 1), mode="reflect").sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.nn.functional.pad(xt, (1, 2, 2, 1), mode="reflect").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


# ------------------------------------------------------------------------ joins

@pytest.mark.parametrize("d", ["float32", "int8", "float64", "complex64", "bool", "float16"])
def test_concatenate_and_stack_of_many(d):
    rng = np.random.default_rng(5)
    for base, axis in (((3,), 0), ((2, 3), 1), ((4, 2, 3), -2), ((2, 0, 3), 2)):
        arrs = []
        for _ in range(12):
            s = list(base)
            s[axis] = int(rng.integers(0, 3))
            arrs.append((rng.standard_normal(s) * 5).astype(d))
        ts = [T.asarray(x) for x in arrs]
        got = T.concatenate(ts, axis=axis).numpy()
        np.testing.assert_array_equal(got, np.concatenate(arrs, axis=axis))
        ts[3] = T.flip(T.asarray(arrs[3][::-1].copy()), 0)   # a non-contiguous one: per-input copies
        np.testing.assert_array_equal(T.concatenate(ts, axis=axis).numpy(), np.concatenate(arrs, axis=axis))
        same = [(rng.standard_normal(base) * 5).astype(d) for _ in range(10)]
        for sax in range(-len(base) - 1, len(base) + 1):
            got = T.stack([T.asarray(x) for x in same], axis=sax)
            np.testing.assert_array_equal(got.numpy(), np.stack(same, axis=sax))
    mixed = [T.ones(2, dtype=T.int8)] * 9 + [T.ones(2, dtype=T.float32)]   # promotion: per input
    assert T.concatenate(mixed).dtype == T.float32


@pytest.mark.usefixtures("device")
def test_concatenate_many_on_each_device():
    arrs = [np.full((2,), i, np.float32) for i in range(10)]
    np.testing.assert_array_equal(T.concatenate([T.asarray(a) for a in arrs]).numpy(), np.concatenate(arrs))
    np.testing.assert_array_equal(T.stack([T.asarray(a) for a in arrs], 1).numpy(), np.stack(arrs, 1))


def test_concatenate_many_keeps_the_gradient():
    xs = [T.tensor(np.full((2,), float(i)), requires_grad=True) for i in range(10)]
    (T.concatenate(xs) * T.arange(20.0)).sum().backward()
    np.testing.assert_array_equal(xs[3].grad.numpy(), [6.0, 7.0])
    ys = [T.tensor(np.full((2,), float(i)), requires_grad=True) for i in range(10)]
    (T.stack(ys, 1) * T.arange(20.0).reshape(2, 10)).sum().backward()
    np.testing.assert_array_equal(ys[3].grad.numpy(), [3.0, 13.0])


# ------------------------------------------------------------------------ one element

@pytest.mark.parametrize("d", REAL + ["complex64", "complex128"])
def test_item_of_each_dtype(d):
    for v in (1.5, -3.0, 0.0, 200.0, 7.0):
        a = np.array([v]).astype(d) if d != "bfloat16" else None
        t = T.asarray(np.array([v])).astype(d) if a is None else T.asarray(a)
        r = t.item()
        if a is not None:
            e = a.reshape(()).item()
            assert type(r) is type(e) and r == e
        assert t.reshape(1, 1).item() == r
    x = T.arange(10).astype(d if d != "bool" else "int8")
    assert x[7:8].item() == x.tolist()[7] and T.flip(x, 0)[0:1].item() == x.tolist()[9]
    with pytest.raises(ValueError, match="one-element"):
        x.item()


def test_item_nan_signed_zero_and_scalars():
    t = T.asarray(np.array([np.nan, -0.0, 2.0 ** 63], np.float64))
    assert np.isnan(t[0].item()) and str(t[1].item()) == "-0.0"
    assert float(t[2]) == 2.0 ** 63 and int(T.asarray(np.array([2 ** 64 - 1], np.uint64))) == 2 ** 64 - 1
    assert T.asarray(np.array([True])).item() is True


@pytest.mark.usefixtures("device")
def test_int_getitem_is_a_view_with_numpy_semantics(device):
    a = np.arange(24).reshape(4, 3, 2)
    x = T.asarray(a)
    for i in (0, 3, -1, -4):
        np.testing.assert_array_equal(x[i].numpy(), a[i])
        np.testing.assert_array_equal(x[::-1][i].numpy(), a[::-1][i])
        np.testing.assert_array_equal(x.swapaxes(0, 2)[i % 2].numpy(), a.swapaxes(0, 2)[i % 2])
    assert x[1][2][1].item() == a[1, 2, 1]
    for bad in (4, -5):
        with pytest.raises(IndexError, match="out of bounds"):
            x[bad]
    with pytest.raises(IndexError):
        T.asarray(5)[0]
    v = x[1]
    v[0, 0] = -7   # a view: writes reach x
    assert x.numpy()[1, 0, 0] == -7


# ------------------------------------------------------------------------ adaptive pooling

def test_adaptive_avg_pool_to_one_is_a_mean():
    import nn.functional as F
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2, 3, 7, 5))
    for size, axes in ((1, (2, 3)), ((1, None), (2,)), ((None, 1), (3,))):
        got = F.adaptive_avg_pool2d(T.asarray(a), size).numpy()
        np.testing.assert_allclose(got, a.mean(axis=axes, keepdims=True), rtol=1e-13)
    np.testing.assert_allclose(F.adaptive_avg_pool3d(T.asarray(a), 1).numpy(),
                               a.mean(axis=(1, 2, 3), keepdims=True), rtol=1e-13)
    h = F.adaptive_avg_pool2d(T.asarray(a.astype(np.float16)), 1)
    assert h.dtype == T.float16 and h.shape == (2, 3, 1, 1)
    x = T.tensor(a, requires_grad=True)
    F.adaptive_avg_pool2d(x, 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(a.shape, 1 / 35))
    torch = pytest.importorskip("torch")
    b = rng.standard_normal((2, 4, 9, 6)).astype(np.float32)
    for size in (1, (1, 2), (3, 1)):
        np.testing.assert_allclose(F.adaptive_avg_pool2d(T.from_numpy(b), size).numpy(),
                                   torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(b), size).numpy(),
                                   rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------------ float32 arctan

def test_float32_arctan_is_correctly_rounded_on_samples():
    # vm_atanf (tensor/cpu/csrc/vmath.h, computed in double) replaced libm's scalar atanf:
    # every sample must equal NumPy's float64 arctan rounded to float32 (the correctly rounded
    # result but in hard cases; none in these), signs of zero and NaN kept
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2 ** 32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), np.linspace(-5, 5, 400_001, dtype=np.float32),
                        np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, 3.4e38,
                                    0.26794919, 0.2679492, 3.7320508, 3.732051])])
    got = T.arctan(T.from_numpy(x)).numpy()
    with np.errstate(invalid="ignore"):
        want = np.arctan(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()
    c = np.complex64([0.5 + 0.25j, -2 + 1j])   # complex64 arctan (which may call atanf) unchanged
    np.testing.assert_allclose(T.arctan(T.asarray(c)).numpy(), np.arctan(c), rtol=1e-6)


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_float32_sin_cos_correctly_rounded_on_samples(fn):
    # vm_sinf / vm_cosf (vmath.h: reduction by a 2/pi table for every exponent, computed in
    # double) replaced libm's scalar calls: equal to NumPy's float64 result rounded to float32
    # on random bit patterns (huge arguments included), near multiples of pi/2, and specials
    rng = np.random.default_rng(12)
    bits = rng.integers(0, 2 ** 32, 600_000, dtype=np.uint64).astype(np.uint32)
    k = (np.arange(1, 20001) * (np.pi / 2)).astype(np.float32)
    x = np.concatenate([bits.view(np.float32), np.linspace(-20, 20, 200_001, dtype=np.float32), k,
                        np.nextafter(k, np.float32(0)), np.nextafter(k, np.float32(np.inf)),
                        np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4028235e38,
                                    -3.4028235e38, 16367173 * 2.0 ** 72, 1.5707963, 3.1415927])])
    got = getattr(T, fn)(T.from_numpy(x)).numpy()
    with np.errstate(invalid="ignore"):
        want = getattr(np, fn)(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    c = np.complex64([0.5 + 0.25j, -2 + 1j, 100 - 3j])   # complex64 (through sinf / cosf too)
    np.testing.assert_allclose(getattr(T, fn)(T.asarray(c)).numpy(), getattr(np, fn)(c), rtol=1e-6)
