"""The functions of nn/_functional_more.py and nn/_functional_more_pool.py and the layers of
nn/layers_more.py and nn/padding.py, torch-free:

- each function against its definition written as NumPy loops (float64), kinks by hand;
- the random ones by their structure: rrelu's slopes in [lower, upper), dropout3d's and
  feature_alpha_dropout's whole channels and scales, gumbel_softmax's one-hot and
  straight-through gradient and its sampling frequencies;
- float64 gradcheck; modules against their functions, reprs; errors; doctests;
- a few functions on the cuda device (a GPU, else the emulator) as on cpu, random ones
  included (the same seed draws the same bits on both).
PyTorch comparisons are in tests/test_nn_more_torch.py.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn import functional as F

RNG = np.random.default_rng(31)


def arr(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def leaf(a):
    return T.asarray(np.asarray(a, dtype=np.float64)).requires_grad_()


def close(t, ref, tol=1e-12):
    v = t.detach().numpy() if isinstance(t, T.Tensor) else np.asarray(t)
    ref = np.asarray(ref, dtype=np.float64)
    assert v.shape == ref.shape, (v.shape, ref.shape)
    np.testing.assert_allclose(v, ref, rtol=tol, atol=tol)


def grad(fn, *xs):
    return ag.grad(fn(*xs).sum(), list(xs))

# ---------------------------------------------------------------- padding layers


def test_padding_layers():
    x = T.arange(1.0, 4.0).reshape(1, 1, 3)
    assert nn.ConstantPad1d((1, 2), 9.0)(x).tolist() == [[[9.0, 1.0, 2.0, 3.0, 9.0, 9.0]]]
    assert nn.ZeroPad1d(1)(x).tolist() == [[[0.0, 1.0, 2.0, 3.0, 0.0]]]
    assert nn.ReflectionPad1d((2, 1))(x).tolist() == [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
    assert nn.ReplicationPad1d((2, 1))(x).tolist() == [[[1.0, 1.0, 1.0, 2.0, 3.0, 3.0]]]
    assert nn.CircularPad1d((2, 1))(x).tolist() == [[[2.0, 3.0, 1.0, 2.0, 3.0, 1.0]]]
    a = arr(2, 3, 4, 5)
    x4 = T.asarray(a)
    npmode = {nn.ReflectionPad2d: "reflect", nn.ReplicationPad2d: "edge", nn.CircularPad2d: "wrap",
              nn.ZeroPad2d: "constant"}
    for cls, mode in npmode.items():          # (left, right, top, bottom) vs NumPy's widths
        close(cls((1, 2, 3, 0))(x4), np.pad(a, ((0, 0), (0, 0), (3, 0), (1, 2)), mode))
        close(cls(1)(x4[0]), np.pad(a[0], ((0, 0), (1, 1), (1, 1)), mode))
    close(nn.ConstantPad2d((0, 1, 1, 0), -2.0)(x4),
          np.pad(a, ((0, 0), (0, 0), (1, 0), (0, 1)), constant_values=-2.0))
    b = arr(1, 2, 3, 3, 4)
    for cls, mode in ((nn.ReflectionPad3d, "reflect"), (nn.ReplicationPad3d, "edge"),
                      (nn.CircularPad3d, "wrap"), (nn.ZeroPad3d, "constant")):
        close(cls((1, 0, 2, 1, 0, 2))(T.asarray(b)),
              np.pad(b, ((0, 0), (0, 0), (0, 2), (2, 1), (1, 0)), mode))
    assert nn.ConstantPad3d(1, 1.0)(T.zeros((1, 1, 1, 1))).sum().item() == 26.0
    assert ag.gradcheck(lambda v: nn.ReflectionPad2d((1, 1, 2, 0))(v), (leaf(arr(1, 3, 4)),))
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ReflectionPad1d((1, 2))) == "ReflectionPad1d((1, 2))"
    assert repr(nn.ReplicationPad3d(1)) == "ReplicationPad3d((1, 1, 1, 1, 1, 1))"

# ---------------------------------------------------------------- activations


def test_activations_by_hand():
    x = leaf([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    close(F.threshold(x, 0.5, -7.0), [-7.0, -7.0, -7.0, -7.0, 1.0, 2.0])
    close(grad(lambda v: F.threshold(v, 0.5, -7.0), x)[0], [0, 0, 0, 0, 1, 1])
    close(F.hardshrink(x), [-1.0, 0.0, 0.0, 0.0, 1.0, 2.0])
    close(grad(F.hardshrink, x)[0], [1, 0, 0, 0, 1, 1])        # 0 on the bounds
    close(F.softshrink(x), [-0.5, 0.0, 0.0, 0.0, 0.5, 1.5])
    close(grad(F.softshrink, x)[0], [1, 0, 0, 0, 1, 1])
    close(F.softshrink(x, 0.0), x.detach().numpy())
    close(F.rrelu(x, 0.1, 0.3), [-0.2, -0.1, 0.0, 0.5, 1.0, 2.0])
    close(grad(lambda v: F.rrelu(v, 0.1, 0.3), x)[0], [0.2, 0.2, 0.2, 1, 1, 1])
    a = arr(2, 3, 4, 5)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    close(nn.Softmax2d()(T.asarray(a)), e / e.sum(axis=1, keepdims=True))
    close(nn.Softmax2d()(T.asarray(a[0])), np.exp(a[0]) / np.exp(a[0]).sum(axis=0))
    y = T.tensor([-1.0, 3.0])
    nn.Threshold(1.0, 0.0, inplace=True)(y)
    assert y.tolist() == [0.0, 3.0]
    for fn in (F.threshold, F.rrelu):
        h = leaf([-1.0, 2.0]) * 2.0
        assert fn(h, *((0.0, 5.0) if fn is F.threshold else ()), inplace=True) is h


def test_rrelu_training_slopes():
    T.manual_seed(3)
    x = leaf(-np.abs(arr(400)) - 0.1)
    lo, hi = 0.2, 0.6
    y = F.rrelu(x, lo, hi, training=True)
    slope = (y / x).detach().numpy()
    assert slope.min() >= lo and slope.max() < hi
    assert abs(slope.mean() - 0.4) < 0.03 and slope.std() > 0.08    # U(0.2, 0.6): std 0.115
    T.manual_seed(3)
    (g,) = grad(lambda v: F.rrelu(v, lo, hi, training=True), x)
    close(g, slope, 1e-15)                                          # same seed, same slopes
    pos = leaf(np.abs(arr(50)) + 0.1)
    m = nn.RReLU(lo, hi)
    close(m(pos), pos.detach().numpy())
    assert m.training and not np.allclose(m(x).detach().numpy(), m(x).detach().numpy())
    close(m.eval()(x), x.detach().numpy() * 0.4)

# ---------------------------------------------------------------- dropout


def test_dropout3d_zeroes_whole_channels():
    T.manual_seed(0)
    x = T.ones((8, 16, 2, 3, 2), dtype=T.float64)
    y = F.dropout3d(x, 0.25).numpy()
    per = y.reshape(8, 16, -1)
    assert np.all(per.min(axis=2) == per.max(axis=2))               # constant per channel
    assert set(np.unique(per)) <= {0.0, 1 / 0.75}
    assert 0.1 < (per[:, :, 0] == 0).mean() < 0.4
    u = F.dropout3d(T.ones((16, 2, 2, 2)), 0.5).numpy().reshape(16, -1)   # unbatched
    assert np.all(u.min(axis=1) == u.max(axis=1)) and set(np.unique(u)) <= {0.0, 2.0}
    assert F.dropout3d(x, 0.5, training=False) is x
    assert nn.Dropout3d(0.5).eval()(x) is x and repr(nn.Dropout3d()) == "Dropout3d(p=0.5, inplace=False)"
    with pytest.warns(UserWarning, match="dropout3d: received a 3-d input"):
        F.dropout3d(T.ones((2, 2, 2)), 0.5)


def test_feature_alpha_dropout_structure():
    T.manual_seed(1)
    p, alpha = 0.3, 1.7580993408473766
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    xa = arr(64, 32, 3)
    y = F.feature_alpha_dropout(T.asarray(xa), p, training=True).numpy()
    kept = np.isclose(y, a * xa + alpha * a * p, rtol=0, atol=1e-12)
    dropped = np.isclose(y, -alpha * a + alpha * a * p, rtol=0, atol=1e-12)
    assert np.all(kept | dropped)
    assert np.all(kept.all(axis=2) | dropped.all(axis=2))          # whole (sample, channel)s
    assert abs(dropped.all(axis=2).mean() - p) < 0.05
    z = RNG.standard_normal((400, 50, 8))                           # keeps mean 0, variance 1
    w = F.feature_alpha_dropout(T.asarray(z), 0.2, training=True).numpy()
    assert abs(w.mean()) < 0.05 and abs(w.var() - 1) < 0.1
    x = T.asarray(xa)
    assert F.feature_alpha_dropout(x, p) is x                      # training defaults to False
    assert np.all(F.feature_alpha_dropout(x, 1.0, training=True).numpy() == 0)
    assert nn.FeatureAlphaDropout(0.1).eval()(x) is x

# ---------------------------------------------------------------- normalize, pdist, gumbel


def test_normalize_and_pdist():
    a = arr(3, 4, 5)
    a[1, :, 2] = 0.0
    for p, dim in ((2.0, 1), (1.0, -1), (3.0, 0), (math.inf, 2)):
        n = np.linalg.norm(np.moveaxis(a, dim, -1), ord=p, axis=-1, keepdims=True)
        close(F.normalize(T.asarray(a), p, dim), a / np.moveaxis(np.maximum(n, 1e-12), -1, dim))
    out = T.zeros((3, 4, 5), dtype=T.float64)
    assert F.normalize(T.asarray(a), out=out) is out and abs(out.sum().item()) > 0
    close(F.normalize(T.tensor(-2.0, dtype=T.float64), dim=0), -1.0)
    b = arr(5, 3)
    b[3] = b[1]                                                      # a zero distance
    for p in (2.0, 1.0, 0.5, 3.0, math.inf, 0.0):
        ref = [np.linalg.norm(b[i] - b[j], ord=p) if p else np.count_nonzero(b[i] - b[j])
               for i, j in itertools.combinations(range(5), 2)]
        close(F.pdist(T.asarray(b), p), ref)
    assert F.pdist(T.ones((1, 3))).shape == (0,)
    assert ag.gradcheck(F.pdist, (leaf(arr(4, 3)),))
    assert ag.gradcheck(lambda v: F.normalize(v, 3.0, 0), (leaf(arr(3, 4)),))
    x1, x2 = T.asarray(arr(4, 6)), T.asarray(arr(4, 6))
    assert nn.CosineSimilarity(0, 1e-6)(x1, x2).tolist() == F.cosine_similarity(x1, x2, 0, 1e-6).tolist()
    assert nn.PairwiseDistance(3.0, 1e-3, True)(x1, x2).tolist() == \
        F.pairwise_distance(x1, x2, 3.0, 1e-3, True).tolist()


def test_gumbel_softmax():
    logits = T.asarray(np.log(np.array([[0.6, 0.3, 0.1]] * 4000)))
    T.manual_seed(5)
    soft = F.gumbel_softmax(logits, tau=0.5)
    s = soft.numpy()
    assert np.allclose(s.sum(axis=1), 1.0) and s.min() >= 0
    T.manual_seed(5)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and np.all(hard.sum(axis=1) == 1)
    np.testing.assert_array_equal(hard.argmax(axis=1), s.argmax(axis=1))
    freq = hard.mean(axis=0)                                        # argmax ~ Categorical(p)
    assert np.all(np.abs(freq - [0.6, 0.3, 0.1]) < 0.03), freq
    x = leaf(arr(5, 4))
    g = arr(5, 4)
    grads = []
    for h in (False, True):                                         # straight-through
        T.manual_seed(9)
        y = F.gumbel_softmax(x, 2.0, hard=h, dim=0)
        grads.append(ag.grad(y, [x], T.asarray(g))[0].numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-14)
    assert np.all(y.detach().numpy().sum(axis=0) == 1)

# ---------------------------------------------------------------- pooling


def _windows_ref(a, k, s, fn):
    """fn over each (no padding) window of the last len(k) dims of a."""
    nd = len(k)
    out = [(n - kk) // ss + 1 for n, kk, ss in zip(a.shape[-nd:], k, s)]
    res = np.zeros(a.shape[:-nd] + tuple(out))
    for pos in itertools.product(*map(range, out)):
        sl = tuple(slice(p * ss, p * ss + kk) for p, kk, ss in zip(pos, k, s))
        res[(...,) + pos] = fn(a[(...,) + sl].reshape(a.shape[:-nd] + (-1,)))
    return res


def test_lp_pool_definition():
    a = np.abs(arr(2, 3, 7, 6)) + 0.1
    for nd, p, k, s in ((1, 2.0, (3,), (2,)), (2, 3, (2, 3), (2, 1)), (3, 1.5, (2, 2, 2), (1, 2, 2))):
        x = a[0] if nd == 1 else a if nd == 2 else a[None]
        fn = getattr(F, f"lp_pool{nd}d")
        ref = _windows_ref(x, k, s, lambda w, p=p: (w ** p).sum(axis=-1) ** (1 / p))
        close(fn(T.asarray(x), p, k, s), ref, 1e-11)
        mod = getattr(nn, f"LPPool{nd}d")(p, k, s)
        close(mod(T.asarray(x)), ref, 1e-11)
    close(F.lp_pool2d(T.asarray(a), 2, 2), _windows_ref(a, (2, 2), (2, 2),
                                                      lambda w: np.sqrt((w * w).sum(-1))), 1e-11)
    assert ag.gradcheck(lambda v: F.lp_pool2d(v, 2.5, 2, 1, ceil_mode=True), (leaf(a[0, :1, :4, :5]),))
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"


def test_local_response_norm_definition():
    a = arr(2, 5, 3, 2)
    for size, alpha, beta, k in ((1, 1e-4, 0.75, 1.0), (2, 0.5, 0.6, 1.5), (3, 1.0, 1.0, 2.0),
                                 (6, 0.3, 0.9, 0.7)):
        sq = a * a
        s = np.stack([sq[:, max(c - size // 2, 0):c + (size - 1) // 2 + 1].sum(axis=1)
                      for c in range(5)], axis=1)
        ref = a / (k + alpha / size * s) ** beta
        close(F.local_response_norm(T.asarray(a), size, alpha, beta, k), ref)
        close(nn.LocalResponseNorm(size, alpha, beta, k)(T.asarray(a[:, :, :, 0])), ref[..., 0])
    assert ag.gradcheck(lambda v: F.local_response_norm(v, 3, 0.5, 0.75, 1.0), (leaf(arr(1, 4, 3)),))
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"


def test_adaptive_max_pool3d_definition():
    a = arr(2, 3, 5, 4, 6)
    out = (3, 4, 4)
    wins = [[range(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]
            for n, o in zip(a.shape[2:], out)]
    ref, idx = np.zeros((2, 3) + out), np.zeros((2, 3) + out, dtype=np.int64)
    for (i, wd), (j, wh), (m, ww) in itertools.product(*map(enumerate, wins)):
        block = a[:, :, wd][:, :, :, wh][:, :, :, :, ww].reshape(2, 3, -1)
        ref[:, :, i, j, m] = block.max(axis=2)
        flat = np.array([(d * 4 + h) * 6 + w for d in wd for h in wh for w in ww])
        idx[:, :, i, j, m] = flat[block.argmax(axis=2)]
    y, ind = F.adaptive_max_pool3d(T.asarray(a), (3, None, 4), return_indices=True)
    close(y, ref)
    np.testing.assert_array_equal(ind.numpy(), idx)
    y1, ind1 = nn.AdaptiveMaxPool3d(out, return_indices=True)(T.asarray(a[0]))
    close(y1, ref[0])
    np.testing.assert_array_equal(ind1.numpy(), idx[0])
    assert ag.gradcheck(lambda v: F.adaptive_max_pool3d(v, 2), (leaf(arr(1, 3, 3, 4)),))


def test_max_unpool_inverts_max_pool():
    for nd, shape, k, s in ((1, (2, 3, 8), 2, 2), (2, (2, 2, 6, 4), 2, 2),
                            (3, (1, 2, 4, 4, 2), 2, 2)):
        a = arr(*shape)
        y, idx = getattr(F, f"max_pool{nd}d")(T.asarray(a), k, s, return_indices=True)
        x = leaf(y.numpy())
        u = getattr(F, f"max_unpool{nd}d")(x, idx, k, s)
        ref = np.zeros((np.prod(shape[:2]), np.prod(shape[2:])))
        np.put_along_axis(ref, idx.numpy().reshape(ref.shape[0], -1),
                          y.numpy().reshape(ref.shape[0], -1), 1)
        close(u, ref.reshape(shape))
        assert np.all((u.detach().numpy() == a) | (u.detach().numpy() == 0))
        g = arr(*shape)
        (gx,) = ag.grad(u, [x], T.asarray(g))
        close(gx, np.take_along_axis(g.reshape(ref.shape), idx.numpy().reshape(ref.shape[0], -1),
                                     1).reshape(y.shape))
        mod = getattr(nn, f"MaxUnpool{nd}d")(k, s)
        close(mod(x, idx), ref.reshape(shape))
    y = F.max_unpool2d(T.ones((1, 1, 2, 2)), T.tensor([[[[0, 3], [10, 14]]]]), 2, output_size=(5, 3))
    assert y.shape == (1, 1, 5, 3) and y.sum().item() == 4.0 and y[0, 0, 4, 2].item() == 1.0
    u = F.max_unpool1d(T.tensor([[2.0, 3.0]]), T.tensor([[1, 1]]), 2)   # a shared index
    assert u.shape == (1, 4) and u[0, 1].item() in (2.0, 3.0)
    assert repr(nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"

# ---------------------------------------------------------------- losses


def _reduce(v, reduction):
    return v if reduction == "none" else v.mean() if reduction == "mean" else v.sum()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_losses_definition(reduction):
    x, c = arr(4, 5), 5
    y = np.array([0, 3, 4, 3])
    w = RNG.random(5) + 0.5
    for p, margin, wt in ((1, 1.0, None), (2, 0.6, w)):
        ref = np.array([sum((wt[y[n]] if wt is not None else 1.0)
                            * max(0.0, margin - x[n, y[n]] + x[n, i]) ** p
                            for i in range(c) if i != y[n]) / c for n in range(4)])
        args = (T.asarray(x), T.asarray(y), p, margin, None if wt is None else T.asarray(wt))
        close(F.multi_margin_loss(*args, reduction=reduction), _reduce(ref, reduction))
        close(nn.MultiMarginLoss(p, margin, args[4], reduction)(*args[:2]), _reduce(ref, reduction))
    t = np.array([[3, 0, -1, 1, 2], [1, 1, 4, -1, -1], [-1, 0, 1, 2, 3], [4, 3, 2, 1, 0]])
    ref = []
    for n in range(4):
        listed = list(t[n, :list(t[n]).index(-1)] if -1 in t[n] else t[n])
        ref.append(sum(max(0.0, 1 - (x[n, j] - x[n, i]))
                       for j in listed for i in range(c) if i not in listed) / c)
    close(F.multilabel_margin_loss(T.asarray(x), T.asarray(t), reduction), _reduce(np.array(ref), reduction))
    close(nn.MultiLabelMarginLoss(reduction)(T.asarray(x), T.asarray(t)), _reduce(np.array(ref), reduction))
    tt = (RNG.random((4, 5)) > 0.5).astype(np.float64)
    sig = 1 / (1 + np.exp(-x))
    ref = (-(tt * np.log(sig) + (1 - tt) * np.log(1 - sig)) * w).mean(axis=1)
    close(F.multilabel_soft_margin_loss(T.asarray(x), T.asarray(tt), T.asarray(w), reduction),
          _reduce(ref, reduction))
    close(nn.MultiLabelSoftMarginLoss(T.asarray(w), reduction)(T.asarray(x), T.asarray(tt)),
          _reduce(ref, reduction))
    a, pz, ng = arr(4, 3), arr(4, 3), arr(4, 3)

    def l1(u, v):
        return T.abs(u - v).sum(axis=-1)
    d = lambda u, v: np.abs(u - v).sum(-1)   # noqa: E731
    for swap in (False, True):
        dn = np.minimum(d(a, ng), d(pz, ng)) if swap else d(a, ng)
        ref = np.maximum(0.5 + d(a, pz) - dn, 0)
        got = F.triplet_margin_with_distance_loss(T.asarray(a), T.asarray(pz), T.asarray(ng),
                                                  distance_function=l1, margin=0.5, swap=swap,
                                                  reduction=reduction)
        close(got, _reduce(ref, reduction))
        mod = nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=0.5, swap=swap,
                                               reduction=reduction)
        close(mod(T.asarray(a), T.asarray(pz), T.asarray(ng)), _reduce(ref, reduction))
    dflt = nn.TripletMarginWithDistanceLoss()(T.asarray(a), T.asarray(pz), T.asarray(ng))
    close(dflt, F.triplet_margin_loss(T.asarray(a), T.asarray(pz), T.asarray(ng)))


def test_margin_kinks_by_hand():
    x = leaf([[1.0, 0.0, 2.0]])                  # margin - x[y] + x[i] == 0 for i = 1
    (g,) = grad(lambda v: F.multi_margin_loss(v, T.tensor([0]), reduction="sum"), x)
    close(g, [[-1 / 3, 0.0, 1 / 3]])
    x = leaf([[1.0, 0.0, 2.0]])
    (g,) = grad(lambda v: F.multilabel_margin_loss(v, T.tensor([[0, -1, 2]])), x)
    close(g, [[-1 / 3, 0.0, 1 / 3]])             # only target 0 listed: 1 - (1 - 0) = 0 is a kink
    assert F.multi_margin_loss(T.tensor([0.0, 1.0]), T.tensor(1)).shape == ()
    assert F.multilabel_margin_loss(T.tensor([0.0, 1.0]), T.tensor([1, -1]), "none").shape == ()

# ---------------------------------------------------------------- embedding bag


def _bag_ref(w, ids, bags, mode, psw=None, pad=None):
    out = np.zeros((len(bags), w.shape[1]))
    for b, pos in enumerate(bags):
        pos = [i for i in pos if ids[i] != pad]
        if not pos:
            continue
        rows = w[ids[pos]] * (psw[pos, None] if psw is not None else 1.0)
        out[b] = rows.sum(0) if mode == "sum" else rows.mean(0) if mode == "mean" else rows.max(0)
    return out


def test_embedding_bag_definition():
    w = arr(7, 3)
    ids = np.array([1, 2, 0, 4, 5, 4, 6, 1])
    off = [0, 2, 2, 5]
    bags = [range(0, 2), range(2, 2), range(2, 5), range(5, 8)]
    psw = arr(8)
    for mode in ("sum", "mean", "max"):
        for pad in (None, 4):
            got = F.embedding_bag(T.asarray(ids), T.asarray(w), T.tensor(off), mode=mode,
                                  padding_idx=pad)
            close(got, _bag_ref(w, ids, bags, mode, pad=pad))
        got = F.embedding_bag(T.asarray(ids.reshape(2, 4)), T.asarray(w), mode=mode)
        close(got, _bag_ref(w, ids, [range(0, 4), range(4, 8)], mode))
        got = F.embedding_bag(T.asarray(ids), T.asarray(w), T.tensor(off + [8]), mode=mode,
                              include_last_offset=True)
        close(got, _bag_ref(w, ids, bags, mode))
        with pytest.raises(ValueError, match=r"offsets\[-1\]"):   # PyTorch's own result varies
            F.embedding_bag(T.asarray(ids), T.asarray(w), T.tensor(off + [7]), mode=mode,
                            include_last_offset=True)
    got = F.embedding_bag(T.asarray(ids), T.asarray(w), T.tensor(off), mode="sum",
                          per_sample_weights=T.asarray(psw), padding_idx=1)
    close(got, _bag_ref(w, ids, bags, "sum", psw, 1))
    wl = leaf(w)                                          # weight gradients, padding row none
    for mode in ("sum", "mean", "max"):
        assert ag.gradcheck(lambda v, m=mode: F.embedding_bag(T.asarray(ids), v, T.tensor(off),
                                                              mode=m, padding_idx=4), (wl,))
        (g,) = grad(lambda v, m=mode: F.embedding_bag(T.asarray(ids), v, T.tensor(off), mode=m,
                                                      padding_idx=4), wl)
        assert np.all(g.numpy()[[3, 4]] == 0)
    assert ag.gradcheck(lambda v, q: F.embedding_bag(T.asarray(ids), v, T.tensor(off), mode="sum",
                                                     per_sample_weights=q), (wl, leaf(psw)))


def test_embedding_bag_module():
    T.manual_seed(2)
    m = nn.EmbeddingBag(10, 4, mode="max", padding_idx=0)
    assert m.weight.dtype is T.float32 and m.weight[0].tolist() == [0.0] * 4
    assert repr(m) == "EmbeddingBag(10, 4, mode='max', padding_idx=0)"
    ids = T.tensor([[1, 0, 3], [0, 0, 0]])
    y = m(ids)
    assert y.shape == (2, 4) and y[1].tolist() == [0.0] * 4
    y.sum().backward()
    assert m.weight.grad[0].tolist() == [0.0] * 4 and m.weight.grad.sum().item() == 4.0
    pre = nn.EmbeddingBag.from_pretrained(T.eye(3), mode="sum")
    assert not pre.weight.requires_grad
    assert pre(T.tensor([0, 2, 2]), T.tensor([0, 1])).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    assert repr(nn.EmbeddingBag(5, 2)) == "EmbeddingBag(5, 2, mode='mean')"

# ---------------------------------------------------------------- gradcheck (float64)


GRADCHECK = {
    "threshold": lambda x: F.threshold(x, 0.1, 2.0),
    "softshrink": lambda x: F.softshrink(x, 0.3),
    "hardshrink": lambda x: F.hardshrink(x, 0.3),
    "rrelu": lambda x: F.rrelu(x, 0.1, 0.4),
    "softmax2d": lambda x: nn.Softmax2d()(x.reshape(3, 2, 2)),
    "multi_margin_p2": lambda x: F.multi_margin_loss(x, T.tensor([0, 3, 2]), 2, 0.8, T.tensor(
        [1.0, 2.0, 0.5, 1.5], dtype=T.float64)),
    "multilabel_margin": lambda x: F.multilabel_margin_loss(x, T.tensor([[1, 2, -1, 0]] * 3)),
    "multilabel_soft_margin": lambda x: F.multilabel_soft_margin_loss(x, T.ones((3, 4)) * 0.5),
    "triplet_distance": lambda x: F.triplet_margin_with_distance_loss(x, x * 0.5, x + 1.0,
                                                                      swap=True),
    "lp_pool1d": lambda x: F.lp_pool1d(T.abs(x) + 0.1, 2, 2),
    "max_unpool1d": lambda x: F.max_unpool1d(x, T.tensor([[1, 2, 5, 7], [0, 3, 4, 6]] * 2)[:3],
                                             2),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck(name):
    assert ag.gradcheck(GRADCHECK[name], (leaf(arr(3, 4) + 0.05),))

# ---------------------------------------------------------------- errors


def test_error_messages():
    x, lab = T.ones((4, 3)), T.tensor([0, 1, 2, 0])
    cases = [
        (lambda: F.softshrink(x, -0.5), ValueError, "softshrink: lambd must be a non-negative"),
        (lambda: F.threshold(T.ones(2, dtype=T.int64), 0, 1), TypeError,
         "threshold: expected a floating-point tensor"),
        (lambda: F.rrelu(x, 0.5, 0.1), ValueError, "rrelu: lower bound 0.5 must be less than"),
        (lambda: nn.RReLU(0.5, 0.1), ValueError, "RReLU: lower bound"),
        (lambda: nn.Softmax2d()(T.ones((2, 2))), ValueError, r"Softmax2d: expected a 3-d or 4-d"),
        (lambda: F.dropout3d(x, 1.5), ValueError, "dropout3d: dropout probability has to be"),
        (lambda: F.feature_alpha_dropout(T.ones(3), 0.5, True), ValueError,
         r"feature_alpha_dropout: feature dropout needs an input of at least 2 dims"),
        (lambda: F.normalize(x, dim=2), IndexError, r"normalize: dim 2 is out of range"),
        (lambda: F.pdist(T.ones((2, 2, 2))), ValueError, r"pdist: expected a 2-d input"),
        (lambda: F.pdist(x, -1.0), ValueError, "pdist: p must be a non-negative"),
        (lambda: F.gumbel_softmax(x, tau=0.0), ValueError, "gumbel_softmax: tau must be positive"),
        (lambda: F.multi_margin_loss(x, lab, p=3), ValueError, "multi_margin_loss: only p == 1"),
        (lambda: nn.MultiMarginLoss(p=3), ValueError, "MultiMarginLoss: only p == 1"),
        (lambda: F.multi_margin_loss(x, lab.astype(T.float64)), TypeError,
         "multi_margin_loss: target must be an integer tensor"),
        (lambda: F.multi_margin_loss(x, T.tensor([0, 1])), ValueError,
         r"multi_margin_loss: target shape \(2,\) does not fit input shape \(4, 3\)"),
        (lambda: F.multi_margin_loss(x, T.tensor([0, 1, 3, 0])), IndexError,
         r"multi_margin_loss: target holds the class index 3, out of range \[0, 3\) \(at position 2"),
        (lambda: F.multi_margin_loss(x, lab, weight=T.ones(2)), ValueError,
         r"multi_margin_loss: weight must have shape \(3,\)"),
        (lambda: F.multi_margin_loss(x, lab, reduction="avg"), ValueError,
         "multi_margin_loss: reduction must be"),
        (lambda: F.multilabel_margin_loss(x, T.ones((4, 2), dtype=T.int64)), ValueError,
         r"multilabel_margin_loss: target shape \(4, 2\) != input shape \(4, 3\)"),
        (lambda: F.multilabel_margin_loss(x, T.full((4, 3), 3)), IndexError,
         r"multilabel_margin_loss: target holds the class index 3, out of range \[-1, 3\)"),
        (lambda: F.multilabel_soft_margin_loss(x, T.ones(3)), ValueError,
         r"multilabel_soft_margin_loss: target shape \(3,\) != input shape \(4, 3\)"),
        (lambda: F.triplet_margin_with_distance_loss(x, x, x, margin=0.0), ValueError,
         "triplet_margin_with_distance_loss: margin must be greater than 0"),
        (lambda: F.triplet_margin_with_distance_loss(x, x, T.ones(3)), ValueError,
         "triplet_margin_with_distance_loss: anchor, positive and negative must have the same"),
        (lambda: F.lp_pool2d(T.ones((1, 1, 2, 2)), 2, (2, 2, 2)), ValueError,
         "lp_pool2d: kernel_size must be an int or 2 ints"),
        (lambda: F.local_response_norm(x, 2), ValueError,
         r"local_response_norm: expected an input of 3 or more dims"),
        (lambda: F.local_response_norm(T.ones((1, 2, 2)), 0), ValueError,
         "local_response_norm: size must be a positive int"),
        (lambda: F.adaptive_max_pool3d(x, 1), ValueError, r"adaptive_max_pool3d: expected 4-d"),
        (lambda: F.max_unpool2d(T.ones((1, 1, 2, 2)), T.zeros((1, 1, 2, 1), dtype=T.int64), 2),
         ValueError, r"max_unpool2d: indices shape \(1, 1, 2, 1\) != input shape"),
        (lambda: F.max_unpool2d(T.ones((1, 1, 2, 2)), T.full((1, 1, 2, 2), 16), 2), IndexError,
         r"max_unpool2d: indices hold the position 16, out of range \[0, 16\)"),
        (lambda: F.max_unpool1d(T.ones((1, 2)), T.zeros((1, 2), dtype=T.int64), 2,
                                output_size=(7,)), ValueError,
         r"max_unpool1d: invalid output_size \(7,\) \(dim 0 must be between 2 and 6"),
        (lambda: F.max_unpool1d(T.ones((1, 2)), T.zeros((1, 2)), 2), TypeError,
         "max_unpool1d: indices must be an integer tensor"),
        (lambda: F.embedding_bag(T.tensor([0, 1]), x, T.tensor([1])), ValueError,
         r"embedding_bag: offsets\[0\] has to be 0"),
        (lambda: F.embedding_bag(T.tensor([0, 1]), x, T.tensor([0, 2, 1])), ValueError,
         "embedding_bag: offsets must be non-decreasing"),
        (lambda: F.embedding_bag(T.tensor([0, 1]), x, T.tensor([0, 3])), ValueError,
         r"embedding_bag: offsets\[-1\] 3 cannot be greater than the input's length 2"),
        (lambda: F.embedding_bag(T.tensor([0, 1]), x), ValueError,
         "embedding_bag: a 1-d input needs offsets"),
        (lambda: F.embedding_bag(T.tensor([[0, 1]]), x, T.tensor([0])), ValueError,
         "embedding_bag: offsets must be None for a 2-d input"),
        (lambda: F.embedding_bag(T.tensor([0, 4]), x, T.tensor([0])), IndexError,
         "embedding_bag: index 4 is out of range"),
        (lambda: F.embedding_bag(T.tensor([0, 1]), x, T.tensor([0]), mode="min"), ValueError,
         "embedding_bag: mode must be 'sum', 'mean' or 'max'"),
        (lambda: F.embedding_bag(T.tensor([0, 1]), x, T.tensor([0]),
                                 per_sample_weights=T.ones(2)), ValueError,
         "embedding_bag: per_sample_weights is only supported for mode='sum'"),
        (lambda: F.embedding_bag(T.tensor([0, 1]), x, T.tensor([0]), mode="sum",
                                 per_sample_weights=T.ones(3)), ValueError,
         r"embedding_bag: per_sample_weights shape \(3,\) != input shape \(2,\)"),
        (lambda: nn.EmbeddingBag(3, 2, mode="min"), ValueError, "EmbeddingBag: mode must be"),
        (lambda: nn.ReflectionPad2d((1, 1, 1)), ValueError,
         "ReflectionPad2d: padding must be an int or 4 ints"),
        (lambda: nn.CircularPad1d(1)(T.ones(3)), ValueError,
         r"CircularPad1d: expected 2-d \(unbatched\) or 3-d input, got shape \(3,\)"),
        (lambda: nn.ReflectionPad1d(3)(T.ones((1, 3))), ValueError,
         "pad: reflect padding"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


def test_docstring_examples():
    import doctest

    import nn._functional_more as a
    import nn._functional_more_pool as b
    import nn.layers_more as c
    import nn.padding as d
    for mod in (a, b, c, d):
        r = doctest.testmod(mod)
        assert r.failed == 0 and r.attempted > 10, mod

# ---------------------------------------------------------------- cpu and cuda


DEVICE_FNS = {
    "normalize": lambda x: F.normalize(x, 3.0, 2),
    "pdist": lambda x: F.pdist(x[0]),
    "softshrink": lambda x: F.softshrink(x, 0.2),
    "rrelu_train": lambda x: F.rrelu(x, 0.1, 0.5, training=True),
    "gumbel_hard": lambda x: F.gumbel_softmax(x, 0.7, hard=True),
    "dropout3d": lambda x: F.dropout3d(x.reshape(1, 3, 2, 2, 2), 0.4),
    "feature_alpha_dropout": lambda x: F.feature_alpha_dropout(x, 0.4, training=True),
    "lp_pool2d": lambda x: F.lp_pool2d(T.abs(x) + 0.1, 2.0, 2),
    "lrn": lambda x: F.local_response_norm(x, 2, 0.5),
    "adaptive_max3d": lambda x: F.adaptive_max_pool3d(x.reshape(3, 2, 2, 2), (1, 2, 1)),
    "unpool": lambda x: F.max_unpool1d(x, T.tensor([[[1, 3, 4, 6]] * 3] * 2), 2, output_size=(8,)),
    "multi_margin": lambda x: F.multi_margin_loss(x[0], T.tensor([0, 3, 1]), 2, reduction="none"),
    "multilabel_margin": lambda x: F.multilabel_margin_loss(x[0], T.tensor([[1, -1, 0, 0]] * 3)),
    "embedding_bag": lambda x: F.embedding_bag(T.tensor([0, 2, 1, 2, 2]), x[0], T.tensor([0, 3]),
                                               mode="max"),
}


@pytest.mark.parametrize("device", ["cuda"], indirect=True)
def test_on_cuda_as_on_cpu(device):
    """The compositions on the other device (a GPU, else the emulator), random ones with the
    same seed: Philox gives both devices the same bits."""
    a, g = arr(2, 3, 4), arr(48)
    for name, fn in DEVICE_FNS.items():
        out = []
        for dev in ("cpu", device):
            T.set_default_device(dev)
            T.manual_seed(11)
            x = T.asarray(a).requires_grad_()
            y = fn(x)
            (gx,) = ag.grad(y, x, T.asarray(g[:y.numel()].reshape(y.shape)))
            assert y.device.type == dev and gx.device.type == dev
            out.append((y.detach().numpy(), gx.numpy()))
        for u, v in zip(*out):
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12, err_msg=name)
