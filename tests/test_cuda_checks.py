"""Deferred device index checks (tensor/cuda/checks.py, DESIGN.md "Errors").

On a GPU a bad index (integer-tensor indexing, a scatter, an embedding's ids, cross_entropy's
targets) is found by the kernel and raised at the next host synchronization of its stream,
so indexing costs no synchronization of its own. Checked here, on the device (the emulator
where there is no GPU):
- nothing raises at the op; the next host read, synchronize() or Stream.synchronize() raises
  the op's IndexError with the position and value, once; the library works afterwards; two
  bad checks read together raise at two synchronizations, in order;
- a scatter with a bad index writes nothing; a gather's output is memory-safe;
- a check on another stream waits for that stream's synchronization;
- sync_checks(True) raises in the op; more checks than the slab holds stay bounded;
- an embedding + cross_entropy training step makes no host synchronization at all;
- a CUDA graph records index checks: a bad index in a replay raises at the next
  synchronization; a compiled step's replay likewise.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT

import nn
import tensor as T
from nn import functional as F

pytestmark = pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")
DEV = "cuda"


@pytest.fixture(autouse=True)
def _deferred():
    """These tests are about the default, deferred mode (CUDA_LAUNCH_BLOCKING=1 in a re-run
    would make every check synchronous)."""
    before = T.cuda.sync_checks(False)
    yield
    T.cuda.sync_checks(before)


def _checks():
    from tensor.cuda import checks
    return checks


def _late(match: str):
    """pytest.raises for an IndexError reported at a synchronization (it says so)."""
    return pytest.raises(IndexError, match=match + r".*found on the GPU by an earlier op")


def test_each_bad_check_raises_in_turn():
    """Two bad gathers read at one synchronization: the first raises there, the second at the
    next one (not dropped, which would leave its placeholder values unreported)."""
    x = T.asarray(np.arange(6) * 10, device=DEV)
    a = x[T.asarray([9], device=DEV)]
    b = x[T.asarray([1, 8], device=DEV)]
    assert _checks().pending(0) == 2
    with _late("index 9 is out of bounds"):
        a.tolist()
    assert _checks().pending(0) == 1
    with _late("index 8 is out of bounds"):
        b.tolist()
    assert _checks().pending(0) == 0
    assert b.tolist()[0] == 10


def test_getitem_raises_at_the_next_host_read_once():
    x = T.asarray(np.arange(12.0).reshape(3, 4), device=DEV)
    before = _checks().pending(0)
    y = x[T.asarray([0, 5, 1], device=DEV)]        # no error yet, no synchronization
    assert _checks().pending(0) == before + 1
    with _late("index 5 is out of bounds for axis 0 with size 3"):
        y.numpy()
    assert _checks().pending(0) == 0
    assert y.shape == (3, 4)                        # the output exists and is safe to read
    np.testing.assert_array_equal(y.numpy()[[0, 2]], np.arange(12.0).reshape(3, 4)[[0, 1]])
    z = x[T.asarray([2, -1], device=DEV), 1:]       # the library goes on working
    np.testing.assert_array_equal(z.numpy(), [[9, 10, 11], [9, 10, 11]])


def test_take_and_synchronize():
    x = T.arange(10.0, device=DEV)
    y = x[T.asarray([1, -11, 3], device=DEV)]       # the fused 1-d take
    with _late("index -11 is out of bounds for axis 0 with size 10"):
        T.cuda.synchronize()
    assert y.tolist() == [1.0, 0.0, 3.0]            # the bad element is zero, not garbage


def test_bad_scatter_writes_nothing():
    z = T.asarray(np.arange(5.0), device=DEV)
    z[T.asarray([1, 7], device=DEV)] = T.asarray([10.0, 20.0], device=DEV)
    with _late("index 7 is out of bounds for axis 0 with size 5"):
        z.tolist()
    assert z.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    z.index_put_((T.asarray([0, 0, 9], device=DEV),), T.ones(3, device=DEV), accumulate=True)
    with _late("index 9 is out of bounds"):
        T.cuda.synchronize()
    assert z.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    z[T.asarray([1, 3], device=DEV)] = T.asarray([10.0, 30.0], device=DEV)
    assert z.tolist() == [0.0, 10.0, 2.0, 30.0, 4.0]


def test_cross_entropy_and_embedding_report_their_op():
    x = T.asarray(np.random.default_rng(0).random((4, 3), dtype=np.float32), device=DEV)
    loss = F.cross_entropy(x, T.asarray([0, 1, 7, 2], device=DEV))
    with _late(r"cross_entropy: target 7 is out of bounds for 3 classes \(row 2"):
        loss.item()
    emb = nn.Embedding(6, 2, device=DEV)
    emb(T.asarray([[1, 2], [-1, 3]], device=DEV))   # negative ids are errors, as in PyTorch
    with _late(r"Embedding: index -1 is out of range for a table of 6 rows \(at position 2"):
        T.cuda.synchronize()
    w = emb.weight.numpy()
    np.testing.assert_array_equal(emb(T.asarray([5, 0], device=DEV)).numpy(), w[[5, 0]])


def test_a_check_waits_for_its_own_stream():
    x = T.arange(4.0, device=DEV)
    s = T.cuda.Stream()
    with T.cuda.stream(s):
        x[T.asarray([9], device=DEV)]
    T.cuda.current_stream().synchronize()           # another stream's sync: not this check's
    assert _checks().pending(0) == 1
    with _late("index 9 is out of bounds"):
        s.synchronize()
    assert _checks().pending(0) == 0


def test_sync_checks_raises_in_the_op():
    x = T.arange(4.0, device=DEV)
    before = T.cuda.sync_checks(True)
    try:
        with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4$"):
            x[T.asarray([4], device=DEV)]
        assert _checks().pending(0) == 0
        assert x[T.asarray([3], device=DEV)].tolist() == [3.0]
    finally:
        T.cuda.sync_checks(before)
    assert T.cuda.sync_checks() is before


def test_more_checks_than_slots_stay_bounded():
    checks = _checks()
    x = T.arange(8.0, device=DEV)
    i = T.asarray([1], device=DEV)
    for _ in range(checks.SLOTS + 3):                 # all good: the slab is read when full
        x[i]
    assert 0 < checks.pending(0) <= checks.SLOTS
    x[T.asarray([8], device=DEV)]
    with pytest.raises(IndexError, match="index 8 is out of bounds"):
        for _ in range(checks.SLOTS):                 # the full slab is read within the loop
            x[i]
    assert checks.pending(0) < checks.SLOTS


def test_training_step_makes_no_host_synchronization(monkeypatch):
    from tensor.cuda import runtime as R
    if not R.emulated():
        pytest.skip("counts the emulator's driver calls")
    from tensor.cuda.emulator import driver as D
    T.manual_seed(0)
    emb, head = nn.Embedding(16, 8, device=DEV), nn.Linear(8, 16, device=DEV)
    ids = T.asarray(np.random.default_rng(1).integers(0, 16, (4, 5)), device=DEV)
    tgt = T.asarray(np.random.default_rng(2).integers(0, 16, 20), device=DEV)

    def step():
        h = emb(ids)
        loss = F.cross_entropy(head(h).reshape(-1, 16), tgt)
        loss.backward()
        return loss
    step()                                           # kernels compile and load
    calls = []
    for name in ("cuStreamSynchronize", "cuCtxSynchronize", "cuMemcpyDtoHAsync", "cuMemcpyDtoH"):
        real = getattr(D, name)
        monkeypatch.setattr(D, name, lambda *a, _n=name, _f=real: (calls.append(_n), _f(*a))[1])
    loss = step()
    assert calls == []
    assert _checks().pending(0) >= 3                 # the lookup, its scatter, the targets
    assert np.isfinite(loss.item()) and calls        # the read synchronizes (and checks)
    assert _checks().pending(0) == 0


def test_graph_capture_records_index_checks():
    x = T.arange(4.0, device=DEV)
    i = T.asarray([1, 2], device=DEV)
    x[i]
    T.cuda.synchronize()
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        y = x[i] * 2
    assert _checks().pending(0) == 0                 # recorded, not run: nothing to read yet
    g.replay()
    assert y.tolist() == [2.0, 4.0]
    i.copy_(T.asarray([3, 7], device=DEV))           # a bad index in a replay
    g.replay()
    g.replay()                                       # (waits once, however many replays)
    assert _checks().pending(0) == 1
    with _late("index 7 is out of bounds for axis 0 with size 4"):
        T.cuda.synchronize()
    i.copy_(T.asarray([0, 3], device=DEV))           # the word was set back: good again
    g.replay()
    assert y.tolist() == [0.0, 6.0]
    before = T.cuda.sync_checks(True)
    try:
        with pytest.raises(RuntimeError, match="index check.*cannot be recorded into a graph "
                                               "under tensor.cuda.sync_checks"):
            with T.cuda.graph(T.cuda.CUDAGraph()):
                x[i]
    finally:
        T.cuda.sync_checks(before)


def test_compiled_replay_reports_at_the_next_synchronization():
    cf = T.compile(lambda x, i: x[i] * 2)
    x = T.arange(4.0, device=DEV)
    for _ in range(3):
        assert cf(x, T.asarray([3, 0], device=DEV)).tolist() == [6.0, 0.0]
    assert cf.stats()["replays"] >= 1
    y = cf(x, T.asarray([3, 9], device=DEV))          # a replay: no synchronization of its own
    with _late(r"tensor.compile: .*a replayed \w+ found an index out of range \(at position 1\)"):
        y.tolist()
    assert cf(x, T.asarray([1, 2], device=DEV)).tolist() == [2.0, 4.0]   # still usable


def test_class_index_losses_and_unpooling_check_on_the_device():
    """multi_margin_loss / multilabel_margin_loss targets and max_unpool's indices are checked
    where they are (no host read of them), raising at the next synchronization."""
    x = T.asarray(np.zeros((2, 3)), device=DEV)
    loss = F.multi_margin_loss(x, T.asarray([0, 3], device=DEV))
    with _late(r"multi_margin_loss: target holds the class index 3, out of range \[0, 3\)"):
        loss.item()
    y = F.max_unpool1d(T.asarray(np.ones((1, 1, 2)), device=DEV),
                       T.asarray(np.array([[[0, -1]]]), device=DEV), 2)
    with _late(r"max_unpool1d: indices hold the position -1, out of range \[0, 4\)"):
        y.numpy()
