"""Fusion of a captured program's elementwise runs (tensor/capture.py calls plan()).

A run is a sequence of consecutive recorded elementwise calls (`contiguous_op`, and
`elementwise` with a dense output: its inputs broadcast to the output's shape, any strides, or
scalars; an output in another memory order, as an op on a transposed tensor makes, is taken
with every operand in the output's memory order) on one device over the same number of
elements. It becomes one kernel
(the backend's `fuse`) that reads the run's inputs once and writes only what is read after the
run: an intermediate whose memory the step freed without any later call touching it (the
capture knows every pool block's life) stays in a small buffer (registers, on CUDA) instead of
going out to memory and back. A strided input (a bias broadcast over rows, a transposed view)
is read at its offsets (Fused.offset_fns); the run never writes memory it reads that way.

The fused kernel computes each op with the op's own loads, expression and store (the storage
dtype in between), so it rounds as the unfused kernels do: the replay stays bitwise equal to
eager (the backends' fused.py say how each keeps the compiler from contracting across ops).

A run may end in a reduction (sum, prod, max, min, any, all) of its last value: the fused
kernel is then the reduction's own kernel (same chunks, same tree: bitwise the unfused result)
reading each element by computing the run on it instead of loading it, and the run's value
never goes to memory when the step frees it after the reduction (`(a - b) ** 2` then `sum`:
one pass over a and b). A reduction over the last axis of a contiguous tensor may instead head
the run that reads it broadcast along that axis (a softmax's `x - max`): a row at a time, its
reduction (the unfused kernel's code), then the run on the row (_row_head). A call belongs to
one run at most.

A run may also start at a matmul whose product it reads (nn.Linear's bias add, then an
activation): the matmul runs the run as its epilogue on each finished block of the product
(while it is in cache; one call less); where the backend cannot, the run is fused without it.

A plan is a list of (first call index, last call index, Fused) for the runs of two or more calls.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ._tensor import Tensor, contiguous_strides
from .optable import ew_specs
from .redtable import fold_of
from .views import coalesce


@dataclass
class Reduce:
    """A reduction ending a fused run: its kernel name and loop dtype, the ref of the run value
    it reads (x, a dense view of that value's memory), its output and layout (the backend's
    reduce(d, name, x, out, ks, kin, kout, rs, rin) arguments)."""
    name: str
    d: object
    ref: tuple
    x: Tensor
    out: Tensor
    layout: tuple   # (ks, kin, kout, rs, rin)

    @property
    def start(self) -> int:
        """The lowest address x's layout reaches (x's own, unless a stride is negative)."""
        ks, kin, _, rs, rin = self.layout
        return self.x.data_ptr() + sum((n - 1) * st for n, st in zip(ks + rs, kin + rin) if st < 0)


def _reduce_of(call, ref) -> Reduce:
    """The Reduce of a recorded reduce call (its arguments: d, name, x, out, the layout)."""
    d, kern, x, out, *layout = call[2]
    return Reduce(kern, d, ref, x, out, tuple(map(tuple, layout)))


@dataclass
class Fused:
    """One fused run, device-agnostic: what a backend's `fuse` generates a kernel from.

    ops: (kernel name, loop dtype, operand refs, result ref); a ref is ("in", i) an input,
    ("out", j) an output's memory (written earlier in the run), or ("tmp", k) a buffer.
    inputs: (tensor alias or _Scalar, storage dtype suffix, is scalar); outputs: (tensor alias,
    storage dtype suffix); tmps: storage dtype suffix of each buffer."""
    n: int
    device: object
    ops: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    tmps: list = field(default_factory=list)
    reduce: Reduce | None = None
    gemm: tuple | None = None   # (a, b, c): the matmul c = a @ b whose epilogue the run is
    gemm_add: tuple = ()        # its gemm_add terms (d or None, alpha, beta); (): a plain product
    head: Reduce | None = None  # a row reduction the run reads (ref None), computed row by row

    def named(self, body: str) -> tuple[str, str]:
        """(kernel name, source) of a backend's generated source `body`, written with the
        placeholder name sx_fused: the name is the source's hash (the disk cache's key too)."""
        name = "sx_fz_" + hashlib.sha256(body.encode()).hexdigest()[:20]
        return name, body.replace("sx_fused", name)

    def sfx(self, ref: tuple) -> str:
        """The storage dtype suffix of a ref's values."""
        kind, i = ref
        return self.tmps[i] if kind == "tmp" else self.inputs[i][1] if kind == "in" else self.outputs[i][1]

    def spec(self, op: tuple) -> tuple | None:
        """Op's kernel (optable.ew_specs: arity, input and output suffixes, expression), or
        None when its operands' dtypes are not its kernel's (the run then stays unfused)."""
        kern, d, refs, res = op
        spec = ew_specs(d).get(kern)
        if spec is None or len(refs) != spec[0] or [self.sfx(r) for r in refs] != list(spec[1]) \
                or self.sfx(res) != spec[2]:
            return None
        return spec

    def layout(self, k: int) -> tuple | None:
        """How a fused kernel indexes input k (a tensor broadcast to its op's contiguous
        output, or a scalar) at element i of the run: None, x[i] (contiguous) or x[0] (a
        scalar); else (shape, strides) in elements, dims merged: x at the sum over dims, last
        first, of (i % shape[d]) * strides[d] with i //= shape[d]."""
        x, _, scalar = self.inputs[k]
        if scalar or type(x) is not Tensor or x.is_contiguous():
            return None
        sh, (_, st) = coalesce(x._shape, [contiguous_strides(x._shape), x._strides])
        return tuple(sh), tuple(st)

    def offset_fns(self, qual: str) -> str:
        """C functions sx_fz_off<k>(i) -> the element offset of input k at element i of the
        run, for the strided inputs (layout()); qual: their qualifiers."""
        out = []
        for k in range(len(self.inputs)):
            lay = self.layout(k)
            if lay is None:
                continue
            dims = list(zip(*lay))[::-1]   # innermost first
            lines = [f"    o += (i % {n}) * (int64_t){st};" if st else "   " for n, st in dims]
            lines = [ln + f" i /= {n};" for ln, (n, _) in zip(lines[:-1], dims)] + lines[-1:]
            body = "\n".join(ln for ln in lines if ln.strip())
            out.append(f"{qual} int64_t sx_fz_off{k}(int64_t i) {{\n    int64_t o = 0;\n{body}\n"
                       "    return o;\n}")
        return "\n".join(out)


def _numel(t: Tensor) -> int:
    n = 1
    for s in t._shape:
        n *= s
    return n


def _as_ew(name: str, args: tuple):
    """(loop dtype, kernel name, out, operands, n) of a fusable elementwise call, else None."""
    if name == "contiguous_op":
        d, kern, out, n, a = args[:5]
        ins = [a] if len(args) < 6 or args[5] is None else [a, args[5]]
    elif name == "elementwise":   # inputs broadcast to out's shape: any strides
        d, kern, out, ins = args
        if any(type(x) is Tensor and x._shape != out._shape for x in ins):
            return None
        if not out.is_contiguous():   # a dense permutation (an op on a transposed tensor
            order = _memory_order(out)   # keeps its layout): every operand in out's memory order
            if order is None:
                return None
            out, ins = _permute(out, order), [_permute(x, order) if type(x) is Tensor else x for x in ins]
        n = _numel(out)
    else:
        return None
    return (d, kern, out, list(ins), n) if n > 0 else None


def _memory_order(t: Tensor) -> list | None:
    """The order of t's dims by decreasing stride, when in that order t is contiguous (a dense
    permutation), else None."""
    order = sorted(range(len(t._shape)), key=lambda i: -t._strides[i])
    return order if _permute(t, order).is_contiguous() else None


def _permute(t: Tensor, order: list) -> Tensor:
    return Tensor._make(t._storage, tuple(t._shape[i] for i in order),
                        tuple(t._strides[i] for i in order), t._offset, t._dtype)


def _overlap(a: tuple, b: tuple) -> bool:
    """Do two memory ranges (keys or spans: [lo, hi) first) overlap?"""
    return a[0] < b[1] and b[0] < a[1]


def _key(t: Tensor) -> tuple:
    """t's memory [lo, hi) and dtype: one value to the fused kernel (the same bytes read as
    another dtype overlap it instead, and end the run); a strided view (an input broadcast to
    its op's shape, a transposed one) adds its shape and strides: it overlaps any other view
    of its memory, so the run never writes memory it reads that way."""
    p = t.data_ptr()
    if t.is_contiguous():
        return (p, p + _numel(t) * t.itemsize, t._dtype.sfx)
    lo = p + sum((n - 1) * st for n, st in zip(t._shape, t._strides) if st < 0) * t.itemsize
    hi = p + (sum((n - 1) * st for n, st in zip(t._shape, t._strides) if st > 0) + 1) * t.itemsize
    return (lo, hi, t._dtype.sfx, t._shape, t._strides)


class _Run:
    """A run being built (see the module docstring)."""

    def __init__(self, n: int, device):
        self.f = Fused(n, device)
        self.keys: dict = {}    # memory (_key) -> its current value's ref

    def operand(self, x) -> tuple:
        if type(x) is not Tensor:   # a _Scalar
            self.f.inputs.append((x, x.dtype.sfx, True))
            ref = ("in", len(self.f.inputs) - 1)
        else:
            k = _key(x)
            ref = self.keys.get(k)
            if ref is None:
                self.f.inputs.append((x, x._dtype.sfx, False))
                ref = self.keys[k] = ("in", len(self.f.inputs) - 1)
        return ref

    def result(self, out: Tensor, elide: bool) -> tuple:
        k = _key(out)
        if elide:
            self.f.tmps.append(out._dtype.sfx)
            ref = ("tmp", len(self.f.tmps) - 1)
        else:
            ref = next((("out", j) for j, (o, _) in enumerate(self.f.outputs) if _key(o) == k), None)
            if ref is None:
                self.f.outputs.append((out, out._dtype.sfx))
                ref = ("out", len(self.f.outputs) - 1)
        self.keys[k] = ref
        return ref


# operands (memory blocks and scalars) of one run at most: a kernel's argument list is bounded
# (CUDA's fused kernels take 96), so a longer chain becomes several runs, not none
MAX_RUN_OPERANDS = 64


def _partition(calls: list) -> list:
    """Lists of (index, _as_ew) of consecutive fusable calls on one device over one size,
    whose operands' memory is either the same or disjoint (one call: a run only if a reduction
    follows or a matmul precedes)."""
    groups, cur, keys, sig, scalars = [], [], [], None, 0
    for i, c in enumerate(calls):
        e = _as_ew(c[1], c[2]) if c[0] is not None and not c[3] else None
        if e is None:
            groups.append(cur)
            cur, keys, sig, scalars = [], [], None, 0
            continue
        _, _, out, ins, n = e
        ks = [_key(t) for t in [out] + [x for x in ins if type(x) is Tensor]]
        fits = all(k in keys or not any(_overlap(o, k) for o in keys) for k in ks)
        more = len(ins) - (len(ks) - 1)   # this call's scalar operands
        wide = len(keys) + scalars + len(ks) + more > MAX_RUN_OPERANDS
        if (n, out.device) != sig or not fits or wide:
            groups.append(cur)
            cur, keys, sig, scalars = [], [], (n, out.device), 0
        cur.append((i, e))
        keys.extend(k for k in ks if k not in keys)
        scalars += more
    groups.append(cur)
    return [g for g in groups if g]


def _dense(shape, strides, isz: int) -> bool:
    """Do (shape, byte strides) address every element of a dense block exactly once (in any
    order and direction)?"""
    acc = isz
    for n, st in sorted(((n, abs(st)) for n, st in zip(shape, strides) if n != 1), key=lambda d: d[1]):
        if st != acc:
            return False
        acc *= n
    return True


def _reduction(call, run: _Run, n: int):
    """The Reduce that call makes of run's value, when call is a fusable reduction of it (a
    fold, not an arg-reduction or scan; its input a dense view of a value of the run, its
    output apart from the memory the run reads and writes), else None."""
    if call[0] is None or call[3] or call[1] != "reduce":
        return None
    r = _reduce_of(call, None)
    ks, kin, _, rs, rin = r.layout
    if (fold_of(r.name, r.d) is None or r.out.device != run.f.device or r.x._dtype is not r.d
            or _numel(r.x) != n or not _dense(ks + rs, kin + rin, r.x.itemsize)):
        return None   # (it must read exactly the run's n elements: not a wider block around them)
    lo = r.start
    r.ref = run.keys.get((lo, lo + n * r.x.itemsize, r.d.sfx))
    # out may reuse the memory of an intermediate the run keeps in registers, not the memory
    # it reads or writes
    o = _key(r.out)
    mem = [_key(t) for t, *_ in run.f.outputs] + [_key(t) for t, _, s in run.f.inputs if not s]
    if r.ref is None or r.ref[0] == "in" or any(_overlap(m, o) for m in mem):
        return None
    return r


def _build(group: list, last: int, alias_rec: dict) -> _Run:
    """The run of a group's calls; last: the index of the run's last call (a reduction's)."""
    _, _, out, _, n = group[0][1]
    run = _Run(n, out.device)
    for _, (d, kern, out, ins, _) in group:
        refs = [run.operand(x) for x in ins]
        rec = alias_rec.get(id(out._storage))
        # an intermediate: the step freed it, and no call after the run touches it
        elide = rec is not None and rec[1] is not None and all(r <= last for r in rec[0])
        run.f.ops.append((kern, d, refs, run.result(out, elide)))
    return run


def plan(calls: list, alias_rec: dict) -> list:
    """The runs of calls (capture records [fn, name, args, kwargs, result, backend]) worth
    fusing: [(first, last, Fused)]. alias_rec maps a pool alias's storage to its life record
    ([indices of the calls that use it, index of the call after which it died, or None]);
    memory without one (parameters, constants, what outlives the step) is always written."""
    runs = []
    for group in _partition(calls):
        first, last = group[0][0], group[-1][0]
        if last + 1 < len(calls) and calls[last + 1][1] == "reduce":
            run = _build(group, last + 1, alias_rec)
            run.f.reduce = _reduction(calls[last + 1], run, run.f.n)
            if run.f.reduce is not None:
                runs.append((first, last + 1, run.f))
                continue
        free = first and (not runs or runs[-1][1] < first - 1)   # the call before: in no run
        run = _build(group, last, alias_rec) if len(group) > 1 or free else None
        if free and calls[first - 1][1] == "gemm" and _epilogue(calls[first - 1], run):
            runs.append((first - 1, last, run.f))
        elif free and calls[first - 1][1] == "reduce" and _row_head(calls[first - 1], run):
            runs.append((first - 1, last, run.f))
        elif len(group) > 1:
            runs.append((first, last, run.f))
    return runs


ROW_HEAD_MIN = 16   # rows a reduction needs to head a run (the fused kernel is parallel over rows)


def _row_head(call, run: _Run) -> bool:
    """Whether the reduction call just before run can head it (sets run.f.head): a fold over
    the last axis of a contiguous x whose K rows of R elements are the run's n elements in
    order, and the run reads its output only broadcast along that axis (element i reads row
    i // R), never writing it. The fused kernel then takes a row at a time: its reduction
    (the unfused kernel's own code: bitwise its result), stored, then the run over the row,
    still in cache."""
    if call[0] is None or call[3]:
        return False
    d, kern, x, out, ks, kin, kout, rs, rin = call[2]
    if (fold_of(kern, d) is None or out.device != run.f.device or not x.is_contiguous() or len(rs) != 1
            or rin[0] != x.itemsize or _numel(x) != run.f.n):
        return False
    R, K = rs[0], run.f.n // max(rs[0], 1)
    o = _key(out)
    if K < ROW_HEAD_MIN or any(_overlap(_key(t), o) for t, _ in run.f.outputs):
        return False
    for k, (t, _, scalar) in enumerate(run.f.inputs):
        if scalar or not _overlap(_key(t), o):
            continue   # (memory apart from the reduction's output)
        if t.data_ptr() != out.data_ptr() or run.f.layout(k) != ((K, R), (1, 0)):
            return False
    run.f.head = _reduce_of(call, None)
    return True


def _epilogue(call, run: _Run) -> bool:
    """Whether run can be the epilogue of the matmul call (c = a @ b, or the backend gemm's
    alpha * a @ b + beta * d) just before it: c contiguous over the run's elements, read by the
    run as it is (not through another view), and nothing the run writes is memory the matmul
    reads; sets run.f.gemm (and gemm_add)."""
    kw = call[3]
    if call[0] is None or set(kw) - {"d", "alpha", "beta"}:
        return False
    a, b, c = call[2]
    d, alpha, beta = kw.get("d"), kw.get("alpha", 1), kw.get("beta", 1)
    kc = _key(c)
    if (c.device != run.f.device or not c.is_contiguous() or _numel(c) != run.f.n
            or not any(not s and _key(x) == kc for x, _, s in run.f.inputs)):
        return False
    reads = [_key(t) for t in (a, b, d) if t is not None]
    if any(_overlap(_key(o), m) for o, _ in run.f.outputs for m in reads):
        return False
    run.f.gemm = (a, b, c)
    run.f.gemm_add = (d, alpha, beta) if d is not None or alpha != 1 else ()
    return True
