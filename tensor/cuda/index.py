"""CUDA host side of indexing (kernels in cuda_src/index.cuh; CPU twin: tensor/cpu/csrc/index.h).

Registers the kernel family "index": module ``index`` (dtype-free: offsets, gather / take /
scatter-assign on 1/2/4/8-byte elements, nonzero, counts, repeat, scan, radix sort) and
modules ``index_<sfx>`` (the accumulating scatter in each dtype).

The functions here mirror the CPU kernels that tensor/indexing.py and tensor/manipulation.py
call, taking the same (element) shapes and strides, plus the device. Index checks run on the
device: a kernel records the first bad index in a device word (integer atomicMin) and the
function returns that word's Verdict (tensor/cuda/checks.py), read at the stream's next
synchronization; a scatter given the offsets' Verdict as its guard writes nothing if it is bad.

Determinism: no floating-point atomics. Scatters stable-sort the index positions by
destination offset (LSD radix sort), then the last position of each run writes (assignment:
NumPy's last write wins) or the first walks the run in index order, rounding to the storage
type after each add exactly as the CPU kernel does: accumulations equal the CPU's bit for bit.
"""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK
from .checks import Verdict, verdict

__all__ = ["index_offsets", "take", "gather", "scatter", "check_range", "count_nonzero",
           "nonzero_prefix", "nonzero_fill", "count_rows", "repeat_index", "exclusive_scan"]

FAMILY = "index"
BLOCK = 256            # SX_IBLOCK
ITEMS = 8              # SX_ITEMS
TILE = BLOCK * ITEMS   # SX_ITILE
MAXDIM = 32            # SX_IMAXDIM
MAXARR = 8             # SX_IMAXARR
RADIX_BITS = 4         # SX_RADIX_BITS
WIDTHS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t", 16: "sx_w16"}
_I31 = 1 << 31

_K = 'extern "C" __global__ void __launch_bounds__(SX_IBLOCK) '
_COMMON_SRC = f"""\
{_K}sx_fill_i64(int64_t *p, int64_t n, int64_t v) {{ sx_fill_i64_impl(p, n, v); }}
{_K}sx_scan_tiles(const int64_t *in, int64_t n, int64_t *out, int64_t *tot)
{{ sx_scan_tiles_impl(in, n, out, tot); }}
{_K}sx_scan_add(int64_t *out, int64_t n, const int64_t *toff) {{ sx_scan_add_impl(out, n, toff); }}
{_K}sx_index_offsets(sx_off_args a)
{{ if (a.idx32 && sx_istep_fits(a.n)) sx_index_offsets_t<int32_t>(a); else sx_index_offsets_t<int64_t>(a); }}
{_K}sx_sort_init(const int64_t *off, int64_t lo, int64_t unit, int64_t n, int64_t *key, int64_t *val)
{{ sx_sort_init_impl(off, lo, unit, n, key, val); }}
{_K}sx_radix_hist(const int64_t *key, int64_t n, int shift, int64_t *hist)
{{ sx_radix_hist_impl(key, n, shift, hist); }}
{_K}sx_radix_scatter(const int64_t *key, const int64_t *val, int64_t n, int shift,
    const int64_t *base, int64_t *key_out, int64_t *val_out)
{{ sx_radix_scatter_impl(key, val, n, shift, base, key_out, val_out); }}
{_K}sx_nz_tiles(const uint8_t *m, int64_t n, int64_t *tcount) {{ sx_nz_tiles_impl(m, n, tcount); }}
{_K}sx_nz_fill(sx_nz_args a) {{ sx_nz_fill_impl(a); }}
{_K}sx_count_rows(int64_t rows, int64_t len, const uint8_t *m, int64_t *out)
{{ sx_count_rows_impl(rows, len, m, out); }}
{_K}sx_check_range(const int64_t *idx, int64_t n, int64_t lo, int64_t hi, sx_ull *flag)
{{ sx_check_range_impl(idx, n, lo, hi, flag); }}
{_K}sx_repeat_check(const int64_t *c, int64_t n, sx_ull *flag) {{ sx_repeat_check_impl(c, n, flag); }}
{_K}sx_repeat_fill(const int64_t *start, int64_t n, int64_t total, int64_t *out)
{{ sx_repeat_fill_impl(start, n, total, out); }}
"""
_WIDTH_SRC = """\
{K}sx_gather_{W}(sx_gather_args a)
{{ if (a.idx32 && sx_istep_fits(a.nb * a.rn)) sx_gather_t<{T}, int32_t>(a);
  else sx_gather_t<{T}, int64_t>(a); }}
{K}sx_take_{W}(int64_t nb, const int64_t *idx, int64_t is, int64_t size, int64_t xs, int64_t osb,
    const {T} *src, {T} *dst, sx_ull *flag, int idx32) {{
    if (idx32 && sx_istep_fits(nb)) sx_take_t<{T}, int32_t>(nb, idx, is, size, xs, osb, src, dst, flag);
    else sx_take_t<{T}, int64_t>(nb, idx, is, size, xs, osb, src, dst, flag);
}}
{K}sx_scatter_{W}(sx_scatter_args a) {{ sx_scatter_set_t<{T}>(a); }}
"""


def index_entries(d: dt.DType | None) -> tuple[str, dict[str, str]]:
    """Module `index` (d None): the dtype-free kernels; module `index_<sfx>`: scatter-add in d."""
    if d is not None:
        text = f"{_K}sx_scatter_add_{d.sfx}(sx_scatter_args a) {{ sx_scatter_add_t<sx_{d.sfx}>(a); }}"
        return '#include "index.cuh"\n', {f"sx_scatter_add_{d.sfx}": text}
    text = _COMMON_SRC + "".join(_WIDTH_SRC.format(K=_K, W=w, T=t) for w, t in WIDTHS.items())
    # one entry per kernel: the text from one `extern "C"` prefix to the next
    ents = {}
    for part in text.split(_K)[1:]:
        ents[part[:part.index("(")]] = _K + part.rstrip("\n")
    return '#include "index.cuh"\n', ents


DTYPES = (None,) + tuple(dt.ALL)
CK.register_family(FAMILY, index_entries, DTYPES, exact=True)


# ---------------------------------------------------------------- argument structs (ctypes)
_i64, _vp, _int = C.c_int64, C.c_void_p, C.c_int


class OffArgs(C.Structure):  # sx_off_args
    _fields_ = [("out", _vp), ("flag", _vp), ("ptr", _vp * MAXARR), ("n", _i64), ("jbase", _i64),
                ("k", _int), ("nd", _int), ("accumulate", _int), ("idx32", _int),
                ("shape", _i64 * MAXDIM), ("ist", (_i64 * MAXDIM) * MAXARR),
                ("size", _i64 * MAXARR), ("xst", _i64 * MAXARR)]


class GatherArgs(C.Structure):  # sx_gather_args
    _fields_ = [("off", _vp), ("src", _vp), ("dst", _vp), ("nb", _i64), ("rn", _i64), ("osb", _i64),
                ("nr", _int), ("idx32", _int),
                ("rshape", _i64 * MAXDIM), ("sst", _i64 * MAXDIM), ("dst_st", _i64 * MAXDIM)]


class ScatterArgs(C.Structure):  # sx_scatter_args
    _fields_ = [("off", _vp), ("perm", _vp), ("skey", _vp), ("guard", _vp), ("dst", _vp), ("val", _vp),
                ("nb", _i64), ("rn", _i64), ("nbd", _int), ("nr", _int),
                ("bshape", _i64 * MAXDIM), ("vbs", _i64 * MAXDIM), ("rshape", _i64 * MAXDIM),
                ("dst_st", _i64 * MAXDIM), ("vrs", _i64 * MAXDIM)]


class NzArgs(C.Structure):  # sx_nz_args
    _fields_ = [("m", _vp), ("toff", _vp), ("off", _vp), ("n", _i64), ("nd", _int), ("mode", _int),
                ("shape", _i64 * MAXDIM), ("st", _i64 * MAXDIM), ("coords", _vp * MAXDIM)]


ARG_STRUCTS = {"sx_off_args": OffArgs, "sx_gather_args": GatherArgs, "sx_scatter_args": ScatterArgs,
               "sx_nz_args": NzArgs}


# ---------------------------------------------------------------- launching

def _R():
    from . import runtime
    return runtime


def _launch(device, name: str, n: int, *args, d: dt.DType | None = None) -> None:
    R = _R()
    R.kernel(FAMILY, d, name, device)(R.blocks_for(max(n, 1), BLOCK, device), BLOCK, *args)


def _launch_tiles(device, name: str, ntiles: int, *args) -> None:
    R = _R()
    R.kernel(FAMILY, None, name, device)(R.blocks_for(max(ntiles, 1) * BLOCK, BLOCK, device), BLOCK, *args)


def _p(x) -> C.c_void_p:
    return C.c_void_p(x if isinstance(x, int) else x.data_ptr())


def _empty(shape, device, dtype=dt.int64):
    return empty(tuple(shape), dtype, device)


def _flag(device):
    """A device word set to ~0 (no bad index yet)."""
    f = _empty((1,), device)
    _launch(device, "sx_fill_i64", 1, _p(f), C.c_int64(1), C.c_int64(-1))
    return f


def _read(t, i: int = 0) -> int:
    """One int64 of a device tensor, on the host (synchronizes)."""
    R = _R()
    v = C.c_int64()
    R.memcpy_dtoh(R.device_state(t.device.index), C.addressof(v), t.data_ptr() + 8 * i, 8)
    return v.value


def _span(shape, strides) -> int:
    return sum(abs(s) * (n - 1) for n, s in zip(shape, strides) if n > 0)


def _arr(ctype_arr, vals) -> None:
    for i, v in enumerate(vals):
        ctype_arr[i] = v


def _check_rank(nd: int, op: str) -> None:
    if nd > MAXDIM:
        raise ValueError(f"{op}: CUDA indexing supports at most {MAXDIM} dimensions after "
                         f"merging, got {nd}")


def exclusive_scan(inp, n: int, device):
    """(n + 1,) int64 device tensor: out[i] = sum inp[:i] (inp: n contiguous int64 on device)."""
    out = _empty((n + 1,), device)
    if n == 0:
        _launch(device, "sx_fill_i64", 1, _p(out), C.c_int64(1), C.c_int64(0))
        return out
    ntiles = -(-n // TILE)
    tot = _empty((ntiles,), device)
    _launch_tiles(device, "sx_scan_tiles", ntiles, _p(inp), C.c_int64(n), _p(out), _p(tot))
    if ntiles > 1:
        toff = exclusive_scan(tot, ntiles, device)
        _launch(device, "sx_scan_add", n + 1, _p(out), C.c_int64(n), _p(toff))
    return out


# ---------------------------------------------------------------- offsets, take, gather

def index_offsets(device, shape, ptrs, strides, sizes, xst, off):
    """off[p] = sum_j wrap(a_j[p]) * xst[j] over the (coalesced) index space `shape`; the int64
    index arrays at ptrs[j] have element strides strides[j]. Returns the Verdict of j * n + p
    for the first bad index of the first array that has one (the CPU's sx_index_offsets)."""
    nd, k = len(shape), len(ptrs)
    _check_rank(nd, "indexing")
    n = 1
    for s in shape:
        n *= s
    flag = verdict(device)
    idx32 = int(n < _I31 and all(_span(shape, st) < _I31 for st in strides))
    for j0 in range(0, k, MAXARR):
        a = OffArgs()
        a.out, a.flag, a.n, a.jbase = off.data_ptr(), flag.ptr(), n, j0
        a.k, a.nd, a.accumulate, a.idx32 = min(MAXARR, k - j0), nd, int(j0 > 0), idx32
        _arr(a.shape, shape)
        for j in range(a.k):
            a.ptr[j] = ptrs[j0 + j]
            _arr(a.ist[j], strides[j0 + j])
            a.size[j], a.xst[j] = sizes[j0 + j], xst[j0 + j]
        _launch(device, "sx_index_offsets", n, a)
    return flag


def take(device, itemsize: int, nb: int, idx_ptr: int, istride: int, size: int, xs: int, osb: int,
         src_ptr: int, dst_ptr: int):
    """dst[b * osb] = src[wrap(idx[b * istride]) * xs] into fresh memory; the Verdict of the
    first bad b (whose element is zero)."""
    flag = verdict(device)
    _launch(device, f"sx_take_{itemsize}", nb, C.c_int64(nb), _p(idx_ptr), C.c_int64(istride),
            C.c_int64(size), C.c_int64(xs), C.c_int64(osb), _p(src_ptr), _p(dst_ptr), _p(flag.ptr()),
            C.c_int(int(nb < _I31)))
    return flag


def check_range(device, n: int, idx_ptr: int, lo: int, hi: int):
    """The Verdict of the first i < n with the contiguous int64 idx[i] outside [lo, hi)."""
    flag = verdict(device)
    _launch(device, "sx_check_range", n, _p(idx_ptr), C.c_int64(n), C.c_int64(lo), C.c_int64(hi),
            _p(flag.ptr()))
    return flag


def gather(device, itemsize: int, nb: int, off, osb: int, rshape, sst, dst_st, src_ptr: int,
           dst_ptr: int) -> None:
    """dst[b * osb + dr(r)] = src[off[b] + sr(r)] for b < nb, r over rshape (element strides)."""
    _check_rank(len(rshape), "indexing")
    rn = 1
    for s in rshape:
        rn *= s
    if nb * rn == 0:
        return
    a = GatherArgs()
    a.off, a.src, a.dst, a.nb, a.rn, a.osb, a.nr = off.data_ptr(), src_ptr, dst_ptr, nb, rn, osb, len(rshape)
    a.idx32 = int(nb * rn < _I31 and _span(rshape, sst) < _I31 and _span(rshape, dst_st) < _I31)
    _arr(a.rshape, rshape)
    _arr(a.sst, sst)
    _arr(a.dst_st, dst_st)
    _launch(device, f"sx_gather_{itemsize}", nb * rn, a)


# ---------------------------------------------------------------- scatter

def _sort_positions(device, off, nb: int, lo: int, hi: int, unit: int = 1):
    """(perm, keys): positions 0..nb-1 stably sorted by off, whose values lie in [lo, hi] and
    are lo plus multiples of unit (an embedding's rows: the sort keys are row numbers, not
    element offsets, and take log2(row length) bits fewer)."""
    key, val = _empty((nb,), device), _empty((nb,), device)
    _launch(device, "sx_sort_init", nb, _p(off), C.c_int64(lo), C.c_int64(unit), C.c_int64(nb),
            _p(key), _p(val))
    return radix_sort(device, key, val, nb, ((hi - lo) // unit).bit_length())


def radix_sort(device, key, val, n: int, bits: int):
    """(val, key) stably sorted by the low `bits` bits of the n int64 keys (read as unsigned):
    LSD passes of RADIX_BITS (tensor/cuda/sort.py sorts rows by value keys with it too)."""
    if bits == 0 or n <= 1:
        return val, key
    key2, val2 = _empty((n,), device), _empty((n,), device)
    ntiles = -(-n // TILE)
    hist = _empty((ntiles << RADIX_BITS,), device)
    for shift in range(0, bits, RADIX_BITS):
        _launch_tiles(device, "sx_radix_hist", ntiles, _p(key), C.c_int64(n), C.c_int(shift), _p(hist))
        base = exclusive_scan(hist, ntiles << RADIX_BITS, device)
        _launch_tiles(device, "sx_radix_scatter", ntiles, _p(key), _p(val), C.c_int64(n), C.c_int(shift),
                      _p(base), _p(key2), _p(val2))
        key, key2, val, val2 = key2, key, val2, val
    return val, key


def scatter(device, dtype: dt.DType, accumulate: bool, bshape, vbs, off, rshape, dst_st, vrs,
            dst_ptr: int, val_ptr: int, bounds=None, guard=None) -> None:
    """For each index position b (bshape, value strides vbs; destination off[b]) and r over
    rshape: dst[off[b] + dr(r)] = (or +=) val[vb(b) + vr(r)]. Repeated destinations resolve
    as the CPU's sequential loop does: the last assignment wins, additions go in index order.
    bounds: (lo, hi, unit) with lo <= off[b] <= hi and off[b] - lo a multiple of unit, or None
    when the offsets are known to be unique.
    guard: the Verdict of the offsets' check (nothing is written if it is bad), or None."""
    _check_rank(max(len(bshape), len(rshape)), "indexing")
    nb = rn = 1
    for s in bshape:
        nb *= s
    for s in rshape:
        rn *= s
    if nb * rn == 0:
        return
    a = ScatterArgs()
    a.off, a.dst, a.val, a.nb, a.rn = off.data_ptr(), dst_ptr, val_ptr, nb, rn
    if isinstance(guard, Verdict) and guard.waiting():
        a.guard = guard.ptr()
    a.nbd, a.nr = len(bshape), len(rshape)
    if bounds is not None and nb > 1:
        perm, skey = _sort_positions(device, off, nb, *bounds)  # alive until the launch below
        a.perm, a.skey = perm.data_ptr(), skey.data_ptr()
    for name, vals in (("bshape", bshape), ("vbs", vbs), ("rshape", rshape), ("dst_st", dst_st),
                       ("vrs", vrs)):
        _arr(getattr(a, name), vals)
    if accumulate:
        _launch(device, f"sx_scatter_add_{dtype.sfx}", nb * rn, a, d=dtype)
    else:
        _launch(device, f"sx_scatter_{dtype.itemsize}", nb * rn, a)


# ---------------------------------------------------------------- nonzero and counts

def nonzero_prefix(m):
    """(count, toff): nonzero bytes of the contiguous bool device tensor m (one host read),
    and the exclusive scan of its per-tile counts that nonzero_fill uses."""
    n, device = m.numel(), m.device
    ntiles = -(-n // TILE)
    tc = _empty((ntiles,), device)
    if ntiles:
        _launch_tiles(device, "sx_nz_tiles", ntiles, _p(m), C.c_int64(n), _p(tc))
    toff = exclusive_scan(tc, ntiles, device)
    return _read(toff, ntiles), toff


def count_nonzero(m) -> int:
    return nonzero_prefix(m)[0]


def nonzero_fill(m, mode: int, coords=(), off=None, st=(), toff=None) -> None:
    """Positions of m's nonzero bytes in row-major order: mode 0 writes coordinate d to the
    int64 device tensor coords[d]; mode 1 writes sum_d coord_d * st[d] to off."""
    _check_rank(m.ndim, "nonzero")
    n = m.numel()
    if n == 0:
        return
    if toff is None:
        toff = nonzero_prefix(m)[1]
    a = NzArgs()
    a.m, a.toff, a.n, a.nd, a.mode = m.data_ptr(), toff.data_ptr(), n, m.ndim, mode
    a.off = off.data_ptr() if off is not None else 0
    _arr(a.shape, m.shape)
    if mode == 1:
        _arr(a.st, st)
    else:
        for d, c in enumerate(coords):
            a.coords[d] = c.data_ptr()
    _launch_tiles(m.device, "sx_nz_fill", -(-n // TILE), a)


def count_rows(rows: int, length: int, m, out) -> None:
    """out[r] = nonzero bytes of row r of the contiguous (rows, length) bool device tensor m."""
    R = _R()
    R.kernel(FAMILY, None, "sx_count_rows", m.device)(
        R.blocks_for(rows * BLOCK, BLOCK, m.device), BLOCK, C.c_int64(rows), C.c_int64(length),
        _p(m), _p(out))


# ---------------------------------------------------------------- repeat

def repeat_index(n: int, counts):
    """repeat's index expansion on the device: (total, idx) with idx the int64 positions i
    repeated counts[i] times, or (-(i + 1), None) for the first negative count i
    (-(n + i + 1) for a count past INT64_MAX / n: the total could overflow)."""
    device = counts.device
    flag = _flag(device)
    if n:
        _launch(device, "sx_repeat_check", n, _p(counts), C.c_int64(n), _p(flag))
    start = exclusive_scan(counts, n, device)
    bad = _read(flag)
    if bad >= 0:
        return -(bad + 1), None
    total = _read(start, n)
    idx = _empty((total,), device)
    if total:
        _launch(device, "sx_repeat_fill", total, _p(start), C.c_int64(n), C.c_int64(total), _p(idx))
    return total, idx
