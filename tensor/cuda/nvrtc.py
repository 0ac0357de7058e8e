"""Compile CUDA kernel sources with NVRTC (no GPU or driver needed): CUBIN for an `sm_XY`
target, PTX for a `compute_XY` one (a device newer than NVRTC knows; see runtime.arch).

Images are cached in memory and on disk by tensor/kernel_cache.py, as the CPU's modules: the
same per-user directory (mode 0700; ``STRIDEX_CACHE_DIR`` overrides it), file names carrying
the hash of (source, included headers, options, NVRTC version, arch), atomic writes and a
sha256 check before a cached file is used; an empty image is never used. NVRTC comes from
the ``nvidia-cuda-nvrtc`` wheel (CUDA 13), loaded by ``cuda.bindings``; kernels need no CUDA
toolkit headers. A compile that runs over a second says on stderr what it compiles (the first
use of a kernel; `tensor.cuda.precompile` builds many ahead, in parallel).
"""
from __future__ import annotations

import re
import sys
import threading
from functools import lru_cache

from .. import kernel_cache as kc
from ..cpu.build import KernelCompileError
from ..device import DeviceError

__all__ = ["compile", "KernelCompileError", "NVRTCNotFoundError", "CUDA_SRC", "version", "options"]

CUDA_SRC = kc.CUDA_SRC

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


def target(cc: tuple[int, int]) -> str:
    """The target for a device of compute capability cc: CUBIN for it (sm_XY), or PTX of the
    newest arch NVRTC knows (compute_XY) when the device is newer than this NVRTC."""
    c = cc[0] * 10 + cc[1]
    known = supported_archs()
    if not known or c in known:
        return f"sm_{c}"
    older = [a for a in known if a <= c]
    return f"compute_{max(older)}" if older else f"sm_{c}"


def options(arch: str, fast: bool = False, fmad: bool = True) -> list[str]:
    """NVRTC options; fast: --Ofast-compile=max (NVRTC >= 12.8), for compile checks only: the
    CUBIN is slower, but front end and ptxas still see every line, inline PTX included.
    fmad=False: no a * b + c contracted into an FMA (explicit fma() calls stay fused), for
    kernel families whose float results must equal the CPU's bit for bit (the C kernels and
    the emulator's g++ do not contract)."""
    if not re.fullmatch(r"(sm|compute)_\d+[af]?", arch):
        raise ValueError(f"nvrtc: arch must look like 'sm_90' or 'compute_90', got {arch!r}")
    opts = [f"--gpu-architecture={arch}", "-std=c++17", f"--include-path={CUDA_SRC}",
            "-default-device"]
    if fast and version() >= (12, 8):
        opts.append("--Ofast-compile=max")
    if not fmad:
        opts.append("--fmad=false")
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
                f"--- source ---\n{kc.numbered(source)}")
        ptx = is_ptx_target(opts)
        kind, get_size, get = (("PTX", nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX) if ptx else
                               ("CUBIN", nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN))
        res = get_size(prog)
        _check(nvrtc, res, f"nvrtcGet{kind}Size")
        image = b" " * res[1]
        _check(nvrtc, get(prog, image), f"nvrtcGet{kind}")
        if not image.rstrip(b"\0 "):
            raise KernelCompileError(f"tensor: NVRTC returned an empty {kind} image for CUDA "
                                     f"kernel module {name!r} (options: {' '.join(opts)})")
        return bytes(image)   # PTX keeps its terminating NUL: cuModuleLoadData needs it
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def is_ptx_target(opts: list[str]) -> bool:
    return any(o.startswith("--gpu-architecture=compute_") for o in opts)


_images = kc.Memo("nvrtc")


def cache_key(source: str, arch: str, fast: bool = False, fmad: bool = True) -> str:
    major, minor = version()
    return kc.key(source, kc.included_text(source), " ".join(options(arch, fast, fmad)),
                  f"nvrtc {major}.{minor}", arch)


SLOW_NOTICE_S = 1.0   # a compile still running after this long says what it compiles
_quiet = threading.local()


def _notice(name: str, arch: str) -> threading.Timer | None:
    if getattr(_quiet, "on", False):
        return None
    t = threading.Timer(SLOW_NOTICE_S, lambda: print(
        f"tensor: NVRTC is compiling CUDA {name} for {arch} (a kernel's first use; cached "
        "afterwards; tensor.cuda.precompile() builds kernels ahead)", file=sys.stderr, flush=True))
    t.daemon = True
    t.start()
    return t


def compile(name: str, source: str, arch: str = "sm_90", fast: bool = False,  # noqa: A001
            fmad: bool = True) -> bytes:
    """The image of a kernel module for `arch` (CUBIN; PTX for a compute_XY arch), from the
    memory or disk cache or NVRTC (fast: a quicker, less optimised build for compile checks;
    fmad: see options).

    Raises KernelCompileError (kernel name, NVRTC log, numbered source) on a source error and
    NVRTCNotFoundError when cuda-python / NVRTC is not installed."""
    opts = options(arch, fast, fmad)
    mem_key = f"{name}-{arch}-{cache_key(source, arch, fast, fmad)}"

    def make() -> bytes:   # one compile per unit at a time, others in parallel
        path = kc.cache_dir() / f"cuda_{mem_key}.{'ptx' if is_ptx_target(opts) else 'cubin'}"
        return kc.fetch(path, lambda: _timed_compile(name, source, opts, arch), must_store=False)
    return _images.get_or_make(mem_key, make)


def _timed_compile(name: str, source: str, opts: list[str], arch: str) -> bytes:
    timer = _notice(name, arch)
    try:
        return _nvrtc_compile(name, source, opts)
    finally:
        if timer is not None:
            timer.cancel()
