"""autograd and nn on CUDA tensors while the default device stays the CPU (what a user does:
model.to("cuda"), x = x.to("cuda")): every derivative rule, engine seed, functional transform
and nn helper must build its own tensors on the device of the tensors it works on.

Each test runs the same program on "cpu" and on "cuda" (inputs made explicitly with
device=..., never through the default device) and compares values and gradients. Skipped
unless tensor.cuda.is_available() (conftest.py switches the CPU emulator on without a GPU;
sizes stay small: the emulator runs every GPU thread as a fiber).

Tolerances (float64): single ops and their gradients rtol 1e-12 (CUDA reductions sum in another
order than the CPU); 3 training steps rtol 1e-9 (Adam divides by sqrt of the second moment,
which magnifies last-bit differences). Random bits (dropout masks, init) are the same Philox
stream on both devices; checkpoint replays them bit for bit on one device.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as A
import nn
import tensor as T
from autograd import checkpoint
from nn import functional as F


def _cuda_ok() -> bool:
    try:
        return T.cuda.is_available()
    except Exception:  # noqa: BLE001 - a backend that fails to load is unavailable
        return False


pytestmark = pytest.mark.skipif(
    not _cuda_ok(), reason="no CUDA device (tensor.cuda.is_available() is False); "
    "set STRIDEX_CUDA_EMULATOR=1 to run these on the CPU emulator")

RTOL, ATOL = 1e-12, 1e-12
TRAIN_RTOL, TRAIN_ATOL = 1e-9, 1e-11


@pytest.fixture(autouse=True)
def _default_device_cpu():
    """These tests are about explicit devices: the default device must be (and stay) the CPU."""
    T.set_default_device("cpu")
    yield
    assert T.get_default_device().type == "cpu"


def _np(t):
    if isinstance(t, T.Tensor):
        return t.detach().numpy()
    return np.asarray(t)


def _compare(build, rtol=RTOL, atol=ATOL):
    """build(device) -> list of results; the cuda ones must live on cuda and match the cpu ones."""
    ref, got = build("cpu"), build("cuda")
    assert len(ref) == len(got)
    for i, (r, g) in enumerate(zip(ref, got)):
        if r is None or g is None:
            assert r is None and g is None, f"result {i}: one side is None"
            continue
        if isinstance(g, T.Tensor):
            assert g.device.type == "cuda", f"result {i} is on {g.device}"
            assert r.device.type == "cpu" and g.dtype is r.dtype and g.shape == r.shape, i
        np.testing.assert_allclose(_np(g), _np(r), rtol=rtol, atol=atol, err_msg=f"result {i}")
    return ref, got


def _x(shape, device, seed=0, requires_grad=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(a, dtype=T.float64, device=device, requires_grad=requires_grad)


def _idx(values, device):
    return T.tensor(values, dtype=T.int64, device=device)


# ---------------------------------------------------------------- derivative rules

def _setitem(x, v):
    z = x * 1.0
    z[:, 1] = v
    z[_idx([0, 0], z.device), _idx([2, 2], z.device)] = v[0]
    return (z * z).sum()


def _split_unbind(a):
    r = sum((p * p).sum() * (i + 1) for i, p in enumerate(T.split(a, [1, 3], axis=1)))
    return r + sum((u * (j + 1)).sum() for j, u in enumerate(T.unbind(a, 0)))


RULE_CASES = {
    "elementwise_broadcast": (lambda x, y: (x * y + T.exp(x) / (1 + y * y) - T.tanh(y) ** 2).sum(),
                              [(2, 3), (3,)]),
    "reductions": (lambda x: T.mean(x, axis=0).sum() + T.max(x) + T.prod(x, axis=1).sum()
                   + T.std(x) + T.var(x, axis=1).sum() + T.logsumexp(x, axis=1).sum()
                   + T.amax(x, axis=0).pow(2).sum(), [(3, 4)]),
    "prod_with_zero": (lambda x: T.prod(x * (T.abs(x) > 0.3), axis=1).sum(), [(3, 4)]),
    "matmul": (lambda a, b, v: (a @ b).sum() + (b.T @ v).sum() + T.tensordot(a, a, ((0,), (0,))).sum(),
               [(2, 3), (3, 4), (3,)]),
    "views": (lambda x: (x.T.reshape(-1)[1:5] * T.diagonal(x[:3, :3]).sum()).sum()
              + T.as_strided(x, (2, 2), (1, 4)).sum() + T.flip(x, 0)[0].pow(2).sum(), [(3, 4)]),
    "getitem": (lambda x: (x[_idx([0, 2, 0], x.device)] ** 2).sum() + x[1:, ::2].sum()
                + x[x > 0].pow(3).sum(), [(3, 4)]),
    "setitem": (_setitem, [(3, 4), (3,)]),
    "index_add": (lambda x, s: T.index_add(x, 0, _idx([0, 2], x.device), s).pow(2).sum(),
                  [(3, 4), (2, 4)]),
    "take": (lambda x: T.take_along_axis(x, _idx([[0], [2], [1]], x.device), 1).sum() * 2
             + T.take(x, _idx([1, 5, 1], x.device)).pow(2).sum(), [(3, 4)]),
    "concat_stack": (lambda a, b: (T.concatenate([a, b]) ** 2).sum() + T.stack([a, b]).prod(),
                     [(2, 3), (2, 3)]),
    "pad": (lambda a: T.pad(a, ((1, 0), (0, 2)), mode="reflect").pow(2).sum()
            + T.pad(a, 1).sum(), [(2, 3)]),
    "repeat_tile_roll": (lambda a, b: T.repeat(a, 2, axis=0).pow(2).sum()
                         + T.repeat(a, [1, 3], axis=0).pow(3).sum()
                         + (T.roll(a, 1, 0) * b).sum() + T.tile(a, (2, 1)).pow(3).sum(),
                         [(2, 3), (2, 3)]),
    "split_unbind": (_split_unbind, [(2, 4)]),
    "where": (lambda x: T.where(x > 0, x, x * x).sum(), [(3, 4)]),
    "cumsum_cumprod": (lambda x: (T.cumsum(x, axis=1) * x).sum() + T.cumprod(x, axis=0).sum(),
                       [(3, 4)]),
}


@pytest.mark.parametrize("case", sorted(RULE_CASES))
def test_rule_families_backward(case):
    f, shapes = RULE_CASES[case]

    def build(dev):
        xs = [_x(s, dev, seed=i) for i, s in enumerate(shapes)]
        y = f(*xs)
        y.backward()  # no argument: the seed is made on y's device
        return [y] + [x.grad for x in xs]
    _compare(build)


@pytest.mark.parametrize("case", ["elementwise_broadcast", "matmul", "getitem", "setitem",
                                  "index_add", "concat_stack", "pad", "where", "cumsum_cumprod"])
def test_rule_families_jvp(case):
    f, shapes = RULE_CASES[case]

    def build(dev):
        xs = tuple(_x(s, dev, seed=i, requires_grad=False) for i, s in enumerate(shapes))
        vs = tuple(_x(s, dev, seed=10 + i, requires_grad=False) for i, s in enumerate(shapes))
        out, tan = A.jvp(f, xs, vs)
        return [out, tan]
    _compare(build)


def _partial_tangents(x, c):
    """Ops mixing x (with a tangent) and a constant c (without one): the rules fill the
    missing tangents with zeros, which must be made on the device."""
    z = c * 1.0
    z[1] = x[0]
    w = c * 1.0
    w[0, 1:] = 0.0
    return [T.where(c > 0, x, c), T.where(c > 0, c, x), T.concatenate([x, c]), T.stack([c, x]),
            z, T.index_add(c, 0, _idx([2, 0], c.device), x[:2]), T.round(x) + x,
            T.clip(x, -0.5, 0.5), w * x]


def test_jvp_with_constant_operands():
    def build(dev):
        x = _x((3, 4), dev, requires_grad=False)
        c = _x((3, 4), dev, seed=1, requires_grad=False)
        v = _x((3, 4), dev, seed=2, requires_grad=False)
        out, tans = A.jvp(lambda x: tuple(_partial_tangents(x, c)), x, v)
        return list(out) + list(tans)
    _compare(build)


# ---------------------------------------------------------------- engine and transforms

def test_backward_seeds_on_the_output_device():
    x = _x((3,), "cuda")
    y = (x * x).sum()
    y.backward()
    assert x.grad.device.type == "cuda"
    np.testing.assert_allclose(_np(x.grad), 2 * _np(x))
    x.grad = None
    (x * x).sum().backward(2.0)  # a Python number: made on the output's device
    np.testing.assert_allclose(_np(x.grad), 4 * _np(x))
    with pytest.raises(ValueError, match="gradient on cpu"):
        (x * 3).backward(T.ones(3, dtype=T.float64))


def test_grad_create_graph_second_derivative():
    def build(dev):
        x = _x((3,), dev)
        y = (x ** 3).sum() * T.sin(x).sum()
        (g,) = A.grad(y, [x], create_graph=True)
        (h,) = A.grad((g * g).sum(), [x])
        return [g, h]
    _compare(build)


def test_jvp_vjp_jacobian_hessian_hvp():
    def f(x):
        return (x ** 3).sum() * x[0]

    def build(dev):
        x = _x((3,), dev, requires_grad=False)
        v = _x((3,), dev, seed=1, requires_grad=False)
        out = [*A.jvp(lambda x: T.sin(x) * x.sum(), x, v),
               *A.vjp(lambda x: T.sin(x) * x.sum(), x, v),
               A.jacobian(lambda x: T.sin(x) * x[1], x),
               A.jacobian(lambda x: T.sin(x) * x[1], x, strategy="forward-mode"),
               A.hessian(f, x), A.hessian(f, x, strategy="forward-mode"),
               A.hvp(f, x, v)[1], A.hvp(f, x, v, strategy="forward-over-reverse")[1]]
        return [t if isinstance(t, T.Tensor) else t[0] for t in out]
    _compare(build)


def test_gradcheck_on_cuda_inputs():
    x = _x((3,), "cuda")
    w = _x((3,), "cuda", seed=1)
    assert A.gradcheck(lambda x, w: T.sin(x) * w + x * x, (x, w))
    assert A.gradgradcheck(lambda x, w: T.sin(x) * w + x * x, (x, w))


def test_checkpoint_with_dropout_bitwise_on_cuda():
    def run(dev, use_checkpoint):
        x, w = _x((4, 5), dev), _x((5, 5), dev, seed=1)
        T.random.seed(3)

        def f(x):
            return F.dropout(T.tanh(x @ w), 0.5) @ w
        y = checkpoint(f, x) if use_checkpoint else f(x)
        y.sum().backward()
        return [y, x.grad, w.grad]
    plain, ck = run("cuda", False), run("cuda", True)
    for a, b in zip(plain, ck):
        assert a.device.type == "cuda"
        np.testing.assert_array_equal(_np(a), _np(b))
    _compare(lambda dev: run(dev, True))  # the same mask as on the CPU (one Philox stream)


# ---------------------------------------------------------------- nn

def test_init_functions_on_cuda_parameters():
    def build(dev):
        w = T.empty((4, 3), dtype=T.float64, device=dev)
        out = []
        T.random.seed(1)
        for fn in (nn.init.uniform_, nn.init.normal_, nn.init.xavier_uniform_,
                   nn.init.xavier_normal_, nn.init.kaiming_uniform_, nn.init.kaiming_normal_,
                   nn.init.eye_, nn.init.ones_, nn.init.zeros_):
            fn(w)
            out.append(w.copy())
        return out
    _compare(build, rtol=0, atol=0)


def test_layers_built_on_cuda_match_cpu_init():
    def build(dev):
        T.random.seed(4)
        m = nn.Sequential(nn.Linear(3, 4, dtype=T.float64, device=dev),
                          nn.Conv1d(4, 2, 3, dtype=T.float64, device=dev),
                          nn.Embedding(5, 2, dtype=T.float64, device=dev, padding_idx=0))
        return list(m.parameters())
    _compare(build, rtol=0, atol=0)


def test_module_to_cuda_moves_parameters_buffers_and_grads():
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(T.float64)
    w = m[0].weight
    m[0].weight.grad = T.ones((2, 3), dtype=T.float64)
    m.to("cuda")
    assert m[0].weight is w  # identity kept (optimizers hold references)
    for t in list(m.parameters()) + list(m.buffers()):
        assert t.device.type == "cuda"
    assert w.grad.device.type == "cuda"
    assert m[1].num_batches_tracked.dtype is T.int64
    sd = m.state_dict()
    assert all(v.device.type == "cuda" for v in sd.values())
    # a CPU state dict loads into a CUDA model (and back)
    cpu = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(T.float64)
    m.load_state_dict(cpu.state_dict())
    for k, v in m.state_dict().items():
        assert v.device.type == "cuda"
        np.testing.assert_array_equal(_np(v), _np(cpu.state_dict()[k]))
    cpu.load_state_dict(m.state_dict())
    m.cpu()
    assert all(t.device.type == "cpu" for t in m.parameters())


def test_dropout_mask_matches_cpu():
    def build(dev):
        T.random.seed(7)
        x = _x((6, 5), dev)
        y = nn.Dropout(0.4)(x)
        y.sum().backward()
        return [y, x.grad, nn.Dropout(0.4).eval()(x)]
    _compare(build)


def test_batchnorm_running_stats_on_cuda():
    def build(dev):
        bn = nn.BatchNorm2d(3, momentum=None, dtype=T.float64, device=dev)
        out = []
        for s in range(3):
            x = _x((2, 3, 2, 2), dev, seed=s)
            y = bn(x)
            (y * y * _x((2, 3, 2, 2), dev, seed=9, requires_grad=False)).sum().backward()
            out += [y, x.grad, bn.weight.grad]
        bn.eval()
        out += [bn(_x((1, 3, 2, 2), dev, seed=5)), bn.running_mean, bn.running_var,
                bn.num_batches_tracked]
        return out
    _compare(build)


def _mlp(dev):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 3))


def _cnn(dev):
    # no conv bias before BatchNorm: its gradient is zero up to rounding, which Adam would
    # magnify into full-size steps in directions that differ between devices
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, bias=False), nn.BatchNorm2d(3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Dropout(0.2), nn.Flatten(), nn.Linear(12, 3))


@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("arch", ["mlp", "cnn"])
def test_train_three_steps(arch, opt):
    make = _mlp if arch == "mlp" else _cnn
    T.random.seed(0)
    ref_model = make("cpu").to(T.float64)
    init = {k: v.copy() for k, v in ref_model.state_dict().items()}
    shape = (5, 4) if arch == "mlp" else (2, 2, 4, 4)
    target = [0, 2, 1, 1, 0] if arch == "mlp" else [0, 2]

    def build(dev):
        model = make(dev).to(T.float64)
        model.to(dev)
        model.load_state_dict(init)  # a CPU state dict into a CUDA model: same init
        x = _x(shape, "cpu", requires_grad=False).to(dev)
        t = T.tensor(target).to(dev)
        params = list(model.parameters())
        o = (nn.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3) if opt == "sgd"
             else nn.optim.Adam(params, lr=0.01))
        loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
        T.random.seed(5)
        out = []
        for _ in range(3):
            o.zero_grad()
            loss = loss_fn(model(x), t)
            loss.backward()
            o.step()
            out.append(loss)
        out += [p.grad for p in params]
        model.eval()
        out.append(model(x))
        return out + params + list(model.buffers())
    _compare(build, TRAIN_RTOL, TRAIN_ATOL)


def test_layernorm_embedding_attention():
    def build(dev):
        T.random.seed(0)
        ln = nn.LayerNorm(4, dtype=T.float64, device=dev)
        emb = nn.Embedding(6, 4, dtype=T.float64, device=dev, padding_idx=1)
        mha = nn.MultiheadAttention(4, 2, dtype=T.float64, device=dev, add_zero_attn=True)
        idx = _idx([[1, 2, 5], [0, 2, 3]], dev)   # (L=2, N=3)
        h = ln(emb(idx))
        o, wts = mha(h, h, h)
        causal = T.triu(T.ones((2, 2), dtype=T.bool_, device=dev), 1)
        o2, _ = mha(h, h, h, attn_mask=causal, need_weights=False)
        o3, _ = mha(h, h, h, is_causal=True, attn_mask=causal,
                    key_padding_mask=T.tensor([[False, True]] * 3, device=dev))
        (o.sum() + (o2 * o2).sum() + wts.sum() + o3.sum()).backward()
        return [o, o2, o3, wts, emb.weight.grad, ln.weight.grad, ln.bias.grad,
                mha.in_proj_weight.grad, mha.out_proj.weight.grad]
    _compare(build)


def test_pooling_one_hot_clip_grad():
    def build(dev):
        x = _x((1, 2, 5, 5), dev)
        y, i = F.max_pool2d(x, 2, return_indices=True)
        z = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)
        a = F.adaptive_avg_pool2d(x, 2)
        (y.sum() + (z * z).sum() + (a ** 3).sum()).backward()
        lin = nn.Linear(3, 2, dtype=T.float64, device=dev)
        lin.weight.grad = T.ones((2, 3), dtype=T.float64, device=dev)
        n2 = nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
        ninf = nn.utils.clip_grad_norm_(lin.parameters(), 0.5, norm_type=float("inf"))
        return [y, i, z, a, x.grad, F.one_hot(_idx([0, 2], dev), 3), n2, ninf, lin.weight.grad]
    _compare(build)


def test_dataloader_batches_moved_with_to():
    def build(dev):
        ds = nn.data.TensorDataset(T.arange(10.0).reshape(5, 2), T.arange(5))
        dl = nn.data.DataLoader(ds, batch_size=2, shuffle=True, generator=T.random.Generator(0))
        out = []
        for xb, yb in dl:
            xb, yb = xb.to(dev), yb.to(dev)
            out += [xb * 2, yb + 1]
        return out
    _compare(build, rtol=0, atol=0)


def test_checkpoint_frees_cuda_activations():
    n, depth = 1 << 12, 12

    def fn(x):
        for _ in range(depth):
            x = T.sin(x) * 1.5
        return x

    def held(ck):
        x = T.ones(n, dtype=T.float64, device="cuda", requires_grad=True)
        base = T.cuda.memory_allocated()
        y = checkpoint(fn, x) if ck else fn(x)
        kept = T.cuda.memory_allocated() - base
        y.sum().backward()
        del y
        return kept, T.cuda.memory_allocated() - base, x.grad

    (plain, _, g_plain), (kept, left, g_ck) = held(False), held(True)
    assert plain >= depth * n * 8
    assert kept <= 2 * n * 8 and left <= n * 8 + 4096
    np.testing.assert_array_equal(_np(g_plain), _np(g_ck))


def test_nn_functional_forward_mode():
    """jvp through the fused nn ops (their forward-mode rules build tensors too)."""
    def build(dev):
        x = _x((4, 5), dev, requires_grad=False)
        v = _x((4, 5), dev, seed=1, requires_grad=False)
        img = _x((2, 2, 4, 4), dev, seed=2, requires_grad=False)
        vimg = _x((2, 2, 4, 4), dev, seed=3, requires_grad=False)
        w = _x((3, 2, 3, 3), dev, seed=4, requires_grad=False)
        t = _idx([0, 4, 1, 2], dev)

        def f(x):
            return (F.softmax(x, dim=1), F.log_softmax(x, dim=0), F.layer_norm(x, (5,)),
                    F.cross_entropy(x, t), F.cross_entropy(x, t, label_smoothing=0.2),
                    F.nll_loss(F.log_softmax(x, dim=1), t), F.mse_loss(x, x * x),
                    F.gelu(x), F.relu(x), F.silu(x) if hasattr(F, "silu") else F.sigmoid(x))

        def g(im):
            return (F.conv2d(im, w, padding=1), F.max_pool2d(im, 2), F.avg_pool2d(im, 2),
                    F.batch_norm(im, None, None, training=True), F.group_norm(im, 1))
        return [*A.jvp(f, x, v)[1], *A.jvp(g, img, vimg)[1]]
    _compare(build)
