"""CUDA random fills and creation kernels (families "random" and "misc").

- NVRTC: every module compiles for sm_80, sm_90 and sm_100 and contains every kernel (no GPU needed;
  skipped without cuda-python's NVRTC).
- On a device (a GPU, or the CPU emulator with STRIDEX_CUDA_EMULATOR=1; skipped otherwise):
  for each generator function and dtype the CUDA values equal the CPU's bit for bit for the
  same (seed, offset) -- offsets that are not multiples of 4, sizes 1, 3, 5, 1000 -- and the
  generator's offset advances the same; randperm (both the single-block and the multi-launch
  algorithm, 32- and 64-bit indices) equals the CPU's Fisher-Yates; arange / linspace / eye /
  full / tril / triu on cuda equal the CPU and NumPy. Both families are `exact` (built with
  --fmad=false: only the formulas' explicit fma()s are fused, as on the CPU).
  Normals too: their log/sin/cos are our own polynomials (cuda_src/scalar/random_xform.h), not
  libm's and CUDA's, which differ in the last bits (seen on an H200).
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import tensor as T
from tensor import dtypes as dt
from tensor.random import Generator

SIZES = (1, 3, 5, 1000)
OFFSETS = (0, 1, 3, 5)
SEEDS = (0, 42, 2**64 - 1)


# ---------------------------------------------------------------- NVRTC compile

def test_families_registered():
    from tensor.cuda import kernels as CK
    CK.load_families()
    assert CK.kernel_names("random", None)[0] == "rand_bits32"
    assert CK.kernel_names("misc", dt.float64) == ["iota_f64"]


# ---------------------------------------------------------------- device tests

def _cuda_ok() -> bool:
    try:
        return T.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


cuda = pytest.mark.skipif(not _cuda_ok(), reason="no CUDA device (set STRIDEX_CUDA_EMULATOR=1 "
                          "to run these on the CPU emulator)")


def _emulated() -> bool:
    from tensor.cuda import runtime as R
    return R.emulated()


def _pair(make, seed, offset):
    """make(generator, device) on the CPU and on cuda from the same state; also checks that
    both generators advanced to the same offset."""
    g1, g2 = Generator(seed), Generator(seed)
    g1.set_state((seed, offset))
    g2.set_state((seed, offset))
    a, b = make(g1, "cpu"), make(g2, "cuda")
    assert b.device.type == "cuda"
    assert a.device.type == "cpu"
    assert g1.get_state() == g2.get_state()
    assert a.shape == b.shape and a.dtype is b.dtype
    return a, b


def _assert_same(a, b, what):
    ha = np.array(a.numpy() if a.dtype is not dt.bfloat16 else a.astype(dt.float32).numpy())
    hb_t = b.to("cpu")
    hb = np.array(hb_t.numpy() if hb_t.dtype is not dt.bfloat16 else hb_t.astype(dt.float32).numpy())
    assert ha.tobytes() == hb.tobytes(), (
        f"{what}: cuda differs from cpu at {np.flatnonzero(ha.ravel() != hb.ravel())[:8]}")


UNIFORM_CASES = [
    ("rand", lambda g, dev, n, d: g.rand(n, dtype=d, device=dev)),
    ("uniform", lambda g, dev, n, d: g.uniform(-3.5, 2.25, size=n, dtype=d, device=dev)),
]
NORMAL_CASES = [
    ("randn", lambda g, dev, n, d: g.randn(n, dtype=d, device=dev)),
    ("normal", lambda g, dev, n, d: g.normal(2.0, 3.0, size=n, dtype=d, device=dev)),
]
FLOATS = ("float32", "float64", "float16", "bfloat16")


@cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn", UNIFORM_CASES, ids=[c[0] for c in UNIFORM_CASES])
def test_uniform_bit_identical(name, fn, dtype):
    for n in SIZES:
        for off in OFFSETS:
            for seed in SEEDS[:2]:
                a, b = _pair(lambda g, dev, n=n: fn(g, dev, n, dtype), seed, off)
                _assert_same(a, b, f"{name} {dtype} n={n} offset={off} seed={seed}")


@cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn", NORMAL_CASES, ids=[c[0] for c in NORMAL_CASES])
def test_normal_matches_cpu(name, fn, dtype):
    for n in SIZES:
        for off in OFFSETS:
            a, b = _pair(lambda g, dev, n=n: fn(g, dev, n, dtype), 7, off)
            _assert_same(a, b, f"{name} {dtype} n={n} offset={off}")   # GPU too: our own log/sincos


INTS = ("int64", "int32", "int16", "uint8", "uint32", "uint64", "float64")


@cuda
@pytest.mark.parametrize("dtype", INTS)
def test_randint_bit_identical(dtype):
    ranges = [(-5, 1000), (0, 1), (3, 200)]
    if dtype == "int64":   # up to the whole range (the raw words)
        ranges += [(-2**63, 2**63 - 1), (-2**40, 2**50), (-2**63, 2**63)]
    if dtype == "uint64":   # past int64 (the same 64-bit arithmetic), the whole range
        ranges += [(2**63 - 5, 2**64 - 1), (0, 2**64), (2**63, 2**64)]
    d = dt.dtype(dtype)
    if d.kind in "iu":
        imin, imax = dt.iinfo_bounds(d)
        ranges = [(lo, hi) for lo, hi in ranges if lo >= imin and hi - 1 <= imax]
    for lo, hi in ranges:
        for n in SIZES:
            for off in OFFSETS:
                a, b = _pair(lambda g, dev, lo=lo, hi=hi, n=n: g.randint(lo, hi, size=n, dtype=dtype,
                                                                          device=dev), 11, off)
                _assert_same(a, b, f"randint [{lo}, {hi}) {dtype} n={n} offset={off}")


@cuda
def test_module_functions_take_device():
    for fn in (lambda dev: T.random.rand(2, 3, device=dev),
               lambda dev: T.random.randn(4, device=dev, dtype="float32"),
               lambda dev: T.random.randint(0, 9, size=(3,), device=dev),
               lambda dev: T.random.uniform(0, 2, size=5, device=dev),
               lambda dev: T.random.normal(0, 2, size=5, device=dev),
               lambda dev: T.random.permutation(6, device=dev)):
        T.random.manual_seed(123)
        a = fn("cpu")
        T.random.manual_seed(123)
        b = fn("cuda")
        assert b.device.type == "cuda"
        _assert_same(a, b, "module function")
    g = Generator(3)
    for m in (g.random(4, device="cuda"), g.standard_normal(4, device="cuda"),
              g.integers(5, size=3, device="cuda")):
        assert m.device.type == "cuda"


def _cpu_kernel(name, n, seed, offset, dtype):
    from tensor.cpu import kernels as K
    out = np.zeros(n, dtype)
    K.kernel("random", None, name)(out.ctypes.data, n, seed, offset, K._num_threads)
    return out


def _cuda_raw(name, n, seed, offset, d):
    from tensor.cuda import random as CR
    from tensor.elementwise import empty_tensor
    t = empty_tensor((n,), d, T.device("cuda"))
    if name == "randperm":
        CR.randperm(t, n, seed, offset)
    else:
        CR.fill(name, t, n, seed, offset)
    return t.to("cpu").numpy()


@cuda
def test_raw_bits_and_perm_keys():
    for n in SIZES:
        for off in OFFSETS:
            for seed in SEEDS:
                ref = _cpu_kernel("rand_bits32", n, seed, off, np.uint32)
                got = _cuda_raw("rand_bits32", n, seed, off, dt.int32).view(np.uint32)
                assert ref.tobytes() == got.tobytes(), (n, off, seed)
                w = _cpu_kernel("rand_bits32", 2 * n, seed, off, np.uint32).astype(np.uint64)
                keys = w[0::2] | (w[1::2] << np.uint64(32))   # 64-bit value i: words 2i, 2i+1
                got = _cuda_raw("rand_perm_keys", n, seed, off, dt.int64).view(np.uint64)
                assert keys.tobytes() == got.tobytes(), (n, off, seed)


@cuda
@pytest.mark.parametrize("path", ["small", "rounds32", "rounds64"])
def test_randperm_equals_cpu(path, monkeypatch):
    from tensor.cuda import random as CR
    if path != "small":
        monkeypatch.setattr(CR, "PERM_SMALL", 0)
    if path == "rounds64":
        monkeypatch.setattr(CR, "PERM_WIDE", 0)
    for n in (1, 2, 3, 5, 17, 1000, 4096):
        for off in (0, 3):
            for seed in (0, 42):
                ref = _cpu_kernel("randperm", n, seed, off, np.int64)
                got = _cuda_raw("randperm", n, seed, off, dt.int64)
                assert ref.tolist() == got.tolist(), (path, n, off, seed)


@cuda
def test_randperm_larger_than_one_block():
    # n > PERM_SMALL: the multi-launch path as the public API picks it
    a, b = _pair(lambda g, dev: g.permutation(5000, device=dev), 9, 1)
    assert a.tolist() == b.tolist()
    assert sorted(b.tolist()) == list(range(5000))


@cuda
def test_permutation_of_a_tensor_stays_on_its_device():
    x = T.arange(12, device="cuda").reshape(6, 2)
    g1, g2 = Generator(5), Generator(5)
    got = g1.permutation(x)
    ref = g2.permutation(T.arange(12).reshape(6, 2))
    assert got.device.type == "cuda"
    assert got.to("cpu").tolist() == ref.tolist()


# ---------------------------------------------------------------- creation on cuda

def _host(t):
    assert t.device.type == "cuda", t.device
    c = t.to("cpu")
    return c.astype(dt.float32).numpy() if c.dtype is dt.bfloat16 else c.numpy()


@cuda
@pytest.mark.parametrize("args,kw", [
    ((5,), {}), ((2, 11, 3), {}), ((-3, 4), {"dtype": "int32"}), ((0, 1, 0.1), {}),
    ((1.5, -2.0, -0.25), {}), ((0, 5), {"dtype": "float32"}), ((3,), {"dtype": "uint8"}),
    ((0, 7, 2), {"dtype": "float16"}), ((1000,), {}), ((0,), {}),
])
def test_arange(args, kw):
    got = T.arange(*args, device="cuda", **kw)
    ref = T.arange(*args, **kw)
    assert got.dtype is ref.dtype and got.shape == ref.shape
    assert _host(got).tobytes() == np.asarray(ref.numpy() if ref.dtype is not dt.bfloat16
                                              else ref.astype(dt.float32).numpy()).tobytes()
    npref = np.arange(*args, dtype=kw.get("dtype"))
    np.testing.assert_allclose(_host(got).astype(np.float64), npref.astype(np.float64),
                               rtol=1e-12, atol=1e-12)


@cuda
@pytest.mark.parametrize("args,kw", [
    ((0, 1, 5), {}), ((-2.0, 3.0, 7), {"endpoint": False}), ((1, 10, 1), {}),
    ((0, 1, 0), {}), ((0, 10, 4), {"dtype": "int64"}), ((-1, 1, 9), {"dtype": "float32"}),
])
def test_linspace(args, kw):
    got = T.linspace(*args, device="cuda", **kw)
    ref = T.linspace(*args, **kw)
    assert got.dtype is ref.dtype
    assert _host(got).tobytes() == ref.numpy().tobytes()
    np.testing.assert_allclose(_host(got), np.linspace(*args, **kw).astype(ref.dtype.np),
                               rtol=1e-6, atol=1e-12)


@cuda
def test_eye_full_zeros_ones_empty():
    for N, M, k in ((3, None, 0), (4, 6, 1), (5, 3, -2), (1, 1, 0)):
        np.testing.assert_array_equal(_host(T.eye(N, M, k, dtype="float32", device="cuda")),
                                      np.eye(N, M, k, dtype=np.float32))
    np.testing.assert_array_equal(_host(T.full((2, 3), 7, dtype="int16", device="cuda")),
                                  np.full((2, 3), 7, np.int16))
    np.testing.assert_array_equal(_host(T.full((4,), 1.5, device="cuda")), np.full(4, 1.5))
    np.testing.assert_array_equal(_host(T.zeros(2, 2, device="cuda")), np.zeros((2, 2)))
    np.testing.assert_array_equal(_host(T.ones(3, dtype="uint8", device="cuda")), np.ones(3, np.uint8))
    assert T.empty(2, 3, device="cuda").device.type == "cuda"


@cuda
@pytest.mark.parametrize("shape", [(3, 3), (4, 6), (2, 5, 3)])
@pytest.mark.parametrize("k", [0, 1, -1, 3])
def test_tril_triu(shape, k):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    x = T.asarray(a).to("cuda")
    np.testing.assert_array_equal(_host(T.tril(x, k)), np.tril(a, k))
    np.testing.assert_array_equal(_host(T.triu(x, k)), np.triu(a, k))


@cuda
def test_iota_every_dtype_equals_cpu():
    from tensor.cpu import kernels as K
    from tensor.cuda import misc as CM
    from tensor.elementwise import empty_tensor
    for d in dt.REAL:
        if d is dt.bool_:
            continue  # the CPU's iota_b8 stores the truncated byte; CUDA's stores 0/1
        for n in (1, 3, 1000):
            for start, step in ((0, 1), (-7, 3), (0.5, 0.1), (1e10, -7.3)):
                if d.kind != "f" and isinstance(start, float):
                    continue
                ref = empty_tensor((n,), d)
                K.kernel("misc", d, f"iota_{d.sfx}")(n, ref.data_ptr(), start, step)
                got = empty_tensor((n,), d, T.device("cuda"))
                CM.iota(got, n, start, step)
                c = got.to("cpu")
                sz = n * d.itemsize
                assert ctypes.string_at(c.data_ptr(), sz) == ctypes.string_at(ref.data_ptr(), sz), \
                    (d.name, n, start, step)
