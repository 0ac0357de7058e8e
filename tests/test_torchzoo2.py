"""PyTorch-user workloads, round 2 (hunt 10, area torchzoo): nn.utils.prune (was missing) and
PyTorch's deprecated spellings older scripts still call (nn.init.xavier_uniform & co,
nn.utils.clip_grad_norm, nn.utils.rnn.invert_permutation). Values are checked against NumPy /
closed forms; PyTorch, where present, is the reference for the layouts and masks."""
import copy
import warnings

import numpy as np
import pytest

import nn
import tensor as T
from nn.utils import prune

pytestmark = pytest.mark.usefixtures("device")


def _lin(w, b=None):
    m = nn.Linear(w.shape[1], w.shape[0]).to(T.get_default_device()).double()
    m.weight = nn.Parameter(T.asarray(np.array(w, copy=True)))
    if b is not None:
        m.bias = nn.Parameter(T.asarray(np.array(b, copy=True)))
    return m


# ---- (1) nn.utils.prune was missing (AttributeError) ----------------------------------------
def test_l1_unstructured_layout_forward_and_grad():
    w = np.array([[1.0, -4.0, 2.0], [0.5, 3.0, -0.1]])
    m = _lin(w, np.zeros(2))
    assert prune.l1_unstructured(m, "weight", amount=0.34) is m   # round(0.34 * 6) = 2 entries
    mask = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(m.weight_mask.numpy(), mask)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [k for k, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert prune.is_pruned(m) and not isinstance(m.weight, nn.Parameter)
    x = np.array([[1.0, 2.0, 3.0]])
    out = m(T.asarray(x))
    np.testing.assert_allclose(out.numpy(), x @ (w * mask).T, rtol=1e-13)
    out.sum().backward()    # pruned entries get zero gradient through the mask
    np.testing.assert_allclose(m.weight_orig.grad.numpy(), mask * x, rtol=1e-13)
    # the forward pre-hook recomputes weight after the optimizer updates weight_orig
    opt = nn.optim.SGD(m.parameters(), lr=0.5)
    opt.step()
    m(T.asarray(x))
    np.testing.assert_allclose(m.weight.numpy(), (w - 0.5 * mask * x) * mask, rtol=1e-13)
    prune.remove(m, "weight")
    assert list(m.state_dict()) == ["bias", "weight"] and not prune.is_pruned(m)
    assert isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(m.weight.numpy(), (w - 0.5 * mask * x) * mask, rtol=1e-13)


def test_iterative_pruning_combines_in_a_container():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 5))
    m = _lin(w)
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)        # drops the row of least L2 norm
    row = np.argmin(np.linalg.norm(w, axis=1))
    prune.l1_unstructured(m, "weight", amount=3)                   # 3 more among the alive entries
    hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 2
    alive = np.ones_like(w)
    alive[row] = 0
    order = np.argsort(np.abs(np.where(alive == 1, w, np.inf)).ravel(), kind="stable")[:3]
    expect = alive.ravel().copy()
    expect[order] = 0
    np.testing.assert_array_equal(m.weight_mask.numpy().ravel(), expect)
    prune.ln_structured(m, "weight", amount=0.25, n=float("inf"), dim=1)   # one column of 5 (rounded)
    assert int((m.weight_mask.numpy().sum(axis=0) == 0).sum()) >= 1


def test_global_unstructured_importance_and_custom_mask():
    rng = np.random.default_rng(1)
    a, b = _lin(rng.standard_normal((3, 4))), _lin(rng.standard_normal((2, 3)))
    wa, wb = a.weight.numpy().copy(), b.weight.numpy().copy()
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=6)
    allw = np.concatenate([wa.ravel(), wb.ravel()])
    keep = np.ones_like(allw)
    keep[np.argsort(np.abs(allw), kind="stable")[:6]] = 0
    np.testing.assert_array_equal(np.concatenate([a.weight_mask.numpy().ravel(),
                                                  b.weight_mask.numpy().ravel()]), keep)
    scores = T.asarray(np.arange(6.0)[::-1].reshape(2, 3).copy())
    c = _lin(rng.standard_normal((2, 3)))
    prune.l1_unstructured(c, "weight", amount=2, importance_scores=scores)   # the 2 smallest scores
    np.testing.assert_array_equal(c.weight_mask.numpy(), [[1, 1, 1], [1, 0, 0]])
    prune.custom_from_mask(c, "bias", mask=T.asarray([0.0, 1.0]))
    np.testing.assert_array_equal(c.bias.numpy(), [0.0, c.bias_orig.numpy()[1]])
    with pytest.raises(TypeError, match="only unstructured"):
        prune.global_unstructured([(c, "weight")], prune.LnStructured, amount=1, n=2, dim=0)


def test_random_methods_counts_and_channels():
    m = _lin(np.ones((8, 10)))
    prune.random_unstructured(m, "weight", amount=0.3)
    assert int((m.weight_mask.numpy() == 0).sum()) == 24
    prune.random_structured(m, "weight", amount=3, dim=0)
    rows = m.weight_mask.numpy().sum(axis=1)
    assert int((rows == 0).sum()) >= 3


def test_prune_errors_leave_the_module_intact():
    m = _lin(np.ones((2, 3)))
    with pytest.raises(ValueError, match="more than the 6 entries"):
        prune.l1_unstructured(m, "weight", amount=7)
    assert list(m.state_dict()) == ["bias", "weight"] and not prune.is_pruned(m)
    with pytest.raises(ValueError, match="fraction"):
        prune.l1_unstructured(m, "weight", amount=1.5)
    with pytest.raises(ValueError, match="non-negative"):
        prune.random_unstructured(m, "weight", amount=-1)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        prune.ln_structured(m, "bias", amount=1, n=2, dim=0)
    with pytest.raises(IndexError, match="dim=3"):
        prune.ln_structured(m, "weight", amount=1, n=2, dim=3)
    with pytest.raises(ValueError, match="has to be pruned"):
        prune.remove(m, "weight")
    prune.l1_unstructured(m, "weight", amount=1)
    prune.l1_unstructured(m, "weight", amount=1)
    with pytest.raises(ValueError, match="more than the 4 entries"):   # 4 still alive
        prune.l1_unstructured(m, "weight", amount=5)
    (hook,) = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hook) == 2 and int((m.weight_mask.numpy() == 0).sum()) == 2


def test_pruned_state_dict_reload_and_deepcopy():
    rng = np.random.default_rng(2)
    m = _lin(rng.standard_normal((3, 4)), rng.standard_normal(3))
    prune.l1_unstructured(m, "weight", amount=5)
    m2 = prune.identity(_lin(np.zeros((3, 4)), np.zeros(3)), "weight")
    m2.load_state_dict(m.state_dict())
    x = T.asarray(rng.standard_normal((2, 4)))
    np.testing.assert_allclose(m2(x).numpy(), m(x).numpy(), rtol=1e-13)
    m3 = copy.deepcopy(m)
    m3.weight_mask.fill_(1.0)   # the copy has its own mask and hook
    assert not np.allclose(m3(x).numpy(), m(x).numpy())


def test_prune_matches_torch():
    torch = pytest.importorskip("torch")
    tp = pytest.importorskip("torch.nn.utils.prune")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 2, 3, 3))
    tc = torch.nn.Conv2d(2, 6, 3).double()
    with torch.no_grad():
        tc.weight.copy_(torch.tensor(w))
    oc = nn.Conv2d(2, 6, 3).to(T.get_default_device()).double()
    oc.load_state_dict({k: T.asarray(v.numpy()) for k, v in tc.state_dict().items()})
    for lib, mod in ((tp, tc), (prune, oc)):
        lib.l1_unstructured(mod, "weight", amount=0.3)
        lib.ln_structured(mod, "weight", amount=2, n=1, dim=0)
        lib.ln_structured(mod, "weight", amount=1, n=2, dim=1)
        lib.l1_unstructured(mod, "bias", amount=2)
    assert list(tc.state_dict()) == list(oc.state_dict())
    for k, v in tc.state_dict().items():
        np.testing.assert_allclose(oc.state_dict()[k].numpy(), v.numpy(), rtol=1e-13)
    x = rng.standard_normal((2, 2, 5, 5))
    np.testing.assert_allclose(oc(T.asarray(x)).numpy(), tc(torch.tensor(x)).detach().numpy(),
                               rtol=1e-11, atol=1e-12)


# ---- (2) PyTorch's deprecated spellings were missing -----------------------------------------
def test_deprecated_init_aliases_warn_and_initialise():
    w = T.zeros((3, 5))
    with pytest.warns(FutureWarning, match="xavier_uniform_"):
        nn.init.xavier_uniform(w, gain=2.0)
    bound = 2.0 * np.sqrt(6.0 / (3 + 5))
    assert np.all(np.abs(w.numpy()) <= bound) and np.any(w.numpy() != 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.init.constant(w, 1.5)
        np.testing.assert_array_equal(w.numpy(), np.full((3, 5), 1.5))
        nn.init.eye(w)
        np.testing.assert_array_equal(w.numpy(), np.eye(3, 5))
    for name in ("uniform", "normal", "dirac", "xavier_normal", "kaiming_uniform",
                 "kaiming_normal", "orthogonal", "sparse"):
        assert callable(getattr(nn.init, name))


def test_clip_grad_norm_alias_and_invert_permutation():
    p = nn.Parameter(T.asarray([0.0, 0.0]))
    p.grad = T.asarray([3.0, 4.0])
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        total = nn.utils.clip_grad_norm(p, 1.0)
    assert float(total) == 5.0
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-6)
    perm = T.asarray([2, 0, 3, 1])
    np.testing.assert_array_equal(nn.utils.rnn.invert_permutation(perm).numpy(), np.argsort([2, 0, 3, 1]))
    assert nn.utils.rnn.invert_permutation(None) is None
    packed = nn.utils.rnn.pack_padded_sequence(T.zeros((4, 3, 1)), [1, 4, 2], enforce_sorted=False)
    np.testing.assert_array_equal(nn.utils.rnn.invert_permutation(packed.sorted_indices).numpy(),
                                  packed.unsorted_indices.numpy())


# ---- (3) F.linear with a 1-D weight raised ValueError (PyTorch: x @ w, output dim dropped) ----
def test_linear_one_dimensional_weight():
    x = np.arange(12.0).reshape(3, 4)
    w = np.array([1.0, 0.0, 2.0, -1.0])
    xt = T.asarray(x.copy())
    xt.requires_grad_(True)
    y = nn.functional.linear(xt, T.asarray(w))
    assert y.shape == (3,)
    np.testing.assert_allclose(y.numpy(), x @ w, rtol=1e-13)
    y.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), np.broadcast_to(w, (3, 4)), rtol=1e-13)
    assert float(nn.functional.linear(T.asarray(x[0]), T.asarray(w))) == float(x[0] @ w)
    with pytest.raises(ValueError, match="without bias"):
        nn.functional.linear(xt, T.asarray(w), T.asarray(1.0))


# ---- (4) a bad index raised its op's error, then (on a GPU) a second, stale one later ---------
@pytest.mark.parametrize("case", ["ce_weight", "ce_weight_backward", "embedding", "embedding_max_norm",
                                  "max_unpool", "multi_margin", "multilabel_margin"])
def test_bad_index_raises_once_not_again_in_a_later_op(case):
    # On cuda the checks are deferred: cross_entropy(weight=), Embedding, max_unpool and the
    # margin losses raised their own clear IndexError at the next synchronization, and then an
    # internal gather/scatter's check on the same bad index raised again in whatever op
    # synchronized next ("index 7 is out of bounds for axis 0 ... found by an earlier op").
    dev = T.get_default_device()

    def run():
        if case == "ce_weight":
            return nn.functional.cross_entropy(T.ones((3, 5)), T.asarray([0, 7, 1]), weight=T.ones(5))
        if case == "ce_weight_backward":
            x = T.ones((3, 5))
            x.requires_grad_(True)
            nn.functional.cross_entropy(x, T.asarray([0, 7, 1]), weight=T.ones(5)).backward()
            return x.grad
        if case == "embedding":
            return nn.Embedding(4, 2).to(dev)(T.asarray([1, 4]))
        if case == "embedding_max_norm":
            return nn.Embedding(4, 2, max_norm=1.0).to(dev)(T.asarray([1, 4]))
        if case == "max_unpool":
            return nn.functional.max_unpool1d(T.ones((1, 1, 2)), T.asarray([[[0, 9]]]), 2)
        if case == "multi_margin":
            return nn.functional.multi_margin_loss(T.ones((3, 5)), T.asarray([0, 5, 1]))
        return nn.functional.multilabel_margin_loss(T.ones((2, 3)), T.asarray([[0, 5, -1], [1, -1, 0]]))

    with pytest.raises(IndexError, match="out of (range|bounds)") as err:
        run().sum().item()
    assert "found on the GPU by an earlier op" not in str(err.value) or "cuda" in str(dev)
    # the next, unrelated synchronization raises nothing
    assert float((T.ones(3) * 2).sum().item()) == 6.0
    ok = nn.functional.cross_entropy(T.asarray([[0.0, 0.0]]), T.asarray([1]))
    np.testing.assert_allclose(float(ok.item()), np.log(2.0), rtol=1e-12)


# ---- (5) binary_cross_entropy accepted targets outside [0, 1] silently (PyTorch raises) ------
def test_binary_cross_entropy_checks_the_target_range():
    x, t = np.array([0.5, 0.2]), np.array([1.0, 0.0])
    expect = -np.mean(t * np.log(x) + (1 - t) * np.log(1 - x))
    np.testing.assert_allclose(float(nn.functional.binary_cross_entropy(T.asarray(x), T.asarray(t))),
                               expect, rtol=1e-13)
    for bad in ([2.0, 0.0], [np.nan, 0.0], [0.5, -0.1]):   # was a silent 0.69 for [2, 0]
        with pytest.raises(ValueError, match="target should be between 0 and 1"):
            nn.BCELoss()(T.asarray(x), T.asarray(bad))
    with pytest.raises(ValueError, match="input should be between 0 and 1"):
        nn.functional.binary_cross_entropy(T.asarray([1.5, 0.2]), T.asarray(t))


# ---- (6) PyTorch's warnings for two classic training-loop mistakes were missing ---------------
def test_scheduler_stepped_before_optimizer_warns_once():
    p = nn.Parameter(T.zeros(2))
    opt = nn.optim.SGD([p], lr=1.0)
    sched = nn.optim.StepLR(opt, step_size=1, gamma=0.5)
    with pytest.warns(UserWarning, match="before optimizer.step"):
        sched.step()    # the first value of the schedule (lr 1.0) is skipped: lr is now 0.5
    assert opt.param_groups[0]["lr"] == 0.5
    opt2 = nn.optim.SGD([p], lr=1.0)
    sched2 = nn.optim.StepLR(opt2, step_size=1, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the right order: no warning
        p.grad = T.ones(2)
        opt2.step()
        sched2.step()
        opt2.step()
        sched2.step()
    np.testing.assert_allclose(p.numpy(), [-1.5, -1.5])   # lr 1.0, then 0.5
    assert opt2.param_groups[0]["lr"] == 0.25


def test_kl_div_mean_reduction_warns():
    logp = T.log(T.asarray([[0.25, 0.75], [0.5, 0.5]]))
    q = T.asarray([[0.5, 0.5], [0.5, 0.5]])
    with pytest.warns(UserWarning, match="batchmean"):
        mean = nn.functional.kl_div(logp, q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batchmean = nn.KLDivLoss(reduction="batchmean")(logp, q)
    pw = 0.5 * (np.log(0.5) - np.log([[0.25, 0.75]]))
    np.testing.assert_allclose(float(mean), pw.sum() / 4, rtol=1e-13)
    np.testing.assert_allclose(float(batchmean), pw.sum() / 2, rtol=1e-13)


# ---- (7) nn.Dropout / nn.Sequential named forward's argument `x` (PyTorch: `input`) ----------
def test_dropout_and_sequential_take_input_keyword():
    x = T.asarray([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(nn.Dropout(0.5).eval()(input=x).numpy(), x.numpy())
    seq = nn.Sequential(nn.ReLU(), nn.Dropout(0.0))
    np.testing.assert_array_equal(seq(input=x).numpy(), [1.0, 0.0, 3.0])


# ---- (8) huber / smooth_l1: an infinite difference sent NaN into the gradient (PyTorch: +-delta) --
@pytest.mark.parametrize("kind", ["huber", "smooth_l1"])
def test_huber_and_smooth_l1_gradient_at_infinity(kind):
    x = T.asarray([np.inf, -np.inf, 0.2, 3.0])
    x.requires_grad_(True)
    if kind == "huber":
        loss = nn.functional.huber_loss(x, T.zeros(4), delta=0.5, reduction="sum")
        expect = [0.5, -0.5, 0.2, 0.5]           # delta * sign(d) outside, d inside
    else:
        loss = nn.functional.smooth_l1_loss(x, T.zeros(4), beta=0.5, reduction="sum")
        expect = [1.0, -1.0, 0.2 / 0.5, 1.0]     # sign(d) outside, d / beta inside
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), expect, rtol=1e-13)


# ---- (9) Module.to(device, non_blocking=True) and Module.to(tensor) raised TypeError --------
def test_module_to_non_blocking_and_to_tensor():
    dev = T.get_default_device()
    m = nn.Linear(3, 2)
    assert m.to(dev, non_blocking=True) is m and m.weight.dtype == T.float32
    m.to(T.ones(1, dtype=T.float64))            # PyTorch's to(other): other's dtype and device
    assert m.weight.dtype == T.float64 and m.bias.dtype == T.float64
    x = np.array([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(m(T.asarray(x)).numpy(),
                               x @ m.weight.numpy().T + m.bias.numpy(), rtol=1e-13)
    with pytest.raises(TypeError, match="floating"):
        m.to(T.ones(1, dtype=T.int64))
    with pytest.raises(TypeError, match="non_blocking"):
        m.to(dev, non_blocking="yes")
