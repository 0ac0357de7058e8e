"""CUDA random fills (family "random", cuda_src/random.cuh): the device side of the CPU's
tensor/cpu/csrc/random.c, on the same Philox4x32-10 stream (cuda_src/philox.h).

For the same (n, seed, offset, parameters) the values equal the CPU's bit for bit: raw bits,
float32/float64 uniforms (explicit fma, nextafter), int64 in [low, high) (u64 % range) and
randperm (the CPU's sequential Fisher-Yates swaps, replayed in parallel rounds of
deterministic reservations -- the same permutation, see random.cuh), and normals (Box-Muller
on the same words, with our own log and sincos polynomials in cuda_src/scalar/random_xform.h
instead of libm's and CUDA's, which differ in the last bits: seen on an H200).
"""
from __future__ import annotations

import ctypes
import math

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK

BLOCK = 256          # SX_RBLK
PERM_SMALL = 4096    # SX_PERM_SMALL: randperm up to this n runs in one single-block launch
PERM_SBLOCK = 1024   # SX_PERM_SBLK
PERM_WIDE = 1 << 32  # from this n on the multi-launch randperm uses 64-bit indices

# kernel name -> (output C type, C types of the two parameters or None)
_FILLS = {
    "rand_bits32": ("uint32_t", None),
    "rand_uniform_f32": ("float", ("float", "float")),
    "rand_uniform_f64": ("double", ("double", "double")),
    "rand_normal_f32": ("float", ("float", "float")),
    "rand_normal_f64": ("double", ("double", "double")),
    "rand_int64": ("int64_t", ("int64_t", "uint64_t")),   # low, range (0: 2**64)
    "rand_perm_keys": ("uint64_t", None),
}

def entries(_d=None) -> tuple[str, dict[str, str]]:
    K = 'extern "C" __global__ void __launch_bounds__'
    src = {}
    for name, (ot, pt) in _FILLS.items():
        params = f", {pt[0]} a, {pt[1]} b" if pt else ""
        args = ", a, b" if pt else ""
        src[name] = (f"{K}(SX_RBLK) {name}({ot} *out, int64_t n, uint64_t seed, uint64_t offset"
                     f"{params}) {{ sx_{name}(out, n, seed, offset{args}); }}")
    src["randperm_small"] = (f"{K}(SX_PERM_SBLK) randperm_small(int64_t *p, int64_t n, "
                             "uint64_t seed, uint64_t offset) { sx_randperm_small(p, n, seed, offset); }")
    for s, it in (("u32", "uint32_t"), ("u64", "uint64_t")):
        src[f"randperm_init_{s}"] = (
            f"{K}(SX_RBLK) randperm_init_{s}(int64_t *p, "
            f"{it} *H, uint64_t *R, {it} *L, uint64_t *cnt, int64_t n, uint64_t seed, "
            f"uint64_t offset) {{ sx_randperm_init<{it}>(p, H, R, L, cnt, n, seed, offset); }}")
        src[f"randperm_reserve_{s}"] = (
            f"{K}(SX_RBLK) randperm_reserve_{s}("
            f"const {it} *H, uint64_t *R, const {it} *L, const uint64_t *cin, uint64_t *cout, "
            f"uint64_t stamp) {{ sx_randperm_reserve<{it}>(H, R, L, cin, cout, stamp); }}")
        src[f"randperm_commit_{s}"] = (
            f"{K}(SX_RBLK) randperm_commit_{s}("
            f"int64_t *p, const {it} *H, const uint64_t *R, const {it} *L, const uint64_t *cin, "
            f"{it} *Lout, uint64_t *cout, uint64_t stamp) "
            f"{{ sx_randperm_commit<{it}>(p, H, R, L, cin, Lout, cout, stamp); }}")
    return '#include "random.cuh"\n', src


CK.register_family("random", entries, [None], exact=True)

_PARAM_CT = {"float": ctypes.c_float, "double": ctypes.c_double, "int64_t": ctypes.c_int64,
             "uint64_t": ctypes.c_uint64}
_INT_SPAN = {"int64_t": (-2**63, 2**63), "uint64_t": (0, 2**64)}


def _k(name, device):
    from . import runtime as R
    return R.kernel("random", None, name, device)


def fill(name: str, out, n: int, seed: int, offset: int, *params) -> None:
    """Launch the fill `name` (a kernel of random.c: rand_uniform_f32, rand_int64, ...) over
    the n contiguous elements of the CUDA tensor out: the CPU kernel's arguments, minus
    nthreads."""
    from . import runtime as R
    if name not in _FILLS:
        raise ValueError(f"random: no CUDA fill kernel {name!r}")
    if n <= 0:
        return
    _, pt = _FILLS[name]
    per_block = 4 if name in ("rand_bits32", "rand_uniform_f32", "rand_normal_f32") else 2
    nb = -(-n // per_block)
    args = [ctypes.c_void_p(out.data_ptr()), ctypes.c_int64(n), ctypes.c_uint64(seed & (2**64 - 1)),
            ctypes.c_uint64(offset & (2**64 - 1))]
    if pt is not None:
        if len(params) != 2:
            raise TypeError(f"random: {name} takes two parameters, got {len(params)}")
        for t, p in zip(pt, params):
            if t in _INT_SPAN and not _INT_SPAN[t][0] <= int(p) < _INT_SPAN[t][1]:
                raise OverflowError(f"random: {name} parameters {params} do not fit ({', '.join(pt)})")
        args += [_PARAM_CT[t](p) for t, p in zip(pt, params)]
    _k(name, out.device)(R.blocks_for(nb, BLOCK, out.device), BLOCK, *args)


def randperm(out, n: int, seed: int, offset: int) -> None:
    """out (int64, n contiguous elements on a CUDA device) = the permutation the CPU's
    randperm gives for (n, seed, offset): the same Fisher-Yates swaps, run in rounds."""
    from . import runtime as R
    if n <= 0:
        return
    dev = out.device
    seed, offset = seed & (2**64 - 1), offset & (2**64 - 1)
    p = ctypes.c_void_p(out.data_ptr())
    if n <= PERM_SMALL:
        _k("randperm_small", dev)(1, PERM_SBLOCK, p, ctypes.c_int64(n), ctypes.c_uint64(seed),
                                  ctypes.c_uint64(offset))
        return
    if n >= 1 << 40:
        raise ValueError(f"permutation: n = {n} is too large for the CUDA randperm (< 2^40)")
    wide = n >= PERM_WIDE
    sfx, idt = ("u64", dt.int64) if wide else ("u32", dt.int32)
    H = empty((n,), idt, dev)
    L = [empty((n,), idt, dev), empty((n,), idt, dev)]
    Rv = empty((n,), dt.int64, dev)
    cnt = empty((2,), dt.int64, dev)
    vp = lambda t, off=0: ctypes.c_void_p(t.data_ptr() + off)  # noqa: E731
    grid = R.blocks_for(-(-n // 2), BLOCK, dev)
    _k(f"randperm_init_{sfx}", dev)(grid, BLOCK, p, vp(H), vp(Rv), vp(L[0]), vp(cnt),
                                    ctypes.c_int64(n), ctypes.c_uint64(seed), ctypes.c_uint64(offset))
    reserve, commit = _k(f"randperm_reserve_{sfx}", dev), _k(f"randperm_commit_{sfx}", dev)
    grid = R.blocks_for(n - 1, BLOCK, dev)
    # pending swaps shrink by ~30% a round: ~3 ln n rounds; read the count back once per batch
    rnd, batch = 0, max(8, int(3 * math.log(n)) + 4)
    while True:
        for _ in range(batch):
            rnd += 1
            a, b = (rnd - 1) % 2, rnd % 2
            stamp = ctypes.c_uint64(rnd << 40)
            reserve(grid, BLOCK, vp(H), vp(Rv), vp(L[a]), vp(cnt, 8 * a), vp(cnt, 8 * b), stamp)
            commit(grid, BLOCK, p, vp(H), vp(Rv), vp(L[a]), vp(cnt, 8 * a), vp(L[b]),
                   vp(cnt, 8 * b), stamp)
        if cnt.tolist()[rnd % 2] == 0:
            return
        batch = 8
        if rnd >= 1 << 23:  # cannot happen (O(log n) rounds); guards the stamp's 24 bits
            raise RuntimeError("permutation: the CUDA randperm did not converge")
