"""Every user mistake of the spec raises the right exception type with a message that names
what went wrong (op, shapes, dtypes, axes, bytes), before any memory is touched, and leaves
the library usable."""
from __future__ import annotations

import gc
import re
import shutil

import numpy as np
import pytest

import tensor as T
from tensor.cpu import build
from tensor.cpu.alloc import cpu_allocator
from tensor.memory import OutOfMemoryError

pytestmark = pytest.mark.usefixtures("device")

# ---------------------------------------------------------------- shapes

def test_broadcast_mismatch_names_both_shapes():
    with pytest.raises(ValueError) as e:
        T.ones(2, 3) + T.ones(4)
    assert "(2, 3)" in str(e.value) and "(4,)" in str(e.value)
    with pytest.raises(ValueError) as e:
        T.where(T.ones(2, 1, dtype="bool"), T.ones(3, 5), T.ones(4))
    assert "(3, 5)" in str(e.value) and "(4,)" in str(e.value)
    with pytest.raises(ValueError) as e:
        T.ones(2, 3).broadcast_to((3, 3))
    assert "(2, 3)" in str(e.value) and "(3, 3)" in str(e.value)


def test_broadcast_mismatch_names_the_op():
    # DESIGN.md, Errors: "the message names the op and the shapes"
    with pytest.raises(ValueError) as e:
        T.ones(2, 3) * T.ones(4)
    assert "multiply" in str(e.value), str(e.value)


def test_in_place_op_cannot_broadcast_its_output():
    x = T.ones(3)
    with pytest.raises(ValueError) as e:
        x += T.ones(2, 3)
    assert "(3,)" in str(e.value) and "(2, 3)" in str(e.value)
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_reshape_size_mismatch():
    with pytest.raises(ValueError) as e:
        T.ones(2, 3).reshape(4, 2)
    msg = str(e.value)
    assert "reshape" in msg and "(2, 3)" in msg and "(4, 2)" in msg


def test_impossible_view_suggests_reshape_or_contiguous():
    x = T.arange(6).reshape(2, 3).T
    with pytest.raises(ValueError) as e:
        x.view(6)
    msg = str(e.value)
    assert "view" in msg and "(3, 2)" in msg and "reshape" in msg and "contiguous" in msg
    assert x.reshape(6).tolist() == [0, 3, 1, 4, 2, 5]  # what the message suggests works
    assert x.contiguous().view(6).tolist() == [0, 3, 1, 4, 2, 5]


# ---------------------------------------------------------------- axes

def _axis_error(fn, axis, rank, op=None):
    with pytest.raises((ValueError, IndexError)) as e:
        fn()
    msg = str(e.value)
    assert f"axis {axis}" in msg and f"rank {rank}" in msg, msg
    if op:
        assert op in msg, msg
    return e.value


@pytest.mark.parametrize("op", ["sum", "prod", "mean", "var", "std", "max", "min", "any", "all",
                                "logsumexp"])
def test_bad_axis_in_reductions(op):
    x = T.ones(2, 3)
    err = _axis_error(lambda: getattr(T, op)(x, axis=2), 2, 2, op)
    assert isinstance(err, ValueError) and isinstance(err, IndexError)  # NumPy's AxisError is both
    _axis_error(lambda: getattr(T, op)(x, axis=(0, -3)), -3, 2, op)


def test_bad_axis_in_arg_reductions_and_scans():
    x = T.ones(2, 3)
    _axis_error(lambda: x.argmax(axis=2), 2, 2, "argmax")
    _axis_error(lambda: T.argmin(x, dim=-3), -3, 2, "argmin")
    _axis_error(lambda: x.cumsum(axis=5), 5, 2, "cumsum")
    _axis_error(lambda: T.cumprod(T.tensor(1.0), axis=0), 0, 0, "cumprod")
    with pytest.raises(ValueError, match="repeated axis"):
        x.sum(axis=(1, -1))


def test_bad_axis_in_views():
    x = T.ones(2, 3)
    _axis_error(lambda: x.transpose(0, 5), 5, 2)
    _axis_error(lambda: x.swapaxes(0, -3), -3, 2, "swapaxes")
    _axis_error(lambda: x.unsqueeze(4), 4, 3)
    _axis_error(lambda: x.squeeze(3), 3, 2, "squeeze")
    _axis_error(lambda: T.flip(x, 2), 2, 2, "flip")
    _axis_error(lambda: T.moveaxis(x, 0, 2), 2, 2, "moveaxis")


def test_squeeze_of_a_dimension_that_is_not_one():
    x = T.ones(2, 1, 3)
    with pytest.raises(ValueError) as e:
        x.squeeze(0)
    msg = str(e.value)
    assert "squeeze" in msg and "axis 0" in msg and "size 2" in msg and "(2, 1, 3)" in msg
    assert x.squeeze(1).shape == (2, 3)


# ---------------------------------------------------------------- dtypes

def test_bitwise_on_floats_names_op_and_dtype():
    with pytest.raises(TypeError) as e:
        T.bitwise_and(T.ones(3), T.ones(3))
    assert "bitwise_and" in str(e.value) and "float64" in str(e.value)
    with pytest.raises(TypeError) as e:
        T.ones(3, dtype="float32") | 1
    assert "bitwise_or" in str(e.value) and "float32" in str(e.value)
    with pytest.raises(TypeError) as e:
        T.left_shift(T.ones(2, dtype="float16"), 1)
    assert "left_shift" in str(e.value) and "float16" in str(e.value)
    with pytest.raises(TypeError) as e:
        ~T.ones(2, dtype="bfloat16")
    assert "bitwise_not" in str(e.value) and "bfloat16" in str(e.value)


@pytest.mark.parametrize("name", ["complex256", "float128", "object", "U3"])
def test_unsupported_dtype_is_named(name):
    with pytest.raises(TypeError) as e:
        T.dtypes.dtype(name)
    assert name in str(e.value) and "float32" in str(e.value)  # the supported list
    with pytest.raises(TypeError):
        T.zeros(2, dtype=name)


# ---------------------------------------------------------------- indexing

def test_out_of_range_index_raises_before_touching_memory():
    x = T.tensor([1, 2, 3])
    with pytest.raises(IndexError) as e:
        x[5]
    assert "5" in str(e.value) and "size 3" in str(e.value)
    with pytest.raises(IndexError):
        x[-4]
    with pytest.raises(IndexError):
        x[5] = 1
    assert x.tolist() == [1, 2, 3]
    m = T.zeros(2, 3)
    with pytest.raises(IndexError) as e:
        m[1, 3] = 7.0
    assert "axis 1" in str(e.value)
    with pytest.raises(IndexError) as e:
        m[0, 0, 0] = 1.0
    assert "too many indices" in str(e.value)
    assert m.tolist() == [[0.0] * 3] * 2
    assert x[-3].item() == 1 and x[2].item() == 3  # the edges are fine


def test_bad_reductions_inputs():
    with pytest.raises(ValueError, match="max"):
        T.zeros(0).max()
    with pytest.raises(ValueError, match="argmax"):
        T.zeros(2, 0).argmax()
    with pytest.raises(ValueError, match="item"):
        T.ones(2).item()
    with pytest.raises(ValueError, match="matmul"):
        T.ones(3) @ T.ones(4)


# ---------------------------------------------------------------- memory

def test_allocation_over_the_limit_raises_out_of_memory_and_leaks_nothing(device):
    alloc = cpu_allocator() if device == "cpu" else T.cuda.runtime.device_state(0).allocator
    old_limit = alloc.memory_stats()["limit_bytes"]
    gc.collect()
    alloc.empty_cache()   # a cached free block of 64 MiB (an earlier test's) would serve the request
    before = alloc.memory_allocated()
    keep = T.ones(1000)  # something live while the limit is hit
    nbytes = 64 << 20
    try:
        alloc.set_limit(alloc.memory_reserved() + (8 << 20))
        with pytest.raises(OutOfMemoryError) as e:
            T.empty(nbytes // 4, dtype="float32")
        msg = str(e.value)
        assert isinstance(e.value, MemoryError)
        assert f"{nbytes} bytes" in msg and "64.00 MiB" in msg
        assert re.search(r"[\d.]+ (B|KiB|MiB|GiB) allocated", msg), msg
        assert re.search(r"[\d.]+ (B|KiB|MiB|GiB) reserved", msg), msg
        assert "limit" in msg and f"out of memory on {T.device(device)}" in msg
        if device != "cpu":
            assert "device total" in msg
        assert alloc.memory_allocated() == before + 8192  # only `keep`
        small = T.ones(10)  # small requests under the limit still work
        assert small.sum().item() == 10.0
        del small
    finally:
        alloc.set_limit(old_limit)
    assert alloc.memory_stats()["limit_bytes"] == old_limit
    big = T.empty(nbytes // 4, dtype="float32")  # the same request succeeds without the limit
    big.fill_(2.0)
    assert big[-1].item() == 2.0
    del big, keep
    gc.collect()
    assert alloc.memory_allocated() == before


# ---------------------------------------------------------------- compiler

def test_failed_compile_gives_log_and_numbered_source():
    with pytest.raises(build.KernelCompileError) as e:
        build.load("bad_mod", "int f( {", "int f(void);")
    msg = str(e.value)
    assert "bad_mod" in msg
    assert "compiler log" in msg and "error" in msg.lower()
    assert re.search(r"^\s+1  int f\( \{$", msg, re.M), msg  # numbered source
    # the library keeps working afterwards
    assert (T.arange(4) * 2).sum().item() == 12


@pytest.fixture
def fresh_compiler(monkeypatch):
    """Clear the compiler caches; restore the environment and the caches afterwards."""
    build.compiler.cache_clear()
    build._toolchain_id.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    build.compiler.cache_clear()
    build._toolchain_id.cache_clear()


def test_missing_compiler_on_path(fresh_compiler):
    fresh_compiler.delenv("CC", raising=False)
    fresh_compiler.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(build.CompilerNotFoundError) as e:
        build.load("never_built", "int g(void) { return 1; }", "int g(void);")
    assert "no C compiler" in str(e.value) and "CC" in str(e.value)


def test_compiler_path_that_does_not_exist(fresh_compiler):
    fresh_compiler.setenv("CC", "/nonexistent/bin/cc")
    with pytest.raises(build.CompilerNotFoundError) as e:
        build.load("never_built", "int g(void) { return 1; }", "int g(void);")
    assert "/nonexistent/bin/cc" in str(e.value)


def test_library_usable_after_compiler_errors():
    # runs after the two tests above: the restored toolchain finds the cached modules
    assert build.compiler()
    x = T.tensor(np.arange(6.0)).reshape(2, 3)
    assert (x @ x.T).tolist() == [[5.0, 14.0], [14.0, 50.0]]
