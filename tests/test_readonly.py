"""Read-only tensors (issue 11, items 3 and 7): the `flags.writeable` flag, which broadcast
views, read-only external memory and `t.flags.writeable = False` clear, and which every path
that writes a tensor checks before it writes (NumPy's "assignment destination is read-only" /
"output array is read-only", ValueError). NumPy arrays exported from a read-only tensor are
read-only; `from_numpy` shares read-only arrays read-only and refuses what it cannot share."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import to_np

import autograd
import tensor as T
from nn.optim import SGD


def _f(shape=(4, 3)):
    """A float64 tensor of distinct values on the test's device (and its NumPy copy)."""
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1.0
    return a, T.asarray(a.copy())


# Every way of writing a tensor x of shape (4, 3) (float64). Each must refuse a read-only x.
WRITES = {
    "iadd": lambda x: x.__iadd__(1.0),
    "imul_tensor": lambda x: x.__imul__(T.ones(3, dtype="float64")),
    "add_": lambda x: x.add_(1.0),
    "exp_": lambda x: x.exp_(),
    "neg_out": lambda x: T.negative(T.ones((4, 3), dtype="float64"), out=x),
    "add_out": lambda x: T.add(T.ones(3, dtype="float64"), T.ones((4, 1), dtype="float64"), out=x),
    "sum_out": lambda x: T.sum(T.ones((2, 4, 3), dtype="float64"), axis=0, out=x),
    "matmul_out": lambda x: T.matmul(T.ones((4, 2), dtype="float64"), T.ones((2, 3), dtype="float64"),
                                     out=x),
    "round_out": lambda x: T.round(T.ones((4, 3), dtype="float64"), 1, out=x),
    "clip_": lambda x: x.clip_(0.0, 1.0),
    "clip_min_only": lambda x: x.clip_(0.0, None),
    "clip_out": lambda x: T.clip(T.ones((4, 3), dtype="float64"), 0.0, 0.5, out=x),
    "setitem_int": lambda x: x.__setitem__(0, 5.0),
    "setitem_ellipsis": lambda x: x.__setitem__(Ellipsis, 5.0),
    "setitem_slice_tensor": lambda x: x.__setitem__(slice(1, 3), T.zeros(3, dtype="float64")),
    "setitem_advanced": lambda x: x.__setitem__(([0, 1], [2, 0]), 5.0),
    "setitem_mask": lambda x: x.__setitem__(T.ones((4, 3), dtype="bool"), 5.0),
    "setitem_row_mask": lambda x: x.__setitem__(T.tensor([True, False, True, False]), 5.0),
    "fill_": lambda x: x.fill_(5.0),
    "fill_tensor": lambda x: x.fill_(T.tensor(5.0, dtype="float64")),
    "zero_": lambda x: x.zero_(),
    "copy_": lambda x: x.copy_(T.zeros((4, 3), dtype="float64")),
    "index_put_": lambda x: T.index_put_(x, (T.tensor([0, 2]),), 5.0),
    "index_put_basic": lambda x: T.index_put_(x, (1,), 5.0),
    "index_put_accumulate": lambda x: T.index_put_(x, (1,), 5.0, accumulate=True),
    "index_add_": lambda x: T.index_add_(x, 0, [0, 0], T.ones((2, 3), dtype="float64")),
    "scatter_add_": lambda x: T.scatter_add_(x, 0, T.tensor([[0, 1, 2]]), T.ones((1, 3), dtype="float64")),
    "put_along_axis": lambda x: T.put_along_axis(x, T.tensor([[0], [1], [2], [0]]), 5.0, 1),
    "put_along_axis_flat": lambda x: T.put_along_axis(x, T.tensor([0, 5]), 5.0, None),
}


def _read_only_views():
    """(name, make) -> (base values, base tensor, read-only (4, 3) tensor over the base)."""
    def bcast_row():
        a, b = _f((3,))
        return a, b, T.broadcast_to(b, (4, 3))

    def bcast_col():
        a, b = _f((4, 1))
        return a, b, T.broadcast_to(b, (4, 3))

    def expand():
        a, b = _f((1, 3))
        return a, b, b.expand(4, 3)

    def expand_as():
        a, b = _f((4, 1))
        return a, b, b.expand_as(T.zeros((4, 3)))

    def slice_of_broadcast():
        a, b = _f((3,))
        return a, b, T.broadcast_to(b, (8, 3))[::2]

    def broadcast_to_same_shape():   # NumPy: broadcast_to always returns a read-only view
        a, b = _f((4, 3))
        return a, b, T.broadcast_to(b, (4, 3))

    def locked():
        a, b = _f((4, 3))
        b.flags.writeable = False
        return a, b, b

    def view_of_locked():
        a, b = _f((3, 4))
        b.flags.writeable = False
        return a, b, b.T

    def detached_locked():
        a, b = _f((4, 3))
        b.flags.writeable = False
        return a, b, b.detach()

    return {f.__name__: f for f in (bcast_row, bcast_col, expand, expand_as, slice_of_broadcast,
                                    broadcast_to_same_shape, locked, view_of_locked, detached_locked)}


READ_ONLY = _read_only_views()


@pytest.mark.parametrize("kind", sorted(READ_ONLY))
@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_refuses_a_read_only_tensor(device, kind, write):
    a, base, x = READ_ONLY[kind]()
    assert not x.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        WRITES[write](x)
    np.testing.assert_array_equal(to_np(base), a)   # nothing was written through


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_works_on_a_writeable_tensor(device, write):
    """The same calls succeed on an ordinary tensor (so the refusals above are about the flag)."""
    _, x = _f((4, 3))
    assert x.flags.writeable
    WRITES[write](x)


def test_issue_example_broadcast_write_leaves_base_alone(device):
    b = T.zeros(3)
    x = T.broadcast_to(b, (4, 3))
    with pytest.raises(ValueError, match="add: output array is read-only"):
        x += 1
    with pytest.raises(ValueError, match="setitem: assignment destination is read-only"):
        x[0] = 1
    with pytest.raises(ValueError, match="clip"):
        T.clip(x, 0, 1, out=x)
    assert b.tolist() == [0.0, 0.0, 0.0]


def test_broadcast_flags_follow_numpy(device):
    """Which views are read-only, side by side with NumPy (and PyTorch's expand)."""
    a = np.zeros((3, 1))
    x = T.zeros((3, 1))
    pairs = [(T.broadcast_to(x, (2, 3, 4)), np.broadcast_to(a, (2, 3, 4))),
             (T.broadcast_to(x, (3, 1)), np.broadcast_to(a, (3, 1))),
             (T.broadcast_to(x, (2, 3, 4))[0], np.broadcast_to(a, (2, 3, 4))[0]),
             (x[:, 0], a[:, 0]), (x.T, a.T), (x.reshape(3), a.reshape(3))]
    for t, n in pairs:
        assert t.flags.writeable == n.flags.writeable, (t.shape, t.strides)
    assert x.flags.writeable                         # the base of a broadcast view stays writeable
    assert x.expand(3, 1).flags.writeable            # PyTorch: expand without repeats is writeable
    assert x.expand(-1, -1).flags.writeable
    assert not x.expand(3, 4).flags.writeable
    assert not x.expand(2, 3, 1).flags.writeable
    y = x.expand(3, 1)
    y += 1
    assert x.tolist() == [[1.0], [1.0], [1.0]]


def test_results_of_broadcasting_ops_are_writeable(device):
    """Broadcasting inside an op makes read-only operand views, never read-only results."""
    r = T.zeros(3) + T.ones((2, 1))
    assert r.flags.writeable
    r += 1
    assert r.tolist() == [[2.0] * 3] * 2
    for t in (T.broadcast_to(T.ones(3), (2, 3)).copy(), T.broadcast_to(T.ones(3), (2, 3)) * 2,
              T.broadcast_to(T.ones(3), (2, 3)).astype("float32"), T.where(T.ones(3) > 0, 1.0, 2.0)):
        assert t.flags.writeable


def test_set_writeable_follows_numpy(device):
    """Setting the flag: off always works; back on works unless the memory is read-only by origin
    or a tensor this one views is still read-only (NumPy's rules, checked side by side)."""
    for mod, arr in ((T, T.zeros((2, 3))), (np, np.zeros((2, 3)))):
        arr.flags.writeable = False
        v = arr[:, 1:]
        assert not v.flags.writeable
        with pytest.raises(ValueError, match="WRITEABLE"):
            v.flags.writeable = True                 # its base is still read-only
        arr.flags.writeable = True
        assert not v.flags.writeable                 # a view keeps its own flag ...
        v.flags.writeable = True                     # ... and may now be unlocked
        assert v.flags.writeable
        w = arr[0]
        w.flags.writeable = False                    # locking a view leaves its base writeable
        assert arr.flags.writeable and not w.flags.writeable
        w.flags.writeable = True
        assert w.flags.writeable, mod.__name__


def test_broadcast_views_never_become_writeable(device):
    """Unlike NumPy, which lets some broadcast views be flagged writeable again (a deprecated
    corner), a view that repeats elements stays read-only, as PyTorch refuses such writes."""
    x = T.zeros((2, 3))
    for b in (T.broadcast_to(x[0], (4, 3)), T.broadcast_to(x, (2, 3)), x[:1].expand(4, 3),
              T.broadcast_to(x, (5, 2, 3)).T):
        with pytest.raises(ValueError, match="cannot set WRITEABLE flag to True"):
            b.flags.writeable = True
        assert not b.flags.writeable
        b.flags.writeable = False                    # turning it off is always allowed
    assert x.flags.writeable


def test_read_only_tensor_copies_are_writeable(device):
    _, x = _f((4, 3))
    x.flags.writeable = False
    for c in (x.copy(), x.clone(), x.astype("float32"), x + 0, T.tensor(x), T.asarray(x, copy=True),
              x.T.contiguous()):
        assert c.flags.writeable
        c += 1
    assert x.contiguous() is x                       # no copy, so still read-only
    assert not x.reshape(12).flags.writeable and not x[1:].flags.writeable


def test_numpy_export_of_read_only_tensors_is_read_only():
    """np.asarray(t) / t.numpy() of a read-only tensor is a read-only array (NumPy's writes fail)."""
    b = T.arange(3.0)
    v = T.broadcast_to(b, (2, 3))
    for arr in (np.asarray(v), v.numpy(), np.asarray(v[0])):
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 7
    b2 = T.arange(3.0)
    b2.flags.writeable = False
    assert not np.asarray(b2).flags.writeable
    assert np.asarray(T.arange(3.0)).flags.writeable
    assert np.array(v).flags.writeable                # np.array copies
    assert b.tolist() == [0.0, 1.0, 2.0]


def test_from_numpy_shares_read_only_arrays_read_only():
    a = np.arange(6.0).reshape(2, 3)
    a.flags.writeable = False
    t = T.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data and not t.flags.writeable   # shared, not copied
    with pytest.raises(ValueError, match="read-only"):
        t[0, 0] = 9
    with pytest.raises(ValueError, match="read-only"):
        t.T.add_(1)
    with pytest.raises(ValueError, match="WRITEABLE"):
        t.flags.writeable = True                     # read-only by origin
    assert a[0, 0] == 0.0
    fb = T.from_numpy(np.frombuffer(b"\x01\x02\x03\x04", np.uint8))   # immutable bytes
    assert not fb.flags.writeable and fb.tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="read-only"):
        fb.fill_(0)
    bro = T.from_numpy(np.broadcast_to(np.arange(3), (2, 3)))
    assert not bro.flags.writeable and bro.tolist() == [[0, 1, 2]] * 2
    assert not np.asarray(t).flags.writeable         # and it goes back to NumPy read-only


def test_asarray_shares_read_only_arrays_read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = T.asarray(a)
    assert t.data_ptr() == a.ctypes.data and not t.flags.writeable
    for c in (T.asarray(a, copy=True), T.array(a), T.tensor(a), T.asarray(a, dtype="float32")):
        assert c.flags.writeable and c.data_ptr() != a.ctypes.data
    w = np.arange(4.0)
    assert T.asarray(w).flags.writeable and T.from_numpy(w).flags.writeable


def _misaligned():
    raw = np.zeros(8 * 4 + 1, np.uint8)
    return raw[1:].view(np.int64)


@pytest.mark.parametrize("make, why", [
    (lambda: np.arange(4, dtype=">i4"), "byte order"),
    (lambda: np.arange(4.0).astype(">f8").reshape(2, 2).T, "byte order"),
    (_misaligned, "not a multiple of its itemsize"),
    (lambda: np.lib.stride_tricks.as_strided(np.zeros(8, np.int32), (3,), (6,)), "strides"),
])
def test_from_numpy_refuses_what_it_cannot_share(make, why):
    """from_numpy promises shared memory: it raises instead of copying (PyTorch raises for byte
    order and strides too); asarray copies those arrays (it may copy), except with copy=False."""
    a = make()
    with pytest.raises(ValueError, match=why):
        T.from_numpy(a)
    with pytest.raises(ValueError, match="from_numpy: .*" + str(a.dtype)):
        T.from_numpy(a)
    t = T.asarray(a)
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.flags.writeable
    with pytest.raises(ValueError, match="copy=False"):
        T.asarray(a, copy=False)


def test_from_numpy_reports_an_unsupported_dtype_first():
    with pytest.raises(TypeError, match="unsupported data type"):
        T.from_numpy(np.zeros(2, ">f16"))


def test_from_numpy_odd_but_shareable_layouts():
    """Size-1 axes with any stride, negative strides and empty arrays are shared as they are."""
    a = np.arange(12.0).reshape(3, 4)[::-1, ::2]
    t = T.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data and t.tolist() == a.tolist()
    b = np.lib.stride_tricks.as_strided(np.arange(4.0), (1, 4), (3, 8))   # odd stride, size-1 axis
    tb = T.from_numpy(b)
    assert tb.tolist() == b.tolist() and tb.data_ptr() == b.ctypes.data
    tb[0, 1] = 9.0
    assert b[0, 1] == 9.0
    assert T.from_numpy(np.zeros((0, 3))).shape == (0, 3)


def test_dlpack_carries_read_only():
    a = T.arange(4.0)
    ro = T.broadcast_to(a, (2, 4))
    n = np.from_dlpack(ro)                           # NumPy asks for a versioned capsule
    assert not n.flags.writeable and n.tolist() == [[0.0, 1.0, 2.0, 3.0]] * 2
    with pytest.raises(BufferError, match="read-only"):
        ro.__dlpack__()                              # a legacy capsule cannot say read-only
    assert np.from_dlpack(a).flags.writeable
    c = np.from_dlpack(ro, copy=True)                # a copy is the consumer's to write
    assert c.flags.writeable
    src = np.frombuffer(b"\x00" * 16, np.float64)    # immutable memory from another library
    t = T.from_dlpack(src)
    assert not t.flags.writeable and t.data_ptr() == src.ctypes.data
    with pytest.raises(ValueError, match="read-only"):
        t += 1
    w = np.zeros(3)
    tw = T.from_dlpack(w)
    tw += 1
    assert w.tolist() == [1.0, 1.0, 1.0]


def test_autograd_gradients_are_writeable(device):
    """Gradients that come out of broadcasting rules (sum, broadcast_to, expand) are stored as
    writeable tensors, so zero_grad(set_to_none=False) and user writes into .grad work."""
    w = T.ones((3, 4)).T.requires_grad_()           # a non-contiguous leaf keeps the rule's layout
    v = T.ones(3, dtype="float32").requires_grad_()
    u = T.ones((1, 3)).requires_grad_()
    (w.sum() + T.broadcast_to(v, (5, 3)).sum() + u.expand(4, 3).sum()).backward()
    for p, g in ((w, np.ones((4, 3))), (v, np.full(3, 5.0)), (u, np.full((1, 3), 4.0))):
        np.testing.assert_array_equal(to_np(p.grad), g)
        assert p.grad.flags.writeable
    opt = SGD([w, v, u], lr=0.5)
    opt.step()
    np.testing.assert_array_equal(to_np(v), np.full(3, -1.5, np.float32))
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [[0.0] * 3] * 4
    x = T.ones(3).requires_grad_()
    (gx,) = autograd.grad(T.broadcast_to(x, (2, 3)).sum(), [x], create_graph=True)
    assert gx.tolist() == [2.0, 2.0, 2.0]
    y = x * 2
    y.retain_grad()                                  # a non-leaf's .grad, kept by a hook
    y.sum().backward()
    z = x * 3
    z.sum().backward(inputs=[z])                     # .grad of an explicit input
    for t in (y, z):
        assert t.grad.flags.writeable and t.grad.tolist() == [1.0, 1.0, 1.0]
        t.grad.zero_()


def test_optimizer_refuses_a_read_only_parameter():
    a = np.ones(3, np.float32)
    a.flags.writeable = False
    p = T.from_numpy(a).requires_grad_()
    (p * p).sum().backward()
    with pytest.raises(ValueError, match="read-only"):
        SGD([p], lr=0.1).step()
    assert a.tolist() == [1.0, 1.0, 1.0]
