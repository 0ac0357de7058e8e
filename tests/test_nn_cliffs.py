"""The fused CPU / CUDA paths of nn.functional's former speed cliffs (hunt 10, nnperf):

- ctc_loss: the alpha / beta recursions in one kernel call each (nn/_ctc_fused.py) instead
  of ~20 recorded ops per time step;
- grid_sample 2-D bilinear / nearest: one sampling kernel and one per gradient
  (nn/_grid_fused.py) instead of one broadcast gather (and scatter) per tap.

Each equals the per-op path it replaced (kept as the fallback and for double backward) to
1e-12 in float64, values and gradients, over every option, on "cpu" and "cuda" (the
emulator); and PyTorch's results where torch is importable. Before the fused paths these
ran ~40x (ctc) and ~5-13x (grid_sample) slower than PyTorch (benchmarks/bench_nn_cliffs.py).
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import tensor as T
from nn import _ctc_fused, _grid_fused
from nn import functional as F


def _close(a, b, tol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore"):
        assert np.all(same | (np.abs(a - b) <= tol * (1 + np.abs(b)))), np.abs(a - b).max()


def _ctc(device, fused, monkeypatch, x, tg, il, tl, dtype="float64", **kw):
    if not fused:
        monkeypatch.setattr(_ctc_fused, "usable", lambda lp: False)
    xs = T.tensor(x, dtype=dtype, device=device, requires_grad=True)
    loss = F.ctc_loss(F.log_softmax(xs, -1), T.tensor(tg, device=device), il, tl, **kw)
    w = T.tensor(np.linspace(0.5, 1.5, loss.size), dtype=dtype, device=device).reshape(loss.shape)
    (loss * w).sum().backward()
    monkeypatch.undo()
    return loss.numpy(), xs.grad.numpy()


CTC_CASES = [   # (steps, il, tl, concatenated targets, blank)
    (12, [12, 12, 12], [4, 4, 4], False, 0),
    (10, [7, 3, 0], [5, 0, 0], False, 0),       # short inputs, empty targets, il = 0
    (10, [2, 10, 10], [5, 1, 4], False, 2),     # an impossible alignment, blank = 2
    (9, [9, 8, 9], [2, 0, 4], True, 0),         # 1-D concatenated targets
]


@pytest.mark.parametrize("case", CTC_CASES)
@pytest.mark.parametrize("kw", [{}, {"reduction": "none"}, {"reduction": "sum"},
                                {"reduction": "none", "zero_infinity": True}])
def test_ctc_fused_equals_per_op(device, monkeypatch, case, kw):
    # caught nothing wrong in the old path: guards the new kernels (both devices) against it
    steps, il, tl, concat, blank = case
    rng = np.random.default_rng(len(kw) + steps)
    c = 6
    x = rng.standard_normal((steps, 3, c))
    labels = [k for k in range(c) if k != blank]
    tg = rng.choice(labels, (3, 5))
    tg[:, 1] = tg[:, 0]                         # a repeated label (no skip transition)
    if concat:
        tg = np.concatenate([tg[i, :tl[i]] for i in range(3)])
    a = _ctc(device, True, monkeypatch, x, tg, il, tl, blank=blank, **kw)
    b = _ctc(device, False, monkeypatch, x, tg, il, tl, blank=blank, **kw)
    _close(a[0], b[0])
    _close(a[1], b[1])


def test_ctc_unbatched_and_float32(device, monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 5))
    tg = np.array([1, 2, 2])
    a = _ctc(device, True, monkeypatch, x, tg, [8], [3], reduction="sum")
    b = _ctc(device, False, monkeypatch, x, tg, [8], [3], reduction="sum")
    _close(a[0], b[0])
    _close(a[1], b[1])
    x3 = rng.standard_normal((20, 4, 7))
    tg3 = rng.integers(1, 7, (4, 6))
    a = _ctc(device, True, monkeypatch, x3, tg3, [20, 15, 20, 9], [6, 3, 1, 4], dtype="float32")
    b = _ctc(device, False, monkeypatch, x3, tg3, [20, 15, 20, 9], [6, 3, 1, 4], dtype="float32")
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-4, atol=1e-6)


def test_ctc_double_backward_matches_per_op(monkeypatch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 2, 4))
    tg = np.array([[1, 2], [3, 3]])
    out = []
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(_ctc_fused, "usable", lambda lp: False)
        xs = T.tensor(x, requires_grad=True)
        loss = F.ctc_loss(F.log_softmax(xs, -1), T.tensor(tg), [6, 5], [2, 2], reduction="sum")
        (g,) = ag.grad([loss], [xs], create_graph=True)
        (gg,) = ag.grad([(g * g).sum()], [xs])
        out.append((g.numpy(), gg.numpy()))
    _close(out[0][0], out[1][0])
    _close(out[0][1], out[1][1])


def test_ctc_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((30, 4, 8))
    tg = rng.integers(1, 8, (4, 10))
    il, tl = [30, 25, 30, 12], [10, 7, 3, 9]
    xs = T.tensor(x, requires_grad=True)
    loss = F.ctc_loss(F.log_softmax(xs, -1), T.tensor(tg), il, tl)
    loss.backward()
    xt = torch.tensor(x, requires_grad=True)
    lt = torch.nn.functional.ctc_loss(torch.log_softmax(xt, -1), torch.tensor(tg), il, tl)
    lt.backward()
    _close(loss.numpy(), lt.detach().numpy(), 1e-10)
    _close(xs.grad.numpy(), xt.grad.numpy(), 1e-10)


def _grid(device, fused, monkeypatch, x, g, dtype="float64", **kw):
    if not fused:
        monkeypatch.setattr(_grid_fused, "usable", lambda inp: False)
    xs = T.tensor(x, dtype=dtype, device=device, requires_grad=True)
    gs = T.tensor(g, dtype=dtype, device=device, requires_grad=True)
    y = F.grid_sample(xs, gs, **kw)
    w = T.tensor(np.cos(np.arange(y.size)).reshape(y.shape), dtype=dtype, device=device)
    (y * w).sum().backward()
    monkeypatch.undo()
    return y.numpy(), xs.grad.numpy(), gs.grad.numpy()


def _grid_inputs(seed, special):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 5, 7))
    g = rng.uniform(-1.3, 1.3, (2, 4, 6, 2))
    g[0, 0, 0], g[0, 0, 1] = [1.0, -1.0], [0.0, 0.0]   # corners, exact pixel positions
    if special:   # non-finite coordinates: NaN in zeros padding, clipped to 0 otherwise
        g[0, 1, 0], g[0, 1, 1], g[1, 0, 0] = [np.nan, 0.2], [np.inf, 0.1], [-np.inf, 5.0]
    return x, g


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_fused_equals_per_op(device, monkeypatch, mode, padding_mode, align_corners):
    for special in (False, True):
        x, g = _grid_inputs(4, special)
        kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        a = _grid(device, True, monkeypatch, x, g, **kw)
        b = _grid(device, False, monkeypatch, x, g, **kw)
        for u, v in zip(a, b):
            _close(u, v)


def test_grid_sample_float32_and_only_grid_grad(monkeypatch):
    x, g = _grid_inputs(5, False)
    a = _grid("cpu", True, monkeypatch, x, g, dtype="float32", align_corners=True)
    b = _grid("cpu", False, monkeypatch, x, g, dtype="float32", align_corners=True)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-5)
    gs = T.tensor(g, requires_grad=True)    # the input needs no gradient
    F.grid_sample(T.tensor(x), gs, align_corners=False).sum().backward()
    monkeypatch.setattr(_grid_fused, "usable", lambda inp: False)
    gr = T.tensor(g, requires_grad=True)
    F.grid_sample(T.tensor(x), gr, align_corners=False).sum().backward()
    _close(gs.grad.numpy(), gr.grad.numpy())


def test_grid_sample_double_backward_matches_per_op(monkeypatch):
    x, g = _grid_inputs(6, False)
    out = []
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(_grid_fused, "usable", lambda inp: False)
        xs, gs = T.tensor(x, requires_grad=True), T.tensor(g, requires_grad=True)
        y = F.grid_sample(xs, gs, padding_mode="reflection", align_corners=False)
        gx, gg = ag.grad([(y * y).sum()], [xs, gs], create_graph=True)
        (h,) = ag.grad([(gx * gx).sum() + (gg * gg).sum()], [gs])
        out.append((gx.numpy(), gg.numpy(), h.numpy()))
    for u, v in zip(*out):
        _close(u, v)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_matches_torch(mode):
    torch = pytest.importorskip("torch")
    x, g = _grid_inputs(7, False)
    for pad in ("zeros", "border", "reflection"):
        xs, gs = T.tensor(x, requires_grad=True), T.tensor(g, requires_grad=True)
        F.grid_sample(xs, gs, mode=mode, padding_mode=pad, align_corners=False).sum().backward()
        xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
        yt = torch.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=pad,
                                             align_corners=False)
        yt.sum().backward()
        _close(xs.grad.numpy(), xt.grad.numpy(), 1e-10)
        _close(gs.grad.numpy(), gt.grad.numpy(), 1e-10)


# max_pool2d with padding / dilation / ceil_mode used to take im2col plus a where op per window
# element (its backward ~2.3x torch's, benchmarks/bench_nn_cliffs.py); now one kernel node
# (nn/_fused_ops.py max_pool2d_pad) whose backward is the no-padding path's scatter.
POOL_CASES = [dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=1, padding=1),
              dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True),
              dict(kernel_size=3, stride=2, padding=1, dilation=2),
              dict(kernel_size=2, stride=2, ceil_mode=True),
              dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)]


def _pool(device, fused, monkeypatch, x, kw, dtype="float64"):
    import nn.pooling as P
    if not fused:
        monkeypatch.setattr(P, "_windows_touch_input", lambda *a: False)
    xs = T.tensor(x, dtype=dtype, device=device, requires_grad=True)
    y = F.max_pool2d(xs, **kw)
    w = T.tensor(np.sin(np.arange(y.size)).reshape(y.shape), dtype=dtype, device=device)
    (y * w).sum().backward()
    monkeypatch.undo()
    return y.numpy(), xs.grad.numpy()


@pytest.mark.parametrize("kw", POOL_CASES)
def test_max_pool2d_padded_fused_equals_per_op(device, monkeypatch, kw):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 7, 9))
    x[0, 0, 0, :3] = np.nan        # NaN propagates (the last NaN of a window wins)
    x[0, 1, 1, 1] = -np.inf
    x[1, 0] = 1.0                  # ties: the first maximum gets the gradient
    a = _pool(device, True, monkeypatch, x, kw)
    b = _pool(device, False, monkeypatch, x, kw)
    _close(a[0], b[0])
    _close(a[1], b[1])


def test_max_pool2d_padded_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 11, 10))
    for kw in POOL_CASES:
        xs = T.tensor(x, requires_grad=True)
        y = F.max_pool2d(xs, **kw)
        y.sum().backward()
        xt = torch.tensor(x, requires_grad=True)
        yt = torch.nn.functional.max_pool2d(xt, **kw)
        yt.sum().backward()
        _close(y.numpy(), yt.detach().numpy())
        _close(xs.grad.numpy(), xt.grad.numpy())
