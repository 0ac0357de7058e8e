"""Matrix products against NumPy: matmul (1-D / 2-D / N-D, broadcasting batch dims, every
dtype, strided operands, empty dims, `@`, out=), tensordot, dot, outer, inner; thread-count
determinism and error messages."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from helpers import to_np as np_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensor as T

pytestmark = pytest.mark.usefixtures("device")

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])




def values(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 256, shape).astype(np.uint8)  # products wrap
    if dtype in ("int8", "int16", "int32", "int64"):
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return rng.integers(lo, hi + 1, shape).astype(dtype)
    v = rng.integers(-8, 9, shape) / 4.0
    return v.astype(np.float32 if dtype == "bfloat16" else dtype)


def reference(a: np.ndarray, b: np.ndarray, dtype: str, fn=np.matmul, **kw):
    """NumPy's result; 16-bit floats are computed in float32 (our accumulator) for comparison."""
    if dtype in ("float16", "bfloat16"):
        return fn(a.astype(np.float32), b.astype(np.float32), **kw)
    return fn(a, b, **kw)


def compare(ours, ref, dtype):
    assert ours.dtype == T.dtypes.dtype(dtype)
    o = np_of(ours)
    assert o.shape == np.shape(ref)
    if dtype in ("float16", "bfloat16"):
        # float32 accumulation, one rounding on the store: within half an ulp of the output type
        tol = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
        np.testing.assert_allclose(o.astype(np.float64), np.asarray(ref, np.float64), rtol=tol, atol=tol)
    elif dtype in ("float32", "float64"):
        np.testing.assert_allclose(o, ref, rtol=1e-6 if dtype == "float32" else 1e-13, atol=1e-5)
    else:
        np.testing.assert_array_equal(o, np.asarray(ref).astype(o.dtype))


@st.composite
def matmul_shapes(draw):
    kind = draw(st.sampled_from(["1x1", "1x2", "2x1", "2x2", "NxN", "1xN", "Nx1", "bcast"]))
    m, k, n = (draw(st.integers(0, 6)) for _ in range(3))
    batch = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    # each batch dim of either side may be 1 (broadcast) or missing
    ba = tuple(1 if draw(st.booleans()) else d for d in batch)
    bb = tuple(1 if draw(st.booleans()) else d for d in batch)
    if draw(st.booleans()):
        bb = bb[1:]
    return {"1x1": ((k,), (k,)), "1x2": ((k,), (k, n)), "2x1": ((m, k), (k,)),
            "2x2": ((m, k), (k, n)), "NxN": (ba + (m, k), bb + (k, n)),
            "1xN": ((k,), bb + (k, n)), "Nx1": (ba + (m, k), (k,)),
            "bcast": ((1, m, k), batch + (k, n))}[kind]


@SETTINGS
@given(matmul_shapes(), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_matmul_matches_numpy(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes
    a, b = values(rng, sa, dtype), values(rng, sb, dtype)
    ta, tb = T.tensor(a, dtype=dtype), T.tensor(b, dtype=dtype)
    ref = reference(a, b, dtype)
    compare(T.matmul(ta, tb), ref, dtype)
    compare(ta @ tb, ref, dtype)


def test_bool_matmul_is_or_of_ands():
    a = np.array([[True, False, True], [False, False, False]])
    b = np.array([[False, True], [False, True], [True, False]])
    r = T.tensor(a) @ T.tensor(b)
    assert r.dtype == T.bool
    assert r.tolist() == [[True, True], [False, False]]
    np.testing.assert_array_equal(r.numpy(), np.matmul(a, b))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_matmul_wraps_like_numpy(dtype):
    info = np.iinfo(dtype)
    a = np.full((2, 50), info.max, dtype)
    b = np.full((50, 3), info.max if dtype != "int64" else 3, dtype)
    with np.errstate(all="ignore"):
        ref = a @ b
    r = T.tensor(a) @ T.tensor(b)
    assert r.dtype == T.dtypes.dtype(dtype)
    np.testing.assert_array_equal(r.numpy(), ref)


def test_mixed_dtypes_promote():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    r = T.tensor(a) @ T.tensor(b)
    assert r.dtype == T.float32
    np.testing.assert_allclose(r.numpy(), a @ b, rtol=1e-6)
    r = T.tensor(a) @ T.tensor(a.T.copy().astype(np.int64))
    assert r.dtype == T.int64 and r.tolist() == (a.astype(np.int64) @ a.T).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "bool"])
def test_matmul_strided_operands(dtype):
    rng = np.random.default_rng(3)
    base_a = values(rng, (14, 22), dtype)
    base_b = values(rng, (22, 18), dtype)
    ta, tb = T.tensor(base_a, dtype=dtype), T.tensor(base_b, dtype=dtype)
    views = [
        (lambda x: x, lambda x: x),
        (lambda x: x.T, lambda x: x.T),                       # swapped below: (18, 22) @ (22, 14)
        (lambda x: x[::2, 1::3], lambda x: x[::3, ::2]),      # stepped
        (lambda x: x[::-1, ::-2], lambda x: x[::-2, ::-1]),   # negative steps
    ]
    for fa, fb in views:
        va, vb = fa(ta), fb(tb)
        na, nb = fa(base_a), fb(base_b)
        if na.shape[1] != nb.shape[0]:  # make the inner dims agree with a transpose
            va, vb, na, nb = vb, va, nb, na
            if na.shape[1] != nb.shape[0]:
                va, na = va[:, : nb.shape[0]], na[:, : nb.shape[0]]
        assert va.shape == na.shape and vb.shape == nb.shape
        compare(va @ vb, reference(na, nb, dtype), dtype)
    # the transposed operand is read in place: no contiguous copy is needed to get it right
    at = ta.T
    assert not at.is_contiguous() and T.shares_memory(at, ta)
    compare(at @ ta, reference(base_a.T, base_a, dtype), dtype)
    # batched operands with a transposed / broadcast batch layout
    c = values(rng, (3, 5, 4), dtype)
    tc = T.tensor(c, dtype=dtype)
    compare(tc.mT @ tc, reference(np.swapaxes(c, -1, -2), c, dtype), dtype)
    compare(tc.permute(1, 0, 2)[:, :, ::-1] @ tc[0].T[::-1],
            reference(c.transpose(1, 0, 2)[:, :, ::-1], c[0].T[::-1], dtype), dtype)
    e = values(rng, (4, 6), dtype)
    compare(tc @ T.tensor(e, dtype=dtype).broadcast_to((3, 4, 6)),
            reference(c, np.broadcast_to(e, (3, 4, 6)), dtype), dtype)


def test_matmul_empty_dims():
    r = T.ones(3, 0) @ T.ones(0, 4)
    assert r.shape == (3, 4) and r.tolist() == [[0.0] * 4] * 3
    r = T.ones(0, 5) @ T.ones(5, 4)
    assert r.shape == (0, 4)
    r = T.ones(2, 0, 5, dtype="int32") @ T.ones(5, 7, dtype="int32")
    assert r.shape == (2, 0, 7) and r.dtype == T.int32
    r = T.ones(0, dtype="float32") @ T.ones(0, dtype="float32")
    assert r.shape == () and r.item() == 0.0
    r = T.ones(2, 3, 0, dtype="bool") @ T.ones(0, 2, dtype="bool")
    assert r.shape == (2, 3, 2) and not r.any().item()


def test_matmul_out_argument():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    out = T.zeros(2, 4)
    r = T.matmul(T.tensor(a), T.tensor(b), out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), a @ b)
    # out may be a strided view; the rest of its base is untouched
    base = T.full((4, 8), -1.0)
    view = base[::2, ::2]
    T.matmul(T.tensor(a), T.tensor(b), out=view)
    nb = base.numpy()
    np.testing.assert_array_equal(nb[::2, ::2], a @ b)
    assert (nb[1::2] == -1).all() and (nb[:, 1::2] == -1).all()
    with pytest.raises(ValueError, match=r"\(2, 4\)"):
        T.matmul(T.tensor(a), T.tensor(b), out=T.zeros(4, 2))
    with pytest.raises(TypeError):
        T.matmul(T.tensor(a), T.tensor(b), out=T.zeros(2, 4, dtype="int64"))


# ---------------------------------------------------------------- tensordot / dot / outer / inner

@pytest.mark.parametrize("sa,sb,axes", [
    ((3, 4, 5), (4, 5, 6), 2),
    ((3, 4), (4, 5), 1),
    ((3, 4), (5, 6), 0),
    ((2, 3, 4), (3, 2, 5), ([0, 1], [1, 0])),
    ((2, 3, 4), (4, 3), ([-1, 1], [0, -1])),
    ((2, 3), (3, 2), (1, 0)),
    ((5,), (5,), 1),
    ((2, 0, 3), (0, 3, 4), 2),
])
def test_tensordot_matches_numpy(sa, sb, axes):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    r = T.tensordot(T.tensor(a), T.tensor(b), axes=axes)
    ref = np.tensordot(a, b, axes=axes)
    assert r.shape == ref.shape
    np.testing.assert_allclose(r.numpy(), ref, rtol=1e-12, atol=1e-12)
    # non-contiguous inputs
    r = T.tensordot(T.tensor(a.copy())[...], T.tensor(np.ascontiguousarray(b[::-1]))[::-1], axes=axes)
    np.testing.assert_allclose(r.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_tensordot_errors():
    with pytest.raises(ValueError, match="tensordot"):
        T.tensordot(T.ones(2, 3), T.ones(4, 5), axes=1)
    with pytest.raises(ValueError, match="tensordot"):
        T.tensordot(T.ones(2, 3), T.ones(3, 2), axes=([0, 1], [1]))
    with pytest.raises(ValueError, match="tensordot"):
        T.tensordot(T.ones(2, 3), T.ones(3, 2), axes=3)


@pytest.mark.parametrize("sa,sb", [((), ()), ((), (3,)), ((2, 3), ()), ((4,), (4,)), ((3, 4), (4,)),
                                   ((4,), (4, 2)), ((2, 4), (4, 3)), ((2, 3, 4), (4,)),
                                   ((2, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 3))])
def test_dot_follows_numpy(sa, sb):
    rng = np.random.default_rng(11)
    a, b = rng.integers(-9, 10, sa).astype(np.int64), rng.integers(-9, 10, sb).astype(np.int64)
    r = T.dot(T.tensor(a), T.tensor(b))
    ref = np.dot(a, b)
    assert r.shape == np.shape(ref)
    assert r.dtype == T.int64
    np.testing.assert_array_equal(r.numpy(), ref)
    assert T.tensor(a).dot(T.tensor(b)).shape == np.shape(ref)


def test_outer_and_inner():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(4)
    np.testing.assert_allclose(T.outer(T.tensor(a), T.tensor(b)).numpy(), np.outer(a, b), rtol=1e-15)
    np.testing.assert_array_equal(T.outer(T.tensor([1, 2]), T.tensor([3, 4, 5])).numpy(),
                                  np.outer([1, 2], [3, 4, 5]))
    c, d = rng.standard_normal((2, 5)), rng.standard_normal((3, 4, 5))
    r = T.inner(T.tensor(c), T.tensor(d))
    assert r.shape == (2, 3, 4)
    np.testing.assert_allclose(r.numpy(), np.inner(c, d), rtol=1e-12)
    assert T.inner(T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])).item() == 11.0
    np.testing.assert_array_equal(T.inner(T.tensor(2.0), T.tensor(c)).numpy(), np.inner(2.0, c))


# ---------------------------------------------------------------- determinism and errors

def test_matmul_bitwise_identical_across_thread_counts():
    rng = np.random.default_rng(9)
    a = T.tensor(rng.standard_normal((300, 400)).astype(np.float32))
    b = T.tensor(rng.standard_normal((400, 500)).astype(np.float32))
    old = T.get_num_threads()
    try:
        outs = []
        for n in (1, 2, 1, 3):
            T.set_num_threads(n)
            outs.append((a @ b).numpy().tobytes())
            outs.append((a.T.contiguous().T @ b).numpy().tobytes())
    finally:
        T.set_num_threads(old)
    assert all(o == outs[0] for o in outs)
    ref = a.numpy().astype(np.float64) @ b.numpy().astype(np.float64)
    np.testing.assert_allclose(np.frombuffer(outs[0], np.float32).reshape(300, 500), ref,
                               rtol=1e-4, atol=1e-4)


def test_matmul_shape_mismatch_message():
    with pytest.raises(ValueError) as e:
        T.ones(2, 3) @ T.ones(4, 5)
    msg = str(e.value)
    assert "matmul" in msg and "(2, 3)" in msg and "(4, 5)" in msg and "3 != 4" in msg
    with pytest.raises(ValueError) as e:
        T.matmul(T.ones(7, 2, 3), T.ones(4))
    assert "(7, 2, 3)" in str(e.value) and "(4,)" in str(e.value) and "3 != 4" in str(e.value)


def test_matmul_batch_mismatch_names_shapes():
    with pytest.raises(ValueError) as e:
        T.ones(2, 3, 4) @ T.ones(3, 4, 5)
    msg = str(e.value)
    assert "matmul" in msg and "(2, 3, 4)" in msg and "(3, 4, 5)" in msg


def test_matmul_zero_dim_operand():
    with pytest.raises(ValueError, match="matmul"):
        T.matmul(T.tensor(2.0), T.ones(3))
    with pytest.raises(ValueError, match=r"\(\)"):
        T.ones(3) @ T.tensor(2.0)


_BF16_SHAPES = [(5, 7, 3), (64, 65, 66), (300, 513, 257), (7, 1030, 40), (33, 1, 35), (129, 1537, 65),
                (257, 33, 300)]


def _bf16_products(seed: int = 3):
    """bfloat16 products of odd shapes (partial tiles, several K blocks, odd K), strided and
    batched operands, as float32 arrays, with their float64 references."""
    rng = np.random.default_rng(seed)
    out = []
    for m, k, n in _BF16_SHAPES:
        a = T.asarray(rng.standard_normal((2, m, k)).astype(np.float32)).astype(T.bfloat16)
        b = T.asarray(rng.standard_normal((n, k)).astype(np.float32)).astype(T.bfloat16).T
        ref = a.astype(T.float64).numpy() @ b.astype(T.float64).numpy()
        out.append(((a @ b).astype(T.float32).numpy(), ref))
    return out


def test_bf16_matmul_tiles_and_float32_path():
    """The bfloat16 GEMM (AMX tiles where the CPU and kernel allow, tensor/cpu/csrc/gemm.c) is
    within bfloat16 rounding of float64 products; the widened float32 path (STRIDEX_AMX=0, in
    a subprocess) agrees with it to about one bfloat16 ulp. (Without AMX here both runs take
    the float32 path.)"""
    if T.get_default_device().type != "cpu":
        pytest.skip("the CPU's GEMM")
    ours = _bf16_products()
    for got, ref in ours:
        scale = np.abs(ref).max()
        assert np.abs(got - ref).max() <= 2.0 ** -8 * scale, (got.shape, np.abs(got - ref).max())
    code = ("import numpy as np, sys; sys.path.insert(0, 'tests'); import test_linalg as t; "
            "from tensor.cpu import gemm; assert not gemm.bf16_amx(); "
            "np.savez(sys.argv[1], *[g for g, _ in t._bf16_products()])")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.npz")
        env = {**os.environ, "STRIDEX_AMX": "0"}
        r = subprocess.run([sys.executable, "-c", code, path], env=env, capture_output=True,
                           text=True, timeout=300, cwd=os.path.dirname(os.path.dirname(__file__)))
        assert r.returncode == 0, r.stderr
        other = np.load(path)
        for i, (got, ref) in enumerate(ours):
            np.testing.assert_allclose(other[f"arr_{i}"], got, rtol=2.0 ** -7,
                                       atol=2.0 ** -7 * np.abs(ref).max())
