"""tensor.distributed's collectives and point-to-point operations on real MPI ranks (mpiexec with
the mpich wheel, launched by tests/helpers.run_ranks): every result is compared with a NumPy
reference computed from the per-rank inputs, which each rank can rebuild (`data(rank, ...)`).

Few launches (each pays the interpreter's and the library's imports): one 2-rank script runs
almost every check and prints one line per rank with its count; a 3-rank script covers a
sub-group with a non-member in the middle and uneven ranks; separate short launches cover a
timeout, a rank that dies, and CUDA tensors (the emulator) staged through the host. The
launcher's and the NCCL backend's tests are in tests/test_distributed_nccl.py."""
from __future__ import annotations

import re
import time

import pytest
from helpers import run_ranks

import tensor as T
import tensor.distributed as dist

# Shared by every launched script: deterministic per-rank inputs, tensors of any dtype from
# NumPy, a tolerant comparison, and a tally that makes a rank exit 1 with every failure listed.
PRELUDE = r'''
import os, sys, time
import numpy as np
import tensor as T
import tensor.distributed as dist
from tensor.distributed import DistributedError, ReduceOp

FAILS, COUNT = [], [0]
DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]

def data(rank, shape, dtype, salt=0):
    n = int(np.prod(shape))
    k = (np.arange(n) * 7 + 3 * rank + salt) % 5
    if dtype == "bool":
        return (k % 2 == 0).reshape(shape)
    a = (k - (0 if dtype.startswith("uint") else 2)).astype(np.float64)
    if dtype.startswith("complex"):
        a = a + 1j * ((np.arange(n) + rank) % 3 - 1)
    return a.reshape(shape)

def mk(a, dtype, device="cpu"):
    if dtype in ("bfloat16", "float16"):
        return T.asarray(np.asarray(a, np.float32), device=device).astype(getattr(T, dtype))
    return T.asarray(np.asarray(a, dtype=np.dtype(dtype)), device=device)

def npy(t):
    if t.dtype in (T.bfloat16, T.float16):
        t = t.astype(T.float32)
    return t.numpy()

def check(name, got, want, tol=0.0):
    COUNT[0] += 1
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        FAILS.append(f"{name}: shape {got.shape} != {want.shape}")
    elif got.dtype == bool or want.dtype == bool or tol == 0:
        if not np.array_equal(got.astype(want.dtype), want):
            FAILS.append(f"{name}: {got.tolist()} != {want.tolist()}")
    elif not np.allclose(got, want, rtol=tol, atol=tol):
        FAILS.append(f"{name}: {got.tolist()} != {want.tolist()}")

def raises(name, exc, fn, match=""):
    COUNT[0] += 1
    try:
        fn()
    except exc as e:
        if match not in str(e):
            FAILS.append(f"{name}: {type(e).__name__} without {match!r}: {e}")
        return
    except Exception as e:
        FAILS.append(f"{name}: raised {type(e).__name__}: {e}")
        return
    FAILS.append(f"{name}: did not raise {exc.__name__}")

def tol(dtype):
    return {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-6, "complex64": 1e-6}.get(dtype, 1e-12)

def npreduce(op, arrs, dtype):
    s = np.stack(arrs)
    if dtype == "bool":
        return {"sum": s.any(0), "product": s.all(0), "min": s.all(0), "max": s.any(0)}[op]
    r = {"sum": s.sum(0), "product": s.prod(0), "min": s.min(0), "max": s.max(0),
         "avg": s.mean(0)}[op]
    return r.astype(np.dtype(dtype)) if dtype.startswith(("int", "uint")) else r

def ops_for(dtype):
    if dtype.startswith("complex"):
        return ["sum", "product", "avg"]
    return ["sum", "product", "min", "max"] + (["avg"] if dtype.startswith(("float", "bfloat")) else [])

def finish():
    rank = dist.get_rank()
    dist.destroy_process_group()
    if FAILS:
        print(f"rank {rank}: {len(FAILS)} of {COUNT[0]} checks FAILED:\n  " + "\n  ".join(FAILS[:40]))
        sys.stdout.flush()
        sys.exit(1)
    sys.stdout.write(f"rank {rank}: {COUNT[0]} checks passed\n")
    sys.stdout.flush()
'''

MAIN = PRELUDE + r'''
dist.init_process_group(backend="mpi", timeout=60)
R, W = dist.get_rank(), dist.get_world_size()
assert W == 2 and dist.is_initialized() and dist.get_backend() == "mpi"
peers = range(W)

# all_reduce: every dtype and op, contiguous
for d in DTYPES:
    for op in ops_for(d):
        x = mk(data(R, (3, 4), d), d)
        dist.all_reduce(x, op=op)
        check(f"all_reduce {d} {op}", npy(x), npreduce(op, [data(r, (3, 4), d) for r in peers], d), tol(d))

# all_reduce on views that are not contiguous: the view gets the result, the rest of the base
# is untouched
for d, view in [("float32", "T"), ("int64", "slice"), ("bfloat16", "T"), ("bool", "slice"),
                ("complex128", "slice"), ("float16", "neg")]:
    base_np = data(R, (4, 6), d, salt=1)
    base = mk(base_np, d)
    sel = {"T": lambda a: a.T, "slice": lambda a: a[1:, ::2], "neg": lambda a: a[::-1, 1::3]}[view]
    v = sel(base)
    assert not v.is_contiguous()
    op = "max" if d == "bool" else "sum"
    dist.all_reduce(v, op=op)
    want = np.array(base_np, copy=True)
    ref = npreduce(op, [sel(data(r, (4, 6), d, salt=1)) for r in peers], d)
    sel(want)[...] = ref
    check(f"all_reduce {view} view {d}", npy(base), want, tol(d))

# async: several in flight, waited in reverse order, compute between issue and wait
xs = [mk(data(R, (5,), "float32", salt=i), "float32") for i in range(3)]
works = [dist.all_reduce(x, async_op=True) for x in xs]
y = T.ones(1000) * 2.0
for i, w in reversed(list(enumerate(works))):
    assert w.wait() is True and w.is_completed()
    check(f"async all_reduce {i}", xs[i].numpy(), sum(data(r, (5,), "float32", salt=i) for r in peers))
# a blocking call while an async one is still queued: runs after it (same order on every rank)
xa, xb = mk(data(R, (6,), "float64"), "float64"), mk(data(R, (6,), "int64", salt=2), "int64")
wa = dist.all_reduce(xa, op="max", async_op=True)
dist.all_reduce(xb)
wa.wait()
check("async then blocking: async", xa.numpy(),
      npreduce("max", [data(r, (6,), "float64") for r in peers], "float64"))
check("async then blocking: blocking", xb.numpy(), sum(data(r, (6,), "int64", salt=2) for r in peers))
h = mk(data(R, (2, 3), "bfloat16"), "bfloat16").T
w = dist.all_reduce(h, op=ReduceOp.AVG, async_op=True)
w.wait()
check("async avg bfloat16 view", npy(h), np.mean([data(r, (2, 3), "bfloat16").T for r in peers], 0), 2e-2)

# broadcast from each rank, every dtype, a view
for src in peers:
    for d in DTYPES:
        x = mk(data(R, (2, 3), d), d)
        dist.broadcast(x, src=src)
        check(f"broadcast src={src} {d}", npy(x), data(src, (2, 3), d), tol(d))
x = mk(data(R, (3, 4), "int32"), "int32")
w = dist.broadcast(x.T, src=1, async_op=True)
w.wait()
check("broadcast view async", x.numpy(), data(1, (3, 4), "int32"))

# reduce: the root gets the reduction, the others keep their tensor
for dst in peers:
    for d, op in [("float32", "sum"), ("int64", "max"), ("float16", "avg"), ("bool", "product"),
                  ("complex64", "product")]:
        x = mk(data(R, (4,), d), d)
        dist.reduce(x, dst=dst, op=op)
        want = npreduce(op, [data(r, (4,), d) for r in peers], d) if R == dst else data(R, (4,), d)
        check(f"reduce dst={dst} {d} {op}", npy(x), want, tol(d))

# all_gather (list of views), all_gather_into_tensor (flat and stacked)
for d in ["float32", "bool", "bfloat16", "complex128", "int8"]:
    outs = [mk(np.zeros((2, 3)), d) for _ in peers]
    dist.all_gather(outs, mk(data(R, (3, 2), d), d).T)
    for r in peers:
        check(f"all_gather {d} from {r}", npy(outs[r]), data(r, (3, 2), d).T, tol(d))
    out = mk(np.zeros((W * 3, 2)), d)
    dist.all_gather_into_tensor(out, mk(data(R, (3, 2), d), d))
    check(f"all_gather_into_tensor {d}", npy(out),
          np.concatenate([data(r, (3, 2), d) for r in peers]), tol(d))
big = mk(np.zeros((3, W, 4)), "float64")
w = dist.all_gather_into_tensor(big[1], mk(data(R, (4,), "float64"), "float64"), async_op=True)
w.wait()
want = np.zeros((3, W, 4))
want[1] = np.stack([data(r, (4,), "float64") for r in peers])
check("all_gather_into_tensor view async", big.numpy(), want)

# reduce_scatter (list) and reduce_scatter_tensor
for d, op in [("float32", "sum"), ("int32", "min"), ("bool", "sum"), ("bfloat16", "avg"),
              ("complex64", "sum"), ("float64", "product")]:
    ins = [mk(data(R, (2, 2), d, salt=i), d) for i in peers]
    out = mk(np.zeros((2, 2)), d)
    dist.reduce_scatter(out, ins, op=op)
    check(f"reduce_scatter {d} {op}", npy(out),
          npreduce(op, [data(r, (2, 2), d, salt=R) for r in peers], d), tol(d))
    inp = mk(data(R, (W * 3,), d), d)
    out = mk(np.zeros(3), d)
    dist.reduce_scatter_tensor(out, inp, op=op)
    full = npreduce(op, [data(r, (W * 3,), d) for r in peers], d)
    check(f"reduce_scatter_tensor {d} {op}", npy(out), full[3 * R:3 * R + 3], tol(d))

# all_to_all: out[r] = rank r's in[this rank]
for d in ["float32", "int64", "bool", "float16"]:
    ins = [mk(data(R, (3,), d, salt=10 * j), d) for j in peers]
    outs = [mk(np.zeros(3), d) for _ in peers]
    dist.all_to_all(outs, ins)
    for r in peers:
        check(f"all_to_all {d} from {r}", npy(outs[r]), data(r, (3,), d, salt=10 * R), tol(d))

# unequal splits: rank i sends rank j a (i + j + 1, 2) block (as a transposed view), of a
# shape rank j's output list expects
for d in ["float64", "int32", "complex64"]:
    ins = [mk(data(R, (2, R + j + 1), d, salt=j), d).T for j in peers]
    outs = [mk(np.zeros((r + R + 1, 2)), d) for r in peers]
    w = dist.all_to_all(outs, ins, async_op=True)
    w.wait()
    for r in peers:
        check(f"all_to_all unequal {d} from {r}", npy(outs[r]), data(r, (2, r + R + 1), d, salt=R).T)

# all_to_all_single: equal parts of a non-contiguous input, then split sizes (a zero among them)
x = mk(data(R, (3, 2 * W), "float32"), "float32").T          # (2W, 3), rows of rank r: 2r, 2r+1
out = mk(np.zeros((2 * W, 3)), "float32")
dist.all_to_all_single(out, x)
check("all_to_all_single equal", out.numpy(),
      np.concatenate([data(r, (3, 2 * W), "float32").T[2 * R:2 * R + 2] for r in peers]))
sizes = lambda i, j: (i + 2 * j) % 3                          # rows rank i sends rank j
x = mk(data(R, (sum(sizes(R, j) for j in peers), 2), "int64"), "int64")
out = mk(np.zeros((sum(sizes(r, R) for r in peers), 2)), "int64")
dist.all_to_all_single(out, x, [sizes(r, R) for r in peers], [sizes(R, j) for j in peers])
parts = []
for r in peers:
    lo = sum(sizes(r, j) for j in range(R))
    parts.append(data(r, (sum(sizes(r, j) for j in peers), 2), "int64")[lo:lo + sizes(r, R)])
check("all_to_all_single split sizes", out.numpy(), np.concatenate(parts))
# counts that do not pair up: every rank raises the same error, and the group still works
raises("all_to_all_single mismatched splits", DistributedError,
       lambda: dist.all_to_all_single(T.zeros(4), T.zeros(4), [2, 2], [1, 3] if R == 0 else [2, 2]),
       "rank 0 sends 1 elements to rank 0, which expects 2")
raises("all_to_all_single bad sizes", ValueError,
       lambda: dist.all_to_all_single(T.zeros(4), T.zeros(4), None, [1, 2]), "sum to")
raises("all_to_all_single indivisible", ValueError,
       lambda: dist.all_to_all_single(T.zeros(3), T.zeros(3)), "not divisible")
raises("all_to_all dtypes", TypeError,
       lambda: dist.all_to_all([T.zeros(1), T.zeros(1, dtype=T.int32)], [T.zeros(1)] * 2), "every tensor")

dist.barrier()
dist.barrier(async_op=True).wait()

# point to point: send/recv, isend/irecv with tags, recv from any source, a view
other = 1 - R
if R == 0:
    dist.send(mk(data(0, (4,), "float64"), "float64"), dst=1)
    w = dist.isend(mk(data(0, (2, 3), "bfloat16"), "bfloat16").T, dst=1, tag=7)
    w.wait()
    x = mk(np.zeros((3, 2)), "int32")
    src = dist.recv(x.T, src=None)
    check("recv any source: sender", src, 1)
    check("recv any source: data", x.T.numpy(), data(1, (2, 3), "int32"))
    z = mk(np.zeros(5), "complex64")
    check("irecv: sender", dist.irecv(z, src=1, tag=3).result(), 1)
    check("irecv: data", z.numpy(), data(1, (5,), "complex64"))
else:
    x = mk(np.zeros(4), "float64")
    check("recv: sender", dist.recv(x, src=0), 0)
    check("recv: data", x.numpy(), data(0, (4,), "float64"))
    y = mk(np.zeros((3, 2)), "bfloat16")
    dist.irecv(y, src=0, tag=7).wait()
    check("irecv tag bfloat16", npy(y), data(0, (2, 3), "bfloat16").T)
    dist.send(mk(data(1, (2, 3), "int32"), "int32"), dst=0)
    dist.isend(mk(data(1, (5,), "complex64"), "complex64"), dst=0, tag=3).wait()

# sub-groups: the whole world again, and one of rank 0 alone (rank 1 is not a member)
g01 = dist.new_group([1, 0])
g0 = dist.new_group([0])
check("group size", dist.get_world_size(g01), 2)
check("group rank", dist.get_rank(g0), 0 if R == 0 else -1)
x = mk(data(R, (3,), "float32"), "float32")
dist.all_reduce(x, group=g01)
check("all_reduce in new_group", x.numpy(), sum(data(r, (3,), "float32") for r in peers))
if R == 0:
    x = mk(data(R, (3,), "int64"), "int64")
    dist.all_reduce(x, group=g0)
    check("all_reduce in a group of one", x.numpy(), data(0, (3,), "int64"))
else:
    raises("non-member all_reduce", DistributedError, lambda: dist.all_reduce(T.ones(2), group=g0),
           "not a member")
    raises("non-member broadcast", DistributedError, lambda: dist.broadcast(T.ones(2), 0, group=g0),
           "not a member")
raises("src outside the group", DistributedError, lambda: dist.broadcast(T.ones(2), 5, group=g01),
       "not in the group")

# collectives inside tensor.compile run again at every replay, on the step's memory: a static
# argument written in place, an intermediate only a collective reads (a fused run must still
# write it), an asynchronous all_reduce waited for after more work
import warnings

@T.compile
def step(x, y):
    dist.all_reduce(x)
    h = y * 2 + 1
    out = T.zeros(W * 3, dtype=T.float32)
    dist.all_gather_into_tensor(out, h)
    z = x * 3
    w = dist.all_reduce(z, op="max", async_op=True)
    q = out.sum()
    w.wait()
    return z + q, out

for i in range(4):
    x, y = (mk(data(R, (3,), "float32", salt=s), "float32") for s in (i, 10 + i))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a capture that gives up warns
        z, out = step(x, y)
    xs = sum(data(r, (3,), "float32", salt=i) for r in peers)
    hs = np.concatenate([data(r, (3,), "float32", salt=10 + i) * 2 + 1 for r in peers])
    check(f"compiled all_reduce of an argument {i}", x.numpy(), xs)
    check(f"compiled all_gather of an intermediate {i}", out.numpy(), hs)
    check(f"compiled async all_reduce {i}", z.numpy(), xs * 3 + hs.sum(), 1e-6)
check("compiled collectives replayed", step.stats()["replays"], 2)

# bad input on one rank: every rank raises, the group still works and nothing was touched
for name, shape, dtype, op in [("shape", (3,) if R == 0 else (4,), "float32", "sum"),
                               ("dtype", (3,), "float32" if R == 0 else "float64", "sum"),
                               ("op", (3,), "float32", "sum" if R == 0 else "max")]:
    x = mk(data(R, shape, dtype), dtype)
    raises(f"mismatched {name}", DistributedError, lambda: dist.all_reduce(x, op=op), "do not match")
    check(f"mismatched {name}: tensor untouched", x.numpy(), data(R, shape, dtype))
raises("mismatched broadcast root", DistributedError,
       lambda: dist.broadcast(T.ones(2), src=R), "do not match")
x = mk(data(R, (4,), "float32"), "float32")
dist.all_reduce(x)
check("all_reduce after errors", x.numpy(), sum(data(r, (4,), "float32") for r in peers))
raises("avg of ints", TypeError, lambda: dist.all_reduce(T.ones(2, dtype=T.int32), op="avg"))
raises("max of complex", TypeError, lambda: dist.all_reduce(T.ones(2, dtype=T.complex64), op="max"))
raises("unknown op", ValueError, lambda: dist.all_reduce(T.ones(2), op="xor"))
raises("not a tensor", TypeError, lambda: dist.all_reduce(np.ones(2)))
raises("all_gather list length", ValueError, lambda: dist.all_gather([T.ones(2)], T.ones(2)))
raises("init twice", DistributedError, lambda: dist.init_process_group())
finish()
'''

THREE = PRELUDE + r'''
dist.init_process_group()
R, W = dist.get_rank(), dist.get_world_size()
assert W == 3
peers = range(W)
for d, op in [("float32", "sum"), ("int64", "product"), ("bool", "product"), ("float16", "avg")]:
    x = mk(data(R, (2, 3), d), d).T
    dist.all_reduce(x, op=op)
    check(f"3 ranks all_reduce {d} {op}", npy(x),
          npreduce(op, [data(r, (2, 3), d).T for r in peers], d), tol(d))
outs = [T.zeros(2, dtype=T.float32) for _ in peers]
dist.all_to_all(outs, [mk(data(R, (2,), "float32", salt=j), "float32") for j in peers])
for r in peers:
    check(f"3 ranks all_to_all from {r}", outs[r].numpy(), data(r, (2,), "float32", salt=R))
x = mk(data(R, (R + 3, 2), "float32"), "float32")           # rank i sends (i + j) % 2 + j rows to j
send = [(R + j) % 2 + j for j in peers]
send[-1] += R + 3 - sum(send)
every = [[(i + j) % 2 + j for j in peers] for i in peers]
for i in peers:
    every[i][-1] += i + 3 - sum(every[i])
out = T.zeros((sum(every[i][R] for i in peers), 2), dtype=T.float32)
dist.all_to_all_single(out, x, [every[i][R] for i in peers], send)
want = [data(i, (i + 3, 2), "float32")[sum(every[i][:R]):sum(every[i][:R + 1])] for i in peers]
check("3 ranks all_to_all_single split sizes", out.numpy(), np.concatenate(want))
out = T.zeros(2, dtype=T.int32)
dist.reduce_scatter_tensor(out, mk(data(R, (6,), "int32"), "int32"), op="max")
check("3 ranks reduce_scatter_tensor", out.numpy(),
      npreduce("max", [data(r, (6,), "int32") for r in peers], "int32")[2 * R:2 * R + 2])
# a group of ranks 0 and 2: rank 1 is outside; group rank 1 is global rank 2
g = dist.new_group([2, 0])
check("3 ranks sub-group rank", dist.get_rank(g), {0: 0, 1: -1, 2: 1}[R])
if R != 1:
    x = mk(data(R, (3,), "float64"), "float64")
    dist.broadcast(x, src=2, group=g)
    check("sub-group broadcast from global rank 2", x.numpy(), data(2, (3,), "float64"))
    outs = [T.zeros(3, dtype=T.float32) for _ in range(2)]
    dist.all_gather(outs, mk(data(R, (3,), "float32"), "float32"), group=g)
    check("sub-group all_gather", np.stack([o.numpy() for o in outs]),
          np.stack([data(0, (3,), "float32"), data(2, (3,), "float32")]))
    if R == 2:
        dist.send(mk(data(2, (2,), "int8"), "int8"), dst=0, group=g)
    else:
        y = T.zeros(2, dtype=T.int8)
        check("sub-group recv: global sender", dist.recv(y, group=g), 2)
        check("sub-group recv data", y.numpy(), data(2, (2,), "int8"))
else:
    raises("3 ranks non-member", DistributedError, lambda: dist.all_reduce(T.ones(1), group=g),
           "not a member")
x = T.ones(3) * (R + 1)
dist.all_reduce(x)
check("world after the sub-group", x.numpy(), np.full(3, 6.0))
finish()
'''


def _passed(lines: list, n: int) -> dict:
    """rank -> number of checks it passed, from the ranks' closing lines (mpiexec may join two
    ranks' lines)."""
    got = {int(r): int(c) for r, c in re.findall(r"rank (\d+): (\d+) checks passed", "\n".join(lines))}
    assert sorted(got) == list(range(n)), lines
    return got


def test_collectives_two_ranks():
    counts = _passed(run_ranks(MAIN, n=2, timeout=120), 2)
    assert min(counts.values()) >= 140, counts


def test_collectives_three_ranks_and_a_subgroup():
    counts = _passed(run_ranks(THREE, n=3, timeout=120), 3)
    assert min(counts.values()) >= 10, counts


def test_cuda_tensors_on_mpi_are_staged_through_the_host(monkeypatch):
    script = PRELUDE + r'''
dist.init_process_group(backend="mpi")
R, W = dist.get_rank(), dist.get_world_size()
peers = range(W)
assert T.cuda.is_available()
for d, op in [("float32", "sum"), ("bfloat16", "max"), ("int32", "product")]:
    base = mk(data(R, (3, 4), d), d, device="cuda")
    dist.all_reduce(base.T, op=op)
    assert base.device.type == "cuda"
    check(f"cuda all_reduce {d}", npy(base), npreduce(op, [data(r, (3, 4), d) for r in peers], d), tol(d))
x = mk(data(R, (5,), "float64"), "float64", device="cuda")
dist.broadcast(x, src=1)
check("cuda broadcast", x.numpy(), data(1, (5,), "float64"))
outs = [T.zeros(2, dtype=T.float32, device="cuda") for _ in peers]
dist.all_gather(outs, mk(data(R, (2,), "float32"), "float32", device="cuda"))
check("cuda all_gather", np.stack([o.numpy() for o in outs]),
      np.stack([data(r, (2,), "float32") for r in peers]))
finish()
'''
    monkeypatch.setenv("STRIDEX_CUDA_EMULATOR", "1")   # run_ranks passes it on (not via env=)
    counts = _passed(run_ranks(script, n=2, timeout=120), 2)
    assert min(counts.values()) == 5, counts


def test_a_rank_that_skips_a_collective_times_out():
    """Rank 1 never calls all_reduce: rank 0's wait raises DistributedError after the group's
    2 s timeout, the group then refuses more work, and the process leaves with MPI_Abort(1) (it
    cannot finalize MPI while the stuck call is pending; rank 1 may wait for it in its own
    MPI_Finalize)."""
    script = r'''
import time
import tensor as T, tensor.distributed as dist
dist.init_process_group(timeout=2)
if dist.get_rank() == 0:
    t0 = time.perf_counter()
    try:
        dist.all_reduce(T.ones(4))
        print("no error")
    except dist.DistributedError as e:
        print(f"timed out after {time.perf_counter() - t0:.1f} s: {e}", flush=True)
    try:
        dist.barrier()
    except dist.DistributedError as e:
        print(f"then: {e}", flush=True)
'''
    t0 = time.perf_counter()
    with pytest.raises(AssertionError, match="exited with 1") as e:
        run_ranks(script, n=2, timeout=60)
    msg = str(e.value)
    assert time.perf_counter() - t0 < 30
    secs = float(msg.split("timed out after ")[1].split(" s")[0])
    assert 1.9 <= secs < 10, msg
    assert "did not finish within 2 s" in msg and "a rank may have died" in msg, msg
    assert "then: barrier: the process group is unusable" in msg, msg


def test_a_rank_that_dies_ends_the_job_with_a_clear_failure():
    script = r'''
import os
import tensor as T, tensor.distributed as dist
dist.init_process_group(timeout=60)
if dist.get_rank() == 1:
    os._exit(3)
dist.all_reduce(T.ones(4))
print("rank 0 finished an all_reduce alone")
'''
    t0 = time.perf_counter()
    with pytest.raises(AssertionError, match=r"mpiexec -n 2 exited with [1-9]") as e:
        run_ranks(script, n=2, timeout=60)
    assert time.perf_counter() - t0 < 30
    assert "rank 0 finished" not in str(e.value)
    # mpiexec passes on the dead rank's status, or that of rank 0, which it killed (SIGKILL)
    assert re.match(r"mpiexec -n 2 exited with (3|9):", str(e.value)), str(e.value)


def test_collectives_before_init_raise():
    assert not dist.is_initialized()
    with pytest.raises(dist.DistributedError, match="not initialised.*init_process_group"):
        dist.all_reduce(T.ones(2))
    with pytest.raises(dist.DistributedError, match="not initialised"):
        dist.get_rank()
    with pytest.raises(dist.DistributedError, match="not initialised"):
        dist.new_group([0])
    with pytest.raises(dist.DistributedError, match="not initialised"):
        dist.send(T.ones(2), dst=0)


def test_a_launcher_of_another_mpi_is_refused():
    """mpiexec of one MPI over an mpi4py that loaded another's library gives N worlds of one
    rank (seen on a GPU image with Open MPI): init_process_group says so instead of letting
    each rank train alone. The launcher's count is faked here through Open MPI's variable."""
    out = run_ranks("""
import tensor.distributed as dist
try:
    dist.init_process_group("mpi")
except dist.DistributedError as e:
    print("refused:", e)
""", n=1, env={"OMPI_COMM_WORLD_SIZE": "2"})
    assert any("started 2 processes (OMPI_COMM_WORLD_SIZE) but MPI sees a world of 1" in line
               and "MPI4PY_LIBMPI" in line for line in out), out
