"""The one choice between the two ways CUDA kernels are built and run (DESIGN.md, decision 11):

- a GPU: the driver is ``cuda.bindings.driver`` and NVRTC compiles each kernel alone (a
  *unit*: a fraction of a second, where a whole module takes up to a minute), to CUBIN for the
  device's compute capability (PTX when NVRTC does not know it yet);
- the CPU emulator (tensor/cuda/emulator, a test device): its fake driver, and g++ building a
  whole module at once (one g++ run serves every kernel of it).

`current()` makes the choice once, at first use, from ``STRIDEX_CUDA_EMULATOR`` (or
`use_emulator()` before any device is used); the runtime asks the chosen toolchain and no
other production code tests which one it is. In the kernels the same role is played by
cuda_src/arch.cuh, the one header that tests SX_EMULATE.

>>> from tensor.cuda import toolchain
>>> toolchain.EMULATOR.unit_key("ew", None, "add_f32")   # the emulator loads whole modules
('ew', None)
"""
from __future__ import annotations

import os

from . import emulator
from . import kernels as CK

__all__ = ["Toolchain", "GPU", "EMULATOR", "current", "use_emulator"]

ENV = "STRIDEX_CUDA_EMULATOR"


class Toolchain:
    """How kernels are compiled, loaded and launched; one instance per kind."""

    emulated = False
    per_device = True        # images are built for one device's architecture (nvrtc.target)
    name, products = "NVRTC", "kernels"
    missing = ('the cuda-python package (cuda.bindings) is not installed ({e}); install it '
               'with: pip install "cuda-python>=13"')

    def load_driver(self):
        """The driver module (the cuda.bindings.driver API)."""
        from cuda.bindings import driver  # an optional dependency: loaded only when used
        return driver

    def unit_key(self, family: str, d, name: str) -> tuple:
        """What one loaded module holds: kernel `name` alone."""
        return (family, d, name)

    def compile(self, family: str, d, name: str, arch: str | None) -> bytes:
        """The image holding kernel `name` of module (family, d) for `arch`."""
        return CK.cubin(family, d, arch, names=[name])

    def compile_source(self, name: str, source: str, arch: str | None) -> bytes:
        """The image of a generated module (a captured step's fused elementwise kernel, built
        as the "ew" family is: without contraction) for `arch`."""
        from . import nvrtc
        return nvrtc.compile(name, source, arch, fmad=CK.fmad("ew"))

    def launch_detail(self, driver) -> str:
        """More about a failed launch than the driver's error code (nothing on a GPU)."""
        return ""


class _Emulator(Toolchain):
    emulated = True
    per_device = False
    name, products = "emulator", "emulator modules"

    def load_driver(self):
        return emulator.driver

    def unit_key(self, family: str, d, name: str) -> tuple:
        return (family, d)

    def compile(self, family: str, d, name: str, arch: str | None) -> bytes:
        return emulator.compile(CK.module_name(family, d), CK.source(family, d),
                                fmad=CK.fmad(family))

    def compile_source(self, name: str, source: str, arch: str | None) -> bytes:
        return emulator.compile(name, source, fmad=CK.fmad("ew"))

    def launch_detail(self, driver) -> str:
        return driver.emu_last_error()


GPU = Toolchain()
EMULATOR = _Emulator()
_chosen: Toolchain | None = None


def current() -> Toolchain:
    """The toolchain of this process, chosen at the first call."""
    global _chosen
    if _chosen is None:
        _chosen = EMULATOR if os.environ.get(ENV, "") not in ("", "0") else GPU
    return _chosen


def use_emulator() -> None:
    """Choose the emulator (the runtime checks that no device was used yet); child processes
    inherit the choice through the environment."""
    global _chosen
    os.environ[ENV] = "1"
    _chosen = EMULATOR
