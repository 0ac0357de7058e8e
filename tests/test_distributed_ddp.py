"""nn.parallel.DistributedDataParallel and nn.data.DistributedSampler.

The DDP checks run in one 2-rank launch (tests/helpers.run_ranks): each rank trains on half of
every batch and rank 0 computes the single-process full-batch reference in the same script, from
the same initial weights. The script prints `OK <name>` or `FAIL <name> <detail>` per check and
rank; the test asserts every expected check passed on both ranks.
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tensor as T
from autograd.engine import backward_running, queue_callback
from nn.data import DataLoader, DistributedSampler, TensorDataset
from tests.helpers import run_ranks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r'''
import copy, sys, warnings
import numpy as np
sys.path.insert(0, ROOT + "/benchmarks")
import tensor as T, tensor.distributed as dist, nn
from autograd.checkpoint import checkpoint
from nn import functional as F
from nn.data import DataLoader, DistributedSampler, TensorDataset
from nn.optim import SGD, Adam
from nn.parallel import DistributedDataParallel as DDP
from tiny_gpt import GPTConfig, TinyGPT

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
TOL = 1e-6


def check(name, ok, detail=""):
    print(f"{'OK' if ok else 'FAIL'} {name} rank{rank} {detail}\n", end="", flush=True)  # one write


def rel(a, b):
    """|a - b| / |b| (2-norms, per tensor): a half-batch sum differs from the full-batch one
    in float32 rounding (elementwise up to ~1e-6 of the largest entry after many ops)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def worst(ts, refs):
    return max(rel(a.numpy(), b.numpy()) for a, b in zip(ts, refs))


def same_on_all(ts):
    """Bitwise equal on every rank."""
    flat = np.concatenate([t.numpy().astype(np.float64).ravel() for t in ts])
    out = T.zeros((world * flat.size,), dtype=T.float64)
    dist.all_gather_into_tensor(out, T.asarray(flat))
    o = out.numpy().reshape(world, -1)
    return all(np.array_equal(o[0], o[r]) for r in range(world))


def grads(m):
    return [p.grad for p in m.parameters()]


def mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


# ---- the digits MLP: DistributedSampler + DataLoader(sampler=), several buckets, Adam
from sklearn.datasets import load_digits
X, Y = load_digits(return_X_y=True)
X, Y = (X[:320] / 16.0).astype(np.float32), Y[:320].astype(np.int64)
Xt, Yt = T.asarray(X), T.asarray(Y)
ds = TensorDataset(Xt, Yt)
T.manual_seed(100 + rank)                       # different weights: the wrap must broadcast
model = mlp()
ddp = DDP(model, bucket_cap_mb=0.001)
check("buckets", len(ddp._buckets) >= 3, len(ddp._buckets))
check("wrap_broadcast", same_on_all(list(model.parameters())))
check("module_attr", ddp.module is model and list(ddp.parameters()) == list(model.parameters())
      and sorted(ddp.state_dict()) == sorted("module." + k for k in model.state_dict()))
init = copy.deepcopy(model)
ref = copy.deepcopy(model)
sampler = DistributedSampler(ds, shuffle=True, seed=1)
loader = DataLoader(ds, batch_size=16, sampler=sampler)
opt = Adam(ddp.parameters(), lr=1e-3)
ropt = Adam(ref.parameters(), lr=1e-3)
gerr, steps = 0.0, 0
for epoch in range(2):
    sampler.set_epoch(epoch)
    order = T.random.permutation(320, generator=T.random.Generator(1 + epoch)).numpy()
    for i, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        F.cross_entropy(ddp(xb), yb).backward()
        if rank == 0:
            idx = T.asarray(order[32 * i:32 * (i + 1)])
            ropt.zero_grad()
            F.cross_entropy(ref(Xt[idx]), Yt[idx]).backward()
            gerr = max(gerr, worst(grads(model), grads(ref)))
            ropt.step()
        opt.step()
        steps += 1
check("mlp_steps", steps == 20, steps)
if rank == 0:
    check("mlp_grads", gerr <= TOL, gerr)
    check("mlp_params", worst(list(model.parameters()), list(ref.parameters())) <= TOL,
          worst(list(model.parameters()), list(ref.parameters())))
check("mlp_same_on_all", same_on_all(list(model.parameters())))

# ---- determinism, overlap off, gradient_as_bucket_view: bitwise the same gradients
def one_run(**kw):
    m = copy.deepcopy(init)
    d = DDP(m, bucket_cap_mb=0.001, **kw)
    o = SGD(d.parameters(), lr=0.1)
    for i in range(3):
        o.zero_grad()
        F.cross_entropy(d(Xt[32 * i + 16 * rank:32 * i + 16 * rank + 16]),
                        Yt[32 * i + 16 * rank:32 * i + 16 * rank + 16]).backward()
        g = [p.grad.numpy().copy() for p in m.parameters()]
        o.step()
    return d, m, g, [p.numpy().copy() for p in m.parameters()]


_, _, g1, p1 = one_run()
_, _, g2, p2 = one_run()
check("deterministic", all(np.array_equal(a, b) for a, b in zip(g1 + p1, g2 + p2)))
_, _, g3, p3 = one_run(overlap=False)
check("no_overlap_same", all(np.array_equal(a, b) for a, b in zip(g1 + p1, g3 + p3)))
d4, m4, g4, p4 = one_run(gradient_as_bucket_view=True)
check("bucket_view_same", all(np.array_equal(a, b) for a, b in zip(g1 + p1, g4 + p4)))
check("bucket_view_is_view", all(any(T.shares_memory(p.grad, b.buffer) for b in d4._buckets)
                                 for p in m4.parameters()))

# ---- no_sync: two local micro-batches, then a synced one = the full-batch gradient
m = copy.deepcopy(init)
d = DDP(m, bucket_cap_mb=0.001)
xs, ys = Xt[16 * rank:16 * rank + 16], Yt[16 * rank:16 * rank + 16]
with d.no_sync():
    (F.cross_entropy(d(xs[:8]), ys[:8]) / 2).backward()
check("no_sync_local", not same_on_all(grads(m)))
(F.cross_entropy(d(xs[8:]), ys[8:]) / 2).backward()
r = copy.deepcopy(init)
F.cross_entropy(r(Xt[:32]), Yt[:32]).backward()
check("no_sync_accumulates", worst(grads(m), grads(r)) <= TOL, worst(grads(m), grads(r)))
# a second synced step without zero_grad accumulates into .grad as autograd would
F.cross_entropy(d(xs), ys).backward()
F.cross_entropy(r(Xt[:32]), Yt[:32]).backward()
check("accumulate_into_grad", worst(grads(m), grads(r)) <= TOL, worst(grads(m), grads(r)))


# ---- unused parameters: `never` on no rank, `b` only on rank 1 (forward kwargs pass through)
class Unused(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.never = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x, *, use_b):
        y = self.a(x)
        return self.b(y) if use_b else y


T.manual_seed(7)
U0 = Unused()
xu = T.asarray(np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32))
refs = []
for r_ in range(world):                     # each rank's local gradients, then their average
    u = copy.deepcopy(U0)
    u(xu[2 * r_:2 * r_ + 2], use_b=r_ == 1).pow(2).sum().backward()
    refs.append({n: p.grad for n, p in u.named_parameters()})
for fu in (False, True):
    u = copy.deepcopy(U0)
    d = DDP(u, find_unused_parameters=fu, bucket_cap_mb=0.0001)
    for it in range(2):                     # twice: the state resets between iterations
        u.zero_grad()
        d(xu[2 * rank:2 * rank + 2], use_b=rank == 1).pow(2).sum().backward()
    got = dict(u.named_parameters())
    ok = all(rel(got[n].grad.numpy(), (refs[0][n].numpy() + refs[1][n].numpy()) / 2) <= TOL
             for n in ("a.weight", "a.bias"))
    ok = ok and all(rel(got[n].grad.numpy(), refs[1][n].numpy() / 2) <= TOL
                    for n in ("b.weight", "b.bias"))
    nv = got["never.weight"].grad
    ok = ok and (nv is None if fu else nv is not None and not nv.numpy().any())
    check(f"unused_{fu}", ok and same_on_all([got[n].grad for n in ("a.weight", "b.weight")]))


# ---- a checkpointed module (found used by find_unused_parameters through the checkpoint)
class Ck(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.head = nn.Linear(64, 32), nn.Linear(32, 32), nn.Linear(32, 10)

    def forward(self, x):
        h = checkpoint(lambda z: self.l2(F.gelu(self.l1(z))), x)
        return self.head(h)


T.manual_seed(11)
c0 = Ck()
for fu in (False, True):
    c = copy.deepcopy(c0)
    d = DDP(c, bucket_cap_mb=0.001, find_unused_parameters=fu)
    F.cross_entropy(d(Xt[16 * rank:16 * rank + 16]), Yt[16 * rank:16 * rank + 16]).backward()
    r = copy.deepcopy(c0)
    F.cross_entropy(r(Xt[:32]), Yt[:32]).backward()
    check(f"checkpoint_{fu}", worst(grads(c), grads(r)) <= TOL, worst(grads(c), grads(r)))

# ---- the whole DDP module under checkpoint (recomputed inside backward: no new reduction state)
m = copy.deepcopy(init)
d = DDP(m, bucket_cap_mb=0.001)
F.cross_entropy(checkpoint(d, Xt[16 * rank:16 * rank + 16]), Yt[16 * rank:16 * rank + 16]).backward()
r = copy.deepcopy(init)
F.cross_entropy(r(Xt[:32]), Yt[:32]).backward()
check("checkpoint_whole", worst(grads(m), grads(r)) <= TOL, worst(grads(m), grads(r)))

# ---- a backward that raises halfway (buckets in flight) leaves the next step correct
m = copy.deepcopy(init)
d = DDP(m, bucket_cap_mb=0.001)
boom = [True]


def raise_once(mod, args, out):
    def hook(g):
        if boom[0]:
            boom[0] = False
            raise ValueError("boom")
    out.register_hook(hook)


h = m[2].register_forward_hook(raise_once)
try:
    F.cross_entropy(d(xs), ys).backward()
    check("raising_backward", False, "no error")
except ValueError:
    h.remove()
    m.zero_grad()
    F.cross_entropy(d(xs), ys).backward()
    r = copy.deepcopy(init)
    F.cross_entropy(r(Xt[:32]), Yt[:32]).backward()
    check("raising_backward", worst(grads(m), grads(r)) <= TOL, worst(grads(m), grads(r)))

# ---- autocast (bfloat16) and GradScaler
m = copy.deepcopy(init)
d = DDP(m, bucket_cap_mb=0.001)
scaler = T.GradScaler("cpu", init_scale=1024.0)
o = SGD(d.parameters(), lr=0.1)
with T.autocast("cpu", dtype=T.bfloat16):
    out = d(xs)
scaler.scale(F.cross_entropy(out.astype(T.float32), ys)).backward()
loc = []
for r_ in range(world):
    mm = copy.deepcopy(init)
    with T.autocast("cpu", dtype=T.bfloat16):
        oo = mm(Xt[16 * r_:16 * r_ + 16])
    (F.cross_entropy(oo.astype(T.float32), Yt[16 * r_:16 * r_ + 16]) * 1024.0).backward()
    loc.append([p.grad.numpy() for p in mm.parameters()])
want = [(a + b) / 2 for a, b in zip(*loc)]
check("autocast_scaler_grads", max(rel(p.grad.numpy(), w) for p, w in zip(m.parameters(), want))
      <= TOL)
scaler.step(o)
scaler.update()
check("autocast_scaler_step", same_on_all(list(m.parameters())))

# ---- a whole DDP training step in tensor.compile (forward, backward with the buckets'
# all-reduces, the optimizer; with and without a BatchNorm, whose buffers DDP broadcasts at each
# forward): every replay runs the collectives again, bitwise eager DDP's losses and weights
def bn_mlp():
    T.manual_seed(13)
    return nn.Sequential(nn.Linear(64, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 10))


def ddp_steps(make, compiled):
    m = make()
    d = DDP(m, bucket_cap_mb=0.001)
    o = SGD(d.parameters(), lr=0.1, momentum=0.9)

    def train_step(x, y):
        o.zero_grad()
        loss = F.cross_entropy(d(x), y)
        loss.backward()
        o.step()
        return loss.detach()
    f = T.compile(train_step) if compiled else train_step
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a capture that gives up warns
        for i in range(5):
            sl = slice(32 * i + 16 * rank, 32 * i + 16 * rank + 16)
            losses.append(f(Xt[sl], Yt[sl]).item())
    return f, losses, [p.numpy().copy() for p in m.parameters()], \
        [b.numpy().copy() for b in m.buffers()]


for name, make in (("mlp", lambda: copy.deepcopy(init)), ("batchnorm", bn_mlp)):
    _, l1, p1, b1 = ddp_steps(make, False)
    f, l2, p2, b2 = ddp_steps(make, True)
    check(f"compile_{name}_replayed", f.stats()["replays"] == 3, f.stats())
    check(f"compile_{name}_as_eager", l1 == l2 and all(np.array_equal(a, b) for a, b in
                                                       zip(p1 + b1, p2 + b2)), (l1, l2))
    # (the parameters: a BatchNorm's running statistics are each rank's own since the last
    # forward's broadcast, as in PyTorch)
    check(f"compile_{name}_same_on_all", same_on_all([T.asarray(a) for a in p2]))

# ---- the tiny GPT with SGD, each rank half of the batch; default bucket size, buffers
cfg = GPTConfig(vocab=32, context=8, d_model=16, n_heads=2, n_layers=2, batch=8)
T.manual_seed(5 + rank)
g = TinyGPT(cfg)
dg = DDP(g, bucket_cap_mb=0.002)
check("gpt_buckets", len(dg._buckets) >= 2, len(dg._buckets))
rg = copy.deepcopy(g)
# SGD here (Adam on the MLP): the key bias of attention has a zero gradient mathematically and
# rounding noise numerically, which Adam turns into steps of +-lr that differ with the rounding
og, rog = SGD(dg.parameters(), lr=0.1, momentum=0.9), SGD(rg.parameters(), lr=0.1, momentum=0.9)
gerr = 0.0
rs = np.random.default_rng(9)
for step in range(20):
    seq = rs.integers(0, cfg.vocab, (cfg.batch, cfg.context + 1))
    idx, tgt = T.asarray(seq[:, :-1]), T.asarray(seq[:, 1:])
    h = cfg.batch // world
    og.zero_grad()
    lg = dg(idx[h * rank:h * rank + h])
    F.cross_entropy(lg.reshape(-1, cfg.vocab), tgt[h * rank:h * rank + h].reshape(-1)).backward()
    og.step()
    if rank == 0:
        rog.zero_grad()
        F.cross_entropy(rg(idx).reshape(-1, cfg.vocab), tgt.reshape(-1)).backward()
        gerr = max(gerr, worst(grads(g), grads(rg)))
        rog.step()
if rank == 0:
    check("gpt_grads", gerr <= TOL, gerr)
    perr = worst(list(g.parameters()), list(rg.parameters()))
    check("gpt_params", perr <= TOL, perr)
check("gpt_same_on_all", same_on_all(list(g.parameters())))

# ---- bad input: another shape / dtype / parameter count on rank 1: the same error everywhere
cases = {"shape": lambda: nn.Linear(4, 4 if rank == 0 else 5),
         "dtype": lambda: nn.Linear(4, 4, dtype=T.float32 if rank == 0 else T.float64),
         "count": lambda: nn.Linear(4, 4, bias=rank == 0)}
want = {"shape": "(4, 4) float32 on rank 0 but 'weight' (5, 4) float32 on rank 1",
        "dtype": "float32 on rank 0 but 'weight' (4, 4) float64 on rank 1",
        "count": "'bias' (4,) float32 on rank 0 but nothing on rank 1"}
for k, make in cases.items():
    try:
        DDP(make())
        check(f"mismatch_{k}", False, "no error")
    except dist.DistributedError as e:
        check(f"mismatch_{k}", want[k] in str(e), str(e))
dist.barrier()
check("group_usable_after", same_on_all([T.ones(3)]))
dist.destroy_process_group()
'''

CHECKS = ["buckets", "wrap_broadcast", "module_attr", "mlp_steps", "mlp_same_on_all",
          "deterministic", "no_overlap_same", "bucket_view_same", "bucket_view_is_view",
          "no_sync_local", "no_sync_accumulates", "accumulate_into_grad", "unused_False",
          "unused_True", "checkpoint_False", "checkpoint_True", "checkpoint_whole",
          "raising_backward", "autocast_scaler_grads", "autocast_scaler_step",
          "compile_mlp_replayed", "compile_mlp_as_eager", "compile_mlp_same_on_all",
          "compile_batchnorm_replayed", "compile_batchnorm_as_eager",
          "compile_batchnorm_same_on_all", "gpt_buckets",
          "gpt_same_on_all", "mismatch_shape", "mismatch_dtype", "mismatch_count",
          "group_usable_after"]
RANK0 = ["mlp_grads", "mlp_params", "gpt_grads", "gpt_params"]


def test_ddp_two_ranks():
    pytest.importorskip("sklearn")
    lines = run_ranks(f"ROOT = {ROOT!r}\n" + SCRIPT, n=2, timeout=180)
    text = "\n".join(lines)    # the ranks' lines may interleave: find the marks anywhere
    marks = re.findall(r"(OK|FAIL) (\w+) (rank\d)", text)
    assert not [m for m in marks if m[0] == "FAIL"], text
    ok = {(c, r) for s, c, r in marks if s == "OK"}
    missing = [(c, f"rank{r}") for c in CHECKS for r in (0, 1) if (c, f"rank{r}") not in ok]
    missing += [(c, "rank0") for c in RANK0 if (c, "rank0") not in ok]
    assert not missing, f"checks that did not report: {missing}\n" + "\n".join(lines)


DETERMINISM = r'''
import hashlib, sys
import numpy as np
sys.path.insert(0, ROOT + "/benchmarks")
import tensor as T, tensor.distributed as dist
from nn import functional as F
from nn.optim import Adam
from nn.parallel import DistributedDataParallel as DDP
from tiny_gpt import GPTConfig, TinyGPT
dist.init_process_group()
rank = dist.get_rank()
cfg = GPTConfig(vocab=32, context=8, d_model=16, n_heads=2, n_layers=1, batch=8)
T.manual_seed(5)
g = TinyGPT(cfg)
d = DDP(g, bucket_cap_mb=0.002)
o = Adam(d.parameters(), lr=1e-2)
rs = np.random.default_rng(9)
for step in range(5):
    seq = rs.integers(0, 32, (8, 9))
    idx, tgt = T.asarray(seq[4 * rank:4 * rank + 4, :-1]), T.asarray(seq[4 * rank:4 * rank + 4, 1:])
    o.zero_grad()
    F.cross_entropy(d(idx).reshape(-1, 32), tgt.reshape(-1)).backward()
    o.step()
h = hashlib.sha256(b"".join(p.numpy().tobytes() for p in g.parameters())).hexdigest()
print(f"HASH{rank} {h}\n", end="", flush=True)
'''


def test_ddp_bitwise_run_to_run():
    """Two launches of the same 2-rank training give bitwise the same weights on every rank."""
    runs = []
    for _ in range(2):
        text = "\n".join(run_ranks(f"ROOT = {ROOT!r}\n" + DETERMINISM, n=2, timeout=120))
        runs.append(sorted(re.findall(r"HASH(\d) (\w{64})", text)))
    assert len(runs[0]) == 2 and runs[0] == runs[1], runs
    assert runs[0][0][1] == runs[0][1][1]          # and the ranks agree


# ---- DistributedSampler (no processes needed: num_replicas and rank given)

def _expected(n, reps, rank, drop_last, order):
    """PyTorch's DistributedSampler, written out."""
    if drop_last and n % reps:
        per = -((reps - n) // reps)
    else:
        per = -(-n // reps)
    total = per * reps
    idx = list(order)
    if drop_last:
        idx = idx[:total]
    else:
        idx += (idx * -(-(total - n) // max(n, 1)))[:total - n] if n else []
    return idx[rank:total:reps]


@pytest.mark.parametrize("n", [0, 1, 5, 7, 10, 16])
@pytest.mark.parametrize("reps", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_splits(n, reps, drop_last):
    parts = [list(DistributedSampler(range(n), reps, r, shuffle=False, drop_last=drop_last))
             for r in range(reps)]
    for r, p in enumerate(parts):
        assert p == _expected(n, reps, r, drop_last, range(n))
        assert len(DistributedSampler(range(n), reps, r, shuffle=False,
                                      drop_last=drop_last)) == len(p)
    assert len({len(p) for p in parts}) == 1       # equal shares: ranks stay in step
    seen = [i for p in parts for i in p]
    if drop_last:                                  # disjoint, the tail dropped
        assert len(set(seen)) == len(seen) == n - n % reps
    else:                                          # covering, padded by repetition
        assert set(seen) == set(range(n)) and len(seen) == -(-n // reps) * reps


def test_distributed_sampler_shuffle_and_epochs():
    n, reps = 23, 3
    ss = [DistributedSampler(range(n), reps, r, shuffle=True, seed=4) for r in range(reps)]
    order0 = T.random.permutation(n, generator=T.random.Generator(4)).tolist()
    e0 = [list(s) for s in ss]
    for r in range(reps):
        assert e0[r] == _expected(n, reps, r, False, order0)
    assert [list(s) for s in ss] == e0              # the same order until set_epoch
    for s in ss:
        s.set_epoch(1)
    e1 = [list(s) for s in ss]
    order1 = T.random.permutation(n, generator=T.random.Generator(5)).tolist()
    assert e1 != e0 and all(e1[r] == _expected(n, reps, r, False, order1) for r in range(reps))
    assert set(i for p in e1 for i in p) == set(range(n))


def test_distributed_sampler_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DistributedSampler as TorchSampler
    for n, reps, dl in [(10, 3, False), (10, 3, True), (2, 4, False), (9, 2, True)]:
        for r in range(reps):
            ours = DistributedSampler(range(n), reps, r, shuffle=False, drop_last=dl)
            theirs = TorchSampler(range(n), reps, r, shuffle=False, drop_last=dl)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert torch is not None


def test_data_docstring_examples():
    import doctest

    import nn.data
    r = doctest.testmod(nn.data)
    assert r.failed == 0 and r.attempted >= 2


def test_distributed_sampler_bad_input_and_loader():
    with pytest.raises(ValueError, match="rank"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="num_replicas"):
        DistributedSampler(range(4), num_replicas=0, rank=0)
    x = T.arange(10.0).reshape(5, 2)
    ds = TensorDataset(x, T.arange(5))
    s = DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
    dl = DataLoader(ds, batch_size=2, sampler=s)
    batches = [b[1].tolist() for b in dl]
    assert batches == [[1, 3], [0]] and len(dl) == 2
    with pytest.raises(ValueError, match="exclusive"):
        DataLoader(ds, sampler=s, shuffle=True)


# ---- autograd.engine.queue_callback (what DDP finishes its reduction with)

def test_queue_callback():
    with pytest.raises(RuntimeError, match="no backward pass"):
        queue_callback(lambda: None)
    w = T.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(g):
        assert backward_running()
        queue_callback(lambda: seen.append(None if w.grad is None else w.grad.tolist()))

    h = (w * w)
    h.register_hook(hook)
    h.sum().backward()
    assert seen == [[2.0, 4.0]]                     # after .grad was written, once
    assert not backward_running()
    w.grad = None
    (w * 3).sum().backward()
    assert seen == [[2.0, 4.0]]                     # queued callbacks are per pass
    y = w * w
    y.register_hook(hook)                           # queues, then the next hook raises

    def boom(g):
        raise ValueError("boom")
    y.register_hook(boom)
    with pytest.raises(ValueError):
        y.sum().backward()
    w.grad = None
    (w * 2).sum().backward()
    assert seen == [[2.0, 4.0]]                     # a failed pass drops its callbacks
    assert np.array_equal(w.grad.numpy(), [2.0, 2.0])


def test_ddp_bad_input_without_processes():
    import nn
    from nn.parallel import DistributedDataParallel
    from tensor.distributed import DistributedError
    with pytest.raises(TypeError, match="nn.Module"):
        DistributedDataParallel(lambda x: x)
    with pytest.raises(ValueError, match="bucket_cap_mb"):
        DistributedDataParallel(nn.Linear(2, 2), bucket_cap_mb=0)
    with pytest.raises(DistributedError, match="init_process_group"):
        DistributedDataParallel(nn.Linear(2, 2))
