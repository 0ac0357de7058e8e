"""Bad input gets a clear exception instead of a silent wrong value (issue 11, items 4, 5, 6, 8).

- Values no dtype here holds (Python ints past uint64 or below int64, complex values asked to
  fit a real dtype, strings)
  raise OverflowError / TypeError naming the value and dtype, the same way on every path:
  tensor, asarray, array, full, arange, setitem, fill_ and Python or NumPy scalar operands.
  Python ints past int64 that fit uint64 are uint64, as NumPy 2 reads them.
- A tensor hook returning a gradient of another shape, dtype or device raises naming the hook.
- Repeated axes raise as NumPy's in every function taking several axes (one helper).
- argmax over an empty non-reduced axis, a huge slice step, huge shapes and misleading
  argument errors (asarray('abc'), sum(axis=1.0), set_memory_limit('1GB')).
"""
from __future__ import annotations

import itertools
import re
import sys
import warnings

import numpy as np
import pytest
from helpers import INT_DTYPES, assert_close

import autograd  # noqa: F401  (installs the recording hook used by backward)
import tensor as T
from tensor import dtypes as dt

on_devices = pytest.mark.usefixtures("device")
MAKERS = {"tensor": T.tensor, "asarray": T.asarray, "array": T.array}


# ---------------------------------------------------------------- item 4: values that do not fit

@pytest.mark.parametrize("data", [[2**63], [[2**63]], 2**63, [2**63, 2**64 - 1]], ids=repr)
def test_python_ints_past_int64_are_uint64_as_numpy(data):
    want = np.asarray(data)
    assert want.dtype == np.uint64
    for name, make in MAKERS.items():
        t = make(data)
        assert t.dtype is T.uint64 and t.tolist() == want.tolist(), name


@pytest.mark.parametrize("data", [[2**64], [-(2**63) - 1], [[1, 2], [3, 2**64]], 2**200], ids=repr)
def test_python_ints_past_uint64_raise_naming_the_value(data):
    """NumPy makes these object arrays; with no such dtype here they raise (they used to wrap:
    T.tensor([2**63]) gave -2**63 before uint64 existed)."""
    assert np.asarray(data).dtype == object
    big = data if isinstance(data, int) else max(np.asarray(data, dtype=object).ravel(), key=abs)
    shown = re.escape(dt.show_int(big))  # huge ints show their leading digits and length
    bound = "uint64" if big > 0 else "int64"
    for name, make in MAKERS.items():
        with pytest.raises(OverflowError, match=rf"{name}: Python integer {shown} out of bounds for {bound}"):
            make(data)


def test_python_ints_numpy_reads_as_float64_follow_numpy():
    """NumPy reads [2**63, -1] and [1, 2**63] as float64 (int64 meets uint64): the same here."""
    for data in ([2**63, -1], [1, 2**63], [[1, 2], [3, 2**63]], [0, 2**64 - 1]):
        want = np.asarray(data)
        assert want.dtype == np.float64
        assert_close(T.tensor(data), want, "float64")


@pytest.mark.parametrize("d", INT_DTYPES, ids=lambda d: d.name)
def test_python_ints_outside_an_explicit_dtype_raise(d):
    """NumPy 2: np.array([300], np.int8) raises OverflowError "Python integer 300 out of bounds
    for int8"; the bounds themselves convert exactly."""
    lo, hi = dt.iinfo_bounds(d)
    for bad in (hi + 1, lo - 1, 2**64):
        with pytest.raises(OverflowError):
            np.asarray([bad], d.np)
        for name, make in MAKERS.items():
            with pytest.raises(OverflowError, match=rf"{name}: Python integer {bad} out of bounds for "
                                                    rf"{d.name}"):
                make([[0, bad]], dtype=d)
        with pytest.raises(OverflowError, match=rf"Python integer {bad} out of bounds for {d.name}"):
            T.full(2, bad, dtype=d)
        with pytest.raises(OverflowError, match=str(bad)):
            T.zeros(3, dtype=d) + bad          # NumPy 2 raises here too (the scalar adopts d)
    assert T.tensor([lo, hi], dtype=d).tolist() == [lo, hi]
    assert T.full(2, hi, dtype=d).tolist() == [hi, hi]


@on_devices
def test_full_and_scalar_operands_past_int64():
    assert T.full(3, 2**63).dtype is T.uint64      # np.full reads it as uint64
    with pytest.raises(OverflowError, match="18446744073709551616 out of bounds"):
        T.full(3, 2**64)
    x = T.arange(3)
    for fn in (lambda: x + 2**63, lambda: 2**63 - x, lambda: x * (-(2**63) - 1), lambda: T.maximum(x, 2**64)):
        with pytest.raises(OverflowError, match="out of bounds for int64"):
            fn()
    with pytest.raises(OverflowError, match="out of bounds for float32"):  # past float64 as well
        T.ones(2, dtype="float32") + 2**2000
    with pytest.raises(OverflowError, match=r"\(603 digits\) out of bounds for float64"):
        T.ones(2) * 2**2000
    # a value float32 cannot hold but float64 can rounds to inf, as NumPy's weak scalars do
    a = np.ones(2, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in (1e300, 2**200, -1e40):
            assert_close(T.asarray(a) + s, a + s, "float32", what=repr(s))
            assert_close(T.asarray(a.astype(np.float16)) * s, a.astype(np.float16) * s, "float16")


@on_devices
def test_unsigned_arrays_keep_their_dtype():
    """uint16/32/64 arrays are shared as themselves (they used to convert to int64); mixing
    uint64 with int64 promotes to float64 and assigning wraps, as NumPy."""
    big = np.array([1, 2**64 - 1, 2**63], np.uint64)
    for ud in (np.uint16, np.uint32, np.uint64):
        u = np.array([0, np.iinfo(ud).max], ud)
        assert T.asarray(u).dtype == ud and T.asarray(u).tolist() == u.tolist()
        assert T.from_numpy(u).data_ptr() == u.ctypes.data
    assert T.asarray(big, copy=False).dtype is T.uint64
    x, xn = T.zeros(3, dtype="int64"), np.zeros(3, np.int64)
    for a, b in ((x, big), (x, np.uint64(2**64 - 1))):
        r = a + b
        assert r.dtype is T.float64
        assert_close(r, xn + b)
    assert T.full(2, np.uint64(2**63)).tolist() == [2**63] * 2
    x[:] = big
    xn[:] = big
    assert x.tolist() == xn.tolist()


@on_devices
@pytest.mark.parametrize("value", [1j, 1 + 2j, np.complex64(1), np.complex128(-2j)], ids=repr)
def test_complex_values(value):
    """Complex values promote a real tensor as NumPy's (T.ones(2) * 1j once gave [0, 0]); asked
    to fit a real dtype they raise, never dropping the imaginary part silently."""
    x = T.ones(2)
    want = np.ones(2) * value
    for got in (x * value, value + x - 1, T.where(x > 0, value, x), T.full(2, value)):
        assert got.dtype.kind == "c"
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert T.asarray([value]).dtype.kind == "c" and T.tensor(value).dtype.kind == "c"
    cases = {"to float32": lambda: T.tensor([1.0, value], dtype="float32"),
             "to int8": lambda: T.asarray([[1], [value]], dtype="int8")}
    for name, fn in cases.items():
        op = {"to float32": "tensor", "to int8": "asarray"}[name]
        with pytest.raises(TypeError, match=rf"^{op}: .*complex.*use a complex dtype"):
            fn()
    with pytest.raises(TypeError, match="complex"):
        x[0] = value
    with pytest.raises(TypeError, match="complex"):
        x.fill_(value)
    assert x.tolist() == [1.0, 1.0]


@on_devices
def test_strings_raise_type_error_naming_the_op():
    cases = {"asarray": lambda: T.asarray("abc"), "tensor": lambda: T.tensor(b"ab"),
             "array": lambda: T.array(np.array(["a", "b"])), "add": lambda: T.ones(2) + "a",
             "full": lambda: T.full(2, "a")}
    for name, fn in cases.items():
        op = "asarray" if name == "array" else name
        with pytest.raises(TypeError, match=rf"^{op}: .*(str|bytes|<U1)"):
            fn()
    with pytest.raises(TypeError, match="ragged or mixed"):
        T.asarray([1, None])


def test_arange_values_past_int64_raise():
    for args in ((2**63, 2**63 + 2), (2**63 - 2, 2**63 + 2), (-(2**63) - 1, 0, 2**62)):
        with pytest.raises(OverflowError, match="out of bounds for int64"):
            T.arange(*args)
    assert T.arange(-(2**63), -(2**63) + 2).tolist() == np.arange(-(2**63), -(2**63) + 2).tolist()
    assert T.arange(0, 10, 2**63).tolist() == [0]             # one value: the step is never taken
    with pytest.raises(OverflowError):
        np.arange(250, 300, 10, dtype=np.int8)
    with pytest.raises(OverflowError, match="Python integer 250 out of bounds for int8"):
        T.arange(250, 300, 10, dtype="int8")


# ---------------------------------------------------------------- item 5: hooks

def _hook_cases():
    return {"shape": (lambda g: g.sum(), ValueError, "shape"),
            "broadcastable shape": (lambda g: g[:1], ValueError, "shape"),
            "dtype": (lambda g: g.astype("float32"), TypeError, "dtype"),
            "not a tensor": (lambda g: g.tolist(), TypeError, "list")}


@on_devices
@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_hook_returning_a_wrong_gradient_raises_naming_it(leaf):
    """PyTorch raises when a hook changes the gradient's shape/dtype; it used to be summed
    into .grad (a (1,) gradient broadcast silently)."""
    for what, (body, exc, word) in _hook_cases().items():
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)

        def my_bad_hook(g, body=body):
            return body(g)
        y = x * 2
        (x if leaf else y).register_hook(my_bad_hook)
        with pytest.raises(exc, match=rf"hook 'test_hook.*my_bad_hook' returned .*{word}"):
            (y * y).sum().backward()
        assert x.grad is None, what


@on_devices
def test_hook_that_keeps_the_gradient_shape_works_and_errors_name_the_hook():
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert_close(x.grad, np.array([20.0, 40.0, 60.0]))

    def failing_hook(g):
        raise KeyError("boom")
    z = T.ones(2, requires_grad=True)
    z.register_hook(failing_hook)
    with pytest.raises(KeyError) as e:
        (z * 3).sum().backward()
    if sys.version_info >= (3, 11):  # exceptions carry notes
        assert any("failing_hook" in n for n in getattr(e.value, "__notes__", ())), "the hook is not named"


def test_hook_returning_another_device_raises():
    from conftest import CUDA_OK
    if not CUDA_OK:
        pytest.skip("needs a cuda device (or the emulator)")
    x = T.ones(3, requires_grad=True)
    x.register_hook(lambda g: g.to("cuda"))
    with pytest.raises(ValueError, match="device"):
        (x * 2).sum().backward()
    assert x.grad is None


# ---------------------------------------------------------------- item 6: axes

def _dup_cases():
    z3 = (2, 3, 4)
    return {
        "moveaxis destination": (z3, lambda m, a: m.moveaxis(a, (0, 1), (2, 2))),
        "moveaxis source": (z3, lambda m, a: m.moveaxis(a, (0, -3), (1, 2))),
        "transpose": (z3, lambda m, a: m.transpose(a, (0, 0, 1))),
        "permute": (z3, lambda m, a: a.transpose(1, 1, 0) if m is np else a.permute(1, 1, 0)),
        "expand_dims": (z3, lambda m, a: m.expand_dims(a, (0, 0))),
        "expand_dims negative": (z3, lambda m, a: m.expand_dims(a, (4, -1))),
        "squeeze": ((1, 3, 1), lambda m, a: m.squeeze(a, (0, -3))),
        "flip": (z3, lambda m, a: m.flip(a, (1, 1))),
        "tensordot": (z3, lambda m, a: m.tensordot(a, a, axes=([0, 0], [0, 0]))),
        "count_nonzero": (z3, lambda m, a: m.count_nonzero(a, axis=(1, -2))),
        **{name: (z3, lambda m, a, name=name: getattr(m, name)(a, axis=(0, 2, -3)))
           for name in ("sum", "prod", "mean", "var", "std", "max", "min", "any", "all")},
    }


@on_devices
@pytest.mark.parametrize("case", list(_dup_cases()))
def test_repeated_axes_raise_as_numpy(case):
    shape, fn = _dup_cases()[case]
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    with pytest.raises(ValueError):
        fn(np, a)
    with pytest.raises(ValueError, match="repeated axis"):
        fn(T, T.asarray(a))


@on_devices
def test_valid_multi_axis_calls_match_numpy():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = T.asarray(a)
    for k in (1, 2, 3):
        for src in itertools.permutations(range(-3, 3), k):
            if len({s % 3 for s in src}) < k:
                continue
            for dst in itertools.permutations(range(3), k):
                assert_close(T.moveaxis(x, src, dst), np.moveaxis(a, src, dst), what=f"{src} -> {dst}")
    assert_close(T.expand_dims(x, (0, -1, 2)), np.expand_dims(a, (0, -1, 2)))
    assert_close(T.tensordot(x, x, axes=([0, 2], [0, -1])), np.tensordot(a, a, axes=([0, 2], [0, -1])))
    assert_close(T.roll(x, (1, 2), (0, 0)), np.roll(a, (1, 2), (0, 0)))   # NumPy allows repeats here
    assert_close(T.sum(x, axis=[2, 0]), a.sum(axis=(2, 0)))


@pytest.mark.parametrize("bad", [1.0, "1", np.float64(1.0), b"1"], ids=repr)
def test_non_integer_axes_are_type_errors_naming_the_op(bad):
    x = T.ones((2, 3))
    cases = {"sum": lambda: x.sum(axis=bad), "mean": lambda: T.mean(x, axis=bad),
             "squeeze": lambda: T.squeeze(x, bad), "expand_dims": lambda: T.expand_dims(x, bad),
             "moveaxis": lambda: T.moveaxis(x, bad, 0), "flip": lambda: T.flip(x, bad),
             "argmax": lambda: T.argmax(x, axis=bad)}
    for name, fn in cases.items():
        with pytest.raises(TypeError, match=rf"^{name}: (axis|source) must be an integer"):
            fn()
    with pytest.raises(TypeError, match=r"sum: axis must be an integer, got float"):
        x.sum(axis=(0, 1.0))


# ---------------------------------------------------------------- item 8

@on_devices
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_over_an_empty_non_reduced_axis(name):
    """np.zeros((0, 3)).argmax(axis=1) has shape (0,); only an empty reduced axis raises."""
    for shape, axis in (((0, 3), 1), ((2, 0, 3), 2), ((2, 0, 3), -1), ((0, 3), -1), ((3, 0, 2), 0)):
        a = np.zeros(shape)
        for keepdims in (False, True):
            want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
            got = getattr(T, name)(T.asarray(a), axis=axis, keepdims=keepdims)
            assert got.shape == want.shape and got.dtype is T.int64, (shape, axis, keepdims)
    for shape, axis in (((0, 3), 0), ((0, 3), None), ((2, 0), 1)):
        with pytest.raises(ValueError):
            getattr(np, name)(np.zeros(shape), axis=axis)
        with pytest.raises(ValueError, match=f"{name}: attempt to get {name} of an empty"):
            getattr(T, name)(T.zeros(shape), axis=axis)
    a = np.array([[3.0, 1.0, 2.0]])[:0]
    assert_close(getattr(T, name)(T.asarray(np.ones((4, 3)))[2:2], axis=1), getattr(np, name)(a, axis=1))


@on_devices
def test_huge_slice_steps():
    """A slice step of 10**20 keeps one element; it used to give a stride past int64 and a bare
    'OverflowError: int too big to convert' at the next kernel."""
    a = np.arange(24).reshape(4, 6)
    x = T.asarray(a)
    for key in (np.s_[::10**20], np.s_[::-(10**20)], np.s_[1::10**20, 5:0:-(10**30)],
                np.s_[..., 10**20::-(10**20)], np.s_[::10**20, ::2]):
        v = x[key]
        assert_close(v, a[key], what=repr(key))
        assert_close(v * 2 + 1, a[key] * 2 + 1)
        assert v.sum().item() == a[key].sum()
    x[::10**20, ::-(10**20)] = -1
    b = a.copy()
    b[::10**20, ::-(10**20)] = -1
    assert_close(x, b)


TOO_BIG = {
    "empty": lambda: T.empty((2**40, 2**40)),
    "zeros": lambda: T.zeros(2**62),
    "ones": lambda: T.ones((0, 2**70)),
    "full": lambda: T.full((2**61, 4), 1.0),
    "arange": lambda: T.arange(1e300),
    "broadcast_to": lambda: T.broadcast_to(T.ones(1), (2**40, 2**40)),
    "expand": lambda: T.ones(1, dtype="int8").expand(2**62, 4),
    "as_strided": lambda: T.as_strided(T.ones(3), (2**62, 2**62), (0, 0)),
}


@on_devices
@pytest.mark.parametrize("name", list(TOO_BIG))
def test_huge_shapes_raise_value_error_naming_shape_and_bytes(name):
    """NumPy: "array is too big". These used to end in 'OverflowError: int too big to convert'
    from the allocator or a kernel, naming neither op nor size."""
    with pytest.raises(ValueError, match=rf"^{name}: array is too big: shape \(.*\) of \w+ needs \d.* bytes"):
        TOO_BIG[name]()
    assert T.ones(3).sum().item() == 3.0       # the library is still usable


def test_memory_error_for_a_size_that_fits_but_cannot_be_allocated():
    from tensor.memory import OutOfMemoryError
    with pytest.raises(OutOfMemoryError, match="out of memory on cpu: tried to allocate"):
        T.empty(2**60, dtype="int8")
    assert T.ones(3).sum().item() == 3.0


def test_set_memory_limit_argument_errors():
    before = T.memory_stats()["limit_bytes"]
    try:
        for bad in ("1GB", 1.5e9, True, [1]):
            with pytest.raises(TypeError, match=rf"set_memory_limit: the limit must be an int number of "
                                                 rf"bytes.*got {type(bad).__name__}"):
                T.set_memory_limit(bad)
        with pytest.raises(ValueError, match="set_memory_limit: the limit must be >= 0 bytes, got -1"):
            T.set_memory_limit(-1)
        assert T.memory_stats()["limit_bytes"] == before, "a refused limit was set"
        T.set_memory_limit(np.int64(1 << 40))
        assert T.memory_stats()["limit_bytes"] == 1 << 40
    finally:
        T.set_memory_limit(before)


def test_creation_docstring_examples():
    import doctest

    import tensor.creation as C
    r = doctest.testmod(C)
    assert r.failed == 0 and r.attempted > 0



# ---------------------------------------------------------------- NumPy's order of errors
# (found by tests/test_fuzz.py: with two things wrong, the error names the one NumPy names)

def test_a_read_only_destination_is_reported_before_a_bad_key():
    x = T.broadcast_to(T.zeros(1), (1,))
    with pytest.raises(ValueError, match="read-only"):
        x[5] = 1.0


def test_out_errors_come_in_numpys_order():
    ro = T.broadcast_to(T.zeros(1, dtype=T.bool), (3,))
    with pytest.raises(ValueError, match="read-only"):      # before the dtype
        T.add(T.ones(3, dtype=T.int64), 1, out=ro)
    with pytest.raises(TypeError, match="cast"):             # the dtype before the shape
        T.add(T.ones((2, 3), dtype=T.int64), T.ones((4, 1), dtype=T.int64), out=T.zeros(3, dtype=T.bool))
    with pytest.raises(OverflowError, match="-1 out of bounds for uint8"):   # the scalar first
        T.multiply(T.ones(5, dtype=T.uint8), -1, out=T.zeros((), dtype=T.uint8))
    with pytest.raises(TypeError, match="cast"):             # before the negative exponent
        T.power(T.ones(2, dtype=T.int8), -3, out=T.zeros(2, dtype=T.bool))
    with pytest.raises(OverflowError, match="-129 out of bounds for int8"):
        T.power(T.ones(2, dtype=T.int8), -129)


def test_out_may_have_a_shape_the_operands_broadcast_to():
    o = T.zeros((2, 3))
    T.add(T.ones(3), T.tensor(1.0), out=o)
    np.testing.assert_array_equal(o.numpy(), np.full((2, 3), 2.0))
    T.exp(T.zeros(3), out=o)
    np.testing.assert_array_equal(o.numpy(), np.ones((2, 3)))
    with pytest.raises(ValueError, match="cannot hold"):
        T.add(T.ones(3), 1.0, out=T.zeros((3, 2)))


def test_integer_negative_power_of_an_empty_tensor_is_empty(device):   # (the device fixture)
    assert T.power(T.zeros((0, 2), dtype=T.int64, device=device), -1).shape == (0, 2)
    assert T.power(T.zeros((0,), dtype=T.int64, device=device), T.tensor([-1], device=device)).shape == (0,)


def test_slice_assignment_drops_leading_size_one_dimensions_of_the_value():
    x = T.zeros((2, 2))
    x[:, :] = T.ones((1, 1, 2))
    np.testing.assert_array_equal(x.numpy(), np.ones((2, 2)))
    with pytest.raises(ValueError):
        x[:, :] = T.ones((2, 1, 2))


def test_thread_count_and_seeds_must_be_ints():
    """1.5 and '2' were turned into ints silently."""
    for bad in (1.5, "2"):
        with pytest.raises(TypeError, match="set_num_threads: need an int"):
            T.set_num_threads(bad)
        with pytest.raises(TypeError, match="manual_seed: the seed must be an int"):
            T.random.Generator(bad)
    assert T.random.Generator(-1).seed == 2**64 - 1   # a negative seed wraps, as PyTorch's
    assert T.random.Generator(np.int64(3)).seed == 3
