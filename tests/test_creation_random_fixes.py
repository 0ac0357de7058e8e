"""Fixes from a differential hunt over creation, conversion, random numbers and checkpoints,
each checked against NumPy's (or PyTorch's) documented behaviour without needing either at
run time beyond NumPy:

- nn.save round-trips entry names that are np.savez's own parameters (`file`, `allow_pickle`);
  files written by np.savez before still load;
- randint is unbiased for ranges that are a sizeable part of 2^64 (rejection of the low
  2^64 mod R words, retried from counters outside the stream), the same on both devices;
- uniform with an overflowing high - low or an infinite bound raises OverflowError (NumPy's),
  normal with a non-finite loc or scale ValueError;
- T.tensor keeps a tensor's device (PyTorch's rule); meshgrid refuses mixed devices;
- bool arange has at most 2 values and bool randint draws from [0, 2) (NumPy's rules);
- Python floats become bfloat16 by one rounding; under a float32 default Python complex
  values give complex64 and ints past int64 keep NumPy's float64;
- error types (ValueError for ragged data / NaN into ints), result_type of dtype names,
  *_like and tril/triu of array-likes, the repr of empty tensors, requires_grad= on
  empty_like / eye / arange / linspace.
"""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from test_random import randint_ref  # (the stream's reference, with the rejection rule)

import nn
import tensor as T
from tensor.random import Generator

on_devices = pytest.mark.usefixtures("device")


# ---------------------------------------------------------------- #1 nn.save entry names

@pytest.mark.parametrize("compress", [False, True])
def test_save_round_trips_names_of_savez_parameters(tmp_path, compress):
    keys = ["file", "allow_pickle", "args", "kwds", "compress", "arr_0"]
    sd = {k: T.arange(3.0) + i for i, k in enumerate(keys)}
    sd["nest"] = {"file": T.ones(2, dtype=T.bfloat16), "allow_pickle": 7}
    path = tmp_path / "k.npz"
    nn.save(sd, path, compress=compress)
    back = nn.load(path)
    assert list(back) == keys + ["nest"]
    for i, k in enumerate(keys):
        assert back[k].tolist() == [i, i + 1.0, i + 2.0], k
    assert back["nest"]["file"].dtype is T.bfloat16 and back["nest"]["allow_pickle"] == 7
    with np.load(path, allow_pickle=False) as z:   # still a plain .npz NumPy reads
        assert sorted(z.files) == sorted(keys + ["nest/file", "__tree__"])
        assert z["allow_pickle"].tolist() == [1.0, 2.0, 3.0]


def test_load_reads_files_np_savez_wrote(tmp_path):
    """A checkpoint from before (written by np.savez itself) loads the same."""
    tree = {"format": "stridex-state-v1",
            "root": {"dict": [["w", {"tensor": "w", "dtype": "float32"}], ["step", {"value": 3}]]}}
    path = tmp_path / "old.npz"
    np.savez(path, w=np.arange(4, dtype=np.float32), __tree__=np.array(json.dumps(tree)))
    back = nn.load(path)
    assert back["step"] == 3 and back["w"].dtype is T.float32 and back["w"].tolist() == [0, 1, 2, 3]


# ---------------------------------------------------------------- #2 unbiased randint

@pytest.mark.parametrize("low,high,dtype", [(0, 3 * 2**62, "uint64"), (-2**63, 2**62, "int64"),
                                            (5, 2**63 + 7, "uint64"), (-5, 1000, "int64")])
def test_randint_is_the_rejection_rule(low, high, dtype):
    seed, n = 0xBEEF, 40
    g = Generator(seed)
    g.set_state((seed, 3))
    got = g.randint(low, high, size=n, dtype=dtype).tolist()
    ref, retried = randint_ref(seed, 3, n, low, high)
    assert got == ref
    assert g.get_state() == (seed, 3 + n // 2)   # retries take no stream blocks
    if high - low > 2**62:   # a third or more of the words are rejected: the rule was exercised
        assert retried > 0
    else:   # a small range: the old low + word % R stream, unchanged
        assert retried == 0


@on_devices
@pytest.mark.parametrize("low,high,dtype,cut", [(0, 3 * 2**62, "uint64", 2**62),
                                                (-2**63, 2**62, "int64", -2**62)])
def test_randint_one_third_is_one_third(device, low, high, dtype, cut):
    """[low, high) spans 3 equal parts; x mod R put half the draws in the first (the hunt's
    0.50). 10^5 draws: within 5 sigma of 1/3."""
    n, p = 10**5, 1 / 3
    x = Generator(0).randint(low, high, size=n, dtype=dtype).numpy()
    frac = float((x < np.array(cut, x.dtype)).mean())
    assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / n), frac
    assert low <= int(x.min()) and int(x.max()) < high


@on_devices
def test_randint_large_ranges_same_bits_on_both_devices(device):
    """Rejection retries read counters outside the stream identically on cpu and cuda."""
    for low, high, d in ((0, 3 * 2**62, "uint64"), (-2**63, 2**63 - 1, "int64"), (7, 2**63 + 9, "uint64")):
        a = Generator(5).randint(low, high, size=1001, dtype=d, device="cpu")
        b = Generator(5).randint(low, high, size=1001, dtype=d, device=device)
        assert a.numpy().tobytes() == b.to("cpu").numpy().tobytes()
        assert a.tolist() == randint_ref(5, 0, 1001, low, high)[0]


def test_randint_rejection_is_bounded_for_the_worst_range():
    """R = 2^63 + 1 rejects almost half of all words (the most any R does): the draw ends,
    stays in range and even, and takes only the stream's ceil(n/2) blocks."""
    g = Generator(3)
    x = g.randint(0, 2**63 + 1, size=20_001, dtype="uint64").numpy()
    assert g.get_state() == (3, 10_001)
    assert int(x.max()) <= 2**63
    frac = float((x < np.uint64(3 * 2**61)).mean())
    assert abs(frac - 0.75) < 5 * math.sqrt(0.75 * 0.25 / x.size), frac


# ---------------------------------------------------------------- #3 uniform / normal bounds

@pytest.mark.parametrize("low,high,dtype", [(-3e38, 3e38, "float32"), (-1e308, 1.5e308, "float64"),
                                            (0.0, math.inf, "float64"), (-math.inf, 0.0, "float32"),
                                            (math.inf, math.inf, "float64"), (0.0, 1e39, "float32"),
                                            (-6e4, 6e4, "float16"), (-2e38, 2e38, "complex64"),
                                            (0.0, 3.4e38, "bfloat16")])
def test_uniform_overflowing_range_raises(low, high, dtype):
    g = Generator(0)
    with pytest.raises(OverflowError, match="^" + re.escape(f"uniform: low={low}, high={high}: ")):
        g.uniform(low, high, size=4, dtype=dtype)
    assert g.get_state() == (0, 0)
    if dtype == "float64":   # NumPy refuses them too
        with pytest.raises(OverflowError):
            np.random.default_rng(0).uniform(low, high, 4)


def test_uniform_wide_finite_ranges_still_work():
    g = Generator(1)
    u = g.uniform(-1e38, 1e38, size=1000, dtype="float32").numpy()
    assert np.isfinite(u).all() and (u < 0).any() and (u > 0).any()
    v = g.uniform(-8e307, 8e307, size=1000).numpy()
    assert np.isfinite(v).all() and v.min() >= -8e307 and v.max() < 8e307


@pytest.mark.parametrize("loc,scale", [(0.0, math.nan), (0.0, math.inf), (math.nan, 1.0),
                                       (math.inf, 1.0), (-math.inf, 2.0)])
def test_normal_non_finite_parameters_raise(loc, scale):
    g = Generator(0)
    with pytest.raises(ValueError, match=r"^normal: "):
        g.normal(loc, scale, size=3)
    with pytest.raises(ValueError, match=r"^normal: "):
        T.random.normal(loc, scale, size=3, dtype="float32")
    assert g.get_state() == (0, 0)
    assert np.isfinite(g.normal(1e300, 1e300, size=3).numpy()).all()


# ---------------------------------------------------------------- #6 #7 devices

def _other_device_than_default(device):
    if device == "cpu":
        pytest.skip("needs the data on a device other than the default: the cuda leg checks it")


@on_devices
def test_tensor_of_a_tensor_keeps_its_device(device):
    _other_device_than_default(device)
    x = T.arange(3.0, device=device)
    T.set_default_device("cpu")
    assert T.tensor(x).device == x.device and T.tensor(x).tolist() == [0.0, 1.0, 2.0]
    assert T.tensor([x[0], x[2]]).device == x.device
    assert T.tensor([[x[0]], [x[1]]], dtype="float32").device == x.device
    assert T.tensor(x, device="cpu").device.type == "cpu"     # device= still decides
    assert T.tensor([1.0, 2.0]).device.type == "cpu"          # numbers: the default device
    assert T.tensor([x[0], T.ones(())]).device.type == "cpu"  # tensors on two devices: the default


@on_devices
def test_meshgrid_refuses_mixed_devices(device):
    _other_device_than_default(device)
    a, b = T.arange(2, device=device), T.arange(3, device="cpu")
    with pytest.raises(ValueError, match=r"^meshgrid: all inputs must be on one device, but input 0 "
                                         r"is on cuda:0 and input 1 on cpu"):
        T.meshgrid(a, b)
    xs, ys = T.meshgrid(a, [5, 6, 7])   # array-likes join the tensors' device
    assert xs.device == ys.device == a.device and ys.tolist() == [[5, 5], [6, 6], [7, 7]]


# ---------------------------------------------------------------- #8 #9 bool ranges

@pytest.mark.parametrize("args", [(2,), (1, 3), (0, 2), (1.5, 2.5, 0.5), (0, 0.5, 0.25), (5, 3, -1),
                                  (0,), (1,)])
def test_bool_arange_of_at_most_two_values_is_numpys(args):
    assert T.arange(*args, dtype="bool").tolist() == np.arange(*args, dtype=bool).tolist()


@pytest.mark.parametrize("args", [(3,), (4,), (1.5, 3, 0.5), (0, 10, 3)])
def test_bool_arange_of_more_values_raises(args):
    with pytest.raises(TypeError, match=r"^arange: a bool range has at most 2 values"):
        T.arange(*args, dtype="bool")
    with pytest.raises(TypeError):
        np.arange(*args, dtype=bool)


def test_randint_bool_is_a_range_within_0_1():
    g = Generator(0)
    with pytest.raises(ValueError, match=r"^randint: range \[0, 5\) does not fit bool's \[0, 1\]"):
        g.randint(0, 5, size=8, dtype="bool")
    with pytest.raises(ValueError):
        np.random.default_rng(0).integers(0, 5, 8, dtype=bool)
    with pytest.raises(ValueError, match="bool"):
        g.randint(-1, 1, size=8, dtype="bool")
    r = g.randint(0, 2, size=200, dtype="bool")
    assert r.dtype is T.bool_ and set(r.tolist()) == {False, True}
    assert set(g.randint(1, 2, size=5, dtype="bool").tolist()) == {True}


# ---------------------------------------------------------------- #10 #11 conversions

def _bf16_bits(t):
    return T.Tensor._make(t._storage, t._shape, t._strides, t._offset, T.int16).numpy().view(np.uint16)


@on_devices
def test_python_floats_round_once_to_bfloat16(device):
    v = 1 + 2**-8 + 2**-30   # just above a midpoint: float32 first would round it down to the tie
    want = T.tensor([v]).astype("bfloat16")
    assert want.tolist() == [1.0078125]
    for t in (T.tensor([v], dtype="bfloat16"), T.full((1,), v, dtype="bfloat16"),
              T.asarray([v], dtype="bfloat16"), T.tensor(v, dtype="bfloat16").reshape(1),
              T.zeros(1, dtype="bfloat16") + T.tensor(v, dtype="bfloat16")):
        assert t.tolist() == [1.0078125]
    rng = np.random.default_rng(0)
    mids = ((rng.integers(0, 0x7F7F, 100).astype(np.uint32) << 16) + 0x8000).view(np.float32)
    vals = [float(m) * f for m in mids for f in (1.0, 1 + 2**-30, 1 - 2**-30)]
    vals += [1e39, -1e39, 3.3961e38, 1e-45, -1e-45, 0.0, -0.0, math.inf, -math.inf]
    ref = _bf16_bits(T.tensor(vals, dtype="float64").astype("bfloat16").to("cpu"))
    assert (_bf16_bits(T.tensor(vals, dtype="bfloat16").to("cpu")) == ref).all()
    fills = np.concatenate([_bf16_bits(T.full((1,), v, dtype="bfloat16").to("cpu")) for v in vals])
    assert (fills == ref).all()


@pytest.fixture
def float32_default():
    T.set_default_dtype("float32")
    try:
        yield
    finally:
        T.set_default_dtype("float64")


def test_float32_default_gives_complex64_and_keeps_numpys_big_ints(float32_default):
    for data in ([1j], 1 + 2j, [1, 2j], [[1.5, 1j]]):   # PyTorch: complex64 under a float32 default
        assert T.tensor(data).dtype is T.complex64, data
        assert T.asarray(data).dtype is T.complex64, data
    assert T.tensor([1j], dtype="complex128").dtype is T.complex128
    big = T.tensor([1, 2**63])   # NumPy reads float64 (PyTorch refuses): not the lossy float32
    assert big.dtype is T.float64 and big.tolist() == np.asarray([1, 2**63]).tolist()
    assert T.tensor([[2**63], [-1]]).dtype is T.float64
    assert T.tensor([1.5, 2**63]).dtype is T.float32   # a Python float: the default float
    assert T.tensor([2**63]).dtype is T.uint64 and T.tensor([1.5]).dtype is T.float32


# ---------------------------------------------------------------- #12 error types and array-likes

def test_ragged_and_nan_into_int_raise_value_error():
    for make in (lambda: T.tensor([[1, 2], [3]]), lambda: T.asarray([[1.0], [2.0, 3.0]]),
                 lambda: T.tensor([float("nan")], dtype="int64"),
                 lambda: T.tensor([[1], [2, 3]], dtype="int32")):
        with pytest.raises(ValueError, match=r"^(tensor|asarray): cannot convert list to a tensor"):
            make()
    with pytest.raises(TypeError):   # no number at all: still TypeError, as NumPy
        T.tensor([None], dtype="int64")


def test_result_type_takes_dtype_names():
    assert T.result_type("int8", "int16") is T.int16
    assert T.result_type("int8", "uint8") is T.dtypes.dtype(np.result_type("int8", "uint8"))
    assert T.result_type("float32", 1.5) is T.float32
    assert T.result_type(np.dtype("int8"), "float16", T.ones(1, dtype="int32")) is T.float64
    assert np.result_type(np.dtype("int8"), "float16", np.ones(1, "int32")) == np.float64
    with pytest.raises(TypeError, match="^result_type: dtype: unsupported data type .nope."):
        T.result_type("nope")


@on_devices
def test_like_functions_and_triangles_take_array_likes(device):
    for f, want in ((T.zeros_like, 0), (T.ones_like, 1)):
        t = f([[1, 2, 3]])
        assert t.shape == (1, 3) and t.dtype is T.int64 and t.tolist() == [[want] * 3]
    t = T.full_like(np.arange(4.0), 2.5)
    assert t.dtype is T.float64 and t.tolist() == [2.5] * 4
    e = T.empty_like((1, 2))
    assert e.shape == (2,) and e.dtype is T.int64
    m = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert T.tril(m).tolist() == np.tril(m).tolist()
    assert T.triu(np.array(m), 1).tolist() == np.triu(m, 1).tolist()


# ---------------------------------------------------------------- #13 repr, #14 requires_grad

@pytest.mark.parametrize("shape", [(2, 0, 3), (1, 0), (0, 1), (0, 0)])
def test_repr_of_empty_tensors_shows_the_shape(shape):
    assert repr(T.zeros(shape)) == f"tensor([], shape={shape}, dtype=float64, device=cpu)"
    assert f"shape={shape}" in repr(np.zeros(shape))   # as NumPy's
    assert repr(T.zeros((0,), dtype="int32")) == "tensor([], dtype=int32, device=cpu)"
    assert repr(T.zeros(shape, dtype="bfloat16")).startswith(f"tensor([], shape={shape}, dtype=bfloat16")


@on_devices
def test_requires_grad_on_more_creation_functions(device):
    made = [T.empty_like(T.ones(2), requires_grad=True), T.eye(2, requires_grad=True),
            T.arange(3.0, requires_grad=True), T.linspace(0, 1, 3, requires_grad=True)]
    for t in made:
        assert t.requires_grad and t.is_leaf and t.device.type == device
    for t in (T.empty_like(T.ones(2)), T.eye(2), T.arange(3.0), T.linspace(0, 1, 3)):
        assert not t.requires_grad
    (made[1] * made[2][:2]).sum().backward()
    assert made[2].grad.tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="requires_grad"):
        T.arange(3, requires_grad=True)   # an int range cannot (PyTorch refuses too)


@pytest.mark.usefixtures("device")
def test_asarray_of_python_values_honours_device_cpu():
    """asarray(list or scalar, device="cpu") is on the CPU whatever the default device (with
    "cuda" the default, it had been built there)."""
    for obj in (1.0, 3, [1.0, 2.0], [[True], [False]]):
        assert T.asarray(obj, device="cpu").device == T.device("cpu")
        assert T.asarray(obj).device == T.get_default_device()
