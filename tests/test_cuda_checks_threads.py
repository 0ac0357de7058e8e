"""Index checks from several threads at once (tensor/cuda/checks.py): two threads reading the
same waiting checks at their synchronizations each gave the words back, so a word sat twice in
the free list; two later checks then shared it, the second one's reset erased the first one's
bad index, and the op raised nothing (found by running tests/test_threads.py before a bad-index
test: cross_entropy with a target out of range returned a loss silently)."""
import threading

import numpy as np
import pytest

import nn
import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def test_checks_from_threads_keep_each_word_once(device):
    if device != "cuda":
        pytest.skip("the deferred index checks are the GPU's")
    from tensor.cuda import checks
    x = T.asarray(np.arange(64.0).reshape(8, 8))

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            idx = T.asarray(rng.integers(0, 8, 5))
            assert x[idx].sum().item() == float(np.arange(64.0).reshape(8, 8)[idx.numpy()].sum())

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    slab = checks._slabs[T.device(device).index or 0]
    with slab.lock:
        assert len(slab.free) == len(set(slab.free)), "a check word was given back twice"
    with pytest.raises(IndexError, match="out of bounds"):
        nn.functional.cross_entropy(T.ones((3, 5)), T.asarray([0, 7, 1]), weight=T.ones(5)).item()
