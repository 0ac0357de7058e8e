"""PyTorch's extra top-level functions and Tensor methods (tensor/torch_extra.py, torch_extra2.py).

Every function against NumPy or a plain loop (CI has no torch), on both devices, over random
shapes (empty included), several dtypes and non-contiguous views; errors name the function;
the random ones by statistics (mean / variance within 5 sigma, ranges, distinctness) and
reproducibility under T.manual_seed; float64 gradchecks; PyTorch's values where importable.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import autograd as ag
import tensor as T

pytestmark = pytest.mark.usefixtures("device")
RNG = np.random.default_rng(5)


def tt(a, dtype=None, view=False):
    """a as a tensor on the test's device; view=True gives a non-contiguous (transposed) one."""
    a = np.asarray(a)
    if view and a.ndim >= 2:
        t = T.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dtype, copy=True)
        t = T.swapaxes(t, -1, -2)
        assert not t.is_contiguous() or 1 in a.shape[-2:] or 0 in a.shape
        return t
    return T.asarray(a, dtype=dtype, copy=True)   # (a CPU asarray would share a's memory)


def close(t, ref, tol=1e-10):
    assert t.device == T.get_default_device()
    np.testing.assert_allclose(t.numpy(), ref, rtol=tol, atol=tol)


def rnd(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------- products

@pytest.mark.parametrize("n,k,m", [(3, 4, 2), (0, 3, 2), (2, 0, 3), (1, 1, 1)])
@pytest.mark.parametrize("view", [False, True])
def test_products_match_numpy(n, k, m, view):
    a, b, v, c = rnd(n, k), rnd(k, m), rnd(k), rnd(n, m)
    close(T.mm(tt(a, view=view), tt(b, view=view)), a @ b)
    close(T.mv(tt(a, view=view), tt(v)), a @ v)
    close(T.addmm(tt(c), tt(a), tt(b, view=view), beta=0.5, alpha=2), 0.5 * c + 2 * (a @ b))
    close(T.addmm(tt(c[:1] if n else c), tt(a), tt(b)), (c[:1] if n else c) + a @ b)
    close(T.addmv(tt(c[:, 0]) if m else tt(np.zeros(n)), tt(a), tt(v), alpha=3),
          (c[:, 0] if m else np.zeros(n)) + 3 * (a @ v))
    bb1, bb2, bc = rnd(2, n, k), rnd(2, k, m), rnd(2, n, m)
    close(T.bmm(tt(bb1, view=view), tt(bb2)), bb1 @ bb2)
    close(T.baddbmm(tt(bc), tt(bb1), tt(bb2), beta=2), 2 * bc + bb1 @ bb2)
    close(T.addbmm(tt(c), tt(bb1), tt(bb2)), c + (bb1 @ bb2).sum(0))
    u, w = rnd(n), rnd(m)
    close(T.addr(tt(c), tt(u), tt(w), beta=0), np.outer(u, w))


def test_beta_zero_ignores_nan_and_integers():
    a, b = rnd(2, 3), rnd(3, 2)
    c = np.full((2, 2), np.nan)
    close(T.addmm(tt(c), tt(a), tt(b), beta=0), a @ b)
    x, y = np.array([1, 2]), np.array([3, 4, 5])
    r = T.addr(tt(np.ones((2, 3), dtype=np.int64)), tt(x), tt(y), alpha=2)
    assert r.dtype == T.int64 and r.tolist() == (1 + 2 * np.outer(x, y)).tolist()
    ai = RNG.integers(-3, 3, (2, 3, 4))
    assert T.bmm(tt(ai), tt(np.swapaxes(ai, 1, 2))).tolist() == (ai @ np.swapaxes(ai, 1, 2)).tolist()
    with pytest.raises(TypeError, match="addmm: for integer tensors"):
        T.addmm(tt(np.ones((2, 2), np.int64)), tt(x[None]).T, tt(x[None]), beta=0.5)


def test_addcmul_addcdiv_and_chain_matmul():
    x, a, b = rnd(3, 1), rnd(1, 4), rnd(3, 4) + 5
    close(T.addcmul(tt(x), tt(a), tt(b, view=True), value=0.5), x + 0.5 * a * b)
    close(T.addcdiv(tt(x), tt(a), tt(b), value=-2), x - 2 * a / b)
    assert T.addcmul(tt([1, 2]), tt([3, 4]), tt([5, 6]), value=2).tolist() == [31, 50]
    with pytest.raises(TypeError, match="addcdiv: integer division"):
        T.addcdiv(tt([1.0]), tt([3]), tt([5]))
    ms = [rnd(2, 3), rnd(3, 5), rnd(5, 1), rnd(1, 4)]
    close(T.chain_matmul(*map(tt, ms)), ms[0] @ ms[1] @ ms[2] @ ms[3])
    close(T.chain_matmul(tt(ms[0])), ms[0])


def test_product_errors():
    with pytest.raises(ValueError, match=r"mm: shapes \(2, 3\) and \(2, 3\): inner"):
        T.mm(tt(rnd(2, 3)), tt(rnd(2, 3)))
    with pytest.raises(ValueError, match="mm: expected 2-d"):
        T.mm(tt(rnd(3)), tt(rnd(3, 3)))
    with pytest.raises(TypeError, match="mm: expected operands of one dtype"):
        T.mm(tt(rnd(2, 2)), tt(rnd(2, 2), dtype=T.float32))
    with pytest.raises(ValueError, match="bmm: batch sizes differ"):
        T.bmm(tt(rnd(2, 2, 3)), tt(rnd(3, 3, 2)))
    with pytest.raises(ValueError, match="mv: expected"):
        T.mv(tt(rnd(2, 2)), tt(rnd(2, 2)))
    with pytest.raises(ValueError, match="addmm: shapes"):
        T.addmm(tt(rnd(3, 3)), tt(rnd(2, 2)), tt(rnd(2, 2)))
    with pytest.raises(TypeError, match="mm: expected a tensor"):
        T.mm([[1.0]], tt(rnd(1, 1)))


# ---------------------------------------------------------------- building and splitting

def test_block_diag_cartesian_combinations():
    a, b = RNG.integers(0, 9, (2, 3)), np.array([7.5, 8.0])
    r = T.block_diag(tt(a), tt(5), tt(b), tt(np.zeros((0, 2))))
    ref = np.zeros((4, 8))
    ref[:2, :3], ref[2, 3], ref[3, 4:6] = a, 5, b
    assert r.dtype == T.float64 and r.shape == (4, 8)
    close(r, ref)
    assert T.block_diag().shape == (1, 0)
    x, y = tt([1, 2, 3]), tt([4, 5])
    assert T.cartesian_prod(x, y).tolist() == [list(p) for p in itertools.product([1, 2, 3], [4, 5])]
    assert T.cartesian_prod(x).tolist() == [1, 2, 3]
    for n, r_, rep in [(4, 2, False), (4, 3, True), (3, 4, False), (0, 2, False), (3, 1, True)]:
        f = itertools.combinations_with_replacement if rep else itertools.combinations
        got = T.combinations(T.arange(n) * 10, r_, rep)
        ref = [[10 * i for i in c] for c in f(range(n), r_)]
        assert got.tolist() == ref and got.shape == (len(ref), r_)
    assert T.combinations(tt([1.0, 2.0]), 0).shape == (0,)
    with pytest.raises(ValueError, match="block_diag: input 0 has 3 dimensions"):
        T.block_diag(tt(rnd(1, 1, 1)))
    with pytest.raises(ValueError, match="combinations: expected a 1-d"):
        T.combinations(tt(rnd(2, 2)))


@pytest.mark.parametrize("shape", [(3,), (2, 4), (2, 0), (1, 2, 3)])
@pytest.mark.parametrize("offset,d1,d2", [(0, -2, -1), (1, 0, -1), (-2, -1, 0)])
def test_diag_embed_matches_a_loop(shape, offset, d1, d2):
    x = rnd(*shape)
    n = shape[-1] + abs(offset)
    ref = np.zeros(shape[:-1] + (n, n))
    for i in range(shape[-1]):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        ref[..., r, c] = x[..., i]
    ref = np.moveaxis(ref, (-2, -1), (d1 % (len(shape) + 1), d2 % (len(shape) + 1)))
    close(T.diag_embed(tt(x, view=True), offset, d1, d2), ref)
    with pytest.raises(ValueError, match="diag_embed: dim1 and dim2 must differ"):
        T.diag_embed(tt(x), 0, 1, 1)


def test_repeat_interleave_tensor_split_unflatten_narrow_copy():
    x = RNG.integers(0, 9, (3, 4))
    assert T.repeat_interleave(tt(x), 2).tolist() == np.repeat(x, 2).tolist()
    reps = np.array([1, 0, 2, 3])
    assert T.repeat_interleave(tt(x, view=True), tt(reps), dim=1).tolist() == \
        np.repeat(x, reps, axis=1).tolist()
    assert T.repeat_interleave(tt(x), tt([2]), dim=0, output_size=6).shape == (6, 4)
    assert T.repeat_interleave(tt([2, 0, 1])).tolist() == [0, 0, 2]
    assert T.repeat_interleave(tt(np.zeros((0, 2))), 3, dim=0).shape == (0, 2)
    with pytest.raises(ValueError, match="repeat_interleave: 3 repeats for 4"):
        T.repeat_interleave(tt(x), tt([1, 2, 3]), dim=1)
    with pytest.raises(ValueError, match="repeat_interleave: output_size=5"):
        T.repeat_interleave(tt(x), 2, dim=0, output_size=5)
    y = np.arange(20).reshape(2, 10)
    for s in (3, 1, 12, [2, 5], [7, 3, 30], tt([4])):
        got = T.tensor_split(tt(y), s, dim=1)
        ref = np.array_split(y, s if not isinstance(s, T.Tensor) else s.tolist(), axis=1)
        assert isinstance(got, tuple) and [g.tolist() for g in got] == [r.tolist() for r in ref]
    with pytest.raises(ValueError, match="tensor_split: the number of sections"):
        T.tensor_split(tt(y), 0)
    z = T.arange(24)
    assert T.unflatten(z, 0, (2, -1, 3)).shape == (2, 4, 3)
    assert T.unflatten(tt(rnd(2, 6)), -1, (3, 2)).shape == (2, 3, 2)
    with pytest.raises(ValueError, match="unflatten: sizes"):
        T.unflatten(z, 0, (5, -1))
    n = T.narrow_copy(tt(y), 1, -4, 3)
    assert n.tolist() == y[:, 6:9].tolist() and n.is_contiguous()
    with pytest.raises(IndexError, match="narrow_copy"):
        T.narrow_copy(tt(y), 1, 8, 3)


def test_views_and_small_functions():
    a = rnd(3, 4) + 1j * rnd(3, 4)
    close(T.adjoint(tt(a)), a.conj().T)
    close(tt(a).mH, a.conj().T)
    close(tt(a).H, a.conj().T)
    b3 = rnd(2, 3, 4)
    close(tt(b3).mH, np.swapaxes(b3, -1, -2))
    assert T.t(tt(a)).shape == (4, 3) and T.t(tt([1, 2])).shape == (2,)
    with pytest.raises(ValueError, match="H: expects a 2-d"):
        _ = tt([1.0, 2.0]).H
    with pytest.raises(ValueError, match="t: expects a tensor of rank <= 2"):
        T.t(tt(rnd(1, 1, 1)))
    m = rnd(5, 3)
    close(T.msort(tt(m, view=True)), np.sort(m, axis=0))
    close(T.conj_physical(tt(a)), a.conj())
    assert T.resolve_conj(x := tt(a)) is x and T.resolve_neg(x) is x
    assert T.numel(tt(rnd(2, 3))) == 6 and T.is_tensor(x) and not T.is_tensor(a)
    assert T.is_complex(x) and not T.is_floating_point(x) and tt([1.0]).is_floating_point()
    assert T.is_nonzero(tt([2])) and not T.is_nonzero(tt(0.0))
    with pytest.raises(ValueError, match="is_nonzero: expects a tensor of one element"):
        T.is_nonzero(tt([1, 2]))
    assert T.is_same_size(tt(rnd(2, 3)), tt(rnd(2, 3))) and not tt(rnd(2)).is_same_size(tt(rnd(3)))
    close(T.clamp_min(tt(m), 0.2), np.maximum(m, 0.2))
    close(tt(m).clamp_max(0.2), np.minimum(m, 0.2))
    close(T.rsub(tt(m), 2.0, alpha=3), 2.0 - 3 * m)
    close(T.masked_fill(tt(m), tt(m > 0), -1.0), np.where(m > 0, -1.0, m))
    s = T.scalar_tensor(3)
    assert s.shape == () and s.dtype == T.get_default_dtype() and s.item() == 3
    e = T.empty_strided((2, 3), (1, 2))
    assert e.shape == (2, 3) and e.strides == (1, 2) and e.device == T.get_default_device()
    assert T.empty_strided((0, 3), (3, 1)).shape == (0, 3)
    na = np.arange(3.0)
    assert T.as_tensor(na).tolist() == [0.0, 1.0, 2.0] and T.as_tensor([1, 2], dtype=T.int8).dtype == T.int8


# ---------------------------------------------------------------- reductions and statistics

@pytest.mark.parametrize("dim", [None, 0, 1, (0, 2)])
def test_var_std_mean_aminmax(dim):
    x = rnd(3, 4, 2)
    ax = tuple(dim) if isinstance(dim, tuple) else dim
    for keep in (False, True):
        v, m = T.var_mean(tt(x), dim, keepdim=keep)
        close(v, np.var(x, axis=ax, ddof=1, keepdims=keep))
        close(m, np.mean(x, axis=ax, keepdims=keep))
        s, m = T.std_mean(tt(x), dim, correction=0, keepdim=keep)
        close(s, np.std(x, axis=ax, keepdims=keep))
    close(T.var_mean(tt(x), False)[0], np.var(x))
    close(T.std_mean(tt(x), dim, unbiased=True)[0], np.std(x, axis=ax, ddof=1))
    if not isinstance(dim, tuple):
        mn, mx = T.aminmax(tt(x), dim=dim)
        close(mn, np.min(x, axis=dim))
        close(tt(x).aminmax(dim=dim, keepdim=True).max, np.max(x, axis=dim, keepdims=True))
    with pytest.raises(TypeError, match="var_mean: give unbiased or correction"):
        T.var_mean(tt(x), 0, True, correction=1)
    with pytest.raises(ValueError, match="aminmax: cannot reduce an empty"):
        T.aminmax(tt(np.zeros((0, 2))))


def _mode_ref(row):
    vals, counts = np.unique(row, return_counts=True)
    v = vals[np.argmax(counts)]   # the smallest of the most frequent
    return v, np.nonzero(row == v)[0][-1]


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((4, 9), 1), ((9, 3), 0), ((2, 1, 5), -1)])
@pytest.mark.parametrize("dtype", [T.int64, T.float32])
def test_mode_matches_a_loop(shape, dim, dtype):
    x = RNG.integers(0, 4, shape)
    res = T.mode(tt(x, dtype=dtype, view=len(shape) > 1), dim)
    xm = np.moveaxis(x, dim, -1).reshape(-1, shape[dim])
    ref = [_mode_ref(r) for r in xm]
    out_shape = np.moveaxis(x, dim, -1).shape[:-1]
    assert res.values.dtype == dtype and res.indices.dtype == T.int64
    assert res.values.numpy().reshape(-1).tolist() == [float(v) if dtype == T.float32 else v for v, _ in ref]
    assert res.indices.numpy().reshape(-1).tolist() == [i for _, i in ref]
    assert res.values.shape == out_shape
    assert tt(x).mode(dim, keepdim=True).indices.ndim == x.ndim
    assert T.mode(tt(3)).indices.item() == 0
    with pytest.raises(ValueError, match="mode: dim 0 of shape"):
        T.mode(tt(np.zeros((0, 2))), 0)


@pytest.mark.parametrize("p", [1, 2, 3.5, math.inf, 0])
def test_dist_and_renorm(p):
    a, b = rnd(3, 4), rnd(4)
    d = (a - b).reshape(-1)
    ref = np.count_nonzero(d) if p == 0 else np.linalg.norm(d, ord=p)
    close(T.dist(tt(a, view=True), tt(b), p), ref)
    if p > 0:
        x = rnd(3, 4, 2) * 3
        got = T.renorm(tt(x), p, 1, 2.0)
        ref = x.copy()
        for i in range(4):
            n = np.linalg.norm(x[:, i].reshape(-1), ord=p)
            if n > 2.0:
                ref[:, i] *= 2.0 / (n + 1e-7)
        close(got, ref)
    with pytest.raises(ValueError, match="renorm: p must be positive"):
        T.renorm(tt(a), -1, 0, 1.0)


def test_trapezoids_and_unique_consecutive():
    y, x = rnd(3, 5), np.cumsum(RNG.random(5))
    mid = (y[:, 1:] + y[:, :-1]) / 2
    close(T.cumulative_trapezoid(tt(y, view=True)), np.cumsum(mid, axis=1))
    close(T.cumulative_trapezoid(tt(y), dx=0.5), np.cumsum(mid * 0.5, axis=1))
    close(T.cumulative_trapezoid(tt(y), tt(x)), np.cumsum(mid * np.diff(x), axis=1))
    close(T.cumulative_trapezoid(tt(y), dim=0), np.cumsum((y[1:] + y[:-1]) / 2, axis=0))
    assert T.cumulative_trapezoid(tt(np.zeros((2, 0)))).shape == (2, 0)
    assert T.cumulative_trapezoid(tt([1, 2, 3])).tolist() == [1.5, 4.0]
    close(T.trapz(tt(y), tt(x)), np.trapezoid(y, x))
    close(T.trapz(tt(y), dx=2.0, dim=0), np.trapezoid(y, dx=2.0, axis=0))
    with pytest.raises(ValueError, match="cumulative_trapezoid: x of shape"):
        T.cumulative_trapezoid(tt(y), tt(x[:3]))
    v = np.array([1, 1, 2, 2, 3, 1, 1, 1])
    out, inv, cnt = T.unique_consecutive(tt(v), return_inverse=True, return_counts=True)
    assert out.tolist() == [1, 2, 3, 1] and cnt.tolist() == [2, 2, 1, 3]
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3, 3]
    m = np.array([[0, 1], [0, 1], [2, 2], [0, 1]])
    o, c = tt(m).unique_consecutive(return_counts=True, dim=0)
    assert o.tolist() == [[0, 1], [2, 2], [0, 1]] and c.tolist() == [2, 1, 1]
    o, i = T.unique_consecutive(tt(m.T, view=True), return_inverse=True, dim=1)
    assert o.tolist() == [[0, 2, 0], [1, 2, 1]] and i.tolist() == [0, 0, 1, 2]
    o, i = T.unique_consecutive(tt(m), return_inverse=True)
    assert o.tolist() == [0, 1, 0, 1, 2, 0, 1] and i.shape == (4, 2)
    assert T.unique_consecutive(tt(np.zeros(0))).shape == (0,)


# ---------------------------------------------------------------- linear algebra, softmax

def test_linalg_functions():
    a = rnd(2, 3, 3)
    spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)
    L = np.linalg.cholesky(spd)
    b = rnd(2, 3, 2)
    close(T.cholesky_solve(tt(b), tt(L)), np.linalg.solve(spd, b))
    close(T.cholesky_solve(tt(b), tt(np.swapaxes(L, -1, -2)), upper=True), np.linalg.solve(spd, b))
    close(T.cholesky_inverse(tt(L[0])), np.linalg.inv(spd[0]))
    close(tt(spd).logdet(), np.log(np.linalg.det(spd)))
    ld = T.logdet(tt(-spd[:1])).numpy()
    assert np.isnan(ld).all()   # a negative determinant (3 x 3)
    close(T.det(tt(a)), np.linalg.det(a))
    close(T.inverse(tt(a)), np.linalg.inv(a))
    close(T.slogdet(tt(a))[1], np.linalg.slogdet(a)[1])
    close(tt(a).matrix_power(3), np.linalg.matrix_power(a, 3))
    r = rnd(4, 2)
    close(T.pinverse(tt(r)), np.linalg.pinv(r))
    close(T.matrix_exp(tt(np.zeros((2, 2)))), np.eye(2))


@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((3, 4), 0), ((2, 0, 3), 1), ((5,), -1)])
def test_softmax_relu(shape, dim):
    x = rnd(*shape) * 5
    e = np.exp(x - x.max(axis=dim, keepdims=True)) if x.size else x
    ref = e / e.sum(axis=dim, keepdims=True) if x.size else x
    close(T.softmax(tt(x, view=True), dim), ref)
    close(tt(x).log_softmax(dim), np.log(ref) if x.size else x)
    assert T.softmax(tt(x), dim, dtype=T.float32).dtype == T.float32
    close(T.relu(tt(x)), np.maximum(x, 0))
    big = np.array([[1000.0, 0.0, -np.inf]])
    close(T.softmax(tt(big), 1), [[1.0, 0.0, 0.0]])
    assert np.isnan(T.softmax(tt([[-np.inf, -np.inf]]), 1).numpy()).all()
    assert np.isnan(T.relu(tt([np.nan])).item()) and T.relu(tt([-3, 4])).tolist() == [0, 4]
    with pytest.raises(TypeError, match="softmax: expects a floating-point"):
        T.softmax(tt([1, 2]), 0)


def test_polar_complex():
    r, th = RNG.random(4), rnd(4)
    close(T.polar(tt(r), tt(th)), r * np.exp(1j * th))
    c = T.complex(tt(r, dtype=T.float32), tt(th, dtype=T.float32))
    assert c.dtype == T.complex64
    close(c, r + 1j * th, tol=1e-6)
    z = T.complex(tt([np.inf]), tt([0.0]))
    assert z.numpy()[0] == complex(np.inf, 0)
    with pytest.raises(TypeError, match="complex: expects tensors of one dtype"):
        T.complex(tt(r), tt(th, dtype=T.float32))
    with pytest.raises(TypeError, match="polar: expects float32 or float64"):
        T.polar(tt([1, 2]), tt([1, 2]))


@pytest.mark.parametrize("name,ref", [
    ("hann_window", lambda n: 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / (n - 1))),
    ("hamming_window", np.hamming), ("blackman_window", np.blackman),
    ("bartlett_window", np.bartlett), ("kaiser_window", lambda n: np.kaiser(n, 12.0))])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16])
def test_windows_match_numpy(name, ref, n):
    fn = getattr(T, name)
    sym = fn(n, periodic=False, dtype=T.float64)
    assert sym.shape == (n,) and sym.device == T.get_default_device()
    if n > 1:
        close(sym, ref(n), tol=1e-12)
        close(fn(n, dtype=T.float64), ref(n + 1)[:-1], tol=1e-12)
    elif n == 1:
        assert sym.tolist() == [1.0]
    assert fn(n).dtype == T.get_default_dtype() and fn(4, dtype=T.float32).dtype == T.float32
    with pytest.raises(TypeError, match=f"{name}: expects a floating-point dtype"):
        fn(4, dtype=T.int64)
    with pytest.raises(ValueError, match=f"{name}: window_length must be non-negative"):
        fn(-1)


def test_kaiser_large_beta():
    close(T.kaiser_window(9, False, 40.0, dtype=T.float64), np.kaiser(9, 40.0), tol=1e-11)


# ---------------------------------------------------------------- Tensor methods

def test_new_and_like_methods():
    x = tt(rnd(2, 3), dtype=T.float32)
    for t in (x.new_zeros(2, 3), x.new_zeros((2, 3)), x.new_ones([4]), x.new_empty(1, 2),
              x.new_full((2,), 7), x.new_tensor([1, 2])):
        assert t.dtype == T.float32 and t.device == x.device
    assert x.new_full((2,), 7).tolist() == [7, 7] and x.new_ones(3, dtype=T.int8).dtype == T.int8
    assert x.new_zeros(2).tolist() == [0.0, 0.0] and x.new_tensor([1, 2]).tolist() == [1.0, 2.0]
    assert x.new_zeros(2, requires_grad=True).requires_grad
    y = tt(rnd(3, 2))
    assert x.type_as(y).dtype == T.float64 and x.view_as(tt(rnd(6))).shape == (6,)
    assert x.T.reshape_as(tt(rnd(6))).shape == (6,) and x.nelement() == 6
    assert x.get_device() == (-1 if x.device.type == "cpu" else 0)


def test_in_place_methods():
    x = rnd(3, 3)
    t = tt(x)
    t.tril_().addcmul_(tt([1.0, 2.0, 3.0]), tt([2.0, 2.0, 2.0]), value=0.5)
    close(t, np.tril(x) + 0.5 * np.array([2.0, 4.0, 6.0]))
    t.triu_(1)
    close(t, np.triu(np.tril(x) + 0.5 * np.array([2.0, 4.0, 6.0]), 1))
    t = tt(x)
    t.addcdiv_(tt(x), tt(np.full(3, 2.0)))
    close(t, 1.5 * x)
    t.lerp_(tt(np.zeros((3, 3))), 0.5)
    close(t, 0.75 * x)
    t.masked_fill_(tt(x > 0), 9.0)
    close(t, np.where(x > 0, 9.0, 0.75 * x))
    v = tt(rnd(2, 3))[:, ::2]   # a non-contiguous view writes through to its base
    v.masked_fill_(tt([[True], [False]]), 1.0)
    assert v.tolist()[0] == [1.0, 1.0]
    with pytest.raises(ValueError, match="masked_fill_: mask of shape"):
        tt(rnd(3)).masked_fill_(tt(np.ones((2, 3), bool)), 0.0)
    leaf = tt(rnd(3, 3)).requires_grad_()
    for fill in (lambda t: t.tril_(), lambda t: t.uniform_(), lambda t: t.masked_fill_(t > 0, 0.0)):
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            fill(leaf)
    with ag.no_grad():
        assert leaf.normal_() is leaf and leaf.triu_() is leaf
    assert leaf.tolist()[1][0] == 0.0


def test_norm_and_split_methods():
    x = rnd(3, 4)
    t = tt(x, view=True)
    close(t.norm(), np.linalg.norm(x))
    close(t.norm(1, 1), np.abs(x).sum(1))
    close(t.norm(math.inf, 0, keepdim=True), np.abs(x).max(0, keepdims=True))
    close(t.norm("nuc"), np.linalg.norm(x, "nuc"))
    close(t.norm(3, (0, 1)), (np.abs(x) ** 3).sum() ** (1 / 3))
    with pytest.raises(TypeError, match="norm: expects a floating-point"):
        tt([1, 2]).norm()
    parts = t.split(3, 1)
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(3, 3), (3, 1)]
    assert [p.shape for p in t.split([1, 0, 2], 0)] == [(1, 4), (0, 4), (2, 4)]
    close(parts[1], x[:, 3:])
    with pytest.raises(ValueError, match="split: sizes"):
        t.split([1, 1], 0)


# ---------------------------------------------------------------- random

def _within(sample, mean, var, sigmas=5.0):
    n = sample.size
    assert abs(sample.mean() - mean) <= sigmas * math.sqrt(var / n) + 1e-12, (sample.mean(), mean)


def test_randperm_and_reproducibility():
    T.manual_seed(3)
    p = T.randperm(50)
    assert p.dtype == T.int64 and sorted(p.tolist()) == list(range(50))
    assert p.device == T.get_default_device()
    T.manual_seed(3)
    assert T.randperm(50).tolist() == p.tolist()
    g = T.random.Generator(9)
    q = T.randperm(10, generator=g, dtype=T.int32)
    assert q.dtype == T.int32 and sorted(q.tolist()) == list(range(10))
    assert T.randperm(0).shape == (0,)
    with pytest.raises(ValueError, match="randperm: n must be non-negative"):
        T.randperm(-1)
    s = T.seed()
    assert T.initial_seed() == s
    T.manual_seed(11)
    assert T.initial_seed() == 11


def test_like_functions():
    T.manual_seed(2)
    x = tt(np.zeros((200, 50)), dtype=T.float32)
    u = T.rand_like(x)
    assert u.dtype == T.float32 and u.shape == x.shape and u.device == x.device
    un = u.numpy()
    assert un.min() >= 0 and un.max() < 1
    _within(un, 0.5, 1 / 12)
    n = T.randn_like(x, dtype=T.float64).numpy()
    _within(n, 0.0, 1.0)
    _within((n - n.mean()) ** 2, 1.0, 2.0)
    r = T.randint_like(x, 3, 7).numpy()
    assert set(np.unique(r).tolist()) == {3, 4, 5, 6} and T.randint_like(x, 5).dtype == T.float32
    assert T.randint_like(tt(np.zeros(4, np.int8)), 100).dtype == T.int8
    with pytest.raises(ValueError, match="randint_like: range"):
        T.randint_like(tt(np.zeros(4, np.int8)), 1000)
    with pytest.raises(TypeError, match="rand_like: expects a floating-point"):
        T.rand_like(tt([1, 2]))


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial(replacement):
    p = np.array([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 0.0, 2.0]])
    T.manual_seed(1)
    k = 2000 if replacement else 3
    s = T.multinomial(tt(p), k, replacement)
    assert s.dtype == T.int64 and s.shape == (2, k)
    sn = s.numpy()
    assert not (sn[0] == 1).any() and not (sn[1] == 2).any()   # zero-probability categories
    if replacement:
        for row, pr in zip(sn, p / p.sum(1, keepdims=True)):
            for c in range(4):
                _within((row == c).astype(float), pr[c], pr[c] * (1 - pr[c]) + 1e-12)
    else:
        assert all(len(set(r)) == k for r in sn.tolist())
        # first draws follow p: 400 rows of [0.1, 0.0, 0.6, 0.3]
        firsts = T.multinomial(tt(np.tile(p[:1], (400, 1))), 1).numpy()[:, 0]
        _within((firsts == 2).astype(float), 0.6, 0.24)
        full = T.multinomial(tt([[1.0, 2.0, 3.0]]), 3).tolist()[0]
        assert sorted(full) == [0, 1, 2]
    T.manual_seed(1)
    assert T.multinomial(tt(p), k, replacement).tolist() == s.tolist()
    assert T.multinomial(tt(p[0]), 2, replacement).shape == (2,)
    with pytest.raises(ValueError, match="multinomial: a row of probabilities sums to zero"):
        T.multinomial(tt([[1.0, 1.0], [0.0, 0.0]]), 1, replacement)
    with pytest.raises(ValueError, match="multinomial: probabilities must be finite"):
        T.multinomial(tt([1.0, -1.0]), 1, replacement)


def test_multinomial_errors():
    with pytest.raises(ValueError, match="multinomial: cannot draw 3 samples from 2"):
        T.multinomial(tt([1.0, 1.0]), 3)
    with pytest.raises(ValueError, match="multinomial: a row has fewer than"):
        T.multinomial(tt([1.0, 0.0, 0.0]), 2)
    with pytest.raises(TypeError, match="multinomial: probabilities must be floating"):
        T.multinomial(tt([1, 2]), 1)


def test_bernoulli_poisson():
    T.manual_seed(4)
    p = np.tile(np.array([0.0, 0.2, 0.9, 1.0]), (2000, 1))
    b = T.bernoulli(tt(p, dtype=T.float32))
    assert b.dtype == T.float32
    bn = b.numpy()
    assert set(np.unique(bn).tolist()) <= {0.0, 1.0} and (bn[:, 0] == 0).all() and (bn[:, 3] == 1).all()
    _within(bn[:, 1], 0.2, 0.16)
    _within(T.bernoulli(tt(np.zeros(4000)), 0.7).numpy(), 0.7, 0.21)
    with pytest.raises(ValueError, match="bernoulli: p must be in"):
        T.bernoulli(tt([1.5]))
    for lam in (0.0, 0.5, 4.0, 30.0, 1e4):
        s = T.poisson(tt(np.full(3000, lam))).numpy()
        assert (s == np.round(s)).all() and (s >= 0).all()
        _within(s, lam, lam)
        if lam:
            _within((s - lam) ** 2, lam, 2 * lam * lam + lam)
    assert T.poisson(tt(np.zeros((0, 3)))).shape == (0, 3)
    with pytest.raises(ValueError, match="poisson: rates must be finite"):
        T.poisson(tt([-1.0]))


def test_in_place_random_fills():
    n = 4000
    T.manual_seed(7)
    x = tt(np.zeros(n)).uniform_(-2, 3)
    xn = x.numpy()
    assert xn.min() >= -2 and xn.max() < 3
    _within(xn, 0.5, 25 / 12)
    T.manual_seed(7)
    assert tt(np.zeros(n)).uniform_(-2, 3).tolist() == x.tolist()
    _within(tt(np.zeros(n)).normal_(1.0, 2.0).numpy(), 1.0, 4.0)
    e = tt(np.zeros(n)).exponential_(2.0).numpy()
    assert (e >= 0).all()
    _within(e, 0.5, 0.25)
    g = tt(np.zeros(n, np.int64)).geometric_(0.25).numpy()
    assert (g >= 1).all()
    _within(g.astype(float), 4.0, 0.75 / 0.0625)
    c = tt(np.zeros(n)).cauchy_(1.0, 0.5).numpy()
    assert abs(np.median(c) - 1.0) < 0.1
    ln = tt(np.zeros(n)).log_normal_(0.0, 0.5).numpy()
    assert (ln > 0).all()
    _within(np.log(ln), 0.0, 0.25)
    bb = tt(np.zeros(n, np.int32)).bernoulli_(0.3).numpy()
    _within(bb.astype(float), 0.3, 0.21)
    r = tt(np.zeros(n, np.int8)).random_().numpy()
    assert r.min() >= 0 and r.max() <= 127 and r.max() > 100
    r = tt(np.zeros(n)).random_(5).numpy()
    assert set(np.unique(r).tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    r = tt(np.zeros(n, np.int64)).random_(-3, 2).numpy()
    assert r.min() == -3 and r.max() == 1
    gen = T.random.Generator(5)
    a = tt(np.zeros(8)).normal_(generator=gen).tolist()
    assert tt(np.zeros(8)).normal_(generator=T.random.Generator(5)).tolist() == a
    with pytest.raises(TypeError, match="uniform_: expects a floating-point"):
        tt([1, 2]).uniform_()
    with pytest.raises(ValueError, match="geometric_: expects 0 < p < 1"):
        tt([1.0]).geometric_(1.5)
    with pytest.raises(ValueError, match="random_: range"):
        tt(np.zeros(2, np.int8)).random_(0, 300)


# ---------------------------------------------------------------- gradients

def _g(*shape):
    return tt(rnd(*shape)).requires_grad_()


def test_gradchecks():
    a, b, c = _g(2, 3), _g(3, 2), _g(2, 2)
    assert ag.gradcheck(lambda c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2), [c, a, b])
    assert ag.gradcheck(lambda x, y: T.addcdiv(x, y, y * y + 1, value=0.3), [_g(3), _g(3)])
    assert ag.gradcheck(lambda x, y: T.block_diag(x, y), [_g(1, 2), _g(2)])
    assert ag.gradcheck(lambda x: T.diag_embed(x, 1, 0, 2), [_g(2, 3)])
    assert ag.gradcheck(lambda x: T.var_mean(x, 1), [_g(2, 4)])
    assert ag.gradcheck(lambda x: T.softmax(x, 1), [_g(2, 3)])
    assert ag.gradcheck(lambda x: T.log_softmax(x, 0), [_g(2, 3)])
    assert ag.gradcheck(lambda x: T.renorm(x, 2, 0, 1.0), [tt(rnd(2, 3) * 2).requires_grad_()])
    assert ag.gradcheck(lambda x, y: T.dist(x, y, 3), [_g(2, 3), _g(3)])
    assert ag.gradcheck(lambda r, t: T.view_as_real(T.polar(r, t)), [_g(3), _g(3)])
    assert ag.gradcheck(lambda x: T.cumulative_trapezoid(x, dim=0), [_g(4, 2)])
    assert ag.gradcheck(lambda x: T.repeat_interleave(x, tt([2, 0, 1]), dim=0), [_g(3, 2)])
    assert ag.gradcheck(lambda x: T.mode(T.round(x * 0) + x, 0).values, [_g(3, 2)])
    assert ag.gradcheck(lambda x: T.relu(x), [tt([0.5, -0.7, 1.2]).requires_grad_()])
    m = rnd(3, 3)
    spd = tt(m @ m.T + 3 * np.eye(3)).requires_grad_()
    assert ag.gradcheck(T.logdet, [spd])
    L = tt(np.linalg.cholesky(m @ m.T + 3 * np.eye(3))).requires_grad_()
    assert ag.gradcheck(lambda B, L: T.cholesky_solve(B, T.tril(L)), [_g(3, 2), L])


# ---------------------------------------------------------------- PyTorch's values

def test_against_torch():
    torch = pytest.importorskip("torch")

    def same(ours, theirs, tol=1e-6):
        o = ours.numpy()
        th = theirs.numpy()
        assert o.shape == th.shape, (o.shape, th.shape)
        assert str(o.dtype) == str(th.dtype), (o.dtype, th.dtype)
        np.testing.assert_allclose(o, th, rtol=tol, atol=tol)

    a, b, c = rnd(3, 4), rnd(4, 2), rnd(3, 2)
    ta, tb, tc = (torch.tensor(v) for v in (a, b, c))
    same(T.addmm(tt(c), tt(a), tt(b), beta=0.3, alpha=2), torch.addmm(tc, ta, tb, beta=0.3, alpha=2))
    same(T.addr(tt(c), tt(a[:, 0]), tt(b[0])), torch.addr(tc, ta[:, 0], tb[0]))
    same(T.block_diag(tt(a), tt(c)), torch.block_diag(ta, tc))
    same(T.diag_embed(tt(a), -1, 2, 0), torch.diag_embed(ta, -1, 2, 0))
    same(T.cartesian_prod(tt([1, 2]), tt([3, 4, 5])), torch.cartesian_prod(torch.tensor([1, 2]),
                                                                         torch.tensor([3, 4, 5])))
    same(T.combinations(tt([1, 2, 3, 4]), 3, True), torch.combinations(torch.tensor([1, 2, 3, 4]), 3, True))
    x = RNG.integers(0, 3, (4, 7))
    for d in (0, 1):
        r, q = T.mode(tt(x), d), torch.mode(torch.tensor(x), d)
        same(r.values, q.values)
        same(r.indices, q.indices)
    same(T.var_mean(tt(a), 1, correction=0)[0], torch.var_mean(ta, 1, correction=0)[0])
    same(T.dist(tt(a), tt(b[:, 0][None, :1]), 1.5), torch.dist(ta, tb[:, 0][None, :1], 1.5))
    same(T.renorm(tt(a), 1, 1, 1.0), torch.renorm(ta, 1, 1, 1.0))
    same(T.cumulative_trapezoid(tt(a), tt(b[:, 0].cumsum())),
         torch.cumulative_trapezoid(ta, tb[:, 0].cumsum(0)))
    same(T.logdet(tt(a[:, :3])), torch.logdet(ta[:, :3]))
    same(T.softmax(tt(a), 0, dtype=T.float32), torch.softmax(ta, 0, dtype=torch.float32))
    same(T.polar(tt(a), tt(a)), torch.polar(ta, ta))
    for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"):
        for per in (True, False):
            same(getattr(T, name)(9, per), getattr(torch, name)(9, per, dtype=torch.float64), 1e-12)
            same(getattr(T, name)(6, per, dtype=T.float32), getattr(torch, name)(6, per))
    same(tt(a).norm(2.5, 1, True), ta.norm(2.5, 1, True))
    for o, t in zip(tt(a).split([1, 3], 1), ta.split([1, 3], 1)):
        same(o, t)
    for o, t in zip(T.tensor_split(tt(a), [1, 9], 1), torch.tensor_split(ta, [1, 9], 1)):
        same(o, t)
    u = torch.tensor([1, 1, 2, 2, 3, 1])
    for o, t in zip(T.unique_consecutive(tt(u.numpy()), return_inverse=True, return_counts=True),
                    torch.unique_consecutive(u, return_inverse=True, return_counts=True)):
        same(o, t)
    same(T.repeat_interleave(tt(a), tt([1, 0, 3]), dim=0),
         torch.repeat_interleave(ta, torch.tensor([1, 0, 3]), dim=0))


def test_method_forms_and_registries():
    from tensor import torch_extra as X
    x, m = tt(rnd(2, 3)), tt(rnd(3, 2))
    close(x.mm(m), x.numpy() @ m.numpy())
    close(tt(np.ones((2, 2))).addmm(x, m, alpha=2), 1 + 2 * (x.numpy() @ m.numpy()))
    assert x.softmax(1).shape == (2, 3) and x.relu().shape == (2, 3) and x.msort().shape == (2, 3)
    assert x.unflatten(1, (3, 1)).shape == (2, 3, 1) and len(x.tensor_split(2, 1)) == 2
    assert x.repeat_interleave(2, 0).shape == (4, 3) and x.diag_embed().shape == (2, 3, 3)
    assert tt([0.5, 0.5]).multinomial(1).shape == (1,) and T.abs(x).clip(max=1).bernoulli().shape == (2, 3)
    # Tensor.fill is NumPy's in-place ndarray.fill (tensor/torch_methods.py), not T.fill
    for name in X.NOT_METHODS - {"numel", "masked_fill", "fill"}:
        assert not hasattr(T.Tensor, name) or name in ("t",), name
    for name in X.COMPOSITES:
        assert getattr(T, name) is X.COMPOSITES[name]
    with pytest.raises(ValueError, match="diag_embed: expects a tensor with at least one"):
        T.diag_embed(tt(1.0))
    assert T.softmax(tt(5.0), 0).item() == 1.0 and T.log_softmax(tt(5.0), 0).item() == 0.0
