"""CUDA indexing kernels (cuda_src/index.cuh, tensor/cuda/index.py).

- Every module of the "index" family compiles with NVRTC for sm_80, sm_90 and sm_100 (no GPU needed),
  and the ctypes mirrors of the by-value argument structs match the device layout.
- On a CUDA device (a GPU, or the CPU emulator with STRIDEX_CUDA_EMULATOR=1): every op of
  tensor/indexing.py (and repeat) on cuda tensors against NumPy and against the CPU backend,
  bit for bit (gathers and scatters copy, and accumulations add in the CPU's order with the
  same rounding; "index" is an `exact` family, built without FMA contraction), for several
  dtypes, non-contiguous inputs, duplicate and negative indices,
  empty results, and out-of-range errors (raised before anything is written; the library keeps
  working). Sizes stay small: the emulator runs every CUDA thread on the CPU.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from helpers import CUDA_ARCHS, nvrtc_offsetof, nvrtc_or_skip, synced

import tensor as T
from tensor import dtypes as dt
from tensor import indexing as I
from tensor import manipulation as M
from tensor import scatter as S

# ================================================================ compile (NVRTC, no GPU)


def _modules():
    from tensor.cuda import index as CI
    return list(CI.DTYPES)


def test_index_family_registered():
    from tensor.cuda import index as CI
    from tensor.cuda import kernels as CK
    assert CK.entries("index", None) == CI.index_entries(None)
    assert CK.kernel_names("index", dt.float32) == ["sx_scatter_add_f32"]
    names = CK.kernel_names("index", None)
    for w in (1, 2, 4, 8):
        assert {f"sx_gather_{w}", f"sx_take_{w}", f"sx_scatter_{w}"} <= set(names)


def test_index_arg_structs_match_device_layout():
    nvrtc = nvrtc_or_skip()
    from tensor.cuda import index as CI
    checks = []
    for name, st in CI.ARG_STRUCTS.items():
        checks.append(f'static_assert(sizeof({name}) == {ctypes.sizeof(st)}, "{name}");')
        for f, *_ in st._fields_:
            checks.append(f"static_assert(SX_OFFSETOF({name}, {f}) == {getattr(st, f).offset}, "
                          f'"{name}.{f}");')
        assert ctypes.sizeof(st) <= 4096  # the kernel parameter limit
    src = '#include "index.cuh"\n' + nvrtc_offsetof(nvrtc) + "\n".join(checks) + "\n"
    for arch in CUDA_ARCHS:
        nvrtc.compile("index_layout", src, arch)


# ================================================================ device tests

def _cuda_available() -> bool:
    try:
        return T.cuda.is_available()
    except Exception:  # noqa: BLE001 - a half-installed backend counts as absent
        return False


cuda = pytest.mark.skipif(not _cuda_available(), reason="no CUDA device (set STRIDEX_CUDA_EMULATOR=1 "
                          "to run these on the CPU emulator)")
DEV = "cuda"


def np_of(t) -> np.ndarray:
    t = t.to("cpu")
    if t.dtype is dt.bfloat16:
        t = t.astype(dt.float32)
    return np.array(t.numpy(), copy=True)


def same(a, b) -> None:
    """Equal shape, dtype and bits (NaNs included)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    if a.dtype.kind == "f":
        assert np.array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")), (a, b)
    else:
        assert np.array_equal(a, b), (a, b)


def vals(shape, d: dt.DType, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(-50, 50, size=shape)
    if d is dt.bool_:
        return a > 0
    if d.kind == "f":
        return (a / 4).astype(np.float32 if d is dt.bfloat16 else d.np)
    if d.kind == "u":
        return np.abs(a).astype(d.np)
    return a.astype(d.np)


def pair(a: np.ndarray, d: dt.DType = None, layout: str = "contig"):
    """(numpy values, cpu tensor, cuda tensor) for a; layout: contig, T (transposed), step, neg."""
    d = d or dt.dtype(a.dtype.name)
    if layout == "T":
        base = np.ascontiguousarray(a.T)
    elif layout == "step":
        base = np.repeat(a, 2, axis=-1)
    elif layout == "neg":
        base = np.ascontiguousarray(a[..., ::-1])
    else:
        base = a
    c = T.asarray(np.array(base)).astype(d)
    g = c.to(DEV)
    if layout == "T":
        c, g = c.T, g.T
    elif layout == "step":
        c, g = c[..., ::2], g[..., ::2]
    elif layout == "neg":
        c, g = c[..., ::-1], g[..., ::-1]
    assert g.device.type == "cuda" and g.shape == a.shape
    return a, c, g


def check(cpu_out, cuda_out, ref=None) -> None:
    assert cuda_out.device.type == "cuda"
    assert cpu_out.dtype is cuda_out.dtype
    same(np_of(cuda_out), np_of(cpu_out))
    if ref is not None:
        same(np_of(cuda_out), np.asarray(ref).astype(np_of(cpu_out).dtype))


DTYPES = (dt.float32, dt.int64, dt.float16, dt.int8, dt.bool_, dt.float64, dt.bfloat16)
LAYOUTS = ("contig", "T", "step", "neg")


# ---------------------------------------------------------------- getitem

GET_KEYS = [
    ("int_array", lambda: ([2, 0, 2, -1],)),
    ("np_array_2d", lambda: (np.array([[0, 1], [-2, 1]]),)),
    ("broadcast", lambda: (np.array([[0], [2]]), np.array([1, -1, 0]))),
    ("slice_then_array", lambda: (slice(None), [3, 0, 0])),
    ("array_slice", lambda: ([1, 0], slice(1, 3))),
    ("separated", lambda: ([0, 2], slice(None), )),
    ("ellipsis_array", lambda: (Ellipsis, [1, 1, -4])),
    ("newaxis_array", lambda: (None, [2, 1], 1)),
    ("scalar_and_array", lambda: (1, [3, 2, 1, 0])),
    ("bool_scalar", lambda: (True, [0, 1])),
    ("empty_array", lambda: ([],)),
]


@cuda
@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,key", GET_KEYS, ids=[k[0] for k in GET_KEYS])
def test_getitem_advanced(name, key, layout, d):
    a, c, g = pair(vals((3, 4), d), d, layout)
    k = key()
    check(c[k], g[k], None if d is dt.bfloat16 else a[k])


@cuda
def test_getitem_3d_mixed_and_index_tensors():
    a, c, g = pair(vals((3, 4, 5), dt.float32), layout="T")
    keys = [([0, 2], slice(None), [1, -1]),                 # separated arrays: B goes in front
            (slice(1, 3), [[0, 1], [3, 2]], [4, 0]),        # adjacent arrays after a slice
            (T.tensor([2, 1]), 1),                          # a CPU index tensor
            (T.tensor([2, 1]).to(DEV), slice(None, None, 2)),  # a device index tensor
            (T.tensor([[1], [0]], dtype="int32").to(DEV), [0, 3]),  # int32 indices
            (np.array([1, 0], dtype=np.uint8), Ellipsis, np.array([4, 4]))]
    for k in keys:
        kk = tuple(np.asarray(i.to("cpu").numpy()) if isinstance(i, T.Tensor) else i for i in k)
        check(c[kk], g[k], a[kk])


@cuda
def test_getitem_index_layouts_and_many_arrays():
    a, c, g = pair(vals((4, 5), dt.int32, 22), layout="neg")
    ix = np.array([[0, 3, -1], [2, 2, 1]])
    ti = T.asarray(np.ascontiguousarray(ix.T)).to(DEV).T            # a transposed index tensor
    check(c[T.asarray(ix)], g[ti], a[ix])
    check(c[T.asarray(ix), 1:], g[ti, 1:], a[ix, 1:])
    ti2 = T.asarray(np.repeat(ix, 2, axis=1)).to(DEV)[:, ::2]       # a stepped index tensor
    check(c[1, T.asarray(ix)], g[1, ti2], a[1, ix])
    z = T.asarray(np.array(2)).to(DEV)                               # 0-d device index
    check(c[2, 1:], g[z, 1:], a[2, 1:])
    m = a[:, 0] > 0                                                  # mask + array
    check(c[T.asarray(m), [1]], g[T.asarray(m).to(DEV), [1]], a[m, [1]])
    # 10 index arrays: more than one offsets launch (8 arrays each)
    b = np.arange(2 ** 10, dtype=np.int16).reshape((2,) * 10)
    keys = tuple(np.array([i % 2, (i + 1) % 2, -1]) for i in range(10))
    gb = T.asarray(b).to(DEV)
    check(T.asarray(b)[keys], gb[keys], b[keys])
    bad = keys[:9] + (np.array([0, 0, 2]),)
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 9 with size 2"):
        synced(gb[bad])   # (a GPU reports at the next synchronization)


@cuda
def test_radix_sort_is_stable():
    from tensor.cuda import index as CI
    rng = np.random.default_rng(23)
    for n, hi in ((1, 0), (5000, 7), (4100, 123456), (3000, 0)):
        off = rng.integers(-hi, hi + 1, n) * 3
        t = T.asarray(off).to(DEV)
        perm, keys = CI._sort_positions(t.device, t, n, -3 * hi, 3 * hi)
        order = np.argsort(off, kind="stable")
        same(np_of(perm), order)
        same(np_of(keys), off[order] + 3 * hi)


@cuda
def test_getitem_basic_is_a_view():
    a, c, g = pair(vals((3, 4), dt.int64))
    v = g[1:, ::2]
    assert v.device.type == "cuda"
    same(np_of(v), a[1:, ::2])
    v[0, 0] = 99  # writes through to g (basic setitem)
    assert int(g[1, 0].item()) == 99


@cuda
@pytest.mark.parametrize("layout", ("contig", "T"))
def test_boolean_masks(layout):
    a, c, g = pair(vals((4, 5), dt.float32, 1), layout=layout)
    m2 = a > 0
    keys = [m2,                                   # a lone 2-d mask
            (a[:, 0] > 0,),                       # a 1-d mask on axis 0
            (slice(None), a[0] > -100),           # a mask after a slice (all True)
            (a[:, 0] > 0, [1, 2, 0, 4][:int((a[:, 0] > 0).sum())] or slice(None)),
            np.zeros((4, 5), bool),               # empty result
            (Ellipsis, a[1] > 0)]
    for k in keys:
        kc = tuple(T.asarray(np.asarray(i)) if isinstance(i, np.ndarray) else i for i in
                   (k if isinstance(k, tuple) else (k,)))
        kg = tuple(i.to(DEV) if isinstance(i, T.Tensor) else i for i in kc)
        check(c[kc], g[kg], a[k])


@cuda
def test_mask_spanning_several_tiles():
    # 5000 elements: three 2048-element tiles of the count / scan / fill kernels
    a = vals((5000,), dt.int32, 3)
    _, c, g = pair(a)
    m = a % 3 == 0
    check(c[T.asarray(m)], g[T.asarray(m).to(DEV)], a[m])
    same(np_of(I.nonzero(g)[0]), np.nonzero(a)[0])
    assert I.count_nonzero(g).item() == np.count_nonzero(a)


# ---------------------------------------------------------------- setitem

SET_CASES = [
    ("dups_last_wins", lambda a: ([1, 3, 1, -3],), lambda s: np.arange(4 * s[1]).reshape(4, s[1]) % 7),
    ("scalar", lambda a: ([0, 2, 2],), lambda s: 5),
    ("broadcast_row", lambda a: ([2, 0, 2],), lambda s: np.arange(s[1])),
    ("pairs_dups", lambda a: ([0, 1, 0, 0], [2, 2, 2, 1]), lambda s: np.array([1, 2, 3, 4])),
    ("slice_array", lambda a: (slice(1, 3), [3, 3, 0]), lambda s: np.array([[1, 2, 3], [4, 5, 6]])),
    ("separated_3d", None, None),
    ("mask", lambda a: (a > 0,), lambda s: 7),
    ("mask_values", lambda a: (a[:, 0] > 0,), lambda s: np.arange(s[1])),
    ("list_value", lambda a: ([0, 1],), lambda s: [[1] * s[1], [2] * s[1]]),
    ("empty", lambda a: ([],), lambda s: 3),
]


@cuda
@pytest.mark.parametrize("d", (dt.float32, dt.int16, dt.bool_, dt.float16, dt.float64),
                         ids=lambda d: d.name)
@pytest.mark.parametrize("layout", ("contig", "T", "step", "neg"))
@pytest.mark.parametrize("name,key,value", [c for c in SET_CASES if c[1] is not None],
                         ids=[c[0] for c in SET_CASES if c[1] is not None])
def test_setitem(name, key, value, layout, d):
    a, c, g = pair(vals((4, 5), d, 2), d, layout)
    k = key(a)
    v = value(a.shape)
    ref = a.copy()
    ref[k] = v
    kc = tuple(T.asarray(i) if isinstance(i, np.ndarray) else i for i in k)
    kg = tuple(i.to(DEV) if isinstance(i, T.Tensor) else i for i in kc)
    vt = v if not isinstance(v, np.ndarray) else T.asarray(v).astype(d)
    c[kc] = vt
    g[kg] = vt.to(DEV) if isinstance(vt, T.Tensor) else vt
    check(c, g, ref)


@cuda
def test_setitem_3d_separated_and_noncontiguous_value():
    a, c, g = pair(vals((3, 4, 5), dt.float32, 4), layout="step")
    k = ([0, 2, 0], slice(None), [1, 1, 1])    # B in front: value shape (3, 4)
    v = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2].T.copy()  # (3, 4)
    vt = T.asarray(np.arange(24, dtype=np.float32).reshape(4, 6)).to(DEV)[:, ::2].T
    ref = a.copy()
    ref[k] = v
    c[k] = T.asarray(v)
    g[k] = vt
    check(c, g, ref)


@cuda
def test_setitem_many_duplicates_last_wins():
    # 3000 positions over 7 targets: several radix tiles, runs of equal keys across tiles
    rng = np.random.default_rng(5)
    idx = rng.integers(-7, 7, 3000)
    v = np.arange(3000, dtype=np.int64)
    a = np.zeros(7, np.int64)
    a[idx] = v
    g = T.zeros(7, dtype="int64", device=DEV)
    g[T.asarray(idx).to(DEV)] = T.asarray(v).to(DEV)
    same(np_of(g), a)


@cuda
@pytest.mark.parametrize("d", (dt.float32, dt.int64, dt.float16), ids=lambda d: d.name)
def test_duplicates_many_tiles_many_passes(d):
    # 5000 positions into 20000 targets: 3 sort tiles, 4-5 radix passes
    rng = np.random.default_rng(24)
    idx = rng.integers(-20000, 20000, 5000) // 4
    idx[::3] = idx[0]
    v = vals((5000,), d, 25)
    vt = T.asarray(v).astype(d)
    c, g = T.zeros(20000, dtype=d), T.zeros(20000, dtype=d, device=DEV)
    c[T.asarray(idx)] = vt
    g[T.asarray(idx).to(DEV)] = vt.to(DEV)
    check(c, g)
    if d is not dt.float16:
        ref = np.zeros(20000, v.dtype)
        ref[idx] = v
        same(np_of(g), ref)
    check(S.index_add(c, 0, T.asarray(idx), vt), S.index_add(g, 0, T.asarray(idx).to(DEV), vt.to(DEV)))


@cuda
def test_setitem_large_stride_keys():
    # destination offsets with a wide range (many radix passes): columns of a wide matrix
    a = np.zeros((6, 3000), np.float32)
    idx = np.array([5, 0, 5, 2, 0, 5])
    v = np.arange(6 * 2, dtype=np.float32).reshape(6, 2)
    a[idx, ::1500] = v
    g = T.zeros((6, 3000), dtype="float32", device=DEV)
    g[T.asarray(idx), ::1500] = T.asarray(v).to(DEV)
    same(np_of(g), a)


# ---------------------------------------------------------------- take / along axis

@cuda
@pytest.mark.parametrize("d", (dt.float32, dt.int64, dt.bfloat16, dt.uint8), ids=lambda d: d.name)
def test_take(d):
    a, c, g = pair(vals((3, 4), d, 6), d, "T")
    for idx, axis in (([1, -1, 0, 1], None), ([[2, 0], [1, 1]], 1), ([0, 0, 2], 0), ([], 1)):
        ref = None if d is dt.bfloat16 else np.take(a, idx, axis=axis)
        check(I.take(c, idx, axis=axis), I.take(g, idx, axis=axis), ref)
        check(I.take(c, idx, axis=axis), I.take(g, T.asarray(np.array(idx, np.int64)).to(DEV), axis=axis))


@cuda
@pytest.mark.parametrize("layout", ("contig", "neg"))
def test_take_along_axis(layout):
    a, c, g = pair(vals((3, 5), dt.float32, 7), layout=layout)
    idx = np.argsort(a, axis=1)[:, ::-1][:, :3].copy()
    idx[0, 0] = -1
    for axis in (1, None):
        ix = idx if axis is not None else np.array([4, -2, 0])
        check(I.take_along_axis(c, T.asarray(ix), axis), I.take_along_axis(g, T.asarray(ix).to(DEV), axis),
              np.take_along_axis(a, ix, axis))


@cuda
@pytest.mark.parametrize("axis", (0, 1, None))
def test_put_along_axis_duplicates(axis):
    a, c, g = pair(vals((3, 4), dt.int32, 8), layout="T")
    ix = np.array([[0, 0, 2, 0], [1, 1, 1, 1]]) if axis == 0 else \
        (np.array([[1, 1], [3, 3], [0, -1]]) if axis == 1 else np.array([5, 5, 11, -1]))
    v = np.arange(ix.size, dtype=np.int32).reshape(ix.shape) + 100
    ref = a.copy()
    np.put_along_axis(ref, ix, v, axis)
    S.put_along_axis(c, T.asarray(ix), T.asarray(v), axis)
    S.put_along_axis(g, T.asarray(ix).to(DEV), T.asarray(v).to(DEV), axis)
    check(c, g, ref)


# ---------------------------------------------------------------- accumulation

ACC_DTYPES = (dt.float32, dt.float16, dt.bfloat16, dt.float64, dt.int32, dt.int8, dt.bool_)


@cuda
@pytest.mark.parametrize("d", ACC_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("layout", ("T", "neg"))
def test_index_add(d, layout):
    a, c, g = pair(vals((5, 3), d, 9), d, layout)
    idx = [4, 0, 4, -1, 2, 4, 0]
    src = vals((7, 3), d, 10)
    sc = T.asarray(src).astype(d)
    out_c = S.index_add(c, 0, idx, sc)
    out_g = S.index_add(g, 0, T.asarray(np.array(idx)).to(DEV), sc.to(DEV))
    check(out_c, out_g)
    same(np_of(g), np_of(c))  # the out-of-place op left x alone
    if d is dt.float32:
        ref = a.copy()
        np.add.at(ref, np.array(idx), src)
        np.testing.assert_allclose(np_of(out_g), ref, rtol=1e-6)
    # in place along axis 1, with alpha
    src2 = vals((5, 4), d, 11)
    s2 = T.asarray(src2).astype(d)
    alpha = 1 if d is dt.bool_ else 2
    S.index_add_(c, 1, [2, 2, -3, 0], s2, alpha=alpha)
    S.index_add_(g, 1, [2, 2, -3, 0], s2.to(DEV), alpha=alpha)
    check(c, g)


@cuda
@pytest.mark.parametrize("d", (dt.float32, dt.float16, dt.int64), ids=lambda d: d.name)
def test_scatter_add(d):
    a, c, g = pair(vals((3, 4), d, 12), d, "step")
    idx = np.array([[0, 2, 2, 0], [2, 2, 2, 1]])
    src = vals((2, 5), d, 13)
    sc = T.asarray(src).astype(d)
    check(S.scatter_add(c, 0, T.asarray(idx), sc), S.scatter_add(g, 0, T.asarray(idx).to(DEV), sc.to(DEV)))
    idx1 = np.array([[3, 3, 0], [1, 1, 1], [-1, 3, 0]])
    s2 = T.asarray(vals((3, 3), d, 14)).astype(d)
    S.scatter_add_(c, 1, T.asarray(idx1), s2)
    S.scatter_add_(g, 1, T.asarray(idx1).to(DEV), s2.to(DEV))
    check(c, g)


@cuda
@pytest.mark.parametrize("d", (dt.float32, dt.int16, dt.bfloat16), ids=lambda d: d.name)
def test_index_put_accumulate(d):
    a, c, g = pair(vals((4, 3), d, 15), d, "T")
    key = ([0, 3, 0, 0, -4], [1, 2, 1, 1, 1])
    v = vals((5,), d, 16)
    vt = T.asarray(v).astype(d)
    S.index_put_(c, key, vt, accumulate=True)
    S.index_put_(g, key, vt.to(DEV), accumulate=True)
    check(c, g)
    if d is dt.int16:
        ref = a.copy()
        np.add.at(ref, key, v)
        same(np_of(g), ref)
    S.index_put_(c, (c > 0,), 1, accumulate=True)   # a mask: unique destinations
    S.index_put_(g, (g > 0,), 1, accumulate=True)
    check(c, g)
    S.index_put_(c, ([1, 1],), vt[:3], accumulate=False)   # plain put: last wins
    S.index_put_(g, ([1, 1],), vt[:3].to(DEV), accumulate=False)
    check(c, g)
    S.index_put_(c, (slice(1, 3),), 2, accumulate=True)    # basic key, accumulate
    S.index_put_(g, (slice(1, 3),), 2, accumulate=True)
    check(c, g)


@cuda
def test_accumulation_is_deterministic_and_matches_cpu_bits():
    # many float32 additions into few targets: the order decides the rounding
    rng = np.random.default_rng(17)
    n = 2500
    idx = rng.integers(0, 5, n)
    src = (rng.standard_normal(n) * 1e3).astype(np.float32)
    src[::7] *= 1e-6
    cpu = S.index_add(T.zeros(5, dtype="float32"), 0, T.asarray(idx), T.asarray(src))
    gi, gs = T.asarray(idx).to(DEV), T.asarray(src).to(DEV)
    outs = [S.index_add(T.zeros(5, dtype="float32", device=DEV), 0, gi, gs) for _ in range(2)]
    same(np_of(outs[0]), np_of(outs[1]))
    same(np_of(outs[0]), np_of(cpu))   # same order and arithmetic as the CPU: bit for bit
    seq = np.zeros(5, np.float32)
    for i, s in zip(idx, src):
        seq[i] = np.float32(seq[i] + s)
    same(np_of(outs[0]), seq)


# ---------------------------------------------------------------- nonzero family

@cuda
@pytest.mark.parametrize("d", (dt.float32, dt.int8, dt.bool_), ids=lambda d: d.name)
@pytest.mark.parametrize("layout", ("contig", "T"))
def test_nonzero_argwhere_count(d, layout):
    a, c, g = pair(vals((4, 6), d, 18), d, layout)
    for rc, rg, ref in zip(I.nonzero(c), I.nonzero(g), np.nonzero(a)):
        check(rc, rg, ref)
    check(I.argwhere(c), I.argwhere(g), np.argwhere(a))
    assert I.count_nonzero(g).item() == I.count_nonzero(c).item() == np.count_nonzero(a)
    assert I.count_nonzero(g).device == g.device and I.count_nonzero(g).shape == ()
    for axis, kd in ((0, False), (1, True), ((0, 1), False), (None, True)):
        check(I.count_nonzero(c, axis=axis, keepdims=kd), I.count_nonzero(g, axis=axis, keepdims=kd),
              np.count_nonzero(a, axis=axis, keepdims=kd))


@cuda
def test_nonzero_empty_and_zero_size():
    z = T.zeros((3, 2), device=DEV)
    rows = I.nonzero(z)
    assert [r.shape for r in rows] == [(0,), (0,)] and all(r.device.type == "cuda" for r in rows)
    assert I.argwhere(z).shape == (0, 2)
    assert I.count_nonzero(z).item() == 0
    e = T.zeros((0, 4), device=DEV)
    assert I.nonzero(e)[1].shape == (0,)
    check(I.count_nonzero(T.zeros((0, 4)), axis=0), I.count_nonzero(e, axis=0), np.zeros(4, np.int64))
    assert I.argwhere(T.ones((), device=DEV)).shape == (1, 0)


@cuda
def test_exclusive_scan_multi_level():
    from tensor.cuda import index as CI
    rng = np.random.default_rng(19)
    for n in (1, 2048, 2049, 7000):
        v = rng.integers(0, 5, n)
        t = T.asarray(v).to(DEV)
        out = CI.exclusive_scan(t, n, t.device)
        same(np_of(out), np.concatenate([[0], np.cumsum(v)]))


# ---------------------------------------------------------------- repeat

@cuda
def test_repeat():
    a, c, g = pair(vals((3, 2), dt.float32, 20), layout="T")
    for reps, axis in (([1, 0, 3], 0), (2, 1), ([2, 2], 1), ([0, 0, 0], 0), (3, None)):
        check(M.repeat(c, reps, axis), M.repeat(g, reps, axis), np.repeat(a, reps, axis))
        if not isinstance(reps, int):
            check(M.repeat(c, reps, axis), M.repeat(g, T.asarray(np.array(reps)).to(DEV), axis))
    with pytest.raises(ValueError, match=r"count 1 is negative"):
        M.repeat(g, T.asarray(np.array([1, -1, -2])).to(DEV), 0)
    check(M.repeat(c, [1, 1, 1], 0), M.repeat(g, [1, 1, 1], 0), a)


# ---------------------------------------------------------------- errors

def _err(fn, x):
    """The IndexError fn(x) raises, without the note a GPU's late report adds."""
    with pytest.raises(IndexError) as ei:
        synced(fn(x))
    return str(ei.value).split(" (found on the GPU by an earlier op")[0]


@cuda
def test_out_of_range_errors_match_cpu_and_write_nothing():
    a, c, g = pair(vals((3, 4), dt.float32, 21))
    cases = [lambda x: x[[0, 3]],                       # the fused 1-d take
             lambda x: x[[0, 1], [1, -5]],              # the offsets kernel, second array
             lambda x: x[[[0, 7]], [1, 9]],             # first bad of the first array
             lambda x: I.take(x, [2, 12], axis=None),
             lambda x: I.take_along_axis(x, T.tensor([[0, 4]]), 1)]
    for f in cases:
        assert _err(f, g) == _err(f, c)
    writes = [lambda x: x.__setitem__(([0, 5],), 1.0),
              lambda x: x.__setitem__(([0, 1], [2, -5]), T.ones(2, device=x.device)),
              lambda x: S.index_add_(x, 0, [0, 0, 3], T.ones((3, 4), device=x.device)),
              lambda x: S.index_put_(x, ([2, -4],), 5.0, accumulate=True),
              lambda x: S.scatter_add_(x, 1, T.tensor([[0, 4]]), T.ones((1, 2), device=x.device)),
              lambda x: S.put_along_axis(x, T.tensor([[0], [9]]), 3.0, 0)]
    for f in writes:
        assert _err(f, g) == _err(f, c)
        same(np_of(g), a)   # nothing was written
    # the library keeps working on the device afterwards
    g[[0, 2], [1, 1]] = T.tensor([5.0, 6.0], device=DEV)
    ref = a.copy()
    ref[[0, 2], [1, 1]] = [5, 6]
    same(np_of(g), ref)
    same(np_of(g[[2, 0]]), ref[[2, 0]])


@cuda
def test_device_mismatch_errors():
    g = T.zeros((2, 3), device=DEV)
    c = T.zeros((2, 3))
    with pytest.raises(ValueError, match="cuda"):
        c[T.tensor([0, 1]).to(DEV)]
    with pytest.raises(ValueError, match="value"):
        g[[0, 1]] = T.ones((2, 3))   # a host tensor value (not 0-d) does not move implicitly
    g[[0, 1]] = T.tensor(2.0)        # a 0-d host value does
    assert float(g.sum().item()) == 12.0
