"""The tiled elementwise path for operands in different memory orders (cuda_src/elementwise.cuh
sx_ew_tiled, tensor/cuda/launch.py _tile_plan).

When the output is row-major and an input is transposed (x.T.contiguous(), x.T + y into a
row-major result, a cast of a transposed view into a contiguous tensor, copy_ between layouts)
the launch stages the transposed input through shared memory in 32x32 tiles. On a CUDA device
(a GPU, or the CPU emulator that tests/conftest.py switches on) these check, for several dtypes,
edge shapes (tiles cut by the shape), a batch dim and broadcast/scalar operands, that

- the results equal NumPy exactly (small integer-valued inputs: every op here is exact), and
  bit for bit the same op computed from contiguous operands (the contiguous path);
- the tiled kernel was the one launched (launch._plan is spied on), and only where it should be.
Sizes stay small: the emulator runs every CUDA thread on the CPU.
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers import as_compute, bf16_round, make_tensor, small_values, to_np

import tensor as T
from tensor import dtypes as dt


def _cuda_available() -> bool:
    try:
        return T.cuda.is_available()
    except Exception:  # noqa: BLE001 - a half-installed backend counts as absent
        return False


pytestmark = pytest.mark.skipif(not _cuda_available(), reason="no CUDA device (set "
                                "STRIDEX_CUDA_EMULATOR=1 to run these on the CPU emulator)")
DEV = "cuda"
DTYPES = (dt.bool_, dt.int8, dt.int64, dt.float16, dt.bfloat16, dt.float32, dt.float64)
# (rows, cols) of the row-major result; the transposed operand is (cols, rows) row-major
SHAPES = [(100, 7), (33, 64), (65, 100), (7, 100), (64, 65), (100, 31), (31, 33)]
# too thin or too small (launch.TILE_MIN, TILE_AREA): the strided path
EDGE_SHAPES = [(1, 64), (65, 1), (1, 1), (2, 100), (100, 3), (31, 7), (7, 33), (4, 4)]


@pytest.fixture
def paths(monkeypatch):
    """[(kernel name, path)] of every elementwise launch made during the test."""
    from tensor.cuda import launch as L
    rec = []
    orig = L._plan

    def spy(name, out, ins):
        r = orig(name, out, ins)
        rec.append((name, r[2]))
        return r

    monkeypatch.setattr(L, "_plan", spy)
    return rec


def _tiled(paths, prefix: str) -> bool:
    return any(n.startswith(prefix) and p == "tiled" for n, p in paths)


def _vals(shape, d, seed=0):
    return small_values(np.random.default_rng(seed), shape, d)


def _ref(fn, d, *arrays):
    """fn over NumPy arrays of dtype d (bfloat16: float32, rounded to bfloat16)."""
    if d is dt.bfloat16:
        return bf16_round(fn(*[np.asarray(a, np.float32) for a in arrays]))
    return fn(*[np.asarray(a, d.np) for a in arrays])


def _eq(t, want):
    got = to_np(t)
    want = np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want.astype(got.dtype))


def _bits(t):
    """The result's bits (bfloat16 widens to float32 exactly)."""
    if t.dtype is dt.bfloat16:
        t = t.astype(dt.float32)
    return np.ascontiguousarray(t.to("cpu").numpy()).view(np.uint8)


ids = {"ids": lambda v: v.name if isinstance(v, dt.DType) else "x".join(map(str, v))}


@pytest.mark.parametrize("shape", SHAPES, **ids)
@pytest.mark.parametrize("d", DTYPES, **ids)
def test_transpose_contiguous(d, shape, paths):
    R, C = shape
    a = _vals((C, R), d)
    x = make_tensor(a, d, DEV)
    y = x.T.contiguous()
    assert y.is_contiguous() and y.shape == (R, C)
    _eq(y, a.T)
    assert _tiled(paths, "cast_")


@pytest.mark.parametrize("shape", EDGE_SHAPES, **ids)
@pytest.mark.parametrize("d", (dt.int8, dt.float32), **ids)
def test_thin_shapes_not_tiled(d, shape, paths):
    R, C = shape
    a = _vals((C, R), d)
    y = make_tensor(a, d, DEV).T.contiguous()
    _eq(y, a.T)
    assert not any(p == "tiled" for _, p in paths)


@pytest.mark.parametrize("shape", SHAPES[:3], **ids)
@pytest.mark.parametrize("d", DTYPES, **ids)
def test_transposed_plus_contiguous(d, shape, paths):
    """x.T + y: the result is laid out like x.T, so y is the operand read through tiles; with
    out= row-major, x.T is."""
    R, C = shape
    a, b = _vals((C, R), d, 1), _vals((R, C), d, 2)
    x, y = make_tensor(a, d, DEV), make_tensor(b, d, DEV)
    want = _ref(lambda u, v: u + v, d, a.T, b)
    r = x.T + y
    _eq(r, want)
    assert _tiled(paths, "add_")
    paths.clear()
    out = T.empty((R, C), dtype=d, device=DEV)
    assert T.add(x.T, y, out=out) is out
    _eq(out, want)
    assert _tiled(paths, "add_")
    assert np.array_equal(_bits(out), _bits(x.T.contiguous() + y))   # the contiguous path


@pytest.mark.parametrize("d", DTYPES, **ids)
def test_both_transposed_and_broadcast_operands(d, paths):
    R, C = 33, 65
    a, b = _vals((C, R), d, 3), _vals((C, R), d, 4)
    row, col = _vals((C,), d, 5), _vals((R, 1), d, 6)
    x, y = make_tensor(a, d, DEV), make_tensor(b, d, DEV)
    out = T.empty((R, C), dtype=d, device=DEV)
    T.add(x.T, y.T, out=out)                                    # both staged
    _eq(out, _ref(lambda u, v: u + v, d, a.T, b.T))
    assert _tiled(paths, "add_")
    for other, ref in ((make_tensor(row, d, DEV), row), (make_tensor(col, d, DEV), col)):
        paths.clear()
        T.add(x.T, other, out=out)                               # broadcast read directly
        _eq(out, _ref(lambda u, v: u + v, d, a.T, ref))
        assert _tiled(paths, "add_")
    if d is not dt.bool_:
        paths.clear()
        T.multiply(x.T, 3, out=out)                              # a Python scalar operand
        _eq(out, _ref(lambda u: u * 3, d, a.T))
        assert _tiled(paths, "multiply_")


@pytest.mark.parametrize("shape", SHAPES[:4], **ids)
@pytest.mark.parametrize("d", DTYPES, **ids)
def test_unary_into_contiguous_out(d, shape, paths):
    R, C = shape
    a = _vals((C, R), d, 7)
    x = make_tensor(a, d, DEV)
    out = T.empty((R, C), dtype=d, device=DEV)
    if d.kind == "f":
        fn, name = T.exp, "exp_"
    elif d is dt.bool_:
        fn, name = T.logical_not, "logical_not_"
    else:
        fn, name = T.negative, "negative_"
    assert fn(x.T, out=out) is out
    assert _tiled(paths, name)
    same = fn(x.T.contiguous())                                 # the contiguous path
    assert np.array_equal(_bits(out), _bits(same))
    if d.kind == "f":
        with np.errstate(over="ignore"):
            want = as_compute(np.exp(as_compute(a, d).astype(np.float64)), d).astype(np.float64).T
        np.testing.assert_allclose(to_np(out).astype(np.float64), want, rtol=1e-2 if d.itemsize == 2
                                   else 1e-6)
    elif d is dt.bool_:
        _eq(out, ~a.T)
    else:
        _eq(out, -a.T)


CASTS = [(dt.float32, dt.float16), (dt.float16, dt.float32), (dt.bfloat16, dt.float64),
         (dt.float64, dt.bfloat16), (dt.int64, dt.float32), (dt.float32, dt.int8),
         (dt.bool_, dt.float64), (dt.int8, dt.int64), (dt.float64, dt.bool_), (dt.int64, dt.int8)]


@pytest.mark.parametrize("shape", SHAPES[1:3], **ids)
@pytest.mark.parametrize("src,dst", CASTS, ids=[f"{s.name}-{t.name}" for s, t in CASTS])
def test_astype_of_transposed_view(src, dst, shape, paths):
    R, C = shape
    a = _vals((C, R), src, 8)
    x = make_tensor(a, src, DEV)
    want = as_compute(a.T, dst)
    out = T.empty((R, C), dtype=dst, device=DEV)
    out.copy_(x.T)                                               # cast into a row-major tensor
    _eq(out, want)
    assert _tiled(paths, f"cast_{src.sfx}_{dst.sfx}")
    _eq(x.T.astype(dst), want)                                   # keeps x.T's layout: any path
    _eq(x.T.astype(dst).contiguous(), want)


@pytest.mark.parametrize("d", DTYPES, **ids)
def test_copy_between_layouts(d, paths):
    R, C = 65, 33
    a = _vals((R, C), d, 9)
    x = make_tensor(a, d, DEV)
    dst = T.empty((C, R), dtype=d, device=DEV)
    dst.T.copy_(x)                                               # the output is the transposed one
    _eq(dst, a.T)
    assert _tiled(paths, "cast_")
    paths.clear()
    big = T.zeros((2 * C, 3 * R), dtype=d, device=DEV)
    view = big[::2, 1::3]                                        # a strided output
    view.copy_(x.T)
    want = np.zeros((2 * C, 3 * R), dtype=a.dtype)
    want[::2, 1::3] = a.T
    _eq(big, want)
    assert _tiled(paths, "cast_")


@pytest.mark.parametrize("d", (dt.int8, dt.float16, dt.float32, dt.float64), **ids)
def test_batched_3d(d, paths):
    """A batch dim (outer, looped over by the grid) in each position."""
    B, R, C = 3, 33, 40
    a = _vals((B, C, R), d, 10)
    x = make_tensor(a, d, DEV)
    y = x.transpose(0, 2, 1).contiguous()                        # batch outermost
    _eq(y, a.transpose(0, 2, 1))
    assert _tiled(paths, "cast_")
    paths.clear()
    b = _vals((C, B, R), d, 11)
    z = make_tensor(b, d, DEV).permute(1, 2, 0).contiguous()     # batch in the middle of x
    _eq(z, b.transpose(1, 2, 0))
    assert _tiled(paths, "cast_")
    paths.clear()
    c = _vals((R, C), d, 12)
    s = T.add(x.transpose(0, 2, 1), make_tensor(c, d, DEV), out=T.empty((B, R, C), dtype=d,
                                                                          device=DEV))
    _eq(s, _ref(lambda u, v: u + v, d, a.transpose(0, 2, 1), c))  # broadcast over the batch
    assert _tiled(paths, "add_")
    paths.clear()
    neg = make_tensor(a, d, DEV)[:, ::-1, :].transpose(0, 2, 1).contiguous()   # negative stride
    _eq(neg, a[:, ::-1, :].transpose(0, 2, 1))
    assert _tiled(paths, "cast_")


def test_where_tiled(paths):
    R, C = 31, 65
    rng = np.random.default_rng(13)
    c = rng.random((C, R)) < 0.5
    a, b = _vals((C, R), dt.float32, 14), _vals((R, C), dt.float32, 15)
    r = T.where(make_tensor(c, dt.bool_, DEV).T, make_tensor(a, dt.float32, DEV).T,
                make_tensor(b, dt.float32, DEV))
    _eq(r, np.where(c.T, a.T, b))
    assert _tiled(paths, "where_")


def test_path_function():
    from tensor.cuda import launch as L
    x = T.zeros((40, 50), dtype="float32", device=DEV)
    out = T.empty((50, 40), dtype="float32", device=DEV)
    assert L.elementwise_path(out, [x.T]) == "tiled"
    assert L.elementwise_path(out.T, [x]) == "tiled"                 # the output transposed
    assert L.elementwise_path(out.T, [x.T.T]) == "tiled"
    o2 = T.empty((40, 50), dtype="float32", device=DEV)
    gap = T.zeros((50, 80), dtype="float32", device=DEV)[:, ::2].T   # B stride 2 elements
    assert L.elementwise_path(o2, [gap]) == "strided"
    small = T.zeros((64, 4, 4), dtype="float32", device=DEV)       # batched tiny matrices
    assert L.elementwise_path(T.empty((64, 4, 4), device=DEV), [small.transpose(0, 2, 1)]) \
        == "strided"
    col = T.zeros((40, 1), dtype="float32", device=DEV)
    assert L.elementwise_path(o2, [T.broadcast_to(col, (40, 50))]) == "strided"
    assert L.elementwise_path(x, [x]) in ("vec", "contig")
    assert L.elementwise_path(x[:, ::2], [x[:, 1::2]]) == "strided"   # same order: not tiled
    assert L.elementwise_path(T.empty((0, 3), device=DEV), [T.empty((3, 0), device=DEV).T]) == "empty"


@pytest.mark.parametrize("d", (dt.int8, dt.float32, dt.float64), **ids)
def test_more_tiles_than_blocks(d, paths):
    """Blocks loop over tiles (grid-stride), crossing batch boundaries between iterations (on
    the emulator, 2 SMs: 16 blocks for 45 tiles)."""
    from tensor.cuda import launch as L
    from tensor.cuda import runtime as CR
    B, R, C = 5, 70, 90
    a, c = _vals((B, C, R), d, 16), _vals((B, R, C), d, 17)
    x = make_tensor(a, d, DEV)
    out = T.empty((B, R, C), dtype=d, device=DEV)
    _, blocks, path = L._plan("probe", out, [x.transpose(0, 2, 1)])
    assert path == "tiled" and blocks == min(B * 3 * 3, 8 * CR.sm_count(out._storage.device))
    T.add(x.transpose(0, 2, 1), make_tensor(c, d, DEV), out=out)
    _eq(out, _ref(lambda u, v: u + v, d, a.transpose(0, 2, 1), c))
    assert _tiled(paths, "add_")


def test_a_planned_layout_takes_new_addresses_scalars_and_alignment():
    """elementwise launches are planned once per layout: a second launch of the same layout
    must read its own operands, its own scalar values, and a misaligned operand must not take
    the vectorised plan of an aligned one."""
    from tensor.cuda import launch as L
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((48, 40)), rng.standard_normal((48, 40))
    for v in (1.5, -2.0):   # the same layout (transposed + scalar), two scalars
        got = to_np(make_tensor(a, dt.float64).T + v)
        np.testing.assert_array_equal(got, a.T + v)
    ta, tb = make_tensor(a, dt.float64), make_tensor(b, dt.float64)
    np.testing.assert_array_equal(to_np(ta.T + ta.T), a.T + a.T)
    np.testing.assert_array_equal(to_np(tb.T + tb.T), b.T + b.T)   # new addresses
    flat = make_tensor(np.arange(1001.0), dt.float32)   # where(): planned (no fast path)
    whole, shifted = flat[:1000], flat[1:]              # 16-byte aligned, and 4 bytes off
    cond = make_tensor(np.arange(1000) % 3 == 0, dt.bool_)
    out = T.where(cond, whole, -whole)
    assert L.elementwise_path(out, [cond, whole, whole]) == "vec"
    want = np.where(np.arange(1000) % 3 == 0, 1.0, -1.0)
    np.testing.assert_array_equal(to_np(out), want * np.arange(1000.0))
    out = T.where(cond, shifted, -shifted)
    assert L.elementwise_path(out, [cond, shifted, shifted]) == "contig"   # no 16-byte loads
    np.testing.assert_array_equal(to_np(out), want * np.arange(1.0, 1001.0))
