"""Autograd fuzzer: random differentiable programs, their gradients against finite differences.

Hypothesis draws a program over a few float64 leaves, step by step, each step run at once on
concrete tensors (so shapes and values are known when the next step is drawn): smooth
elementwise ops of the op table (inputs squashed into each op's domain), broadcasting binary
ops, views (slices with any step, transposes, flips, reshapes, broadcasts, diagonals,
as_strided, integer-array and mask indexing), reductions and scans, matmul, concatenation,
where, checkpointed segments, and writes: in-place ops on fresh results, in-place ops and
assignments through views (`y[k].mul_(v)`, `buf[0][1:] = v` into a buffer that did not require
grad), and views taken before their base is written. The program's value is a weighted sum of
every float tensor it made (views read after later writes included). Checked: reverse mode
against central differences (autograd.gradcheck), forward mode (autograd.jvp) against a
directional difference, and now and then the second derivative (gradgradcheck).

Left out on purpose: ops whose derivative jumps where the fuzzer's own structure puts inputs
(floor, remainder, sign...: `remainder(x, x)` sits on a jump), and float32/16 (finite
differences need float64).

Profiles: "ci" a few programs per device; `--hypothesis-profile=fuzz` many, long ones.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

import autograd
import tensor as T
from tensor.optable import BINARY, NO_RULE, UNARY

pytestmark = pytest.mark.usefixtures("device")

# copysign(x, y) jumps where y crosses 0, and `x - x` puts y there
_KINKED = {"abs", "sign", "floor", "ceil", "trunc", "rint", "remainder", "floor_divide", "copysign",
           # jumps at 0 / integers / powers of 2; cbrt's slope is infinite at 0; fmax / fmin give
           # a tie wholly to one operand (PyTorch's), where a central difference splits it
           "heaviside", "frac", "spacing", "cbrt", "fmax", "fmin",
           # poles at 0, -1, -2, ...; |x| inside (e^-|x|); no derivative in zeta's exponent
           "digamma", "i0e", "i1e", "zeta"}
# every float op of the table but the kinked ones and those declared without a derivative
# (NO_RULE); an op missing its rule otherwise fails the fuzzer
SMOOTH_UNARY = [op for op in UNARY if "f" in op.kinds and not op.out_bool
                and op.name not in _KINKED and op.grad != NO_RULE]
SMOOTH_BINARY = [op for op in BINARY if "f" in op.kinds and not op.out_bool
                 and op.name not in _KINKED and op.grad != NO_RULE]
SHAPES = [(), (1,), (3,), (4,), (2, 3), (3, 1), (1, 3), (3, 3), (2, 1, 3), (2, 2, 2)]


def _squash(x, domain: str):
    """x mapped smoothly into an op's domain (bounded, so chains of ops stay finite)."""
    if domain in ("positive", "nonzero", "power"):
        return T.exp(T.tanh(x))                 # (0.37, 2.7)
    if domain == "unit":
        return T.tanh(x) * 0.8
    if domain == "gt_m1":
        return T.exp(T.tanh(x)) - 0.9
    if domain == "ge1":
        return T.exp(T.tanh(x)) + 1.0
    if domain == "exp":
        return T.tanh(x) * 3.0
    return x


class Program:
    """Steps drawn and run one at a time; replay(leaves) runs them again on other leaves."""

    def __init__(self, data, leaves):
        self.data, self.steps, self.env = data, [], list(leaves)

    def draw(self, strategy, label=None):
        return self.data.draw(strategy, label=label)

    def pick(self, pred=lambda t: True):
        cands = [i for i, t in enumerate(self.env) if pred(t)]
        return self.draw(st.sampled_from(cands)) if cands else None

    def add(self, what: str, fn, *ins) -> None:
        """Run step fn(*env[ins]) now, keep it for replays; its results join the env."""
        note(f"v{len(self.env)} = {what}  (inputs {', '.join(f'v{i}' for i in ins)})")
        out = fn(*[self.env[i] for i in ins])
        outs = out if isinstance(out, tuple) else (out,)
        self.steps.append((fn, ins, len(outs)))
        self.env.extend(outs)

    def replay(self, leaves):
        env = list(leaves)
        for fn, ins, _ in self.steps:
            out = fn(*[env[i] for i in ins])
            env.extend(out if isinstance(out, tuple) else (out,))
        return env

    # ------------------------------------------------------------ steps
    def unary(self):
        op = self.draw(st.sampled_from(SMOOTH_UNARY), "unary")
        f = getattr(T, op.name)
        dom = "exp" if op.name == "tan" else op.domain   # tan: keep away from pi/2
        scale = 0.5 if op.name == "tan" else 1.0
        self.add(f"{op.name}(squash_{dom}(x))", lambda x: f(_squash(x, dom) * scale), self.pick())

    def binary(self):
        op = self.draw(st.sampled_from(SMOOTH_BINARY), "binary")
        f = getattr(T, op.name)
        i = self.pick()
        shape = self.env[i].shape
        j = self.pick(lambda t: _broadcasts(t.shape, shape))
        dom_a = "positive" if op.name == "power" else "any"
        # atan2's and hypot's derivatives do not exist at the origin, where `x - x` puts both
        dom_b = {"true_divide": "positive", "power": "exp", "arctan2": "positive",
                 "hypot": "positive", "xlogy": "positive"}.get(op.name, "any")
        if self.draw(st.booleans(), "scalar operand"):
            c = self.draw(st.sampled_from([0.5, -1.5, 2.0, 3.0]))
            if self.draw(st.booleans(), "scalar first"):
                self.add(f"{op.name}({c}, y)", lambda y: f(_scalar_in(c, op.name, 0),
                                                          _squash(y, dom_b)), i)
            else:
                self.add(f"{op.name}(x, {c})", lambda x: f(_squash(x, dom_a),
                                                          _scalar_in(c, op.name, 1)), i)
            return
        self.add(f"{op.name}(x, y)", lambda x, y: f(_squash(x, dom_a), _squash(y, dom_b)), i, j)

    def view(self):
        i = self.pick()
        x = self.env[i]
        nd = x.ndim
        kind = self.draw(st.sampled_from(["slice", "T", "permute", "flip", "reshape", "expand_dims",
                                          "squeeze", "broadcast", "diagonal", "as_strided",
                                          "take", "mask", "unbind"]), "view")
        if kind == "slice" and nd:
            key = tuple(slice(*self.draw(st.sampled_from([(None, None, None), (None, None, -1),
                                                          (1, None, None), (None, None, 2),
                                                          (-1, 0, -1), (0, 1, None)])))
                        for _ in range(nd))
            self.add(f"x[{key}]", lambda x: x[key], i)
        elif kind == "T":
            self.add("x.T", lambda x: x.T, i)
        elif kind == "permute" and nd:
            axes = tuple(self.draw(st.permutations(range(nd))))
            self.add(f"permute(x, {axes})", lambda x: T.permute(x, axes), i)
        elif kind == "flip" and nd:
            ax = self.draw(st.integers(-nd, nd - 1))
            self.add(f"flip(x, {ax})", lambda x: T.flip(x, ax), i)
        elif kind == "reshape":
            shape = (-1,) if self.draw(st.booleans()) else tuple(reversed(x.shape))
            self.add(f"reshape(x, {shape})", lambda x: x.reshape(shape), i)
        elif kind == "expand_dims":
            ax = self.draw(st.integers(-nd - 1, nd))
            self.add(f"expand_dims(x, {ax})", lambda x: T.expand_dims(x, ax), i)
        elif kind == "squeeze":
            self.add("squeeze(x)", lambda x: T.squeeze(x), i)
        elif kind == "broadcast":
            shape = (2,) + tuple(3 if n == 1 else n for n in x.shape)
            self.add(f"broadcast_to(x, {shape})", lambda x: T.broadcast_to(x, shape), i)
        elif kind == "diagonal" and nd >= 2:
            off = self.draw(st.integers(-1, 1))
            self.add(f"diagonal(x, {off})", lambda x: T.diagonal(x, off), i)
        elif kind == "as_strided" and x.numel() >= 4:
            shape, strides = self.draw(st.sampled_from([((2, 2), (1, 1)), ((3,), (1,)),
                                                        ((2, 2), (2, 1)), ((2,), (-1,))]))
            off = 1 if strides[0] < 0 else 0
            self.add(f"as_strided(contiguous(x), {shape}, {strides}, +{off})",
                     lambda x: (lambda c: T.as_strided(c, shape, strides, c.offset + off))(
                         T.reshape(x, (-1,)).contiguous()), i)
        elif kind == "take" and nd and x.shape[0]:
            idx = self.draw(st.lists(st.integers(-x.shape[0], x.shape[0] - 1), min_size=1,
                                     max_size=5))
            self.add(f"x[{idx}]", lambda x: x[T.tensor(idx)], i)
        elif kind == "mask" and nd:
            m = np.asarray(self.draw(st.lists(st.booleans(), min_size=x.shape[-1],
                                              max_size=x.shape[-1])), dtype=bool)
            self.add(f"x[..., {m.tolist()}]", lambda x: x[..., T.asarray(m)], i)
        elif kind == "unbind" and nd and 0 < x.shape[0] <= 3:
            self.add("unbind(x)", lambda x: tuple(T.unbind(x)), i)

    def reduce(self):
        i = self.pick()
        x = self.env[i]
        nd = x.ndim
        name = self.draw(st.sampled_from(["sum", "mean", "prod", "var", "std", "logsumexp", "max",
                                          "amin", "cumsum", "cumprod"]), "reduction")
        if name in ("cumsum", "cumprod"):
            if not nd:
                return
            ax = self.draw(st.integers(-nd, nd - 1))
            self.add(f"{name}(x, {ax})", lambda x: getattr(T, name)(x, axis=ax), i)
            return
        axis = self.draw(st.one_of(st.none(), st.integers(-nd, nd - 1)) if nd else st.none())
        keep = self.draw(st.booleans())
        if name in ("max", "amin", "mean", "var", "std", "logsumexp") and x.numel() == 0:
            return
        if name == "std":   # sqrt has no derivative at 0: only where the spread is clear
            v = T.var(x.detach(), axis=axis)
            if x.numel() < 2 or not bool(T.all(v > 1e-3)):
                return
        self.add(f"{name}(x, axis={axis}, keepdims={keep})",
                 lambda x: getattr(T, name)(x, axis=axis, keepdims=keep), i)

    def matmul(self):
        i = self.pick(lambda t: t.ndim >= 1)
        if i is None:
            return
        n = self.env[i].shape[-1]
        j = self.pick(lambda t: t.ndim == 1 and t.shape[0] == n or t.ndim == 2 and t.shape[0] == n)
        if j is None:
            self.add("x @ x.mT", lambda x: x @ T.matrix_transpose(x) if x.ndim > 1 else x @ x, i)
        else:
            self.add("x @ y", lambda x, y: x @ y, i, j)

    def join(self):
        i = self.pick()
        shape = self.env[i].shape
        j = self.pick(lambda t: t.shape == shape)
        if self.draw(st.booleans()) or not shape:
            self.add("stack([x, y])", lambda x, y: T.stack([x, y]), i, j)
        else:
            self.add("concatenate([x, y])", lambda x, y: T.concatenate([x, y]), i, j)

    def where(self):
        i = self.pick()
        shape = self.env[i].shape
        j = self.pick(lambda t: _broadcasts(t.shape, shape))
        m = np.random.default_rng(self.draw(st.integers(0, 99))).random(shape) < 0.5
        self.add("where(mask, x, y)", lambda x, y: T.where(T.asarray(m), x, y), i, j)

    def rearrange(self):
        """Ops that move, repeat, pad or mask elements (linear, so their rules are adjoints)."""
        i = self.pick(lambda t: t.ndim >= 1)
        if i is None:
            return
        x = self.env[i]
        nd, n0 = x.ndim, x.shape[0]
        kind = self.draw(st.sampled_from(["roll", "tile", "repeat", "pad", "tril", "take_along",
                                          "index_add", "scatter_add", "split", "outer"]), "rearrange")
        if kind == "roll":
            shift, ax = self.draw(st.integers(-3, 3)), self.draw(st.integers(-nd, nd - 1))
            self.add(f"roll(x, {shift}, {ax})", lambda x: T.roll(x, shift, ax), i)
        elif kind == "tile":
            reps = tuple(self.draw(st.lists(st.integers(1, 2), min_size=1, max_size=nd + 1)))
            self.add(f"tile(x, {reps})", lambda x: T.tile(x, reps), i)
        elif kind == "repeat":
            r, ax = self.draw(st.integers(0, 2)), self.draw(st.sampled_from([None, 0]))
            self.add(f"repeat(x, {r}, {ax})", lambda x: T.repeat(x, r, ax), i)
        elif kind == "pad":
            w = tuple((self.draw(st.integers(0, 2)), self.draw(st.integers(0, 1))) for _ in range(nd))
            c = self.draw(st.sampled_from([0.0, 1.5]))
            self.add(f"pad(x, {w}, constant_values={c})", lambda x: T.pad(x, w, constant_values=c), i)
        elif kind == "tril" and nd >= 2:
            k = self.draw(st.integers(-1, 1))
            self.add(f"tril/triu(x, {k})", lambda x: T.tril(x, k) + T.triu(x, k + 1) * 0.5, i)
        elif kind == "take_along" and n0:
            ix = np.random.default_rng(n0).integers(0, n0, x.shape)
            self.add("take_along_axis(x, ix, 0)", lambda x: T.take_along_axis(x, T.asarray(ix), 0), i)
        elif kind == "index_add" and n0:
            ix = self.draw(st.lists(st.integers(0, n0 - 1), min_size=1, max_size=4))
            j = self.pick(lambda t: t.shape == x.shape[1:])
            if j is None:
                return
            self.add(f"index_add(x, 0, {ix}, stack([s]*k))",
                     lambda x, s: T.index_add(x, 0, T.tensor(ix), T.stack([s * (k + 1.0) for k in
                                                                       range(len(ix))])), i, j)
        elif kind == "scatter_add" and n0:
            ix = np.random.default_rng(n0 + 1).integers(0, n0, x.shape)
            self.add("scatter_add(x, 0, ix, x * 2)",
                     lambda x: T.scatter_add(x, 0, T.asarray(ix), x * 2.0), i)
        elif kind == "split" and n0 >= 2:
            self.add("split(x, [1], 0)", lambda x: tuple(T.split(x, [1], 0)), i)
        elif kind == "outer":
            j = self.pick()
            self.add("outer(x, y)", lambda x, y: T.outer(x, y), i, j)

    def checkpointed(self):
        self.add("checkpoint(sin(x) * x)", lambda x: autograd.checkpoint(lambda a: T.sin(a) * a, x),
                 self.pick())

    def inplace(self):
        """A write into a fresh result, directly or through a view of it."""
        i = self.pick()
        x = self.env[i]
        j = self.pick(lambda t: _broadcasts(t.shape, x.shape))
        op = self.draw(st.sampled_from(["add_", "sub_", "mul_", "div_", "clamp_", "copy_", "fill_",
                                        "setitem"]), "in-place")
        through = self.draw(st.sampled_from(["self", "slice", "flip", "T"]) if x.ndim else
                            st.just("self"), "through")

        def target(y):
            return {"self": y, "slice": y[..., ::2] if y.ndim else y, "flip": T.flip(y, -1) if y.ndim
                    else y, "T": y.T}[through]

        def write(t, v):
            if op == "add_":
                t += v
            elif op == "sub_":
                t -= v
            elif op == "mul_":
                t *= v
            elif op == "div_":
                t /= T.exp(T.tanh(v))
            elif op == "clamp_":
                t.clamp_(-0.7, 0.9)
            elif op == "copy_":
                t.copy_(T.broadcast_to(v, t.shape) if v.ndim <= t.ndim else v.sum())
            elif op == "fill_":
                t.fill_(0.25)
            else:
                t[...] = T.broadcast_to(v, t.shape) if v.ndim <= t.ndim else v.sum()

        def step(x, v):
            y = x * 1.0
            t = target(y)
            if t.ndim < v.ndim or not _broadcasts(v.shape, t.shape):
                v = v.sum()
            write(t, v)
            return y
        self.add(f"y = x * 1; {through}(y) {op} v; y", step, i, j)

    def view_then_write(self):
        """A view taken, then its base written: the view's gradient must follow the write."""
        i = self.pick(lambda t: t.ndim >= 1)
        if i is None:
            return
        j = self.pick(lambda t: _broadcasts(t.shape, self.env[i].shape))

        def step(x, v):
            y = x * 1.0
            w = y[::-1]
            y *= v if _broadcasts(v.shape, y.shape) and v.ndim <= y.ndim else v.sum()
            return w, y
        self.add("y = x * 1; w = y[::-1]; y *= v; (w, y)", step, i, j)

    def buffer_write(self):
        """Rows of a buffer that needs no grad written with results, once through a chained
        index (`buf[0][1:] = v`): the buffer's graph must see every write."""
        i = self.pick(lambda t: t.ndim == 1 and t.shape[0] >= 2)
        if i is None:
            return

        def step(x):
            n = x.shape[0]
            buf = T.zeros((3, n), dtype=x.dtype, device=x.device)
            buf[1] = x * 2.0
            buf[0][1:] = T.sin(x[:-1])
            buf[2, ::-1] += x
            return buf
        self.add("buf = zeros(3, n); buf[1] = 2x; buf[0][1:] = sin(x[:-1]); buf[2, ::-1] += x",
                 step, i)

    STEPS = ("unary", "binary", "view", "reduce", "matmul", "join", "where", "rearrange",
             "checkpointed", "inplace", "view_then_write", "buffer_write")


def _scalar_in(c, name, pos):
    """A Python scalar operand kept in the op's domain."""
    if name == "power":
        return abs(c) + 0.5 if pos == 0 else c
    if name in ("true_divide", "xlogy") and pos == 1:
        return abs(c) + 0.5
    return c


def _broadcasts(a, b) -> bool:
    """Whether a broadcasts to b."""
    if len(a) > len(b):
        return False
    return all(m in (1, n) for m, n in zip(a[::-1], b[::-1]))


def _weights(env, rng):
    return [T.asarray(rng.uniform(-1, 1, t.shape), device=t.device) if t.dtype == T.float64
            else None for t in env]


def _total(env, weights):
    total = None
    for t, w in zip(env, weights):
        if w is not None and t.numel():
            term = (t * w).sum()
            total = term if total is None else total + term
    return total


# cheap: ~60 ms a program (but not -O0 under the sanitizers)
@settings(deadline=None, max_examples=settings().max_examples * (1 if os.environ.get("STRIDEX_SANITIZE")
                                                                 else 3))
@given(data=st.data())
def test_autograd_fuzz(device, data):
    n_leaves = data.draw(st.integers(1, 3), label="leaves")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    shapes = [data.draw(st.sampled_from(SHAPES), label="leaf shape") for _ in range(n_leaves)]
    leaves = [T.asarray(rng.uniform(-1.5, 1.5, s)).requires_grad_() for s in shapes]
    note(f"leaves: {[tuple(s) for s in shapes]}")
    prog = Program(data, leaves)
    for _ in range(data.draw(st.integers(1, 8), label="steps")):
        getattr(prog, data.draw(st.sampled_from(Program.STEPS), label="step"))()
    weights = _weights(prog.env, rng)

    def f(*xs):
        return _total(prog.replay(xs), weights)
    with autograd.no_grad():   # a program that cancels to 0 / 0 or overflows says nothing about
        val = f(*[x.detach() for x in leaves]).item()   # derivatives: finite differences fail
    assume(math.isfinite(val) and abs(val) < 1e10)
    assert autograd.gradcheck(f, leaves, atol=1e-5, rtol=1e-4)

    tangents = [T.asarray(rng.standard_normal(s)) for s in shapes]
    _, tan = autograd.jvp(f, tuple(x.detach() for x in leaves), tuple(tangents))
    with autograd.no_grad():
        eps = 1e-6
        plus = f(*[x.detach() + eps * t for x, t in zip(leaves, tangents)]).item()
        minus = f(*[x.detach() - eps * t for x, t in zip(leaves, tangents)]).item()
    np.testing.assert_allclose(tan.item(), (plus - minus) / (2 * eps), rtol=1e-4, atol=1e-5,
                               err_msg="forward mode (jvp) against a directional difference")
    if data.draw(st.integers(0, 3), label="second order") == 0:
        assert autograd.gradgradcheck(f, leaves, atol=1e-4, rtol=1e-3)
