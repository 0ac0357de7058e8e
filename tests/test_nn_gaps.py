"""PyTorch API gaps closed in nn (hunt 6, area nngaps): in-place functional activations,
optimizers given named parameters and their hooks, Module state_dict hooks, lazy modules."""
import copy
import re

import numpy as np
import pytest

import nn
import nn.functional as F
import nn.optim as O
import tensor as T
from autograd import no_grad

X = [-1.5, -0.2, 0.0, 0.3, 2.0]


# ---- (1) F.relu_ & co: were missing (AttributeError) --------------------------------------
@pytest.mark.parametrize("name,args,ref", [
    ("relu_", (), lambda x: np.maximum(x, 0)),
    ("elu_", (0.5,), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("celu_", (2.0,), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    ("selu_", (), lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    ("leaky_relu_", (0.2,), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("hardtanh_", (-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    ("threshold_", (0.1, 9.0), lambda x: np.where(x > 0.1, x, 9.0)),
    ("rrelu_", (), lambda x: np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2)),
])
def test_inplace_functional_activations(name, args, ref):
    x = T.tensor(X, dtype=T.float64)
    y = getattr(F, name)(x, *args)
    assert y is x                      # written into the input, which is returned
    np.testing.assert_allclose(x.numpy(), ref(np.array(X)), rtol=1e-12)
    leaf = T.tensor(X, dtype=T.float64, requires_grad=True)
    with pytest.raises(RuntimeError):  # a leaf requiring grad refuses in-place, as PyTorch's
        getattr(F, name)(leaf, *args)


def test_inplace_functional_matches_torch():
    torch = pytest.importorskip("torch")
    for name, args in [("relu_", ()), ("elu_", (0.7,)), ("hardtanh_", (-1.0, 0.25)),
                       ("leaky_relu_", (0.3,)), ("selu_", ()), ("celu_", (1.5,)),
                       ("threshold_", (0.0, -2.0))]:
        a, b = T.tensor(X, dtype=T.float64), torch.tensor(X, dtype=torch.float64)
        getattr(F, name)(a, *args)
        getattr(torch.nn.functional, name)(b, *args)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


# ---- (2) optimizers given named parameters (were: TypeError "can only optimize Tensors") ----
def _sgd_step(opt, m):
    opt.zero_grad()
    m(T.ones((1, 2))).sum().backward()
    opt.step()


def test_optimizer_named_parameters():
    m = nn.Linear(2, 3)
    ref = copy.deepcopy(m)
    opt = O.SGD(m.named_parameters(), lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"][0] is m.weight
    _sgd_step(opt, m)
    r = O.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    _sgd_step(r, ref)
    np.testing.assert_array_equal(m.weight.numpy(), ref.weight.numpy())   # same update
    sd = opt.state_dict()
    assert sd["param_groups"][0]["param_names"] == ["weight", "bias"]
    assert sd["param_groups"][0]["params"] == [0, 1]
    opt2 = O.SGD(m.named_parameters(), lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt2.param_groups[0]["lr"] == 0.1


def test_optimizer_named_groups_and_mixing():
    m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    opt = O.Adam([{"params": m[0].named_parameters(), "lr": 0.1},
                  {"params": m[1].named_parameters(prefix="1")}])
    assert opt.param_groups[1]["param_names"] == ["1.weight", "1.bias"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [nn.Parameter(T.ones(2))]})
    with pytest.raises(ValueError, match="with/without names"):
        O.SGD([("w", nn.Parameter(T.ones(2))), nn.Parameter(T.ones(2))], lr=0.1)
    plain = O.SGD(m[0].parameters(), lr=0.1)
    with pytest.raises(ValueError, match="with/without names"):
        plain.add_param_group({"params": m[1].named_parameters()})


def test_optimizer_named_state_dict_matches_torch():
    torch = pytest.importorskip("torch")
    tm = torch.nn.Linear(2, 3)
    m = nn.Linear(2, 3)
    a = O.SGD(m.named_parameters(), lr=0.1).state_dict()["param_groups"][0]
    b = torch.optim.SGD(tm.named_parameters(), lr=0.1).state_dict()["param_groups"][0]
    assert a["param_names"] == b["param_names"] and a["params"] == b["params"]


def test_optimizer_hooks():
    # were missing (AttributeError): register_step_pre_hook & co
    m = nn.Linear(2, 1)
    log = []
    for opt in (O.SGD(m.parameters(), lr=0.1), O.LBFGS(m.parameters()), O.AdamW(m.parameters())):
        log.clear()
        opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
        opt.register_step_post_hook(lambda o, a, k: log.append("post"))
        h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_state_dict_pre_hook(lambda o: log.append("sdpre"))
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append("lpre"))
        opt.register_load_state_dict_post_hook(lambda o: log.append("lpost"), prepend=True)

        def closure(opt=opt):
            opt.zero_grad()
            loss = m(T.ones((1, 2))).sum()
            loss.backward()
            return loss
        opt.step(closure)
        sd = opt.state_dict()
        assert sd["extra"] == 1
        h.remove()
        assert "extra" not in opt.state_dict()
        opt.load_state_dict(sd)
        # each hook once per outer call, though subclasses override step / load_state_dict
        assert log == ["pre", "post", "sdpre", "sdpre", "lpre", "lpost"], type(opt)


# ---- (3) Module state_dict hooks (were missing) -------------------------------------------
def _net():
    return nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))


def test_state_dict_pre_post_hooks():
    m = _net()
    log = []
    m[0].register_state_dict_pre_hook(lambda mod, prefix, kv: log.append((prefix, kv)))
    m[0].register_state_dict_post_hook(lambda mod, sd, prefix, meta: [sd.pop(prefix + "bias")] and None)
    assert list(m.state_dict()) == ["0.weight", "1.weight", "1.bias"]
    assert log == [("0.", False)]
    m[1].register_state_dict_post_hook(lambda mod, sd, prefix, meta: {})
    with pytest.raises(RuntimeError, match="must return None"):
        m.state_dict()
    m2 = _net()
    m2[1]._register_state_dict_hook(lambda mod, sd, prefix, meta: {"x": 1})   # private: replaces
    assert m2[1].state_dict() == {"x": 1}


def test_load_state_dict_hooks_edit_dict_and_keys():
    m, src = _net(), _net()
    sd = src.state_dict()
    sd["1.w"] = sd.pop("1.weight")
    del sd["0.bias"]
    seen = []

    def rename(mod, d, prefix, meta, strict, missing, unexpected, errors):
        if prefix + "w" in d:
            d[prefix + "weight"] = d.pop(prefix + "w")
    m[1].register_load_state_dict_pre_hook(rename)

    def forgive(mod, keys):
        seen.append((list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.missing_keys[:] = [k for k in keys.missing_keys if k != "0.bias"]
    m.register_load_state_dict_post_hook(forgive)
    r = m.load_state_dict(sd)          # strict, but the post-hook removed the missing key
    assert "1.w" in sd                 # the caller's mapping untouched
    assert seen == [(["0.bias"], [])]  # (the state_dict hooks do not hide keys from loading)
    assert r.missing_keys == [] and r.unexpected_keys == []
    np.testing.assert_array_equal(m[1].weight.numpy(), src[1].weight.numpy())
    m3 = _net()
    m3.register_load_state_dict_post_hook(lambda mod, keys: None)
    with pytest.raises(RuntimeError, match="Missing key"):
        m3.load_state_dict({})
    m4 = _net()
    m4[0].register_load_state_dict_pre_hook(
        lambda mod, d, prefix, meta, strict, mi, un, errors: errors.append("bad"))
    with pytest.raises(RuntimeError, match="bad"):
        m4.load_state_dict(src.state_dict())
    m5 = _net()
    calls = []
    m5[0]._register_load_state_dict_pre_hook(lambda d, prefix, *rest: calls.append(prefix))
    m5.load_state_dict(src.state_dict())
    assert calls == ["0."]


# ---- (4) lazy modules (were missing) ------------------------------------------------------
def test_lazy_linear_materialises_in_place_for_an_optimizer():
    m = nn.LazyLinear(3)
    assert isinstance(m.weight, nn.UninitializedParameter) and isinstance(m.weight, nn.Parameter)
    assert m.has_uninitialized_params()
    w = m.weight
    opt = O.SGD(m.parameters(), lr=0.1)   # before the first forward, as PyTorch allows
    x = T.tensor(np.arange(8.0).reshape(2, 4), dtype=T.float32)
    y = m(x)
    assert type(m) is nn.Linear and m.in_features == 4 and m.weight is w
    assert not isinstance(w, nn.UninitializedParameter)
    bound = 1 / 2                     # kaiming_uniform(a=sqrt(5)) of fan_in 4: U(-1/2, 1/2)
    assert w.shape == (3, 4) and float(abs(w).max().item()) <= bound
    np.testing.assert_allclose(y.numpy(), x.numpy() @ w.numpy().T + m.bias.numpy(), rtol=1e-5)
    y.sum().backward()
    before = w.numpy().copy()
    opt.step()
    np.testing.assert_allclose(w.numpy(), before - 0.1 * x.numpy().sum(0)[None, :], rtol=1e-5)


@pytest.mark.parametrize("make,x,shapes,cls", [
    (lambda: nn.LazyConv2d(4, 3), (1, 2, 5, 5), [(4, 2, 3, 3), (4,)], nn.Conv2d),
    (lambda: nn.LazyConv1d(2, 3), (3, 7), [(2, 3, 3), (2,)], nn.Conv1d),
    (lambda: nn.LazyConvTranspose1d(4, 3, groups=2), (1, 2, 5), [(2, 2, 3), (4,)],
     nn.ConvTranspose1d),
    (lambda: nn.LazyBatchNorm1d(), (4, 3), [(3,), (3,), (3,), (3,), ()], nn.BatchNorm1d),
    (lambda: nn.LazyInstanceNorm2d(), (3, 4, 4), [], nn.InstanceNorm2d),
])
def test_lazy_layers(make, x, shapes, cls):
    m = make()
    m(T.ones(x))
    assert type(m) is cls
    assert [tuple(t.shape) for t in m.state_dict().values()] == shapes


def test_lazy_matches_torch_shapes():
    torch = pytest.importorskip("torch")
    for ours, theirs, x in [(nn.LazyConv3d(2, 2, groups=1), torch.nn.LazyConv3d(2, 2), (1, 3, 4, 4, 4)),
                            (nn.LazyConvTranspose2d(6, 3, stride=2),
                             torch.nn.LazyConvTranspose2d(6, 3, stride=2), (2, 4, 5, 5)),
                            (nn.LazyBatchNorm2d(), torch.nn.LazyBatchNorm2d(), (2, 3, 2, 2))]:
        yo = ours(T.ones(x))
        yt = theirs(torch.ones(x))
        assert tuple(yo.shape) == tuple(yt.shape)
        assert repr(ours) == repr(theirs)
        assert [tuple(v.shape) for v in ours.state_dict().values()] == \
            [tuple(v.shape) for v in theirs.state_dict().values()]


def test_lazy_load_state_dict_and_deepcopy():
    src = nn.Linear(4, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())   # materialises with the loaded shapes
    assert not m.has_uninitialized_params()
    np.testing.assert_array_equal(m.weight.numpy(), src.weight.numpy())
    m(T.ones((1, 4)))
    assert type(m) is nn.Linear and m.in_features == 4
    np.testing.assert_array_equal(m.weight.numpy(), src.weight.numpy())   # not re-initialised
    lazy = nn.LazyLinear(2)
    twin = copy.deepcopy(lazy)
    assert twin.has_uninitialized_params()
    twin(T.ones((1, 5)))
    assert twin.in_features == 5 and lazy.has_uninitialized_params()
    lazy(T.ones((1, 6)))
    assert lazy.weight.shape == (2, 6)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(T.ones((1, 3, 5)))


# ---- (6) BatchNorm / GroupNorm bias= keyword (was TypeError) ------------------------------
def test_norm_bias_keyword():
    x = T.tensor(np.random.RandomState(1).randn(4, 3), dtype=T.float64)
    b = nn.BatchNorm1d(3, bias=False, dtype=T.float64)
    assert b.bias is None and list(b.state_dict())[:1] == ["weight"] and "bias" not in b.state_dict()
    xn = x.numpy()
    ref = (xn - xn.mean(0)) / np.sqrt(xn.var(0) + 1e-5)
    np.testing.assert_allclose(b(x).numpy(), ref, rtol=1e-10)
    g = nn.GroupNorm(1, 3, bias=False)
    assert list(g.state_dict()) == ["weight"]
    assert repr(g) == "GroupNorm(1, 3, eps=1e-05, affine=True, bias=False)"
    assert "bias=False" in repr(nn.LazyBatchNorm1d(bias=False))


def test_norm_bias_matches_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in [(nn.BatchNorm2d(3, bias=False), torch.nn.BatchNorm2d(3, bias=False)),
                         (nn.BatchNorm1d(3, affine=False), torch.nn.BatchNorm1d(3, affine=False)),
                         (nn.GroupNorm(1, 3), torch.nn.GroupNorm(1, 3))]:
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())


# ---- (7) functional spellings and ChannelShuffle (were missing) ---------------------------
def test_channel_shuffle_and_with_indices():
    x = T.arange(16.0).reshape(1, 4, 2, 2)
    y = F.channel_shuffle(x, 2)
    ref = np.arange(16.0).reshape(1, 2, 2, 2, 2).swapaxes(1, 2).reshape(1, 4, 2, 2)
    np.testing.assert_array_equal(y.numpy(), ref)
    np.testing.assert_array_equal(nn.ChannelShuffle(2)(x).numpy(), ref)
    with pytest.raises(ValueError, match="divisible"):
        F.channel_shuffle(x, 3)
    out, idx = F.max_pool2d_with_indices(x, 2)
    assert out.reshape(-1).tolist() == [3.0, 7.0, 11.0, 15.0] and idx.reshape(-1).tolist() == [3] * 4
    out, idx = F.adaptive_max_pool1d_with_indices(T.tensor([[[1.0, 5.0, 2.0, 0.0]]]), 2)
    assert out.tolist() == [[[5.0, 2.0]]] and idx.tolist() == [[[1, 2]]]
    up = F.upsample_bilinear(T.tensor([[[[0.0, 1.0]]]]), size=(1, 3))   # align_corners=True
    np.testing.assert_allclose(up.numpy().reshape(-1), [0.0, 0.5, 1.0])
    assert F.upsample_nearest(T.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist() == [[[1.0, 1.0, 2.0, 2.0]]]


def test_channel_shuffle_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.RandomState(2).randn(2, 6, 3)
    np.testing.assert_array_equal(F.channel_shuffle(T.asarray(x), 3).numpy(),
                                  torch.nn.functional.channel_shuffle(torch.from_numpy(x), 3).numpy())


# ---- (8) schedulers importable from nn.optim.lr_scheduler (were ImportError) --------------
def test_lr_scheduler_module_exports():
    from nn.optim.lr_scheduler import LRScheduler, OneCycleLR, ReduceLROnPlateau, _LRScheduler
    assert OneCycleLR is O.OneCycleLR and ReduceLROnPlateau is O.ReduceLROnPlateau
    assert _LRScheduler is LRScheduler


# ---- (9) nn.Buffer, (10) to_empty / type / _apply, (11) _save/_load_from_state_dict --------
def test_buffer_assignment():
    m = nn.Module()
    m.stats = nn.Buffer(T.ones(2), persistent=False)
    m.count = nn.Buffer(T.zeros(1))
    assert [n for n, _ in m.named_buffers()] == ["stats", "count"]
    assert list(m.state_dict()) == ["count"]
    m.stats = T.zeros(3)                       # still a (non-persistent) buffer
    assert list(m.state_dict()) == ["count"] and m.stats.tolist() == [0.0] * 3
    m.register_buffer("y", nn.Buffer(T.ones(1), persistent=False))   # register_buffer's flag wins
    assert list(m.state_dict()) == ["count", "y"]


def test_to_empty_type_apply():
    m = nn.BatchNorm1d(2)
    w = m.weight
    m.to_empty(device="cpu")
    assert m.weight is w and w.shape == (2,)
    m.type(T.float64)
    assert [b.dtype.name for b in m.buffers()] == ["float64"] * 3   # integer buffer too
    lin = nn.Linear(2, 1)
    lin._apply(lambda t: t * 0)
    assert lin.weight.tolist() == [[0.0, 0.0]] and lin.weight is not None
    with pytest.warns(FutureWarning):
        lin.register_backward_hook(lambda *a: None).remove()


class _Renamed(nn.Linear):
    """A checkpoint of an older version named the weight 'w'."""

    def _load_from_state_dict(self, sd, prefix, meta, strict, missing, unexpected, errors):
        if prefix + "w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "w")
        super()._load_from_state_dict(sd, prefix, meta, strict, missing, unexpected, errors)


class _Noted(nn.Linear):
    def _save_to_state_dict(self, dest, prefix, keep_vars):
        super()._save_to_state_dict(dest, prefix, keep_vars)
        dest[prefix + "note"] = T.ones(1)


def test_save_load_from_state_dict_overrides():
    # overriding them had no effect before
    m = nn.Sequential(_Renamed(2, 1))
    r = m.load_state_dict({"0.w": T.zeros((1, 2)), "0.bias": T.ones(1)})
    assert repr(r) == "<All keys matched successfully>"
    assert m[0].weight.tolist() == [[0.0, 0.0]] and m[0].bias.tolist() == [1.0]
    n = nn.Sequential(_Noted(2, 1))
    assert list(n.state_dict()) == ["0.weight", "0.bias", "0.note"]
    with pytest.raises(RuntimeError, match="Unexpected key"):
        n.load_state_dict(n.state_dict())
    assert n.load_state_dict(n.state_dict(), strict=False).unexpected_keys == ["0.note"]


# ---- nn.optim.swa_utils (was missing) -----------------------------------------------------
def test_swa_utils_values():
    from nn.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
    model = nn.Linear(1, 1, bias=False)
    swa, ema = AveragedModel(model), AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    ws = [1.0, 3.0, 8.0]
    for w in ws:
        with no_grad():
            model.weight.fill_(w)
        swa.update_parameters(model)
        ema.update_parameters(model)
    assert swa.module.weight.item() == pytest.approx(np.mean(ws))           # running mean
    assert ema.module.weight.item() == pytest.approx((1 * 0.9 + 0.1 * 3) * 0.9 + 0.1 * 8)
    assert int(swa.n_averaged.item()) == 3
    opt = O.SGD(model.parameters(), lr=1.0)
    sch = SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(3):
        sch.step()
        lrs.append(sch.get_last_lr()[0])
    np.testing.assert_allclose(lrs, [1.0, 0.75, 0.5, 0.5])
    bn = nn.Sequential(nn.BatchNorm1d(2, momentum=0.3))
    data = [T.tensor([[0.0, 2.0], [2.0, 4.0]]), (T.tensor([[4.0, 6.0], [6.0, 8.0]]),)]
    update_bn(data, bn)
    np.testing.assert_allclose(bn[0].running_mean.numpy(), [3.0, 5.0])   # mean of batch means
    assert bn[0].momentum == 0.3


def test_swa_utils_match_torch():
    torch = pytest.importorskip("torch")
    from torch.optim import swa_utils as TS

    from nn.optim import swa_utils as S
    w0 = np.random.RandomState(0).randn(3, 2).astype(np.float32)
    out = []
    for L, TT, SU, OO in ((nn, T, S, O), (torch.nn, torch, TS, torch.optim)):
        m = L.Linear(2, 3)
        m.weight.data, m.bias.data = TT.tensor(w0), TT.tensor(w0[:, 0].copy())
        avg = SU.AveragedModel(m, avg_fn=SU.get_ema_avg_fn(0.8))
        opt = OO.SGD(m.parameters(), lr=0.1)
        sch = SU.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        lrs = []
        for i in range(4):
            x = TT.tensor(np.random.RandomState(i).randn(4, 2).astype(np.float32))
            opt.zero_grad()
            (m(x) ** 2).sum().backward()
            opt.step()
            sch.step()
            avg.update_parameters(m)
            lrs.append(sch.get_last_lr()[0])
        out.append((avg.module.weight.detach().numpy().copy(), lrs))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-5)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)


def test_forward_takes_input_keyword():
    # Linear / activations named their argument x: m(input=t) raised TypeError
    t = T.tensor([[-1.0, 2.0]])
    assert nn.Linear(2, 1)(input=t).shape == (1, 1)
    assert nn.ReLU()(input=t).tolist() == [[0.0, 2.0]]
    assert nn.Flatten(0)(input=t).tolist() == [-1.0, 2.0]
    assert nn.ELU()(input=t).shape == (1, 2)


def test_state_dict_metadata_versions_and_old_batchnorm_checkpoints():
    # state_dict had no _metadata; a _load_from_state_dict override saw no version
    m = nn.Sequential(nn.Linear(1, 1), nn.BatchNorm1d(2))
    sd = m.state_dict()
    assert sd._metadata == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}
    seen = []

    class V(nn.Linear):
        _version = 3

        def _load_from_state_dict(self, d, prefix, meta, *rest):
            seen.append(meta)
    n = nn.Sequential(V(1, 1))
    n.load_state_dict(n.state_dict())
    assert seen == [{"version": 3}]
    bn = nn.BatchNorm1d(2)
    old = dict(bn.state_dict())        # a plain dict: no versions, as an old checkpoint
    del old["num_batches_tracked"]
    assert repr(bn.load_state_dict(old)) == "<All keys matched successfully>"
    new = bn.state_dict()               # version 2: the key is required
    del new["num_batches_tracked"]
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        bn.load_state_dict(new)


# ---- nn.SyncBatchNorm (was missing) -------------------------------------------------------
def test_sync_batchnorm_single_process_is_batchnorm():
    x = T.tensor(np.random.RandomState(3).randn(4, 3, 2).astype(np.float32))
    b, s = nn.BatchNorm1d(3), nn.SyncBatchNorm(3)
    np.testing.assert_allclose(s(x).numpy(), b(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(s.running_var.numpy(), b.running_var.numpy(), rtol=1e-6)
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.InstanceNorm1d(3))
    w = m[1].weight
    m[1].eval()
    c = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert type(c[1]) is nn.SyncBatchNorm and type(c[2]) is nn.InstanceNorm1d
    assert c[1].weight is w and c[1].training is False


SYNC_BN = r'''
import numpy as np
import tensor as T, tensor.distributed as dist, nn
dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
x_all = np.random.RandomState(0).randn(2 * world, 3, 5).astype(np.float64)
up = np.random.RandomState(1).randn(*x_all.shape)
ref = nn.BatchNorm1d(3, dtype=T.float64)
xr = T.asarray(x_all.copy()).requires_grad_()
yr = ref(xr)
(yr * T.asarray(up)).sum().backward()
m = nn.SyncBatchNorm(3, dtype=T.float64)
part = slice(2 * rank, 2 * rank + 2)
x = T.asarray(x_all[part].copy()).requires_grad_()
y = m(x)
(y * T.asarray(up[part])).sum().backward()
wg = m.weight.grad.clone()
dist.all_reduce(wg)   # the weight's gradient of the sum of the ranks' losses
oks = [np.allclose(y.detach().numpy(), yr.detach().numpy()[part]),
       np.allclose(x.grad.numpy(), xr.grad.numpy()[part]),
       np.allclose(wg.numpy(), ref.weight.grad.numpy()),
       np.allclose(m.running_var.numpy(), ref.running_var.numpy()),
       np.allclose(m.running_mean.numpy(), ref.running_mean.numpy())]
print(f"RESULT {rank} {all(oks)} {oks}\n", end="", flush=True)   # one write
'''


def test_sync_batchnorm_two_ranks_match_full_batch():
    from tests.helpers import run_ranks
    lines = run_ranks(SYNC_BN, n=2, timeout=120)
    text = "\n".join(lines)
    assert sorted(re.findall(r"RESULT (\d) (\w+)", text)) == [("0", "True"), ("1", "True")], text


def test_data_parallel_wrapper():
    # nn.DataParallel was missing; the wrapper keeps PyTorch's "module." state_dict prefix
    inner = nn.Linear(2, 1)
    dp = nn.DataParallel(inner)
    x = T.ones((3, 2))
    np.testing.assert_array_equal(dp(x).numpy(), inner(x).numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"] and dp.module is inner
    with pytest.warns(UserWarning, match="one device"):
        nn.DataParallel(nn.Linear(1, 1), device_ids=[0, 1])


def test_embedding_repr_shows_options():
    # sparse / scale_grad_by_freq / norm_type were left out of the repr
    assert repr(nn.Embedding(3, 2, norm_type=1.0, scale_grad_by_freq=True, sparse=True)) == \
        "Embedding(3, 2, norm_type=1.0, scale_grad_by_freq=True, sparse=True)"
    assert repr(nn.Embedding(3, 2, max_norm=1.0)) == "Embedding(3, 2, max_norm=1.0)"


def test_pickled_module_keeps_parameters_and_lazy_state():
    # an unpickled model's parameters were plain tensors (isinstance(p, Parameter) False,
    # `m.weight = m.weight` raised TypeError); a lazy module's placeholders lost their state and
    # a module holding a hook handle could not be pickled (a lambda inside RemovableHandle)
    import pickle
    m = nn.Sequential(nn.Linear(2, 1), nn.BatchNorm1d(1))
    m2 = pickle.loads(pickle.dumps(m))
    assert all(isinstance(p, nn.Parameter) for p in m2.parameters())
    m2[0].weight = m2[0].weight
    np.testing.assert_array_equal(m2[0].weight.numpy(), m[0].weight.numpy())
    lazy = pickle.loads(pickle.dumps(nn.LazyLinear(2)))
    assert lazy.has_uninitialized_params()
    lazy(T.ones((1, 3)))
    assert type(lazy) is nn.Linear and lazy.weight.shape == (2, 3)
    assert not lazy._forward_pre_hooks      # its own hook removed itself


def test_optimizer_step_hooks_run_on_compiled_replays():
    # the hooks must run on every replay of a tensor.compile'd step, inside the step's island
    m = nn.Linear(2, 1)
    opt = O.SGD(m.parameters(), lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    x = T.ones((4, 2))

    @T.compile
    def step(x):
        opt.zero_grad()
        loss = m(x).sum()
        loss.backward()
        opt.step()
        return loss.detach()
    for _ in range(4):
        step(x)
    assert calls == ["pre", "post"] * 4
