"""nn.functional, the fused row kernels (nn/_fused.py) and the layers of nn/linear.py,
nn/activation.py and nn/dropout.py.

- fused softmax / log_softmax / layer_norm against their composition of primitives: values,
  gradients through the fused C backward AND through the composed create_graph path, float32
  and float64, any axis, non-contiguous inputs, 0-d and empty rows, 16-bit inputs;
- float64 gradcheck / gradgradcheck (torch-free) of every function, jvp against the Jacobian;
- exact values (relu at 0 and NaN, gelu, silu), dropout's train/eval behaviour, mask
  statistics and checkpoint replay, Linear's init, the error messages;
- PyTorch (when importable): every function and layer with the same inputs and weights,
  outputs and input/weight gradients, float32 and float64.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd as ag
import tensor as T
from autograd.checkpoint import checkpoint
from autograd.forward import jvp
from autograd.functional import jacobian
from nn import _fused
from nn import functional as F
from nn.activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from nn.dropout import Dropout
from nn.linear import Flatten, Identity, Linear
from tensor import rowops

pytestmark = pytest.mark.usefixtures("device")

RNG = np.random.default_rng(7)
TOL = {T.float32: dict(rtol=2e-5, atol=2e-6), T.float64: dict(rtol=1e-10, atol=1e-12)}


def arr(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def leaf(a, dtype=T.float64):
    return T.asarray(np.asarray(a)).astype(dtype).requires_grad_()


def close(t, ref, dtype=T.float64, **kw):
    tol = dict(TOL[dtype])
    tol.update(kw)
    np.testing.assert_allclose(np.asarray(t.astype(T.float64).numpy() if isinstance(t, T.Tensor)
                                          else t), np.asarray(ref, dtype=np.float64), **tol)


def vjp_of(fn, xs, g):
    """(output, grads of xs) for cotangent g, through backward (fused C backward)."""
    y = fn(*xs)
    gs = ag.grad(y, xs, T.asarray(g).astype(y.dtype), allow_unused=True)
    return y, gs


def vjp_graph(fn, xs, g):
    """Same, with create_graph=True (the composed, differentiable rule path)."""
    y = fn(*xs)
    gs = ag.grad(y, xs, T.asarray(g).astype(y.dtype), create_graph=True, allow_unused=True)
    return y, gs


# ---------------------------------------------------------------- compositions of primitives

def softmax_ref(x, axis):
    return T.exp(x - T.logsumexp(x, axis=axis, keepdims=True))


def log_softmax_ref(x, axis):
    return x - T.logsumexp(x, axis=axis, keepdims=True)


def layer_norm_ref(x, nd, w, b, eps):
    axes = tuple(range(x.ndim - nd, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) * (x - m)).mean(axis=axes, keepdims=True)
    y = (x - m) / T.sqrt(v + eps)
    if w is not None:
        y = y * w
    return y + b if b is not None else y


# ---------------------------------------------------------------- fused vs composition

LAYOUTS = ["c", "t", "s"]


def laid_out(a, layout, dtype):
    """A leaf holding a: contiguous, a transposed view, or a stepped view."""
    if layout == "t":
        x = T.asarray(np.ascontiguousarray(np.swapaxes(a, 0, -1))).astype(dtype)
        x = T.swapaxes(x, 0, -1)
    elif layout == "s":
        big = np.repeat(a, 2, axis=-1)
        x = T.asarray(big).astype(dtype)[..., ::2]
    else:
        x = T.asarray(a).astype(dtype)
    assert layout == "c" or x.ndim == 1 or not x.is_contiguous()
    return x.requires_grad_()


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1),
                                        ((4, 37), 1), ((6,), 0)])
def test_softmax_fused_vs_composition(dtype, log, layout, shape, axis):
    a = arr(*shape, scale=3.0)
    g = arr(*shape)
    fused = _fused.log_softmax if log else _fused.softmax
    ref = log_softmax_ref if log else softmax_ref
    x = laid_out(a, layout, dtype)
    y, (gx,) = vjp_of(lambda t: fused(t, axis), [x], g)
    x2 = laid_out(a, "c", dtype)
    y2, (gx2,) = vjp_of(lambda t: ref(t, axis), [x2], g)
    assert y.dtype is dtype and gx.dtype is dtype and y.shape == shape
    close(y, y2.numpy(), dtype)
    close(gx, gx2.numpy(), dtype)
    _, (gx3,) = vjp_graph(lambda t: fused(t, axis), [laid_out(a, layout, dtype)], g)
    close(gx3, gx2.numpy(), dtype)


def test_softmax_stable_extremes_and_edges():
    x = T.tensor([[1000.0, 0.0, -1000.0], [-1e308, -1e308, 0.0]])
    y = _fused.softmax(x, 1)
    assert y.numpy().tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    ly = _fused.log_softmax(x, 1).numpy()
    assert ly[0].tolist() == [0.0, -1000.0, -2000.0] and math.isfinite(ly[1, 0])
    assert _fused.softmax(T.tensor(3.0), 0).item() == 1.0          # 0-d
    assert _fused.log_softmax(T.tensor(3.0), -1).item() == 0.0
    assert _fused.softmax(T.zeros((0, 4)), 1).shape == (0, 4)        # no rows
    assert _fused.softmax(T.zeros((3, 0)), 1).shape == (3, 0)        # empty rows
    nan = _fused.softmax(T.tensor([[float("nan"), 1.0], [1.0, 2.0]]), 1).numpy()
    assert np.isnan(nan[0]).all() and np.isfinite(nan[1]).all()


@pytest.mark.parametrize("dtype", [T.float16, T.bfloat16])
def test_softmax_16bit_computes_in_float32(dtype):
    # its own data (the module's RNG gives each worker of a parallel run other numbers); the
    # fused kernel and the composition may differ by an ulp in float32, so by one of dtype
    a = np.random.default_rng(141).standard_normal((4, 33)) * 2.0
    x16 = T.asarray(a).astype(dtype)
    ref = softmax_ref(x16.astype(T.float32), 1).astype(dtype)
    y = _fused.softmax(x16, 1)
    assert y.dtype is dtype
    ulp = 2.0 ** -10 if dtype is T.float16 else 2.0 ** -7
    np.testing.assert_allclose(y.astype(T.float32).numpy(), ref.astype(T.float32).numpy(),
                               rtol=ulp, atol=2.0 ** -24)
    lref = log_softmax_ref(x16.astype(T.float32), 1)
    close(_fused.log_softmax(x16, 1), lref.numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("nd,affine", [(1, True), (1, False), (2, True), (3, True)])
def test_layer_norm_fused_vs_composition(dtype, nd, affine):
    shape = (3, 4, 5, 6)[-(nd + 2):]
    a, g = arr(*shape, scale=2.0) + 1.5, arr(*shape)
    ns = shape[len(shape) - nd:]
    wa, ba = arr(*ns), arr(*ns)

    def run(fn, path):
        x = leaf(a, dtype)
        w, b = (leaf(wa, dtype), leaf(ba, dtype)) if affine else (None, None)
        xs = [x, w, b] if affine else [x]
        return path(lambda *t: fn(t[0], *(t[1:] if affine else (None, None))), xs, g)

    fused = lambda x, w, b: F.layer_norm(x, ns, w, b, 1e-5)
    ref = lambda x, w, b: layer_norm_ref(x, nd, w, b, 1e-5)
    y, gs = run(fused, vjp_of)
    y2, gs2 = run(ref, vjp_of)
    _, gs3 = run(fused, vjp_graph)
    close(y, y2.numpy(), dtype)
    for a1, a2, a3 in zip(gs, gs2, gs3):
        assert a1.dtype is dtype
        close(a1, a2.numpy(), dtype, atol=1e-5 if dtype is T.float32 else 1e-12)
        close(a3, a2.numpy(), dtype, atol=1e-5 if dtype is T.float32 else 1e-12)


def test_layer_norm_saves_mean_and_rstd():
    x = T.tensor([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 0.0, 0.0]])
    y, mean, rstd = _fused.layer_norm(x, None, None, 1, 1e-5)
    assert mean.shape == (2, 1) and rstd.shape == (2, 1)
    close(mean, [[3.0], [0.0]])
    close(rstd, [[1 / math.sqrt(3.5 + 1e-5)], [1 / math.sqrt(1e-5)]])
    assert y.numpy()[1].tolist() == [0.0] * 4
    # gradients of the statistics themselves (d mean / dx = 1/n, d rstd / dx = -rstd^3 (x-m)/n)
    xa = leaf([[1.0, 2.0, 4.0]])
    assert ag.gradcheck(lambda t: _fused.layer_norm(t, None, None, 1, 1e-5)[1:], (xa,))
    _, m16, r16 = _fused.layer_norm(x.astype(T.float16), None, None, 1, 1e-5)
    assert m16.dtype is T.float32 and r16.dtype is T.float32
    e, w = leaf(np.zeros((0, 4))), leaf(np.ones(4))                     # no rows
    ge, gw = ag.grad(F.layer_norm(e, 4, w).sum(), [e, w])
    assert ge.shape == (0, 4) and gw.tolist() == [0.0] * 4


@pytest.mark.parametrize("dtype", [T.float16, T.bfloat16])
def test_layer_norm_16bit(dtype):
    a = arr(5, 64) * 3 + 2
    x = T.asarray(a).astype(dtype)
    ref = layer_norm_ref(x.astype(T.float32), 1, None, None, 1e-5)
    y = F.layer_norm(x, 64)
    assert y.dtype is dtype
    close(y, ref.numpy(), rtol=2e-2, atol=2e-2)


def test_layer_norm_weight_grads_many_rows_deterministic():
    """More rows than the fused backward's 64 row blocks, and enough elements for threads:
    bitwise the same for 1 and 2 threads, equal to the composition."""
    a, g = arr(5000, 7), arr(5000, 7)
    outs = []
    for nt in (1, 2):
        prev = T.get_num_threads()
        T.set_num_threads(nt)
        try:
            x, w, b = leaf(a), leaf(np.ones(7)), leaf(np.zeros(7))
            outs.append(vjp_of(lambda x, w, b: F.layer_norm(x, 7, w, b), [x, w, b], g)[1])
        finally:
            T.set_num_threads(prev)
    for u, v in zip(*outs):
        np.testing.assert_array_equal(u.numpy(), v.numpy())
    x, w, b = leaf(a), leaf(np.ones(7)), leaf(np.zeros(7))
    _, gs2 = vjp_of(lambda x, w, b: layer_norm_ref(x, 1, w, b, 1e-5), [x, w, b], g)
    for u, v in zip(outs[0], gs2):
        close(u, v.numpy(), atol=1e-10)


def test_softmax_and_cross_entropy_thread_count_independent():
    a = arr(300, 200, scale=3.0)
    t = T.asarray(np.random.default_rng(0).integers(0, 200, 300))
    res = []
    for nt in (1, 2):
        prev = T.get_num_threads()
        T.set_num_threads(nt)
        try:
            x = leaf(a, T.float32)
            y = F.softmax(x, 1)
            loss = F.cross_entropy(x, t, label_smoothing=0.1)
            (g,) = ag.grad(loss + (y * y).sum(), x)
            res.append([y.detach().numpy(), loss.detach().numpy(), g.numpy()])
        finally:
            T.set_num_threads(prev)
    for u, v in zip(*res):
        np.testing.assert_array_equal(u, v)


def test_backward_runs_the_fused_kernels_and_create_graph_composes(monkeypatch):
    calls = []
    for mod, name in ((rowops, "softmax_backward"), (_fused, "_ln_bwd"), (_fused, "_ce_bwd")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    x = leaf(arr(3, 4))
    fn = lambda x: (F.softmax(x, 1) * F.layer_norm(x, 4)).sum() + F.cross_entropy(x, T.tensor([0, 1, 3]))
    ag.grad(fn(x), x)
    assert sorted(calls) == ["_ce_bwd", "_ln_bwd", "softmax_backward"]
    calls.clear()
    ag.grad(fn(x), x, create_graph=True)
    assert calls == []


def test_fused_ops_under_checkpoint():
    """Multi-output nodes (layer_norm, cross_entropy) recomputed by checkpoint: same grads."""
    x, w = leaf(arr(6, 8)), leaf(arr(8, 8))
    t = T.tensor([0, 1, 2, 3, 4, 5])
    fn = lambda x: F.cross_entropy(F.log_softmax(F.layer_norm(x @ w, 8), 1), t, reduction="sum")
    ref = ag.grad(fn(x), [x, w])
    got = ag.grad(checkpoint(fn, x), [x, w])
    for u, v in zip(got, ref):
        np.testing.assert_array_equal(u.numpy(), v.numpy())


@pytest.mark.parametrize("dtype", [T.float16, T.bfloat16])
def test_fused_backward_16bit(dtype):
    a, g = arr(4, 24, scale=2.0), arr(4, 24)
    t = T.tensor([0, 5, 23, 7])
    fns = [lambda x: F.softmax(x, 1), lambda x: F.log_softmax(x, 0), lambda x: F.layer_norm(x, 24),
           lambda x: F.cross_entropy(x, t, reduction="none", label_smoothing=0.1)]
    for fn in fns:
        ys, gs = [], []
        for d in (dtype, T.float32):
            x = leaf(a, d)
            y = fn(x)
            gy = T.asarray(g if y.ndim == 2 else g[0, :4]).astype(d)
            ys.append(y)
            gs.append(ag.grad(y, x, gy)[0])
        assert ys[0].dtype is dtype and gs[0].dtype is dtype
        close(ys[0], ys[1].detach().numpy(), rtol=3e-2, atol=3e-2)
        close(gs[0], gs[1].numpy(), rtol=5e-2, atol=5e-2)


def test_layer_norm_mixed_precision_parameters():
    x = T.asarray(arr(3, 8)).astype(T.float16)
    w = T.ones(8, dtype=T.float32).requires_grad_()
    b = T.zeros(8, dtype=T.float32).requires_grad_()
    y = F.layer_norm(x, 8, w, b)
    assert y.dtype is T.float16
    y.astype(T.float32).sum().backward()
    assert w.grad.dtype is T.float32 and b.grad.tolist() == [3.0] * 8


# ---------------------------------------------------------------- gradcheck (no torch)

GRADCHECK = {
    "softmax": lambda x: F.softmax(x, 1),
    "softmax0": lambda x: F.softmax(x, 0),
    "log_softmax": lambda x: F.log_softmax(x, -1),
    "layer_norm": lambda x: F.layer_norm(x, 4),
    "relu": F.relu,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "tanh": F.tanh,
    "sigmoid": F.sigmoid,
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_and_gradgradcheck(name):
    a = arr(3, 4) + 0.05  # away from relu's kink
    x = leaf(a)
    assert ag.gradcheck(GRADCHECK[name], (x,))
    assert ag.gradgradcheck(GRADCHECK[name], (x,))


def test_gradcheck_layer_norm_affine_and_linear():
    x, w, b = leaf(arr(2, 3, 4)), leaf(arr(3, 4)), leaf(arr(3, 4))
    ln = lambda x, w, b: F.layer_norm(x, (3, 4), w, b, 1e-3)
    assert ag.gradcheck(ln, (x, w, b))
    assert ag.gradgradcheck(ln, (x, w, b))
    x, w, b = leaf(arr(2, 3, 4)), leaf(arr(5, 4)), leaf(arr(5))
    assert ag.gradcheck(F.linear, (x, w, b))
    assert ag.gradgradcheck(F.linear, (x, w, b))


@pytest.mark.parametrize("name", ["softmax", "softmax0", "log_softmax", "layer_norm", "gelu",
                                  "gelu_tanh"])
def test_jvp_matches_jacobian(name):
    fn = GRADCHECK[name]
    x = T.asarray(arr(3, 4))
    t = T.asarray(arr(3, 4))
    _, tan = jvp(fn, x, t)
    jac = jacobian(fn, x).numpy().reshape(12, 12)
    close(tan, (jac @ t.numpy().reshape(-1)).reshape(3, 4), atol=1e-10)


def test_jvp_layer_norm_affine():
    x, w, b = T.asarray(arr(2, 5)), T.asarray(arr(5)), T.asarray(arr(5))
    tx, tw, tb = T.asarray(arr(2, 5)), T.asarray(arr(5)), T.asarray(arr(5))
    fn = lambda x, w, b: F.layer_norm(x, 5, w, b)
    _, tan = jvp(fn, (x, w, b), (tx, tw, tb))
    jx, jw, jb = jacobian(fn, (x, w, b))
    ref = (jx.numpy().reshape(10, 10) @ tx.numpy().reshape(-1) + jw.numpy().reshape(10, 5)
           @ tw.numpy() + jb.numpy().reshape(10, 5) @ tb.numpy())
    close(tan, ref.reshape(2, 5), atol=1e-10)


# ---------------------------------------------------------------- exact values


def test_activation_values():
    x = leaf([-2.0, 0.0, 1.0])
    y = F.relu(x)
    y.sum().backward()
    assert y.tolist() == [0.0, 0.0, 1.0] and x.grad.tolist() == [0.0, 0.0, 1.0]  # 0 at the kink
    r = F.relu(T.tensor([float("nan"), float("-inf"), float("inf")])).numpy()
    assert np.isnan(r[0]) and r[1:].tolist() == [0.0, math.inf]
    assert F.leaky_relu(T.tensor([-2.0, 3.0]), 0.1).tolist() == [-0.2, 3.0]
    close(F.gelu(T.tensor([1.0, -1.0])), [0.8413447460685429, -0.15865525393145707])
    close(F.gelu(T.tensor([1.0]), approximate="tanh"), [0.8411919906082768])
    close(F.silu(T.tensor([1.0])), [0.7310585786300049])
    assert F.relu(T.tensor([-1, 2])).tolist() == [0, 2]
    ones = F.one_hot(T.tensor([[0, 2], [1, 1]]))
    assert ones.dtype is T.int64 and ones.tolist() == [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [0, 1, 0]]]
    assert F.one_hot(T.tensor([1]), 4).tolist() == [[0, 1, 0, 0]]


def test_inplace_activations():
    x = T.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = T.tensor([-1.0, 2.0])
    ReLU(inplace=True)(y)
    assert y.tolist() == [0.0, 2.0]
    leaf_x = T.tensor([-1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        F.relu(leaf_x, inplace=True)
    # on a non-leaf whose value backward needs (silu, leaky_relu, dropout): the gradients of
    # the out-of-place form (the graph keeps the input the write replaced)
    xa = np.array([[-1.5, -0.25, 0.5, 2.0]])
    for f in (lambda v, ip: F.silu(v, inplace=ip), lambda v, ip: F.leaky_relu(v, 0.1, ip),
              lambda v, ip: F.relu(v, ip), lambda v, ip: F.dropout(v, 0.0, True, ip)):
        grads = []
        for ip in (False, True):
            x = T.tensor(xa, requires_grad=True)
            y = f(x * 2.0, ip)
            (y * y * T.tensor([[1.0, 2.0, 3.0, 4.0]])).sum().backward()
            grads.append(x.grad.numpy())
        assert np.array_equal(grads[0], grads[1]), grads


def test_softmax_implicit_dim_and_dtype():
    x = T.asarray(arr(2, 3, 4))
    close(F.softmax(x), softmax_ref(x, 0).numpy())          # 3-d: dim 0, as PyTorch
    x2 = T.asarray(arr(2, 3))
    close(F.softmax(x2), softmax_ref(x2, 1).numpy())
    assert F.log_softmax(T.asarray(arr(2, 3)), 1, dtype=T.float32).dtype is T.float32


# ---------------------------------------------------------------- dropout


def test_dropout_train_eval_and_statistics():
    T.manual_seed(3)
    x = T.ones(200_000, dtype=T.float32)
    y = F.dropout(x, 0.3)
    vals = y.numpy()
    assert set(np.unique(vals).tolist()) == {0.0, np.float32(1 / 0.7)}
    frac = (vals != 0).mean()
    assert abs(frac - 0.7) < 0.01           # ~5 standard deviations
    assert abs(vals.mean() - 1.0) < 0.015   # unbiased
    assert F.dropout(x, 0.3, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 1.0).numpy().max() == 0.0
    d = Dropout(0.5)
    assert d.training and d(T.ones(50)).numpy().min() == 0.0
    d.eval()
    assert d(T.ones(50)).tolist() == [1.0] * 50
    assert repr(Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"


def test_dropout_mask_from_default_generator_and_gradient():
    T.manual_seed(11)
    x = leaf(np.arange(1.0, 9.0))
    y = F.dropout(x, 0.5)
    T.manual_seed(11)
    keep = T.random.rand(8, dtype=T.float32).numpy() >= 0.5
    np.testing.assert_array_equal(y.detach().numpy(), np.where(keep, np.arange(1.0, 9.0) * 2, 0))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.where(keep, 2.0, 0.0))


def test_dropout_replayed_by_checkpoint():
    w = leaf(arr(16, 16))
    x = leaf(arr(4, 16))
    fn = lambda x: F.dropout(F.relu(x @ w), 0.5).sum(axis=1)
    T.manual_seed(5)
    ref = fn(x)
    gx, gw = ag.grad(ref.sum(), [x, w])
    T.manual_seed(5)
    out = checkpoint(fn, x)
    gx2, gw2 = ag.grad(out.sum(), [x, w])
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(gx2.numpy(), gx.numpy())
    np.testing.assert_array_equal(gw2.numpy(), gw.numpy())


# ---------------------------------------------------------------- layers


def test_linear_init_dtype_and_shapes():
    T.manual_seed(0)
    m = Linear(50, 20)
    assert m.weight.dtype is T.float32 and m.bias.dtype is T.float32
    assert m.weight.shape == (20, 50) and m.bias.shape == (20,)
    bound = 1 / math.sqrt(50)                 # kaiming_uniform(a=sqrt(5)) == 1/sqrt(fan_in)
    w = m.weight.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound   # U(-b, b) has std b/sqrt(3)
    assert np.abs(m.bias.numpy()).max() <= bound
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m(T.ones((2, 3, 50), dtype=T.float32)).shape == (2, 3, 20)
    assert m(T.ones(50, dtype=T.float32)).shape == (20,)
    nb = Linear(4, 3, bias=False, dtype=T.float64)
    assert nb.bias is None and nb.weight.dtype is T.float64
    assert [n for n, _ in nb.named_parameters()] == ["weight"]
    assert repr(nb) == "Linear(in_features=4, out_features=3, bias=False)"
    y = nb(T.ones((2, 4), dtype=T.float64))
    close(y, np.ones((2, 4)) @ nb.weight.numpy().T)


def test_linear_trains_weight_grads():
    m = Linear(3, 2, dtype=T.float64)
    x = T.asarray(arr(5, 3))
    m(x).sum().backward()
    close(m.weight.grad, np.tile(x.numpy().sum(0), (2, 1)))
    close(m.bias.grad, [5.0, 5.0])


def test_identity_flatten_and_activation_modules():
    x = T.asarray(arr(2, 3, 4, 5))
    assert Identity(3, k=1)(x) is x
    assert Flatten()(x).shape == (2, 60) and Flatten(0, 1)(x).shape == (6, 4, 5)
    assert Flatten(-2)(x).shape == (2, 3, 20)
    for mod, fn in [(ReLU(), F.relu), (LeakyReLU(0.2), lambda t: F.leaky_relu(t, 0.2)),
                    (GELU("tanh"), lambda t: F.gelu(t, approximate="tanh")), (SiLU(), F.silu),
                    (Tanh(), T.tanh), (Sigmoid(), T.sigmoid), (Softmax(1), lambda t: F.softmax(t, 1)),
                    (LogSoftmax(-1), lambda t: F.log_softmax(t, -1))]:
        np.testing.assert_array_equal(mod(x).numpy(), fn(x).numpy())
    assert repr(GELU()) == "GELU(approximate='none')"
    assert repr(LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(Softmax(dim=1)) == "Softmax(dim=1)"


# ---------------------------------------------------------------- errors


def test_error_messages():
    m = Linear(4, 3)
    with pytest.raises(ValueError, match=r"Linear: expected input of shape \(\*, 4\), got shape \(2, 5\)"):
        m(T.ones((2, 5), dtype=T.float32))
    with pytest.raises(ValueError, match="linear: input shape"):
        F.linear(T.ones((2, 5)), T.ones((3, 4)))
    with pytest.raises(ValueError, match="bias shape"):
        F.linear(T.ones((2, 4)), T.ones((3, 4)), T.ones(4))
    with pytest.raises(TypeError, match="softmax: expected a floating-point tensor, got int64"):
        F.softmax(T.arange(3), 0)
    with pytest.raises(T.AxisError, match="softmax"):
        F.softmax(T.ones((2, 3)), 2)
    with pytest.raises(ValueError, match=r"layer_norm: normalized_shape \(4,\) does not match"):
        F.layer_norm(T.ones((2, 3)), 4)
    with pytest.raises(ValueError, match="layer_norm: weight shape"):
        F.layer_norm(T.ones((2, 3)), 3, T.ones(4))
    with pytest.raises(TypeError, match="layer_norm: weight is float32 but input is float64"):
        F.layer_norm(T.ones((2, 3)), 3, T.ones(3, dtype=T.float32))
    with pytest.raises(ValueError, match="dropout: probability has to be between 0 and 1"):
        F.dropout(T.ones(3), 1.5)
    with pytest.raises(ValueError, match="Dropout: probability"):
        Dropout(-0.1)
    with pytest.raises(ValueError, match="gelu: approximate"):
        F.gelu(T.ones(2), approximate="fast")
    with pytest.raises(ValueError, match="Flatten"):
        Flatten()(T.ones(3))
    with pytest.raises(ValueError, match="one_hot"):
        F.one_hot(T.tensor([3]), 3)


# ---------------------------------------------------------------- PyTorch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _pair(torch, a, dtype):
    npd = np.float32 if dtype is T.float32 else np.float64
    ours = T.asarray(a.astype(npd)).requires_grad_()
    theirs = torch.tensor(a.astype(npd), requires_grad=True)
    return ours, theirs


TORCH_FNS = {
    "relu": (F.relu, "relu", {}),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), "leaky_relu", {"negative_slope": 0.1}),
    "gelu": (F.gelu, "gelu", {}),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), "gelu", {"approximate": "tanh"}),
    "silu": (F.silu, "silu", {}),
    "tanh": (F.tanh, "tanh", {}),
    "sigmoid": (F.sigmoid, "sigmoid", {}),
    "softmax": (lambda x: F.softmax(x, 1), "softmax", {"dim": 1}),
    "softmax0": (lambda x: F.softmax(x, 0), "softmax", {"dim": 0}),
    "log_softmax": (lambda x: F.log_softmax(x, -1), "log_softmax", {"dim": -1}),
    "layer_norm": (lambda x: F.layer_norm(x, (3, 40)), "layer_norm", {"normalized_shape": (3, 40)}),
}


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("name", sorted(TORCH_FNS))
def test_functions_match_torch(torch, name, dtype):
    ours_fn, tname, kw = TORCH_FNS[name]
    a, g = arr(4, 3, 40, scale=2.0), arr(4, 3, 40)
    x, xt = _pair(torch, a, dtype)
    y = ours_fn(x)
    yt = getattr(torch.nn.functional, tname)(xt, **kw)
    (gx,) = ag.grad(y, x, T.asarray(g).astype(dtype))
    (gxt,) = torch.autograd.grad(yt, xt, torch.tensor(g, dtype=yt.dtype))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is T.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **tol)
    np.testing.assert_allclose(gx.numpy(), gxt.numpy(), **tol)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
def test_layer_norm_affine_matches_torch(torch, dtype):
    a, g, wa, ba = arr(6, 5, 16) + 3, arr(6, 5, 16), arr(16), arr(16)
    x, xt = _pair(torch, a, dtype)
    w, wt = _pair(torch, wa, dtype)
    b, bt = _pair(torch, ba, dtype)
    y = F.layer_norm(x, 16, w, b, 1e-6)
    yt = torch.nn.functional.layer_norm(xt, (16,), wt, bt, 1e-6)
    gs = ag.grad(y, [x, w, b], T.asarray(g).astype(dtype))
    gts = torch.autograd.grad(yt, [xt, wt, bt], torch.tensor(g, dtype=yt.dtype))
    tol = dict(rtol=1e-4, atol=1e-5) if dtype is T.float32 else dict(rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **tol)
    for u, v in zip(gs, gts):
        np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
def test_linear_module_matches_torch(torch, dtype):
    m = Linear(7, 3, dtype=dtype)
    mt = torch.nn.Linear(7, 3, dtype=torch.float32 if dtype is T.float32 else torch.float64)
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(m.weight.numpy()))
        mt.bias.copy_(torch.tensor(m.bias.numpy()))
    a = arr(2, 4, 7)
    x, xt = _pair(torch, a, dtype)
    y, yt = m(x), mt(xt)
    g = arr(2, 4, 3)
    gs = ag.grad(y, [x, m.weight, m.bias], T.asarray(g).astype(dtype))
    gts = torch.autograd.grad(yt, [xt, mt.weight, mt.bias], torch.tensor(g, dtype=yt.dtype))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is T.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **tol)
    for u, v in zip(gs, gts):
        np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)


def test_linear_init_distribution_matches_torch(torch):
    """Same bounds as torch.nn.Linear (the draws come from different generators)."""
    torch.manual_seed(0)
    mt = torch.nn.Linear(64, 32)
    m = Linear(64, 32)
    for ours, theirs in ((m.weight, mt.weight), (m.bias, mt.bias)):
        bound = 1 / math.sqrt(64)
        assert np.abs(ours.numpy()).max() <= bound and theirs.abs().max().item() <= bound
