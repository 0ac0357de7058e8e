"""The CUDA backend. Importable without cuda-python: NVRTC and the driver are loaded lazily.

`nvrtc.compile(name, source, arch)` turns a kernel module into CUBIN (no GPU needed);
`kernels` generates the module sources from the op table.
"""
from __future__ import annotations


def is_available() -> bool:
    """True when cuda-python, an NVIDIA driver and at least one GPU are present."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return False
    try:
        (err,) = driver.cuInit(0)
        if int(err) != 0:
            return False
        err, n = driver.cuDeviceGetCount()
        return int(err) == 0 and n > 0
    except Exception:  # noqa: BLE001 - no driver library at all
        return False
