"""nn.module (Module, Parameter, containers), nn.init, nn.utils (gradient clipping) and
nn.serialization (save/load).

Modules are checked for what a user sees: names, traversal order, state dicts, errors that
list every bad key, hooks and repr. Initialisers are checked against the formulas of
torch.nn.init (bounds and variances by hand; torch's own numbers where it is installed),
clipping against NumPy, and checkpoints by bit-exact round trips, bfloat16 included.
"""
from __future__ import annotations

import copy
import gc
import math
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from helpers import assert_close

import autograd
import tensor as T
from nn import init
from nn.containers import ModuleDict, ModuleList, Sequential
from nn.module import _PARAMS, Module, Parameter, StateDictError, is_parameter
from nn.serialization import CheckpointError, load, save
from nn.utils import clip_grad_norm_, clip_grad_value_, get_total_norm

F32 = T.float32


class Lin(Module):
    """A small affine layer (the project's Linear lives elsewhere; these tests need none)."""

    def __init__(self, n_in: int, n_out: int, bias: bool = True):
        super().__init__()
        self.n_in, self.n_out = n_in, n_out
        self.weight = Parameter(T.arange(n_out * n_in, dtype=F32).reshape(n_out, n_in) / 10)
        self.register_parameter("bias", Parameter(T.zeros(n_out, dtype=F32)) if bias else None)

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return f"in={self.n_in}, out={self.n_out}, bias={self.bias is not None}"


class Norm(Module):
    def __init__(self, n: int):
        super().__init__()
        self.scale = Parameter(T.ones(n, dtype=F32))
        self.register_buffer("mean", T.zeros(n, dtype=F32))
        self.register_buffer("count", T.zeros((), dtype=T.int64))
        self.register_buffer("scratch", T.zeros(n, dtype=F32), persistent=False)

    def forward(self, x):
        return (x - self.mean) * self.scale


class Net(Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Lin(3, 4)
        self.norm = Norm(4)
        self.head = Sequential(Lin(4, 2), Lin(2, 1, bias=False))
        self.note = "not a tensor"

    def forward(self, x):
        return self.head(self.norm(self.fc1(x)))


def vals(t):
    return np.asarray(t.detach().astype(T.float64).numpy()).copy()


# ------------------------------------------------------------------ Parameter

def test_parameter_is_a_plain_leaf_tensor_sharing_memory():
    data = T.ones(3, dtype=F32)
    p = Parameter(data)
    assert isinstance(p, Parameter) and isinstance(p, T.Tensor) and type(p) is T.Tensor
    assert p.requires_grad and p.is_leaf and T.shares_memory(p, data)
    assert not isinstance(data, Parameter) and not isinstance(p * 2, Parameter)
    assert not Parameter(T.ones(2), requires_grad=False).requires_grad
    (p * p).sum().backward()  # autograd sees the parameter like any tensor
    assert p.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="floating"):
        Parameter(T.arange(3))
    with pytest.raises(TypeError, match="Tensor"):
        Parameter([1.0, 2.0])


def test_parameter_registry_forgets_dead_tensors():
    gc.collect()  # parameters of earlier tests may still sit in reference cycles
    before = len(_PARAMS)
    ps = [Parameter(T.zeros(1)) for _ in range(50)]
    assert len(_PARAMS) == before + 50
    del ps
    gc.collect()
    assert len(_PARAMS) == before
    assert not is_parameter(T.zeros(1)) and not is_parameter("x")


# ------------------------------------------------------------------ registration, traversal

def test_registration_and_names():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "fc1.weight", "fc1.bias", "norm.scale", "head.0.weight", "head.0.bias", "head.1.weight"]
    assert [n for n, _ in net.named_buffers()] == ["norm.mean", "norm.count", "norm.scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "norm", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "norm", "head", "head.0", "head.1"]
    assert [n for n, _ in net.named_parameters(prefix="m", recurse=False)] == []
    assert [n for n, _ in net.fc1.named_parameters(prefix="m")] == ["m.weight", "m.bias"]
    assert len(list(net.parameters())) == 6 and len(list(net.modules())) == 6
    assert net.head[1].bias is None and "bias" in net.head[1]._parameters
    assert net.note == "not a tensor" and net.get_parameter("head.0.bias") is net.head[0].bias
    assert net.get_submodule("head.1") is net.head[1]
    with pytest.raises(AttributeError, match="no submodule 'nope'"):
        net.get_submodule("head.nope")
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        _ = net.missing


def test_shared_parameters_and_modules_come_once():
    a = Lin(2, 2)
    seq = Sequential(a, a)
    assert len(list(seq.parameters())) == 2 and len(list(seq.modules())) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]  # as PyTorch
    tied = Module()
    tied.enc, tied.dec = Lin(2, 2), Lin(2, 2)
    tied.dec.weight = tied.enc.weight
    assert [n for n, _ in tied.named_parameters()] == ["enc.weight", "enc.bias", "dec.bias"]


def test_setattr_rules_and_errors():
    m = Module()
    m.w = Parameter(T.zeros(2))
    m.w = None  # a declared empty slot
    assert "w" in m._parameters and list(m.parameters()) == []
    with pytest.raises(TypeError, match="parameter 'w'"):
        m.w = T.zeros(2)  # a plain tensor is not a parameter
    m.register_buffer("b", T.zeros(1))
    m.b = T.ones(1)  # replacing a buffer keeps it a buffer
    assert list(m.state_dict()) == ["b"] and m.b.tolist() == [1.0]
    m.b = Lin(1, 1)  # a module takes the name over
    assert "b" not in m._buffers and m.b is m._modules["b"]
    del m.b
    assert not hasattr(m, "b")
    with pytest.raises(KeyError, match="'a.b'"):
        m.register_buffer("a.b", T.zeros(1))
    with pytest.raises(TypeError, match="buffer 'c'"):
        m.register_buffer("c", [1.0])
    m.w = Parameter(T.zeros(2))
    with pytest.raises(KeyError, match="'w' already exists"):   # it silently dropped the parameter
        m.register_buffer("w", T.zeros(2))
    assert list(m.parameters()) == [m.w]

    class Forgot(Module):
        def __init__(self):
            self.w = Parameter(T.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Forgot()
    with pytest.raises(NotImplementedError, match="forward"):
        Module()(1)


def test_train_eval_apply_and_requires_grad():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.head.train()
    assert net.head[0].training and not net.fc1.training and not net.training
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Lin", "Norm", "Lin", "Lin", "Sequential", "Net"]  # children first
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(TypeError, match="bool"):
        net.train("no")


def test_forward_backward_and_zero_grad():
    net = Lin(3, 2)
    x = T.tensor([[1.0, 2.0, 3.0]], dtype=F32)
    net(x).sum().backward()
    assert_close(net.weight.grad, np.array([[1, 2, 3], [1, 2, 3]], np.float32))
    assert_close(net.bias.grad, np.ones(2, np.float32))
    net.zero_grad(set_to_none=False)
    assert net.weight.grad.tolist() == [[0.0] * 3] * 2
    net(x).sum().backward()  # accumulates into the zeroed grads
    assert net.bias.grad.tolist() == [1.0, 1.0]
    net.zero_grad()
    assert net.weight.grad is None and net.bias.grad is None


def test_to_dtype_in_place_keeps_identity():
    net = Net()
    w = net.fc1.weight
    net(T.ones((1, 3), dtype=F32)).sum().backward()
    assert net.to(T.float64) is net
    assert net.fc1.weight is w and is_parameter(w) and w.requires_grad
    assert w.dtype is T.float64 and w.grad.dtype is T.float64
    assert net.norm.mean.dtype is T.float64 and net.norm.count.dtype is T.int64  # ints stay
    assert_close(w, np.arange(12).reshape(4, 3) / 10, rtol=1e-6)
    net.half()
    assert net.fc1.bias.dtype is T.float16
    net.to("cpu", dtype=T.float32)
    assert net.head[0].weight.dtype is F32
    net(T.ones((1, 3), dtype=F32)).sum().backward()  # still trains after the casts
    with pytest.raises(TypeError, match="floating"):
        net.to(T.int32)


def test_deepcopy_copies_parameters():
    net = Net()
    net(T.ones((1, 3), dtype=F32)).sum().backward()
    twin = copy.deepcopy(net)
    p, q = net.fc1.weight, twin.fc1.weight
    assert q is not p and is_parameter(q) and q.requires_grad and not T.shares_memory(p, q)
    assert vals(q).tolist() == vals(p).tolist() and vals(q.grad).tolist() == vals(p.grad).tolist()
    assert twin.note == net.note and list(twin.state_dict()) == list(net.state_dict())
    with autograd.no_grad():
        q.fill_(7.0)
    assert float(p[0, 0]) == 0.0


# ------------------------------------------------------------------ state dicts

def test_state_dict_contents_and_round_trip():
    a, b = Net(), Net()
    sd = a.state_dict()
    assert list(sd) == ["fc1.weight", "fc1.bias", "norm.scale", "norm.mean", "norm.count",
                        "head.0.weight", "head.0.bias", "head.1.weight"]  # no non-persistent
    assert all(not t.requires_grad and t.grad_fn is None for t in sd.values())
    assert T.shares_memory(sd["fc1.weight"], a.fc1.weight)  # detached, not copied
    with autograd.no_grad():
        for i, p in enumerate(a.parameters()):
            p.fill_(i + 0.5)
        a.norm.count.fill_(7)
    res = b.load_state_dict(a.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    for k, v in a.state_dict().items():
        assert vals(b.state_dict()[k]).tolist() == vals(v).tolist(), k
    assert int(b.norm.count) == 7 and b.fc1.weight.requires_grad
    sub = b.head.state_dict()  # a nested module on its own
    assert list(sub) == ["0.weight", "0.bias", "1.weight"]


def test_load_state_dict_errors_list_every_key():
    net = Net()
    sd = net.state_dict()
    before = vals(net.fc1.bias)
    sd = OrderedDict((k, v.copy()) for k, v in sd.items() if k != "norm.scale")
    sd["extra.weight"] = T.zeros(1)
    sd["fc1.bias"] = T.ones(4) * 9
    sd["head.0.weight"] = T.zeros((3, 3))
    with pytest.raises(StateDictError) as e:
        net.load_state_dict(sd)
    msg = str(e.value)
    assert "Missing key(s) in state_dict: 'norm.scale'" in msg
    assert "Unexpected key(s) in state_dict: 'extra.weight'" in msg
    assert "size mismatch for head.0.weight" in msg and "(3, 3)" in msg and "(2, 4)" in msg
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, ValueError)
    assert vals(net.fc1.bias).tolist() == before.tolist()  # nothing copied on failure
    with pytest.raises(StateDictError, match="size mismatch"):  # shapes matter even non-strict
        net.load_state_dict(sd, strict=False)
    del sd["head.0.weight"]
    res = net.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["norm.scale", "head.0.weight"]
    assert res.unexpected_keys == ["extra.weight"]
    assert net.fc1.bias.dtype is F32 and net.fc1.bias.tolist() == [9.0] * 4  # cast on load
    with pytest.raises(TypeError, match="'fc1.bias' is a list"):
        net.load_state_dict({**sd, "fc1.bias": [1.0]}, strict=False)


# ------------------------------------------------------------------ hooks, repr, containers

def test_forward_hooks_and_handles():
    net = Lin(2, 2)
    calls = []
    h1 = net.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = net.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 100)
    y = net(T.ones((1, 2), dtype=F32))
    assert calls == [(1, 2)] and np.allclose(y.tolist(), [[100.2, 101.0]])
    h1.remove()
    h2.remove()
    h2.remove()  # removing twice is harmless
    assert np.allclose(net(T.ones((1, 2), dtype=F32)).tolist(), [[0.1, 0.5]])
    with net.register_forward_hook(lambda m, a, out: out * 0):
        assert net(T.ones((1, 2), dtype=F32)).tolist() == [[0.0, 0.0]]
    assert not net._forward_hooks


def test_repr_snapshot():
    assert repr(Net()) == (
        "Net(\n"
        "  (fc1): Lin(in=3, out=4, bias=True)\n"
        "  (norm): Norm()\n"
        "  (head): Sequential(\n"
        "    (0): Lin(in=4, out=2, bias=True)\n"
        "    (1): Lin(in=2, out=1, bias=False)\n"
        "  )\n"
        ")")
    assert repr(ModuleDict({"a": Norm(1)})) == "ModuleDict(\n  (a): Norm()\n)"
    assert repr(ModuleList()) == "ModuleList()"


def test_sequential():
    a, b, c = Lin(2, 3), Lin(3, 3), Lin(3, 1)
    s = Sequential(a, b, c)
    x = T.ones((4, 2), dtype=F32)
    assert_close(s(x), vals(c(b(a(x)))).astype(np.float32))
    assert len(s) == 3 and list(s) == [a, b, c] and s[-1] is c and s[0] is a
    assert isinstance(s[1:], Sequential) and list(s[1:]) == [b, c]
    with pytest.raises(IndexError, match="index 3 is out of range for length 3"):
        s[3]
    named = Sequential(OrderedDict([("enc", a), ("dec", b)]))
    assert [n for n, _ in named.named_children()] == ["enc", "dec"] and named.enc is a
    s.append(Lin(1, 1))
    s[0] = Lin(2, 3)
    del s[1]
    assert [n for n, _ in s.named_children()] == ["0", "1", "2"] and len(s) == 3
    assert s[1] is c and s[0] is not a
    assert len(list(s.parameters())) == 6


def test_module_list_and_dict():
    ml = ModuleList([Lin(1, 1), Lin(1, 2)])
    ml.append(Lin(2, 2))
    ml += [Norm(2)]
    ml.insert(0, Norm(1))
    assert [type(m).__name__ for m in ml] == ["Norm", "Lin", "Lin", "Lin", "Norm"]
    assert [n for n, _ in ml.named_children()] == ["0", "1", "2", "3", "4"]
    del ml[1]
    assert len(ml) == 4 and ml[-1].scale.shape == (2,) and len(ml[1:3]) == 2
    assert len(list(ml.parameters())) == 1 + 2 + 2 + 1
    holder = Module()
    holder.blocks = ml
    assert "blocks.3.scale" in holder.state_dict()

    md = ModuleDict({"a": Lin(1, 1)})
    md["b"] = Norm(3)
    md.update([("c", Lin(3, 3, bias=False))])
    assert list(md) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias", "b.scale", "c.weight"]
    assert isinstance(md.pop("a"), Lin) and list(md.keys()) == ["b", "c"]
    del md["b"]
    assert [k for k, _ in md.items()] == ["c"]


# ------------------------------------------------------------------ init

GAINS = {"linear": 1.0, "conv2d": 1.0, "sigmoid": 1.0, "tanh": 5 / 3, "relu": math.sqrt(2),
         "selu": 0.75}


def test_calculate_gain_and_fans():
    for k, v in GAINS.items():
        assert init.calculate_gain(k) == pytest.approx(v, rel=1e-15)
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="unsupported nonlinearity 'gelu'"):
        init.calculate_gain("gelu")
    assert init._calculate_fan_in_and_fan_out(T.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(T.empty(8, 4, 3, 2)) == (24, 48)
    with pytest.raises(ValueError, match=r"at least 2 dimensions, got shape \(5,\)"):
        init._calculate_fan_in_and_fan_out(T.empty(5))


def test_gains_and_fans_match_torch():
    torch = pytest.importorskip("torch")
    for k in [*GAINS, "leaky_relu"]:
        assert init.calculate_gain(k) == pytest.approx(torch.nn.init.calculate_gain(k), rel=1e-12)
    assert init.calculate_gain("leaky_relu", 0.3) == pytest.approx(
        torch.nn.init.calculate_gain("leaky_relu", 0.3))
    for shape in [(5, 3), (8, 4, 3, 2), (6, 2, 5)]:
        assert init._calculate_fan_in_and_fan_out(T.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def _uniform_check(t, bound):
    a = vals(t).ravel()
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.99 * bound
    assert abs(a.mean()) < 4 * bound / math.sqrt(3 * a.size)
    assert a.var() == pytest.approx(bound ** 2 / 3, rel=0.03)


def _normal_check(t, std):
    a = vals(t).ravel()
    assert abs(a.mean()) < 4 * std / math.sqrt(a.size)
    assert a.std() == pytest.approx(std, rel=0.03)


def test_init_distributions_follow_torch_formulas():
    w = T.empty(200, 100, dtype=F32)  # fan_in 100, fan_out 200
    _uniform_check(init.uniform_(w, -2.0, 2.0), 2.0)
    assert vals(w).min() >= -2.0
    _normal_check(init.normal_(w, 0.0, 0.5), 0.5)
    _uniform_check(init.xavier_uniform_(w, gain=2.0), 2.0 * math.sqrt(6 / 300))
    _normal_check(init.xavier_normal_(w), math.sqrt(2 / 300))
    _uniform_check(init.kaiming_uniform_(w, a=math.sqrt(5)), 1 / math.sqrt(100))  # nn.Linear's
    _uniform_check(init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"),
                   math.sqrt(2) * math.sqrt(3 / 200))
    _normal_check(init.kaiming_normal_(w, nonlinearity="relu"), math.sqrt(2 / 100))
    _normal_check(init.kaiming_normal_(w, a=0.2, mode="fan_out"),
                  math.sqrt(2 / 1.04) / math.sqrt(200))
    conv = T.empty(64, 16, 3, 3, dtype=T.float64)  # fan_in 144
    _uniform_check(init.kaiming_uniform_(conv, nonlinearity="relu"), math.sqrt(6 / 144))
    assert conv.dtype is T.float64
    with pytest.raises(ValueError, match="'fan_avg'"):
        init.kaiming_uniform_(w, mode="fan_avg")
    c = T.empty(300, 300, dtype=T.complex128)   # PyTorch's: both parts drawn independently
    z = init.uniform_(c, -1.0, 3.0).numpy()
    assert min(z.real.min(), z.imag.min()) >= -1.0 and max(z.real.max(), z.imag.max()) < 3.0
    assert abs(np.corrcoef(z.real.ravel(), z.imag.ravel())[0, 1]) < 0.02
    z = init.normal_(c, 1.0, 2.0).numpy()        # each part N(mean, std^2 / 2)
    for part in (z.real, z.imag):
        assert abs(part.mean() - 1.0) < 0.02 and abs(part.std() - math.sqrt(2.0)) < 0.02


def test_init_in_place_reproducible_and_checked():
    p = Parameter(T.empty(30, 20, dtype=F32))
    T.manual_seed(5)
    r = init.kaiming_uniform_(p)
    assert r is p and p.requires_grad and p.grad_fn is None and p.dtype is F32
    first = vals(p)
    T.manual_seed(5)
    init.kaiming_uniform_(p)
    assert np.array_equal(vals(p), first)
    init.kaiming_uniform_(p)
    assert not np.array_equal(vals(p), first)  # the stream moved on
    g1, g2 = T.random.Generator(9), T.random.Generator(9)
    assert np.array_equal(vals(init.normal_(T.empty(7), generator=g1)),
                          vals(init.normal_(T.empty(7), generator=g2)))
    assert init.constant_(p, 0.25).tolist()[0][:2] == [0.25, 0.25]
    assert vals(init.zeros_(p)).sum() == 0 and vals(init.ones_(p)).sum() == 600
    assert vals(init.eye_(T.empty(2, 3))).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert init.kaiming_normal_(T.empty(0, 5)).shape == (0, 5)  # no-op
    with pytest.raises(TypeError, match="floating"):
        init.uniform_(T.zeros(3, dtype=T.int32))


# ------------------------------------------------------------------ gradient clipping

def _params_with_grads(rng, shapes, dtype=F32):
    ps = []
    for s in shapes:
        p = Parameter(T.zeros(s, dtype=dtype))
        p.grad = T.asarray(rng.normal(size=s)).astype(dtype)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_numpy(norm_type):
    rng = np.random.default_rng(0)
    ps = _params_with_grads(rng, [(3, 4), (5,), (2, 2, 2)])
    gs = [vals(p.grad) for p in ps]
    flat = np.concatenate([g.ravel() for g in gs])
    want = np.abs(flat).max() if norm_type == math.inf else \
        (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    total = clip_grad_norm_(ps + [Parameter(T.zeros(2))], max_norm=1.0, norm_type=norm_type)
    assert isinstance(total, T.Tensor) and total.shape == () and total.dtype is F32
    assert float(total) == pytest.approx(want, rel=1e-5)
    scale = min(1.0, 1.0 / (want + 1e-6))
    for p, g in zip(ps, gs):
        assert_close(p.grad, (g * scale).astype(np.float32), rtol=1e-5, atol=1e-7)
    big = clip_grad_norm_(ps, max_norm=1e6, norm_type=norm_type)  # under the limit: unchanged
    assert float(big) == pytest.approx(1.0, rel=1e-4)
    assert_close(ps[0].grad, (gs[0] * scale).astype(np.float32), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_edge_cases_and_no_host_reads(monkeypatch):
    p = Parameter(T.zeros(2, dtype=T.float64))
    assert float(clip_grad_norm_([p], 1.0)) == 0.0  # no grads at all
    p.grad = T.tensor([6.0, 8.0])
    with monkeypatch.context() as mp:  # the whole clip runs without reading a value back
        for name in ("item", "tolist", "numpy", "__float__", "__bool__", "__array__"):
            mp.setattr(T.Tensor, name, lambda *a, **k: pytest.fail("host read"))
        total = clip_grad_norm_(p, max_norm=5.0)  # a single tensor is accepted too
    assert float(total) == 10.0 and total.dtype is T.float64
    assert_close(p.grad, np.array([6.0, 8.0]) * 5 / (10 + 1e-6))
    assert float(get_total_norm([T.tensor([3.0, 4.0], dtype=T.float16)])) == 5.0
    # complex gradients: the norm of the moduli, real (PyTorch's), and the clip scales them
    pc = Parameter(T.zeros(2, dtype=T.complex128))
    pc.grad = T.tensor([1 + 1j, 2 - 1j])
    for order, want in ((2.0, math.sqrt(7)), (1.0, math.sqrt(2) + math.sqrt(5)),
                        (math.inf, math.sqrt(5))):
        got = get_total_norm([pc.grad], order)
        assert got.dtype is T.float64 and float(got) == pytest.approx(want, rel=1e-15)
    assert float(clip_grad_norm_([pc], 1.0)) == pytest.approx(math.sqrt(7))
    assert_close(pc.grad, np.array([1 + 1j, 2 - 1j]) / (math.sqrt(7) + 1e-6))
    p.grad = T.tensor([math.inf, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="norm_type"):   # (-1, 0, -inf are norms, as torch's)
        clip_grad_norm_([p], 1.0, norm_type=math.nan)


def test_clip_grad_norm_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    ps = _params_with_grads(rng, [(4, 3), (7,)], dtype=T.float64)
    tp = [torch.zeros(p.shape, dtype=torch.float64, requires_grad=True) for p in ps]
    for t, p in zip(tp, ps):
        t.grad = torch.from_numpy(vals(p.grad))
    for nt in (2.0, math.inf):
        want = torch.nn.utils.clip_grad_norm_(tp, 0.5, norm_type=nt)
        got = clip_grad_norm_(ps, 0.5, norm_type=nt)
        assert float(got) == pytest.approx(float(want), rel=1e-12)
        for t, p in zip(tp, ps):
            assert_close(p.grad, t.grad.numpy(), rtol=1e-12)


def test_clip_grad_value():
    p = Parameter(T.zeros(4))
    p.grad = T.tensor([-3.0, -0.5, 0.25, 9.0])
    clip_grad_value_([p, Parameter(T.zeros(1))], 1.0)
    assert p.grad.tolist() == [-1.0, -0.5, 0.25, 1.0]
    with pytest.raises(ValueError, match="non-negative"):
        clip_grad_value_([p], -1)


# ------------------------------------------------------------------ save / load

def test_save_load_round_trip_every_dtype(tmp_path):
    sd = OrderedDict([
        ("w32", T.asarray(np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))),
        ("w64", T.arange(5.0)),
        ("bf", T.tensor([1.5, -2.25, 3e38, 1e-40], dtype=T.bfloat16)),
        ("half", T.tensor([0.1, 65504.0], dtype=T.float16)),
        ("idx", T.arange(6).reshape(2, 3)),
        ("mask", T.tensor([True, False])),
        ("scalar", T.tensor(3.0)),
        ("bf scalar", T.tensor(1.5, dtype=T.bfloat16)),   # came back of shape (1,)
        ("empty", T.zeros((0, 2), dtype=F32)),
        ("strided", T.arange(12.0).reshape(3, 4).T[::2]),
    ])
    path = tmp_path / "model.ckpt"  # any name: no '.npz' is appended
    save(sd, path)
    assert [p.name for p in tmp_path.iterdir()] == ["model.ckpt"]
    back = load(path)
    assert list(back) == list(sd)
    for k, v in sd.items():
        b = back[k]
        assert b.dtype is v.dtype and b.shape == v.shape, k
        assert vals(b).tobytes() == vals(v).tobytes(), k
    with np.load(path, allow_pickle=False) as raw:  # a plain npz: bfloat16 as its uint16 bits
        assert raw["bf"].dtype == np.uint16 and raw["bf"][0] == 0x3FC0
        assert "__tree__" in raw.files


def test_save_load_nested_optimizer_state_into_module(tmp_path):
    net = Net()
    state = {"model": net.state_dict(),
             "optim": {"state": {0: {"step": 3, "exp_avg": T.ones(2, dtype=T.bfloat16)}},
                       "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1],
                                         "name": None}]},
             "epoch": 4}
    save(state, tmp_path / "ckpt.npz", compress=True)
    with np.load(tmp_path / "ckpt.npz") as raw:
        assert "optim/state/0/exp_avg" in raw.files and "model/fc1.weight" in raw.files
    back = load(tmp_path / "ckpt.npz")
    assert back["epoch"] == 4 and back["optim"]["param_groups"] == [
        {"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1], "name": None}]
    assert list(back["optim"]["state"]) == [0] and back["optim"]["state"][0]["step"] == 3
    assert back["optim"]["state"][0]["exp_avg"].dtype is T.bfloat16
    other = Net()
    with autograd.no_grad():
        other.fc1.weight.fill_(0)
    other.load_state_dict(back["model"])
    assert vals(other.fc1.weight).tolist() == vals(net.fc1.weight).tolist()


def test_loaded_checkpoint_with_wrong_entries_is_refused(tmp_path):
    net = Net()
    sd = net.state_dict()
    partial = {k: v for k, v in sd.items() if k != "fc1.bias"}
    partial["fc1.weight"] = T.zeros((4, 4), dtype=F32)
    partial["old.layer"] = T.zeros(1)
    save(partial, tmp_path / "bad.npz")
    with pytest.raises(StateDictError) as e:
        net.load_state_dict(load(tmp_path / "bad.npz"))
    assert all(s in str(e.value) for s in ("'fc1.bias'", "'old.layer'", "fc1.weight"))


def test_damaged_files_raise_checkpoint_errors(tmp_path):
    good = tmp_path / "good.npz"
    save({"a": T.ones(3), "b": {"c": T.zeros(2)}}, good)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip file at all" * 10)
    with pytest.raises(CheckpointError, match="not a readable .npz"):
        load(junk)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[:200])
    with pytest.raises(CheckpointError):
        load(cut)
    missing = tmp_path / "missing.npz"  # the tree lists 'b/c' but the entry is gone
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(missing, "w") as zout:
        for item in zin.namelist():
            if item != "b/c.npy":
                zout.writestr(item, zin.read(item))
    with pytest.raises(CheckpointError, match="no entry 'b/c'"):
        load(missing)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nowhere.npz")
    plain = tmp_path / "plain.npz"  # an npz NumPy wrote loads as a flat dict
    np.savez(plain, x=np.arange(3.0))
    assert load(plain)["x"].tolist() == [0.0, 1.0, 2.0]


def test_save_rejects_what_it_cannot_store(tmp_path):
    with pytest.raises(TypeError, match="cannot store a set"):
        save({"a": {1, 2}}, tmp_path / "x.npz")
    with pytest.raises(ValueError, match="taken by another path"):
        save({"a/b": T.ones(1), "a": {"b": T.ones(1)}}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="expected a dict"):
        save([T.ones(1)], tmp_path / "x.npz")
    assert not list(tmp_path.iterdir())  # no partial files left behind


def test_load_state_dict_assign_puts_the_tensors_themselves():
    """assign=True (PyTorch's): the module's parameters and buffers become the given tensors
    (their dtype; parameters keep being parameters with the module's requires_grad)."""
    from nn.linear import Linear
    from nn.normalization import BatchNorm1d
    m = Linear(2, 3)
    sd = {k: T.ones(v.shape, dtype=T.float64) for k, v in m.state_dict().items()}
    m.load_state_dict(sd, assign=True)
    assert m.weight.dtype is T.float64 and m.weight.requires_grad
    assert T.shares_memory(m.weight, sd["weight"]) and m.weight.grad_fn is None
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m(T.ones((1, 2), dtype=T.float64)).tolist() == [[3.0, 3.0, 3.0]]
    b = BatchNorm1d(2)
    sd = b.state_dict()
    sd["running_mean"] = T.full((2,), 5.0)
    b.load_state_dict(sd, assign=True)
    assert b.running_mean is sd["running_mean"]
    with pytest.raises(ValueError, match="size mismatch for weight"):
        m.load_state_dict({**m.state_dict(), "weight": T.ones((1, 1))}, assign=True)
