"""The Philox4x32-10 random API: reproducibility, state save/restore, statistics, dtypes,
ranges, permutations, offset bookkeeping, and known-answer bits from a pure-Python Philox
written from the stream definition in cuda_src/philox.h."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensor as T
from tensor.random import Generator

pytestmark = pytest.mark.usefixtures("device")

M32 = 0xFFFFFFFF


# ---------------------------------------------------------------- reference Philox

def philox4x32_10(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
    return c0, c1, c2, c3


def randint_ref(seed, offset, n, low, high):
    """random_xform.h's rule: value i's word is 64-bit word i%2 of block offset + i//2; a word
    below t = 2^64 mod R is replaced by the same word of block {j, k, 0} (k = 1, 2, ...)."""
    r = high - low
    t = 2**64 % r
    key = (seed & M32, seed >> 32)
    out, retried = [], 0
    for i in range(n):
        j, h = offset + i // 2, i % 2
        k = 0
        while True:
            w = philox4x32_10((j & M32, j >> 32, k, 0), key)
            x = w[2 * h] | (w[2 * h + 1] << 32)
            if x >= t or k == 64:
                break
            k += 1
        retried += k > 0
        out.append(low + x % r)
    return out, retried


def block(seed: int, j: int):
    return philox4x32_10((j & M32, (j >> 32) & M32, 0, 0), (seed & M32, (seed >> 32) & M32))


def u32_stream(seed, offset, n):
    return [block(seed, offset + i // 4)[i % 4] for i in range(n)]


def u64_stream(seed, offset, n):
    out = []
    for i in range(n):
        w = block(seed, offset + i // 2)
        h = i % 2
        out.append(w[2 * h] | (w[2 * h + 1] << 32))
    return out


def test_reference_philox_known_answer():
    # the published Random123 vectors quoted in philox.h
    assert philox4x32_10((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert philox4x32_10((M32,) * 4, (M32, M32)) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)


# ---------------------------------------------------------------- bit-exact stream

@pytest.mark.parametrize("seed", [0, 1, 42, 0x123456789ABCDEF0, 2**64 - 1])
def test_rand_float32_block0_known_answer(seed):
    words = block(seed, 0)
    expected = np.array([(w >> 8) * 2.0**-24 for w in words], np.float32)
    got = Generator(seed).rand(4, dtype="float32").numpy()
    assert got.tobytes() == expected.tobytes()


def test_stream_layout_float64_int64_and_offsets():
    seed = 987654321987
    g = Generator(seed)
    # float32: value i <- block i // 4, word i % 4; 7 values use 2 blocks
    x = g.rand(7, dtype="float32").numpy()
    assert x.tolist() == [np.float32((w >> 8) * 2.0**-24) for w in u32_stream(seed, 0, 7)]
    assert g.get_state() == (seed, 2)
    # float64: value i <- 64-bit word i % 2 of block offset + i // 2 (low word first)
    y = g.rand(3, dtype="float64").numpy()
    assert y.tolist() == [(u >> 11) * 2.0**-53 for u in u64_stream(seed, 2, 3)]
    assert g.get_state() == (seed, 4)
    # integers: low + u64 % (high - low)
    z = g.randint(-5, 1000, size=5).numpy()
    assert z.tolist() == [-5 + u % 1005 for u in u64_stream(seed, 4, 5)]
    assert g.get_state() == (seed, 7)
    # uniform(low, high) = fma(high - low, u, low) in float64
    w = g.uniform(-2.0, 3.0, size=2, dtype="float64").numpy()
    us = [(u >> 11) * 2.0**-53 for u in u64_stream(seed, 7, 2)]
    np.testing.assert_allclose(w, [5.0 * u - 2.0 for u in us], rtol=0, atol=1e-15)
    assert g.get_state() == (seed, 8)


def test_randn_float32_is_box_muller_of_the_stream():
    seed = 31337
    z = Generator(seed).randn(6, dtype="float32").numpy().astype(np.float64)
    w = u32_stream(seed, 0, 6)
    ref = []
    for k in range(3):
        u1 = 1.0 - (w[2 * k] >> 8) * 2.0**-24
        u2 = (w[2 * k + 1] >> 8) * 2.0**-24
        r, t = math.sqrt(-2.0 * math.log(u1)), 2.0 * math.pi * u2
        ref += [r * math.cos(t), r * math.sin(t)]
    np.testing.assert_allclose(z, ref, rtol=2e-6, atol=2e-6)


def test_randperm_is_fisher_yates_of_the_stream():
    seed, n = 5, 9
    p = list(range(n))
    u = u64_stream(seed, 0, n)
    for i in range(n - 1, 0, -1):
        j = u[i] % (i + 1)
        p[i], p[j] = p[j], p[i]
    assert Generator(seed).permutation(n).tolist() == p


# ---------------------------------------------------------------- reproducibility

DRAWS = {
    "rand": lambda g: g.rand(5, 3),
    "randn": lambda g: g.randn(17),
    "randint": lambda g: g.randint(-10, 10, size=(4, 4)),
    "uniform": lambda g: g.uniform(-1.0, 4.0, size=9),
    "normal": lambda g: g.normal(3.0, 0.5, size=(2, 5)),
    "permutation": lambda g: g.permutation(50),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_same_seed_same_values_different_seed_different(name):
    f = DRAWS[name]
    a, b, c = f(Generator(123)), f(Generator(123)), f(Generator(124))
    assert a.shape == b.shape and a.dtype == b.dtype
    assert a.numpy().tobytes() == b.numpy().tobytes()
    assert a.numpy().tobytes() != c.numpy().tobytes()
    # a generator seeded again replays
    g = Generator(123)
    f(g)
    g.manual_seed(123)
    assert f(g).numpy().tobytes() == a.numpy().tobytes()


def test_state_save_restore_replays():
    g = Generator(2024)
    g.rand(10)
    state = g.get_state()
    a = [g.randn(7).numpy(), g.randint(0, 100, size=5).numpy(), g.rand(3, dtype="float32").numpy()]
    g.randn(1000)
    g.set_state(state)
    b = [g.randn(7).numpy(), g.randint(0, 100, size=5).numpy(), g.rand(3, dtype="float32").numpy()]
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()
    # the state is plain data: another generator picks up exactly there
    h = Generator(0)
    h.set_state(state)
    assert h.randn(7).numpy().tobytes() == a[0].tobytes()


def test_global_manual_seed_and_rng_state():
    saved = T.random.get_rng_state()
    try:
        T.manual_seed(77)
        a = T.rand(6)
        b = T.randn(4)
        T.manual_seed(77)
        assert T.rand(6).numpy().tobytes() == a.numpy().tobytes()
        assert T.randn(4).numpy().tobytes() == b.numpy().tobytes()
        assert T.rand(6).numpy().tobytes() != a.numpy().tobytes()  # the offset moved on
        g = Generator(77)
        assert g.rand(6).numpy().tobytes() == a.numpy().tobytes()
        st = T.get_rng_state()
        c = T.randint(0, 1000, size=8)
        T.set_rng_state(st)
        assert T.randint(0, 1000, size=8).tolist() == c.tolist()
        gen = Generator(5)
        assert T.rand(3, generator=gen).tolist() == Generator(5).rand(3).tolist()
    finally:
        T.random.set_rng_state(saved)


def test_consecutive_draws_are_independent():
    g = Generator(9)
    a, b = g.rand(1000).numpy(), g.rand(1000).numpy()
    assert not np.array_equal(a, b)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.15
    # two draws of 4k float32 values equal one draw of 8k (whole blocks, nothing skipped)
    g1, g2 = Generator(3), Generator(3)
    first, second = g1.rand(8, dtype="float32").numpy(), g1.rand(4, dtype="float32").numpy()
    both = g2.rand(12, dtype="float32").numpy()
    assert np.concatenate([first, second]).tobytes() == both.tobytes()
    # an odd count discards the rest of its last block: the next draw starts on a fresh block
    g3 = Generator(3)
    g3.rand(5, dtype="float32")
    assert g3.get_state()[1] == 2
    assert g3.rand(4, dtype="float32").numpy().tobytes() == both[8:12].tobytes()


def test_results_do_not_depend_on_thread_count():
    old = T.get_num_threads()
    try:
        T.set_num_threads(1)
        a = [Generator(1).rand(300_000).numpy(), Generator(1).randn(300_001, dtype="float32").numpy()]
        T.set_num_threads(2)
        b = [Generator(1).rand(300_000).numpy(), Generator(1).randn(300_001, dtype="float32").numpy()]
    finally:
        T.set_num_threads(old)
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()


# ---------------------------------------------------------------- statistics and ranges

N = 100_000


def test_rand_randn_statistics():
    g = Generator(11)
    u = g.rand(N).numpy()
    assert u.dtype == np.float64 and u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.std() - math.sqrt(1 / 12)) < 0.003
    assert abs(np.histogram(u, bins=10, range=(0, 1))[0] / N - 0.1).max() < 0.006
    for dtype in ("float32", "float64"):
        z = g.randn(N, dtype=dtype).numpy().astype(np.float64)
        assert abs(z.mean()) < 5 / math.sqrt(N)
        assert abs(z.std() - 1.0) < 0.015
        assert abs((np.abs(z) < 1).mean() - 0.6827) < 0.01  # a normal, not just mean/std
    n = g.normal(-3.0, 2.5, size=N).numpy()
    assert abs(n.mean() + 3.0) < 5 * 2.5 / math.sqrt(N)
    assert abs(n.std() - 2.5) < 0.04


@pytest.mark.parametrize("low,high", [(0, 7), (-5, 3), (-20, -10), (100, 101)])
def test_randint_covers_exactly_low_to_high(low, high):
    r = Generator(low * 31 + high).randint(low, high, size=20_000)
    assert r.dtype == T.int64
    vals = set(np.unique(r.numpy()).tolist())
    assert vals == set(range(low, high))


def test_randint_single_argument_and_dtypes():
    g = Generator(4)
    r = g.randint(5, size=1000)
    assert set(np.unique(r.numpy()).tolist()) == set(range(5))
    r8 = g.randint(-128, 128, size=5000, dtype="int8")
    assert r8.dtype == T.int8
    a = r8.numpy()
    assert a.min() == -128 and a.max() == 127
    u8 = g.randint(250, 256, size=500, dtype="uint8")
    assert u8.dtype == T.uint8 and set(np.unique(u8.numpy()).tolist()) == set(range(250, 256))
    with pytest.raises(ValueError, match="int8"):
        g.randint(0, 300, size=3, dtype="int8")
    with pytest.raises(ValueError, match="int8"):
        g.randint(-129, 0, size=3, dtype="int8")
    with pytest.raises(ValueError, match="uint8"):
        g.randint(-1, 5, size=3, dtype="uint8")
    with pytest.raises(ValueError, match="empty range"):
        g.randint(3, 3, size=2)
    big = g.randint(-2**63, 2**63 - 1, size=1000).numpy()
    assert (big < 0).any() and (big > 0).any()


def test_randint_whole_64bit_ranges_are_the_raw_words():
    """[0, 2**64) for uint64 and [-2**63, 2**63) for int64 (NumPy's integers takes both): the
    stream's 64-bit words themselves (plus low, wrapping), so every value is as likely."""
    seed = 0xC0FFEE
    g = Generator(seed)
    u = g.randint(0, 2**64, (5,), dtype=T.uint64)
    assert u.dtype is T.uint64 and u.tolist() == u64_stream(seed, 0, 5)
    i = g.randint(-2**63, 2**63, (5,), dtype=T.int64)
    assert i.dtype is T.int64 and i.tolist() == [w - 2**63 for w in u64_stream(seed, 3, 5)]
    top = g.randint(2**63 - 3, 2**64 - 1, (4,), dtype="uint64")   # past int64, not the whole range
    # words below 2**64 % R (here half of them) are redrawn from blocks {j, k, 0}
    assert top.tolist() == randint_ref(seed, 6, 4, 2**63 - 3, 2**64 - 1)[0]
    assert g.get_state() == (seed, 8)
    big = Generator(1).randint(0, 2**64, (4000,), dtype="uint64").numpy()
    assert big.dtype == np.uint64 and (big < 2**62).any() and (big >= 3 * 2**62).any()
    for low, high, d in ((0, 2**64, T.uint64), (-2**63, 2**63, T.int64)):   # the module function
        r = T.randint(low, high, (4,), dtype=d)
        assert r.dtype is d and r.shape == (4,) and all(low <= v < high for v in r.tolist())


def test_randint_bounds_past_the_dtype_name_randint_bounds_and_dtype():
    g = Generator(2)
    cases = [(-2**63, 2**63 + 1, "int64", "int64"), (-2**63 - 1, 0, "int64", "int64"),
             (0, 2**64 + 1, "uint64", "uint64"), (-1, 5, "uint64", "uint64"), (0, 257, "uint8", "uint8"),
             (0, 2**64, "float64", "int64's .* which float64 is drawn in"),
             (-2**70, 0, "float32", "int64's .* which float32 is drawn in")]
    for low, high, d, what in cases:
        with pytest.raises(ValueError, match=rf"^randint: range \[{low}, {high}\) does not fit {what}"):
            g.randint(low, high, (4,), dtype=d)
        if d[0] in "iu":   # NumPy refuses them too (its integers takes no float dtype)
            with pytest.raises(ValueError):
                np.random.default_rng(0).integers(low, high, 4, dtype=d)
    assert g.get_state() == (2, 0)   # nothing drawn


def test_uniform_stays_in_range():
    g = Generator(8)
    u = g.uniform(-1.5, 2.5, size=N).numpy()
    assert u.min() >= -1.5 and u.max() < 2.5
    assert abs(u.mean() - 0.5) < 5 * 4 / math.sqrt(12 * N)
    # a range one float32 ulp wide: fma rounds half the values up to `high`; they must not stay there
    hi = float(np.nextafter(np.float32(1.0), np.float32(2.0)))
    v = g.uniform(1.0, hi, size=1000, dtype="float32").numpy()
    assert (v >= 1.0).all() and (v < np.float32(hi)).all()
    with pytest.raises(ValueError, match="uniform"):
        g.uniform(2.0, 1.0, size=3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_rand_dtypes_in_unit_interval(dtype):
    g = Generator(21)
    r = g.rand(N, dtype=dtype)
    assert r.dtype == T.dtypes.dtype(dtype) and r.shape == (N,)
    a = r.astype("float64").numpy()
    assert a.min() >= 0.0 and a.max() < 1.0, a.max()
    assert abs(a.mean() - 0.5) < 0.01
    z = g.randn(1000, dtype=dtype)
    assert z.dtype == T.dtypes.dtype(dtype)
    assert abs(z.astype("float64").numpy().mean()) < 0.2
    with pytest.raises(TypeError, match="float"):
        g.rand(3, dtype="int32")


def test_shapes_and_sizes():
    g = Generator(0)
    assert g.rand(2, 3).shape == (2, 3)
    assert g.rand((2, 3)).shape == (2, 3)
    assert g.rand().shape == ()
    off = g.get_state()[1]
    assert off == 3 + 3 + 1  # 6, 6 and 1 float64 values: two per block
    assert g.randn(0).shape == (0,) and g.get_state()[1] == off  # empty draws take no blocks
    assert g.randint(0, 3, size=(2, 0)).shape == (2, 0)
    with pytest.raises(ValueError, match="negative"):
        g.rand(-1)


# ---------------------------------------------------------------- permutation

def test_permutation_is_a_permutation():
    g = Generator(6)
    for n in (0, 1, 2, 10, 1001):
        p = g.permutation(n)
        assert p.dtype == T.int64 and p.shape == (n,)
        assert sorted(p.tolist()) == list(range(n))
    p = g.permutation(1000).numpy()
    assert (p != np.arange(1000)).sum() > 900  # it actually shuffles
    with pytest.raises(ValueError, match="permutation"):
        g.permutation(-1)


def test_permutation_of_a_tensor_permutes_rows():
    x = T.arange(30).reshape(10, 3)
    p = Generator(12).permutation(10).tolist()
    y = Generator(12).permutation(x)
    assert y.shape == (10, 3) and not T.shares_memory(x, y)
    np.testing.assert_array_equal(y.numpy(), x.numpy()[p])
    assert sorted(map(tuple, y.tolist())) == sorted(map(tuple, x.tolist()))
    # non-contiguous input and a one-dimensional input
    xt = T.arange(12.0).reshape(3, 4).T
    yt = Generator(13).permutation(xt)
    np.testing.assert_array_equal(yt.numpy(), xt.numpy()[Generator(13).permutation(4).tolist()])
    with pytest.raises(ValueError, match="permutation"):
        Generator(0).permutation(T.tensor(3.0))


def test_fork_rng_restores_the_default_generator_and_initial_seed():
    T.manual_seed(11)
    want = T.rand(3).tolist()
    T.manual_seed(11)
    with T.random.fork_rng(devices=[]):
        inside = T.rand(3).tolist()
        T.randn(7)
    assert inside == want and T.rand(3).tolist() == want   # the draws inside are undone
    with T.random.fork_rng(enabled=False):
        T.rand(1)
    assert T.random.initial_seed() == 11
    before = T.random.get_rng_state()
    with pytest.raises(ZeroDivisionError), T.random.fork_rng():   # restored on an exception too
        T.rand(4)
        raise ZeroDivisionError
    assert T.random.get_rng_state() == before
