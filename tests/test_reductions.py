"""Reductions and scans against NumPy: axis None / int / tuple / negative, keepdims, dim=,
0-d and empty shapes, all ten dtypes, non-contiguous views, NaN rules, determinism and
accuracy of the float accumulation."""
from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
from helpers import to_np as np_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensor as T

pytestmark = pytest.mark.usefixtures("device")

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
          "bfloat16", "float32", "float64"]
UINTS = ("uint8", "uint16", "uint32", "uint64")
FLOATS = ["float16", "bfloat16", "float32", "float64"]
VIEWS = ["contig", "transposed", "stepped", "negative", "broadcast"]

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------- helpers



def values(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Small values, exactly representable in `dtype` (bfloat16 data is float32 here)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in UINTS:
        return rng.integers(0, 6, shape).astype(dtype)
    if dtype in ("int8", "int16", "int32", "int64"):
        return rng.integers(-5, 6, shape).astype(dtype)
    # multiples of 1/4 in [-4, 4]: exact in every float type, bfloat16 included
    v = rng.integers(-16, 17, shape) / 4.0
    return v.astype(np.float32 if dtype == "bfloat16" else dtype)


def to_tensor(a: np.ndarray, dtype: str):
    return T.tensor(a, dtype=dtype)


def make_view(rng, shape, dtype, view):
    """(tensor, numpy reference) holding the same values, laid out as `view` says."""
    nd = len(shape)
    if view == "transposed" and nd >= 2:
        base = values(rng, shape[::-1], dtype)
        return to_tensor(base, dtype).T, base.T
    if view == "stepped" and nd >= 1:
        base = values(rng, tuple(2 * n + 1 for n in shape), dtype)
        key = tuple(slice(1, None, 2) for _ in shape)
        return to_tensor(base, dtype)[key], base[key]
    if view == "negative" and nd >= 1:
        base = values(rng, shape, dtype)
        key = tuple(slice(None, None, -1) for _ in shape)
        return to_tensor(base, dtype)[key], base[key]
    if view == "broadcast" and nd >= 1:
        bshape = (1,) + tuple(shape[1:])
        base = values(rng, bshape, dtype)
        return to_tensor(base, dtype).broadcast_to(shape), np.broadcast_to(base, shape)
    base = values(rng, shape, dtype)
    return to_tensor(base, dtype), base


@st.composite
def cases(draw, dtypes=DTYPES, max_dims=3, allow_tuple=True, min_side=0):
    nd = draw(st.integers(0, max_dims))
    shape = tuple(draw(st.lists(st.integers(min_side, 5), min_size=nd, max_size=nd)))
    dtype = draw(st.sampled_from(dtypes))
    view = draw(st.sampled_from(VIEWS))
    choices = ["none"] + (["int"] if nd else []) + (["tuple"] if allow_tuple else [])
    kind = draw(st.sampled_from(choices))
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        axes = draw(st.lists(st.integers(0, max(nd - 1, 0)), unique=True, max_size=nd)) if nd else []
        axis = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    keepdims = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    t, a = make_view(np.random.default_rng(seed), shape, dtype, view)
    return t, a, dtype, axis, keepdims


def ref_dtype_sum(dtype: str):
    """The result dtype of sum/prod/cumsum/cumprod (NumPy's): unsigned -> uint64, bool and
    signed -> int64, floats keep theirs."""
    return "uint64" if dtype in UINTS else dtype if dtype in FLOATS else "int64"


def check_float(ours: np.ndarray, ref: np.ndarray, dtype: str, scale=1.0):
    tol = {"float16": 4e-3, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=tol,
                               atol=tol * scale, equal_nan=True)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ---------------------------------------------------------------- sum / prod

@SETTINGS
@given(cases())
def test_sum_matches_numpy(c):
    t, a, dtype, axis, keepdims = c
    r = T.sum(t, axis=axis, keepdims=keepdims)
    assert r.dtype == T.dtypes.dtype(ref_dtype_sum(dtype))
    wide = a.astype(ref_dtype_sum(dtype) if dtype not in FLOATS else np.float64)
    ref = np.sum(wide, axis=axis, keepdims=keepdims)
    assert r.shape == ref.shape
    if dtype in FLOATS:
        check_float(np_of(r), ref, dtype, scale=float(np.abs(wide).sum()) + 1)
    else:
        np.testing.assert_array_equal(np_of(r), ref)


@SETTINGS
@given(cases())
def test_prod_matches_numpy(c):
    t, a, dtype, axis, keepdims = c
    r = T.prod(t, axis=axis, keepdims=keepdims)
    assert r.dtype == T.dtypes.dtype(ref_dtype_sum(dtype))
    if dtype in FLOATS:
        ref = np.prod(a.astype(np.float64), axis=axis, keepdims=keepdims)
        assert r.shape == ref.shape
        o = np_of(r).astype(np.float64)
        # overflow to inf in the small types is fine only where the exact value overflows too
        finite = np.abs(ref) < {"float16": 6e4, "bfloat16": 3e38, "float32": 3e38,
                                "float64": 1e308}[dtype]
        check_float(np.where(finite, o, 0), np.where(finite, ref, 0), dtype)
    else:  # 64-bit products wrap modulo 2**64 exactly as NumPy's do
        ref = np.prod(a.astype(ref_dtype_sum(dtype)), axis=axis, keepdims=keepdims)
        assert r.shape == ref.shape
        np.testing.assert_array_equal(np_of(r), ref)


def test_integer_sums_are_int64_or_uint64_as_numpy():
    a = np.full(300, 200, np.uint8)
    t = T.tensor(a)
    s = t.sum()
    assert s.dtype == T.uint64 and np.sum(a).dtype == np.uint64 and s.item() == 60000
    c = t.cumsum()
    assert c.dtype == T.uint64 and c.tolist() == list(range(200, 60001, 200))
    b = T.tensor(np.ones(5, bool))
    assert b.sum().dtype == T.int64 and b.sum().item() == 5
    assert T.tensor([100, 100], dtype="int8").sum().item() == 200  # no int8 wrap


def test_sum_dtype_argument_and_dim_alias():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    t = T.tensor(a)
    r = t.sum(dtype="float32", dim=1)
    assert r.dtype == T.float32 and r.shape == (2, 4)
    np.testing.assert_array_equal(r.numpy(), a.sum(axis=1).astype(np.float32))
    np.testing.assert_array_equal(T.sum(t, dim=(0, -1), keepdims=True).numpy(),
                                  a.sum(axis=(0, 2), keepdims=True))
    with pytest.raises(TypeError, match="axis or dim"):
        T.sum(t, axis=0, dim=0)


def test_empty_sums_and_products():
    e = T.zeros(0, 3, dtype="float32")
    assert e.sum().item() == 0.0
    assert e.sum(axis=0).tolist() == [0.0, 0.0, 0.0]
    assert e.prod(axis=0).tolist() == [1.0, 1.0, 1.0]
    assert e.sum(axis=1).shape == (0,)
    ei = T.zeros(4, 0, dtype="uint8")
    assert ei.sum(axis=1).dtype == T.uint64 and ei.sum(axis=1).tolist() == [0, 0, 0, 0]
    assert ei.any(axis=1).tolist() == [False] * 4 and ei.all(axis=1).tolist() == [True] * 4
    assert T.zeros(0).cumsum().shape == (0,)


def test_zero_dim():
    t = T.tensor(3.5)
    for f in (T.sum, T.prod, T.max, T.min, T.mean):
        r = f(t)
        assert r.shape == () and r.item() == 3.5
    assert T.argmax(t).item() == 0 and T.var(t).item() == 0.0
    assert t.cumsum().shape == (1,) and t.cumsum().tolist() == [3.5]
    assert T.sum(t, axis=()).item() == 3.5
    assert T.sum(t, keepdims=True).shape == ()


# ---------------------------------------------------------------- mean / var / std

@SETTINGS
@given(cases(), st.integers(0, 2))
def test_mean_var_std_match_numpy(c, ddof):
    t, a, dtype, axis, keepdims = c
    if dtype == "bool":
        a = a.astype(np.int64)
    wide = a.astype(np.float64)
    out_dt = dtype if dtype in FLOATS else "float64"
    for name, ours, ref in [
        ("mean", T.mean(t, axis=axis, keepdims=keepdims),
         quiet(np.mean, wide, axis=axis, keepdims=keepdims)),
        ("var", T.var(t, axis=axis, ddof=ddof, keepdims=keepdims),
         quiet(np.var, wide, axis=axis, ddof=ddof, keepdims=keepdims)),
        ("std", T.std(t, axis=axis, ddof=ddof, keepdims=keepdims),
         quiet(np.std, wide, axis=axis, ddof=ddof, keepdims=keepdims)),
    ]:
        assert ours.dtype == T.dtypes.dtype(out_dt), name
        assert ours.shape == np.shape(ref), name
        check_float(np_of(ours), np.asarray(ref), out_dt, scale=4.0)


def test_var_correction_is_ddof():
    a = np.random.default_rng(0).standard_normal((5, 7))
    t = T.tensor(a)
    for corr in (0, 1, 2):
        np.testing.assert_allclose(t.var(dim=1, correction=corr).numpy(), a.var(axis=1, ddof=corr),
                                   rtol=1e-12)
        np.testing.assert_allclose(T.std(t, dim=0, correction=corr).numpy(),
                                   a.std(axis=0, ddof=corr), rtol=1e-12)
    # correction wins over ddof, as PyTorch's keyword-only override
    np.testing.assert_allclose(t.var(ddof=0, correction=1).item(), a.var(ddof=1), rtol=1e-12)
    # ddof >= n divides by zero, as NumPy and PyTorch: inf, or NaN for zero deviations
    assert np.isnan(T.var(T.ones(3), ddof=3).item())
    assert T.var(T.tensor([0.0, 1.0]), ddof=2).item() == np.inf
    assert T.std(T.tensor([0.0, 1.0, 5.0]), correction=4).item() == np.inf
    assert np.isnan(T.var(T.zeros(0)).item())
    # integer input: float64 result
    r = T.mean(T.tensor([1, 2, 4], dtype="int16"))
    assert r.dtype == T.float64 and r.item() == pytest.approx(7 / 3)


def test_mean_var_with_an_integer_dtype_as_numpy():
    """NumPy's algorithm (the sum wrapping in the dtype, the mean truncated, the squared
    deviations summed in it); it had written an int64 result into a smaller buffer."""
    rng = np.random.default_rng(3)
    for src in ("int8", "uint8", "int64", "float64"):
        a = rng.integers(0 if src == "uint8" else -100, 100, (7, 5)).astype(src) * (
            1.37 if src == "float64" else 1)
        for d in ("int64", "int32", "int8", "uint8"):
            for f in ("mean", "var"):
                for axis, keep in ((0, False), (1, True), (None, False)):
                    want = np.asarray(getattr(np, f)(a, axis=axis, dtype=d, keepdims=keep))
                    got = np_of(getattr(T, f)(T.asarray(a), axis=axis, dtype=d, keepdims=keep))
                    assert got.dtype == want.dtype and got.shape == want.shape, (src, d, f, axis)
                    np.testing.assert_array_equal(got, want, err_msg=f"{src} {d} {f} {axis}")
    with pytest.raises(TypeError, match="std: dtype must be a floating or complex type"):
        T.std(T.arange(4), dtype="int64")


def test_mean_float16_accumulates_in_float32():
    # 4096 * 1.0 + small values: a float16 accumulator would stall at 2048
    t = T.ones(4096, dtype="float16")
    assert t.mean().dtype == T.float16 and t.mean().item() == 1.0
    assert t.sum().item() == 4096.0


# ---------------------------------------------------------------- max / min / arg

@SETTINGS
@given(cases(min_side=1))
def test_max_min_match_numpy(c):
    t, a, dtype, axis, keepdims = c
    for ours, ref in [(T.max(t, axis=axis, keepdims=keepdims), np.max(a, axis=axis, keepdims=keepdims)),
                      (T.amin(t, axis=axis, keepdims=keepdims), np.min(a, axis=axis, keepdims=keepdims))]:
        assert ours.dtype == T.dtypes.dtype(dtype)
        assert ours.shape == ref.shape
        np.testing.assert_array_equal(np_of(ours), ref)


@SETTINGS
@given(cases(min_side=1, allow_tuple=False))
def test_argmax_argmin_match_numpy(c):
    t, a, dtype, axis, keepdims = c
    if dtype == "bfloat16":
        a = a.astype(np.float32)
    for ours, ref in [(T.argmax(t, axis=axis, keepdims=keepdims), np.argmax(a, axis=axis, keepdims=keepdims)),
                      (t.argmin(dim=axis, keepdims=keepdims), np.argmin(a, axis=axis, keepdims=keepdims))]:
        assert ours.dtype == T.int64
        assert ours.shape == np.shape(ref)
        np.testing.assert_array_equal(ours.numpy(), ref)


def test_empty_max_and_argmax_raise():
    e = T.zeros(3, 0)
    with pytest.raises(ValueError, match="max"):
        e.max()
    with pytest.raises(ValueError, match="min"):
        T.min(e, axis=1)
    with pytest.raises(ValueError, match="argmax"):
        e.argmax()
    with pytest.raises(ValueError, match="argmin"):
        T.argmin(e, axis=1)
    assert e.max(axis=0).shape == (0,)  # the reduced axis is not empty: fine


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nan_propagates_in_max_min(dtype):
    a = np.array([[1.0, np.nan, 3.0, -2.0], [4.0, 5.0, -1.0, 0.5]], np.float32)
    t = T.tensor(a, dtype=dtype)
    m = np_of(t.max(axis=1))
    assert np.isnan(m[0]) and m[1] == 5.0
    m = np_of(t.min(axis=1))
    assert np.isnan(m[0]) and m[1] == -1.0
    assert np.isnan(t.max().item()) and np.isnan(t.min().item())
    # along axis 0 of a C-ordered matrix (the "outer" kernel path)
    big = np.arange(64 * 40, dtype=np.float32).reshape(64, 40)
    big[37, 5] = np.nan
    mx, mn = np_of(T.tensor(big, dtype=dtype).max(axis=0)), np_of(T.tensor(big, dtype=dtype).min(axis=0))
    assert np.isnan(mx[5]) and np.isnan(mn[5])
    assert np.isnan(mx).sum() == 1 and np.isnan(mn).sum() == 1


def test_argmax_first_nan_and_first_tie():
    a = np.array([1.0, 7.0, np.nan, 7.0, np.nan, 9.0])
    t = T.tensor(a)
    assert t.argmax().item() == 2 == np.argmax(a)
    assert t.argmin().item() == 2 == np.argmin(a)
    ties = T.tensor([3, 9, 1, 9, 9, 1], dtype="int32")
    assert ties.argmax().item() == 1 and ties.argmin().item() == 2
    # across the kernel's 4096-element chunks
    n = 20000
    b = np.zeros(n, np.float32)
    b[[5000, 9000, 19999]] = 4.0
    assert T.tensor(b).argmax().item() == 5000
    b[[7000, 12000]] = np.nan
    assert T.tensor(b).argmax().item() == 7000 == np.argmax(b)
    assert T.tensor(b).argmin().item() == 7000 == np.argmin(b)
    # axis None on a transposed view: flat index in logical (C) order
    m = np.array([[0, 5, 1], [5, 2, 5]], np.int16)
    tt = T.tensor(m.T.copy()).T
    assert tt.argmax().item() == np.argmax(m) == 1
    assert tt.argmax(axis=0).tolist() == np.argmax(m, axis=0).tolist()
    assert tt.argmax(keepdims=True).shape == (1, 1)


# ---------------------------------------------------------------- any / all

@SETTINGS
@given(cases())
def test_any_all_match_numpy(c):
    t, a, dtype, axis, keepdims = c
    for ours, ref in [(T.any(t, axis=axis, keepdims=keepdims), np.any(a, axis=axis, keepdims=keepdims)),
                      (t.all(axis=axis, keepdims=keepdims), np.all(a, axis=axis, keepdims=keepdims))]:
        assert ours.dtype == T.bool
        assert ours.shape == np.shape(ref)
        np.testing.assert_array_equal(ours.numpy(), ref)


def test_any_all_nan_and_negative_zero():
    t = T.tensor([0.0, -0.0, np.nan])
    assert t.any().item() is True and t.all().item() is False
    assert T.tensor([-0.0, 0.0]).any().item() is False


# ---------------------------------------------------------------- logsumexp

@SETTINGS
@given(cases(dtypes=["float32", "float64", "float16", "int16"]))
def test_logsumexp_matches_float64_reference(c):
    t, a, dtype, axis, keepdims = c
    ref = quiet(lambda: np.log(np.sum(np.exp(a.astype(np.float64)), axis=axis, keepdims=keepdims)))
    r = T.logsumexp(t, axis=axis, keepdims=keepdims)
    out_dt = dtype if dtype in FLOATS else "float32"
    assert r.dtype == T.dtypes.dtype(out_dt)
    assert r.shape == np.shape(ref)
    check_float(np_of(r), np.asarray(ref), out_dt, scale=1.0)


def test_logsumexp_is_stable_and_handles_infinities():
    a = np.array([[1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -1000.0]])
    r = T.logsumexp(T.tensor(a), axis=1).numpy()
    m = a.max(axis=1)
    ref = m + np.log(np.exp(a - m[:, None]).sum(axis=1))
    np.testing.assert_allclose(r, ref, rtol=1e-14)
    assert np.all(np.isfinite(r))
    inf = np.inf
    r = T.logsumexp(T.tensor([[-inf, -inf], [inf, 1.0], [np.nan, 1.0]]), dim=1).numpy()
    assert r[0] == -inf and r[1] == inf and np.isnan(r[2])


def test_logsumexp_of_empty_is_minus_inf():
    r = T.logsumexp(T.zeros(2, 0), axis=1)
    assert r.shape == (2,) and r.tolist() == [-np.inf, -np.inf]
    assert T.logsumexp(T.zeros(0)).item() == -np.inf


# ---------------------------------------------------------------- scans

@SETTINGS
@given(cases(allow_tuple=False))
def test_cumsum_cumprod_match_numpy(c):
    t, a, dtype, axis, _ = c
    if t.ndim == 0 and axis is not None:
        return
    for name in ("cumsum", "cumprod"):
        ours = getattr(T, name)(t, axis=axis)
        wide = a.astype(np.float64 if dtype in FLOATS else ref_dtype_sum(dtype))
        ref = getattr(np, name)(wide, axis=axis)
        assert ours.dtype == T.dtypes.dtype(ref_dtype_sum(dtype)), name
        assert ours.shape == ref.shape, name
        if dtype in FLOATS:
            finite = np.abs(ref) < 6e4
            check_float(np.where(finite, np_of(ours), 0), np.where(finite, ref, 0), dtype,
                        scale=float(np.abs(np.where(finite, ref, 0)).max(initial=0)) + 1)
        else:
            np.testing.assert_array_equal(np_of(ours), ref)


@pytest.mark.parametrize("shape,axis", [((100_003,), 0), ((3, 20_000), 1), ((20_000, 3), 0)],
                         ids=["1d", "few-long-rows", "strided-axis"])
def test_long_scans(shape, axis):
    """Long rows, few of them: CUDA splits each row into chunks scanned in two passes."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal(shape)
    got = np_of(T.cumsum(T.tensor(a, dtype="float32"), axis=axis)).astype(np.float64)
    want = np.cumsum(a.astype(np.float32).astype(np.float64), axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-3 * np.sqrt(shape[axis]))
    i = rng.integers(-9, 10, shape)
    np.testing.assert_array_equal(np_of(T.cumsum(T.tensor(i), axis=axis)), np.cumsum(i, axis=axis))
    p = rng.choice([1.0, -1.0, 1.0 + 2**-10], shape)   # products that stay finite
    np.testing.assert_allclose(np_of(T.cumprod(T.tensor(p), axis=axis)), np.cumprod(p, axis=axis),
                               rtol=1e-12)


def test_cumsum_dim_alias_and_dtype():
    a = np.arange(12, dtype=np.int8).reshape(3, 4)
    t = T.tensor(a)
    np.testing.assert_array_equal(t.cumsum(dim=-1).numpy(), np.cumsum(a, axis=-1))
    r = T.cumsum(t, axis=0, dtype="float32")
    assert r.dtype == T.float32
    np.testing.assert_array_equal(r.numpy(), np.cumsum(a, axis=0, dtype=np.float32))
    np.testing.assert_array_equal(T.cumprod(t[:, ::-1], axis=1).numpy(),
                                  np.cumprod(a[:, ::-1].astype(np.int64), axis=1))


# ---------------------------------------------------------------- determinism / accuracy

def _bits(t) -> bytes:
    return np.ascontiguousarray(t.numpy()).tobytes()


def _reductions_of(x):
    return [x.sum(), x.sum(axis=0), x.sum(axis=1), x.sum(axis=-1, keepdims=True), x.mean(axis=0)]


def test_reductions_bitwise_deterministic_across_calls_and_threads():
    rng = np.random.default_rng(1234)
    flat = rng.standard_normal(1 << 20).astype(np.float32)
    sq = rng.standard_normal((1000, 1000)).astype(np.float32)
    inputs = [T.tensor(flat), T.tensor(flat).reshape(1024, 1024), T.tensor(flat).reshape(256, 4096),
              T.tensor(sq).T, T.tensor(sq)]
    old = T.get_num_threads()
    try:
        results = {}
        for n in (1, 2, 3):
            T.set_num_threads(n)
            for _rep in range(2):
                for i, x in enumerate(inputs):
                    rs = [x.sum()] if x.ndim == 1 else _reductions_of(x)
                    results.setdefault(i, []).append([_bits(r) for r in rs])
        for i, runs in results.items():
            for run in runs[1:]:
                assert run == runs[0], f"input {i}: results differ between calls/thread counts"
    finally:
        T.set_num_threads(old)
    assert T.get_num_threads() == old


def test_float32_sum_accuracy():
    rng = np.random.default_rng(7)
    for loc in (0.0, 1.0):
        a = (rng.standard_normal(10**6) + loc).astype(np.float32)
        ref = a.astype(np.float64).sum()
        assert abs(ref) > 100  # precondition: no catastrophic cancellation in the reference
        ours = T.tensor(a).sum().item()
        assert abs(ours - ref) / abs(ref) < 1e-5, (ours, ref)
        # a naive float32 running sum is much worse for loc=1: the test can tell them apart
    naive = np.cumsum(np.full(10**6, 1.1, np.float32))[-1]
    ours = T.full((10**6,), 1.1, dtype="float32").sum().item()
    exact = 10**6 * float(np.float32(1.1))
    assert abs(ours - exact) / exact < 1e-5 < abs(naive - exact) / exact


def test_reduction_results_do_not_leak_memory():
    from tensor.cpu.alloc import cpu_allocator
    x = T.ones(100, 100)
    x.sum(axis=0), x.argmax(axis=1), x.var(), T.logsumexp(x, axis=1)  # warm up
    gc.collect()
    before = cpu_allocator().memory_allocated()
    for _ in range(3):
        x.sum(axis=0), x.argmax(axis=1), x.var(), T.logsumexp(x, axis=1), x.cumsum(axis=1)
    gc.collect()
    assert cpu_allocator().memory_allocated() == before


def test_scans_drop_size_one_axes_and_merge_the_rest():
    """A CUDA scan takes 16 dims: 17-d tensors of size-1 axes (and a 16-d complex one, whose
    real view has 17) were refused; the other axes are now dropped or merged first."""
    x = T.ones((1,) * 16 + (4,))
    assert T.cumsum(x, axis=-1).reshape(-1).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert T.cumprod(2 * x, axis=-1).reshape(-1).tolist() == [2.0, 4.0, 8.0, 16.0]
    z = T.ones((1,) * 15 + (4,), dtype="complex64")
    assert T.cumsum(z, axis=-1).reshape(-1).tolist() == [1, 2, 3, 4]
    a = np.arange(60.0).reshape(3, 4, 5)
    v = T.asarray(a).permute(2, 0, 1)[::-1]   # merged only where contiguous in x and out
    w = np.transpose(a, (2, 0, 1))[::-1]
    for axis in range(3):
        np.testing.assert_array_equal(T.cumsum(v, axis=axis).numpy(), np.cumsum(w, axis=axis))
