"""batch_isend_irecv, the object collectives gather_object / scatter_object_list /
send_object_list / recv_object_list, and torchrun's environment variables (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE) under the launcher and after init_process_group: PyTorch code
that used them had failed with AttributeError or KeyError."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import run_ranks
from test_distributed import PRELUDE, _passed

SCRIPT = PRELUDE + r'''
for v in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
    os.environ.pop(v, None)       # mpiexec without the launcher: init_process_group sets them
dist.init_process_group(backend="mpi", timeout=30)
R, W = dist.get_rank(), dist.get_world_size()
other = 1 - R
check("env after init", [os.environ[v] for v in ("RANK", "WORLD_SIZE", "LOCAL_RANK",
                                                  "LOCAL_WORLD_SIZE")], [str(R), "2", str(R), "2"])

# batch_isend_irecv: a ring exchange, both ranks posting the send first (blocking sends in that
# order would wait for each other on large messages)
n = 1 << 17
x = T.arange(n, dtype=T.float64) + 100.0 * R
y = T.zeros(n, dtype=T.float64)
z = T.zeros((2, 3), dtype=T.int32)
ops = [dist.P2POp(dist.isend, x, other), dist.P2POp(dist.irecv, y, other),
       dist.P2POp(dist.isend, T.full((3, 2), R + 5, dtype=T.int32).T, other, tag=7),
       dist.P2POp(dist.irecv, z, other, tag=7)]
works = dist.batch_isend_irecv(ops)
for w in works:
    w.wait()
check("batch_isend_irecv", y.numpy(), np.arange(n) + 100.0 * other)
check("batch_isend_irecv strided", z.numpy(), np.full((2, 3), other + 5))
check("batch_isend_irecv handles", len(works), 4)
raises("batch_isend_irecv empty", ValueError, lambda: dist.batch_isend_irecv([]), "non-empty")
raises("P2POp bad op", ValueError, lambda: dist.P2POp(dist.send, x, other), "isend")

# gather_object: only the destination's list is filled
objs = [None] * W if R == 1 else None
dist.gather_object({"r": R, "pad": "x" * (10 * R + 1)}, objs, dst=1)
if R == 1:
    check("gather_object", objs == [{"r": r, "pad": "x" * (10 * r + 1)} for r in range(W)], True)
if R == 0:   # the destination refuses a short list before it communicates
    raises("gather_object list size", ValueError, lambda: dist.gather_object(1, [None], dst=0),
           "2 entries")

# scatter_object_list
out = [None]
dist.scatter_object_list(out, [("a", [1, 2]), {"b": 3.5}] if R == 0 else None, src=0)
check("scatter_object_list", out[0] == [("a", [1, 2]), {"b": 3.5}][R], True)
raises("scatter_object_list output", ValueError, lambda: dist.scatter_object_list([], None), "non-empty")

# send_object_list / recv_object_list
if R == 0:
    dist.send_object_list(["hello", {"k": np.arange(3)}], dst=1)
else:
    got = [None, None]
    sender = dist.recv_object_list(got)
    check("recv_object_list", [sender, got[0], got[1]["k"].tolist()] == [0, "hello", [0, 1, 2]],
          True)
x = T.ones(3) * (R + 1)
dist.all_reduce(x)
check("group still works", x.numpy(), np.full(3, 3.0))
finish()
'''


def test_distributed_more_two_ranks():
    got = _passed(run_ranks(SCRIPT, n=2, timeout=120), 2)
    assert min(got.values()) >= 10, got


def test_launcher_gives_torchruns_environment(tmp_path):
    """`python -m tensor.distributed.run -n 2 script.py args` runs the script as `python
    script.py args` would (argv, __name__, sys.path[0]) with RANK / WORLD_SIZE / LOCAL_RANK /
    LOCAL_WORLD_SIZE set before it starts (scripts written for torchrun read them first)."""
    pytest.importorskip("mpi4py")
    from tensor.distributed.run import _find_mpiexec
    if _find_mpiexec() is None:
        pytest.skip("mpiexec not found")
    script = tmp_path / "show_env.py"
    script.write_text("import os, sys\n"
                      "print('ENV', os.environ['RANK'], os.environ['WORLD_SIZE'], "
                      "os.environ['LOCAL_RANK'], os.environ['LOCAL_WORLD_SIZE'], __name__, "
                      "sys.argv[1:], sys.path[0] == os.path.dirname(os.path.abspath(__file__)))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK",
                                                            "LOCAL_WORLD_SIZE")}
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "tensor.distributed.run", "-n", "2", str(script),
                        "--lr", "3"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = sorted(ln for ln in r.stdout.splitlines() if ln.startswith("ENV"))
    assert lines == [f"ENV {k} 2 {k} 2 __main__ ['--lr', '3'] True" for k in (0, 1)], r.stdout
