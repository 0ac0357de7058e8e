"""Sparse gradients: nn.Embedding(sparse=True) gives weight.grad as a tensor.sparse.SparseCOO
(one entry per looked-up id and column, duplicates uncoalesced, as PyTorch's), accumulated by
concatenation over backward passes (dense when mixed with a dense gradient); SGD applies it
without densifying, SparseAdam is PyTorch's lazy Adam; against the dense path, a NumPy
reference and (where installed) PyTorch.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from nn.optim import SGD, Adam, SparseAdam
from tensor.sparse import SparseCOO

IDS = [[1, 1, 3], [0, 5, 1]]


def _pair(num=7, dim=3, dtype=T.float64, padding_idx=None, seed=0):
    """A sparse and a dense Embedding with the same weights."""
    w = np.random.default_rng(seed).standard_normal((num, dim))
    s = nn.Embedding(num, dim, padding_idx=padding_idx, sparse=True,
                     _weight=T.asarray(w.copy(), dtype=dtype))
    d = nn.Embedding(num, dim, padding_idx=padding_idx, _weight=T.asarray(w.copy(), dtype=dtype))
    return s, d


def _loss(emb, ids, seed=1):
    out = emb(T.tensor(ids))
    c = np.random.default_rng(seed).standard_normal(out.shape)
    return (out * T.asarray(c, dtype=out.dtype)).sum()


@pytest.mark.usefixtures("device")
def test_sparse_grad_equals_dense_grad():
    for pad in (None, 5):
        s, d = _pair(padding_idx=pad)
        _loss(s, IDS).backward()
        _loss(d, IDS).backward()
        g = s.weight.grad
        assert isinstance(g, SparseCOO) and not g.is_coalesced()
        assert g.shape == (7, 3) and g.dtype is T.float64 and g.device == s.weight.device
        ids = [i for i in np.ravel(IDS) if i != pad]
        assert g.nnz == 3 * len(ids)   # duplicates kept, padding occurrences left out
        assert g.indices().numpy()[0].tolist() == np.repeat(ids, 3).tolist()
        np.testing.assert_allclose(g.to_dense().numpy(), d.weight.grad.numpy(), rtol=0,
                                   atol=1e-12)
        np.testing.assert_allclose(g.coalesce().to_dense().numpy(), d.weight.grad.numpy(),
                                   rtol=0, atol=1e-12)


def test_accumulation_concatenates_and_mixes_with_dense():
    s, d = _pair()
    for seed in (1, 2):
        _loss(s, IDS, seed).backward()
        _loss(d, IDS, seed).backward()
    g = s.weight.grad
    assert isinstance(g, SparseCOO) and g.nnz == 2 * 6 * 3
    np.testing.assert_allclose(g.to_dense().numpy(), d.weight.grad.numpy(), atol=1e-12)
    # a dense gradient of the same weight in the same pass, or in a later one: dense sum
    (_loss(s, IDS) + (s.weight * s.weight).sum()).backward()
    (_loss(d, IDS) + (d.weight * d.weight).sum()).backward()
    assert type(s.weight.grad) is T.Tensor
    np.testing.assert_allclose(s.weight.grad.numpy(), d.weight.grad.numpy(), atol=1e-12)
    s.weight.grad = None
    (s.weight ** 2).sum().backward()
    _loss(s, [[2]]).backward()
    assert type(s.weight.grad) is T.Tensor
    # autograd.grad returns the sparse gradient, without touching .grad
    s.weight.grad = None
    (gw,) = autograd.grad(_loss(s, IDS), [s.weight])
    assert isinstance(gw, SparseCOO) and s.weight.grad is None
    # a non-leaf weight takes the dense path (its producer's rule wants a dense gradient)
    w = T.ones((4, 2), dtype=T.float64, requires_grad=True)
    nn.functional.embedding(T.tensor([1, 1]), w * 2.0, sparse=True).sum().backward()
    assert w.grad.tolist() == [[0, 0], [4, 4], [0, 0], [0, 0]]


@pytest.mark.usefixtures("device")
def test_sgd_sparse_step_equals_dense_step():
    for maximize in (False, True):
        s, d = _pair()
        untouched = s.weight.numpy()[[2, 4, 6]].copy()
        os_, od = (SGD(e.parameters(), lr=0.1, maximize=maximize) for e in (s, d))
        for seed, ids in ((1, IDS), (2, [[6, 6, 6]]), (3, [[0]])):
            for e, o in ((s, os_), (d, od)):
                o.zero_grad()
                _loss(e, ids, seed).backward()
                o.step()
        np.testing.assert_allclose(s.weight.numpy(), d.weight.numpy(), rtol=0, atol=1e-12)
        assert s.weight.numpy()[[2, 4]].tolist() == untouched[:2].tolist()   # bitwise
        os_.zero_grad(set_to_none=False)   # a sparse grad becomes None either way
        assert s.weight.grad is None


def _numpy_sparse_adam(w, steps, lr, betas, eps):
    """PyTorch's SparseAdam in NumPy: lazy moments at the coalesced rows present."""
    w = w.copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    b1, b2 = betas
    for t, (ids, c) in enumerate(steps, 1):
        g = np.zeros_like(w)
        np.add.at(g, np.ravel(ids), c.reshape(-1, w.shape[1]))
        rows = np.unique(np.ravel(ids))
        gr = g[rows]
        m[rows] += (gr - m[rows]) * (1 - b1)
        v[rows] += (gr * gr - v[rows]) * (1 - b2)
        step = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w[rows] += -step * (m[rows] / (np.sqrt(v[rows]) + eps))
    return w


def _steps():
    rng = np.random.default_rng(4)
    out = []
    for ids in (IDS, [[6, 6, 2]], [[1, 0]], [[3, 3, 3, 5]]):
        out.append((ids, rng.standard_normal(np.shape(ids) + (3,))))
    return out


def _run_ours(w, steps, dtype, **kw):
    e = nn.Embedding(*w.shape, sparse=True, _weight=T.asarray(w.copy(), dtype=dtype))
    opt = SparseAdam(e.parameters(), **kw)
    for ids, c in steps:
        opt.zero_grad()
        (e(T.tensor(ids)) * T.asarray(c, dtype=dtype)).sum().backward()
        opt.step()
    return e.weight.numpy(), opt


def test_sparse_adam_matches_numpy_reference():
    w = np.random.default_rng(0).standard_normal((7, 3))
    kw = dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6)
    got, opt = _run_ours(w, _steps(), T.float64, **kw)
    want = _numpy_sparse_adam(w, _steps(), **kw)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[4].tolist() == w[4].tolist()     # never looked up: never moved
    st = opt.state[opt.param_groups[0]["params"][0]]
    assert st["step"] == 4 and st["exp_avg"].numpy()[4].tolist() == [0.0, 0.0, 0.0]
    got32, _ = _run_ours(w, _steps(), T.float32, **kw)
    np.testing.assert_allclose(got32, want, rtol=0, atol=1e-5)


def test_sparse_adam_matches_pytorch():
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(0).standard_normal((7, 3)).astype(np.float32)
    for maximize in (False, True):
        kw = dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, maximize=maximize)
        got, _ = _run_ours(w, _steps(), T.float32, **kw)
        te = torch.nn.Embedding(7, 3, sparse=True, _weight=torch.tensor(w))
        to = torch.optim.SparseAdam(te.parameters(), **kw)
        for ids, c in _steps():
            to.zero_grad()
            (te(torch.tensor(ids)) * torch.tensor(c, dtype=torch.float32)).sum().backward()
            to.step()
        np.testing.assert_allclose(got, te.weight.detach().numpy(), rtol=0, atol=2e-6)


def test_errors():
    s, _ = _pair()
    for kw in (dict(momentum=0.9), dict(weight_decay=0.1)):
        opt = SGD(s.parameters(), lr=0.1, **kw)
        opt.zero_grad()
        _loss(s, IDS).backward()
        with pytest.raises(RuntimeError, match="SGD: sparse gradients .* only without momentum "
                                               "and weight_decay"):
            opt.step()
    opt = Adam(s.parameters())
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients, please "
                                           "consider SparseAdam instead"):
        opt.step()
    d = nn.Embedding(4, 2)
    d(T.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                           "please consider Adam instead"):
        SparseAdam(d.parameters()).step()
    with pytest.raises(ValueError, match="SparseAdam: invalid beta parameter at index 1"):
        SparseAdam(d.parameters(), betas=(0.9, 1.0))
