"""The C kernels under AddressSanitizer and UndefinedBehaviorSanitizer.

STRIDEX_SANITIZE=address,undefined builds the CPU kernels with both sanitizers (their own cache
key, -O0 -g) and makes the CPU allocator poison every byte no live tensor owns, so a kernel that
reads or writes outside its tensors aborts with a report instead of corrupting memory. Python is
not built with ASan, so its runtime is preloaded (LD_PRELOAD). This file runs, in a subprocess
so configured, a planted out-of-bounds read (it must be caught) and the indexing, scatter,
gemm, reduction, aliasing and fuzz tests on the CPU (they must pass clean). Skipped where gcc
has no ASan runtime, and inside such a run itself.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SELECTION = ["tests/test_indexing.py", "tests/test_linalg.py", "tests/test_reductions.py",
             "tests/test_aliasing.py"] + sorted(
    str(Path(p).relative_to(ROOT)) for p in glob.glob(str(ROOT / "tests" / "test_fuzz*.py")))


def _gcc_lib(name: str) -> str | None:
    cc = shutil.which("gcc")
    if cc is None or not sys.platform.startswith("linux"):
        return None
    path = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True,
                          text=True).stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


ASAN = _gcc_lib("libasan.so")
# C++ libraries loaded after ASan (torch's) abort on their first exception ("CHECK failed ...
# real___cxa_throw"): ASan resolves its __cxa_throw interceptor at start-up, so libstdc++ must be
# loaded then too (a test comparing with torch would otherwise take the whole run down)
CXX = _gcc_lib("libstdc++.so.6")
pytestmark = [
    pytest.mark.skipif(ASAN is None, reason="gcc's AddressSanitizer runtime (libasan) is not installed"),
    pytest.mark.skipif(bool(os.environ.get("STRIDEX_SANITIZE")), reason="already a sanitizer run"),
]


def _env() -> dict:
    env = dict(os.environ, LD_PRELOAD=":".join(p for p in (ASAN, CXX) if p),
               STRIDEX_SANITIZE="address,undefined",
               # Python leaks by design; an allocation ASan cannot serve returns NULL, as libc's does
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:allocator_may_return_null=1",
               UBSAN_OPTIONS="print_stacktrace=1", STRIDEX_CUDA_EMULATOR="0", CI="1",
               HYPOTHESIS_PROFILE="sanitize")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + env.get("PYTHONPATH", "").split(os.pathsep))
    return env


_PLANTED = """
import tensor as T
from tensor import dtypes as dt
from tensor.cpu import kernels as K
from tensor.cpu.launch import meta_array
x, y, out = (T.ones(100, dtype="float32") for _ in range(3))
n = int(__import__("sys").argv[1])     # 101: one element past the end of every operand
K.kernel("ew", dt.float32, "add_f32")(1, meta_array([n, 4, 4, 4]), out.data_ptr(), x.data_ptr(),
                                      y.data_ptr(), 1)
print("finished", out[:3].tolist())
"""


@pytest.mark.parametrize("n,caught", [(100, False), (101, True)], ids=["in-bounds", "one-past"])
def test_an_out_of_bounds_read_is_caught(n, caught):
    r = subprocess.run([sys.executable, "-c", _PLANTED, str(n)], env=_env(), cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    if caught:
        assert r.returncode != 0 and "AddressSanitizer" in r.stderr, r.stderr[-2000:]
        assert "READ of size 4" in r.stderr and "add_f32" in r.stderr
    else:
        assert r.returncode == 0 and "finished [2.0, 2.0, 2.0]" in r.stdout, r.stderr[-2000:]


_HUGE = """
import tensor as T
from tensor.memory import OutOfMemoryError
try:
    T.empty(2**60, dtype="int8")
except OutOfMemoryError as e:
    print("raised:", e)
print("after:", T.ones(3).sum().item())
"""


def test_an_allocation_asan_cannot_serve_raises_out_of_memory():
    """Without allocator_may_return_null=1, ASan aborted the whole run at the first request
    it could not serve (tests/test_input_validation.py asks for 2**60 bytes)."""
    r = subprocess.run([sys.executable, "-c", _HUGE], env=_env(), cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "raised: memory: out of memory on cpu: tried to allocate" in r.stdout
    assert "after: 3.0" in r.stdout


_TORCH_RAISES = """
import torch
try:
    torch.ones(2).reshape(3)
except RuntimeError:
    print("caught")
"""


def test_a_cxx_exception_in_a_torch_comparison_does_not_abort_the_run():
    """With libasan alone preloaded, torch's first C++ exception aborted the process ("CHECK
    failed: asan_interceptors.cpp ... real___cxa_throw"): preloading libstdc++ with it fixes it."""
    pytest.importorskip("torch")
    r = subprocess.run([sys.executable, "-c", _TORCH_RAISES], env=_env(), cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "caught" in r.stdout, r.stderr[-2000:]


def test_address_sanitizer_mode_requires_allocator_may_return_null(monkeypatch):
    from tensor.cpu import build
    monkeypatch.setattr(build, "asan_loaded", lambda: True)
    monkeypatch.setenv("STRIDEX_SANITIZE", "address,undefined")
    for opts in ("", "detect_leaks=0", "detect_leaks=0:allocator_may_return_null=0"):
        monkeypatch.setenv("ASAN_OPTIONS", opts)
        with pytest.raises(RuntimeError, match="allocator_may_return_null=1 in ASAN_OPTIONS"):
            build.sanitizers()
    for opts in ("allocator_may_return_null=1", "detect_leaks=0:allocator_may_return_null=1:x=2",
                 "detect_leaks=0,allocator_may_return_null=true"):
        monkeypatch.setenv("ASAN_OPTIONS", opts)
        assert build.sanitizers() == ("address", "undefined")
    monkeypatch.setenv("STRIDEX_SANITIZE", "undefined")
    monkeypatch.setenv("ASAN_OPTIONS", "")
    assert build.sanitizers() == ("undefined",)


def test_kernel_tests_pass_clean_under_sanitizers():
    """The selection in two pytest processes at once (the suite runs on one core otherwise)."""
    halves = [SELECTION[:1], SELECTION[1:]]   # test_indexing.py takes about as long as the rest
    procs = [subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                               "-k", "not cuda", *files], env=_env(), cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for files in halves]
    try:
        outs = [p.communicate(timeout=900)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-5000:]
        assert "AddressSanitizer" not in out and "runtime error" not in out, out[-5000:]
        assert " passed" in out
