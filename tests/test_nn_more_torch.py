"""nn/_functional_more.py, nn/_functional_more_pool.py, nn/layers_more.py and nn/padding.py
against PyTorch (skipped where it is not installed): every deterministic function's output and
input gradients in float64 (and float32), inputs on the kinks; padding layers, pooling
indices, unpooling of PyTorch's own max_pool indices, embedding_bag's weight and
per_sample_weights gradients. The random functions are checked by their structure in
tests/test_nn_more.py (the generators differ).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(47)
TOL = {T.float32: dict(rtol=3e-5, atol=3e-6), T.float64: dict(rtol=1e-12, atol=1e-13)}


def arr(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def _inputs(values, dtype):
    npd = np.float32 if dtype is T.float32 else np.float64
    ours, theirs = [], []
    for v in values:
        a = np.asarray(v)
        floating = a.dtype.kind == "f"
        a = a.astype(npd) if floating else a
        ours.append(T.asarray(a).requires_grad_() if floating else T.asarray(a))
        theirs.append(torch.tensor(a, requires_grad=floating))
    return ours, theirs


def against_torch(ours_fn, theirs_fn, values, dtype=T.float64):
    """ours_fn(*ours) and theirs_fn(*theirs) agree, and so do the gradients of every floating
    input for a random output cotangent."""
    ours, theirs = _inputs(values, dtype)
    y, yt = ours_fn(*ours), theirs_fn(*theirs)
    assert y.shape == tuple(yt.shape) and y.dtype is dtype
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **TOL[dtype])
    g = arr(*yt.shape)
    xs = [o for o in ours if o.requires_grad]
    gs = ag.grad(y, xs, T.asarray(g).astype(dtype))
    gts = torch.autograd.grad(yt, [t for t in theirs if t.requires_grad],
                              torch.tensor(g, dtype=yt.dtype), allow_unused=True)
    for u, v in zip(gs, gts):
        ref = np.zeros(u.shape) if v is None else v.numpy()
        np.testing.assert_allclose(u.numpy(), ref, **TOL[dtype])


KINKS = arr(3, 4, 5)
KINKS[0, 0, :4] = [0.5, -0.5, 0.2, -0.2]           # on hardshrink's / softshrink's bounds
KINKS[0, 1, :2] = [0.0, 0.1]                       # on rrelu's 0 and threshold's bound
POS = np.abs(arr(2, 3, 7, 6)) + 0.1
ZERO_ROWS = arr(3, 4, 5)
ZERO_ROWS[1, :, 2] = 0.0

ELEMENTWISE = [
    ("threshold", dict(threshold=0.1, value=-3.0)), ("hardshrink", {}),
    ("hardshrink", dict(lambd=0.2)), ("softshrink", {}), ("softshrink", dict(lambd=0.2)),
    ("rrelu", {}), ("rrelu", dict(lower=0.05, upper=0.9)),
]


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("name,kw", ELEMENTWISE, ids=[f"{n}{i}" for i, (n, _) in
                                                      enumerate(ELEMENTWISE)])
def test_elementwise(dtype, name, kw):
    against_torch(lambda x: getattr(F, name)(x, **kw),
                  lambda x: getattr(TF, name)(x, **kw), [KINKS], dtype)


CASES = {
    "normalize": (lambda x: F.normalize(x, 3.0, 2), lambda x: TF.normalize(x, 3.0, 2), [KINKS]),
    "normalize_zero": (F.normalize, TF.normalize, [ZERO_ROWS]),
    "normalize_at_eps": (lambda x: F.normalize(x, eps=0.5), lambda x: TF.normalize(x, eps=0.5),
                         [np.array([[0.5, 0.0], [0.0, -0.5], [1.0, 1.0]])]),
    "normalize_inf": (lambda x: F.normalize(x, math.inf, 0), lambda x: TF.normalize(x, math.inf, 0),
                      [KINKS]),
    "pdist": (F.pdist, TF.pdist, [np.vstack([KINKS[0], KINKS[0, :1]])]),
    "pdist_p1": (lambda x: F.pdist(x, 1.0), lambda x: TF.pdist(x, 1.0), [KINKS[1]]),
    "pdist_p3": (lambda x: F.pdist(x, 3.0), lambda x: TF.pdist(x, 3.0), [KINKS[1]]),
    "pdist_inf": (lambda x: F.pdist(x, math.inf), lambda x: TF.pdist(x, math.inf), [KINKS[2]]),
    "softmax2d": (nn.Softmax2d(), torch.nn.Softmax2d(), [KINKS]),
    "lp_pool1d": (lambda x: F.lp_pool1d(x, 3, 2), lambda x: TF.lp_pool1d(x, 3, 2), [POS[0]]),
    "lp_pool2d_ceil": (lambda x: F.lp_pool2d(x, 2, 3, 2, True),
                       lambda x: TF.lp_pool2d(x, 2, 3, 2, True), [POS]),
    "lp_pool3d": (lambda x: F.lp_pool3d(x, 1.5, (2, 2, 1)),
                  lambda x: TF.lp_pool3d(x, 1.5, (2, 2, 1)), [POS]),
    "lrn3": (lambda x: F.local_response_norm(x, 3), lambda x: TF.local_response_norm(x, 3),
             [KINKS]),
    "lrn4d": (lambda x: F.local_response_norm(x, 2, 0.3, 0.6, 1.5),
              lambda x: TF.local_response_norm(x, 2, 0.3, 0.6, 1.5), [POS]),
    "lrn5d": (lambda x: F.local_response_norm(x, 4, 0.5), lambda x: TF.local_response_norm(x, 4, 0.5),
              [POS[None]]),
    "adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, (2, 3, 4)),
                            lambda x: TF.adaptive_max_pool3d(x, (2, 3, 4)), [POS]),
    "multilabel_soft_margin": (lambda x, t, w: F.multilabel_soft_margin_loss(x, t, w, "none"),
                               lambda x, t, w: TF.multilabel_soft_margin_loss(x, t, w,
                                                                              reduction="none"),
                               [KINKS[0], (RNG.random((4, 5)) > 0.5) * 1.0, RNG.random(5)]),
    "triplet_with_distance": (
        lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=True, margin=0.3),
        lambda a, p, n: TF.triplet_margin_with_distance_loss(a, p, n, swap=True, margin=0.3),
        [KINKS[0], KINKS[1], KINKS[2]]),
    "triplet_on_kink": (   # margin + d(a, p) - d(a, n) == 0 in the first row
        lambda a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: T.abs(u - v).sum(axis=-1), reduction="none"),
        lambda a, p, n: TF.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), reduction="none"),
        [np.array([[0.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.5, 0.0]]),
         np.array([[2.0, 0.0], [3.0, 2.0]])]),
    "triplet_cosine": (
        lambda a, p, n: nn.TripletMarginWithDistanceLoss(
            distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v),
            reduction="sum")(a, p, n),
        lambda a, p, n: torch.nn.TripletMarginWithDistanceLoss(
            distance_function=lambda u, v: 1.0 - TF.cosine_similarity(u, v),
            reduction="sum")(a, p, n),
        [KINKS[0], KINKS[1], KINKS[2]]),
}


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_functions(dtype, name):
    ours, theirs, values = CASES[name]
    against_torch(ours, theirs, values, dtype)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses(reduction):
    x = arr(5, 4)
    x[0] = [1.0, 0.0, 2.0, 0.5]                     # a hinge exactly at 0 (margin 1, y = 0)
    y = np.array([0, 3, 1, 1, 2])
    w = RNG.random(4) + 0.5
    for p in (1, 2):
        for wt in (None, w):
            kw = dict(p=p, margin=1.0, reduction=reduction)
            ow = None if wt is None else T.asarray(wt)
            tw = None if wt is None else torch.tensor(wt)
            against_torch(lambda a, t, ow=ow, kw=kw: F.multi_margin_loss(a, t, weight=ow, **kw),
                          lambda a, t, tw=tw, kw=kw: TF.multi_margin_loss(a, t, weight=tw, **kw),
                          [x, y])
    against_torch(lambda a, t: nn.MultiMarginLoss(reduction=reduction)(a, t),
                  lambda a, t: torch.nn.MultiMarginLoss(reduction=reduction)(a, t),
                  [x[0], np.array(2)])
    tl = np.array([[0, -1, 1, 2], [1, 1, 3, -1], [-1, 0, 1, 2], [3, 2, 1, 0], [2, 0, -1, 3]])
    against_torch(lambda a, t: F.multilabel_margin_loss(a, t, reduction),
                  lambda a, t: TF.multilabel_margin_loss(a, t, reduction=reduction), [x, tl])
    against_torch(lambda a, t: nn.MultiLabelMarginLoss(reduction)(a, t),
                  lambda a, t: torch.nn.MultiLabelMarginLoss(reduction=reduction)(a, t),
                  [x[1], tl[1]])
    tt = (RNG.random((5, 4)) > 0.5) * 1.0
    against_torch(lambda a, t: F.multilabel_soft_margin_loss(a, t, reduction=reduction),
                  lambda a, t: TF.multilabel_soft_margin_loss(a, t, reduction=reduction), [x, tt])


@pytest.mark.parametrize("nd,shape,k,s,pad", [(1, (2, 3, 9), 3, 2, 1), (2, (2, 3, 7, 6), 2, 2, 0),
                                              (2, (3, 5, 5), 3, 1, 1),
                                              (3, (2, 2, 5, 4, 6), 2, 1, 1)])
def test_max_unpool(nd, shape, k, s, pad):
    a = arr(*shape)
    yt, it = getattr(TF, f"max_pool{nd}d")(torch.tensor(a), k, s, pad, return_indices=True)
    y, i = getattr(F, f"max_pool{nd}d")(T.asarray(a), k, s, pad, return_indices=True)
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    ours, theirs = getattr(F, f"max_unpool{nd}d"), getattr(TF, f"max_unpool{nd}d")
    size = shape[-nd:]
    against_torch(lambda v: ours(v, i, k, s, pad, output_size=size),
                  lambda v: theirs(v, it, k, s, pad, output_size=size), [yt.numpy()])
    mod, tmod = getattr(nn, f"MaxUnpool{nd}d")(k, s, pad), getattr(torch.nn, f"MaxUnpool{nd}d")(k, s, pad)
    assert repr(mod) == repr(tmod)
    against_torch(lambda v: mod(v, i), lambda v: tmod(v, it), [yt.numpy()])


def test_adaptive_max_pool3d_indices():
    a = arr(2, 3, 5, 4, 7)
    for size in ((3, 2, 4), 2, (None, 3, 5)):
        y, i = F.adaptive_max_pool3d(T.asarray(a), size, return_indices=True)
        tsize = tuple(n if o is None else o for n, o in zip(a.shape[2:], size)) \
            if isinstance(size, tuple) else size
        yt, it = TF.adaptive_max_pool3d(torch.tensor(a), tsize, return_indices=True)
        np.testing.assert_array_equal(y.numpy(), yt.numpy())
        np.testing.assert_array_equal(i.numpy(), it.numpy())


IDS = np.array([1, 2, 0, 4, 5, 4, 6, 1, 3])
OFFS = np.array([0, 2, 2, 5])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    w = arr(7, 3)
    for pad in (None, 4, -3):
        for last in (False, True):
            off = np.append(OFFS, len(IDS)) if last else OFFS
            kw = dict(mode=mode, padding_idx=pad, include_last_offset=last)
            against_torch(
                lambda v, off=off, kw=kw: F.embedding_bag(T.asarray(IDS), v, T.asarray(off), **kw),
                lambda v, off=off, kw=kw: TF.embedding_bag(torch.tensor(IDS), v, torch.tensor(off),
                                                           **kw), [w])
    against_torch(lambda v: F.embedding_bag(T.asarray(IDS[:8].reshape(2, 4)), v, mode=mode),
                  lambda v: TF.embedding_bag(torch.tensor(IDS[:8].reshape(2, 4)), v, mode=mode),
                  [w])
    against_torch(lambda v: F.embedding_bag(T.asarray(IDS), v, T.asarray(OFFS), mode=mode),
                  lambda v: TF.embedding_bag(torch.tensor(IDS), v, torch.tensor(OFFS), mode=mode),
                  [w], T.float32)
    ours = nn.EmbeddingBag.from_pretrained(T.asarray(w), False, mode=mode, padding_idx=2)
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), False, mode=mode,
                                                   padding_idx=2)
    assert repr(ours) == repr(theirs)
    g = arr(len(OFFS), 3)
    (ours(T.asarray(IDS), T.asarray(OFFS)) * T.asarray(g)).sum().backward()
    (theirs(torch.tensor(IDS), torch.tensor(OFFS)) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               **TOL[T.float64])


def test_embedding_bag_per_sample_weights():
    kw = dict(mode="sum", padding_idx=1)
    against_torch(lambda v, q: F.embedding_bag(T.asarray(IDS), v, T.asarray(OFFS),
                                               per_sample_weights=q, **kw),
                  lambda v, q: TF.embedding_bag(torch.tensor(IDS), v, torch.tensor(OFFS),
                                                per_sample_weights=q, **kw),
                  [arr(7, 3), arr(len(IDS))])
    ids2 = IDS[:8].reshape(4, 2)
    against_torch(lambda v, q: F.embedding_bag(T.asarray(ids2), v, per_sample_weights=q,
                                               mode="sum"),
                  lambda v, q: TF.embedding_bag(torch.tensor(ids2), v, per_sample_weights=q,
                                                mode="sum"), [arr(7, 3), arr(4, 2)])


def test_padding_layers():
    a = arr(2, 3, 4, 5, 6)
    for nd in (1, 2, 3):
        x = a[(0,) * (3 - nd)]                               # batched: (N, C) + nd dims
        pads = (1, 2, 2, 0, 1, 1)[:2 * nd]
        for name in ("ConstantPad", "ZeroPad", "ReflectionPad", "ReplicationPad", "CircularPad"):
            args = (pads, 1.5) if name == "ConstantPad" else (pads,)
            mod, tmod = getattr(nn, f"{name}{nd}d")(*args), getattr(torch.nn, f"{name}{nd}d")(*args)
            assert repr(mod) == repr(tmod)
            against_torch(mod, tmod, [x])
            against_torch(mod, tmod, [x[0]])                 # unbatched
        against_torch(nn.ZeroPad2d(1) if nd == 2 else nn.ConstantPad1d(-1, 0.0),
                      torch.nn.ZeroPad2d(1) if nd == 2 else torch.nn.ConstantPad1d(-1, 0.0), [x])


def test_module_reprs_match_torch():
    pairs = [("Threshold", (0.1, 20)), ("Hardshrink", ()), ("Softshrink", (0.3,)), ("RReLU", ()),
             ("Softmax2d", ()), ("Dropout3d", (0.2,)), ("FeatureAlphaDropout", ()),
             ("CosineSimilarity", ()), ("PairwiseDistance", ()), ("LPPool1d", (2, 3)),
             ("LPPool3d", (1.5, 2, 1, True)), ("LocalResponseNorm", (3, 0.1)),
             ("AdaptiveMaxPool3d", ((1, 2, 3),)), ("MaxUnpool1d", (2,)), ("MaxUnpool3d", (2, 1)),
             ("MultiMarginLoss", ()), ("MultiLabelMarginLoss", ()),
             ("MultiLabelSoftMarginLoss", ()), ("TripletMarginWithDistanceLoss", ()),
             ("EmbeddingBag", (10, 3)), ("ReplicationPad2d", ((1, 2, 3, 4),))]
    for name, args in pairs:
        assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args)), name
