"""CUDA versions of nn's fused kernels (tensor/cuda/nn_kernels.py; cuda_src/nn_rows.cuh,
nn_pool.cuh, optim.cuh) against the CPU backend.

- Compile: every module of the "nn_rows", "nn_pool" and "optim" families compiles with NVRTC
  for sm_80, sm_90 and sm_100 and contains every kernel it lists (no GPU needed; skipped without
  cuda.bindings.nvrtc).
- Device: each fused function and its backward on "cuda" against the same call on the CPU
  (skipped unless tensor.cuda.is_available(); STRIDEX_CUDA_EMULATOR=1 runs them on the CPU
  emulator). Sizes stay small: the emulator runs every GPU thread as a fiber.

Tolerances (cuda vs cpu): the row kernels sum in another order than the CPU (a warp/block tree
instead of 8 lanes) and NVRTC contracts their a * b + c into FMAs (family "nn_rows" is not
`exact`, see tensor/cuda/kernels.py), so floats agree to a few ulps of the compute type:
float64 rtol 1e-12, float32 rtol 1e-5 (atol 1e-6 / 1e-5 for gradients), 16-bit outputs to
one ulp of the storage type (float16 rtol/atol 2e-3, bfloat16 1.6e-2). Max pooling (values and
indices), im2col and the optimizer updates do the CPU's arithmetic in the CPU's order and are
compared bit for bit ("optim" is an `exact` family: built with --fmad=false, its fma()s
explicit, as the CPU's).
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers import bf16_round, synced, to_np

import nn
import tensor as T
from nn import _fused_ops
from nn import functional as F
from tensor import dtypes as dt
from tensor.cuda import kernels as CK
from tensor.cuda import nn_kernels as NK

MODULES = [(fam, d) for fam, (_, dts) in NK.FAMILIES.items() for d in dts]


def _mod_id(m):
    return f"{m[0]}_{m[1].sfx}"


# ---------------------------------------------------------------- compile (no GPU needed)

# (every module x arch is compiled by tests/test_cuda_compile.py)


def test_families_registered_for_their_dtypes():
    mods = CK.all_modules()
    for fam, d in MODULES:
        assert (fam, d) in mods
        assert CK.entries(fam, d) == NK.FAMILIES[fam][0](d)
    assert ("optim", dt.float16) not in mods and ("nn_rows", dt.int32) not in mods
    assert CK.kernel_names("nn_rows", dt.float32)[:2] == ["softmax_fwd_f32", "softmax_bwd_f32"]


def test_layer_norm_row_blocks_depend_on_shape_only():
    assert NK.layer_norm_row_block(10, 4) == 1
    assert NK.layer_norm_row_block(100000, 1024) == -(-100000 // 64)
    for rows, L in ((1, 1), (7, 3), (1000, 50), (123457, 17)):
        rb = NK.layer_norm_row_block(rows, L)
        assert rb >= 1 and -(-rows // rb) * L <= max(NK.LN_COLS_THREADS, 64 * L) + rb * L


# ---------------------------------------------------------------- device tests: cuda vs cpu

def _cuda_ok() -> bool:
    try:
        return T.cuda.is_available()
    except Exception:  # noqa: BLE001 - a backend that fails to load is unavailable
        return False


needs_cuda = pytest.mark.skipif(
    not _cuda_ok(), reason="no CUDA device (tensor.cuda.is_available() is False); "
    "set STRIDEX_CUDA_EMULATOR=1 to run these on the CPU emulator")

FLOATS = (dt.float32, dt.float64, dt.bfloat16, dt.float16)
TOL = {dt.float64: (1e-12, 1e-12), dt.float32: (1e-5, 1e-6), dt.float16: (2e-3, 2e-3),
       dt.bfloat16: (1.6e-2, 1.6e-2)}
GTOL = {dt.float64: (1e-11, 1e-12), dt.float32: (1e-4, 1e-5), dt.float16: (4e-3, 4e-3),
        dt.bfloat16: (3.2e-2, 3.2e-2)}  # gradients: one more rounded reduction


def _values(rng, shape, d, scale=1.0):
    a = rng.standard_normal(shape) * scale
    return bf16_round(a.astype(np.float32)) if d is dt.bfloat16 else a.astype(d.np)


def _pair(a, d, grad=False):
    """(cpu, cuda) tensors of dtype d holding a's values (leaves requiring grad if asked)."""
    c = T.asarray(np.array(a, dtype=np.float32 if d is dt.bfloat16 else d.np)).astype(d)
    g = c.to("cuda")
    if grad:
        c.requires_grad_()
        g.requires_grad_()
    return c, g


def _close(got, want, d, tol=TOL, what=""):
    assert got.device.type == "cuda", f"{what}: result on {got.device}"
    assert got.dtype is want.dtype and got.shape == want.shape, \
        f"{what}: {got.dtype.name}{got.shape} vs {want.dtype.name}{want.shape}"
    rtol, atol = tol[d]
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=rtol, atol=atol, err_msg=what)


def _backward(y):
    """y.backward() with the seed made on y's device."""
    y.backward(T.ones_like(y))


def _same(got, want, what=""):
    assert got.device.type == "cuda" and got.dtype is want.dtype and got.shape == want.shape, what
    np.testing.assert_array_equal(to_np(got), to_np(want), err_msg=what)


@pytest.fixture(params=[False, True], ids=["uncached", "cached"])
def row_cache(request, monkeypatch):
    """Both variants of the row kernels: rows read once per pass, or kept in registers."""
    monkeypatch.setattr(NK, "ROW_CACHE", request.param)
    return request.param


@needs_cuda
@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((2, 3, 4), 1), ((2, 1100), 1), ((4,), 0),
                                        ((2, 8200), 1)],
                         ids=["warp", "axis1", "block", "1d", "long"])   # 8200 > 256 * ROW_NC
def test_softmax_fwd_bwd(d, log, shape, axis, row_cache):
    rng = np.random.default_rng(1)
    xc, xg = _pair(_values(rng, shape, d, 3.0), d, grad=True)
    gc, gg = _pair(_values(rng, shape, d), d)
    f = F.log_softmax if log else F.softmax
    yc, yg = f(xc, axis), f(xg, axis)
    _close(yg, yc, d, what="forward")
    yc.backward(gc)
    yg.backward(gg)
    _close(xg.grad, xc.grad, d, GTOL, what="backward")


@needs_cuda
def test_softmax_nan_and_inf_rows():
    a = np.array([[0.0, np.nan, 1.0], [-np.inf, 0.0, 2.0], [np.inf, 0.0, 1.0]], np.float32)
    xc, xg = _pair(a, dt.float32)
    for f in (F.softmax, F.log_softmax):
        np.testing.assert_array_equal(np.isnan(to_np(f(xg, -1))), np.isnan(to_np(f(xc, -1))))
        _close(f(xg, -1), f(xc, -1), dt.float32)


@needs_cuda
@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("shape,ns", [((5, 8), (8,)), ((2, 3, 4), (3, 4)), ((2, 1100), (1100,)),
                                      ((2, 8200), (8200,))], ids=["warp", "2d", "block", "long"])
def test_layer_norm_fwd_bwd(d, affine, shape, ns, row_cache):
    rng = np.random.default_rng(2)
    xc, xg = _pair(_values(rng, shape, d, 2.0) + 0.5, d, grad=True)
    wc = wg = bc = bg = None
    if affine:
        wc, wg = _pair(_values(rng, ns, d) + 1.0, d, grad=True)
        bc, bg = _pair(_values(rng, ns, d), d, grad=True)
    gc, gg = _pair(_values(rng, shape, d), d)
    yc, yg = F.layer_norm(xc, ns, wc, bc), F.layer_norm(xg, ns, wg, bg)
    _close(yg, yc, d, what="forward")
    yc.backward(gc)
    yg.backward(gg)
    _close(xg.grad, xc.grad, d, GTOL, what="dx")
    if affine:
        _close(wg.grad, wc.grad, d, GTOL, what="dweight")
        _close(bg.grad, bc.grad, d, GTOL, what="dbias")


@needs_cuda
@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
def test_layer_norm_weight_grad_several_rows_per_block(d, monkeypatch):
    """rb > 1 (and a short last block) in pass one of the weight/bias gradients."""
    monkeypatch.setattr(NK, "LN_COLS_THREADS", 1)
    monkeypatch.setattr(NK, "LN_MIN_BLOCKS", 4)
    assert NK.layer_norm_row_block(10, 6) == 3
    rng = np.random.default_rng(3)
    xc, xg = _pair(_values(rng, (10, 6), d), d, grad=True)
    wc, wg = _pair(_values(rng, (6,), d), d, grad=True)
    bc, bg = _pair(_values(rng, (6,), d), d, grad=True)
    _backward((F.layer_norm(xc, 6, wc, bc) ** 2).sum())
    _backward((F.layer_norm(xg, 6, wg, bg) ** 2).sum())
    for a, b, n in ((xg, xc, "dx"), (wg, wc, "dw"), (bg, bc, "db")):
        _close(a.grad, b.grad, d, GTOL, what=n)


@needs_cuda
@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2], ids=["hard", "smooth"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_fwd_bwd(d, weighted, smoothing, reduction, row_cache):
    rng = np.random.default_rng(4)
    xc, xg = _pair(_values(rng, (6, 5), d, 2.0), d, grad=True)
    t = np.array([0, 4, -100, 2, 1, -100])
    tc, tg = T.asarray(t), T.asarray(t).to("cuda")
    wc = wg = None
    if weighted:
        wc, wg = _pair(np.abs(_values(rng, (5,), d)) + 0.5, d)
    lc = F.cross_entropy(xc, tc, wc, reduction=reduction, label_smoothing=smoothing)
    lg = F.cross_entropy(xg, tg, wg, reduction=reduction, label_smoothing=smoothing)
    _close(lg, lc, d, what="loss")
    go = _values(rng, lc.shape, d) if reduction == "none" else np.array(1.0)
    gc, gg = _pair(go, d)
    lc.backward(gc)
    lg.backward(gg)
    _close(xg.grad, xc.grad, d, GTOL, what="dx")


@needs_cuda
@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("C", [1100, 8200], ids=["block", "long"])   # 8200 > 256 * ROW_NC
def test_cross_entropy_long_rows_and_other_ignore_index(d, C, row_cache):
    rng = np.random.default_rng(5)
    xc, xg = _pair(_values(rng, (3, C), d, 4.0), d, grad=True)
    t = np.array([C - 1, 7, 3])
    tc, tg = T.asarray(t), T.asarray(t).to("cuda")
    lc = F.cross_entropy(xc, tc, ignore_index=7, label_smoothing=0.1)
    lg = F.cross_entropy(xg, tg, ignore_index=7, label_smoothing=0.1)
    _close(lg, lc, d)
    _backward(lc)
    _backward(lg)
    _close(xg.grad, xc.grad, d, GTOL)


@needs_cuda
@pytest.mark.parametrize("bad", [5, -1])
def test_cross_entropy_target_out_of_range_raises(bad):
    x = T.zeros((3, 5), device="cuda")
    t = T.asarray([0, bad, 1]).to("cuda")
    with pytest.raises(IndexError, match=rf"target {bad} is out of bounds for 5 classes"):
        synced(F.cross_entropy(x, t))
    ok = F.cross_entropy(x, T.asarray([0, -100, 1]).to("cuda"))  # still usable afterwards
    assert abs(ok.item() - np.log(5.0)) < 1e-6


@needs_cuda
@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("k,s", [((2, 2), (2, 2)), ((3, 2), (1, 2)), ((2, 3), (3, 1))],
                         ids=["2x2", "3x2s12", "2x3s31"])
def test_max_pool2d_values_indices_exact(d, k, s):
    rng = np.random.default_rng(6)
    a = rng.integers(-3, 4, (2, 3, 7, 8)).astype(d.np)  # many ties
    a[0, 0, 1, 1] = a[1, 2, 4, 5] = np.nan
    a[0, 1, 0, 0] = np.inf
    a[1, 1, 3, 3] = -np.inf
    xc, xg = _pair(a, d)
    yc, ic = _fused_ops.max_pool2d_fast(xc, k[0], k[1], s[0], s[1])
    yg, ig = _fused_ops.max_pool2d_fast(xg, k[0], k[1], s[0], s[1])
    _same(yg, yc, "values")
    _same(ig, ic, "indices")


@needs_cuda
@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), ((1, 2), (2, 0), (2, 1))],
                         ids=["plain", "s2p1", "dilated"])
def test_unfold_im2col_exact(d, stride, padding, dilation):
    rng = np.random.default_rng(7)
    xc, xg = _pair(_values(rng, (2, 3, 6, 7), d), d)
    kw = dict(kernel_size=(2, 3), stride=stride, padding=padding, dilation=dilation)
    _same(F.unfold(xg, **kw), F.unfold(xc, **kw))


@needs_cuda
@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
def test_conv2d_maxpool2d_fwd_bwd(d):
    def model():
        T.manual_seed(0)
        return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, stride=1), nn.MaxPool2d(2),
                             nn.Conv2d(3, 2, 2, dilation=1), nn.ReLU()).to(d)
    mc, mg = model(), model().to("cuda")
    rng = np.random.default_rng(8)
    xc, xg = _pair(_values(rng, (2, 2, 8, 9), d), d, grad=True)
    yc, yg = mc(xc), mg(xg)
    _close(yg, yc, d, what="forward")
    gc, gg = _pair(_values(rng, yc.shape, d), d)
    _backward((yc * gc).sum())
    _backward((yg * gg).sum())
    _close(xg.grad, xc.grad, d, GTOL, what="dx")
    for (name, pc), (_, pg) in zip(mc.named_parameters(), mg.named_parameters()):
        _close(pg.grad, pc.grad, d, GTOL, what=f"d{name}")


@needs_cuda
@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
def test_mlp_cross_entropy_training_step(d):
    def model():
        T.manual_seed(1)
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(d)
    mc, mg = model(), model().to("cuda")
    oc = nn.optim.SGD(mc.parameters(), lr=0.1, momentum=0.9)
    og = nn.optim.SGD(mg.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(9)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(2):
        xc, xg = _pair(_values(rng, (5, 4), d), d)
        t = rng.integers(0, 3, 5)
        tc, tg = T.asarray(t), T.asarray(t).to("cuda")
        oc.zero_grad()
        og.zero_grad()
        lc, lg = loss_fn(mc(xc), tc), loss_fn(mg(xg), tg)
        _close(lg, lc, d, what="loss")
        _backward(lc)
        _backward(lg)
        oc.step()
        og.step()
        for (name, pc), (_, pg) in zip(mc.named_parameters(), mg.named_parameters()):
            _close(pg.grad, pc.grad, d, GTOL, what=f"grad {name}")
            _close(pg, pc, d, GTOL, what=name)


OPTIMIZERS = {
    "sgd": lambda ps: nn.optim.SGD(ps, lr=0.1),
    "sgd_momentum_wd": lambda ps: nn.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1,
                                               weight_decay=0.01),
    "sgd_nesterov_max": lambda ps: nn.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True,
                                                maximize=True),
    "adam": lambda ps: nn.optim.Adam(ps, lr=0.01),
    "adam_amsgrad_wd": lambda ps: nn.optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True),
    "adamw": lambda ps: nn.optim.AdamW(ps, lr=0.01, betas=(0.3, 0.9), maximize=True),
    "adamw_amsgrad": lambda ps: nn.optim.AdamW(ps, lr=0.02, amsgrad=True),
    "rmsprop": lambda ps: nn.optim.RMSprop(ps, lr=0.01),
    "rmsprop_centered_mom_wd": lambda ps: nn.optim.RMSprop(ps, lr=0.01, alpha=0.6, momentum=0.5,
                                                           centered=True, weight_decay=0.1),
    "rmsprop_mom_max": lambda ps: nn.optim.RMSprop(ps, lr=0.01, momentum=0.9, maximize=True),
}


@needs_cuda
@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps_match_cpu_bitwise(d, name):
    rng = np.random.default_rng(10)
    pc, pg = _pair(_values(rng, (3, 7), d), d, grad=True)
    oc, og = OPTIMIZERS[name]([pc]), OPTIMIZERS[name]([pg])
    for _ in range(3):
        gc, gg = _pair(_values(rng, (3, 7), d), d)
        pc.grad, pg.grad = gc, gg
        oc.step()
        og.step()
        _same(pg.detach(), pc.detach(), f"{name}: parameter")
        for key, vc in oc.state[pc].items():
            vg = og.state[pg][key]
            if isinstance(vc, T.Tensor):
                _same(vg, vc, f"{name}: state {key}")
            else:
                assert vg == vc
