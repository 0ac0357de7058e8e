"""pytest configuration shared by every test file: hypothesis profiles.

- "ci": loaded when the CI environment variable is set. Few examples per test, no deadline
  (the first call of a dtype compiles its kernel module: ~1-4 s on a cold cache), derandomized
  so a CI run is reproducible, and the health checks that small CI machines trip on suppressed.
  Sized so that the property tests stay well within the suite's time budget on two cores.
- "dev": everywhere else; more examples, random seeds, hypothesis' example database.
- "sanitize": CI's, with half the examples, for the kernel tests under AddressSanitizer
  (tests/test_sanitizers.py; the kernels are built at -O0 there).
- "fuzz": long runs of the fuzzers (tests/test_fuzz.py, tests/test_fuzz_autograd.py), about an
  hour on two cores.

Pick one explicitly with `pytest --hypothesis-profile=dev` (or HYPOTHESIS_PROFILE=...).

Devices: the `device` fixture runs a test on "cpu" and on "cuda". "cuda" is a real GPU when one
is present; without one it is the CPU emulator of the CUDA backend (tensor/cuda/emulator:
the same CUDA kernels compiled with g++ and run thread by thread), unless
STRIDEX_CUDA_EMULATOR=0 or g++ is missing, and then the cuda cases are skipped with the reason.
The fixture also sets helpers.DEVICE (helpers.make_tensor builds there) and the library's
default device (T.set_default_device), so T.zeros/asarray/tensor/... in a test build on it.
Test modules opt in with `pytestmark = pytest.mark.usefixtures("device")`.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# tests/ on sys.path so test files can `from helpers import ...` whatever the import mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
             HealthCheck.function_scoped_fixture]

settings.register_profile("ci", max_examples=20, deadline=None, derandomize=True,
                          suppress_health_check=_SUPPRESS, print_blob=True, database=None)
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=_SUPPRESS)
# the kernel tests under AddressSanitizer (tests/test_sanitizers.py): half of CI's examples, at -O0
settings.register_profile("sanitize", max_examples=10, deadline=None, derandomize=True,
                          suppress_health_check=_SUPPRESS, print_blob=True, database=None)
# the fuzzers (tests/test_fuzz*.py) for about an hour: `pytest tests/test_fuzz*.py
# --hypothesis-profile=fuzz` (the other property tests run far more examples too)
settings.register_profile("fuzz", max_examples=4000, stateful_step_count=80, deadline=None,
                          suppress_health_check=_SUPPRESS, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI") else "dev"))


# ---------------------------------------------------------------- devices

from tensor.cuda import runtime as _cuda_runtime  # noqa: E402  (loads no driver by itself)


def _cuda_status() -> tuple[bool, str]:
    """(usable, what): a real GPU, else the emulator when allowed, else why not."""
    env = os.environ.get("STRIDEX_CUDA_EMULATOR")
    if _cuda_runtime.emulated():
        return True, "CUDA emulator (CPU)"
    if _cuda_runtime.device_count() > 0:
        return True, _cuda_runtime.device_state(0).name
    why = _cuda_runtime.unavailable_reason()
    if env == "0":
        return False, f"no GPU ({why}); the emulator is off (STRIDEX_CUDA_EMULATOR=0)"
    import shutil
    if shutil.which("g++") is None:
        return False, f"no GPU ({why}) and no g++ for the CUDA emulator"
    _cuda_runtime.use_emulator()
    return True, "CUDA emulator (CPU)"


CUDA_OK, CUDA_WHAT = _cuda_status()


def _warm_emulator() -> None:
    """Build every emulator module on a background thread (g++ runs as a subprocess, so this
    uses an otherwise idle core while the first tests run); a test that needs a module first
    waits on the same per-module lock instead of compiling it twice."""
    import threading

    def run():
        from tensor.cuda import kernels as CK
        from tensor.cuda import toolchain
        for fam, d in CK.all_modules():
            try:
                toolchain.EMULATOR.compile(fam, d, None, None)   # (as a first use builds it)
            except Exception:  # noqa: BLE001 - the test that uses the module reports it
                pass

    threading.Thread(target=run, name="emulator-warmup", daemon=True).start()


if CUDA_OK and _cuda_runtime.emulated():
    _warm_emulator()


def _warm_cpu() -> None:
    """Build the largest C kernel modules on a background thread (gcc runs as a subprocess):
    a cold run otherwise compiles each at its first use with one core busy and the other idle
    (gemm ~17 s, an ew module 5-7 s, a red module 2-4 s: ~3 minutes in all on two cores).
    A test that needs a module first waits on its lock (tensor.kernel_cache.Memo)."""
    import threading

    def run():
        from tensor import dtypes as dt
        from tensor.cpu import kernels as K
        floats = [dt.float32, dt.float64, dt.float16, dt.bfloat16]
        jobs = [("gemm", None)] + [("ew", d) for d in (dt.float32, dt.float64, dt.int64, dt.bool_)]
        jobs += [("red", d) for d in (dt.float32, dt.float64, dt.int64, dt.bool_)]
        jobs += [("ew", d) for d in dt.ALL] + [("red", d) for d in dt.ALL if d.kind != "c"]
        jobs += [(f, d) for f in ("linalg", "linalg_eig") for d in (dt.float64, dt.complex128)]
        jobs += [(f, d) for f in ("nn_rows", "nn_attn") for d in floats] + [("index", None)]
        seen = set()
        for job in jobs:
            if job not in seen:
                seen.add(job)
                try:
                    K.modules(*job)
                except Exception:  # noqa: BLE001 - the test that uses the module reports it
                    pass

    threading.Thread(target=run, name="cpu-kernel-warmup", daemon=True).start()


# a cold CI run (locally the disk cache is warm after the first run), not a sanitizer run's
# subprocess (tests/test_sanitizers.py: its own builds, of the modules its selection uses only)
if os.environ.get("CI") and not os.environ.get("STRIDEX_SANITIZE"):
    _warm_cpu()


def pytest_report_header(config):
    return f"stridex cuda device: {CUDA_WHAT if CUDA_OK else 'none: ' + CUDA_WHAT}"


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """The device a test runs on (see the module docstring)."""
    import helpers
    if request.param == "cuda" and not CUDA_OK:
        pytest.skip(f"cuda: {CUDA_WHAT}")
    import tensor as T
    helpers.DEVICE = request.param
    T.set_default_device(request.param)
    try:
        yield request.param
    finally:
        helpers.DEVICE = "cpu"
        T.set_default_device("cpu")


@pytest.fixture(autouse=True)
def _gpu_index_errors_reported():
    """A bad index a test leaves on a GPU raises at the next synchronization, which would be
    another test's (tensor/cuda/checks.py): each test's own are read at its end, and one left
    unreported fails the test that made it."""
    yield
    import helpers
    try:
        helpers.synced()
    except IndexError as e:
        pytest.fail(f"a bad index found on the GPU was never reported in the test: {e}")
