"""Compile C kernel modules with the system C compiler and load them with cffi.

Modules are cached in memory and on disk by tensor/kernel_cache.py (the cache NVRTC and the
CUDA emulator use too): a per-user directory (mode 0700; ``STRIDEX_CACHE_DIR`` overrides it),
file names carrying the hash of (source, included headers, flags, compiler version, machine),
atomic writes and a content hash checked before loading, so a torn or tampered file is
rebuilt instead of loaded. Kernels include headers from csrc/ and from cuda_src/ (the
scalar/ headers both devices compile, philox.h).

Sanitizers: with ``STRIDEX_SANITIZE=address,undefined`` (or either) the kernels are built with
those sanitizers (-O0 -g, their own cache key) and the CPU allocator poisons every byte that no
live tensor owns (tensor/cpu/alloc.py), so an out-of-bounds access aborts with a report instead
of corrupting memory. Python itself is not built with ASan: preload its runtime,
``LD_PRELOAD=$(gcc -print-file-name=libasan.so)
ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1`` (tests/test_sanitizers.py runs a
selection of the suite so). ``allocator_may_return_null=1`` is required: without it ASan aborts
the process on an allocation it cannot serve (``T.empty(2**60)``) where the library raises
OutOfMemoryError.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from functools import lru_cache
from pathlib import Path

import cffi

from .. import kernel_cache as kc

CSRC = kc.CPU_SRC
CUDA_SRC = kc.CUDA_SRC

# GNU OpenMP's default wait policy keeps its workers spinning after each parallel region: on a
# machine whose cores are busy (CI, a shared server, DataLoader workers beside the main process)
# they take the CPU the other threads need, and a 1M-element float32 add took 24 ms instead of
# 0.1 ms (2 cores, load average 5). Passive waiting costs microseconds a region on an idle
# machine. libgomp reads it when it loads (with the first kernel module); the user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

CFLAGS = ["-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-std=gnu11", "-fwrapv",
          "-fno-math-errno", "-Wall", "-Wno-unused-function", "-Wno-unknown-pragmas"]


SANITIZERS = ("address", "undefined")


def sanitizers() -> tuple[str, ...]:
    """The sanitizers STRIDEX_SANITIZE asks for (comma-separated; empty: none)."""
    raw = os.environ.get("STRIDEX_SANITIZE", "").strip()
    names = tuple(s.strip() for s in raw.split(",") if s.strip())
    bad = [s for s in names if s not in SANITIZERS]
    if bad:
        raise ValueError(f"STRIDEX_SANITIZE: unknown sanitizer(s) {bad}; choose from {list(SANITIZERS)}")
    if "address" in names:
        if not asan_loaded():
            raise RuntimeError(
                "STRIDEX_SANITIZE=address needs the ASan runtime loaded before Python's own "
                f"libraries: run with LD_PRELOAD=$(gcc -print-file-name=libasan.so) {ASAN_OPTIONS}")
        if not _ASAN_NULL.search(os.environ.get("ASAN_OPTIONS", "")):
            raise RuntimeError(
                "STRIDEX_SANITIZE=address needs allocator_may_return_null=1 in ASAN_OPTIONS "
                f"(e.g. {ASAN_OPTIONS}): without it ASan aborts the process on an allocation it "
                "cannot serve, where the library raises OutOfMemoryError")
    return names


ASAN_OPTIONS = "ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1"   # Python leaks by design
_ASAN_NULL = re.compile(r"(?:^|[:,\s])allocator_may_return_null=(?:1|true)(?:$|[:,\s])")


def asan_loaded() -> bool:
    """Whether AddressSanitizer's runtime is in this process (preloaded)."""
    import ctypes
    return hasattr(ctypes.CDLL(None), "__asan_init")


def cflags() -> list[str]:
    """The C compiler's flags: CFLAGS, or a sanitizer build (-O0 -g -fsanitize=...). With
    "undefined", float-cast-overflow too (gcc leaves it out of -fsanitize=undefined: a float
    to integer conversion of NaN or of a value out of range is undefined behaviour in C)."""
    san = sanitizers()
    if not san:
        return CFLAGS
    checks = san + (("float-cast-overflow",) if "undefined" in san else ())
    return [f for f in CFLAGS if f != "-O3"] + [
        "-O0", "-g", f"-fsanitize={','.join(checks)}", "-fno-omit-frame-pointer",
        "-fno-sanitize-recover=all"]


class CompilerNotFoundError(RuntimeError):
    """No C compiler: the CPU backend needs one to build its kernels."""


class KernelCompileError(RuntimeError):
    """A kernel module failed to compile; the message has the compiler log and the source."""


_loaded = kc.Memo("cpu")


def _after_fork_in_child() -> None:
    """GNU OpenMP (libgomp) is not fork-safe: in a child forked after the parent's kernels ran
    a parallel region, the child's first parallel kernel waits forever for the parent's pool
    threads, which the child does not have. So a child of a process that loaded kernels runs
    them on one thread (as PyTorch's DataLoader workers do); set_num_threads(n) in the child
    undoes this at the risk of that hang."""
    global forked_after_openmp
    kernels = sys.modules.get(f"{__package__}.kernels")
    if _loaded and kernels is not None and kernels.get_num_threads() > 1:
        kernels.set_num_threads(1)
        forked_after_openmp = True   # set_num_threads(n > 1) warns in this child


forked_after_openmp = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@lru_cache(maxsize=1)
def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise CompilerNotFoundError(
            "tensor: no C compiler found; the CPU backend compiles its kernels at first use. "
            "Install gcc or clang (e.g. `apt-get install gcc`) or set CC to the compiler's path.")
    return cc


@lru_cache(maxsize=1)
def _toolchain_id() -> str:
    cc = compiler()
    try:
        ver = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError as e:
        raise CompilerNotFoundError(f"tensor: cannot run the C compiler {cc!r}: {e}") from e
    flags = ""
    try:  # -march=native: the CPU's features are part of what a binary depends on
        with open("/proc/cpuinfo") as f:
            flags = next((ln for ln in f if ln.startswith(("flags", "Features"))), "")
    except OSError:
        pass
    return f"{cc}\n{ver}\n{platform.machine()}\n{flags}"


@lru_cache(maxsize=1)
def _python_include() -> str | None:
    """Python's C headers, needed to build kernels as extension modules (API mode)."""
    inc = sysconfig.get_paths().get("include")
    return inc if inc and os.path.exists(os.path.join(inc, "Python.h")) else None


def _compile(name: str, source: str, cdef: str | None, out: Path, modname: str | None) -> bytes:
    """The bytes of the shared library named `out`. modname given: a CPython extension, whose
    wrappers cffi generates from cdef (calls cost ~0.3 us instead of ~1 us through dlopen), or,
    cdef None, written against Python's C API with SX_MODINIT its init function; else a plain
    shared library."""
    with tempfile.TemporaryDirectory(prefix="stridex-build-") as tmp:
        src = Path(tmp) / f"module_{name}.c"
        if modname and cdef is not None:
            ffi = cffi.FFI()
            ffi.cdef(cdef)
            # compiler_verbose=False: cffi would print "generating ..." (a redirect of
            # sys.stdout instead is not thread-safe: kernels build on several threads at once)
            ffi.set_source(modname, source, compiler_verbose=False)
            ffi.emit_c_code(str(src))
        else:
            src.write_text(source)
        so = Path(tmp) / out.name
        extra = [f"-I{_python_include()}"] if modname else []
        if modname and cdef is None:
            extra.append(f"-DSX_MODINIT=PyInit_{modname}")
        cmd = [compiler(), *cflags(), f"-I{CSRC}", f"-I{CUDA_SRC}", *extra, str(src), "-o", str(so), "-lm"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except OSError as e:
            raise CompilerNotFoundError(f"tensor: cannot run the C compiler {cmd[0]!r}: {e}") from e
        if r.returncode != 0:
            raise KernelCompileError(
                f"tensor: kernel module {name!r} failed to compile\ncommand: {' '.join(cmd)}\n"
                f"--- compiler log ---\n{r.stderr}\n--- source ---\n{kc.numbered(source)}")
        return so.read_bytes()


def _import_extension(modname: str, path: Path):
    loader = importlib.machinery.ExtensionFileLoader(modname, str(path))
    spec = importlib.util.spec_from_file_location(modname, str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


_FFI: dict = {}   # id(lib) -> the ffi of its extension module (kernel addresses)


def _load_extension(modname: str, path: Path):
    mod = _import_extension(modname, path)
    _FFI[id(mod.lib)] = (mod.lib, mod.ffi)
    return mod.lib


def address(lib, name: str) -> int:
    """The address of function `name` of a loaded kernel module (0 where the module was
    loaded without an extension, through dlopen)."""
    entry = _FFI.get(id(lib))
    if entry is None:
        return 0
    ffi = entry[1]
    return int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))


def load_extension(name: str, source: str):
    """Compile (or fetch from cache) and import a CPython extension module written against
    Python's C API (its init function named SX_MODINIT); None where Python's headers are
    missing."""
    if not _python_include():
        return None
    key = kc.key(source, "capi", " ".join(cflags()), _toolchain_id(), kc.included_text(source))
    modname = f"_sx_{name}_{key}"
    path = kc.cache_dir() / (modname + sysconfig.get_config_var("EXT_SUFFIX"))

    def make():
        kc.fetch(path, lambda: _compile(name, source, None, path, modname))
        return _import_extension(modname, path)
    return _loaded.get_or_make(f"{name}-{key}", make)


def load(name: str, source: str, cdef: str):
    """Compile (or fetch from cache) a C module and return its cffi library object."""
    key = kc.key(source, cdef, " ".join(cflags()), _toolchain_id(), kc.included_text(source))
    return _loaded.get_or_make(f"{name}-{key}", lambda: _build_and_load(name, key, source, cdef))


def _build_and_load(name: str, key: str, source: str, cdef: str):
    modname = f"_sx_{name}_{key}" if _python_include() else None
    path = kc.cache_dir() / (modname + sysconfig.get_config_var("EXT_SUFFIX") if modname
                             else f"{name}-{key}.so")
    kc.fetch(path, lambda: _compile(name, source, cdef, path, modname))
    if modname:
        return _load_extension(modname, path)
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    return ffi.dlopen(str(path))
