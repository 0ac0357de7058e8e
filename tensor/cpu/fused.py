"""Fused kernels for captured steps (tensor/fusion.py plans them): C source generated per
run, compiled and cached on disk like every other kernel module.

The kernel walks its elements in blocks of SX_FZ_BLK; per block, each op is one loop with the
unfused kernel's own load, expression and store (elementwise.h's SX_UNARY / SX_BINARY /
SX_WHERE bodies), reading and writing either the run's memory or a block-sized buffer on the
stack. So every value is rounded to its storage dtype exactly where the unfused kernels round
it, and no multiply-add is contracted across two ops (each op's loop is its own): the results
are the unfused kernels' bit for bit, while the intermediates never leave the cache. A strided
input (broadcast, transposed) is gathered into a block buffer a segment at a time (_gathers).

The other kinds reuse the unfused kernels' code with a hook, so that their results stay the
unfused ones:
- a run ending in a reduction (reduce_source) is reduce.h's template whose FILL hook computes
  blocks of its input with the block loops, and whose LOAD hook (strided ranges) computes one
  element: there the values of successive ops meet in registers, so each float result passes
  a compiler barrier (SX_FZ_KEEP) that keeps a multiply in one op from contracting with an add
  in the next (the unfused kernels store in between);
- a row reduction heading a run (head_source): rows in parallel, each reduce.h's NAME_one,
  then the block loops on the row;
- a run reading a matmul's product (epilogue_source): gemm.c's epilogue hook runs the block
  loops on each finished rectangle of the product.
"""
from __future__ import annotations

import cffi

from ..redtable import fold_of
from . import build
from . import kernels as K
from .gemm import add_terms, batch_args
from .launch import red_meta

_ffi = cffi.FFI()


def _ptr(ref, f) -> tuple[str, str]:
    """(C pointer expression to the block of element b0 of ref, index expression)."""
    kind, i = ref
    if kind == "tmp":
        return f"t{i}", "[i]"
    if kind == "in" and f.inputs[i][2]:   # a scalar: one element, read for every i
        return f"(T_{f.inputs[i][1]} *)p[{i}]", "[0]"
    if kind == "in" and f.layout(i) is not None:   # strided: gathered into g<i> per block
        return f"g{i}", "[i]"
    j = i if kind == "in" else len(f.inputs) + i
    return f"((T_{f.sfx(ref)} *)p[{j}] + b0)", "[i]"


def _op_loop(op, f) -> str | None:
    """One op's loop over the block: the unfused kernel's body; None if the op's operand
    dtypes are not its kernel's (the run then stays unfused)."""
    spec = f.spec(op)
    if spec is None:
        return None
    arity, ins, out, expr = spec
    refs, res = op[2], op[3]
    o, oi = _ptr(res, f)
    xs = [_ptr(r, f) for r in refs]
    names = ("c", "x", "y") if arity == 3 else ("x", "y")
    head = f"T_{out} *o = {o};" + "".join(f" const T_{sfx} *{v} = {p};"
                                           for (p, _), sfx, v in zip(xs, ins, names))
    if arity == 3:   # where: a copy of the chosen storage element, as SX_WHERE
        (_, ic), (_, ia), (_, ib) = xs
        body = f"o{oi} = c{ic} ? x{ia} : y{ib};"
    else:            # SX_UNARY / SX_BINARY: load to the compute type, the expression, store
        loads = " ".join(f"C_{sfx} {v} = LD_{sfx}({p}{ix});"
                         for (_, ix), sfx, v, p in zip(xs, ins, "ab", names))
        body = f"{loads} o{oi} = ST_{out}({expr});"
    return f"        {{ {head}\n          for (int64_t i = 0; i < m; i++) {{ {body} }} }}"


def _gathers(f) -> tuple[str, str, str]:
    """For each strided input k: a function copying its elements i0 .. i0+m-1 (in the run's
    order) into a block buffer g<k>, a segment of the innermost dimension at a time (a memcpy,
    a broadcast fill or a strided loop; no division per element); the buffers' declarations;
    the calls at the start of a block."""
    fns, decl, calls = [], [], []
    for k, (_, sfx, _) in enumerate(f.inputs):
        lay = f.layout(k)
        if lay is None:
            continue
        (sh, st), nd = lay, len(lay[0])
        t, last, sl = f"T_{sfx}", nd - 1, st[-1]
        copy = ("memcpy(dst + j, q, (size_t)seg * sizeof(*q));" if sl == 1 else
                "for (int64_t u = 0; u < seg; u++) dst[j + u] = *q;" if sl == 0 else
                f"for (int64_t u = 0; u < seg; u++) dst[j + u] = q[u * (int64_t){sl}];")
        fns.append(f"""static void sx_fz_gather{k}(const {t} *src, {t} *dst, int64_t i0, int64_t m) {{
    static const int64_t S[{nd}] = {{{", ".join(map(str, sh))}}}, D[{nd}] = {{{", ".join(map(str, st))}}};
    int64_t x[{nd}], r = i0, o = 0;
    for (int d = {last}; d >= 0; d--) {{ x[d] = r % S[d]; r /= S[d]; o += x[d] * D[d]; }}
    for (int64_t j = 0; j < m;) {{
        int64_t seg = S[{last}] - x[{last}];
        if (seg > m - j) seg = m - j;
        const {t} *q = src + o;
        {copy}
        j += seg; x[{last}] += seg; o += seg * D[{last}];
        for (int d = {last}; d > 0 && x[d] == S[d]; d--) {{
            x[d] = 0; o -= S[d] * D[d]; x[d - 1]++; o += D[d - 1];
        }}
    }}
}}""")
        decl.append(f"    T_{sfx} g{k}[SX_FZ_BLK];")
        calls.append(f"        sx_fz_gather{k}((const T_{sfx} *)p[{k}], g{k}, b0, m);")
    return "\n".join(fns), "\n".join(decl), "\n".join(calls)


def _block_fn(f, fname: str, ret: tuple | None = None) -> str | None:
    """C of `static void fname(char **p, int64_t lo, int64_t hi[, T *ret])`: the run on
    elements [lo, hi), block by block, each op one loop (p: the run's inputs, then outputs);
    with ret (a ref): also the values of ref, into ret[0 .. hi - lo). None when an op does
    not fit."""
    loops = []
    for op in f.ops:
        loop = _op_loop(op, f)
        if loop is None:
            return None
        loops.append(loop)
    tmps = "\n".join(f"    T_{s} t{k}[SX_FZ_BLK];" for k, s in enumerate(f.tmps))
    gfns, gdecl, gcalls = _gathers(f)
    head, copy = "", ""
    if ret is not None:
        v, ix = _ptr(ret, f)
        head = f", T_{f.sfx(ret)} *ret"
        copy = f"        for (int64_t i = 0; i < m; i++) ret[b0 - lo + i] = ({v}){ix};\n"
    return f'''{gfns}
static void {fname}(char **p, int64_t lo, int64_t hi{head}) {{
{tmps}
{gdecl}
    for (int64_t b0 = lo; b0 < hi; b0 += SX_FZ_BLK) {{
        int64_t m = hi - b0 < SX_FZ_BLK ? hi - b0 : SX_FZ_BLK;
{gcalls}
{chr(10).join(loops)}
{copy}    }}
}}'''


def source(f, name: str) -> str | None:
    """The C source of the fused kernel `name` of run f, or None when an op does not fit."""
    blk = _block_fn(f, f"{name}_run")
    if blk is None:
        return None
    return f'''#include "elementwise.h"
#define SX_FZ_BLK 512
{blk}
void {name}(int64_t n, const int64_t *ptrs, int nthreads) {{
    char *p[{len(f.inputs) + len(f.outputs)}];
    for (int k = 0; k < {len(f.inputs) + len(f.outputs)}; k++) p[k] = (char *)(intptr_t)ptrs[k];
    int nt = (n >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {{
        int t = 0, T = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(); T = omp_get_num_threads();
#endif
        {name}_run(p, (int64_t)((__int128)n * t / T), (int64_t)((__int128)n * (t + 1) / T));
    }}
}}
'''


def _elem_value(ref, f) -> str:
    """C expression of ref's value for element i in a reduction's loader (ctx: c[2 + k])."""
    kind, k = ref
    if kind != "in":
        return f"{kind[0]}{k}"
    p = f"(const T_{f.inputs[k][1]} *)(intptr_t)c[{2 + k}]"
    if f.inputs[k][2]:
        return f"*{p}"
    return f"({p})[i]" if f.layout(k) is None else f"({p})[sx_fz_off{k}(i)]"


def reduce_source(f, name: str) -> str | None:
    """The C source of run f ending in its reduction: reduce.h's template whose loads compute
    the element (the run's ops on element i, as the unfused kernels' bodies) instead. ctx:
    [x's address, its block's start, the run's inputs, its outputs, the reduction's output]."""
    r = f.reduce
    red = fold_of(r.name, r.d)
    stmts = []
    for op in f.ops:
        spec = f.spec(op)
        if spec is None:
            return None
        arity, ins, out, expr = spec
        xs = [_elem_value(ref, f) for ref in op[2]]
        res = _elem_value(op[3], f)
        if arity == 3:
            stmts.append(f"    {res} = {xs[0]} ? {xs[1]} : {xs[2]};")
        else:
            loads = " ".join(f"C_{sfx} {v} = LD_{sfx}({x});" for sfx, v, x in zip(ins, "ab", xs))
            # the value as stored: no multiply-add contracted across two ops (the unfused
            # kernels store it to memory in between; the compiler contracts within an op)
            keep = f" SX_FZ_KEEP({res});" if out[0] in "fc" and out not in ("f16", "bf16") else ""
            stmts.append(f"    {{ {loads} {res} = ST_{out}({expr});{keep} }}")
    nin, s, o = len(f.inputs), r.d.sfx, red.out_dtype(r.d).sfx
    decl = "".join(f"    T_{t} t{k};\n" for k, t in enumerate(f.tmps))
    decl += "".join(f"    T_{t} o{j};\n" for j, (_, t) in enumerate(f.outputs))
    stores = "".join(f"    ((T_{t} *)(intptr_t)c[{2 + nin + j}])[i] = o{j};\n"
                     for j, (_, t) in enumerate(f.outputs))
    mac = red.macro(r.d)
    blk = _block_fn(f, f"{name}_blk", r.ref)
    if blk is None:
        return None
    nio = nin + len(f.outputs)
    return f'''#include "elementwise.h"
#include "reduce.h"
#define SX_FZ_KEEP(v) __asm__("" : "+m"(v))
#define SX_FZ_BLK SX_RFB
{blk}
static const T_{s} *{name}_fill(const T_{s} *q, int64_t cnt, T_{s} *buf, const sx_red_meta *m) {{
    const int64_t *c = m->ctx;
    char *p[{nio}];
    for (int k = 0; k < {nio}; k++) p[k] = (char *)(intptr_t)c[2 + k];
    const int64_t i0 = ((const char *)q - (const char *)(intptr_t)c[1]) / (int64_t)sizeof(T_{s});
    {name}_blk(p, i0, i0 + cnt, buf);
    return buf;
}}
#define {name}_FILL(SI, x, cnt, buf, m) {name}_fill(x, cnt, buf, m)
{f.offset_fns("static inline")}
static inline C_{s} {name}_at(const T_{s} *q, const sx_red_meta *m) {{
    const int64_t *c = m->ctx;
    const int64_t i = ((const char *)q - (const char *)(intptr_t)c[1]) / (int64_t)sizeof(T_{s});
{decl}{chr(10).join(stmts)}
{stores}    return LD_{s}({_elem_value(r.ref, f)});
}}
#define {name}_LOAD(SI, p, m) {name}_at(p, m)
SX_REDUCE_BODY({name}, {s}, {o}, {red.acc_c(r.d)}, {red.init_c(r.d)}, {mac}, {mac}, {name}_LOAD,
               {name}_FILL)
void {name}(const int64_t *meta, const int64_t *ctx, int nthreads) {{
    sx_red_meta m = sx_red_parse(meta);
    m.ctx = ctx;
    {name}_run(&m, (const char *)(intptr_t)ctx[0], (char *)(intptr_t)ctx[{2 + nin + len(f.outputs)}],
               nthreads);
}}
'''


def epilogue_source(f, name: str) -> str | None:
    """The C source of run f as the epilogue of its matmul (gemm.c's gm_epilogue): on each
    finished rectangle of the product, the run's block loops (source()) over each row of it
    (or column, for a transposed problem); ctx as reduce_source's, [_, the product's address,
    the run's inputs, its outputs]. NAME_epi_addr() gives the epilogue's address."""
    body = source(f, name)
    if body is None:
        return None
    nin, nout, e = len(f.inputs), len(f.outputs), f.gemm[2].itemsize
    return body + f'''
static void {name}_epi(const void *ctx, char *C, int64_t M, int64_t N, int64_t sCm, int64_t sCn) {{
    const int64_t *c = (const int64_t *)ctx;
    char *p[{nin + nout}];
    for (int k = 0; k < {nin + nout}; k++) p[k] = (char *)(intptr_t)c[2 + k];
    const int64_t i0 = (C - (const char *)(intptr_t)c[1]) / {e};
    if (sCn == 1) for (int64_t r = 0; r < M; r++) {name}_run(p, i0 + r * sCm, i0 + r * sCm + N);
    else if (sCm == 1) for (int64_t q = 0; q < N; q++) {name}_run(p, i0 + q * sCn, i0 + q * sCn + M);
    else for (int64_t r = 0; r < M; r++) for (int64_t q = 0; q < N; q++) {{
        const int64_t i = i0 + r * sCm + q * sCn;
        {name}_run(p, i, i + 1);
    }}
}}
intptr_t {name}_epi_addr(void) {{ return (intptr_t)&{name}_epi; }}
'''


def head_source(f, name: str) -> str | None:
    """The C source of run f headed by its row reduction (f.head): rows in parallel, each its
    reduction (reduce.h's own NAME_one: the unfused result, bit for bit) stored, then the run
    on the row's elements. ctx: [x, the reduction's output, the run's inputs, its outputs]."""
    blk = _block_fn(f, f"{name}_blk")
    if blk is None:
        return None
    h = f.head
    red = fold_of(h.name, h.d)
    s, o, mac, acc = h.d.sfx, red.out_dtype(h.d).sfx, red.macro(h.d), red.acc_c(h.d)
    nio = len(f.inputs) + len(f.outputs)
    return f'''#include "elementwise.h"
#include "reduce.h"
#define SX_FZ_BLK 512
{blk}
SX_REDUCE_BODY({name}_r, {s}, {o}, {acc}, {red.init_c(h.d)}, {mac}, {mac}, SX_RLOAD, SX_RFILL)
void {name}(const int64_t *meta, const int64_t *ctx, int nthreads) {{
    const sx_red_meta m = sx_red_parse(meta);
    const char *in = (const char *)(intptr_t)ctx[0];
    char *out = (char *)(intptr_t)ctx[1];
    char *p[{nio}];
    for (int k = 0; k < {nio}; k++) p[k] = (char *)(intptr_t)ctx[2 + k];
    const int64_t R = m.R;
    int nt = (m.K * m.R >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t k = 0; k < m.K; k++) {{
        {acc} r = {name}_r_one(in + sx_offset_of(k, m.nk, m.ks, m.kin), &m);
        *(T_{o} *)(out + sx_offset_of(k, m.nk, m.ks, m.kout)) = ST_{o}(r);
        {name}_blk(p, k * R, (k + 1) * R);
    }}
}}
'''


def _operands(f) -> list:
    """The addresses of run f's inputs (a scalar's host buffer) and outputs, in the order the
    generated code indexes them."""
    return ([x.ptr if scalar else x.data_ptr() for x, _, scalar in f.inputs]
            + [o.data_ptr() for o, _ in f.outputs])


def _load(f, body: str, decl: str):
    """The library of generated source `body` (its cffi declarations `decl`, NAME for the
    kernel's name) and that name."""
    name, src = f.named(body)
    return build.load(name, src, decl.replace("NAME", name)), name


def fuse(fused):
    """A callable running run `fused` as one kernel (tensor/fusion.py), or None when it cannot."""
    f = fused
    r = f.reduce
    if f.gemm is not None:
        return _gemm_fused(f)
    if f.head is not None:
        return _head_fused(f)
    body = source(f, "sx_fused") if r is None else reduce_source(f, "sx_fused")
    if body is None:
        return None
    head = "int64_t n" if r is None else "const int64_t *meta"
    lib, name = _load(f, body, f"void NAME({head}, const int64_t *ptrs, int nthreads);")
    fn = getattr(lib, name)
    if r is None:
        return _FusedCall(fn, f.n, _operands(f))
    return _FusedCall(fn, red_meta(*r.layout), [r.x.data_ptr(), r.start] + _operands(f) + [r.out.data_ptr()])


class _FusedCall:
    """The fused kernel's call over its operands' addresses (rebase(): as launch.Prepared's);
    head: the element count, or a reduction's meta array."""

    __slots__ = ("fn", "head", "ptrs", "orig")

    def __init__(self, fn, head, ptrs: list):
        self.fn, self.head, self.orig = fn, head, tuple(ptrs)
        self.ptrs = _ffi.new("int64_t[]", ptrs)

    def __call__(self):
        return self.fn(self.head, self.ptrs, K._num_threads)

    def addresses(self) -> list:
        return list(self.orig)

    def rebase(self, lo: int, hi: int, delta: int) -> None:
        for i, v in enumerate(self.orig):
            if lo <= v < hi:
                self.ptrs[i] = v + delta


def _head_fused(f):
    """Run f headed by its row reduction, as one call (head_source)."""
    body = head_source(f, "sx_fused")
    if body is None:
        return None
    lib, name = _load(f, body, "void NAME(const int64_t *meta, const int64_t *ctx, int nthreads);")
    h = f.head
    return _FusedCall(getattr(lib, name), red_meta(*h.layout),
                      [h.x.data_ptr(), h.out.data_ptr()] + _operands(f))


def _gemm_fused(f):
    """The matmul of f.gemm with run f as its epilogue: gemm_epi_<dtype> (gemm_add_<dtype>
    with f.gemm_add's terms) per batch launch."""
    body = epilogue_source(f, "sx_fused")
    if body is None:
        return None
    lib, name = _load(f, body, "intptr_t NAME_epi_addr(void);")
    a, b, c = f.gemm
    terms = add_terms(c, *f.gemm_add) if f.gemm_add else ()
    gemm = K.kernel("gemm", None, f"gemm_{'add' if terms else 'epi'}_{c.dtype.sfx}")
    return _GemmCall(gemm, batch_args(a, b, c), terms, getattr(lib, f"{name}_epi_addr")(),
                     [0, c.data_ptr()] + _operands(f))


class _GemmCall(_FusedCall):
    """gemm_epi(launch..., threads, epilogue, its operands) for each batch launch, or
    gemm_add(launch..., threads, terms..., epilogue, its operands); rebase() moves the launches'
    addresses (and D's) too."""

    __slots__ = ("launches", "orig_launches", "epi", "terms", "orig_terms")

    def __init__(self, gemm, launches: list, terms: tuple, epi: int, ptrs: list):
        super().__init__(gemm, None, ptrs)
        self.launches = [list(x) for x in launches]
        self.orig_launches, self.epi = launches, epi
        self.terms, self.orig_terms = list(terms), terms

    def __call__(self):
        ctx = int(_ffi.cast("intptr_t", self.ptrs))
        for args in self.launches:
            self.fn(*args, K._num_threads, *self.terms, self.epi, ctx)

    def addresses(self) -> list:
        return (super().addresses() + [x[i] for x in self.orig_launches for i in _ADDRS]
                + [p for p in self.orig_terms[:1] if p])   # (D's, when read)

    def rebase(self, lo: int, hi: int, delta: int) -> None:
        super().rebase(lo, hi, delta)
        for cur, orig in zip(self.launches, self.orig_launches):
            for i in _ADDRS:
                if lo <= orig[i] < hi:
                    cur[i] = orig[i] + delta
        if self.orig_terms and self.orig_terms[0] and lo <= self.orig_terms[0] < hi:
            self.terms[0] = self.orig_terms[0] + delta   # D


_ADDRS = (4, 8, 12)   # A, B and C in a gemm launch's arguments (gemm.batch_args)
