"""CUDA matmul (tensor/cuda/gemm.py, cuda_src/gemm.cuh).

- Every gemm module compiles with NVRTC for sm_80, sm_90 and sm_100 and holds all its kernels; the
  host ctypes mirror of sx_gemm_args matches the device struct (static_assert under NVRTC).
  Skipped without cuda-python's NVRTC bindings.
- The layout specialisation the host picks from the strides (pure Python).
- On a CUDA device (a GPU, or the CPU emulator with STRIDEX_CUDA_EMULATOR=1): matmul on cuda
  against NumPy for every dtype. Integers and bool bit-exact (wrapping arithmetic, compared
  with NumPy's int64 product truncated to the dtype and with the CPU backend); floats within
  a bound derived from the accumulation: |err| <= 2 K eps_acc (|A| @ |B|) + the rounding of
  the stored result (float16 / bfloat16: half an ulp of the storage type, relative).
  Shapes with edges (1, 7, 33, 130; K = 1 and 0), batches with broadcast (stride-0) batch
  dims and non-coalescable batch dims, transposed operands, negative strides, generic strides,
  misaligned views (no vector loads), vector operands through T.matmul. Sizes stay <= 130 per
  dimension so that the emulator is quick.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from helpers import bf16_round, nvrtc_offsetof, nvrtc_or_skip, to_np

import tensor as T
from tensor import dtypes as dt
from tensor.cuda import gemm as G

# ------------------------------------------------------------------ NVRTC compile checks


def test_gemm_family_registered():
    from tensor.cuda import kernels as CK
    mods = [(f, d) for f, d in CK.all_modules() if f == "gemm"]
    assert [d for _, d in mods] == list(dt.REAL)
    names = {n for d in dt.REAL for n in CK.kernel_names("gemm", d)}
    assert {"gemm_f32_nn", "gemm_bf16_tt", "gemm_f64_gen", "gemm_i64", "gemm_b8"} <= names


def test_gemm_args_layout_matches_device():
    nvrtc = nvrtc_or_skip()
    A = G.GemmArgs
    checks = [f"sizeof(sx_gemm_args) == {ctypes.sizeof(A)}",
              f"alignof(sx_gemm_args) == {ctypes.alignment(A)}"]
    checks += [f"SX_OFFSETOF(sx_gemm_args, {name}) == {getattr(A, name).offset}"
               for name, _ in A._fields_]
    src = '#include "gemm.cuh"\n' + nvrtc_offsetof(nvrtc) + "".join(
        f'static_assert({c}, "{c}");\n' for c in checks)
    assert nvrtc.compile("gemm_layout", src, "sm_80")[:4] == b"\x7fELF"


# ------------------------------------------------------------------ layout choice (host only)

@pytest.mark.parametrize("M,N,K,sam,sak,sbk,sbn,expect", [
    (8, 8, 8, 8, 1, 8, 1, "gemm_f32_nn"),          # both row-major
    (8, 8, 8, 8, 1, 1, 8, "gemm_f32_nt"),          # B transposed
    (8, 8, 8, 1, 8, 8, 1, "gemm_f32_tn"),          # A transposed
    (8, 8, 8, 1, 8, 1, 8, "gemm_f32_tt"),
    (8, 8, 8, 16, 2, 8, 1, "gemm_f32_gen"),        # A strided both ways
    (8, 8, 8, -8, 1, -8, 1, "gemm_f32_nn"),        # reversed rows keep unit columns
    (8, 8, 8, 8, -1, 8, 1, "gemm_f32_gen"),        # reversed columns
    (1, 8, 8, 5, 3, 8, 1, "gemm_f32_tn"),          # a single row: its row stride is free
    (8, 8, 1, 3, 5, 7, 1, "gemm_f32_nn"),          # K == 1: the k strides are free
    (8, 1, 8, 8, 1, 1, 3, "gemm_f32_nt"),          # a single column of B
])
def test_kernel_choice(M, N, K, sam, sak, sbk, sbn, expect):
    name, strides = G.choose_kernel(dt.float32, M, N, K, sam, sak, sbk, sbn)
    assert name == expect
    # normalised strides only change length-1 dimensions
    for s0, s1, n in zip((sam, sak, sbk, sbn), strides, (M, K, K, N)):
        assert s0 == s1 or n == 1
    assert G.choose_kernel(dt.int32, M, N, K, sam, sak, sbk, sbn)[0] == "gemm_i32"


def test_kernel_sources_cover_every_layout():
    from tensor.cuda import kernels as CK
    for d in dt.REAL:
        src = CK.source("gemm", d)
        for name in CK.kernel_names("gemm", d):
            assert f" {name}(sx_gemm_args p)" in src


# ------------------------------------------------------------------ device tests

def _cuda_available() -> bool:
    try:
        return T.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


cuda = pytest.mark.skipif(not _cuda_available(),
                          reason="no CUDA device (set STRIDEX_CUDA_EMULATOR=1 to run the CUDA "
                                 "tests on the CPU emulator)")

FLOATS = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
INTS = (dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.int64, dt.uint64)
ALL = (dt.bool_,) + INTS + FLOATS
_EPS_ACC = {"f16": 2.0**-24, "bf16": 2.0**-24, "f32": 2.0**-24, "f64": 2.0**-53}
_EPS_OUT = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 0.0, "f64": 0.0}
_ATOL = {"f16": 2.0**-25, "bf16": 2.0**-134, "f32": 2.0**-150, "f64": 2.0**-1075}  # subnormals


def _values(rng, shape, d: dt.DType) -> np.ndarray:
    """Random values of dtype d as a NumPy array (bfloat16: float32 holding bf16 values).
    Integers span the whole range, so that products and sums wrap."""
    if d is dt.bool_:
        return rng.random(shape) < 0.5
    if d.kind in "iu":
        info = np.iinfo(d.np)
        return rng.integers(info.min, info.max, size=shape, dtype=d.np, endpoint=True)
    v = rng.standard_normal(shape)
    if d is dt.bfloat16:
        return bf16_round(v.astype(np.float32))
    return v.astype(d.np)


def _host(a: np.ndarray, d: dt.DType):
    """A CPU tensor of dtype d holding a."""
    if d is dt.bfloat16:
        return T.asarray(np.ascontiguousarray(a, dtype=np.float32), device="cpu").astype(dt.bfloat16)
    return T.asarray(np.ascontiguousarray(a, dtype=d.np), device="cpu")


def _cuda(a: np.ndarray, d: dt.DType):
    return _host(a, d).to("cuda")


def _reference(a: np.ndarray, b: np.ndarray, d: dt.DType):
    """Exact result for ints / bool, float64 product and the error bound for floats."""
    if d is dt.bool_:
        return np.matmul(a.astype(np.int64), b.astype(np.int64)) != 0, None
    if d.kind in "iu":
        wide = np.uint64 if d.kind == "u" else np.int64
        with np.errstate(over="ignore"):
            r = np.matmul(a.astype(wide), b.astype(wide))
        return r.astype(d.np), None
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = np.matmul(a64, b64)
    K = a.shape[-1] if a.ndim > 1 else a.shape[0]
    mag = np.matmul(np.abs(a64), np.abs(b64))
    tol = 2.0 * max(K, 1) * _EPS_ACC[d.sfx] * mag + _EPS_OUT[d.sfx] * np.abs(ref) + _ATOL[d.sfx]
    return ref, tol


def _check(out, a: np.ndarray, b: np.ndarray, d: dt.DType, what: str = ""):
    assert out.device.type == "cuda", what
    assert out.dtype is d, what
    ref, tol = _reference(a, b, d)
    got = to_np(out.to("cpu"))
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    if tol is None:
        np.testing.assert_array_equal(got, ref, err_msg=what)
    else:
        err = np.abs(got.astype(np.float64) - ref)
        bad = err > tol
        if bad.any():
            i = np.argmax(np.where(bad, err / tol, 0))
            pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} results outside the bound; "
                        f"worst: got {got.flat[i]!r}, expected {ref.flat[i]!r}, bound {tol.flat[i]:.3g}")


SHAPES = [(1, 1, 1), (7, 5, 3), (33, 17, 9), (1, 130, 7), (130, 1, 33), (33, 130, 1),
          (130, 33, 130), (9, 64, 72), (16, 200, 24), (130, 128, 129)]


@cuda
@pytest.mark.parametrize("d", ALL, ids=[d.name for d in ALL])
@pytest.mark.parametrize("M,K,N", SHAPES, ids=[f"{m}x{k}x{n}" for m, k, n in SHAPES])
def test_matmul_shapes(d, M, K, N):
    rng = np.random.default_rng(M * 10007 + K * 101 + N)
    a, b = _values(rng, (M, K), d), _values(rng, (K, N), d)
    _check(_cuda(a, d) @ _cuda(b, d), a, b, d, f"{d.name} {M}x{K}x{N}")


@cuda
@pytest.mark.parametrize("d", ALL, ids=[d.name for d in ALL])
def test_matmul_k_zero_and_empty(d):
    rng = np.random.default_rng(1)
    for M, K, N in [(7, 0, 5), (0, 4, 3), (4, 3, 0)]:
        a, b = _values(rng, (M, K), d), _values(rng, (K, N), d)
        out = _cuda(a, d) @ _cuda(b, d)
        assert out.shape == (M, N)
        if M and N:  # K == 0: zeros (the output buffer is not pre-zeroed)
            assert not to_np(out.to("cpu")).any()


@cuda
@pytest.mark.parametrize("d", ALL, ids=[d.name for d in ALL])
@pytest.mark.parametrize("M,K,N", [(37, 45, 70), (40, 80, 72)], ids=["odd", "aligned"])
def test_matmul_layouts(d, M, K, N):
    """Every layout specialisation (nn, nt, tn, tt, gen), reversed and misaligned views;
    "aligned": dims that are multiples of 8, so the 16-byte vector loads / cp.async run."""
    rng = np.random.default_rng(2)
    base_a = _values(rng, (M + 3, 2 * K + 5), d)
    base_b = _values(rng, (2 * K + 5, N + 3), d)
    xa, xb = _cuda(base_a, d), _cuda(base_b, d)
    at, bt = _values(rng, (K, M), d), _values(rng, (N, K), d)
    xat, xbt = _cuda(at, d), _cuda(bt, d)
    an, bn = _values(rng, (M, K), d), _values(rng, (K, N), d)
    xan, xbn = _cuda(an, d), _cuda(bn, d)
    cases = {
        "nn": (xan, an, xbn, bn),
        "nt": (xan, an, xbt.T, bt.T),
        "tn": (xat.T, at.T, xbn, bn),
        "nn_views": (xa[:M, :K], base_a[:M, :K], xb[:K, :N], base_b[:K, :N]),
        "tt": (xat.T, at.T, xbt.T, bt.T),
        "misaligned": (xa[1:M + 1, 1:K + 1], base_a[1:M + 1, 1:K + 1],
                       xb[3:K + 3, 1:N + 1], base_b[3:K + 3, 1:N + 1]),
        "rows_reversed": (xa[M - 1::-1, :K], base_a[M - 1::-1, :K],
                          xb[K - 1::-1, :N], base_b[K - 1::-1, :N]),
        "cols_reversed": (xa[:M, K - 1::-1], base_a[:M, K - 1::-1],
                          xb[:K, N - 1::-1], base_b[:K, N - 1::-1]),
        "generic": (xa[:M, ::2][:, :K], base_a[:M, ::2][:, :K],
                    xb[::2, :][:K, :N], base_b[::2, :][:K, :N]),
        "transposed_reversed": (xat.T[::-1], at.T[::-1], xbt.T[:, ::-1], bt.T[:, ::-1]),
    }
    for what, (x, a, y, b) in cases.items():
        assert x.shape == (M, K) and y.shape == (K, N), what
        _check(x @ y, a, b, d, f"{d.name} {what}")


@cuda
@pytest.mark.parametrize("d", ALL, ids=[d.name for d in ALL])
def test_matmul_batched(d):
    rng = np.random.default_rng(3)
    cases = [((3, 7, 9), (3, 9, 5)),            # plain batch
             ((2, 3, 33, 17), (17, 6)),         # broadcast 2-D operand (batch stride 0)
             ((4, 1, 5, 8), (1, 3, 8, 7)),      # both broadcast
             ((1, 5, 4), (6, 4, 3))]
    for sa, sb in cases:
        a, b = _values(rng, sa, d), _values(rng, sb, d)
        _check(_cuda(a, d) @ _cuda(b, d), a, b, d, f"{d.name} {sa} @ {sb}")
    # batch dims that do not coalesce: a strided slice of the batch, transposed batch axes
    a, b = _values(rng, (4, 6, 7, 9), d), _values(rng, (6, 4, 9, 5), d)
    xa, xb = _cuda(a, d), _cuda(b, d)
    _check(xa[:, ::2] @ xb.permute(1, 0, 2, 3)[:, ::2], a[:, ::2],
           b.transpose(1, 0, 2, 3)[:, ::2], d, f"{d.name} non-coalescable batch")
    _check(xa.permute(1, 0, 3, 2) @ xb[:, :, :7, :], a.transpose(1, 0, 3, 2), b[:, :, :7, :],
           d, f"{d.name} permuted batch, transposed A")


@cuda
@pytest.mark.parametrize("d", ALL, ids=[d.name for d in ALL])
def test_matmul_vectors(d):
    rng = np.random.default_rng(4)
    v, w = _values(rng, (33,), d), _values(rng, (33,), d)
    m, m2 = _values(rng, (33, 7), d), _values(rng, (5, 33), d)
    bm = _values(rng, (2, 33, 4), d)
    xv, xw, xm, xm2, xbm = (_cuda(x, d) for x in (v, w, m, m2, bm))
    _check(T.matmul(xv, xm), v, m, d, "1-D @ 2-D")
    _check(T.matmul(xm2, xv), m2, v, d, "2-D @ 1-D")
    _check(T.matmul(xv, xw), v, w, d, "1-D @ 1-D")
    _check(T.matmul(xv, xbm), v, bm, d, "1-D @ 3-D")
    _check(T.matmul(xv[::-1], xm[:, ::3]), v[::-1], m[:, ::3], d, "strided vector")


@pytest.mark.parametrize("d", INTS + (dt.bool_,), ids=[d.name for d in INTS + (dt.bool_,)])
@cuda
def test_matmul_ints_match_cpu_backend(d):
    """Integers wrap exactly as the CPU gemm does (bit-identical results)."""
    rng = np.random.default_rng(5)
    a, b = _values(rng, (2, 45, 130), d), _values(rng, (2, 130, 67), d)
    cpu = to_np(T.matmul(_host(a, d), _host(b, d)))
    gpu = to_np(T.matmul(_cuda(a, d), _cuda(b, d)).to("cpu"))
    np.testing.assert_array_equal(gpu, cpu)


@cuda
@pytest.mark.parametrize("d", FLOATS, ids=[d.name for d in FLOATS])
def test_matmul_out_and_dot(d):
    rng = np.random.default_rng(6)
    a, b = _values(rng, (9, 20), d), _values(rng, (20, 11), d)
    x, y = _cuda(a, d), _cuda(b, d)
    out = T.empty((9, 11), dtype=d, device="cuda")
    T.matmul(x, y, out=out)
    _check(out, a, b, d, "out=")
    _check(T.dot(x, y), a, b, d, "dot")
    t = T.tensordot(x.reshape(3, 3, 20), y, axes=1)
    _check(t.reshape(9, 11), a, b, d, "tensordot")


@cuda
@pytest.mark.parametrize("d", [dt.int32, dt.bfloat16, dt.float32, dt.float64],
                         ids=["int32", "bfloat16", "float32", "float64"])
def test_grid_stride_loops(d, monkeypatch):
    """More tiles than grid.x and more batches than grid.z: the kernels loop over both."""
    monkeypatch.setattr(G, "MAX_GRID_X", 1)
    monkeypatch.setattr(G, "MAX_GRID_Z", 2)
    rng = np.random.default_rng(7)
    a, b = _values(rng, (5, 130, 20), d), _values(rng, (5, 20, 140), d)
    _check(_cuda(a, d) @ _cuda(b, d), a, b, d, f"{d.name} looped grid")


@cuda
@pytest.mark.parametrize("d", [dt.float16, dt.bfloat16], ids=["float16", "bfloat16"])
def test_16bit_matmul_before_sm80_takes_the_float32_kernel(d, monkeypatch):
    """No cp.async / bf16 mma before compute capability 8.0: the float32 kernel on float32
    copies, rounded once, which is the tensor-core kernel's arithmetic (fp32 accumulation, in
    another order)."""
    from tensor.cuda import runtime as R
    st = R.device_state(0)
    launched = []
    real = G.launch
    monkeypatch.setattr(G, "launch", lambda dd, *a: (launched.append(dd.name), real(dd, *a)))
    rng = np.random.default_rng(8)
    a, b = _values(rng, (2, 37, 45), d), _values(rng, (2, 45, 70), d)
    want = to_np((_cuda(a, d) @ _cuda(b, d)).to("cpu"))
    assert launched == [d.name]
    monkeypatch.setattr(G, "TC_MIN_CC", (st.cc[0] + 1, 0))   # the kernels stay built for st's arch
    launched.clear()
    out = _cuda(a, d) @ _cuda(b, d)
    assert launched == ["float32"] and out.dtype == d
    _check(out, a, b, d, f"{d.name} below sm_80")
    # the same float32 sums as the tensor-core kernel's, but not in the mma's order on a real
    # GPU (the emulator's mma adds in order): within one rounding step of the 16-bit result
    got = to_np(out.to("cpu")).astype(np.float64)
    step = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64) * 2.0 ** (
        13 if d is dt.float16 else 16)
    assert np.all(np.abs(got - want.astype(np.float64)) <= step), d.name


def test_tensor_core_kernels_compile_to_a_trap_before_sm80():
    """Built for sm_75 (as tensor.cuda.precompile(arch="sm_75") does) the 16-bit kernels
    compile instead of failing on cp.async / bf16 mma; the host never launches them there."""
    from tensor.cuda import kernels as CK
    nvrtc_or_skip()
    CK.load_families()
    for d in (dt.float16, dt.bfloat16):
        name = CK.kernel_names("gemm", d)[0]
        cub = CK.cubin("gemm", d, "sm_75", fast=True, names=[name])
        assert cub[:4] == b"\x7fELF" and name.encode() in cub


def test_tensor_core_shared_memory_size_matches_the_header():
    nvrtc = nvrtc_or_skip()
    src = (f'#include "gemm.cuh"\nstatic_assert(SX_TC_SMEM == {G.TC_SMEM}, "smem");\n'
           f'static_assert(SX_TC_STAGES == {G.TC_STAGES} && SX_TC_BK == {G.TC_TILE_K}, "cfg");\n')
    assert nvrtc.compile("gemm_smem", src, "sm_80")[:4] == b"\x7fELF"
