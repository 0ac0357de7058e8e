"""Fused kernels for captured steps on CUDA (tensor/fusion.py plans the runs, a
tensor.fusion.Fused each; the CPU's twin is tensor/cpu/fused.py): CUDA C++ generated per run,
compiled by NVRTC (g++ on the emulator) and cached on disk like every other kernel.

A thread takes one element (four at once, with vector loads, when every contiguous operand is
aligned for them; strided inputs are read at their offsets) and runs the run's ops on it in
order, each with the unfused kernel's functor (the same load to the compute type, expression
and store to the storage dtype: cuda/kernels.ew_functor), the values in registers; it reads the
run's inputs once and writes its outputs once. NVRTC builds it as it builds the "ew" family,
without FMA contraction (cuda/kernels.py), so every value rounds as in the unfused kernels:
the replay is eager's bit for bit, on a GPU as on the emulator.

The other kinds reuse the unfused kernels' templates with a hook, so that their results stay
the unfused ones: a run ending in a reduction is sx_reduce with a loader computing its input
(reduce_source); a row reduction heading a run is sx_reduce whose loader runs the run on each
row once the row's output is stored (head_source); a run reading a matmul's product is the
gemm kernel with an epilogue on each stored element (gemm_source).
"""
from __future__ import annotations

import ctypes

from ..redtable import fold_of
from ..views import gemm_add_mode
from . import gemm as G
from . import kernels as CK
from . import launch as L
from . import runtime as R
from .launch import BLOCK

_MAX_OPERANDS = 96      # inputs + outputs of one kernel (its argument struct stays < 1 KiB)
_I32 = (1 << 31) - 1


def _value(ref) -> str:
    kind, i = ref
    return f"{kind[0]}{i}"   # i3 (input), o1 (output), t0 (buffer): elem's names


def _elem(f, name: str) -> tuple[str, str] | None:
    """(functors, device function NAME_elem(inputs by value, outputs by reference, then the
    value a reduction reads)) of run f, or None when an op does not fit."""
    functors, stmts = {}, []
    for op in f.ops:
        spec = f.spec(op)
        if spec is None:
            return None
        kern, refs, res = op[0], op[2], op[3]
        args = [_value(r) for r in refs]
        if spec[0] == 3:   # where: a copy of the chosen storage element, as sx_where
            stmts.append(f"    {_value(res)} = {args[0]} ? {args[1]} : {args[2]};")
            continue
        functors.setdefault(kern, CK.ew_functor(kern, spec))
        loads = ", ".join(f"sx_{sfx}::ld({a})" for sfx, a in zip(spec[1], args))
        stmts.append(f"    {_value(res)} = {kern}_fn()({loads});")
    params = ([f"sx_{sfx}::T i{k}" for k, (_, sfx, _) in enumerate(f.inputs)]
              + [f"sx_{sfx}::T &o{j}" for j, (_, sfx) in enumerate(f.outputs)])
    if f.reduce is not None:   # the value the reduction reads, as a last output
        params.append(f"sx_{f.reduce.d.sfx}::T &r")
        stmts.append(f"    r = {_value(f.reduce.ref)};")
    tmps = "".join(f"    sx_{sfx}::T t{k};\n" for k, sfx in enumerate(f.tmps))
    body = (f"SX_DEV void {name}_elem({', '.join(params)}) {{\n{tmps}" + "\n".join(stmts) + "\n}")
    return "\n".join(functors.values()), body


def _args_struct(name: str, nin: int, nout: int) -> str:
    """The kernel's operands (mirrored by _FusedCall's ctypes struct): inputs then outputs, the
    element count, the vector flag, the scalars' bytes, a reduction's input block start."""
    return (f"struct {name}_args {{ char *p[{nin + nout}]; int64_t n; int vec; "
            f"int64_t sv[{max(nin, 1)}]; const char *base; }};")


def _parts(f, name: str, header: str, ret: str = ""):
    """(the source's beginning: the includes, functors, argument struct, offset functions and
    element function; then _elem_call's declarations, call and stores), or None when an op
    does not fit."""
    got = _elem(f, name)
    if got is None:
        return None
    functors, elem = got
    begin = (f'#include "elementwise.cuh"\n#include "{header}"\n{functors}\n'
             f'{_args_struct(name, len(f.inputs), len(f.outputs))}\n{f.offset_fns("SX_DEV")}\n{elem}\n')
    return (begin, *_elem_call(f, name, ret))


def reduce_source(f, name: str) -> str | None:
    """The CUDA source of run f ending in its reduction: reduce.cuh's sx_reduce with a loader
    that computes each element (the run on element i) where the plain one loads it."""
    parts = _parts(f, name, "reduce.cuh", "v")
    if parts is None:
        return None
    begin, outs, run, stores = parts
    r = f.reduce
    red = fold_of(r.name, r.d)
    s, o = r.d.sfx, red.out_dtype(r.d).sfx
    return f'''{begin}struct {name}_ld : sx_plain_ld<sx_{s}> {{   /* (its loads replaced; no row_done) */
    const {name}_args &f;
    __device__ __forceinline__ C operator()(const T *p) const {{
        const int64_t i = ((const char *)p - f.base) / (int64_t)sizeof(T);
{outs}        T v;
{run}{stores}        return sx_{s}::ld(v);
    }}
    __device__ __forceinline__ void four(const T *p, int64_t q, C (&v)[4]) const {{
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = (*this)(p + 4 * q + j);
    }}
}};
extern "C" __global__ void __launch_bounds__(SX_RBLOCK) {name}(sx_red_args a, {name}_args f) {{
    const {name}_ld ld{{{{}}, f}};
    sx_reduce<sx_{s}, sx_{o}, {red.functor(r.d)}>(a, ld);
}}
'''


def _elem_call(f, name: str, ret: str) -> tuple[str, str, str]:
    """(declarations of the outputs, the call of NAME_elem on element i of the run's inputs
    (f.p, f.sv of the args struct `f`), stores of the outputs); ret: the reduction's value."""
    args = [f"*(const sx_{sfx}::T *)&f.sv[{k}]" if sc else
            f"((const sx_{sfx}::T *)f.p[{k}])[{'i' if f.layout(k) is None else f'sx_fz_off{k}(i)'}]"
            for k, (_, sfx, sc) in enumerate(f.inputs)]
    nin = len(f.inputs)
    outs = "".join(f"        sx_{sfx}::T w{j};\n" for j, (_, sfx) in enumerate(f.outputs))
    stores = "".join(f"        ((sx_{sfx}::T *)f.p[{nin + j}])[i] = w{j};\n"
                     for j, (_, sfx) in enumerate(f.outputs))
    call = ", ".join(args + [f"w{j}" for j in range(len(f.outputs))] + ([ret] if ret else []))
    return outs, f"        {name}_elem({call});\n", stores


def gemm_source(f, name: str, kernel: str) -> str | None:
    """The CUDA source of run f as the epilogue of its matmul: gemm kernel `kernel`'s own
    template (tensor/cuda/gemm.py kernel_call) with an epilogue computing the run on each
    element of the product once it is stored (the run reads it back: same thread)."""
    parts = _parts(f, name, "gemm.cuh")
    if parts is None:
        return None
    begin, outs, run, stores = parts
    call, bounds = G.kernel_call(kernel, f"{name}_ep")
    return f'''{begin}struct {name}_ep {{
    const {name}_args &f;
    template <class T> __device__ __forceinline__ void operator()(T *q) const {{
        const int64_t i = ((const char *)q - f.base) / (int64_t)sizeof(T);
{outs}{run}{stores}    }}
}};
extern "C" __global__ void {bounds} {name}(sx_gemm_args p, {name}_args f) {{
    const {name}_ep ep{{f}};
    {call}(p, ep);
}}
'''


def head_source(f, name: str) -> str | None:
    """The CUDA source of run f headed by its row reduction (f.head): reduce.cuh's sx_reduce,
    one block a row (the unfused kernel's tree: its result bit for bit), whose loader runs the
    run on the row's elements once the row's output is stored (row_done)."""
    parts = _parts(f, name, "reduce.cuh")
    if parts is None:
        return None
    begin, outs, run, stores = parts
    h = f.head
    red = fold_of(h.name, h.d)
    s, o = h.d.sfx, red.out_dtype(h.d).sfx
    return f'''{begin}struct {name}_hd : sx_plain_ld<sx_{s}> {{
    const {name}_args &f;
    enum {{ post = 1 }};
    __device__ __forceinline__ void row_done(int64_t k, int64_t R) const {{
        for (int64_t i = k * R + threadIdx.x; i < (k + 1) * R; i += blockDim.x) {{
{outs}{run}{stores}        }}
    }}
}};
extern "C" __global__ void __launch_bounds__(SX_RBLOCK) {name}(sx_red_args a, {name}_args f) {{
    const {name}_hd ld{{{{}}, f}};
    sx_reduce<sx_{s}, sx_{o}, {red.functor(h.d)}>(a, ld);
}}
'''


def source(f, name: str) -> str | None:
    """The CUDA source of the fused kernel `name` of run f, or None when an op does not fit."""
    got = _elem(f, name)
    if got is None:
        return None
    functors, elem = got
    nin, nout = len(f.inputs), len(f.outputs)
    scal = [k for k, x in enumerate(f.inputs) if x[2]]
    ins = [(k, sfx) for k, (_, sfx, s) in enumerate(f.inputs) if not s]
    strided = {k for k in range(nin) if f.layout(k) is not None}
    outs = [(j, sfx) for j, (_, sfx) in enumerate(f.outputs)]
    ptrs = "".join(f"    const sx_{sfx}::T *P{k} = (const sx_{sfx}::T *)a.p[{k}];\n" for k, sfx in ins)
    ptrs += "".join(f"    sx_{sfx}::T *Q{j} = (sx_{sfx}::T *)a.p[{nin + j}];\n" for j, sfx in outs)
    ptrs += "".join(f"    const sx_{f.inputs[k][1]}::T i{k} = *(const sx_{f.inputs[k][1]}::T *)&sv[{k}];\n"
                    for k in scal)

    def call(el_in, el_out) -> str:
        return (f"{name}_elem(" + ", ".join([el_in(k) if not f.inputs[k][2] else f"i{k}"
                                             for k in range(nin)] + [el_out(j) for j in range(nout)]) + ")")
    vec_loads = "".join(f"            sx_v4<sx_{sfx}::T> v{k} = *sx_v4_at(P{k}, q);\n" for k, sfx in ins
                        if k not in strided)
    vec_outs = "".join(f"            sx_v4<sx_{sfx}::T> w{j};\n" for j, sfx in outs)
    vec_stores = "".join(f"            *sx_v4_at(Q{j}, q) = w{j};\n" for j, _ in outs)
    one_outs = "".join(f"        sx_{sfx}::T w{j};\n" for j, sfx in outs)
    one_stores = "".join(f"        Q{j}[i] = w{j};\n" for j, _ in outs)
    return f'''#include "elementwise.cuh"
{functors}
{_args_struct(name, nin, nout)}
{f.offset_fns("SX_DEV")}
{elem}
template <class I>
SX_DEV void {name}_body(const {name}_args &a) {{
    int64_t sv[{max(nin, 1)}];
    for (int k = 0; k < {max(nin, 1)}; k++) sv[k] = a.sv[k];
{ptrs}    const I n = (I)a.n;
    I lo = 0;
    if (a.vec) {{
        const I n4 = n >> 2;
        sx_grid_loop<I>(0, n4, [&](I q) {{
{vec_loads}{vec_outs}#pragma unroll
            for (int j = 0; j < 4; j++) {call(lambda k: f"P{k}[sx_fz_off{k}(4 * (int64_t)q + j)]"
                                              if k in strided else f"v{k}.v[j]", lambda j: f"w{j}.v[j]")};
{vec_stores}        }});
        lo = n4 * 4;
    }}
    sx_grid_loop<I>(lo, n, [&](I i) {{
{one_outs}        {call(lambda k: f"P{k}[{f'sx_fz_off{k}(i)' if k in strided else 'i'}]", lambda j: f"w{j}")};
{one_stores}    }});
}}
extern "C" __global__ void __launch_bounds__(SX_BLOCK) {name}({name}_args a) {{
    if (a.n <= {_I32}) {name}_body<uint32_t>(a);
    else {name}_body<int64_t>(a);
}}
'''


def fuse(fused):
    """A callable running run `fused` as one kernel, or None when it cannot (an op that does
    not fit, a complex128 scalar, too many operands)."""
    f = fused
    if len(f.inputs) + len(f.outputs) > _MAX_OPERANDS or any(s and x.bits is None for x, _, s in f.inputs):
        return None
    launches = None
    if f.head is not None:
        h = f.head
        plan = L._reduce_plan(h.name, h.x, *h.layout, f.device)
        if plan is L._EMPTY or [m for m, _ in plan[1]] != [0]:   # one block a row only
            return None
        body = head_source(f, "sx_fused")
    elif f.gemm is not None:
        c = f.gemm[2]
        if c.dtype.kind == "f" and c.itemsize == 2 and not G.tensor_cores(c.device):
            return None   # (no 16-bit kernel there: the backend's gemm computes in float32)
        launches = _gemm_launches(*f.gemm, f.gemm_add)
        if len({name for name, *_ in launches}) != 1:
            return None
        body = gemm_source(f, "sx_fused", launches[0][0])
    else:
        body = source(f, "sx_fused") if f.reduce is None else reduce_source(f, "sx_fused")
    if body is None:
        return None
    kern = R.source_kernel(*f.named(body), f.device)
    if f.head is not None:
        return _FusedHead(kern, f, plan)
    if launches is not None:
        return _FusedGemm(kern, f, launches)
    return _FusedCall(kern, f) if f.reduce is None else _FusedReduce(kern, f)


def _gemm_launches(a, b, c, add: tuple) -> list:
    """gemm.plan(...) of each launch of c = a @ b (tensor/cuda/gemm.py gemm_batched's; with
    add = (d, alpha, beta), c = alpha * a @ b + beta * d: gemm_add_batched's)."""
    if add:
        d, alpha, beta = add
        add = G.add_terms(c, d, alpha, beta, gemm_add_mode(c, d, beta))
    return [G.plan(c.dtype, *args, add) for args in G.batch_args(a, b, c)]


class _FusedCall:
    """The fused kernel's launch over its operands' addresses (rebase(): as the CPU's)."""

    __slots__ = ("kern", "args", "params", "orig", "sizes", "blocks")

    def __init__(self, kern, f):
        nin, nout = len(f.inputs), len(f.outputs)
        cls = type("sx_fz_args", (ctypes.Structure,), {"_fields_": [
            ("p", ctypes.c_void_p * (nin + nout)), ("n", ctypes.c_int64), ("vec", ctypes.c_int),
            ("sv", ctypes.c_int64 * max(nin, 1)), ("base", ctypes.c_void_p)]})
        self.kern, self.args = kern, cls()
        self.args.n = f.n
        for k, (x, _, scalar) in enumerate(f.inputs):
            if scalar:
                self.args.sv[k] = x.bits
        self.orig = tuple(0 if s else x.data_ptr() for x, _, s in f.inputs) + tuple(
            o.data_ptr() for o, _ in f.outputs)
        self.sizes = ([0 if s or f.layout(k) is not None else x.itemsize
                       for k, (x, _, s) in enumerate(f.inputs)]
                      + [o.itemsize for o, _ in f.outputs])   # 0: read without vector loads
        self.params = (ctypes.c_void_p * 1)(ctypes.addressof(self.args))
        self._point(list(self.orig))

    def _point(self, ptrs: list) -> None:
        vec = self.args.n >= 4
        for k, (p, size) in enumerate(zip(ptrs, self.sizes)):
            self.args.p[k] = p or None
            vec = vec and (size == 0 or p % (4 * size) == 0)
        self.args.vec = int(vec)
        threads = self.args.n >> 2 if vec else self.args.n
        self.blocks = min((threads + BLOCK - 1) // BLOCK, self.kern.st.sm_count * 8) or 1

    def __call__(self):
        self.kern.launch_params(self.blocks, BLOCK, ctypes.addressof(self.params))

    def addresses(self) -> list:
        return [p for p in self.orig if p]

    def rebase(self, lo: int, hi: int, delta: int) -> None:
        cur = [self.args.p[k] or 0 for k in range(len(self.orig))]
        self._point([o + delta if o and lo <= o < hi else c for o, c in zip(self.orig, cur)])


class _WithReduction(_FusedCall):
    """A fused call that launches a reduction kernel: its sx_red_args `red` over x into out
    (rebase() moves those too, and the run's element base with x where it has one)."""

    __slots__ = ("red", "xo", "lo")

    def _reduction(self, red, x: int, out: int, lo: int | None) -> None:
        self.red, self.xo, self.lo = red, (x, out), lo
        red.in_, red.out = x, out
        if lo is not None:
            self.args.base = lo

    def addresses(self) -> list:
        return super().addresses() + list(self.xo)

    def rebase(self, lo: int, hi: int, delta: int) -> None:
        super().rebase(lo, hi, delta)
        x, out = self.xo
        if lo <= x < hi:
            self.red.in_ = x + delta
            if self.lo is not None:
                self.args.base = self.lo + delta
        if lo <= out < hi:
            self.red.out = out + delta


class _FusedReduce(_WithReduction):
    """A fused run ending in its reduction: the reduction's launches (launch.reduce's plan, for
    the address the unfused reduction read: the same chunks, so the same result) with the
    run's operands as a second kernel argument."""

    __slots__ = ("launches", "part_bytes", "dev")

    def __init__(self, kern, f):
        super().__init__(kern, f)
        r = f.reduce
        red, self.launches, self.part_bytes = L._reduce_plan(r.name, r.x, *r.layout, f.device)
        self._reduction(red, r.x.data_ptr(), r.out.data_ptr(), r.start)
        self.dev = f.device

    def __call__(self):
        a = self.red
        if self.part_bytes:
            part = L._partials(self.part_bytes, self.dev)   # alive until the launches are queued
            a.part = part.data_ptr()
        for mode, grid in self.launches:
            a.mode = mode
            self.kern(grid, L.RBLOCK, a, self.args)


class _FusedGemm(_FusedCall):
    """A matmul with the run as its epilogue: each of its launches (gemm.plan's) with the run's
    operands as a second kernel argument."""

    __slots__ = ("launches", "orig_abcd", "c0")

    def __init__(self, kern, f, launches: list):
        super().__init__(kern, f)
        self.launches = launches
        self.c0 = f.gemm[2].data_ptr()
        self.args.base = self.c0
        self.orig_abcd = [(g.a, g.b, g.c, g.d) for _, _, g, _ in launches]   # (d: gemm_add's D)

    def __call__(self):
        for _, grid, g, shared in self.launches:
            self.kern(grid, G.BLOCK, g, self.args, shared=shared)

    def addresses(self) -> list:
        return super().addresses() + [p for abcd in self.orig_abcd for p in abcd if p]

    def rebase(self, lo: int, hi: int, delta: int) -> None:
        super().rebase(lo, hi, delta)
        for (_, _, g, _), orig in zip(self.launches, self.orig_abcd):
            for field, p in zip("abcd", orig):
                if p and lo <= p < hi:
                    setattr(g, field, p + delta)
        if lo <= self.c0 < hi:
            self.args.base = self.c0 + delta


class _FusedHead(_WithReduction):
    """A row reduction and the run reading it: the reduction's one launch (launch.reduce's
    plan: one block a row) with the run's operands as a second kernel argument."""

    __slots__ = ("grid",)

    def __init__(self, kern, f, plan):
        super().__init__(kern, f)
        tmpl, ((_, self.grid),), _ = plan
        self._reduction(L.RED_ARGS.from_buffer_copy(tmpl), f.head.x.data_ptr(), f.head.out.data_ptr(), None)
        self.red.mode = 0

    def __call__(self):
        self.kern(self.grid, L.RBLOCK, self.red, self.args)
