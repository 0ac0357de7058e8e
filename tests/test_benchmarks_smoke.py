"""The benchmark scripts at tiny sizes (their --smoke modes), on the CPU and on "cuda" (the
emulator without a GPU): they run and print the rows a GPU session reads, so a lent GPU's time
is not lost to a crash. Timings are never asserted: they belong in the benchmarks' output. The
tiny GPT and digits MLP written twice (ours, torch.nn) are checked to compute the same losses
when PyTorch's CPU build is importable."""
from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT

import tensor as T

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}"))]
OPS = ["add", "mul", "exp", "tanh", "sigmoid", "sqrt", "maximum", "where", "astype f16", "sum",
       "max", "mean axis -1", "argmax", "cumsum", "matmul"]


def _load(name: str):
    """benchmarks/<name>.py as the top-level module the scripts import each other as."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


@pytest.mark.parametrize("device", DEVICES)
def test_bench_train_smoke_rows(device, capsys):
    rows = _load("bench_train").main(["--device", device, "--smoke"])
    out = capsys.readouterr().out
    names = ["train step digits MLP b4", "train step digits MLP b16", "train step digits CNN b4",
             "train step GPT L1 d16 b2x8"]
    assert [r[0] for r in rows] == [n + s for n in names for s in ("", " captured")], out
    assert all(r[1] > 0 and "eager/captured" in r[2] for r in rows[1::2]), out
    rows = rows[::2]
    classes = [10, 10, 10, 32]
    for (name, ms, measure, ratio, _), c in zip(rows, classes):
        assert ms > 0 and name in out
        losses = [float(v) for v in re.findall(r"\d+\.\d+", measure)]
        # an untrained classifier: about log(classes) (the GPT's N(0, 1) embeddings add spread)
        assert abs(losses[0] - math.log(c)) < 1.0, measure
        if len(losses) == 2:                       # torch present: same weights, same loss
            assert losses[1] == pytest.approx(losses[0], abs=2e-4), measure
            assert float(ratio) > 0


@pytest.mark.parametrize("device", DEVICES)
def test_tiny_gpt_forward_and_step(device):
    G = _load("tiny_gpt")
    cfg = G.SMOKE
    T.manual_seed(0)
    model = G.TinyGPT(cfg, device)
    idx, tgt = G.random_batch(cfg, device)
    assert model(idx).shape == (cfg.batch, cfg.context, cfg.vocab)
    opt = G.optimizer(model)
    losses = []
    for _ in range(5):   # the same batch again and again: the loss must fall
        opt.zero_grad()
        loss = G.loss(model, idx, tgt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses
    # causal: changing the last token leaves every earlier position's logits unchanged
    changed = np.asarray(idx.to("cpu")).copy()
    changed[:, -1] = (changed[:, -1] + 1) % cfg.vocab
    a = np.asarray(model(idx).to("cpu"))
    b = np.asarray(model(T.asarray(changed, device=device)).to("cpu"))
    np.testing.assert_allclose(a[:, :-1], b[:, :-1], rtol=1e-5, atol=1e-5)
    assert not np.allclose(a[:, -1], b[:, -1])


def test_tiny_gpt_matches_torch_twin():
    torch = pytest.importorskip("torch", reason="PyTorch's CPU build is the reference")
    G = _load("tiny_gpt")
    cfg = G.GPTConfig(vocab=48, context=12, d_model=32, n_heads=4, n_layers=2, batch=3)
    T.manual_seed(1)
    ours, theirs = G.TinyGPT(cfg), G.torch_gpt(cfg)
    G.copy_weights(ours, theirs)
    idx, tgt = G.random_batch(cfg, seed=1)
    tidx, ttgt = G.torch_batch(idx, tgt, "cpu")
    opt, topt = G.optimizer(ours), G.torch_optimizer(theirs)
    for _ in range(3):
        opt.zero_grad()
        topt.zero_grad()
        loss, tloss = G.loss(ours, idx, tgt), G.torch_loss(theirs, tidx, ttgt)
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
    got = np.asarray(ours.head.weight)
    np.testing.assert_allclose(got, theirs.head.weight.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert torch.isfinite(tloss)


@pytest.mark.parametrize("device", DEVICES)
def test_bench_speedup_smoke(device, tmp_path, capsys):
    args = ["--smoke", "--threads", "2", "--out-dir", str(tmp_path)]
    sweep = _load("bench_speedup").main(args + ([] if device == "cuda" else ["--no-cuda"]))
    out = capsys.readouterr().out
    labels = ["cpu 1 thread", "cpu 2 threads"] + (["cuda"] if device == "cuda" else [])
    target = labels[-1]
    assert sorted(sweep.times) == sorted(OPS)
    for op in OPS:
        assert sorted(sweep.times[op]) == sorted(labels)
        for label in labels:
            ts = sweep.times[op][label]
            assert len(ts) == 2 and all(t is not None and t > 0 for t in ts), (op, label, ts)
    title = f"speedup of {target} over cpu 1 thread"
    assert title in out
    table = out[out.index(title):].splitlines()
    assert [line.split()[0] for line in table[2:4]] == ["add", "mul"]
    md = (tmp_path / "speedup.md").read_text()
    assert f"**{title}" in md and "| matmul |" in md and "| 2^4 | 2^6 |" in md
    png = tmp_path / "speedup.png"
    if importlib.util.find_spec("matplotlib"):
        assert png.stat().st_size > 1000
    else:
        assert not png.exists() and "matplotlib is not installed" in out


def test_bench_speedup_skips_what_would_take_too_long():
    mod = _load("bench_speedup")
    settings = [("cpu 1 thread", "cpu", 1)]
    # every call predicted slower than max_call from the first size on: only 2^4 is measured
    slow = mod.Sweep([16, 64, 256], settings, budget=0.001, max_call=1e-12, time_limit=60)
    slow.run()
    for op in OPS:
        t = slow.times[op]["cpu 1 thread"]
        assert t[0] > 0 and t[1:] == [None, None], (op, t)
    assert len(slow.skipped) == len(OPS)            # the next size, once per op; then implied
    assert all("predicted" in s and "2^6" in s for s in slow.skipped)
    # past the time limit the CPU is not measured at all
    late = mod.Sweep([16], settings, budget=0.001, max_call=10, time_limit=0)
    late.run()
    assert all(late.times[op]["cpu 1 thread"] == [None] for op in OPS)
    assert all("--time-limit" in s for s in late.skipped)


@pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")
def test_bench_cuda_sort_rows_smoke():
    """bench_cuda's sort rows (both CUDA sort paths) run and report a rate."""
    mod = _load("bench_cuda")
    b = mod.Bench(smoke=True, quick=False)
    mod.sort_rows(b)
    assert [r[0] for r in b.rows] == ["argsort 64x256 f32 (smem)", "argsort 2x4100 f32 (radix)"]
    assert all(r[1] > 0 and r[2].endswith("Gelem/s") for r in b.rows), b.rows


def test_bench_attention_smoke(capsys):
    """The attention benchmark's rows: positive times for ours (and torch's when importable)
    and a measured peak memory (tests/test_sdpa.py checks its size at L = 1024)."""
    rows = _load("bench_attention").main(["--smoke"])
    out = capsys.readouterr().out
    assert [r[0] for r in rows] == ["L=S=128 H=2", "L=S=128 H=2 causal", "peak L=128"], out
    for name, f0, f1, b0, b1 in rows[:2]:
        assert f0 > 0 and b0 > f0 * 0.5, (name, out)
        assert (f1 is None) == (b1 is None) and (f1 is None or f1 > 0 and b1 > 0), (name, out)
    assert rows[2][1] > 0 and rows[2][2] == 128 * 128 * 4, out


def test_bench_fusion_smoke(capsys):
    """The fusion benchmark's rows at small sizes (it checks fused == eager itself)."""
    rows = _load("bench_fusion").main(["--max-log2", "12", "--budget", "0.01"])
    out = capsys.readouterr().out
    assert [r[0] for r in rows] == [10, 12] and "fused/unfused" in out
    for _, t, gbs, ai in rows:
        assert all(v > 0 for v in t.values()) and gbs > 0 and ai == 0.15


@pytest.mark.parametrize("model", ["mlp", "gpt"])
def test_profile_step_smoke(model, capsys):
    """profile_step.py (a GPU session's host-time profile) times and profiles a step."""
    _load("profile_step").main(["--device", "cpu", "--model", model, "--steps", "2", "--top", "5"])
    out = capsys.readouterr().out
    m = re.search(rf"{model} step on cpu: ([0-9.]+) ms", out)
    assert m and float(m.group(1)) > 0 and "function calls" in out and "tottime" in out, out


@pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")
def test_bench_rows_smoke(capsys):
    """bench_rows.py times both row-kernel variants and leaves ROW_CACHE as it was."""
    from tensor.cuda import nn_kernels as NK
    before = NK.ROW_CACHE
    rows = _load("bench_rows").main(["--smoke"])
    out = capsys.readouterr().out
    assert len(rows) == 16 and all(u > 0 and c > 0 for _, u, c in rows), out
    assert NK.ROW_CACHE == before and "cached/uncached" in out


def test_bench_amp_smoke(capsys):
    """bench_amp.py: a float32, bfloat16 and float16 row per case, positive times and peaks."""
    rows = _load("bench_amp").main(["--smoke"])
    out = capsys.readouterr().out
    assert [r[0].rsplit(" ", 1)[-1] for r in rows[:6]] == ["fp32", "bf16", "fp16"] * 2, out
    assert len(rows) == 9 and all(r[1] > 0 for r in rows), out
    assert all(r[2] is not None and r[2] >= 0 for r in rows[:6]), out


def test_bench_fft_smoke(capsys):
    """bench_fft.py: six cases, positive times, NumPy's times and our error against it."""
    rows = _load("bench_fft").main(["--smoke"])
    out = capsys.readouterr().out
    assert len(rows) == 6 and all(ms > 0 and r > 0 and e < 1e-5 for _, ms, r, e in rows), out


def test_bench_linalg_smoke(capsys):
    """bench_linalg.py: five ops at two sizes, positive times, NumPy's times, small residuals."""
    rows = _load("bench_linalg").main(["--smoke"])
    out = capsys.readouterr().out
    assert len(rows) == 10 and all(ms > 0 and r > 0 and e < 1e-12 for _, ms, r, e in rows), out


def test_bench_distributed_smoke(capsys):
    """bench_distributed.py: launches itself on 2 MPI ranks; two sizes, positive times for raw
    mpi4py and ours, and their bandwidths (its ranks check that ours equals mpi4py's result)."""
    pytest.importorskip("mpi4py", reason="bench_distributed needs mpi4py and the mpich wheel")
    rows = _load("bench_distributed").main(["--smoke"])
    out = capsys.readouterr().out
    assert [r[0] for r in rows] == ["4 KiB", "64 KiB"], out
    for _, raw, ours, ratio, raw_bw, our_bw, unchecked in rows:
        # the table prints rounded times: their ratio is the printed ratio to rounding only
        assert raw > 0 and ours > 0 and ratio == pytest.approx(ours / raw, rel=0.3), out
        assert raw_bw > 0 and our_bw > 0 and unchecked > 0, out


def test_bench_ddp_smoke(capsys):
    """bench_ddp.py: launches itself on 1 and 2 ranks; positive step and all-reduce times, the
    time waited for the buckets, and a hidden share in [0, 100] on 2 ranks."""
    pytest.importorskip("mpi4py", reason="bench_ddp needs mpi4py and the mpich wheel")
    rows = _load("bench_ddp").main(["--smoke", "--steps", "3"])
    out = capsys.readouterr().out
    assert [r[0] for r in rows] == [1, 2], out
    for n, bare, over, after, alone, waited, hidden in rows:
        assert min(bare, over, after, alone) > 0 and waited >= 0, out
        assert (hidden is None) == (n == 1) and (n == 1 or 0 <= hidden <= 100), out


def test_bench_sparse_smoke(capsys):
    """bench_sparse.py: the SpMM rows (ours first), then scatter_reduce and segment rows; our
    results agree with SciPy / NumPy (the printed differences)."""
    rows = _load("bench_sparse").main(["--smoke"])
    out = capsys.readouterr().out
    names = [r[0] for r in rows]
    assert names[0] == "spmm tensor.sparse" and rows[0][2] == 1.0, out
    for want in ("scatter_reduce sum tensor", "scatter_reduce amax tensor",
                 "segment_sum (sorted ids) tensor", "segment_max (sorted ids) tensor"):
        assert want in names, out
    assert all(ms > 0 and ratio > 0 for _, ms, ratio in rows), out
    errs = [float(e) for e in re.findall(r"max relative difference vs \w+:? ([0-9.e+-]+)", out)]
    assert len(errs) >= 2 and max(errs) < 1e-5, out
