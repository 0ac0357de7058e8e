"""Differentiable collectives (tensor.distributed.nn.functional) and the tensor-parallel layers
(nn.parallel.tensor_parallel) on 2 MPI ranks, against single-process NumPy / single-device
references. One mpiexec launch runs every check (each launch costs seconds of imports); each
check prints `OK <name> rank<r>` or `FAIL ...` with its traceback, and the tests below read
those lines.

Collectives (float64): the global function F = sum over ranks of L_r(y_r), with y the op's
outputs and L_r = sum(w_r * sin(y_r)). The reference gradient and tangent come from the op's
global Jacobian J, built in NumPy by applying a NumPy model of the op to unit vectors
(independent of the derivative rules): grad = J^T (w cos Y), tangent = J t. A central
difference of F through the distributed forward checks both once more.
"""
from __future__ import annotations

import pytest
from helpers import run_ranks

SCRIPT = r'''
import sys
import traceback
import numpy as np
import tensor as T
import autograd
import nn
import tensor.distributed as dist
from autograd.forward import jvp
from tensor.distributed.nn import functional as DF
from nn.parallel.tensor_parallel import (ColumnParallelLinear, RowParallelLinear,
                                         VocabParallelEmbedding)

dist.init_process_group("mpi", timeout=60)
R, W = dist.get_rank(), dist.get_world_size()
f64 = T.float64


def say(msg):   # one write per line: the ranks share stdout
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def check(name, fn):
    try:
        fn()
        say(f"OK {name} rank{R}")
    except Exception:
        say(f"FAIL {name} rank{R}: " + traceback.format_exc().replace("\n", " | "))


def close(a, b, rtol=1e-12, what=""):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    err = np.max(np.abs(a - b)) if a.size else 0.0
    scale = max(np.max(np.abs(b)) if b.size else 0.0, 1e-300)
    assert err <= rtol * scale, f"{what}: max error {err:.3e} (scale {scale:.3e})"


def outs_of(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def collective_gradcheck(fwd, np_fwd, shape, seed):
    """fwd(x) on this rank -> tensor or tuple; np_fwd(xs over ranks) -> per rank, a list of
    the outputs (NumPy)."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(shape) for _ in range(W)]
    ts = [rng.standard_normal(shape) for _ in range(W)]
    Y = np_fwd(xs)
    ws = [[rng.standard_normal(y.shape) for y in Yr] for Yr in Y]
    n_in = int(np.prod(shape))
    flat_out = [np.concatenate([y.ravel() for y in Yr] or [np.zeros(0)]) for Yr in Y]
    sizes = [f.size for f in flat_out]
    J = np.zeros((sum(sizes), W * n_in))            # the global linear map, column by column
    for i in range(W * n_in):
        e = np.zeros(W * n_in)
        e[i] = 1.0
        Ye = np_fwd([e[r * n_in:(r + 1) * n_in].reshape(shape) for r in range(W)])
        J[:, i] = np.concatenate([np.concatenate([y.ravel() for y in Yr]) for Yr in Ye])
    Yflat = np.concatenate(flat_out)
    wflat = np.concatenate([np.concatenate([w.ravel() for w in wr]) for wr in ws])
    ref_grad = (J.T @ (wflat * np.cos(Yflat)))[R * n_in:(R + 1) * n_in].reshape(shape)
    ref_tan = J @ np.concatenate([t.ravel() for t in ts])
    lo = sum(sizes[:R])
    ref_tan = ref_tan[lo:lo + sizes[R]]

    def loss(y):
        return sum(T.sum(T.tensor(w) * T.sin(o)) for w, o in zip(ws[R], outs_of(y)))

    # reverse mode, and the input is not written
    x = T.tensor(xs[R], requires_grad=True)
    y = fwd(x)
    for o, ref in zip(outs_of(y), Y[R]):
        close(o.numpy(), ref, what="forward")
    loss(y).backward()
    close(x.grad.numpy(), ref_grad, what="vjp")
    close(x.detach().numpy(), xs[R], rtol=0, what="input unchanged")
    # forward mode
    _, tan = jvp(fwd, T.tensor(xs[R]), T.tensor(ts[R]))
    got = np.concatenate([t.numpy().ravel() for t in outs_of(tan)])
    close(got, ref_tan, what="jvp")
    # central difference of the global F through the distributed forward
    eps = 1e-6

    def F(sign):
        v = T.tensor([float(loss(fwd(T.tensor(xs[R] + sign * eps * ts[R]))).item())])
        dist.all_reduce(v)
        return v.item()
    fd = (F(1) - F(-1)) / (2 * eps)
    d = T.tensor([float(np.sum(x.grad.numpy() * ts[R]))])
    dist.all_reduce(d)
    assert abs(fd - d.item()) <= 1e-7 * max(1.0, abs(fd)), (fd, d.item())


def blocks(a, axis):
    return np.split(a, W, axis=axis)


CASES = {
    "all_reduce_sum": (lambda x: DF.all_reduce(x), lambda xs: [[sum(xs)] for _ in range(W)],
                       (2, 3)),
    "all_reduce_avg": (lambda x: DF.all_reduce(x, op="avg"),
                       lambda xs: [[sum(xs) / W] for _ in range(W)], (3,)),
    "all_gather": (lambda x: DF.all_gather(x), lambda xs: [list(xs) for _ in range(W)], (2, 2)),
    "reduce_scatter": (lambda x: DF.reduce_scatter(None, [x[i] for i in range(W)]),
                       lambda xs: [[sum(x[r] for x in xs)] for r in range(W)], (W, 3)),
    "broadcast": (lambda x: DF.broadcast(x, 1), lambda xs: [[xs[1]] for _ in range(W)], (4,)),
    "reduce": (lambda x: DF.reduce(x, 0),
               lambda xs: [[sum(xs) if r == 0 else 0 * xs[0]] for r in range(W)], (3,)),
    "all_gather_tensor": (lambda x: DF.all_gather_tensor(x, dim=1),
                          lambda xs: [[np.concatenate(xs, axis=1)] for _ in range(W)], (2, 3)),
    "reduce_scatter_tensor": (lambda x: DF.reduce_scatter_tensor(x, dim=1),
                              lambda xs: [[blocks(sum(xs), 1)[r]] for r in range(W)], (2, 4)),
    "all_to_all": (lambda x: DF.all_to_all(None, [x[j] for j in range(W)]),
                   lambda xs: [[xs[r][R_] for r in range(W)] for R_ in range(W)], (W, 3)),
    # rank i sends rank j 1 + (i + j) % 2 rows (3 rows in all when W == 2)
    "all_to_all_single": (lambda x: DF.all_to_all_single(
        None, x, [1 + (r + R) % 2 for r in range(W)], [1 + (R + j) % 2 for j in range(W)]),
        lambda xs: [[np.concatenate([xs[r][sum(1 + (r + j) % 2 for j in range(R_)):][
            :1 + (r + R_) % 2] for r in range(W)])] for R_ in range(W)], (3, 2)),
    # non-contiguous inputs (transposed, negative step): staged, never written
    "all_reduce_strided": (lambda x: DF.all_reduce(x.T[::-1]),
                           lambda xs: [[sum(xs).T[::-1]] for _ in range(W)], (3, 2)),
    "all_gather_tensor_strided": (lambda x: DF.all_gather_tensor(x.T, dim=0),
                                  lambda xs: [[np.concatenate([a.T for a in xs])]
                                              for _ in range(W)], (2, 3)),
}
for i, (name, (fwd, np_fwd, shape)) in enumerate(CASES.items()):
    check("grad_" + name, lambda: collective_gradcheck(fwd, np_fwd, shape, 100 + i))


def double_backward():
    # d/dx of (grad of sum_r sum(all_reduce(x)^2)/2)... : g = all_reduce(all_reduce(x)), a
    # linear map; its vjp again through the recorded rules
    x = T.tensor(np.arange(3.0) + R, requires_grad=True)
    y = DF.all_reduce(x)
    (g,) = autograd.grad(T.sum(y * y) / 2, x, create_graph=True)
    s = sum(np.arange(3.0) + r for r in range(W))
    close(g.numpy(), W * s, what="grad")
    (h,) = autograd.grad(T.sum(g * T.tensor(np.ones(3))), x)
    close(h.numpy(), np.full(3, W * W), what="second derivative")


check("double_backward", double_backward)


def gelu_np(z):
    from math import erf
    return 0.5 * z * (1 + np.vectorize(erf)(z / np.sqrt(2)))


def tp_mlp(gather):
    T.manual_seed(0)
    lin1 = nn.Linear(8, 16, dtype=f64)
    lin2 = nn.Linear(16, 6, dtype=f64)
    col = ColumnParallelLinear.from_full(lin1, gather_output=gather)
    row = RowParallelLinear.from_full(lin2, input_is_parallel=not gather)
    rng = np.random.default_rng(7)
    xa, wa = rng.standard_normal((5, 8)), rng.standard_normal((5, 6))
    # reference: the unsplit block on one device
    x0 = T.tensor(xa, requires_grad=True)
    y0 = lin2(nn.functional.gelu(lin1(x0)))
    T.sum(T.tensor(wa) * y0 * y0).backward()
    x = T.tensor(xa, requires_grad=True)
    y = row(nn.functional.gelu(col(x)))
    T.sum(T.tensor(wa) * y * y).backward()
    close(y.numpy(), y0.numpy(), what="output")
    close(x.grad.numpy(), x0.grad.numpy(), what="input grad")
    k, kr = 16 // W, 16 // W
    close(col.weight.grad.numpy(), lin1.weight.grad.numpy()[R * k:(R + 1) * k], what="col W")
    close(col.bias.grad.numpy(), lin1.bias.grad.numpy()[R * k:(R + 1) * k], what="col b")
    close(row.weight.grad.numpy(), lin2.weight.grad.numpy()[:, R * kr:(R + 1) * kr],
          what="row W")
    close(row.bias.grad.numpy(), lin2.bias.grad.numpy(), what="row b")
    # NumPy's own forward of the block, as a second reference
    h = gelu_np(xa @ lin1.weight.numpy().T + lin1.bias.numpy())
    close(y.numpy(), h @ lin2.weight.numpy().T + lin2.bias.numpy(), rtol=1e-12, what="numpy")
    # forward mode through the block against the unsplit block's
    t = rng.standard_normal((5, 8))
    _, t0 = jvp(lambda v: lin2(nn.functional.gelu(lin1(v))), T.tensor(xa), T.tensor(t))
    _, t1 = jvp(lambda v: row(nn.functional.gelu(col(v))), T.tensor(xa), T.tensor(t))
    close(t1.numpy(), t0.numpy(), what="jvp")


check("tp_mlp_sharded_hidden", lambda: tp_mlp(False))
check("tp_mlp_gathered_hidden", lambda: tp_mlp(True))


def tp_compiled():
    """A tensor-parallel training step in tensor.compile: the collectives of the forward and of
    the backward rules run again at every replay; bitwise the eager steps' losses and weights."""
    import warnings

    def run(compiled):
        T.manual_seed(0)
        col = ColumnParallelLinear(8, 16, gather_output=False, dtype=f64)
        row = RowParallelLinear(16, 6, input_is_parallel=True, dtype=f64)
        opt = nn.optim.SGD(list(col.parameters()) + list(row.parameters()), lr=0.1)

        def train_step(x):
            opt.zero_grad()
            loss = T.sum(row(nn.functional.gelu(col(x))) ** 2)
            loss.backward()
            opt.step()
            return loss.detach()
        f = T.compile(train_step) if compiled else train_step
        rng = np.random.default_rng(4)
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # a capture that gives up warns
            losses = [f(T.tensor(rng.standard_normal((5, 8)))).item() for _ in range(4)]
        return f, losses, [p.numpy() for p in list(col.parameters()) + list(row.parameters())]
    _, l0, p0 = run(False)
    f, l1, p1 = run(True)
    assert f.stats()["replays"] == 2, f.stats()
    assert l0 == l1 and all(np.array_equal(a, b) for a, b in zip(p0, p1)), (l0, l1)


check("tp_compiled", tp_compiled)


def tp_init():
    T.manual_seed(3)
    full = nn.Linear(4, 6, dtype=f64)
    T.manual_seed(3)
    col = ColumnParallelLinear(4, 6, dtype=f64)
    T.manual_seed(3)
    row = RowParallelLinear(6, 4, dtype=f64)
    T.manual_seed(3)
    full_r = nn.Linear(6, 4, dtype=f64)
    T.manual_seed(3)
    emb = VocabParallelEmbedding(6, 3, dtype=f64)
    T.manual_seed(3)
    full_e = nn.Embedding(6, 3, dtype=f64)
    k = 6 // W
    close(col.weight.numpy(), full.weight.numpy()[R * k:(R + 1) * k], rtol=0, what="col")
    close(col.bias.numpy(), full.bias.numpy()[R * k:(R + 1) * k], rtol=0, what="col b")
    close(row.weight.numpy(), full_r.weight.numpy()[:, R * k:(R + 1) * k], rtol=0, what="row")
    close(row.bias.numpy(), full_r.bias.numpy(), rtol=0, what="row b")
    close(emb.weight.numpy(), full_e.weight.numpy()[R * k:(R + 1) * k], rtol=0, what="emb")


check("tp_init_matches_full", tp_init)


def tp_embedding():
    T.manual_seed(1)
    full = nn.Embedding(10, 4, dtype=f64)
    emb = VocabParallelEmbedding.from_full(full)
    ids = T.tensor(np.array([[0, 9, 5], [4, 5, 1]], np.int64))
    wa = np.random.default_rng(2).standard_normal((2, 3, 4))
    y0 = full(ids)
    T.sum(T.tensor(wa) * y0 * y0).backward()
    y = emb(ids)
    T.sum(T.tensor(wa) * y * y).backward()
    close(y.numpy(), full.weight.detach().numpy()[ids.numpy()], what="output")
    close(y.numpy(), y0.numpy(), what="output vs nn.Embedding")
    k = 10 // W
    close(emb.weight.grad.numpy(), full.weight.grad.numpy()[R * k:(R + 1) * k], what="grad")


check("tp_embedding", tp_embedding)


def raises(exc, match, fn):
    try:
        fn()
    except exc as e:
        assert match in str(e), f"{type(e).__name__}: {e} (expected {match!r})"
        return
    raise AssertionError(f"no {exc.__name__} raised (expected {match!r})")


def bad_input():
    raises(ValueError, "multiple of the world size", lambda: ColumnParallelLinear(4, 5))
    raises(ValueError, "multiple of the world size", lambda: RowParallelLinear(5, 4))
    raises(ValueError, "multiple of the world size", lambda: VocabParallelEmbedding(9, 4))
    col = ColumnParallelLinear(4, 6, dtype=f64)
    raises(ValueError, "expected input of shape (*, 4)", lambda: col(T.ones((2, 3), dtype=f64)))
    row = RowParallelLinear(6, 4, dtype=f64)
    raises(ValueError, "expected input of shape (*, 3)", lambda: row(T.ones((2, 6), dtype=f64)))
    emb = VocabParallelEmbedding(6, 2)
    raises(IndexError, "index out of range", lambda: emb(T.tensor([0, 6])))
    raises(TypeError, "integer index tensor", lambda: emb(T.ones(2)))
    raises(TypeError, "must be a Tensor", lambda: DF.all_reduce([1.0]))
    raises(ValueError, "not divisible by the world size",
           lambda: DF.reduce_scatter_tensor(T.ones((3, 2)), dim=0))
    x = T.ones(3, dtype=f64, requires_grad=True)
    y = DF.all_reduce(x, op="max")           # the forward runs; the derivative does not exist
    raises(NotImplementedError, "no derivative for ReduceOp.MAX", lambda: T.sum(y).backward())


check("bad_input", bad_input)
dist.barrier()
dist.destroy_process_group()
say(f"DONE rank{R}")
'''

NAMES = ["grad_all_reduce_sum", "grad_all_reduce_avg", "grad_all_gather", "grad_reduce_scatter",
         "grad_broadcast", "grad_reduce", "grad_all_gather_tensor", "grad_reduce_scatter_tensor",
         "grad_all_to_all", "grad_all_to_all_single",
         "grad_all_reduce_strided", "grad_all_gather_tensor_strided",
         "double_backward", "tp_mlp_sharded_hidden", "tp_mlp_gathered_hidden",
         "tp_compiled", "tp_init_matches_full", "tp_embedding", "bad_input"]


@pytest.fixture(scope="module")
def lines():
    return run_ranks(SCRIPT, n=2, timeout=120)


@pytest.mark.parametrize("name", NAMES)
def test_two_ranks(lines, name):
    fails = [ln for ln in lines if f"FAIL {name} rank" in ln]
    assert not fails, "\n".join(fails)
    for r in (0, 1):
        ok = any(f"OK {name} rank{r}" == ln.strip() for ln in lines)
        assert ok, f"{name} did not pass on rank {r}:\n" + "\n".join(lines[-40:])


def test_every_rank_finished(lines):
    assert "DONE rank0" in lines and "DONE rank1" in lines, "\n".join(lines[-40:])
