"""tensor.distributed's launcher (python -m tensor.distributed.run) and its NCCL backend: the
plumbing on the CUDA emulator with a stand-in nccl.core that moves the bytes over MPI, and the
real two-rank NCCL checks where a GPU and nccl4py are present (they say why they skip
otherwise). The per-rank helpers (PRELUDE) are tests/test_distributed.py's."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from helpers import run_ranks
from test_distributed import PRELUDE, _passed

import tensor as T
import tensor.distributed as dist


def test_run_module_launches_ranks(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = tmp_path / "hello.py"
    script.write_text("import sys\nfrom mpi4py import MPI\nc = MPI.COMM_WORLD\n"
                      "sys.stdout.write(f'hello {c.Get_rank()} {c.Get_size()} {sys.argv[1:]}\\n')\n")
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "tensor.distributed.run", "-n", "2", str(script), "a",
                        "--b"], capture_output=True, text=True, timeout=60, env=env, cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(re.findall(r"hello \d \d \[.*?\]", r.stdout)) == \
        ["hello 0 2 ['a', '--b']", "hello 1 2 ['a', '--b']"], r.stdout
    bad = subprocess.run([sys.executable, "-m", "tensor.distributed.run", str(script)],
                         capture_output=True, text=True, timeout=60, env=env, cwd=root)
    assert bad.returncode == 2 and "-n" in bad.stderr


def test_run_module_says_what_is_missing(monkeypatch):
    from tensor.distributed import run
    monkeypatch.setattr(run, "_find_mpiexec", lambda: None)
    with pytest.raises(SystemExit, match="mpiexec.*pip install"):
        run.main(["-n", "2", "x.py"])


def test_run_module_takes_the_launcher_of_the_library_mpi4py_loads(tmp_path, monkeypatch):
    """MPI4PY_LIBMPI names the MPI library: its prefix's mpiexec comes first (an image with
    another MPI's mpiexec beside the interpreter would start N worlds of one rank)."""
    from tensor.distributed import run
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    exe = tmp_path / "bin" / "mpiexec"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("MPI4PY_LIBMPI", str(tmp_path / "lib" / "libmpi.so.12"))
    assert run._find_mpiexec() == str(exe)
    monkeypatch.setenv("MPI4PY_LIBMPI", "libmpi.so.12")   # a bare name: the usual search
    assert run._find_mpiexec() != str(exe)


def _nccl4py():
    try:
        import nccl.core  # noqa: F401
        return True
    except ImportError:
        return False


def test_nccl_backend_is_importable_and_says_what_is_missing():
    from tensor.distributed import _nccl
    assert _nccl.NCCLBackend.name == "nccl"
    if _nccl4py():
        pytest.skip("nccl4py is installed: the missing-package message cannot be shown")
    with pytest.raises(dist.DistributedError, match="nccl4py.*pip install"):
        _nccl.nccl()


def test_nccl_init_without_nccl4py_raises_clearly():
    if _nccl4py():
        pytest.skip("nccl4py is installed: the missing-package message cannot be shown")
    script = r'''
import tensor.distributed as dist
try:
    dist.init_process_group(backend="nccl")
    print("no error")
except dist.DistributedError as e:
    print(f"rank {__import__('mpi4py').MPI.COMM_WORLD.Get_rank()}: {e}")
'''
    out = "\n".join(run_ranks(script, n=2, timeout=60))
    assert sorted(re.findall(r"rank (\d): the NCCL backend needs nccl4py.*?pip install nccl4py", out)) \
        == ["0", "1"], out


NCCL_WHY = None
try:
    import nccl.core  # noqa: F401
    if not T.cuda.is_available():
        NCCL_WHY = "no CUDA GPU (the NCCL backend needs a real one)"
except ImportError:
    NCCL_WHY = "nccl4py is not installed (pip install nccl4py nvidia-nccl-cu13)"


NCCL_SCRIPT = PRELUDE + r'''
dist.init_process_group(backend="nccl", timeout=60)
R, W = dist.get_rank(), dist.get_world_size()
peers = range(W)
assert dist.get_backend() == "nccl"
for d in ["float32", "float64", "int32", "int64", "int16", "float16", "bfloat16", "bool", "uint8",
          "complex64"]:
    for op in [o for o in ops_for(d) if not (d == "complex64" and o == "product")]:
        x = mk(data(R, (3, 4), d), d, device="cuda")
        dist.all_reduce(x.T, op=op)
        check(f"nccl all_reduce {d} {op}", npy(x),
              npreduce(op, [data(r, (3, 4), d) for r in peers], d), tol(d))
x = mk(data(R, (5,), "float32"), "float32")      # a CPU tensor: staged to the device and back
dist.all_reduce(x)
check("nccl all_reduce cpu tensor", x.numpy(), sum(data(r, (5,), "float32") for r in peers))
for src in peers:
    x = mk(data(R, (2, 3), "bfloat16"), "bfloat16", device="cuda")
    dist.broadcast(x, src=src)
    check(f"nccl broadcast {src}", npy(x), data(src, (2, 3), "bfloat16"), 2e-2)
x = mk(data(R, (4,), "float32"), "float32", device="cuda")
dist.reduce(x, dst=1, op="max")
want = npreduce("max", [data(r, (4,), "float32") for r in peers], "float32")
check("nccl reduce", x.numpy(), want if R == 1 else data(R, (4,), "float32"))
out = T.zeros((W, 3), dtype=T.float32, device="cuda")
dist.all_gather_into_tensor(out, mk(data(R, (3,), "float32"), "float32", device="cuda"))
check("nccl all_gather", out.numpy(), np.stack([data(r, (3,), "float32") for r in peers]))
out = T.zeros(3, dtype=T.float32, device="cuda")
dist.reduce_scatter_tensor(out, mk(data(R, (W * 3,), "float32"), "float32", device="cuda"))
check("nccl reduce_scatter", out.numpy(), sum(data(r, (W * 3,), "float32") for r in peers)[3 * R:3 * R + 3])
outs = [T.zeros(2, dtype=T.float32, device="cuda") for _ in peers]
dist.all_to_all(outs, [mk(data(R, (2,), "float32", salt=j), "float32", device="cuda") for j in peers])
for r in peers:
    check(f"nccl all_to_all {r}", outs[r].numpy(), data(r, (2,), "float32", salt=R))
sizes = lambda i, j: (i + 2 * j) % 3                          # rows rank i sends rank j
x = mk(data(R, (sum(sizes(R, j) for j in peers), 2), "float64"), "float64", device="cuda")
out = T.zeros((sum(sizes(r, R) for r in peers), 2), dtype=T.float64, device="cuda")
dist.all_to_all_single(out, x, [sizes(r, R) for r in peers], [sizes(R, j) for j in peers])
want = [data(r, (sum(sizes(r, j) for j in peers), 2), "float64")[sum(sizes(r, j) for j in range(R)):]
        [:sizes(r, R)] for r in peers]
check("nccl all_to_all_single split sizes", out.numpy(), np.concatenate(want))
if R == 0:
    dist.send(mk(data(0, (4,), "float64"), "float64", device="cuda"), dst=1)
else:
    y = T.zeros(4, dtype=T.float64, device="cuda")
    dist.recv(y, src=0)
    check("nccl send/recv", y.numpy(), data(0, (4,), "float64"))
xs = [mk(data(R, (1 << 16,), "float32", salt=i), "float32", device="cuda") for i in range(3)]
ws = [dist.all_reduce(x, async_op=True) for x in xs]
for i, w in enumerate(ws):
    w.wait()
    check(f"nccl async {i}", xs[i].numpy(), sum(data(r, (1 << 16,), "float32", salt=i) for r in peers))
raises("nccl complex product", DistributedError,
       lambda: dist.all_reduce(T.ones(2, dtype=T.complex64, device="cuda"), op="product"), "complex")
raises("nccl recv from any source", DistributedError, lambda: dist.recv(T.ones(2, device="cuda")), "src")
raises("nccl mismatched shapes", DistributedError,
       lambda: dist.all_reduce(T.ones(3 + R, device="cuda")), "do not match")
g = dist.new_group([0, 1])
x = mk(data(R, (3,), "float32"), "float32", device="cuda")
dist.all_reduce(x, group=g)
check("nccl sub-group", x.numpy(), sum(data(r, (3,), "float32") for r in peers))
dist.barrier()
finish()
'''

# A stand-in for nccl4py's nccl.core (the calls _nccl.py makes, with the real signatures),
# moving the bytes with MPI through host-addressable memory: on the CUDA emulator it checks the
# backend's plumbing (zero-copy __cuda_array_interface__ views, counts, dtypes, roots, peers,
# grouped send/recv, integer stream handles, events) where no GPU and no nccl4py are present.
FAKE_NCCL = r'''
import ctypes, os
import numpy as np
from mpi4py import MPI
SUM, PROD, MIN, MAX = MPI.SUM, MPI.PROD, MPI.MIN, MPI.MAX
COMM, CALLS, _GROUP = [], [], []

class UniqueId:
    def __init__(self, b): self.b = bytes(b)
    def __bytes__(self): return self.b
    @staticmethod
    def from_bytes(b):
        assert len(b) == 128
        return UniqueId(b)

def get_unique_id(): return UniqueId(os.urandom(128))

def _arr(buf):
    cai = buf.__cuda_array_interface__
    assert cai["version"] == 3 and cai["strides"] is None and not cai["data"][1], cai
    (n,), dt = cai["shape"], np.dtype(cai["typestr"])
    raw = (ctypes.c_uint8 * (n * dt.itemsize)).from_address(cai["data"][0])
    return np.frombuffer(raw, dt, count=n)

def _s(stream):
    assert isinstance(stream, int), stream
    CALLS.append(stream)

def group_start(): _GROUP.append([])
def group_end():
    reqs = _GROUP.pop()
    MPI.Request.Waitall([f() for f in reqs])

class Communicator:
    @classmethod
    def init(cls, nranks, rank, uid):
        c = cls()
        c.comm = COMM[-1]
        assert (c.comm.Get_size(), c.comm.Get_rank()) == (nranks, rank) and len(bytes(uid)) == 128
        assert bytes(uid) == c.comm.bcast(bytes(uid), 0)
        return c
    def allreduce(self, s, r, op, *, stream=None):
        _s(stream); assert s is r
        self.comm.Allreduce(MPI.IN_PLACE, _arr(r), op=op)
    def broadcast(self, s, r, root, *, stream=None):
        _s(stream); self.comm.Bcast(_arr(r), root=root)
    def reduce(self, s, r, op, root, *, stream=None):
        _s(stream)
        a = _arr(s)
        self.comm.Reduce(MPI.IN_PLACE if self.comm.Get_rank() == root else a, a, op=op, root=root)
    def allgather(self, s, r, *, stream=None):
        _s(stream); self.comm.Allgather(_arr(s), _arr(r))
    def reduce_scatter(self, s, r, op, *, stream=None):
        _s(stream); self.comm.Reduce_scatter_block(_arr(s), _arr(r), op=op)
    def send(self, b, peer, *, stream=None):
        _s(stream)
        if _GROUP: _GROUP[-1].append(lambda a=_arr(b): self.comm.Isend(a, dest=peer, tag=99))
        else: self.comm.Send(_arr(b), dest=peer, tag=99)
    def recv(self, b, peer, *, stream=None):
        _s(stream)
        if _GROUP: _GROUP[-1].append(lambda a=_arr(b): self.comm.Irecv(a, source=peer, tag=99))
        else: self.comm.Recv(_arr(b), source=peer, tag=99)
    def destroy(self): CALLS.append("destroy")
    def abort(self): CALLS.append("abort")
'''


def test_nccl_backend_plumbing_on_the_emulator_with_a_stand_in(tmp_path, monkeypatch):
    if _nccl4py():
        pytest.skip("nccl4py is installed: the stand-in would shadow it")
    (tmp_path / "nccl").mkdir()
    (tmp_path / "nccl" / "__init__.py").write_text("")
    (tmp_path / "nccl" / "core.py").write_text(FAKE_NCCL)
    patch = (
        "import nccl.core as _fake\n"
        "from tensor.distributed import _nccl\n"
        "_init = _nccl.NCCLBackend.__init__\n"
        "def _record(self, comm, *a):\n"
        "    _fake.COMM.append(comm)\n"
        "    _init(self, comm, *a)\n"
        "_nccl.NCCLBackend.__init__ = _record\n")
    ends = ("assert len(_fake.CALLS) > 40 and 'destroy' not in _fake.CALLS\nfinish()\n"
            "assert _fake.CALLS.count('destroy') == 2\n")     # the world and the sub-group
    script = NCCL_SCRIPT.replace("finish()\n", ends)
    monkeypatch.setenv("STRIDEX_CUDA_EMULATOR", "1")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    counts = _passed(run_ranks(patch + script, n=2, timeout=120), 2)
    assert min(counts.values()) > 40, counts


@pytest.mark.skipif(NCCL_WHY is not None, reason=f"NCCL: {NCCL_WHY}")
def test_nccl_collectives_two_ranks_on_one_gpu():
    counts = _passed(run_ranks(NCCL_SCRIPT, n=2, timeout=300), 2)
    assert min(counts.values()) > 40, counts
