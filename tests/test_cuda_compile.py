"""Every CUDA kernel module (each template family x dtype) compiles with NVRTC for sm_80, sm_90
and sm_100 -- no GPU or driver needed -- so a kernel source error fails CI on any machine. The
check builds with --Ofast-compile=max (NVRTC >= 12.8): the front end and ptxas still see every
line, inline PTX included, in ~40% less time; the runtime's CUBINs are built fully optimised.

Machine code (ptxas) is made for CUBIN_ARCH only, sm_90 (the lent H100/H200s'); for the other
archs NVRTC's front end and NVVM compile every module to PTX. No source line differs between
these archs (cuda_src/arch.cuh switches only below sm_80), and ptxas's limits (registers, 48 KiB
of static shared memory) are the same on all three, while ptxas is four fifths of the time:
the three full builds took ~220 s of the suite's ~13 minutes on two cores, this ~100 s.

Modules compile on a small thread pool (NVRTC releases the GIL); the on-disk cache makes
reruns fast. Skipped, with the reason, when cuda-python's NVRTC bindings are not installed.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-python (cuda.bindings.nvrtc) is not "
                    'installed: pip install "cuda-python>=13" "nvidia-cuda-nvrtc>=13"')

from helpers import CUDA_ARCHS, nvrtc_offsetof  # noqa: E402

from tensor.cpu.build import KernelCompileError  # noqa: E402
from tensor.cuda import kernels as K  # noqa: E402
from tensor.cuda import nvrtc  # noqa: E402

try:
    nvrtc.version()
except nvrtc.NVRTCNotFoundError as e:  # bindings present, libnvrtc missing
    pytest.skip(str(e), allow_module_level=True)

ARCHS = CUDA_ARCHS
CUBIN_ARCH = "sm_90"
MODULES = K.all_modules()


def _target(arch: str) -> str:
    return arch if arch == CUBIN_ARCH else arch.replace("sm_", "compute_")


def _has_kernel(image: bytes, name: str) -> bool:
    """Whether a CUBIN (an ELF symbol) or PTX text (an .entry) defines kernel `name`."""
    if image[:4] == b"\x7fELF":
        return b"\0" + name.encode() + b"\0" in image
    return b".entry " + name.encode() + b"(" in image


@pytest.fixture(scope="module")
def cubins():
    jobs = [(fam, d, arch) for arch in ARCHS for fam, d in MODULES]
    workers = max(1, min(len(jobs), os.cpu_count() or 1))

    def one(job):
        fam, d, arch = job
        try:
            return job, K.cubin(fam, d, _target(arch), fast=True), None
        except KernelCompileError as e:
            return job, None, e

    with ThreadPoolExecutor(workers) as ex:
        return {job: (cub, err) for job, cub, err in ex.map(one, jobs)}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fam,d", MODULES, ids=[K.module_name(f, d) for f, d in MODULES])
def test_module_compiles(cubins, fam, d, arch):
    cub, err = cubins[(fam, d, arch)]
    if err is not None:
        pytest.fail(str(err), pytrace=False)
    assert cub[:4] == (b"\x7fELF" if arch == CUBIN_ARCH else b"//\n/") and len(cub) > 1000
    for name in K.kernel_names(fam, d):
        assert _has_kernel(cub, name), f"kernel {name} missing from {K.module_name(fam, d)} ({arch})"


def test_every_op_dtype_covered():
    from tensor import dtypes as dt
    from tensor.optable import BINARY, UNARY
    names = {n for d in dt.ALL for n in K.kernel_names("ew", d)}
    for op in UNARY + BINARY:
        for d in dt.ALL:
            if d.kind in op.kinds:
                assert f"{op.name}_{d.sfx}" in names


def test_source_error_raises_kernel_compile_error():
    src = '#include "common.cuh"\nextern "C" __global__ void broken_f32(float *x) {\n' \
          "    x[0] = undefined_thing + 1;\n}\n"
    with pytest.raises(KernelCompileError) as ei:
        nvrtc.compile("broken", src, "sm_80")
    msg = str(ei.value)
    assert "'broken'" in msg
    assert "undefined_thing" in msg and "identifier" in msg   # NVRTC's log
    assert "    3      x[0] = undefined_thing + 1;" in msg     # the numbered source


def test_host_arg_structs_match_device_layout():
    import ctypes

    from tensor.cuda import launch as L
    checks = [f"sizeof(sx_indexer<{n}>) == {ctypes.sizeof(K.INDEXER[n])}" for n in (2, 3, 4)]
    checks += [f"offsetof(sx_indexer<{n}>, {f}) == {getattr(K.INDEXER[n], f).offset}"
               for n in (2, 3, 4) for f in ("vec", "tile", "sval")]
    checks += [f"sizeof(sx_red_args) == {ctypes.sizeof(K.RED_ARGS)}",
               f"sizeof(sx_scan_args) == {ctypes.sizeof(K.SCAN_ARGS)}",
               f"offsetof(sx_red_args, rin) == {K.RED_ARGS.rin.offset}",
               f"offsetof(sx_red_args, vec) == {K.RED_ARGS.vec.offset}",
               f"offsetof(sx_red_args, K) == {K.RED_ARGS.K.offset}",
               f"offsetof(sx_indexer<3>, stride) == {K.INDEXER[3].stride.offset}",
               f"SX_MAXDIM == {K.MAXDIM}", f"SX_TILE == {L.TILE}", f"SX_BLOCK == {L.BLOCK}"]
    src = '#include "elementwise.cuh"\n#include "reduce.cuh"\n' + nvrtc_offsetof(nvrtc) + "".join(
        f'static_assert({c}, "{c}");\n' for c in checks).replace("offsetof", "SX_OFFSETOF")
    assert nvrtc.compile("layout", src, "sm_80")[:4] == b"\x7fELF"


@pytest.mark.parametrize("fam", sorted({f for f, _ in MODULES}))
def test_one_kernel_unit_compiles_alone(fam):
    """The runtime compiles a kernel alone on first use: its unit holds that kernel only."""
    d = next(d for f, d in MODULES if f == fam)
    name = K.kernel_names(fam, d)[-1]
    cub = K.cubin(fam, d, ARCHS[-1], fast=True, names=[name])
    assert cub[:4] == b"\x7fELF" and b"\0" + name.encode() + b"\0" in cub
    others = [n for n in K.kernel_names(fam, d) if n != name]
    assert not any(b"\0" + n.encode() + b"\0" in cub for n in others)


def test_ptx_target_gives_ptx_and_is_cached_as_ptx(tmp_path, monkeypatch):
    """A device newer than NVRTC knows gets PTX (compute_XY): NVRTC's PTX, NUL-terminated as
    cuModuleLoadData wants it, never an empty CUBIN fetch."""
    monkeypatch.setenv("STRIDEX_CACHE_DIR", str(tmp_path))
    src = K.source("misc", K.dt.float32)
    ptx = nvrtc.compile("ptx_check", src, "compute_80")
    assert b".version" in ptx and b".entry iota_f32" in ptx and ptx.endswith(b"\0")
    files = [p.name for p in tmp_path.iterdir()]
    assert any(f.endswith(".ptx") for f in files) and not any(f.endswith(".cubin") for f in files)


def test_an_empty_cached_image_is_rebuilt_not_loaded(tmp_path, monkeypatch):
    from tensor.kernel_cache import write_cached
    monkeypatch.setenv("STRIDEX_CACHE_DIR", str(tmp_path))
    src = K.source("misc", K.dt.int16) + "// empty-cache check\n"
    key = nvrtc.cache_key(src, "sm_80")
    write_cached(tmp_path / f"cuda_empty_check-sm_80-{key}.cubin", b"")   # hash matches: valid
    cub = nvrtc.compile("empty_check", src, "sm_80")
    assert cub[:4] == b"\x7fELF"
    assert (tmp_path / f"cuda_empty_check-sm_80-{key}.cubin").read_bytes() == cub


def test_device_newer_than_nvrtc_knows_targets_ptx_of_the_newest_known_arch():
    from tensor.cuda import runtime as R
    known = nvrtc.supported_archs()
    if not known:
        pytest.skip("this NVRTC cannot list its architectures")
    st = R._DeviceState.__new__(R._DeviceState)
    st.cc = (divmod(known[-1], 10)[0] + 1, 0)
    assert st.arch == f"compute_{known[-1]}"
    st.cc = divmod(known[0], 10)
    assert st.arch == f"sm_{known[0]}"


def test_exact_families_are_built_without_fma_contraction():
    """Families whose floats must equal the CPU's bit for bit get --fmad=false (NVRTC fuses
    a * b + c by default; the C kernels and the emulator do not), as do the elementwise
    kernels (a fused kernel must round as the unfused ones); the rest keep contraction."""
    exact = {f for f, _ in MODULES if not K.fmad(f)}
    assert exact == {"ew", "red", "index", "random", "misc", "optim", "optim_master", "segment"}
    assert "--fmad=false" in nvrtc.options("sm_90", fmad=False)
    assert not any(o.startswith("--fmad") for o in nvrtc.options("sm_90"))
    src = K.source("optim", K.dt.float32)
    assert nvrtc.cache_key(src, "sm_90", fmad=False) != nvrtc.cache_key(src, "sm_90")


def test_a_slow_compile_says_what_it_compiles(tmp_path, monkeypatch, capfd):
    import time
    monkeypatch.setenv("STRIDEX_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(nvrtc, "SLOW_NOTICE_S", 0.0)
    nvrtc.compile("notice_check", K.source("misc", K.dt.int8) + "// notice\n", "sm_80")
    time.sleep(0.05)
    assert "NVRTC is compiling CUDA notice_check for sm_80" in capfd.readouterr().err


def test_precompile_selects_and_fills_the_disk_cache(tmp_path, monkeypatch, capfd):
    from tensor.cuda import warm
    assert len(warm.select()) == len(K.all_kernels())
    assert [n for _, _, n in warm.select(ops=["add", "sum"], dtypes=["float32"])] == ["add_f32", "sum_f32"]
    assert {f for f, _, _ in warm.select(ops=["gemm"])} == {"gemm"}
    assert all(d is not None for _, d, _ in warm.select(dtypes=["int8"]))   # no dtype-free module
    assert [n for _, d, n in warm.select(ops=["rand_bits32"], dtypes=["int8"])] == ["rand_bits32"]
    with pytest.raises(ValueError, match=r"no CUDA kernel matches \['nope'\]"):
        warm.select(ops=["add", "nope"])
    monkeypatch.setenv("STRIDEX_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(nvrtc, "SLOW_NOTICE_S", 0.0)
    r = warm.precompile(ops=["iota"], dtypes=["int16", "uint8"], arch="sm_80", workers=2, progress=True)
    assert r["kernels"] == 2
    assert len([p for p in tmp_path.iterdir() if p.suffix == ".cubin"]) == 2
    err = capfd.readouterr().err
    assert "precompile sm_80: 2/2 kernels" in err and "NVRTC is compiling" not in err


def _fused_run(d):
    """A fused run over dtype d as tensor/fusion.py plans one (tensor/cuda/fused.py builds it):
    a scalar operand, a broadcast input, buffers, a cast to another dtype, `where`, an output
    read and rewritten."""
    import tensor as T
    from tensor.fusion import Fused
    s = d.sfx
    bias = T.broadcast_to(T.ones((2, 1)), (2, 4))   # only its layout matters here
    f = Fused(8, None, inputs=[(None, s, False), (None, s, True), (None, "b8", False), (bias, s, False)],
              outputs=[(None, "f32"), (None, s)], tmps=[s, s])
    f.ops = [(f"add_{s}", d, [("in", 0), ("in", 1)], ("tmp", 1)),
             (f"add_{s}", d, [("tmp", 1), ("in", 3)], ("tmp", 0)),
             (f"cast_{s}_f32", d, [("tmp", 0)], ("out", 0)),
             (f"where_{s}", d, [("in", 2), ("tmp", 0), ("in", 0)], ("out", 1)),
             (f"multiply_{s}", d, [("out", 1), ("in", 0)], ("out", 1))]
    return f


FUSED_DTYPES = [K.dt.float32, K.dt.float16, K.dt.bfloat16, K.dt.float64, K.dt.complex64,
                K.dt.complex128, K.dt.int64, K.dt.uint8]


@pytest.mark.parametrize("d", FUSED_DTYPES, ids=[d.sfx for d in FUSED_DTYPES])
def test_fused_kernels_compile(d):
    """The source a captured step's fused elementwise run generates compiles for every arch
    (the emulator builds the same source with g++: tests/test_fusion.py runs it), and so do the
    run ending in a reduction of its value and the run headed by a row reduction (real dtypes:
    the reductions' own)."""
    from tensor.cuda import fused
    from tensor.fusion import Reduce
    runs = [_fused_run(d)]
    if d.kind != "c":
        for red in ("sum", "max"):
            f = _fused_run(d)
            f.reduce = Reduce(f"{red}_{d.sfx}", d, ("tmp", 0), None, None, ())
            runs.append(f)
    if d.kind != "c":   # a row reduction heading the run
        f = _fused_run(d)
        f.head = Reduce(f"sum_{d.sfx}", d, None, None, None, ())
        runs.append(f)
    for k, f in enumerate(runs):
        src = (fused.head_source(f, "sx_fz_test") if f.head is not None else fused.source(f, "sx_fz_test")
               if f.reduce is None else fused.reduce_source(f, "sx_fz_test"))
        assert src is not None
        for arch in ARCHS:
            cub = nvrtc.compile(f"sx_fz_test_{d.sfx}_{k}", src, _target(arch), fast=True,
                                fmad=K.fmad("ew"))
            assert _has_kernel(cub, "sx_fz_test")


@pytest.mark.parametrize("kernel", ["gemm_f32_nn", "gemm_f64_gen", "gemm_f16_tn", "gemm_bf16_nt", "gemm_i32",
                                    "gemm_add_f32_tt", "gemm_add_bf16_gen"])
def test_fused_gemm_epilogues_compile(kernel):
    """A captured run as the epilogue of each kind of gemm kernel (SIMT, tensor cores,
    integers, gemm_add's ADD instances) compiles for every arch."""
    from tensor.cuda import fused
    d = getattr(K.dt, {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
                       "i32": "int32"}[kernel.split("_")[-2 if kernel.count("_") > 1 else -1]])
    f = _fused_run(d)
    f.gemm = (None, None, None)
    src = fused.gemm_source(f, "sx_fz_test", kernel)
    for arch in ARCHS:
        cub = nvrtc.compile(f"sx_fz_test_{kernel}", src, _target(arch), fast=True, fmad=K.fmad("ew"))
        assert _has_kernel(cub, "sx_fz_test")
