"""Host side of the CUDA elementwise and reduction templates: argument structs and grids.

Same decisions as the CPU (tensor/elementwise.launch, tensor/reductions._run): broadcast
operands arrive with stride 0, dimensions contiguous across all operands are merged, and the
kernel gets shape and byte strides by value in one struct (no device allocation per launch).
On top: 32-bit indexing when every offset fits, the contiguous path (4 elements per load
when every operand is aligned), Python scalars by value inside the struct, and the tiled path
for operands in different memory orders (an input transposed relative to the output: see
_tile_plan; elementwise_path tells which path a launch takes).
"""
from __future__ import annotations

import ctypes
import threading

from .. import dtypes as dt
from .._tensor import Tensor, empty
from ..views import coalesce
from . import runtime as R
from .kernels import INDEXER, MAXDIM, RED_ARGS, SCAN_ARGS

BLOCK = 256    # SX_BLOCK
RBLOCK = 256   # SX_RBLOCK
_I32 = 2**31 - 1


def _span(shape, strides) -> int:
    """Largest |byte offset| a strided operand reaches."""
    return sum((n - 1) * abs(s) for n, s in zip(shape, strides))


TILE = 32       # SX_TILE: edge of the tiled path's tiles
# Tiled only when both tile dims have TILE_MIN elements and the pair TILE_AREA: thinner
# problems would leave most of a tile's threads idle, and small (batched) matrices are read
# coalesced enough by the strided path (a block's 256 elements cover a whole matrix, in L1).
TILE_MIN = 4
TILE_AREA = 512


def _tile_plan(sh, st, ops, scal):
    """The tiled path's layout for coalesced dims `sh` and byte strides `st` (operand 0 the
    output), or None: (dim order with B then A last, bit mask of the inputs to stage).

    A is the output's fastest dim (smallest |stride|). An input is transposed relative to the
    output when its stride along A is nonzero and larger than its smallest nonzero |stride|,
    which is one element, along another dim B: read along A (what the strided path does) a
    warp would touch a sector per lane. The tiled kernel reads such inputs along B into shared
    memory and writes the output along A. B is that of the first such input of the largest
    itemsize; every input contiguous along that B is staged."""
    nd = len(sh)
    if nd < 2:
        return None
    so = st[0]
    a = min(range(nd), key=lambda i: (abs(so[i]), -i))
    if so[a] == 0:   # an output with a zero stride (an overlapping view): not ours
        return None
    fast = {}
    for k in range(1, len(ops)):
        if scal >> k & 1:
            continue
        s = st[k]
        if s[a] == 0:     # broadcast along A: one address per warp, coalesced enough
            continue
        isz = ops[k].itemsize
        b = min((i for i in range(nd) if s[i] != 0), key=lambda i: (abs(s[i]), -i))
        if b != a and abs(s[b]) == isz and abs(s[a]) > isz:
            fast[k] = (b, isz)
    if not fast:
        return None
    kb = max(fast, key=lambda k: (fast[k][1], -k))
    b = fast[kb][0]
    if sh[a] < TILE_MIN or sh[b] < TILE_MIN or sh[a] * sh[b] < TILE_AREA:
        return None
    mask = 0
    for k, (bk, _) in fast.items():
        if bk == b:
            mask |= 1 << k
    order = [i for i in range(nd) if i != a and i != b] + [b, a]
    return order, mask


def _contig_plan(ix, ops, scal: int, n: int, dev):
    """The contiguous path: operand k's element i at ptr[k] + i * itemsize."""
    path = "contig"
    ix.nd, ix.contig, ix.idx32 = 1, 1, int(n <= _I32)
    ix.shape[0] = n
    threads = n
    if n >= 4 and all(scal >> k & 1 or x.data_ptr() % (4 * x.itemsize) == 0
                      for k, x in enumerate(ops)):
        ix.vec = 1
        threads = n // 4
        path = "vec"
    return ix, R.blocks_for(threads, BLOCK, dev), path


_PLANS: dict = {}   # layout key -> (indexer template, grid blocks, path): see _plan
_PLANS_MAX = 4096


def _plan(name: str, out, ins: list):
    """(indexer, grid blocks, path) of an elementwise launch; path is "contig", "vec" (the
    contiguous path, 4 elements per load), "tiled" or "strided". Planned once per layout
    (shape, each operand's strides and itemsize or scalar slot, 16-byte alignment, device):
    later launches copy the planned indexer and set its pointers and scalar values."""
    dev = out._storage.device
    ops = [out] + ins
    sig, slots = [], []   # per operand: its layout, and its address or scalar value
    aligned = True
    for x in ops:
        if hasattr(x, "bits"):  # a _Scalar
            sig.append(None)
            slots.append(x.bits)
            continue
        if x._storage.device != dev:
            raise ValueError(f"{name}: operands are on different devices: {dev} and "
                             f"{x._storage.device}")
        isz, ptr = x._dtype.itemsize, x.data_ptr()
        sig.append((x._strides, isz))
        slots.append(ptr)
        aligned = aligned and ptr % (4 * isz) == 0
    key = (out._shape, tuple(sig), aligned, dev)
    hit = _PLANS.get(key)
    if hit is None:
        ix, blocks, path = _plan_layout(name, out, ops)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = (type(ix).from_buffer_copy(ix), blocks, path)
        return ix, blocks, path
    tmpl, blocks, path = hit
    ix = type(tmpl).from_buffer_copy(tmpl)
    for k, (layout, v) in enumerate(zip(sig, slots)):
        if layout is None:
            ix.sval[k] = v
        else:
            ix.ptr[k] = v
    return ix, blocks, path


def _plan_layout(name: str, out, ops: list):
    """_plan's work for a layout it has not seen (ops: out and the inputs, on one device)."""
    shape = out._shape
    n = 1
    for s in shape:
        n *= s
    dev = out._storage.device
    ix = INDEXER[len(ops)]()
    contig = out.is_contiguous()
    scal = 0
    for k, x in enumerate(ops):
        if hasattr(x, "bits"):  # a _Scalar
            scal |= 1 << k
            ix.sval[k] = x.bits
        else:
            ix.ptr[k] = x.data_ptr()
            contig = contig and x._shape == shape and x.is_contiguous()
    ix.n, ix.scalar = n, scal
    threads = n
    if contig:
        return _contig_plan(ix, ops, scal, n, dev)
    else:
        path = "strided"
        strides = [[0] * len(shape) if scal >> k & 1 else [s * x.itemsize for s in x._strides]
                   for k, x in enumerate(ops)]
        # walk the output in its memory order (any dim order gives the same elementwise
        # result): operands laid out like the output then merge into one contiguous dim
        perm = sorted(range(len(shape)), key=lambda i: -abs(strides[0][i]))
        if perm != list(range(len(shape))):
            shape = [shape[i] for i in perm]
            strides = [[s[i] for i in perm] for s in strides]
        sh, st = coalesce(shape, strides)
        if not sh:
            sh, st = [1], [[0] for _ in strides]
        if len(sh) == 1 and all(scal >> k & 1 or st[k][0] == x.itemsize for k, x in enumerate(ops)):
            return _contig_plan(ix, ops, scal, n, dev)
        if len(sh) > MAXDIM:
            raise _TooManyDims(f"{name}: a CUDA launch takes at most {MAXDIM} dimensions after "
                               f"merging contiguous ones, got {len(sh)} (shape {shape})")
        # 32-bit strided loop: the last `i += blockDim * gridDim` must not wrap either
        fits = n + R.blocks_for(n, BLOCK, dev) * BLOCK <= _I32
        for s in st:
            fits = fits and _span(sh, s) <= _I32
        # the tiled kernel indexes in 32 bits only (margin: edge tiles run past the shape)
        tile = _tile_plan(sh, st, ops, scal) if fits and n <= _I32 - 1024 else None
        if tile is not None:
            order, ix.tile = tile
            sh = [sh[i] for i in order]
            st = [[s[i] for i in order] for s in st]
            path = "tiled"
            na, nb = sh[-1], sh[-2]
            threads = (-(-na // TILE)) * (-(-nb // TILE)) * (n // (na * nb)) * BLOCK
        ix.nd = len(sh)
        ix.shape[:len(sh)] = sh
        for k, s in enumerate(st):
            ix.stride[k][:len(sh)] = s
        ix.idx32 = int(fits)
    return ix, R.blocks_for(threads, BLOCK, dev), path


def elementwise(d, name: str, out, ins: list) -> None:
    """out[...] = kernel(ins...) on out's CUDA device; ins are Tensors broadcast to out.shape
    (same device) or tensor.elementwise._Scalar."""
    for s in out._shape:
        if s == 0:
            return
    ins = [_wide_scalar(x, out) if type(x) is not Tensor and x.bits is None else x for x in ins]
    try:
        ix, blocks, _ = _plan(name, out, ins)
    except _TooManyDims:
        # a layout keeping more than MAXDIM dims after merging: one launch per index of the
        # shortest dim, each on views with one dim less (the CPU takes any rank)
        j = min(range(len(out._shape)), key=lambda i: out._shape[i])
        for i in range(out._shape[j]):
            elementwise(d, name, _slice(out, j, i), [_slice(x, j, i) for x in ins])
        return
    R.kernel("ew", d, name, out._storage.device)(blocks, BLOCK, ix)


class _TooManyDims(ValueError):
    """A launch's layout keeps more than MAXDIM dims after merging (the caller may split it)."""


def _slice(x, j: int, i: int):
    """x[..., i, ...] (index i of dim j) for a Tensor operand; a scalar operand as it is."""
    if type(x) is not Tensor:
        return x
    from ..views import basic_index
    return basic_index(x, (slice(None),) * j + (i,))


def upload(a, dtype, device) -> Tensor:
    """A new tensor on the CUDA device holding the C-contiguous NumPy array a (of dtype's
    bytes): a kernel's table or plan. One asynchronous copy on the current stream."""
    t = empty(a.shape, dtype, device)
    R.memcpy_htod(R.device_state(device.index or 0), t.data_ptr(), a.ctypes.data, a.nbytes)
    return t


def _wide_scalar(x, out):
    """A scalar too wide for the indexer's 8-byte slots (complex128): its bytes copied to the
    device, read with stride 0 as a broadcast operand."""
    t = empty((), x.dtype, out._storage.device)
    R.memcpy_htod(R.device_state(out._storage.device.index), t.data_ptr(), x.ptr, x.dtype.itemsize)
    return t._view(out._shape, (0,) * len(out._shape))


def elementwise_path(out, ins: list) -> str:
    """Which path elementwise(..., out, ins) takes: "contig", "vec", "tiled" or "strided"
    ("empty" when out has no elements). Launches nothing."""
    if any(s == 0 for s in out._shape):
        return "empty"
    return _plan("elementwise_path", out, ins)[2]


_tls = threading.local()


def contiguous_op(d, name: str, out, n: int, a, b=None) -> None:
    """Fast path: out = kernel(a[, b]) with out, a (and a tensor b) contiguous of one shape on
    one device; b may be a _Scalar. Reuses one argument struct per kernel and thread (the
    driver copies kernel arguments at launch; another thread must not refill it meanwhile)."""
    if n == 0:
        return
    if b is not None and type(b) is not Tensor and b.bits is None:
        elementwise(d, name, out, [a, b])
        return
    dev = out._storage.device
    nops = 2 if b is None else 3
    key = (name, dev.index)   # name carries the dtype suffix
    try:
        fast = _tls.fast
    except AttributeError:
        fast = _tls.fast = {}
    hit = fast.get(key)
    if hit is None:
        kern = R.kernel("ew", d, name, dev)
        ix = INDEXER[nops]()
        ix.nd, ix.contig = 1, 1
        params = (ctypes.c_void_p * 1)(ctypes.addressof(ix))
        hit = fast[key] = (kern, ix, params, ctypes.addressof(params))
    kern, ix, params, paddr = hit
    po, pa = out.data_ptr(), a.data_ptr()
    ix.ptr[0], ix.ptr[1] = po, pa
    vec = po % (4 * out.itemsize) == 0 and pa % (4 * a.itemsize) == 0
    scal = 0
    if b is not None:
        if type(b) is Tensor:
            pb = b.data_ptr()
            ix.ptr[2] = pb
            vec = vec and pb % (4 * b.itemsize) == 0
        else:
            scal = 4
            ix.sval[2] = b.bits
    ix.scalar = scal
    ix.n = ix.shape[0] = n
    ix.idx32 = n <= _I32
    threads = n
    if vec and n >= 4:
        ix.vec = 1
        threads = n >> 2
    else:
        ix.vec = 0
    blocks = min((threads + BLOCK - 1) // BLOCK, kern.st.sm_count * 8) or 1
    kern.launch_params(blocks, BLOCK, paddr)


# ---------------------------------------------------------------- reductions

RED_SPLIT_MIN = 64 * RBLOCK   # longer reduced ranges of few outputs split to fill the device
RED_THREAD_MAX = 32           # and any range split so that a thread folds at most this many


def reduce(d, name: str, x, out, ks, kin, kout, rs, rin) -> None:
    """Reduce x (kept dims ks with byte strides kin/kout, reduced dims rs/rin) into out.

    Deterministic for a given shape: the reduced length R of each output is cut into G chunks
    chosen from the shape alone; one block reduces one chunk with a fixed tree; with G > 1 a
    second launch merges the partials of each output in the same tree order. Planned once per
    layout (later calls copy the planned arguments and set the addresses)."""
    _reduce_at(d, name, x, out, x.data_ptr(), out.data_ptr(), list(ks), list(kin), list(kout), rs, rin)


def _reduce_at(d, name: str, x, out, px: int, po: int, ks, kin, kout, rs, rin) -> None:
    """reduce(...) with the input's and output's element [0...] at addresses px and po."""
    if len(ks) > MAXDIM and 0 not in ks:
        # more kept dims than a launch takes: one reduction per index of the shortest
        j = min(range(len(ks)), key=lambda i: ks[i])
        rest = [v[:j] + v[j + 1:] for v in (ks, kin, kout)]
        for i in range(ks[j]):
            _reduce_at(d, name, x, out, px + i * kin[j], po + i * kout[j], *rest, rs, rin)
        return
    dev = x._storage.device
    isz = x.itemsize
    key = (name, d, tuple(ks), tuple(kin), tuple(kout), tuple(rs), tuple(rin),
           px % (4 * isz) == 0, dev)
    plan = _RED_PLANS.get(key)
    if plan is None:
        plan = _reduce_plan(name, x, ks, kin, kout, rs, rin, dev, px)
        if len(_RED_PLANS) >= _PLANS_MAX:
            _RED_PLANS.clear()
        _RED_PLANS[key] = plan
    if plan is _EMPTY:
        return
    tmpl, launches, part_bytes = plan
    a = RED_ARGS.from_buffer_copy(tmpl)
    a.in_, a.out = px, po
    if part_bytes:
        part = _partials(part_bytes, dev)   # alive until the launches are queued
        a.part = part.data_ptr()
    kern = R.kernel("red", d, name, dev)
    for mode, grid in launches:
        a.mode = mode
        kern(grid, RBLOCK, a)


_RED_PLANS: dict = {}
_EMPTY = object()


def _reduce_plan(name, x, ks, kin, kout, rs, rin, dev, px: int | None = None):
    """(argument template, [(mode, grid)], partials' bytes) of a reduction's layout (the
    input's element [0...] at px: x's own by default)."""
    if px is None:
        px = x.data_ptr()
    K = 1
    for s in ks:
        K *= s
    Rn = 1
    for s in rs:
        Rn *= s
    if K == 0:
        return _EMPTY
    if len(ks) > MAXDIM or len(rs) > MAXDIM:
        raise ValueError(f"{name}: a CUDA reduction takes at most {MAXDIM} kept and {MAXDIM} "
                         f"reduced dimensions after merging, got {len(ks)} and {len(rs)}")
    a = RED_ARGS()
    a.nk, a.nr, a.K, a.R = len(ks), len(rs), K, Rn
    a.ks[:len(ks)], a.kin[:len(ks)], a.kout[:len(ks)] = ks, kin, kout
    a.rs[:len(rs)], a.rin[:len(rs)] = rs, rin
    target = R.sm_count(dev) * 8   # blocks that fill the device a few times over
    # a thread per output: when the kept dims are the contiguous ones (coalesced), and for
    # short ranges of many outputs (a block per output would fold one to 32 elements with 256
    # threads: a sum over a length-1 or length-3 axis of 70,000 rows was 256 times the work)
    if ks and K >= 32 and (Rn <= RED_THREAD_MAX or (kin[-1] == x.itemsize
                                                    and all(abs(s) > x.itemsize for s in rin))):
        return _reduce_cols(a, K, Rn, target)
    G = 1
    if K < target and Rn > RED_SPLIT_MIN:
        # split each output's range so K * G blocks fill the device; chunks of whole tiles
        G = min((target + K - 1) // K, (Rn + 4 * RBLOCK - 1) // (4 * RBLOCK))
    # a thread folds at most RED_THREAD_MAX elements in a row (its rounding grows with them: a
    # float32 sum of 10**6 x 0.1 in chunks of 62,500 was 2.3e-6 off); longer ranges take more
    # chunks, whose partials merge by the second launch's tree
    G = max(G, -(-Rn // (RED_THREAD_MAX * RBLOCK)))
    chunk = (Rn + G - 1) // G if G > 1 else max(Rn, 1)
    isz = x.itemsize
    vec = (len(rs) == 1 and rin[0] == isz and px % (4 * isz) == 0
           and all(k % (4 * isz) == 0 for k in kin))
    if vec and G > 1:   # chunks of whole vectors, so each one starts aligned
        chunk = -(-chunk // (4 * RBLOCK)) * 4 * RBLOCK
    G = (Rn + chunk - 1) // chunk if Rn else 1
    a.G, a.chunk, a.vec = G, chunk, int(vec)
    if G == 1:
        return a, [(0, min(K, 65535 * 16))], 0
    return a, [(1, min(K * G, 65535 * 16)), (2, min(K, 65535 * 16))], K * G * 16  # 16 >= any acc


def _partials(nbytes: int, dev):
    return empty((nbytes,), dt.uint8, dev)


def _reduce_cols(a, K: int, Rn: int, target: int):
    """One thread per output walking its range in order (coalesced across a warp)."""
    kblocks = (K + RBLOCK - 1) // RBLOCK
    G = 1
    if kblocks < target and Rn > 64:
        G = min((target + kblocks - 1) // kblocks, (Rn + 63) // 64)
    chunk = (Rn + G - 1) // G if G > 1 else max(Rn, 1)
    G = (Rn + chunk - 1) // chunk if Rn else 1
    a.G, a.chunk = G, chunk
    if G == 1:
        return a, [(3, min(kblocks, 65535 * 16))], 0
    return a, [(4, min(kblocks * G, 65535 * 16)), (5, min(kblocks, 65535 * 16))], K * G * 16


SCAN_SPLIT_MIN = 8 * RBLOCK   # rows longer than this split into chunks when rows are few
SCAN_THREAD_MAX = 32          # rows this short (of 32 or more) take a thread each


def scan(d, name: str, x, out, sh, si, so) -> None:
    """Inclusive scan along the last of dims `sh` (byte strides si for x, so for out)."""
    _scan_at(d, name, x, out, x.data_ptr(), out.data_ptr(), list(sh), list(si), list(so))


def _scan_at(d, name: str, x, out, px: int, po: int, sh, si, so) -> None:
    """scan(...) with the input's and output's element [0...] at addresses px and po."""
    dev = x._storage.device
    rows = 1
    for s in sh[:-1]:
        rows *= s
    if rows == 0 or sh[-1] == 0:
        return
    if len(sh) > MAXDIM:
        # more dims than a launch takes: one scan per index of the shortest row dim
        j = min(range(len(sh) - 1), key=lambda i: sh[i])
        rest = [v[:j] + v[j + 1:] for v in (sh, si, so)]
        for i in range(sh[j]):
            _scan_at(d, name, x, out, px + i * si[j], po + i * so[j], *rest)
        return
    a = SCAN_ARGS()
    a.in_, a.out = px, po
    L = sh[-1]
    a.nd, a.rows, a.L = len(sh), rows, L
    a.sh[:len(sh)], a.si[:len(sh)], a.so[:len(sh)] = sh, si, so
    kern = R.kernel("red", d, name, dev)
    target = R.sm_count(dev) * 8   # blocks that fill the device a few times over
    if L <= SCAN_THREAD_MAX and rows >= 32:   # short rows: a thread per row (reduce.cuh mode 3)
        a.mode, a.G, a.chunk = 3, 1, L
        kern(min(-(-rows // RBLOCK), 65535 * 16), RBLOCK, a)
        return
    G = 1
    if rows < target and L > SCAN_SPLIT_MIN:
        # few long rows: chunks of whole tiles, a block each, in two passes (see reduce.cuh)
        G = min(-(-target // rows), -(-L // SCAN_SPLIT_MIN))
        per = -(-L // G)
        chunk = -(-per // RBLOCK) * RBLOCK
        G = -(-L // chunk)
    if G == 1:
        a.mode, a.G, a.chunk = 0, 1, L
        kern(min(rows, 65535 * 16), RBLOCK, a)
        return
    part = _partials(rows * G * 16, dev)   # 16 bytes >= any accumulator
    a.part, a.G, a.chunk = part.data_ptr(), G, chunk
    for mode in (1, 2):
        a.mode = mode
        kern(min(rows * G, 65535 * 16), RBLOCK, a)
