"""The CPU emulator of the CUDA backend (tensor/cuda/emulator): shim + fiber scheduler + fake
driver. Kernels are compiled with g++ and run thread by thread; these tests check the emulation
itself (warp/block sync semantics, launch plumbing, the driver's conventions) and that the real
`ew` / `red` module sources run under it. Skipped when no C++ compiler is installed.
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

if not (shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
    pytest.skip("the CUDA emulator needs a C++17 compiler (g++): none installed",
                allow_module_level=True)

from tensor import dtypes as dt  # noqa: E402
from tensor.cpu.build import KernelCompileError  # noqa: E402
from tensor.cuda import emulator as E  # noqa: E402
from tensor.cuda import kernels as K  # noqa: E402
from tensor.cuda.emulator import driver as D  # noqa: E402

OK = D.CUresult.CUDA_SUCCESS


@pytest.fixture(autouse=True)
def ctx():
    assert D.cuInit(0) == (OK,)
    err, dev = D.cuDeviceGet(0)
    assert err == OK
    err, c = D.cuDevicePrimaryCtxRetain(dev)
    assert err == OK and D.cuCtxSetCurrent(c) == (OK,)
    yield
    D.cuDevicePrimaryCtxRelease(dev)


def load(name, source):
    err, mod = D.cuModuleLoadData(E.compile(name, source))
    assert err == OK
    return mod


def fn(mod, name):
    err, f = D.cuModuleGetFunction(mod, name.encode())
    assert err == OK, (name, err)
    return f


def launch(f, grid, block, *args):
    grid = (grid, 1, 1) if isinstance(grid, int) else tuple(grid)
    block = (block, 1, 1) if isinstance(block, int) else tuple(block)
    params = (ctypes.c_void_p * max(len(args), 1))(*[ctypes.addressof(a) for a in args])
    (err,) = D.cuLaunchKernel(f, *grid, *block, 0, 0, ctypes.addressof(params), 0)
    return err


class Dev:
    """A device buffer holding a NumPy array's bytes."""

    def __init__(self, arr):
        self.arr = np.ascontiguousarray(arr)
        err, self.ptr = D.cuMemAlloc(max(self.arr.nbytes, 1))
        assert err == OK
        if self.arr.nbytes:
            assert D.cuMemcpyHtoD(self.ptr, self.arr.ctypes.data, self.arr.nbytes) == (OK,)

    @property
    def p(self):
        return ctypes.c_void_p(int(self.ptr))

    def get(self):
        out = np.empty_like(self.arr)
        assert D.cuMemcpyDtoH(out.ctypes.data, self.ptr, out.nbytes) == (OK,)
        return out

    def free(self):
        assert D.cuMemFree(self.ptr) == (OK,)


SRC = r"""
#include "common.cuh"

/* block tree reduction: warp shuffles, shared memory, __syncthreads; grid-stride input */
extern "C" __global__ void __launch_bounds__(256) block_sum(const long long *x, long long *out, int n) {
    __shared__ long long sm[32];
    long long v = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sm[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? sm[lane] : 0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

/* every shuffle flavour at once: out[4 * t + k] = source thread of idx/up/down/xor */
extern "C" __global__ void shfl_modes(int *out, int b, int width) {
    int t = threadIdx.x, v = 1000 + t;
    out[4 * t + 0] = __shfl_sync(0xffffffffu, v, b, width) - 1000;
    out[4 * t + 1] = __shfl_up_sync(0xffffffffu, v, (unsigned)b, width) - 1000;
    out[4 * t + 2] = __shfl_down_sync(0xffffffffu, v, (unsigned)b, width) - 1000;
    out[4 * t + 3] = __shfl_xor_sync(0xffffffffu, v, b, width) - 1000;
}

extern "C" __global__ void shfl_types(double *d, float *f, unsigned long long *u) {
    int t = threadIdx.x;
    d[t] = __shfl_down_sync(0xffffffffu, d[t], 1);
    f[t] = __shfl_xor_sync(0xffffffffu, f[t], 3);
    u[t] = __shfl_sync(0xffffffffu, u[t], 31 - (t & 31));
}

/* only warp 0 shuffles while the other warps already wait at __syncthreads */
extern "C" __global__ void warp0_only(int *out) {
    int v = threadIdx.x;
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    out[threadIdx.x] = v;
}

/* half a warp shuffles among itself (mask 0xffff), the other half does not */
extern "C" __global__ void half_warp(int *out) {
    int v = threadIdx.x;
    if ((threadIdx.x & 31) < 16) v = __shfl_down_sync(0x0000ffffu, v, 1, 16);
    __syncwarp();
    out[threadIdx.x] = v;
}

/* lanes 0-15 shuffle with the full mask, lanes 16-31 wait at __syncthreads: a deadlock */
extern "C" __global__ void deadlock(int *out) {
    int v = threadIdx.x;
    if ((threadIdx.x & 31) < 16) v = __shfl_sync(0xffffffffu, v, 0);
    __syncthreads();
    out[threadIdx.x] = v;
}

extern "C" __global__ void trap_at(int *out, int which) {
    if ((int)(blockIdx.x * blockDim.x + threadIdx.x) == which) __trap();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

/* votes, atomics, __syncthreads_count */
extern "C" __global__ void votes(unsigned *ballot, int *anyall, int *counter, int *cnt) {
    int t = threadIdx.x, lane = t & 31;
    unsigned b = __ballot_sync(0xffffffffu, (lane % 3) == 0);
    int an = __any_sync(0xffffffffu, t == 5), al = __all_sync(0xffffffffu, lane < 32);
    int none = __any_sync(0xffffffffu, 0), notall = __all_sync(0xffffffffu, lane != 7);
    if (lane == 0) { ballot[t >> 5] = b; anyall[4 * (t >> 5) + 0] = an; anyall[4 * (t >> 5) + 1] = al;
                     anyall[4 * (t >> 5) + 2] = none; anyall[4 * (t >> 5) + 3] = notall; }
    atomicAdd(counter, t);
    atomicMax(counter + 1, t * 7 % 101);
    int c = __syncthreads_count(t % 4 == 0);
    if (t == 0) *cnt = c;
}

/* builtins: 3-d grid and block */
extern "C" __global__ void coords(int *out) {
    int bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int nt = blockDim.x * blockDim.y * blockDim.z;
    int *o = out + 4 * (bid * nt + tid);
    o[0] = bid; o[1] = tid; o[2] = __shfl_sync(0xffffffffu, tid, 0); o[3] = warpSize;
}

/* grid-stride loop over many blocks, 64-bit count */
extern "C" __global__ void saxpy(float *y, const float *x, float a, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x)
        y[i] = __fmaf_rn(a, x[i], y[i]);
}

/* a by-value struct parameter */
struct sx_test_params { int a; double b; long long c[3]; float *out; char tag; };
extern "C" __global__ void by_value(sx_test_params p, int k) {
    p.a += k;   /* a thread's own copy */
    p.out[threadIdx.x] = (float)(p.a + p.b + p.c[threadIdx.x % 3] + p.tag);
}

/* dynamic shared memory: a block reverses its slice of x through it */
extern "C" __global__ void dyn_reverse(const int *x, int *out) {
    SX_EXTERN_SHARED(int, buf);
    const int t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
    buf[t] = x[base + t];
    __syncthreads();
    out[base + t] = buf[n - 1 - t];
}

/* intrinsics with known answers */
extern "C" __global__ void intrinsics(unsigned long long *o) {
    if (threadIdx.x) return;
    o[0] = __popc(0xf0f0u); o[1] = __clz(1); o[2] = __clzll(0); o[3] = __ffs(8);
    o[4] = __brev(1u); o[5] = __byte_perm(0x33221100u, 0x77665544u, 0x5410u);
    o[6] = __umulhi(0xffffffffu, 0xffffffffu); o[7] = __umul64hi(~0ull, ~0ull);
    o[8] = __float_as_uint(__int_as_float(0x3f800000)); o[9] = (unsigned long long)__double_as_longlong(1.0);
    o[10] = min(3, -4) + 10; o[11] = max(2u, 9u); o[12] = (unsigned long long)(max(1.5f, 2.5f) * 2);
}
"""


@pytest.fixture(scope="module")
def test_image():
    return E.compile("emu_selftest", SRC)


@pytest.fixture
def mod(test_image):
    err, m = D.cuModuleLoadData(test_image)
    assert err == OK
    return m


def test_entry_points_regex():
    src = ('// extern "C" __global__ void commented(int x)\n'
           'extern "C" __global__ void __launch_bounds__(SX_BLOCK, (2)) a_f32(int x) {}\n'
           '/* extern "C" __global__ void b(int) */ extern "C"  __global__  void  c2 (float *p) {}\n'
           '__global__ void not_extern_c(int) {}\n')
    assert E.entry_points(src) == ["a_f32", "c2"]


def test_every_module_and_unit_exports_its_kernels():
    """A module's source exports exactly its kernel names, in order; the one-kernel unit the
    runtime compiles on first use exports just that kernel (so entries are self-contained)."""
    for fam, d in K.all_modules():
        names = K.kernel_names(fam, d)
        assert names and E.entry_points(K.source(fam, d)) == names
        for n in names:
            assert E.entry_points(K.source(fam, d, [n])) == [n]
    with pytest.raises(KeyError, match="not in module ew_f32"):
        K.source("ew", dt.float32, ["add_f64"])


@pytest.mark.parametrize("grid,block,n", [(1, 256, 1000), (5, 128, 77777), (3, 1024, 4096)])
def test_block_tree_reduction(mod, grid, block, n):
    x = np.random.default_rng(n).integers(-10**12, 10**12, n, dtype=np.int64)
    dx, dout = Dev(x), Dev(np.zeros(grid, np.int64))
    assert launch(fn(mod, "block_sum"), grid, block, dx.p, dout.p, ctypes.c_int(n)) == OK
    want = [x[np.arange(n) % (grid * block) // block == b].sum() for b in range(grid)]
    np.testing.assert_array_equal(dout.get(), want)
    dx.free(), dout.free()


def _ref_shfl(lane, b, w):
    """The CUDA programming guide's rules (source lane for idx/up/down/xor)."""
    base = lane // w * w
    idx = base + (b % w)
    up = lane - b if lane - b >= base else lane
    down = lane + b if lane + b < base + w else lane
    x = lane ^ b
    xor = x if x < base + w else lane
    return [idx, up, down, xor]


@pytest.mark.parametrize("width", [32, 16, 8, 4, 2])
@pytest.mark.parametrize("b", [0, 1, 3, 5, 15, 16, 31])
def test_shuffle_semantics_at_warp_edges(mod, b, width):
    out = Dev(np.full(64 * 4, -1, np.int32))
    assert launch(fn(mod, "shfl_modes"), 1, 64, out.p, ctypes.c_int(b), ctypes.c_int(width)) == OK
    got = out.get().reshape(64, 4)
    for t in range(64):
        want = [32 * (t // 32) + j for j in _ref_shfl(t % 32, b, width)]
        assert list(got[t]) == want, (t, b, width)
    out.free()


def test_shuffle_types(mod):
    n = 64
    d = np.arange(n, dtype=np.float64) + 0.25
    f = np.arange(n, dtype=np.float32) * 1.5
    u = (np.arange(n, dtype=np.uint64) << np.uint64(40)) | np.uint64(7)
    dd, df, du = Dev(d), Dev(f), Dev(u)
    assert launch(fn(mod, "shfl_types"), 1, n, dd.p, df.p, du.p) == OK
    lane = np.arange(n) % 32
    base = np.arange(n) // 32 * 32
    np.testing.assert_array_equal(dd.get(), np.where(lane < 31, d[np.minimum(np.arange(n) + 1, n - 1)], d))
    np.testing.assert_array_equal(df.get(), f[base + (lane ^ 3)])
    np.testing.assert_array_equal(du.get(), u[base + 31 - lane])


def test_only_warp_0_shuffles(mod):
    out = Dev(np.zeros(128, np.int32))
    assert launch(fn(mod, "warp0_only"), 2, 128, out.p) == OK
    np.testing.assert_array_equal(out.get(), [496] * 32 + list(range(32, 128)))
    out = Dev(np.zeros(64, np.int32))
    assert launch(fn(mod, "half_warp"), 1, 64, out.p) == OK
    t = np.arange(64)
    lane = t % 32
    want = np.where(lane < 15, t + 1, t)        # lane 15: out of its 16-wide segment -> own
    np.testing.assert_array_equal(out.get(), want)


def test_deadlock_is_reported_not_hung(mod, capsys):
    out = Dev(np.zeros(64, np.int32))
    assert launch(fn(mod, "deadlock"), 1, 64, out.p) == D.CUresult.CUDA_ERROR_LAUNCH_FAILED
    msg = D.emu_last_error()
    assert "deadlock" in msg and "deadlock" in capsys.readouterr().err
    assert "__syncthreads" in msg and "shuffle" in msg and "warp 0" in msg
    # the emulator recovers: the next launch runs normally
    assert launch(fn(mod, "warp0_only"), 1, 64, out.p) == OK


def test_trap_fails_the_launch(mod):
    out = Dev(np.zeros(256, np.int32))
    assert launch(fn(mod, "trap_at"), 4, 64, out.p, ctypes.c_int(130)) == D.CUresult.CUDA_ERROR_LAUNCH_FAILED
    assert "__trap" in D.emu_last_error() and "block (2,0,0), thread (2,0,0)" in D.emu_last_error()
    assert launch(fn(mod, "trap_at"), 4, 64, out.p, ctypes.c_int(-1)) == OK
    assert out.get().sum() == 256


def test_votes_atomics_syncthreads_count(mod):
    nt = 96
    ballot, anyall = Dev(np.zeros(3, np.uint32)), Dev(np.zeros(12, np.int32))
    counter, cnt = Dev(np.zeros(2, np.int32)), Dev(np.zeros(1, np.int32))
    assert launch(fn(mod, "votes"), 1, nt, ballot.p, anyall.p, counter.p, cnt.p) == OK
    want_b = sum(1 << lane for lane in range(32) if lane % 3 == 0)
    np.testing.assert_array_equal(ballot.get(), [want_b] * 3)
    np.testing.assert_array_equal(anyall.get().reshape(3, 4), [[1, 1, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0]])
    np.testing.assert_array_equal(counter.get(), [sum(range(nt)), max(t * 7 % 101 for t in range(nt))])
    assert cnt.get()[0] == nt // 4


def test_builtin_coordinates_3d(mod):
    grid, block = (3, 2, 2), (4, 2, 5)   # 40 threads: a full warp and a partial one
    nb, nt = 12, 40
    out = Dev(np.full(nb * nt * 4, -1, np.int32))
    assert launch(fn(mod, "coords"), grid, block, out.p) == OK
    got = out.get().reshape(nb, nt, 4)
    np.testing.assert_array_equal(got[..., 0], np.repeat(np.arange(nb)[:, None], nt, 1))
    np.testing.assert_array_equal(got[..., 1], np.tile(np.arange(nt), (nb, 1)))
    np.testing.assert_array_equal(got[..., 2], np.tile(np.arange(nt) // 32 * 32, (nb, 1)))
    assert (got[..., 3] == 32).all()


def test_grid_stride_many_blocks(mod):
    n = 100003
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    dx, dy = Dev(x), Dev(y)
    assert launch(fn(mod, "saxpy"), 97, 128, dy.p, dx.p, ctypes.c_float(2.5), ctypes.c_longlong(n)) == OK
    want = (np.float64(2.5) * x + y).astype(np.float32)   # fma: one rounding
    np.testing.assert_array_equal(dy.get(), want)


def test_by_value_struct(mod):
    class P(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double), ("c", ctypes.c_longlong * 3),
                    ("out", ctypes.c_void_p), ("tag", ctypes.c_char)]
    out = Dev(np.zeros(64, np.float32))
    p = P(a=3, b=0.5, out=int(out.ptr), tag=b"\x02")
    p.c[:] = [10, 20, 30]
    assert launch(fn(mod, "by_value"), 1, 64, p, ctypes.c_int(100)) == OK
    np.testing.assert_array_equal(out.get(), [103 + 0.5 + [10, 20, 30][t % 3] + 2 for t in range(64)])
    assert p.a == 3   # the kernel changed its own copies only


def test_intrinsics(mod):
    o = Dev(np.zeros(13, np.uint64))
    assert launch(fn(mod, "intrinsics"), 1, 32, o.p) == OK
    want = [8, 31, 64, 4, 1 << 31, 0x55441100, 0xfffffffe, 2**64 - 2, 0x3f800000, 0x3ff0000000000000,
            6, 9, 5]
    assert [int(v) for v in o.get()] == want


# ---------------------------------------------------------------------- the real kernel modules
def _indexer(n_ops, shape, ptrs, strides_bytes):
    ix = K.INDEXER[n_ops]()
    for k, p in enumerate(ptrs):
        ix.ptr[k] = int(p)
    ix.n = int(np.prod(shape))
    ix.nd = len(shape)
    ix.idx32 = 1
    ix.contig = 0
    for d, s in enumerate(shape):
        ix.shape[d] = s
        for k in range(n_ops):
            ix.stride[k][d] = strides_bytes[k][d]
    return ix


@pytest.mark.parametrize("d", [dt.float32, dt.int64], ids=lambda d: d.sfx)
def test_ew_module_add(d):
    mod = load(K.module_name("ew", d), K.source("ew", d))
    f = fn(mod, f"add_{d.sfx}")
    rng = np.random.default_rng(3)
    npd = np.dtype(d.name) if d.name in ("float32", "int64") else None
    a = (rng.standard_normal((5, 7, 9)) * 100).astype(npd)
    b = (rng.standard_normal((7, 1)) * 100).astype(npd)     # broadcast along dims 0 and 2
    da, db, do = Dev(a), Dev(b), Dev(np.zeros((5, 7, 9), npd))
    item = a.itemsize
    strides = [[7 * 9 * item, 9 * item, item], [7 * 9 * item, 9 * item, item], [0, item, 0]]
    for idx32 in (1, 0):
        ix = _indexer(3, (5, 7, 9), [do.ptr, da.ptr, db.ptr], strides)
        ix.idx32 = idx32
        assert launch(f, 2, 256, ix) == OK
        np.testing.assert_array_equal(do.get(), a + b)
    ix = _indexer(3, (315,), [do.ptr, da.ptr, da.ptr], [[item], [item], [item]])
    ix.contig = 1
    assert launch(f, 1, 256, ix) == OK
    np.testing.assert_array_equal(do.get().ravel(), (a + a).ravel())


@pytest.mark.parametrize("d", [dt.float32, dt.int64], ids=lambda d: d.sfx)
def test_red_module_sum_and_cumsum(d):
    mod = load(K.module_name("red", d), K.source("red", d))
    npd = np.dtype(d.name)
    rng = np.random.default_rng(4)
    R_ = 5000
    x = (rng.standard_normal(R_) * 100).astype(npd)
    dx = Dev(x)
    out = Dev(np.zeros(1, npd))
    a = K.RED_ARGS()
    a.in_, a.out, a.mode, a.nk, a.nr = int(dx.ptr), int(out.ptr), 0, 0, 1
    a.K, a.R, a.G, a.chunk = 1, R_, 1, R_
    a.rs[0], a.rin[0] = R_, x.itemsize
    assert launch(fn(mod, f"sum_{d.sfx}"), 1, 256, a) == OK
    if d.kind == "f":
        np.testing.assert_allclose(out.get()[0], x.astype(np.float64).sum(), rtol=1e-5)
    else:
        assert out.get()[0] == x.sum()
    # two-pass: mode 1 (G partials) then mode 2 (merge), argmax
    G = 7
    part = Dev(np.zeros(G, np.float32 if d.kind == "f" else np.int64))
    a.part, a.mode, a.G, a.chunk = int(part.ptr), 1, G, -(-R_ // G)
    assert launch(fn(mod, f"sum_{d.sfx}"), 3, 256, a) == OK
    a.mode = 2
    assert launch(fn(mod, f"sum_{d.sfx}"), 1, 256, a) == OK
    if d.kind == "f":
        np.testing.assert_allclose(out.get()[0], x.astype(np.float64).sum(), rtol=1e-5)
    else:
        assert out.get()[0] == x.sum()
    am = Dev(np.zeros(1, np.int64))
    a.out, a.mode, a.G, a.chunk = int(am.ptr), 0, 1, R_
    assert launch(fn(mod, f"argmax_{d.sfx}"), 1, 256, a) == OK
    assert am.get()[0] == np.argmax(x)
    # inclusive scan along the last axis of a (3, 700) array
    y = (rng.standard_normal((3, 700)) * 10).astype(npd)
    dy = Dev(y)
    cs_dtype = npd if d.kind == "f" else np.int64
    dout = Dev(np.zeros((3, 700), cs_dtype))
    s = K.SCAN_ARGS()
    s.in_, s.out, s.nd, s.rows, s.L = int(dy.ptr), int(dout.ptr), 2, 3, 700
    s.mode, s.G, s.chunk = 0, 1, 700   # a block per row (launch.scan splits few long rows)
    s.sh[0], s.sh[1] = 3, 700
    s.si[0], s.si[1] = 700 * y.itemsize, y.itemsize
    s.so[0], s.so[1] = 700 * np.dtype(cs_dtype).itemsize, np.dtype(cs_dtype).itemsize
    assert launch(fn(mod, f"cumsum_{d.sfx}"), 2, 256, s) == OK
    if d.kind == "f":
        np.testing.assert_allclose(dout.get(), np.cumsum(y.astype(np.float64), axis=1), rtol=1e-4, atol=1e-3)
    else:
        np.testing.assert_array_equal(dout.get(), np.cumsum(y, axis=1))


# ---------------------------------------------------------------------- driver conventions
def test_compile_error_has_log_and_numbered_source():
    src = '#include "common.cuh"\nextern "C" __global__ void broken(float *x) {\n' \
          "    x[0] = undefined_thing + 1;\n}\n"
    with pytest.raises(KernelCompileError) as ei:
        E.compile("broken_emu", src)
    msg = str(ei.value)
    assert "'broken_emu'" in msg and "undefined_thing" in msg
    assert "    3      x[0] = undefined_thing + 1;" in msg


def test_launch_validation(mod):
    f = fn(mod, "warp0_only")
    out = Dev(np.zeros(1024, np.int32))
    arg = out.p
    p = (ctypes.c_void_p * 1)(ctypes.addressof(arg))
    bad = D.CUresult.CUDA_ERROR_INVALID_VALUE
    assert D.cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, 0, ctypes.addressof(p), 0) == (bad,)
    assert D.cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 48 * 1024 + 1, 0, ctypes.addressof(p), 0) == (bad,)
    assert D.cuLaunchKernel(f, 0, 1, 1, 64, 1, 1, 0, 0, ctypes.addressof(p), 0) == (bad,)
    assert D.cuLaunchKernel(f, 1, 1, 1, 1024, 1, 1, 0, 0, ctypes.addressof(p), 0) == (OK,)
    assert D.cuModuleGetFunction(mod, b"no_such_kernel")[0] == D.CUresult.CUDA_ERROR_NOT_FOUND
    assert D.cuModuleLoadData(b"\x7fELF not an emulator image")[0] == D.CUresult.CUDA_ERROR_INVALID_IMAGE
    # the binding's other kernelParams form: ((values), (ctypes types))
    assert D.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, D.CUstream(0),
                            ((int(out.ptr),), (ctypes.c_void_p,)), 0) == (OK,)


def test_dynamic_shared_memory_and_its_opt_in_limit(mod):
    """Launches get their sharedMemBytes of dynamic shared memory; above 48 KiB only after the
    function's MAX_DYNAMIC_SHARED_SIZE_BYTES was raised (as on a GPU), up to the opt-in limit."""
    f = fn(mod, "dyn_reverse")
    x = np.arange(4 * 1024, dtype=np.int32)
    dx, out = Dev(x), Dev(np.zeros_like(x))
    args = [dx.p, out.p]
    p = (ctypes.c_void_p * 2)(*[ctypes.addressof(a) for a in args])
    assert D.cuLaunchKernel(f, 4, 1, 1, 1024, 1, 1, 4096, 0, ctypes.addressof(p), 0) == (OK,)
    np.testing.assert_array_equal(out.get(), x.reshape(4, 1024)[:, ::-1].ravel())
    big, bad = 64 * 1024, D.CUresult.CUDA_ERROR_INVALID_VALUE
    assert D.cuLaunchKernel(f, 4, 1, 1, 1024, 1, 1, big, 0, ctypes.addressof(p), 0) == (bad,)
    attr = D.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    assert D.cuFuncSetAttribute(f, attr, 1 << 30) == (bad,)
    assert D.cuFuncSetAttribute(f, attr, big) == (OK,)
    assert D.cuLaunchKernel(f, 4, 1, 1, 1024, 1, 1, big, 0, ctypes.addressof(p), 0) == (OK,)
    np.testing.assert_array_equal(out.get(), x.reshape(4, 1024)[:, ::-1].ravel())


def test_memory_copies_memset_and_bounds():
    err, total = D.cuDeviceTotalMem(D.CUdevice(0))
    assert err == OK and total > 0
    err, free0, total2 = D.cuMemGetInfo()
    assert err == OK and total2 == total
    err, p = D.cuMemAlloc(1000)
    assert err == OK and int(p) % 256 == 0
    assert D.cuMemGetInfo()[1] == free0 - 1024
    err, q = D.cuMemAlloc(1000)
    assert D.cuMemsetD32Async(p, 0xDEADBEEF, 250, 0) == (OK,)
    assert D.cuMemcpyDtoDAsync(q, p, 1000, 0) == (OK,)
    assert D.cuMemsetD8(int(q) + 4, 0x11, 4) == (OK,)
    h = np.zeros(250, np.uint32)
    assert D.cuMemcpyDtoHAsync(h.ctypes.data, q, 1000, 0) == (OK,)
    assert h[0] == 0xDEADBEEF and h[1] == 0x11111111 and h[249] == 0xDEADBEEF
    bad = D.CUresult.CUDA_ERROR_INVALID_VALUE
    assert D.cuMemcpyHtoD(int(p) + 900, h.ctypes.data, 200) == (bad,)   # past the allocation
    assert D.cuMemcpyDtoH(h.ctypes.data, 12345, 4) == (bad,)            # not device memory
    assert D.cuMemFree(p) == (OK,) and D.cuMemFree(q) == (OK,)
    assert D.cuMemFree(p) == (bad,)
    assert D.cuMemGetInfo()[1] == free0


def test_out_of_memory():
    err, free, total = D.cuMemGetInfo()
    assert D.cuMemAlloc(free + 1) == (D.CUresult.CUDA_ERROR_OUT_OF_MEMORY, None)
    saved = D._S.total
    try:
        D._S.total = D._S.used + (1 << 20)       # a 1 MiB device from here on
        err, p = D.cuMemAlloc(600 << 10)
        assert err == OK
        assert D.cuMemAlloc(600 << 10)[0] == D.CUresult.CUDA_ERROR_OUT_OF_MEMORY
        assert D.cuMemFree(p) == (OK,)
        err, p = D.cuMemAlloc(600 << 10)
        assert err == OK and D.cuMemFree(p) == (OK,)
    finally:
        D._S.total = saved


def test_streams_events_and_device_queries(mod):
    err, s = D.cuStreamCreate(D.CUstream_flags.CU_STREAM_NON_BLOCKING)
    assert err == OK
    err, e0 = D.cuEventCreate(D.CUevent_flags.CU_EVENT_DEFAULT)
    err, e1 = D.cuEventCreate(0)
    assert D.cuEventRecord(e0, s) == (OK,)
    out = Dev(np.zeros(64, np.int32))
    assert launch(fn(mod, "warp0_only"), 1, 64, out.p) == OK
    assert D.cuEventRecord(e1, int(s)) == (OK,)
    assert D.cuStreamWaitEvent(s, e1, 0) == (OK,)
    assert D.cuEventSynchronize(e1) == (OK,) and D.cuStreamSynchronize(s) == (OK,)
    assert D.cuEventQuery(e1) == (OK,) and D.cuStreamQuery(s) == (OK,)
    err, ms = D.cuEventElapsedTime(e0, e1)
    assert err == OK and isinstance(ms, float) and ms >= 0
    err, e2 = D.cuEventCreate(D.CUevent_flags.CU_EVENT_DISABLE_TIMING)
    D.cuEventRecord(e2, 0)
    assert D.cuEventElapsedTime(e0, e2)[0] == D.CUresult.CUDA_ERROR_INVALID_HANDLE
    for e in (e0, e1, e2):
        assert D.cuEventDestroy(e) == (OK,)
    assert D.cuStreamDestroy(s) == (OK,)
    A = D.CUdevice_attribute
    dev = D.CUdevice(0)
    assert D.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == (OK, 2)
    assert D.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == (OK, 9)
    assert D.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev) == (OK, 32)
    err, name = D.cuDeviceGetName(64, dev)
    assert err == OK and len(name) == 64 and b"emulator" in name
    assert D.cuGetErrorName(D.CUresult.CUDA_ERROR_OUT_OF_MEMORY) == (OK, b"CUDA_ERROR_OUT_OF_MEMORY")
    assert D.cuGetErrorString(2) == (OK, b"out of memory")
    assert D.cuDeviceGetCount() == (OK, 1) and D.cuDriverGetVersion()[0] == OK
    assert int(D.cuCtxGetCurrent()[1]) != 0


def test_protect_catches_host_access_to_device_memory(tmp_path):
    script = textwrap.dedent("""
        import ctypes, sys
        import numpy as np
        from tensor.cuda.emulator import driver as D
        D.cuInit(0); _, c = D.cuDevicePrimaryCtxRetain(0); D.cuCtxSetCurrent(c)
        _, p = D.cuMemAlloc(64)
        h = np.arange(16, dtype=np.int32)
        assert D.cuMemcpyHtoD(p, h.ctypes.data, 64) == (D.CUresult.CUDA_SUCCESS,)
        g = np.zeros(16, np.int32)
        assert D.cuMemcpyDtoH(g.ctypes.data, p, 64) == (D.CUresult.CUDA_SUCCESS,)
        assert (g == h).all()
        from tensor.cuda import emulator as E
        _, m = D.cuModuleLoadData(E.compile("emu_protect", 'extern "C" __global__ void inc(int *x) '
                                            '{ x[threadIdx.x] += 1; }'))
        _, f = D.cuModuleGetFunction(m, b"inc")
        arg = ctypes.c_void_p(int(p))
        ps = (ctypes.c_void_p * 1)(ctypes.addressof(arg))
        assert D.cuLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, 0, ctypes.addressof(ps), 0)[0] == 0
        assert D.cuMemcpyDtoH(g.ctypes.data, p, 64) == (D.CUresult.CUDA_SUCCESS,)
        assert (g == h + 1).all()
        print("copies ok", flush=True)
        ctypes.string_at(int(p), 4)          # host code touching device memory
        print("not caught", flush=True)
    """)
    import os
    env = dict(os.environ, STRIDEX_EMU_PROTECT="1", PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=60)
    assert "copies ok" in r.stdout and "not caught" not in r.stdout
    assert r.returncode != 0


_NESTED = textwrap.dedent("""
    import sys
    import numpy as np
    from tensor.cuda.emulator import driver as D
    OK = D.CUresult.CUDA_SUCCESS
    D.cuInit(0); _, c = D.cuDevicePrimaryCtxRetain(0); D.cuCtxSetCurrent(c)
    _, p = D.cuMemAlloc(64)
    h, g = np.arange(16, dtype=np.int32), np.zeros(16, np.int32)
    nested, handles = [], []
    scratch = np.zeros(128, np.uint8)

    def tracer(frame, event, arg):
        # at every line of the driver: what a tracer's op does inside a driver call (its
        # allocator takes a segment of its own, it copies, it makes an event)
        if event == "line" and frame.f_code.co_filename == D.__file__ and len(nested) < 300:
            err, q = D.cuMemAlloc(512)
            assert err == OK and D.cuMemcpyHtoD(q, scratch.ctypes.data, 128) == (OK,)
            nested.append(q)
            handles.append(int(D.cuEventCreate(0)[1]))
        return tracer

    sys.settrace(tracer)
    try:
        for _ in range(10):
            assert D.cuMemcpyHtoD(p, h.ctypes.data, 64) == (OK,)
            assert D.cuMemcpyDtoH(g.ctypes.data, p, 64) == (OK,)
            assert (g == h).all()
            handles.append(int(D.cuEventCreate(0)[1]))
    finally:
        sys.settrace(None)
    assert len(nested) > 20 and len(set(handles)) == len(handles), (len(nested), len(handles))
    for q in nested + [p]:
        assert D.cuMemFree(q) == (OK,)
    for e in handles:
        assert D.cuEventDestroy(e) == (OK,)
    print("OK", len(nested))
""")


@pytest.mark.parametrize("protect", ["0", "1"])
def test_driver_calls_with_a_tracer_allocating_and_copying_inside_them(protect):
    """The driver's lock is re-entrant, so a tracer or finalizer may run a whole op inside a
    driver call. The pointer check read an index into the allocation list that a nested
    cuMemAlloc shifted (CUDA_ERROR_INVALID_VALUE on a valid copy), two handle() calls could
    return one handle, and with STRIDEX_EMU_PROTECT=1 a nested copy's end protected the
    outer copy's memory (and changed the table it iterated)."""
    import os
    env = dict(os.environ, STRIDEX_EMU_PROTECT=protect, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", _NESTED], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-3000:]


def test_contraction_follows_nvrtc_family_choice():
    """Modules of the families NVRTC contracts (fmad) contract a * b + c here too, where the
    host has FMA instructions; the others (and fused kernels) do not: an H200 showed a fused
    matmul epilogue rounding unlike eager's, which the emulator could not see before."""
    if E.contraction(True) == E.contraction(False):
        pytest.skip("the host has no FMA instructions (or STRIDEX_EMU_FMA=0)")
    src = ('extern "C" __global__ void madd(const float *a, float *y) '
           '{ y[0] = a[0] * a[0] - a[1]; }\n')
    x = np.array([1 + 2.0 ** -12, 1 + 2.0 ** -11], np.float32)   # a*a = 1 + 2^-11 + 2^-24
    got = []
    for fmad in (False, True):
        err, mod = D.cuModuleLoadData(E.compile("madd_check", src, fmad=fmad))
        assert err == OK
        a, y = Dev(x), Dev(np.zeros(1, np.float32))
        assert launch(fn(mod, "madd"), 1, 1, a.p, y.p) == OK
        got.append(float(y.get()[0]))
    assert got == [0.0, 2.0 ** -24], got
