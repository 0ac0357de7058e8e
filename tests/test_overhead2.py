"""The eager shortcuts, second part: a seeded differential fuzzer of the remembered decisions
(binary plans per operand layout, the C operators' table and plans, where / clone / reductions /
indexing shortcuts) against NumPy, calling ops in random order so that each cache is reused by
calls that differ in what its key may miss (dtype pairs, 0-d against 1-element, broadcasting,
negative and zero strides, Python scalars of every kind, requires_grad, no_grad); and the public
unary functions in C (tensor/cpu/csrc/fp_unary.h: T.exp(x), x.exp()...): bitwise the Python
path's results, the same graph nodes, and every unusual call handed to Python.
"""
from __future__ import annotations

import copy
import inspect
import warnings

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import forward_ad as fw
from tensor import _tensor
from tensor.cpu import fastpath

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64"]
SHAPES = [(), (1,), (3,), (2, 3), (3, 1), (1, 3), (0, 3), (4, 4)]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "less", "equal",
          "greater_equal", "floor_divide", "bitwise_and", "not_equal"]
DUNDER = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
          "multiply": lambda a, b: a * b, "true_divide": lambda a, b: a / b,
          "less": lambda a, b: a < b, "equal": lambda a, b: a == b,
          "greater_equal": lambda a, b: a >= b, "not_equal": lambda a, b: a != b}


def _data(rng, dtype, shape):
    a = rng.standard_normal(shape) * 4
    if dtype == "bool":
        return a > 0
    if dtype.startswith("complex"):
        return (a + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith(("int", "uint")):
        return np.round(a).astype(dtype)
    return a.astype(dtype)


def _layout(rng, n):
    """A tensor holding n's values in a random layout (contiguous, transposed, negative step,
    stepped, broadcast), and the array it equals."""
    k = rng.integers(5)
    if n.ndim == 2 and k == 1:
        return T.asarray(np.ascontiguousarray(n.T)).T, n
    if n.ndim >= 1 and k == 2:
        return T.asarray(np.ascontiguousarray(n[::-1]))[::-1], n
    if n.ndim >= 1 and k == 3 and n.shape[-1] > 0:
        w = np.repeat(n, 2, axis=-1)
        return T.asarray(w)[..., ::2], w[..., ::2]
    if n.ndim == 2 and k == 4 and n.shape[0] == 1:
        return T.broadcast_to(T.asarray(n[0]), (3, n.shape[1])), np.broadcast_to(n[0], (3, n.shape[1]))
    return T.asarray(n), n


def _scalar(rng):
    return [float(rng.standard_normal() * 3), int(rng.integers(-5, 5)), True, 2 ** 40, 1e40, -0.0,
            300, float("nan"), np.float32(1.5), np.int64(-2)][rng.integers(10)]


def _same(got, want, what):
    g = got.numpy()
    want = np.asarray(want)
    assert (g.dtype, g.shape) == (want.dtype, want.shape), what
    assert np.array_equal(g, want, equal_nan=g.dtype.kind in "fc"), what
    if g.dtype.kind == "f":   # -0.0 against 0.0 too
        assert np.array_equal(np.signbit(g), np.signbit(want)), what


def _outcome(fn):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return True, fn()
        except (TypeError, ValueError, OverflowError) as e:
            return False, type(e)


def _binary_case(rng, ta, na, tb, nb):
    name = BINARY[rng.integers(len(BINARY))]
    if rng.random() < 0.3:   # a Python or NumPy scalar on either side
        s = _scalar(rng)
        (ta, na), (tb, nb) = ((ta, na), (s, s)) if rng.random() < 0.5 else ((s, s), (ta, na))
    dunder = name in DUNDER and isinstance(ta, T.Tensor) and rng.random() < 0.5
    ours = _outcome(lambda: (DUNDER[name] if dunder else getattr(T, name))(ta, tb))
    ref = _outcome(lambda: getattr(np, name)(na, nb))
    what = (name, dunder, getattr(ta, "shape", ta), getattr(ta, "strides", None), getattr(ta, "dtype", None),
            getattr(tb, "shape", tb), getattr(tb, "strides", None), getattr(tb, "dtype", None))
    if not (ours[0] and ref[0]):
        return   # an error on either side (NumPy's wrapping ints, our refusals): other tests' matter
    if name == "true_divide" and ref[1].dtype.kind == "c":   # (complex division's rounding)
        np.testing.assert_allclose(ours[1].numpy(), ref[1], rtol=1e-5, err_msg=str(what))
        return
    _same(ours[1], ref[1], what)


def _other_case(rng, kind, ta, na, tb, nb):
    if kind == 0:
        c = _data(rng, "bool", na.shape)
        tc, c = _layout(rng, c)
        x = tb if rng.random() < 0.7 else _scalar(rng)
        y = ta if rng.random() < 0.7 else _scalar(rng)
        nx, ny = (nb if x is tb else x), (na if y is ta else y)
        ours, ref = _outcome(lambda: T.where(tc, x, y)), _outcome(lambda: np.where(c, nx, ny))
        if ours[0] and ref[0]:
            _same(ours[1], ref[1], ("where", tc.shape, x, y))
    elif kind == 1:
        _same(T.clone(ta) if rng.random() < 0.5 else ta.copy(), na.copy(), ("clone", ta.strides))
    elif kind == 2 and na.dtype.kind != "c":
        ax = None if ta.ndim == 0 or rng.random() < 0.3 else int(rng.integers(-ta.ndim, ta.ndim))
        kd = bool(rng.random() < 0.3)
        op = ["sum", "max", "mean"][rng.integers(3)]
        ours = _outcome(lambda: getattr(ta, op)(axis=ax, keepdims=kd))
        ref = _outcome(lambda: getattr(na, op)(axis=ax, keepdims=kd))
        assert ours[0] == ref[0], (op, ta.shape, ax)
        if ours[0] and op == "max":
            _same(ours[1], np.asarray(ref[1]), (op, ta.shape, ax, kd))
        elif ours[0]:
            g, w = ours[1].numpy(), np.asarray(ref[1])
            assert g.shape == w.shape, (op, ta.shape, ax, kd)
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=2e-2, atol=2e-2)
    elif kind == 3 and ta.ndim and ta.shape[0]:
        key = [(slice(None, None, -1),), (0,), (Ellipsis, None), (slice(1, None), Ellipsis)][rng.integers(4)]
        _same(ta[key], na[key], ("index", key))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("seed", range(4))
def test_fuzz_shortcuts_against_numpy(seed):
    """Random sequences of binary functions and operators, where, clone, reductions and basic
    indexing over a small pool of layouts and dtypes, so that plans made for one call serve
    the following ones: every result equals NumPy's (dtype, shape, bits)."""
    rng = np.random.default_rng(seed)
    for _ in range(250):
        d1 = DTYPES[rng.integers(len(DTYPES))]
        d2 = d1 if rng.random() < 0.5 else DTYPES[rng.integers(len(DTYPES))]
        s1 = SHAPES[rng.integers(len(SHAPES))]
        s2 = s1 if rng.random() < 0.5 else SHAPES[rng.integers(len(SHAPES))]
        ta, na = _layout(rng, _data(rng, d1, s1))
        tb, nb = _layout(rng, _data(rng, d2, s2))
        kind = rng.integers(8)
        if kind < 4:
            _binary_case(rng, ta, na, tb, nb)
        else:
            _other_case(rng, kind - 4, ta, na, tb, nb)


@pytest.mark.parametrize("seed", range(2))
def test_fuzz_shortcuts_with_gradients_against_torch(seed):
    """The same layouts with requires_grad on and off, under no_grad and in forward mode, so a
    plan made without autograd serves a call that needs a node and the other way round."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(100 + seed)
    shapes = [(3, 4), (3, 1), (1, 4), (4,), ()]
    fns = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
           lambda a, b: 2.5 - a, lambda a, b: -a, lambda a, b: a.exp() * b, lambda a, b: (a * b).tanh(),
           lambda a, b: a.sin() - b.sqrt() if isinstance(b, T.Tensor) else a.sin() - b.abs().sqrt()]
    for _ in range(120):
        sa, sb = shapes[rng.integers(5)], shapes[rng.integers(5)]
        a, b = rng.standard_normal(sa), np.abs(rng.standard_normal(sb)) + 0.5
        ta = T.asarray(np.ascontiguousarray(a.T)).T if len(sa) == 2 and rng.random() < 0.3 else T.asarray(a)
        tb = T.asarray(b)
        mode = rng.integers(4)   # 0 plain, 1 a needs grad, 2 both, 3 both under no_grad
        f = fns[rng.integers(len(fns))]
        ga, gb = bool(mode >= 1), bool(mode >= 2)
        xa, xb = torch.tensor(a, requires_grad=ga), torch.tensor(b, requires_grad=gb)
        ta.requires_grad_(ga)
        tb.requires_grad_(gb)
        if mode == 3:
            with autograd.no_grad():
                r = f(ta, tb)
            assert not r.requires_grad and r.grad_fn is None
            np.testing.assert_allclose(r.numpy(), f(xa, xb).detach().numpy(), rtol=1e-14)
            continue
        if mode == 0 and rng.random() < 0.5:   # forward mode
            with fw.dual_level():
                p, tan = fw.unpack_dual(f(fw.make_dual(ta, T.ones(sa, dtype="float64")), tb))
            with torch.autograd.forward_ad.dual_level():
                dx = torch.autograd.forward_ad.make_dual(xa, torch.ones(sa, dtype=torch.float64))
                pp, tt = torch.autograd.forward_ad.unpack_dual(f(dx, xb))
            np.testing.assert_allclose(p.numpy(), pp.numpy(), rtol=1e-14)
            np.testing.assert_allclose(tan.numpy(), tt.numpy(), rtol=1e-12, atol=1e-15)
            continue
        r, rt = f(ta, tb), f(xa, xb)
        np.testing.assert_allclose(r.detach().numpy(), rt.detach().numpy(), rtol=1e-14)
        if ga:
            w = rng.standard_normal(rt.shape)
            (r * T.asarray(w)).sum().backward()
            (rt * torch.tensor(w)).sum().backward()
            np.testing.assert_allclose(ta.grad.numpy(), xa.grad.numpy(), rtol=1e-12)
            if gb and xb.grad is not None:
                np.testing.assert_allclose(tb.grad.numpy(), xb.grad.numpy(), rtol=1e-12)


def test_forward_mode_broadcast_tangent():
    """Found by the fuzzer above: x + y in forward mode with only the broadcast x dual, x's
    tangent as the result's (shape and dtype; it kept x's, so its sum missed terms)."""
    with fw.dual_level():
        x = fw.make_dual(T.ones(3, dtype="float32"), T.ones(3, dtype="float32"))
        p, t = fw.unpack_dual(x + T.ones((2, 3), dtype="float64"))
        assert t.shape == p.shape == (2, 3) and t.dtype is p.dtype is T.float64
        assert fw.unpack_dual((x - T.ones((2, 3))).sum())[1].item() == 6.0


# ---------------------------------------------------------------- unary functions in C

UNARY_DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "int32", "int64", "uint8",
                "bool"]
COMMON = ["negative", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid"]


def _c_built():
    T.zeros(1)   # (the C path is installed on the first CPU allocation)
    if not fastpath.counters() or type(T.exp) is type(_tensor.FAST_FUNCS["exp"]):
        pytest.skip("the C fast path is not built here")


def _bits(t: T.Tensor) -> np.ndarray:
    """t's bytes (exact, NaN payloads and bfloat16 included) in its layout's element order."""
    u = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}
    if t.dtype.kind == "c":
        t = T.view_as_real(t)
    return (t if t.dtype.kind == "b" else t.view(getattr(T, u[t.itemsize]))).numpy()


def _values(rng, dtype, shape=(5, 7)):
    a = rng.standard_normal(shape) * 3
    if dtype == "bool":
        return T.asarray(a > 0)
    if dtype.startswith(("int", "uint")):
        return T.asarray(np.round(np.abs(a) if dtype[0] == "u" else a).astype(dtype))
    if dtype == "complex64":
        return T.asarray((a + 1j * rng.standard_normal(shape)).astype(dtype))
    a[0, :3] = [np.nan, np.inf, -0.0]
    return T.asarray(a.astype(np.float32) if dtype == "bfloat16" else a.astype(dtype)).astype(dtype)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", UNARY_DTYPES)
def test_unary_c_functions_are_bitwise_the_python_path(dtype):
    """Every public unary function the C path stands in for, function and method form: the
    Python function's result (dtype, shape, strides, bits) or its exception, and the C path
    serves the second call of each op it has a kernel for."""
    _c_built()
    rng = np.random.default_rng(5)
    x = _values(rng, dtype)
    for name, py in sorted(_tensor.FAST_FUNCS.items()):
        c = getattr(T, name)
        assert c is not py and getattr(T.Tensor, name, c) is c, name
        ok, want = _outcome(lambda py=py: py(x))
        method = getattr(x, name) if hasattr(x, name) else (lambda c=c: c(x))
        for call in (lambda c=c: c(x), lambda c=c: c(x), method):
            h = fastpath.counters()["op_hits"]
            got = _outcome(call)
            assert got[0] == ok, (name, dtype, got)
            if not ok:
                assert got[1] is want, (name, dtype)
                continue
            r = got[1]
            assert (r.dtype, r.shape, r.strides) == (want.dtype, want.shape, want.strides), (name, dtype)
            np.testing.assert_array_equal(_bits(r), _bits(want), err_msg=f"{name} {dtype}")
            assert r._version == 0 and r.flags.writeable and not T.shares_memory(r, x)
            if want.dtype is x.dtype or (want.dtype is T.bool_ and dtype != "bool"):
                # (a kernel computing in x's dtype: after the first call, C serves)
                assert fastpath.counters()["op_hits"] in (h, h + 1)
        if ok and want.dtype is x.dtype and dtype in ("float32", "float64"):
            h = fastpath.counters()["op_hits"]
            c(x)
            assert fastpath.counters()["op_hits"] == h + 1, name


@pytest.mark.parametrize("name", COMMON + ["square", "reciprocal", "sinh", "log1p", "erf", "floor"])
def test_unary_c_functions_put_the_python_node_on_the_graph(name):
    """With an input that requires grad, the C path's node is the Python record's: the same op,
    rule, edges, saved tensors, arguments; and backward gives the same gradient, bit for bit."""
    _c_built()
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    a = np.abs(rng.standard_normal((4, 3))) + 0.25
    py, c = _tensor.FAST_FUNCS[name], getattr(T, name)
    x = T.asarray(a).requires_grad_()
    h = fastpath.counters()["op_hits"]
    rc, rp = c(x), py(x)
    rm = getattr(x, name)()
    assert fastpath.counters()["op_hits"] >= h + 2   # (the first call may resolve the kernel)
    w = T.asarray(rng.standard_normal((4, 3)))
    for r in (rc, rm):
        np.testing.assert_array_equal(_bits(r), _bits(rp))
        nc, np_ = r.grad_fn, rp.grad_fn
        assert type(nc) is type(np_) and nc.op == np_.op == name and nc.rule is np_.rule
        assert [(n, i) for n, i in nc.next] == [(n, i) for n, i in np_.next]
        assert [type(t) for t, *_ in nc.saved] == [type(t) for t, *_ in np_.saved]
        assert [type(v) for v in nc.ctx.args] == [type(v) for v in np_.ctx.args]
        assert nc.ctx.needs == np_.ctx.needs and (nc.ctx.out is None) == (np_.ctx.out is None)
        assert r.requires_grad and r.is_leaf is False
    gs = []
    for r in (rc, rm, rp):
        x.grad = None
        (r * w).sum().backward()
        gs.append(x.grad.numpy())
    np.testing.assert_array_equal(gs[0], gs[2])
    np.testing.assert_array_equal(gs[1], gs[2])
    xt = torch.tensor(a, requires_grad=True)
    tname = {"negative": "neg", "arccos": "acos"}.get(name, name)
    (getattr(torch, tname)(xt) * torch.tensor(w.numpy())).sum().backward()
    np.testing.assert_allclose(gs[0], xt.grad.numpy(), rtol=1e-12, atol=1e-300)


def test_unary_c_functions_hand_unusual_calls_to_python():
    """Views, empty and 0-d tensors, promotion, out=, keywords, lists, autocast, forward mode,
    capture, saved-tensor hooks, anomaly mode, a view written since its graph was made, an op
    without a derivative rule: each gives the Python function's result (or error)."""
    _c_built()
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    x = T.asarray(a)
    py = _tensor.FAST_FUNCS["exp"]
    T.exp(x)

    def miss(fn):
        m = fastpath.counters()["op_misses"]
        r = fn()
        assert fastpath.counters()["op_misses"] == m + 1
        return r
    for v in (x.T, x[:, ::2], x[::-1], T.asarray(a[:0])):
        np.testing.assert_array_equal(_bits(miss(lambda v=v: T.exp(v))), _bits(py(v)))
    r0 = T.exp(x[1, 2])   # 0-d: C
    np.testing.assert_array_equal(_bits(r0), _bits(py(x[1, 2])))
    xi = T.asarray(np.arange(6, dtype=np.int32))
    assert miss(lambda: T.exp(xi)).dtype is T.float64
    out = T.empty((4, 6), dtype="float32")
    assert miss(lambda: T.exp(x, out=out)) is out
    np.testing.assert_array_equal(_bits(miss(lambda: T.exp(x=x))), _bits(py(x)))
    np.testing.assert_array_equal(miss(lambda: T.sqrt([4.0, 9.0])).numpy(), [2.0, 3.0])
    with pytest.raises(TypeError):
        T.exp()
    # autocast: exp runs in float32 (16-bit inputs cast), its inner ops left alone
    with T.autocast("cpu", dtype=T.bfloat16):
        xb = x.astype("bfloat16")
        rb = miss(lambda: T.exp(xb))
        assert rb.dtype is T.float32
        np.testing.assert_array_equal(rb.numpy(), T.exp(xb.astype("float32")).numpy())
    # forward mode
    x64 = T.asarray(a.astype(np.float64))
    with fw.dual_level():
        p, tan = fw.unpack_dual(T.exp(fw.make_dual(x64, T.ones((4, 6), dtype="float64"))))
        np.testing.assert_array_equal(tan.numpy(), p.numpy())
    # capture: the captured step sees every call, and replays with new inputs
    f = T.compile(lambda t: T.sin(t) * 2.0)
    for s in range(3):
        np.testing.assert_array_equal(f(x64 * s).numpy(), T.sin(x64 * s).numpy() * 2.0)
    # saved-tensor hooks see exp's saved output; anomaly mode keeps each node's trace
    packed = []
    xg = T.asarray(a.astype(np.float64)).requires_grad_()
    with autograd.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        miss(lambda: T.exp(xg)).sum().backward()
    assert len(packed) == 1
    with autograd.detect_anomaly():
        assert miss(lambda: T.exp(xg)).grad_fn.trace is not None
    # a view written since its graph was made: Python refreshes it first
    base = T.asarray(a.astype(np.float64)).requires_grad_() * 1.0
    v = base[0]
    with autograd.no_grad():
        base.add_(1.0)
    rv = miss(lambda: T.exp(v))
    np.testing.assert_array_equal(rv.detach().numpy(), np.exp(a[0].astype(np.float64) + 1.0))
    # no derivative rule: record's error, word for word
    xr = T.asarray(a.astype(np.float64)).requires_grad_()
    errs = []
    for fn in (T.airy_ai, _tensor.FAST_FUNCS["airy_ai"]):
        with pytest.raises(NotImplementedError) as e:
            fn(xr)
        errs.append(str(e.value))
    assert errs[0] == errs[1]
    # no_grad: no node, still C
    with autograd.no_grad():
        h = fastpath.counters()["op_hits"]
        r = T.exp(xr)
        assert fastpath.counters()["op_hits"] == h + 1 and r.grad_fn is None and not r.requires_grad


def test_unary_c_functions_pass_for_the_python_ones():
    """Names, docs, signature, op name, identity across T / Tensor / aliases, method binding,
    copies, attributes set on them."""
    _c_built()
    py = _tensor.FAST_FUNCS["exp"]
    assert T.exp.__name__ == "exp" and T.exp.__doc__ == py.__doc__ and T.exp.__wrapped_op__ == "exp"
    assert T.exp.__wrapped__ is py.__wrapped__ and repr(T.exp) == repr(py)
    assert list(inspect.signature(T.exp).parameters) == list(inspect.signature(py).parameters)
    assert T.Tensor.exp is T.exp and T.absolute is T.abs and T.Tensor.abs is T.abs
    assert copy.copy(T.exp) is T.exp and copy.deepcopy([T.exp])[0] is T.exp
    x = T.ones(3)
    assert x.exp.__self__ is x and x.exp.__func__ is T.exp
    np.testing.assert_array_equal(T.Tensor.exp(x).numpy(), np.exp(np.ones(3)))
    np.testing.assert_array_equal(abs(-x).numpy(), np.ones(3))   # (__abs__ calls T.abs)
    T.exp.some_note = 1
    try:
        assert py.some_note == 1 and T.exp.some_note == 1
    finally:
        del T.exp.some_note
