"""Derivative rules of views, indexing and manipulation ops (autograd/rules_views.py,
rules_index.py, rules_manip.py).

- vjp: float64 gradcheck (central differences) of every op, on contiguous and non-contiguous
  (transposed, stepped, negative-step) inputs; advanced keys with repeated and negative
  indices, boolean masks and mixed basic/advanced keys; list outputs with missing gradients.
- create_graph: gradgradcheck of a few (getitem, concatenate, reshape, broadcast_to...).
- jvp: each rule's jvp called directly (Ctx of the real call, tangents aligned with the args)
  against finite differences of the op along the tangent.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import tensor as T
from autograd.graph import RULES, Ctx
from tensor.public import PUB


def rnd(*shape, seed=0, grad=True):
    x = T.asarray(np.random.default_rng(seed).standard_normal(shape))
    return x.requires_grad_() if grad else x


def idx(v):
    return T.tensor(v, dtype=T.int64)


def check(fn, *shapes, seeds=None):
    xs = [rnd(*s, seed=i if seeds is None else seeds[i]) for i, s in enumerate(shapes)]
    assert ag.gradcheck(fn, xs)


# ---------------------------------------------------------------- views (gradcheck)

VIEW_CASES = {
    "transpose_rev": (lambda t: T.transpose(t), (2, 3, 4)),
    "transpose_perm": (lambda t: T.transpose(t, (1, 2, 0)), (2, 3, 4)),
    "transpose_args": (lambda t: t.transpose(2, 0, 1), (2, 3, 4)),
    "T_noncontig": (lambda t: t[::2, ::-1].T, (4, 3)),
    "permute": (lambda t: t.permute(2, 0, 1), (2, 3, 4)),
    "permute_list": (lambda t: T.permute(t[:, ::-1], [1, -1, 0]), (2, 3, 2)),
    "swapaxes": (lambda t: T.swapaxes(t, 0, -1), (2, 3, 4)),
    "swapdims": (lambda t: T.swapdims(t.T, 1, 2), (2, 3, 4)),
    "moveaxis": (lambda t: T.moveaxis(t, 0, -1), (2, 3, 4)),
    "movedim_multi": (lambda t: T.movedim(t, [0, 1], [2, 0]), (2, 3, 4)),
    "matrix_transpose": (lambda t: T.matrix_transpose(t), (2, 3, 4)),
    "mT": (lambda t: t[:, ::2].mT, (2, 4, 3)),
    "reshape": (lambda t: t.reshape(6, 4), (2, 3, 4)),
    "reshape_copy": (lambda t: t.T.reshape(-1), (3, 4)),
    "reshape_tuple": (lambda t: T.reshape(t[::-1], (2, -1)), (4, 3)),
    "view": (lambda t: t.view(3, 8), (2, 3, 4)),
    "view_offset": (lambda t: t[1:].view(-1, 4), (3, 8)),
    "flatten": (lambda t: T.flatten(t, 1), (2, 3, 4)),
    "flatten_T": (lambda t: t.T.flatten(), (3, 4)),
    "flatten_0d": (lambda t: T.flatten(t.sum()), (3,)),
    "ravel": (lambda t: t.T.ravel(), (3, 4)),
    "squeeze_all": (lambda t: t.reshape(1, 6, 1, 2).squeeze(), (3, 4)),
    "squeeze_axis": (lambda t: T.squeeze(t.reshape(1, 12, 1), axis=0), (3, 4)),
    "expand_dims": (lambda t: T.expand_dims(t.T, (0, 3)), (3, 4)),
    "unsqueeze": (lambda t: t.unsqueeze(1), (3, 4)),
    "expand": (lambda t: t.expand(2, 3, 4), (3, 1)),
    "expand_keep": (lambda t: t[::-1].expand(-1, 4), (3, 1)),
    "broadcast_to": (lambda t: T.broadcast_to(t, (2, 3, 4)), (3, 1)),
    "broadcast_to_T": (lambda t: T.broadcast_to(t.T, [2, 4, 3]), (3, 1)),
    "expand_as": (lambda t: t.expand_as(T.zeros((2, 3))), (3,)),
    "diagonal": (lambda t: T.diagonal(t), (3, 4)),
    "diagonal_off": (lambda t: T.diagonal(t, 1), (3, 4)),
    "diagonal_neg": (lambda t: t.diagonal(-1), (4, 3)),
    "diagonal_axes": (lambda t: T.diagonal(t, 0, 2, 0), (3, 2, 4)),
    "diagonal_kw": (lambda t: T.diagonal(t.T, offset=-1, axis1=1, axis2=2), (3, 3, 2)),
    "diagonal_empty": (lambda t: T.diagonal(t, 5) * 1 + t.sum() * 0, (3, 4)),
    "as_strided_windows": (lambda t: T.as_strided(t, (3, 3), (1, 1)), (5,)),
    "as_strided_2d": (lambda t: T.as_strided(t, (2, 2), (4, 1), 1), (3, 4)),
    "as_strided_T": (lambda t: T.as_strided(t.T, (2, 3), (1, 3)), (3, 4)),
    "as_strided_view": (lambda t: T.as_strided(t[1:], (4,), (2,)), (3, 4)),
    "as_strided_zero_stride": (lambda t: T.as_strided(t, (3, 2), (0, 2)), (2, 2)),
    "flip": (lambda t: T.flip(t, 0), (3, 4)),
    "flip_all": (lambda t: T.flip(t), (2, 3, 2)),
    "flip_axes": (lambda t: T.flip(t[::2], (0, -1)), (4, 2, 3)),
}


@pytest.mark.parametrize("case", sorted(VIEW_CASES))
def test_view_gradcheck(case):
    fn, shape = VIEW_CASES[case]
    check(fn, shape)


def test_as_strided_unsupported_raises():
    x = rnd(4, 3)
    y = T.as_strided(x[::2], (4,), (1,))  # reads row 1, which is not part of x[::2]
    with pytest.raises(NotImplementedError, match="outside"):
        y.sum().backward()
    z = T.as_strided(x.expand(2, 4, 3), (3,), (1,))  # the input overlaps itself
    with pytest.raises(NotImplementedError, match="overlap"):
        z.sum().backward()


def test_view_grad_values():
    x = rnd(3, 1)
    T.broadcast_to(x, (2, 3, 4)).sum().backward()
    assert x.grad.tolist() == [[8.0], [8.0], [8.0]]
    y = rnd(3, 3)
    (T.diagonal(y, 1) * T.tensor([2.0, 3.0])).sum().backward()
    assert y.grad.tolist() == [[0, 2, 0], [0, 0, 3], [0, 0, 0]]
    z = rnd(5)
    T.as_strided(z, (3, 3), (1, 1)).sum().backward()
    assert z.grad.tolist() == [1, 2, 3, 2, 1]


# ---------------------------------------------------------------- indexing (gradcheck)

MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])

INDEX_CASES = {
    "int": (lambda t: t[1], (3, 4)),
    "slice": (lambda t: t[:, 1:3], (3, 4)),
    "neg_step_none_ell": (lambda t: t[..., None, ::-2], (3, 4)),
    "neg_int_step": (lambda t: t[-1, ::2], (3, 4)),
    "repeated": (lambda t: t[[0, 2, 0, 0]], (3, 4)),
    "repeated_tensor": (lambda t: t[idx([[0, 1], [1, 1]])], (3, 4)),
    "pairs_repeated": (lambda t: t[[0, 0, 1, 0], [2, 2, 0, 2]], (3, 4)),
    "negative": (lambda t: t[[-1, 0, -1], -2], (3, 4)),
    "mask": (lambda t: t[T.asarray(MASK)], (3, 4)),
    "mask_rows": (lambda t: t[np.array([True, False, True])], (3, 4)),
    "mask_cols_mixed": (lambda t: t[1:, np.array([True, False, True, True])], (3, 4)),
    "mixed_slice_arr": (lambda t: t[1:, [0, 0, 3]], (3, 4)),
    "mixed_nonadjacent": (lambda t: t[[0, 1, 1], :, [1, 1, 0]], (2, 3, 2)),
    "mixed_none_ell": (lambda t: t[None, [1, 1], ..., ::-1], (3, 4)),
    "mixed_int_arr": (lambda t: t[1, [2, -1, 2]], (3, 4)),
    "zero_d_index": (lambda t: t[idx(1), [0, 0]], (3, 4)),
    "bool_scalar": (lambda t: t[True], (3, 4)),
    "noncontig": (lambda t: t.T[::-1][[0, 0, 2], 1:], (3, 4)),
    "getitem_of_broadcast": (lambda t: T.broadcast_to(t, (3, 4))[[0, 2, 2], [1, 1, 3]], (4,)),
    "take_flat": (lambda t: T.take(t, [0, 5, 5, -1]), (3, 4)),
    "take_axis": (lambda t: T.take(t, [[2, 0], [0, 0]], axis=1), (3, 4)),
    "take_noncontig": (lambda t: t.T.take(idx([1, 1, -1]), 0), (3, 4)),
    "take_along": (lambda t: T.take_along_axis(t, idx([[0, 0], [3, 1], [2, 2]]), 1), (3, 4)),
    "take_along_bcast": (lambda t: T.take_along_axis(t, idx([[1], [1], [0], [2]]), 0), (3, 4)),
    "take_along_none": (lambda t: T.take_along_axis(t.T, idx([5, 5, 0]), None), (3, 4)),
}


@pytest.mark.parametrize("case", sorted(INDEX_CASES))
def test_index_gradcheck(case):
    fn, shape = INDEX_CASES[case]
    check(fn, shape)


def test_repeated_indices_accumulate():
    x = rnd(3)
    x[[0, 0, 2, -3]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    y = rnd(2, 3)
    (y[[1, 1], [2, 2]] * T.tensor([2.0, 5.0])).sum().backward()
    assert y.grad.tolist() == [[0, 0, 0], [0, 0, 7.0]]
    z = rnd(4)
    T.take(z, [1, 1, 1]).sum().backward()
    assert z.grad.tolist() == [0, 3.0, 0, 0]


def _put(key, accumulate):
    def fn(t, v):
        y = t * 1.0
        return T.index_put_(y, key, v, accumulate)
    return fn


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("key,vshape", [
    (([0, 2, 0],), (3, 4)),                 # repeated rows (last write wins / sums)
    (([1, 1, 0], [3, 3, -1]), (3,)),         # repeated pairs
    ((slice(None), [2, 0]), (3, 2)),
    ((slice(1, None), [2, 2]), (2,)),        # broadcast value
    ((T.asarray(MASK),), (7,)),
    ((1, slice(None, None, -2)), (2,)),      # basic key
    ((Ellipsis, [0, 0]), (1, 3, 1)),          # value with an extra leading size-1 axis
])
def test_index_put_gradcheck(key, vshape, accumulate):
    check(_put(key, accumulate), (3, 4), vshape)


def test_index_put_last_write_wins_grad():
    x, v = rnd(3), rnd(3, seed=1)
    y = x * 1.0
    T.index_put_(y, ([0, 0, 2],), v)
    (y * T.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0]
    assert v.grad.tolist() == [0.0, 1.0, 3.0]  # v[0] was overwritten by v[1]


def _setitem_recorded():
    y = rnd(2) * 1.0
    fn = y.grad_fn
    y[0] = 0.0
    return y.grad_fn is not fn


needs_setitem = pytest.mark.xfail(
    not _setitem_recorded(), strict=True,
    reason="engine: setitem returns None, so graph.record attaches no node (needs the fix in the "
           "report: treat args[0] as setitem's output)")


@needs_setitem
def test_setitem_backward():
    x, v = rnd(3, 4), rnd(4, seed=1)
    y = x * 1
    y[1] = v
    y.sum().backward()
    assert x.grad.tolist() == [[1.0] * 4, [0.0] * 4, [1.0] * 4]
    assert v.grad.tolist() == [1.0] * 4


@needs_setitem
def test_setitem_advanced_broadcast_backward():
    x, v = rnd(3, 4), rnd(1, seed=1)
    y = x * 1
    y[[0, 2, 0], [1, 1, 1]] = v          # repeated positions, broadcast value
    (y * 2.0).sum().backward()
    g = np.full((3, 4), 2.0)
    g[[0, 2], 1] = 0
    assert x.grad.tolist() == g.tolist()
    assert v.grad.tolist() == [4.0]      # two distinct positions were written


@needs_setitem
@pytest.mark.parametrize("key,vshape", [
    ((slice(None), 1), (3,)), (([0, 0, 2],), (3, 4)), ((T.asarray(MASK),), (7,)),
    ((slice(1, None), [3, 0, 3]), (2, 3)), ((Ellipsis, None, [1]), (1,))])
def test_setitem_gradcheck(key, vshape):
    def fn(t, v):
        y = t * 1.0
        y[key] = v
        return y
    check(fn, (3, 4), vshape)


@needs_setitem
@pytest.mark.parametrize("shape,key", [((), Ellipsis), ((3,), 0), ((2, 3), (1, 2))])
def test_setitem_of_a_one_element_value_into_a_scalar_slot_forward_mode(shape, key):
    """The write strips the value's leading 1s (NumPy's setitem); forward mode had put the
    tangent with index_put_'s stricter broadcasting and raised for a (1,) value."""
    def fn(v):
        y = T.zeros(shape, dtype=T.float64) * 1.0
        y[key] = v
        return y
    out, tan = ag.jvp(fn, (T.asarray([2.0]),), (T.asarray([1.5]),))
    want = np.zeros(shape)
    want[key] = 1.5
    assert out.numpy()[key] == 2.0 and np.array_equal(tan.numpy(), want)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("axis,index,alpha", [(0, [0, 0, 2], 1), (1, [3, -1, 0, 3], 2.5),
                                             (-1, idx([1]), -1.0)])
def test_index_add_gradcheck(axis, index, alpha, inplace):
    n = len(index) if isinstance(index, list) else index.shape[0]
    sshape = (n, 4) if axis == 0 else (3, n)

    def fn(t, s):
        if inplace:
            return T.index_add_(t * 1.0, axis, index, s, alpha)
        return T.index_add(t.T.T, axis, index, s, alpha=alpha)
    check(fn, (3, 4), sshape)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("axis,index,sshape", [
    (0, [[0, 1, 2, 0], [2, 2, 0, 0]], (2, 4)),
    (1, [[1, 1], [0, 3], [2, 2]], (3, 3)),      # index smaller than src: the rest gets zero
    (-2, [[2], [2]], (3, 2)),
])
def test_scatter_add_gradcheck(axis, index, sshape, inplace):
    def fn(t, s):
        if inplace:
            return T.scatter_add_(t * 1.0, axis, idx(index), s)
        return T.scatter_add(t, axis, idx(index), s[::1])
    check(fn, (3, 4), sshape)


def test_inplace_on_leaf_raises():
    x = rnd(3)
    with pytest.raises(RuntimeError, match="leaf"):
        T.index_add_(x, 0, [0], rnd(1))


# ---------------------------------------------------------------- manipulation (gradcheck)

MANIP1 = {
    "split_int": (lambda t: T.split(t, 2, 1), (3, 4)),
    "split_points": (lambda t: T.split(t, [1, 3], 1), (3, 4)),
    "split_overlap": (lambda t: T.split(t, [3, 1], 1), (3, 4)),
    "split_negative": (lambda t: T.split(t, [-1], 0), (3, 4)),
    "split_beyond": (lambda t: T.split(t, [2, 9], 0), (3, 4)),
    "split_one_used": (lambda t: T.split(t, 3, 0)[1], (3, 4)),
    "array_split": (lambda t: T.array_split(t, 3), (7,)),
    "array_split_some": (lambda t: T.array_split(t.T, 3, axis=1)[::2], (4, 2)),
    "hsplit": (lambda t: T.hsplit(t, 2), (3, 4)),
    "hsplit_1d": (lambda t: T.hsplit(t, [1]), (3,)),
    "vsplit": (lambda t: T.vsplit(t[::-1], [1]), (3, 4)),
    "chunk": (lambda t: T.chunk(t, 3, 1), (3, 5)),
    "chunk_last_only": (lambda t: t.chunk(2)[-1], (3, 2)),
    "unbind": (lambda t: T.unbind(t, 1), (3, 4)),
    "unbind_some": (lambda t: t.T.unbind()[2], (3, 4)),
    "roll_flat": (lambda t: T.roll(t, 5), (3, 4)),
    "roll_axes": (lambda t: T.roll(t.T, (1, -2), (0, 1)), (3, 4)),
    "roll_one_axis": (lambda t: T.roll(t, -1, axis=1), (3, 4)),
    "tile": (lambda t: T.tile(t, 2), (3,)),
    "tile_more_dims": (lambda t: T.tile(t.T, (2, 1, 2)), (2, 3)),
    "tile_zero": (lambda t: T.tile(t, (0, 1)).sum() + (t * 0).sum(), (2,)),
    "repeat_int": (lambda t: T.repeat(t, 2), (2, 3)),
    "repeat_axis": (lambda t: T.repeat(t.T, 3, axis=1), (2, 3)),
    "repeat_list": (lambda t: T.repeat(t, [1, 0, 3], axis=0), (3, 2)),
    "repeat_tensor": (lambda t: t.repeat(idx([2, 1]), 1), (3, 2)),
    "repeat_len1": (lambda t: T.repeat(t, [2]), (3,)),
    "pad_constant": (lambda t: T.pad(t, ((1, 2), (0, 1)), constant_values=3.0), (3, 4)),
    "pad_int": (lambda t: T.pad(t.T, 1), (2, 3)),
    "pad_edge": (lambda t: T.pad(t, ((2, 1), (1, 0)), mode="edge"), (3, 2)),
    "pad_wrap": (lambda t: T.pad(t, 3, mode="wrap"), (2, 2)),
    "pad_reflect": (lambda t: T.pad(t, (2, 3), "reflect"), (3, 2)),
    "pad_symmetric": (lambda t: T.pad(t, {1: (1, 2)}, "symmetric"), (2, 3)),
    "fliplr": (lambda t: T.fliplr(t), (3, 4)),
    "flipud": (lambda t: T.flipud(t.T), (3, 4)),
    "rot90": (lambda t: T.rot90(t), (3, 4)),
    "rot90_k2": (lambda t: T.rot90(t, 2), (3, 4)),
    "rot90_k3_axes": (lambda t: T.rot90(t, 3, axes=(2, 0)), (2, 3, 2)),
    "rot90_neg": (lambda t: T.rot90(t, -1), (3, 4)),
    "atleast_1d": (lambda t: T.atleast_1d(t.sum()), (3,)),
    "atleast_2d": (lambda t: T.atleast_2d(t), (3,)),
    "atleast_3d": (lambda t: T.atleast_3d(t.T), (3, 2)),
    "atleast_3d_0d": (lambda t: T.atleast_3d(t[1]), (3,)),
}


@pytest.mark.parametrize("case", sorted(MANIP1))
def test_manip_gradcheck(case):
    fn, shape = MANIP1[case]
    check(fn, shape)


JOIN = {
    "concatenate": (lambda a, b: T.concatenate([a, b]), (2, 3), (1, 3)),
    "concatenate_axis1_nc": (lambda a, b: T.concatenate((a.T, b[::-1]), axis=1), (3, 2), (2, 2)),
    "concatenate_none": (lambda a, b: T.concatenate([a, b], axis=None), (2, 3), (4,)),
    "concatenate_neg": (lambda a, b: T.concatenate([b, a, b], -1), (2, 1), (2, 3)),
    "cat": (lambda a, b: T.cat([a, b], dim=1), (2, 3), (2, 2)),
    "stack": (lambda a, b: T.stack([a, b]), (2, 3), (2, 3)),
    "stack_axis": (lambda a, b: T.stack([a.T, b.T, a.T], axis=-1), (2, 3), (2, 3)),
    "hstack_1d": (lambda a, b: T.hstack([a, b]), (2,), (3,)),
    "hstack_2d": (lambda a, b: T.hstack([a, b]), (2, 1), (2, 3)),
    "vstack": (lambda a, b: T.vstack([a, b]), (3,), (2, 3)),
    "dstack": (lambda a, b: T.dstack([a, b]), (2, 3), (2, 3, 2)),
    "dstack_1d": (lambda a, b: T.dstack([a, b]), (3,), (3,)),
}


@pytest.mark.parametrize("case", sorted(JOIN))
def test_join_gradcheck(case):
    fn, sa, sb = JOIN[case]
    check(fn, sa, sb)


def test_join_mixed_inputs():
    a = rnd(2, 2)
    check(lambda t: T.concatenate([[[1.0, 2.0]], t, T.ones((1, 2), dtype=T.int64)]), (2, 2))
    out = T.concatenate([T.arange(2).reshape(1, 2), a])
    assert out.dtype is T.float64
    out.sum().backward()
    assert a.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    b = rnd(3)
    T.stack([[0.0, 1.0, 2.0], b, T.arange(3)]).sum().backward()
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_split_missing_grads_are_zero():
    x = rnd(6)
    a, b, c = T.split(x, 3)
    (b * 2.0).sum().backward()
    assert x.grad.tolist() == [0, 0, 2.0, 2.0, 0, 0]
    y = rnd(2, 3)
    T.unbind(y, 1)[0].sum().backward()
    assert y.grad.tolist() == [[1.0, 0, 0], [1.0, 0, 0]]


# ---------------------------------------------------------------- create_graph

GG = {
    "getitem": (lambda t: t[[0, 2, 0], 1:] ** 2, (3, 4)),
    "getitem_mask": (lambda t: T.sin(t[T.asarray(MASK)]), (3, 4)),
    "concatenate": (lambda t: T.concatenate([t * t, t[:1]]) ** 2, (2, 3)),
    "reshape": (lambda t: T.sin(t.T.reshape(-1)) * t.reshape(-1), (2, 3)),
    "broadcast_to": (lambda t: T.broadcast_to(t, (2, 3, 2)) ** 3, (3, 1)),
    "diagonal": (lambda t: T.diagonal(t, 1) ** 2, (3, 3)),
    "take_along": (lambda t: T.take_along_axis(t, idx([[0, 0], [1, 0]]), 1) ** 2, (2, 3)),
    "split": (lambda t: T.split(t, [1], 1)[1] ** 2, (2, 3)),
    "index_put": (lambda t: T.index_put_(t * t, ([0, 0],), t[1] * 2.0, True), (2, 2)),
    "pad_reflect": (lambda t: T.pad(t, 1, "reflect") ** 2, (3,)),
    "as_strided": (lambda t: T.as_strided(t, (2, 2), (1, 1)) ** 2, (3,)),
    "repeat": (lambda t: T.repeat(t, [2, 1]) ** 2, (2,)),
}


@pytest.mark.parametrize("case", sorted(GG))
def test_gradgradcheck(case):
    fn, shape = GG[case]
    assert ag.gradgradcheck(fn, (rnd(*shape),))


# ---------------------------------------------------------------- jvp rules vs finite differences

def _shift(a, t, s):
    if isinstance(a, list | tuple) and t is not None:
        return type(a)(_shift(x, tx, s) for x, tx in zip(a, t))
    if isinstance(a, T.Tensor):
        return a.copy() if t is None else a + s * t
    return a


def _outs(r):
    return [np.asarray(o.numpy(), dtype=np.float64) for o in (r if isinstance(r, list | tuple) else [r])]


def jvp_check(name, args, kwargs, tans, eps=1e-3):
    fn = PUB[name]

    def call(s):
        a = [_shift(x, t, s) for x, t in zip(args, tans)]
        r = fn(*a, **kwargs)
        return a[0] if name == "setitem" else r
    numeric = [(p - m) / (2 * eps) for p, m in zip(_outs(call(eps)), _outs(call(-eps)))]
    a = [_shift(x, None, 0) for x in args]
    out = fn(*a, **kwargs)
    out = a[0] if name == "setitem" else out
    tan = RULES[name].jvp(Ctx(tuple(a), kwargs, out), tuple(tans))
    got = _outs(tan)
    assert len(got) == len(numeric)
    for g, n, o in zip(got, numeric, _outs(out)):
        assert g.shape == n.shape == o.shape
        np.testing.assert_allclose(g, n, atol=1e-7, rtol=1e-6)


def r(*shape, seed=1):
    return rnd(*shape, seed=seed, grad=False)


A, B = r(2, 3, 4, seed=2), r(3, 4, seed=3)
JVP = [
    ("transpose", (A,), {}), ("transpose", (A, (2, 0, 1)), {}), ("permute", (A, 1, 2, 0), {}),
    ("swapaxes", (A, 0, 2), {}), ("moveaxis", (A, 0, -1), {}), ("matrix_transpose", (A,), {}),
    ("reshape", (A, 4, 6), {}), ("view", (A, -1), {}), ("flatten", (A,), {"start_dim": 1}),
    ("ravel", (B.T,), {}), ("squeeze", (r(1, 3, 1),), {"axis": 2}), ("expand_dims", (B, 1), {}),
    ("unsqueeze", (B, 0), {}), ("expand", (r(3, 1), 2, 3, 4), {}),
    ("broadcast_to", (r(3, 1), (2, 3, 4)), {}), ("diagonal", (A, 1, 0, 2), {}),
    ("as_strided", (r(6), (3, 3), (1, 1)), {}), ("as_strided", (B.T, (2, 2), (1, 4)), {}),
    ("flip", (A, (0, 2)), {}),
    ("getitem", (B, ([0, 0, 2], slice(1, None))), {}), ("getitem", (B, T.asarray(MASK)), {}),
    ("getitem", (B, (Ellipsis, None, 1)), {}),
    ("setitem", (B, ([0, 0], [1, 1]), r(2)), {}), ("setitem", (B, 1, r(4)), {}),
    ("index_put_", (B, ([0, 2, 0],), r(3, 4)), {"accumulate": True}),
    ("index_put_", (B, (slice(None), [1, 1]), r(3, 2)), {}),
    ("take", (B, [0, 5, 5]), {}), ("take", (B, [[1, 1]]), {"axis": 1}),
    ("take_along_axis", (B, idx([[0, 0, 1, 2]]), 0), {}),
    ("index_add", (B, 1, [0, 0, 3], r(3, 3)), {"alpha": 2.0}),
    ("index_add_", (B, 0, [1, 1], r(2, 4)), {}),
    ("scatter_add", (B, 1, idx([[0, 0], [1, 3], [2, 2]]), r(3, 3)), {}),
    ("scatter_add_", (B, 0, idx([[2, 2, 0, 0]]), r(1, 4)), {}),
    ("concatenate", ([B, r(1, 4)],), {}), ("concatenate", ([B, r(2)],), {"axis": None}),
    ("cat", ([r(3, 1), B],), {"dim": 1}), ("stack", ([B, B.T.T],), {"axis": 1}),
    ("hstack", ([r(3), r(2)],), {}), ("vstack", ([r(4), B],), {}), ("dstack", ([B, B],), {}),
    ("split", (B, [1, 3], 1), {}), ("array_split", (r(7), 3), {}), ("hsplit", (B, 2), {}),
    ("vsplit", (B, [2]), {}), ("chunk", (B, 2, 1), {}), ("unbind", (B, 1), {}),
    ("roll", (B, 2), {}), ("roll", (B, (1, 1), (0, 1)), {}), ("tile", (B, (2, 1)), {}),
    ("repeat", (B, 2), {"axis": 0}), ("repeat", (B, [1, 0, 2], 0), {}),
    ("pad", (B, 1), {"constant_values": 2.0}), ("pad", (B, (1, 2), "reflect"), {}),
    ("fliplr", (B,), {}), ("flipud", (B,), {}), ("rot90", (B, 3), {}),
    ("atleast_1d", (r(),), {}), ("atleast_2d", (r(3),), {}), ("atleast_3d", (B,), {}),
]


def _tangent_for(a, seed):
    if isinstance(a, T.Tensor) and a.dtype.kind == "f":
        return r(*a.shape, seed=seed)
    if isinstance(a, list) and any(isinstance(x, T.Tensor) for x in a):
        return [_tangent_for(x, seed + i) for i, x in enumerate(a)]
    return None


@pytest.mark.parametrize("k", range(len(JVP)), ids=[f"{c[0]}-{i}" for i, c in enumerate(JVP)])
def test_jvp_rule(k):
    name, args, kwargs = JVP[k]
    tans = [_tangent_for(a, 10 + i) for i, a in enumerate(args)]
    jvp_check(name, args, kwargs, tans)


@pytest.mark.parametrize("name,args,kwargs", [
    ("setitem", (B, 1, r(4)), {}), ("index_add", (B, 1, [0, 0, 3], r(3, 3)), {}),
    ("concatenate", ([B, r(1, 4)],), {}), ("scatter_add_", (B, 0, idx([[2, 2, 0, 0]]), r(1, 4)), {}),
    ("index_put_", (B, ([0, 2, 0],), r(3, 4)), {})])
@pytest.mark.parametrize("which", [0, -1])
def test_jvp_rule_partial_tangents(name, args, kwargs, which):
    """Only one of the differentiable inputs carries a tangent (the others count as zero)."""
    tans = [_tangent_for(a, 20 + i) for i, a in enumerate(args)]
    live = [i for i, t in enumerate(tans) if t is not None]
    keep = live[which]
    tans = [t if i == keep else None for i, t in enumerate(tans)]
    if isinstance(tans[keep], list):
        tans[keep] = [tans[keep][0]] + [None] * (len(tans[keep]) - 1)
    jvp_check(name, args, kwargs, tans)


# ---------------------------------------------------------------- end to end: forward mode

forward = pytest.importorskip("autograd.forward")


def _fd(fn, x, t, eps=1e-5):
    return (fn(x + eps * t).numpy() - fn(x - eps * t).numpy()) / (2 * eps)


def _inplace_chain(a):
    y = a * 1.0
    T.index_add_(y, 0, [0, 0], a[:2] * 5.0)
    T.index_put_(y, ([2, 2], [1, 1]), a[0, :2] ** 2, True)
    return T.concatenate([y[[1, 1, 0]], T.split(y, [1], 0)[1].T.reshape(2, 4)]) * y.sum()


def _setitem_chain(a):
    y = a * 1.0
    y[1] = a[0] * 3.0
    y[[0, 2, 0], [3, 3, 3]] = a[2, :3] ** 2
    return y


@pytest.mark.parametrize("fn", [
    lambda a: a.T[[0, 0, 2], 1:] ** 2,
    lambda a: T.stack(T.unbind(T.pad(a, 1, "reflect")[::-1], 1)[1:3]),
    lambda a: T.as_strided(a, (3, 2), (1, 2)) * T.diagonal(a)[:2],
    _inplace_chain,
    pytest.param(_setitem_chain, marks=needs_setitem),
])
def test_forward_mode_end_to_end(fn):
    x, t = r(3, 4, seed=5), r(3, 4, seed=6)
    out, tan = forward.jvp(fn, x, t)
    np.testing.assert_allclose(out.numpy(), fn(x).numpy())
    np.testing.assert_allclose(tan.numpy(), _fd(fn, x, t), atol=1e-6, rtol=1e-5)


def test_unsupported_parameters_raise():
    x, a = rnd(3), rnd(seed=1)
    with pytest.raises(NotImplementedError, match="alpha"):
        T.index_add(x, 0, [0], rnd(1, seed=2), a).sum().backward()
    c = rnd(seed=3)
    with pytest.raises(NotImplementedError, match="constant_values"):
        T.pad(x, 1, "constant", c).sum().backward()


def test_put_along_axis_refuses_tensors_that_need_a_gradient():
    """put_along_axis has no derivative rule: writing into (or from) a tensor that needs a
    gradient raises instead of leaving the write off the graph (a silently wrong gradient)."""
    idx = T.tensor([[1], [2]])
    x = T.zeros((2, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="put_along_axis: not differentiable"):
        T.put_along_axis(x, idx, 5.0, 1)
    y = T.zeros((2, 3))
    with pytest.raises(RuntimeError, match="put_along_axis: not differentiable"):
        T.put_along_axis(y, idx, T.ones((2, 1), requires_grad=True), 1)
    assert y.tolist() == [[0.0] * 3] * 2 and x.tolist() == [[0.0] * 3] * 2   # nothing written
    with ag.no_grad():
        T.put_along_axis(y, idx, T.ones((2, 1), requires_grad=True), 1)
    assert y.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
