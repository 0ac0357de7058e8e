"""Graph nodes and the hook that records ops on the graph.

A Node is one recorded op: its derivative rule (looked up by the op's name), what the rule
saved (detached aliases of tensors, checked against the storage's version counter so an
in-place change after the forward is caught), and one edge per differentiable input pointing
at the node that produced it (or at the AccumulateGrad node of a leaf).
"""
from __future__ import annotations

import inspect
import itertools
import sys
import threading
import weakref

import tensor as T
from tensor import _hook
from tensor._tensor import Tensor
from tensor._tensor import tracked as _tracked
from tensor.aliasing import may_overlap
from tensor.public import INPLACE

from .grad_mode import state
from .inplace_undo import undo_point as _undo_point
from .node_api import NodeAPI, NodeType

RULES: dict = {}  # op name -> Rule (rules.py and friends register here)
_WRITES = INPLACE | {"copy_slices", "copy_parts"}  # ops whose output is their first input, written
_seq = itertools.count()


class Rule:
    """vjp(ctx, g) -> grads shaped like the op's args (None where not differentiable);
    jvp(ctx, tangents) -> output tangent (tangents shaped like args, None where absent).
    save: indices of args the rule reads in backward, plus "out" for the output.

    Complex numbers (PyTorch's convention: a gradient is the conjugate Wirtinger derivative
    dL/dRe z + i dL/dIm z of a real loss). A rule written for real numbers, run with complex
    arithmetic, computes the transpose J^T g of the op's complex Jacobian; the convention's
    vjp is J^H g = conj(J^T conj(g)). So by default the engine runs vjp on conj(g) and
    conjugates the results (autograd.engine): exact for every holomorphic op (exp, matmul,
    prod...) and no change for ops linear with real coefficients (views, sums). Rules of ops that are not
    holomorphic (conj, abs, angle, complex sign, view_as_complex) and user Functions (whose
    backward follows the convention itself) set conj=False. A jvp needs no such care: J t is
    what real formulas compute, except for the same non-holomorphic ops."""

    __slots__ = ("name", "vjp", "jvp", "save", "conj", "reads", "layout")

    def __init__(self, name, vjp=None, jvp=None, save=(), conj=True, reads=None):
        self.name, self.vjp, self.jvp, self.save = name, vjp, jvp, frozenset(save)
        self.conj = conj
        # the operands save names as ("layout", i): the rule reads their layout only, so they
        # are kept as detached aliases, without a version check (None: no such operand)
        self.layout = frozenset(k[1] for k in self.save if type(k) is tuple) or None
        # per operand, what of save its gradient reads: only what the operands that need a
        # gradient read is kept (None: all of save)
        self.reads = reads


class Meta:
    """What backward knows of an input it did not save: shape, dtype, device."""

    __slots__ = ("shape", "dtype", "device")

    def __init__(self, t: Tensor):
        self.shape, self.dtype, self.device = t.shape, t.dtype, t.device

    @property
    def ndim(self) -> int:
        return len(self.shape)


class AGMeta:
    """Autograd state of one tensor (Tensor._ag): its leaf accumulator, hooks, tangent."""

    __slots__ = ("acc", "hooks", "tangent", "output_nr", "retain", "is_view", "nograd_view")

    def __init__(self):
        self.is_view = False  # shares memory with a tensor of the graph (in-place is refused)
        self.acc = None
        self.hooks = None
        self.tangent = None
        self.output_nr = 0
        self.retain = False
        self.nograd_view = False  # a view made under no_grad of a tensor that requires grad


def meta_of(t: Tensor) -> AGMeta:
    m = t._ag
    if m is None:
        with _MAKE_LOCK:   # two threads must not each give t a meta (one's acc would be lost)
            m = t._ag
            if m is None:
                m = t._ag = AGMeta()
    return m


# Taken only to make a tensor's AGMeta or a leaf's AccumulateGrad: threads running backward
# over one leaf (a shared parameter) must find one accumulator, or a thread's graph edge and
# the edge `backward(inputs=[w])` captures could be two different nodes (its gradient lost)
_MAKE_LOCK = threading.RLock()


class Ctx:
    """What a rule sees in backward: args (saved tensors, Meta for unsaved tensor args, other
    values as given), kwargs, out (when saved) and anything the forward stored on it."""

    def __init__(self, args, kwargs, out, needs=None):
        self.args, self.kwargs, self.out = args, kwargs, out
        self.needs = needs  # per arg: does it need a gradient
        self.saved_tensors = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


class _Anomaly:
    """autograd.anomaly's switches (global, as PyTorch's anomaly mode)."""
    enabled = False
    check_nan = True


anomaly = _Anomaly()
_HERE = __file__.rsplit("/", 1)[0]


def _forward_trace() -> list:
    """The Python stack of the op being recorded, autograd's and the hook's own frames left out."""
    import traceback
    frames = [f for f in traceback.extract_stack()[:-2]
              if not f.filename.startswith(_HERE) and not f.filename.endswith("_hook.py")]
    return traceback.format_list(frames)


class Node(NodeAPI, metaclass=NodeType):
    covers_all = True   # isinstance(an AccumulateGrad, Node) too (node_api.NodeType)
    __slots__ = ("op", "rule", "ctx", "next", "n_out", "multi", "hooks", "retains", "saved",
                 "released", "seq", "nhooks", "trace", "__weakref__")

    def __init__(self, op, rule, ctx, next_edges, n_out=1, multi=False):
        self.op, self.rule, self.ctx, self.next, self.n_out = op, rule, ctx, next_edges, n_out
        self.multi = multi or n_out > 1  # the rule takes a list of output gradients
        self.hooks = None      # output_nr -> [fn]: hooks of the non-leaf outputs
        self.nhooks = None     # the node's own [pre-hooks, post-hooks] (register_prehook/hook)
        self.retains = None    # output_nr -> weakref of the output that keeps its .grad
        self.saved = []        # (tensor alias, storage, version) to check before backward
        self.released = False
        self.seq = next(_seq)  # creation order: later nodes run first
        # anomaly mode: where the forward op was called (C fast-path nodes leave it unset)
        self.trace = _forward_trace() if anomaly.enabled else None

    def __repr__(self):
        return f"<{self.name()}>"

    def check_saved(self):
        if self.released:
            raise RuntimeError(
                f"autograd: trying to backward through the graph a second time (op {self.op!r}): "
                "its saved tensors were freed after the first backward; pass retain_graph=True to "
                "the first backward() or autograd.grad() call if you need to backward twice")
        for t, storage, version in self.saved:
            if storage.version != version:
                raise RuntimeError(
                    f"autograd: a tensor saved by {self.op!r} for backward (shape {t.shape}, "
                    f"{t.dtype.name}) was modified by an in-place operation: it was at version "
                    f"{version}, now {storage.version}; avoid the in-place op or clone() first")

    def release(self):
        """Free what backward saved (after a backward without retain_graph). A node that saved
        no tensor keeps its ctx: a second backward through it is allowed, as in PyTorch."""
        if not self.saved and _tensor_free(self.ctx):
            return
        self.ctx = None
        self.saved = []
        self.released = True


def _tensor_free(ctx) -> bool:
    """ctx holds no tensor (its args are values and Meta, nothing saved on it; a checkpointed
    node's ctx says `keeps`: its rule holds the inputs of the recomputation)."""
    if ctx is None or getattr(ctx, "keeps", False):
        return False
    for v in vars(ctx).values():
        if type(v) is Tensor:
            return False
        if isinstance(v, list | tuple) and any(type(x) is Tensor for x in v):
            return False
    return True


LIVE_ACCS: weakref.WeakSet = weakref.WeakSet()   # every AccumulateGrad alive (tensor/capture.py)


class AccumulateGrad(NodeAPI):
    """The node of a leaf tensor: adds incoming gradients into leaf.grad."""

    __slots__ = ("leaf", "seq", "next", "n_out", "multi", "hooks", "retains", "op", "post_hooks",
                 "nhooks", "__weakref__")

    def __init__(self, leaf: Tensor):
        LIVE_ACCS.add(self)
        self.leaf = weakref.ref(leaf)
        self.seq = sys.maxsize  # runs as soon as ready: the leaf's gradient is complete then
        self.next = ()
        self.n_out = 1
        self.multi = False
        self.hooks = None
        self.nhooks = None
        self.retains = None    # (a leaf keeps its .grad anyway)
        self.op = "AccumulateGrad"
        self.post_hooks = None   # fn(leaf) after .grad got this backward's sum

    @property
    def variable(self):
        """The leaf tensor whose .grad this node writes (None once it is gone)."""
        return self.leaf()

    def __repr__(self):
        return "<AccumulateGrad>"


def edge_of(t: Tensor):
    """(node, output index) that receives t's gradient, or None when t needs none."""
    if not t.requires_grad:
        return None
    if t.grad_fn is not None:
        return (t.grad_fn, t._ag.output_nr if t._ag is not None else 0)
    m = meta_of(t)
    acc = m.acc
    if acc is None:
        with _MAKE_LOCK:
            acc = m.acc
            if acc is None:
                acc = m.acc = AccumulateGrad(t)
    return (acc, 0)


def flat_tensors(args):
    """The tensors among args, one level into lists/tuples (concatenate, stack, where...)."""
    out = []
    for a in args:
        if type(a) is Tensor:
            out.append(a)
        elif isinstance(a, list | tuple):
            out.extend(x for x in a if type(x) is Tensor)
    return out


def _alias(t: Tensor) -> Tensor:
    """A detached alias: same storage and view, no graph (no reference cycle through out)."""
    return Tensor._make(t._storage, t._shape, t._strides, t._offset, t._dtype)


def output_alias(t: Tensor, node, nr: int) -> Tensor:
    """A fresh alias of t standing for output nr of node (None: a leaf's) in the graph: a saved
    output linked again when a create_graph backward reads it (kept unlinked, it would make a
    cycle through the node)."""
    a = _alias(t)
    a._requires_grad, a.grad_fn = True, node
    if nr:
        meta_of(a).output_nr = nr
    return a


_PACK = None   # autograd/saved_hooks.py's pack(t, node, hooks): a saved tensor under its hooks


def _save_one(i, a, save, node):
    if type(a) is Tensor:
        if i in save:
            if state.saved_hooks:
                return _PACK(a, node, state.saved_hooks[-1])
            node.saved.append((a, a._storage, a._storage.version))
            return a
        if ("layout", i) in save:   # its layout only (Rule.layout): writes into it do not matter
            return _alias(a)
        return Meta(a)
    if isinstance(a, list | tuple) and any(type(x) is Tensor for x in a):
        return type(a)(_save_one(i, x, save, node) for x in a)
    return a


def _saved_args(args, save, node):
    """args with the saved tensors kept (version-recorded; they keep their own history, which
    create_graph needs), other tensor args replaced by Meta. (A module-level helper: a nested
    recursive closure would make a reference cycle that holds the graph until gc runs.)"""
    return tuple(_save_one(i, a, save, node) for i, a in enumerate(args))


def _out_tangents(node, out) -> None:
    """The outputs' tangents, for forward-over-reverse through a node that saves its output."""
    if node.ctx.out is None:
        return
    outs = out if isinstance(out, list | tuple) else (out,)
    tans = [o._ag.tangent if type(o) is Tensor and o._ag is not None else None for o in outs]
    if any(t is not None for t in tans):
        node.ctx.out_tangent = tans if isinstance(out, list | tuple) else tans[0]


def _attach(name, rule, args, kwargs, out, tensors, ctx_args=None):
    """Put the node of op `name` on the graph: edges from `tensors`, what the rule saves from
    ctx_args (args where an in-place op replaced some by copies taken before it wrote)."""
    edges = [edge_of(t) for t in tensors]
    outs = out if isinstance(out, list | tuple) else (out,)
    node = Node(name, rule, None, edges, n_out=len(outs), multi=outs is out)
    ctx_out = None
    hooks = state.saved_hooks
    if "out" in rule.save:
        ctx_out = [_alias(o) for o in outs] if isinstance(out, list | tuple) else _alias(out)
        if hooks:
            ctx_out = ([_PACK(o, node, hooks[-1]) for o in ctx_out] if isinstance(ctx_out, list)
                       else _PACK(ctx_out, node, hooks[-1]))
        else:
            for o in (ctx_out if isinstance(ctx_out, list) else [ctx_out]):
                node.saved.append((o, o._storage, o._storage.version))
    needs = tuple(a.requires_grad if type(a) is Tensor else
                  any(type(x) is Tensor and x.requires_grad for x in a)
                  if isinstance(a, list | tuple) else False for a in args)
    save = rule.save if rule.reads is None else frozenset(
        i for j, r in enumerate(rule.reads) if j < len(needs) and needs[j] for i in r)
    node.ctx = Ctx(_saved_args(ctx_args or args, save, node), kwargs, ctx_out, needs)
    if hooks:
        node.ctx.packed = True
    _out_tangents(node, out)
    for i, o in enumerate(outs):
        if type(o) is Tensor:
            if o._ag is not None and o._ag.retain:   # written in place: its .grad is the new one's
                move_retain(o, node, i)
            o._requires_grad = True
            o.grad_fn = node
            if i or o._ag is not None:   # (a written output of a multi-output op: now 0)
                meta_of(o).output_nr = i
            if name not in _WRITES and any(o._storage is t._storage for t in tensors):
                meta_of(o).is_view = True
    return node


def move_retain(t: Tensor, node, nr: int) -> None:
    """retain_grad: t keeps the gradient of output nr of node (from now on; its old node's no
    longer reaches it), as PyTorch's retains_grad follows a tensor through in-place writes."""
    old = t.grad_fn
    if old is not None and old.retains:
        ref = old.retains.get(t._ag.output_nr)
        if ref is not None and ref() is t:
            del old.retains[t._ag.output_nr]
    if node.retains is None:
        node.retains = {}
    node.retains[nr] = weakref.ref(t)


def _own_outputs(out, tensors) -> None:
    """Outputs that share no memory with the inputs are bases of their own, even when the op
    laid them out as a view of a buffer it made (a permuted result): a write into a view of them
    must rewrite their graph, not that buffer's."""
    for o in (out if isinstance(out, list | tuple) else (out,)):
        if type(o) is Tensor and o._base is not None and not any(o._storage is t._storage
                                                                 for t in tensors):
            o._base = None


def _tangents(args):
    def one(a):
        if type(a) is Tensor:
            m = a._ag
            return m.tangent if m is not None else None
        if isinstance(a, list | tuple) and any(type(x) is Tensor for x in a):
            return type(a)(one(x) for x in a)
        return None
    return tuple(one(a) for a in args)


_SIGS: dict = {}


def _positionals(fn) -> frozenset:
    """The names of fn's parameters a keyword argument may fill that _positional moves to
    their positions (so tensors given so take part in autograd; keyword-only ones do not)."""
    k = _NAMED.get(fn)
    if k is None:
        sig = _SIGS.get(fn)
        if sig is None:
            sig = _SIGS[fn] = inspect.signature(fn)
        k = _NAMED[fn] = frozenset(n for n, q in sig.parameters.items()
                                   if q.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return k


_NAMED: dict = {}


def _positional(fn, args, kwargs):
    """Bind keyword arguments to their positions (rules read ctx.args; defaults fill the gaps
    before the last one given), keeping only keyword-only ones as kwargs."""
    sig = _SIGS.get(fn)
    if sig is None:
        sig = _SIGS[fn] = inspect.signature(fn)
    try:
        b = sig.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs  # let the op itself raise its own message
    P = inspect.Parameter
    if any(q.kind is P.VAR_POSITIONAL for q in sig.parameters.values()):
        return b.args, b.kwargs
    names = [n for n, q in sig.parameters.items() if q.kind in (P.POSITIONAL_ONLY,
                                                                 P.POSITIONAL_OR_KEYWORD)]
    last = max((i for i, n in enumerate(names) if n in b.arguments), default=-1)
    pos = tuple(b.arguments.get(n, sig.parameters[n].default) for n in names[:last + 1])
    return pos, {k: v for k, v in b.kwargs.items() if k not in names}


def _differentiable_out(out) -> bool:
    """Only floating and complex outputs carry gradients (comparisons, argmax, indices do not)."""
    if type(out) is Tensor:
        return out.dtype.kind in "fc"
    return isinstance(out, list | tuple) and any(type(o) is Tensor and o.dtype.kind in "fc"
                                                for o in out)


# ---------------------------------------------------------------- views and in-place writes
#
# A view remembers its base and the storage's version when its graph was made (Tensor._base).
# Memory written since (an in-place op on the base or on another view of it) makes that graph
# stale: before the view enters an op, refresh() re-derives it from the base's current graph
# (an as_strided node). An in-place op on a view rewrites the base's graph as well: rebase()
# gives the base a copy_slices node (the old base outside the view's elements, the view's new
# graph inside them). Together they give PyTorch's semantics: `buf[0][1] = f(x)` and
# `v = y[0]; y += z; v.sum()` differentiate through every write.

def _pairs(shape, strides, offset):
    """A complex layout's (Re, Im) pairs, in real units."""
    return tuple(shape) + (2,), tuple(2 * s for s in strides) + (1,), 2 * offset


def refresh(t: Tensor) -> None:
    """t's graph (and tangent) from its base's current ones, when its memory was written since
    t's were made."""
    root, _ = t._base
    if _tracked(root):
        lvl = state.fw_level
        if t._dtype is root._dtype:
            fresh = T.as_strided(root, t._shape, t._strides, t._offset)
        elif root._dtype.kind == "c":   # a real view of complex memory: offsets in real units
            fresh = T.as_strided(T.view_as_real(root), t._shape, t._strides, t._offset)
        else:                          # a complex view of real memory
            fresh = T.view_as_complex(T.as_strided(root, *_pairs(t._shape, t._strides, t._offset)))
        m = meta_of(t)
        if m.retain and fresh.grad_fn is not None:   # retain_grad follows t to its fresh node
            move_retain(t, fresh.grad_fn, 0)
        t.grad_fn, t._requires_grad = fresh.grad_fn, fresh._requires_grad
        m.output_nr = 0
        fm = fresh._ag
        m.tangent = fm.tangent if fm is not None and lvl else None
        if m.tangent is not None:
            state.fw_tensors.append(weakref.ref(t))
    t._base = (root, t._storage.version)


def refresh_stale(tensors) -> None:
    """refresh() the views among tensors whose memory was written since their graph was made."""
    for t in tensors:
        b = t._base
        if b is not None and b[1] != t._storage.version:
            refresh(t)


def rebase(x: Tensor, need_grad: bool, need_tan: bool) -> None:
    """x, a view, was just written in place: its base now holds x's new values (and graph,
    and tangent) at x's elements."""
    root, _ = x._base
    name = "copy_slices"
    kwargs = {"base": (root._shape, root._strides, root._offset),
              "view": (x._shape, x._strides, x._offset)}
    if x._dtype is not root._dtype:   # .real / .imag / view_as_real(_complex): in real units
        name = "copy_parts"
        kwargs["parts"] = "base" if root._dtype.kind == "c" else "view"
        kwargs[kwargs["parts"]] = _pairs(*kwargs[kwargs["parts"]])
    rule = RULES[name]
    args = (root, x)
    if need_tan:
        tan = rule.jvp(Ctx(args, kwargs, None), _tangents(args))
        meta_of(root).tangent = tan
        state.fw_tensors.append(weakref.ref(root))
    if need_grad:
        _attach(name, rule, args, kwargs, root, [root, x])
    x._base = (root, x._storage.version)


def _before_write(rule, args) -> dict | None:
    """Copies, taken before an in-place op writes args[0], of what its rule reads afterwards:
    saved operands that overlap args[0] (`y *= y`), and under "old" args[0] itself when the
    rule needs it (`y *= w` with w tracked; "old0": x.sin_() with x tracked)."""
    x, pre = args[0], {}
    if type(x) is not Tensor:
        return None
    for i in rule.save:
        if type(i) is int and 0 < i < len(args) and type(args[i]) is Tensor and may_overlap(args[i], x):
            pre[i] = T.clone(args[i])
    if "old" in rule.save and len(args) > 1 and type(args[1]) is Tensor and _tracked(args[1]):
        pre["old"] = T.clone(x)
    elif "old0" in rule.save and _tracked(x):   # (autograd/rules_elementwise.py: _inplace_rule)
        pre["old"] = T.clone(x)
    return pre


def _check_view_write(name, x) -> None:
    """Refuse, before the data changes, in-place writes whose gradient has nowhere to go."""
    b = x._base
    if b is not None:
        root = b[0]
        if root._requires_grad and root.grad_fn is None:
            raise RuntimeError(f"{name}: a view (shape {x.shape}) of a leaf tensor that requires "
                               f"grad (shape {root.shape}) cannot be modified in place; do it "
                               "under autograd.no_grad() or on a copy")
    elif x._ag is not None and x._ag.is_view:
        raise RuntimeError(f"{name}: in-place change of a view (shape {x.shape}) of a tensor "
                           "that requires grad is not supported (the base's graph would not "
                           "see it); write into the base tensor, or use out-of-place ops")


def record(name, fn, args, kwargs):
    """The hook tensor's public ops call (installed into tensor._hook on import)."""
    st = state
    if st.depth:
        return fn(*args, **kwargs)
    need_grad = need_tan = False
    tensors = None
    if st.grad_enabled or st.fw_level:
        tensors = flat_tensors(args)
        if kwargs:  # tensors passed by keyword for a positional parameter count too
            named = _positionals(fn)
            tensors += flat_tensors([v for k, v in kwargs.items() if k in named])
        refresh_stale(tensors)
        if st.grad_enabled:
            for t in tensors:
                if t._requires_grad:
                    need_grad = True
                    break
        if st.fw_level:
            need_tan = any(t._ag is not None and t._ag.tangent is not None for t in tensors)
    if st.grad_enabled and name in INPLACE and args and type(args[0]) is Tensor \
            and args[0]._ag is not None and args[0]._ag.nograd_view:
        raise RuntimeError(f"{name}: this view (shape {args[0].shape}) was made under no_grad of "
                           "a tensor that requires grad; writing into it with grad mode on would "
                           "change that tensor behind its graph (PyTorch refuses it too): write "
                           "under autograd.no_grad(), or make the view outside it")
    if not (need_grad or need_tan):
        return fn(*args, **kwargs)
    if kwargs:  # move them to their positions (rules read ctx.args), in order
        args, kwargs = _positional(fn, args, kwargs)
        tensors = flat_tensors(args)
    rule = RULES.get(name)
    if need_grad and name in INPLACE:
        x = args[0]
        if type(x) is Tensor and x._requires_grad and x.grad_fn is None:
            raise RuntimeError(f"{name}: a leaf tensor that requires grad (shape {x.shape}) cannot "
                               "be modified in place; do it under autograd.no_grad() or on a copy")
        if type(x) is Tensor:
            _check_view_write(name, x)
        if rule is None:  # refuse before the data changes
            raise NotImplementedError(f"autograd: no derivative rule for in-place {name!r}; use "
                                      "the out-of-place form")
    undo = None
    if name in INPLACE and type(args[0]) is Tensor:
        if need_tan and (rule is None or rule.jvp is None) and _differentiable_out(args[0]):
            raise NotImplementedError(f"autograd: no {'derivative' if rule is None else 'forward-mode (jvp)'}"
                                      f" rule for {name!r}")   # (before the data changes)
        if st.saved_hooks or need_tan:   # user code (a pack hook, a jvp) runs after the write
            undo = _undo_point(args[0])
    # copies on the graph (recorded: the rule's result may be differentiated again)
    pre = _before_write(rule, args) if name in INPLACE and rule is not None else None
    st.depth += 1
    try:   # (a selective checkpoint's policy keeps or hands back the output: checkpoint_selective)
        out = fn(*args, **kwargs) if st.sac is None else st.sac(name, fn, args, kwargs)
    finally:
        st.depth -= 1
    if undo is None:
        return _recorded(name, rule, args, kwargs, out, tensors, pre, need_grad, need_tan)
    try:
        return _recorded(name, rule, args, kwargs, out, tensors, pre, need_grad, need_tan)
    except BaseException:   # a pack hook raised: the write is undone (else x's new values
        undo()              # would carry its old graph: a silently wrong gradient)
        raise


def _recorded(name, rule, args, kwargs, out, tensors, pre, need_grad, need_tan):
    """The end of record(), after the op ran: its node on the graph, its output's tangent."""
    st = state
    cargs = args if not pre else tuple(pre.get(i, a) for i, a in enumerate(args))
    if name not in INPLACE:
        _own_outputs(out, tensors)
    if name not in INPLACE and type(out) is Tensor and any(out is t for t in tensors):
        return out  # the op returned its input itself: already on the graph, tangent included
    res = out
    if out is None and name in INPLACE:  # x[key] = v returns None: the output is x, written
        out = args[0]
    if need_tan and rule is None and _differentiable_out(out):
        raise NotImplementedError(f"autograd: no derivative rule for {name!r}")
    node = None
    if need_grad and need_tan and rule is not None and _differentiable_out(out):
        # the output on the graph before its tangent is computed: a jvp rule reading ctx.out
        # (exp's: out * t) must see its history, or reverse over forward (jacrev of jacfwd) loses
        # the terms through out; in place (x.exp_()), the written x with its new node
        node = _attach(name, rule, args, kwargs, out, tensors, cargs)
        node.ctx.old = pre.get("old") if pre else None
        if name in INPLACE and type(out) is Tensor and out._base is not None:
            rebase(out, True, False)   # or the jvp's ops would see the view as stale
    if need_tan and rule is not None:
        if rule.jvp is None:
            raise NotImplementedError(f"autograd: no forward-mode (jvp) rule for {name!r}")
        ctx = Ctx(cargs, kwargs, out)
        ctx.old = pre.get("old") if pre else None
        lvl, st.fw_level = st.fw_level, 0  # tangent arithmetic carries no tangents itself
        try:
            tan = rule.jvp(ctx, _tangents(args))
            tan = _fit_tangent(out, tan)
        finally:
            st.fw_level = lvl
        if tan is not None:
            outs, tans = (out, tan) if isinstance(out, list | tuple) else ((out,), (tan,))
            for o, t in zip(outs, tans):
                if t is not None and type(o) is Tensor:
                    meta_of(o).tangent = t
                    st.fw_tensors.append(weakref.ref(o))
    if node is not None:
        _out_tangents(node, out)
    elif need_grad and _differentiable_out(out):
        if rule is None:
            raise NotImplementedError(f"autograd: no derivative rule for {name!r}")
        node = _attach(name, rule, args, kwargs, out, tensors, cargs)
        node.ctx.old = pre.get("old") if pre else None
    if name in INPLACE and type(out) is Tensor and out._base is not None:
        rebase(out, need_grad and not need_tan and _differentiable_out(out),
               need_tan and out._ag is not None and out._ag.tangent is not None)
    return res


def _fit_tangent(o, t):
    """A rule's tangent t in output o's shape and float dtype (x + y with only a broadcast x
    dual: a constant partial left it x's, and its sum missed the broadcast terms)."""
    if isinstance(o, list | tuple) and isinstance(t, list | tuple):
        return [*map(_fit_tangent, o, t)]
    if type(o) is not Tensor or type(t) is not Tensor:
        return t
    t = t if t._shape == o._shape else T.broadcast_to(t, o._shape)
    cast = t._dtype is not o._dtype and o._dtype.kind in "fc" and t._dtype.kind in "f" + o._dtype.kind
    return t.astype(o._dtype) if cast else t


def _record_tail(name, rule, args, kwargs, out, tensors):
    """The end of record() for a call that needs a gradient and no tangent, not in place, whose
    fn has run (with depth raised): a C record (tensor/_hook.py: record_accel) hands over the
    results it does not handle itself."""
    _own_outputs(out, tensors)
    if type(out) is Tensor and any(out is t for t in tensors):
        return out
    if _differentiable_out(out):
        node = _attach(name, rule, args, kwargs, out, tensors, args)
        node.ctx.old = None
    return out


def _nograd_view(view: Tensor, src: Tensor) -> None:
    """tensor's _view under no_grad: a view of a tensor that requires grad (or of such a view)
    is marked, so that a later in-place write into it with grad mode on is refused."""
    if src._requires_grad or (src._ag is not None and src._ag.nograd_view):
        meta_of(view).nograd_view = True


_FAST_GRAPH = None


def use_fast_path(on: bool) -> None:
    """Let a C fast path record nodes (on), or record every op here (anomaly mode: each node
    keeps its forward trace)."""
    global _FAST_GRAPH
    if on:
        if _FAST_GRAPH is None:   # one tuple: the C side re-reads its offsets when it changes
            _FAST_GRAPH = (state, Node, Ctx, Meta, AGMeta, RULES, _seq, edge_of,
                           frozenset(INPLACE), frozenset(_WRITES), meta_of, _record_tail)
        _hook.fast_graph = _FAST_GRAPH
        _hook.set_record(record)
    else:
        _hook.fast_graph = None
        _hook.record = record


_HOOKED = [0]   # saved_tensors_hooks / selective checkpointing contexts entered, in all threads


def refresh_fast_path() -> None:
    """The C fast path records nodes unless anomaly mode (each node keeps its forward trace) or
    a saved_tensors_hooks context (saved tensors go through its pack hook) needs every op
    recorded here."""
    use_fast_path(not anomaly.enabled and _HOOKED[0] == 0)


def install():
    _hook.grad_state = state
    _hook.nograd_view = _nograd_view
    refresh_fast_path()
