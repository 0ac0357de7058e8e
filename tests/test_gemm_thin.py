"""Thin float products on the CPU (tensor/cpu/csrc/gemm.c): matrix-vector, vector-matrix and
dot shapes, which the thin path streams (rows of A read in place when contiguous, several
accumulators for one column) instead of the direct loop. Values against float64 NumPy within
the float32 / float64 / 16-bit error bound, on contiguous, transposed, reversed and broadcast
operands; bitwise equal for one and two threads."""
import numpy as np
import pytest

import tensor as T

SHAPES = [((512, 512), (512,)), ((512,), (512, 512)), ((100, 64), (64, 1)), ((64, 64), (64, 3)),
          ((3, 200), (200, 40)), ((2, 512), (512, 300)), ((4096,), (4096,)), ((37,), (37, 5)),
          ((1000, 33), (33,)), ((1, 300), (300, 1)), ((5, 70), (70, 1)), ((300,), (300, 3))]
UNIT = {"float32": 2.0 ** -24, "float64": 2.0 ** -53, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}


def _layout(x: np.ndarray, how: str) -> np.ndarray:
    if how == "transposed" and x.ndim == 2:
        return np.asfortranarray(x)
    if how == "reversed":
        return x[::-1, ::-1].copy()[::-1, ::-1] if x.ndim == 2 else x[::-1].copy()[::-1]
    return x


def _ours(x: np.ndarray, how: str, dtype: str):
    t = T.asarray(x).astype(dtype)
    if how == "transposed" and x.ndim == 2:
        t = T.asarray(np.ascontiguousarray(x.T)).astype(dtype).T
    elif how == "reversed":
        t = T.flip(T.flip(T.asarray(x[::-1, ::-1] if x.ndim == 2 else x[::-1]).astype(dtype), 0), -1)
    return t


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("how", ["contiguous", "transposed", "reversed"])
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_thin_products_match_numpy(sa, sb, how, dtype):
    rng = np.random.default_rng(len(sa) * 1000 + sa[-1] + sb[0])
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    ta, tb = _ours(_layout(a, how), how, dtype), _ours(_layout(b, "contiguous"), "contiguous", dtype)
    # the operands as the dtype holds them, then the exact product in float64
    a64, b64 = ta.astype("float64").numpy(), tb.astype("float64").numpy()
    got = (ta @ tb).astype("float64").numpy()
    want = a64 @ b64
    bound = np.abs(a64) @ np.abs(b64)
    k = sa[-1]
    # float32 accumulation for 16-bit inputs, then one rounding to the output dtype
    acc = UNIT["float32"] if dtype in ("float16", "bfloat16") else UNIT[dtype]
    tol = 2 * k * acc * bound + UNIT[dtype] * np.abs(want) + 1e-300
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= tol), float(np.max(np.abs(got - want) / tol))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_thin_products_are_bitwise_thread_independent(dtype):
    rng = np.random.default_rng(7)
    old = T.get_num_threads()
    try:
        for sa, sb in SHAPES:
            ta = T.asarray(rng.standard_normal(sa)).astype(dtype)
            tb = T.asarray(rng.standard_normal(sb)).astype(dtype)
            T.set_num_threads(1)
            one = (ta @ tb).numpy()
            T.set_num_threads(2)
            two = (ta @ tb).numpy()
            np.testing.assert_array_equal(one, two, err_msg=f"{sa} @ {sb}")
    finally:
        T.set_num_threads(old)


def test_broadcast_rows_and_a_matrix_times_itself():
    """A row broadcast down A (row stride 0, read in place) and x @ x (A is B)."""
    rng = np.random.default_rng(3)
    row = rng.standard_normal(300).astype(np.float32)
    a = T.broadcast_to(T.asarray(row), (3, 300))
    b = T.asarray(rng.standard_normal((300, 50)).astype(np.float32))
    np.testing.assert_allclose((a @ b).numpy(), np.broadcast_to(row, (3, 300)) @ b.numpy(),
                               rtol=1e-5, atol=1e-4)
    v = T.asarray(rng.standard_normal(5000).astype(np.float32))
    np.testing.assert_allclose(float(v @ v), float(np.dot(v.numpy().astype(np.float64),
                                                          v.numpy().astype(np.float64))), rtol=1e-5)
