"""Anomaly detection (autograd.detect_anomaly / set_detect_anomaly, PyTorch's): NaN from a
backward rule raises naming the op and the forward call's line; an error raised in backward
carries the forward trace; the modes nest and restore; every op is recorded in Python while
it is on (so every node has its trace), and the C fast path comes back after."""
from __future__ import annotations

import warnings

import pytest

import autograd
import tensor as T

pytestmark = [pytest.mark.usefixtures("device"),
              pytest.mark.filterwarnings("ignore:autograd. anomaly detection is on")]


def _leaf(v):
    return T.tensor(v, dtype=T.float64, requires_grad=True)


def test_nan_in_backward_names_the_op_and_the_forward_line():
    x = _leaf([0.0, 1.0])
    with autograd.detect_anomaly():
        y = T.sqrt(x) * 0.0   # the forward line the message quotes
        with pytest.raises(RuntimeError, match="function 'sqrt' returned NaN") as e:
            y.sum().backward()
    assert "y = T.sqrt(x) * 0.0" in str(e.value) and "test_autograd_anomaly.py" in str(e.value)
    assert not autograd.is_anomaly_enabled()
    # without anomaly detection the same backward runs and leaves NaN in .grad
    x2 = _leaf([0.0, 1.0])
    (T.sqrt(x2) * 0.0).sum().backward()
    assert T.isnan(x2.grad).tolist() == [True, False]


def test_check_nan_off_and_set_detect_anomaly():
    x = _leaf([0.0])
    with autograd.set_detect_anomaly(True, check_nan=False):
        assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
        (T.sqrt(x) * 0.0).sum().backward()       # no check: NaN reaches .grad
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    autograd.set_detect_anomaly(True)              # a call switches at once
    try:
        assert autograd.is_anomaly_enabled()
        with autograd.detect_anomaly():            # nested: restores "on"
            pass
        assert autograd.is_anomaly_enabled()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()


def test_error_in_backward_carries_the_forward_trace():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    @autograd.detect_anomaly()
    def run():
        x = _leaf([1.0, 2.0])
        out = Bad.apply(x)   # the line the note quotes
        out.sum().backward()

    with pytest.raises(ValueError, match="broken backward") as e:
        run()
    notes = "".join(getattr(e.value, "__notes__", []))
    assert "forward call of 'BadBackward'" in notes and "out = Bad.apply(x)" in notes


def test_every_node_gets_a_trace_and_the_fast_path_returns():
    from tensor._hook import fast_graph
    x = _leaf([1.0, 2.0])
    with autograd.detect_anomaly():
        y = x * x + 1.0
    assert y.grad_fn.trace is not None and "y = x * x + 1.0" in "".join(y.grad_fn.trace)
    import tensor._hook as hook
    assert hook.fast_graph is fast_graph   # restored (None only while anomaly mode is on)
    z = x * x + 1.0
    assert getattr(z.grad_fn, "trace", None) is None


def test_detect_anomaly_warns():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with autograd.detect_anomaly():
            pass
    assert any("anomaly detection is on" in str(x.message) for x in w)
