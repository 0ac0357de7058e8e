"""Fixes from a sanitizer sweep of the C kernels (AddressSanitizer + UndefinedBehaviorSanitizer
over the CPU test suite, and adversarial inputs): each test names what it caught."""
from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import tensor as T
from tensor.cpu import fastpath


def _fast_record_installed() -> bool:
    import autograd  # noqa: F401  (installs autograd's record, which the C path wraps)
    T.ones(1)        # the first CPU allocation installs the fast path
    return fastpath._mod is not None and T._hook.record_accel is not None


def test_fast_record_does_not_leak_a_set_per_node():
    """csrc/fp_graph.h attach_node took a new reference to the rule's kept set (kept_set: a new
    set when the rule has `reads`) and never released it: every op autograd recorded through
    the C path leaked one Python object (a training loop grew without bound; about 1.0 block
    per step here)."""
    if not _fast_record_installed():
        pytest.skip("the C fast path (or its autograd record) is not installed")
    x = T.ones(4, requires_grad=True)
    w = T.ones(4, requires_grad=True)

    def step():
        return x * w + x   # multiply's rule has reads: its kept set was a fresh set each time

    for _ in range(200):
        step()
    gc.collect()
    before = sys.getallocatedblocks()
    n = 5000
    for _ in range(n):
        step()
    gc.collect()
    per_step = (sys.getallocatedblocks() - before) / n
    assert per_step < 0.2, f"{per_step:.3f} Python blocks leaked per recorded op"
    y = step()
    T.sum(y).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))
    np.testing.assert_allclose(w.grad.numpy(), np.full(4, 1.0))


@pytest.mark.parametrize("case", ["table", "scalar", "plan", "record"])
def test_fast_paths_hold_no_python_objects_per_call(case):
    """The other C paths (the kernel table, scalar operands, layout plans, the C record of a
    non-fast op) take and give back the same references: no growth per call either (a guard
    for the kind of leak above)."""
    if not _fast_record_installed():
        pytest.skip("the C fast path (or its autograd record) is not installed")
    c = T.ones((3, 4))
    b = T.ones(4)
    xs = T.ones((4, 3)).T
    x = T.ones((3, 4), requires_grad=True)
    step = {"table": lambda: (c + c, c * c, -c, c / c),
            "scalar": lambda: (c * 2.0, 3 - c, c + 1, 2.0 / c),
            "plan": lambda: (c + b, xs + xs, xs * 2.0, b - c),
            "record": lambda: (T.exp(x), T.sum(x), T.sin(x) + x)}[case]
    for _ in range(300):
        step()
    gc.collect()
    before = sys.getallocatedblocks()
    n = 3000
    for _ in range(n):
        step()
    gc.collect()
    per_call = (sys.getallocatedblocks() - before) / n
    assert per_call < 0.2, f"{case}: {per_call:.3f} Python blocks held per call"
