"""CPU emulator of the CUDA backend: kernels compiled with g++ and run thread by thread.

`compile(name, source)` builds a CUDA module source (unchanged: dialect.h is force-included;
it maps the CUDA device dialect to C++17 and includes scheduler.h, the fiber scheduler) into a
shared library and returns an *image* that `driver.cuModuleLoadData` accepts. `driver` fakes the subset of
`cuda.bindings.driver` the runtime uses, with the same call conventions.

Turned on by the environment variable ``STRIDEX_CUDA_EMULATOR=1`` (see
tensor.cuda.runtime.emulated()).

Builds are cached by tensor/kernel_cache.py, as the CPU's modules and NVRTC's images: in
memory and in the per-user cache directory, keyed by the hash of (source, included cuda_src
headers, the emulator's headers, flags, compiler version); files are written atomically with
a sha256 beside them that is checked before use.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from ... import kernel_cache as kc
from ...cpu.build import CompilerNotFoundError, KernelCompileError
from . import driver  # the fake cuda.bindings.driver that loads what compile() builds
from .driver import IMAGE_MAGIC

__all__ = ["compile", "entry_points", "flags", "SHIM", "FLAGS", "IMAGE_MAGIC",
           "KernelCompileError", "CompilerNotFoundError"]

SHIM = Path(__file__).resolve().parent / "dialect.h"        # force-included
HEADERS = (SHIM, SHIM.parent / "scheduler.h")             # both are part of the cache key
FLAGS = ["-O1", "-std=c++17", "-shared", "-fPIC", "-fno-strict-aliasing", "-fwrapv",
         "-fvisibility=hidden", "-Wno-unknown-pragmas"]


def flags(fmad: bool = False) -> list[str]:
    """FLAGS, the contraction flags (fmad: a * b + c contracted into an FMA, as NVRTC does by
    default, where the host has FMA instructions), plus STRIDEX_EMU_CXXFLAGS (e.g. "-O0" for
    faster builds, "-g", or "-DEMU_USE_UCONTEXT" to use swapcontext instead of the x86-64
    assembly switch)."""
    return FLAGS + contraction(fmad) + shlex.split(os.environ.get("STRIDEX_EMU_CXXFLAGS", ""))


@lru_cache(maxsize=2)
def contraction(fmad: bool) -> list[str]:
    """g++'s flags for NVRTC's contraction choice: the families NVRTC builds with --fmad=true
    (gemm, nn rows... tensor/cuda/kernels.py) contract here too, so that code assuming two
    kernels round alike (a fused matmul epilogue against eager's, as an H200 showed) fails
    on the emulator as on a GPU. Needs the host's FMA (x86-64 FMA3); STRIDEX_EMU_FMA=0: never."""
    if not fmad or os.environ.get("STRIDEX_EMU_FMA", "1") == "0" or not _host_fma():
        return ["-ffp-contract=off"]
    return ["-mfma", "-ffp-contract=fast", "-fexpensive-optimizations"]   # (-O1 forms no FMA)


def _host_fma() -> bool:
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " fma " in f" {line.split(':', 1)[-1]} "
                       for line in f)
    except OSError:
        return False


@lru_cache(maxsize=1)
def compiler() -> str:
    cxx = (os.environ.get("STRIDEX_EMU_CXX") or shutil.which("g++") or shutil.which("c++")
           or shutil.which("clang++"))
    if not cxx:
        raise CompilerNotFoundError(
            "tensor: the CUDA emulator compiles kernels with a C++17 compiler and none was found; "
            "install g++ (e.g. `apt-get install g++`) or set STRIDEX_EMU_CXX to its path.")
    return cxx


@lru_cache(maxsize=1)
def _toolchain_id() -> str:
    cxx = compiler()
    try:
        ver = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError as e:
        raise CompilerNotFoundError(f"tensor: cannot run the C++ compiler {cxx!r}: {e}") from e
    return f"{cxx}\n{ver}"


@lru_cache(maxsize=1)
def _headers_text() -> str:
    return "\n".join(h.read_text() for h in HEADERS)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_ENTRY = re.compile(
    r'extern\s+"C"\s+__global__\s+void\s+'
    r"(?:__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*)?"
    r"([A-Za-z_]\w*)\s*\(")


def entry_points(source: str) -> list[str]:
    """Names of the `extern "C" __global__ void NAME(...)` kernels of a module source."""
    names = []
    for n in _ENTRY.findall(_COMMENTS.sub(" ", source)):
        if n not in names:
            names.append(n)
    return names


def _full_source(source: str) -> str:
    tramp = "".join(f"EMU_ENTRY({n})\n" for n in entry_points(source))
    return f"{source}\n/* ---- emulator entry points ---- */\n{tramp}"


def cache_key(source: str, fmad: bool = False) -> str:
    return kc.key(source, kc.included_text(source), _headers_text(), " ".join(flags(fmad)),
                  _toolchain_id())


def _build(name: str, source: str, fmad: bool) -> bytes:
    full = _full_source(source)
    with tempfile.TemporaryDirectory(prefix="stridex-emu-") as tmp:
        src = Path(tmp) / f"{name}.cu.cpp"
        src.write_text(full)
        so = Path(tmp) / "module.so"
        cmd = [compiler(), *flags(fmad), "-include", str(SHIM), f"-I{kc.CUDA_SRC}", str(src), "-o", str(so)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except OSError as e:
            raise CompilerNotFoundError(f"tensor: cannot run the C++ compiler {cmd[0]!r}: {e}") from e
        if r.returncode != 0:
            raise KernelCompileError(
                f"tensor: CUDA kernel module {name!r} failed to compile for the CPU emulator\n"
                f"command: {' '.join(cmd)}\n--- compiler log ---\n{r.stderr}\n"
                f"--- source ---\n{kc.numbered(full)}")
        return so.read_bytes()


_images = kc.Memo("emu")


def compile(name: str, source: str, arch: str | None = None,  # noqa: A001 - the verb
            fmad: bool = False) -> bytes:
    """An emulator image (for driver.cuModuleLoadData) of a CUDA kernel module, from the memory
    or disk cache or g++. `arch` is accepted for symmetry with nvrtc.compile and ignored;
    fmad: contract multiply-adds as NVRTC does for the module's family (see contraction).

    Raises KernelCompileError (module name, compiler log, numbered source) on a source error and
    CompilerNotFoundError when no C++ compiler is installed."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"emulator: module name must be [A-Za-z0-9_.-]+, got {name!r}")
    mem_key = f"{name}-{cache_key(source, fmad)}"

    def make() -> bytes:
        path = kc.cache_dir() / f"cudaemu_{mem_key}.so"
        kc.fetch(path, lambda: _build(name, source, fmad))   # the driver loads the file
        return IMAGE_MAGIC + str(path).encode()
    return _images.get_or_make(mem_key, make)
