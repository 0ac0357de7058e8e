"""The examples' code paths at tiny sizes (their --quick mode): they run, train, and report
sensible numbers. scikit-learn (the digits data) and matplotlib (the plots) are optional."""
from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pytest

import tensor as T

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _check_plot(path: Path, capsys) -> None:
    if _has("matplotlib"):
        assert path.stat().st_size > 1000
    else:
        assert not path.exists()
        assert "matplotlib is not installed" in capsys.readouterr().out


def test_train_digits_quick(tmp_path, capsys):
    pytest.importorskip("sklearn", reason="the digits data comes from scikit-learn")
    mod = _load("train_digits")
    xtr, ytr, xte, yte = mod.load_data()
    assert xtr.shape == (1347, 1, 8, 8) and xte.shape == (450, 1, 8, 8)
    assert 0.0 <= xtr.min() and xtr.max() <= 1.0 and set(ytr.tolist()) == set(range(10))
    out = tmp_path / "digits.png"
    hist = mod.main(epochs=2, quick=True, out=str(out))
    assert set(hist) == {"mlp", "cnn"}
    for h in hist.values():
        assert len(h["loss"]) == len(h["acc"]) == len(h["time"]) == 2
        assert 1.5 < h["loss"][0] < 3.5  # one batch from the initial weights: about ln(10)
        assert all(math.isfinite(v) for v in h["loss"]) and all(0 <= a <= 1 for a in h["acc"])
    _check_plot(out, capsys)


def test_train_digits_cli(tmp_path):
    pytest.importorskip("sklearn", reason="the digits data comes from scikit-learn")
    r = subprocess.run([sys.executable, str(EXAMPLES / "train_digits.py"), "--quick", "--epochs",
                        "1", "--out", str(tmp_path / "d.png")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "mlp: test accuracy" in r.stdout and "cnn: test accuracy" in r.stdout


def test_digits_models_shapes():
    mod = _load("train_digits")  # the models need no scikit-learn
    x = T.zeros((5, 1, 8, 8), dtype=T.float32)
    assert mod.make_mlp()(x).shape == (5, 10)
    assert mod.make_cnn()(x).shape == (5, 10)


def test_checkpointing_quick(capsys):
    res = _load("checkpointing").main(quick=True)
    plain, ckpt = res["plain"], res["checkpointed"]
    assert plain["loss"] == ckpt["loss"]  # recomputation is exact
    assert plain["loss"][-1] < plain["loss"][0]
    assert 0 < ckpt["peak_mib"] < plain["peak_mib"]
    assert "losses identical" in capsys.readouterr().out


def test_mlp_speedup_quick(tmp_path, capsys):
    n0 = T.get_num_threads()
    out = tmp_path / "speedup.png"
    res = _load("mlp_speedup").main(quick=True, out=str(out))
    assert T.get_num_threads() == n0
    assert "cpu 1 thread" in res and all(len(v) == 2 and min(v) > 0 for v in res.values())
    _check_plot(out, capsys)


def test_gcn_digits_quick(tmp_path, capsys):
    """gcn_digits.py --quick: a 400-node k-NN graph, the GCN trains through tensor.sparse SpMM."""
    pytest.importorskip("sklearn", reason="the digits data comes from scikit-learn")
    out = tmp_path / "gcn.png"
    res = _load("gcn_digits").main(quick=True, out=str(out))
    assert res["nodes"] == 400 and res["edges"] > 400 * 10 and res["train"] == 40
    assert len(res["loss"]) == len(res["acc"]) == 30
    assert all(math.isfinite(v) for v in res["loss"])
    assert res["loss"][-1] < 0.5 * res["loss"][0]
    assert res["test_acc"] > 0.6              # chance is 0.1
    printed = capsys.readouterr().out
    assert "test accuracy" in printed
    assert out.stat().st_size > 1000 if _has("matplotlib") else "matplotlib is not installed" in printed
