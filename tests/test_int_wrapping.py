"""Integer overflow wraps, as NumPy's, on both devices: the CUDA kernels' C++ (NVRTC; g++ under
the emulator) leaves signed overflow undefined, so + - * and unary - of signed ints, left
shifts of negative values and the integer sums / products go through unsigned arithmetic
(cuda_src/scalar/types.h sx_wadd ...). The second test builds the emulator's kernels without
-fwrapv and under UndefinedBehaviorSanitizer, trapping on any signed overflow: before the
change, add / subtract / multiply / negative / abs / square / floor_divide by -1 / left_shift
and sum / prod / cumsum / index_add / segment_sum of int32 and int64 extremes all overflowed there."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECKS = r'''
import warnings
import numpy as np
import tensor as T


def edge(dtype):
    info = np.iinfo(dtype)
    vals = [info.min, info.max, -1, 0, 1, info.min + 1, info.max - 1, 3, -7]
    return np.array([v % (1 << info.bits) for v in vals], np.uint64).astype(dtype)  # -1 wraps


def run(device, dtypes):
    warnings.simplefilter("ignore")
    bad = []
    for name in dtypes:
        a = edge(name)
        b = a[::-1].copy()
        x, y = T.asarray(a, device=device), T.asarray(b, device=device)

        def same(what, got, want):
            if not np.array_equal(np.asarray(got.to("cpu").numpy()), want):
                bad.append(f"{what} {name} {device}: {got.to('cpu').numpy()} != {want}")
        with np.errstate(all="ignore"):
            for op in ("add", "subtract", "multiply", "floor_divide", "remainder"):
                same(op, getattr(T, op)(x, y), getattr(np, op)(a, b))
            if a.dtype.kind == "i":
                same("floor_divide by -1", T.floor_divide(x, T.full_like(x, -1)), a // a.dtype.type(-1))
            for op in ("negative", "abs", "square"):
                same(op, getattr(T, op)(x), getattr(np, op)(a))
            sh = np.arange(a.size, dtype=a.dtype) % (8 * a.itemsize)
            same("left_shift", T.left_shift(x, T.asarray(sh, device=device)), np.left_shift(a, sh))
            same("sum", T.sum(x), np.sum(a))
            same("prod", T.prod(x), np.prod(a))
            same("cumsum", T.cumsum(x, 0), np.cumsum(a))
            same("cumprod", T.cumprod(x, 0), np.cumprod(a))
            idx = np.arange(a.size) % 2
            want = np.zeros(2, a.dtype)
            np.add.at(want, idx, a)
            got = T.zeros(2, dtype=x.dtype, device=device)
            got.index_add_(0, T.asarray(idx, device=device), x)
            same("index_add", got, want)
            seg = T.asarray(np.arange(a.size) * 2 // a.size, device=device)   # two sorted runs
            starts = [0, a.size // 2 + 1]
            same("segment_sum", T.segment_sum(x, seg, 2), np.add.reduceat(a, starts, dtype=a.dtype))
            same("segment_prod", T.segment_prod(x, seg, 2),
                 np.multiply.reduceat(a, starts, dtype=a.dtype))
    return bad
'''


def _namespace() -> dict:
    ns: dict = {}
    exec(compile(CHECKS, "int_wrapping_checks", "exec"), ns)
    return ns


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                   "uint64"])
def test_integer_overflow_wraps_as_numpy(device, dtype):
    with warnings.catch_warnings():
        assert _namespace()["run"](device, [dtype]) == []


def _ubsan() -> bool:
    gxx = shutil.which("g++")
    if gxx is None:
        return False
    path = subprocess.run([gxx, "-print-file-name=libubsan.so"], capture_output=True,
                          text=True).stdout.strip()
    return os.path.isabs(path) and os.path.exists(path)


@pytest.mark.skipif(not _ubsan(), reason="g++'s UndefinedBehaviorSanitizer runtime is not installed")
def test_cuda_kernels_have_no_signed_overflow(tmp_path):
    """The emulator's kernels built with -fno-wrapv (C++'s own rule, NVRTC's) and
    -fsanitize=signed-integer-overflow,shift, trapping at the first undefined operation."""
    script = CHECKS + "\nbad = run('cuda', ['int32', 'int64'])\nprint('BAD', bad)\n"
    env = dict(os.environ, STRIDEX_CUDA_EMULATOR="1", STRIDEX_CACHE_DIR=str(tmp_path / "cache"),
               STRIDEX_EMU_CXXFLAGS="-O0 -fno-wrapv -fsanitize=signed-integer-overflow,shift "
                                    "-fno-sanitize-recover=all",
               PYTHONPATH=os.pathsep.join([str(ROOT)] + os.environ.get("PYTHONPATH", "").split(
                   os.pathsep)))
    r = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and "runtime error" not in r.stderr, r.stderr[-4000:]
    assert "BAD []" in r.stdout, r.stdout[-4000:]
