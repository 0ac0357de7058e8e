"""Compile CUDA kernel modules to CUBIN with NVRTC (no GPU or driver needed).

Modules are cached in memory and on disk like the CPU's (tensor/cpu/build.py): the same
per-user directory (mode 0700; ``STRIDEX_CACHE_DIR`` overrides it), file names carrying the
hash of (source, included headers, options, NVRTC version, arch), atomic writes and a sha256
check before a cached file is used. NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel (CUDA 13),
loaded by ``cuda.bindings``; kernels need no CUDA toolkit headers.
"""
from __future__ import annotations

import hashlib
import re
import threading
from functools import lru_cache
from pathlib import Path

from ..cpu.build import KernelCompileError, _included_text, _numbered, cache_dir, read_cached, write_cached
from ..device import DeviceError

__all__ = ["compile", "KernelCompileError", "NVRTCNotFoundError", "CUDA_SRC", "version", "options"]

CUDA_SRC = Path(__file__).resolve().parents[2] / "cuda_src"
if not CUDA_SRC.is_dir():  # installed wheel: cuda_src ships as the data package tensor/_cuda_src
    CUDA_SRC = Path(__file__).resolve().parents[1] / "_cuda_src"

_INSTALL = 'pip install "cuda-python>=13" "nvidia-cuda-nvrtc>=13"'


class NVRTCNotFoundError(DeviceError):
    """cuda-python or the NVRTC library is missing: CUDA kernels cannot be compiled."""


@lru_cache(maxsize=1)
def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise NVRTCNotFoundError(
            f"tensor: compiling CUDA kernels needs cuda-python's NVRTC bindings ({e}); "
            f"install them with: {_INSTALL}") from e
    try:  # locate libnvrtc from the nvidia wheel when cuda.pathfinder is there
        from cuda import pathfinder
        pathfinder.load_nvidia_dynamic_lib("nvrtc")
    except Exception:  # noqa: BLE001 - cuda.bindings searches on its own below
        pass
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as e:  # noqa: BLE001 - library not found / failed to load
        raise NVRTCNotFoundError(
            f"tensor: the NVRTC library (libnvrtc) could not be loaded ({e}); "
            f"install it with: {_INSTALL}") from e
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise NVRTCNotFoundError(f"tensor: nvrtcVersion failed ({err}); install: {_INSTALL}")
    return nvrtc, (major, minor)


def version() -> tuple[int, int]:
    """NVRTC's (major, minor) version; NVRTCNotFoundError if it is not installed."""
    return _nvrtc()[1]


@lru_cache(maxsize=1)
def supported_archs() -> tuple[int, ...]:
    """Compute capabilities NVRTC can build CUBIN for (e.g. (75, 80, ..., 90, 100, ...))."""
    nvrtc, _ = _nvrtc()
    try:
        err, archs = nvrtc.nvrtcGetSupportedArchs()
    except Exception:  # noqa: BLE001 - an NVRTC without the query
        return ()
    return tuple(int(a) for a in archs) if err == nvrtc.nvrtcResult.NVRTC_SUCCESS else ()


def options(arch: str, fast: bool = False) -> list[str]:
    """NVRTC options; fast: --Ofast-compile=max (NVRTC >= 12.8), for compile checks only: the
    CUBIN is slower, but front end and ptxas still see every line, inline PTX included."""
    if not re.fullmatch(r"(sm|compute)_\d+[af]?", arch):
        raise ValueError(f"nvrtc: arch must look like 'sm_90' or 'compute_90', got {arch!r}")
    opts = [f"--gpu-architecture={arch}", "-std=c++17", f"--include-path={CUDA_SRC}",
            "-default-device"]
    if fast and version() >= (12, 8):
        opts.append("--Ofast-compile=max")
    return opts


def _check(nvrtc, res, what: str) -> None:
    if res[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtc: {what} failed: {res[0]}")


def _nvrtc_compile(name: str, source: str, opts: list[str]) -> bytes:
    nvrtc, _ = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
    _check(nvrtc, (err,), "nvrtcCreateProgram")
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, n = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * n
            nvrtc.nvrtcGetProgramLog(prog, log)
            log = log.rstrip(b"\0 ").decode(errors="replace")
            raise KernelCompileError(
                f"tensor: CUDA kernel module {name!r} failed to compile with NVRTC "
                f"({err.name})\noptions: {' '.join(opts)}\n--- NVRTC log ---\n{log}\n"
                f"--- source ---\n{_numbered(source)}")
        res = nvrtc.nvrtcGetCUBINSize(prog)
        _check(nvrtc, res, "nvrtcGetCUBINSize")
        cubin = b" " * res[1]
        _check(nvrtc, nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        return bytes(cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


_lock = threading.Lock()
_cubins: dict[str, bytes] = {}
_key_locks: dict[str, threading.Lock] = {}


def cache_key(source: str, arch: str, fast: bool = False) -> str:
    major, minor = version()
    return hashlib.sha256("\0".join(
        [source, _included_text(source), " ".join(options(arch, fast)), f"nvrtc {major}.{minor}",
         arch]).encode()).hexdigest()[:24]


def compile(name: str, source: str, arch: str = "sm_90", fast: bool = False) -> bytes:  # noqa: A001
    """CUBIN bytes of a kernel module for `arch`, from the memory or disk cache or NVRTC
    (fast: a quicker, less optimised build for compile checks; see options).

    Raises KernelCompileError (kernel name, NVRTC log, numbered source) on a source error and
    NVRTCNotFoundError when cuda-python / NVRTC is not installed."""
    opts = options(arch, fast)
    key = cache_key(source, arch, fast)
    mem_key = f"{name}-{arch}-{key}"
    cubin = _cubins.get(mem_key)
    if cubin is not None:
        return cubin
    with _lock:
        klock = _key_locks.setdefault(mem_key, threading.Lock())
    with klock:  # one compile per module at a time; different modules compile in parallel
        cubin = _cubins.get(mem_key)
        if cubin is not None:
            return cubin
        path = cache_dir() / f"cuda_{mem_key}.cubin"
        cubin = read_cached(path)
        if cubin is None:
            cubin = _nvrtc_compile(name, source, opts)
            try:
                write_cached(path, cubin)
            except OSError:
                pass  # a read-only cache only costs recompiles
        _cubins[mem_key] = cubin
        return cubin
