"""Fixes of the fourth hunt outside the helpers' areas (reported by them, fixed by the lead):

- lerp with a Python float weight on a tensor off the default device;
- scatter_reduce / index_reduce take an index on another device, as scatter_add does;
- x.eq_(y) and the other in-place forms of ops with no float output on a float tensor of the
  graph give zero gradients (PyTorch's) instead of raising.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def test_lerp_with_a_float_weight_off_the_default_device(device):
    """Caught: on CUDA with the CPU as default device, T.lerp(x, y, 0.75) raised (its
    1 - weight was made as a CPU tensor)."""
    T.set_default_device("cpu")   # (the fixture restores it) tensors moved by hand
    a, b = np.array([1.0, 2.0, -3.0]), np.array([0.0, 4.0, 5.0])
    x, y = T.asarray(a).to(device), T.asarray(b).to(device)
    for w in (0.25, 0.75, 1.0, -2.0):
        got = T.lerp(x, y, w)
        assert got.device == x.device
        np.testing.assert_allclose(got.numpy(), a + w * (b - a), rtol=1e-15)
        z = x.copy()
        z.lerp_(y, w)
        np.testing.assert_allclose(z.numpy(), a + w * (b - a), rtol=1e-15)
    assert T.lerp(x, y, 1.0).tolist() == b.tolist()     # weight 1 gives end exactly


def test_scatter_reduce_takes_an_index_on_another_device(device):
    """Caught: on CUDA, scatter_reduce_ / index_reduce_ refused a CPU index that scatter_add_
    and index_add_ accept."""
    x = T.zeros(4, dtype=T.float64, device=device)
    src = T.asarray([1.0, 2.0, 3.0], device=device)
    idx = T.asarray([0, 1, 1], device="cpu")
    assert x.copy().scatter_reduce_(0, idx, src, "sum").tolist() == [1.0, 5.0, 0.0, 0.0]
    assert T.ones(4, dtype=T.float64, device=device).index_reduce_(
        0, idx, src, "prod").tolist() == [1.0, 6.0, 1.0, 1.0]
    if device != "cpu":   # src stays on input's device
        with pytest.raises(ValueError, match=r"^scatter_reduce: input and src must be on one dev"):
            T.scatter_reduce(x, 0, idx, src.to("cpu"), "sum")


@pytest.mark.parametrize("name,arg", [("eq_", 0.5), ("lt_", 1.5), ("logical_and_", 1.0),
                                      ("isnan_", None), ("ge_", 1.0)])
def test_in_place_comparison_on_the_graph_gives_zero_gradients(device, name, arg):
    """Caught: y.eq_(...) on a float y of the graph raised NotImplementedError; PyTorch gives
    the 0 / 1 values a zero gradient (x.grad below is the other factor's: r itself)."""
    x = T.asarray([0.5, 1.0, 2.0]).requires_grad_()
    y = x * 1.0
    r = getattr(y, name)() if arg is None else getattr(y, name)(T.asarray(arg))
    assert r is y
    (r * x).sum().backward()
    assert x.grad.tolist() == r.detach().tolist()
    _, tan = autograd.jvp(lambda v: getattr(v * 1.0, name)() if arg is None
                          else getattr(v * 1.0, name)(arg), (T.asarray([0.5, 2.0]),),
                          (T.asarray([1.0, 1.0]),))
    assert tan.tolist() == [0.0, 0.0]
    with pytest.raises(NotImplementedError, match="nextafter_"):   # a float output: no rule
        (x * 1.0).nextafter_(T.asarray(3.0))


def test_function_forms_put_numpy_operands_on_the_tensors_device(device):
    """Caught: with the CPU as default device, T.add(x, np.float64(1)), x.add_(np.float64(1)),
    T.where(c, x, np.float64(5)), T.maximum(x, np.array(...)), T.clip with NumPy bounds on a
    CUDA x raised "tensors are on different devices" (the operators already moved them)."""
    T.set_default_device("cpu")   # (the fixture restores it)
    a = np.array([1.0, 2.0, 3.0])
    x = T.asarray(a).to(device)
    c = T.asarray([True, False, True]).to(device)
    cases = [
        (lambda: T.add(x, np.float64(1)), a + 1),
        (lambda: T.subtract(np.float64(1), x), 1 - a),
        (lambda: x.copy().add_(np.float64(1)), a + 1),
        (lambda: T.maximum(x, np.array([2.0, 2.0, 2.0])), np.maximum(a, 2.0)),
        (lambda: T.multiply(x, [1.0, 2.0, 3.0]), a * [1.0, 2.0, 3.0]),
        (lambda: T.clip(x, np.float64(1.5), np.float64(2.5)), np.clip(a, 1.5, 2.5)),
        (lambda: T.where(c, x, np.float64(5)), np.where([True, False, True], a, 5.0)),
        (lambda: T.where(c, np.ones(3), x), np.where([True, False, True], 1.0, a)),
        (lambda: T.where(True, x, 0.0), a),
    ]
    for fn, want in cases:
        got = fn()
        assert got.device == x.device
        np.testing.assert_array_equal(got.numpy(), want)
    y = T.asarray(a, device="cpu")
    if device != "cpu":   # two tensors on two devices still raise
        with pytest.raises(ValueError, match=r"^add: tensors are on different devices"):
            T.add(x, y)


def test_module_deepcopy_keeps_parameters_sharing_one_buffer(device):
    """Caught: deepcopy of a module whose parameters are views of one flat buffer gave
    parameters with memory of their own (Tensor's deepcopy keeps such views sharing)."""
    import copy

    import nn
    flat = T.arange(8.0)
    m = nn.Linear(3, 2)
    m.weight, m.bias = nn.Parameter(flat[:6].reshape(2, 3)), nn.Parameter(flat[6:])
    m.weight.grad = T.ones((2, 3))
    m2 = copy.deepcopy(m)
    assert m2.weight._storage is m2.bias._storage is not m.weight._storage
    assert m2.weight.tolist() == m.weight.tolist() and m2.bias.tolist() == [6.0, 7.0]
    assert m2.weight.grad.tolist() == [[1.0] * 3] * 2 and m2.weight.requires_grad
    with autograd.no_grad():
        m2.bias.fill_(0.0)
    assert m.bias.tolist() == [6.0, 7.0] and m2.weight.tolist()[1] == [3.0, 4.0, 5.0]


def test_float32_sum_rounding_stays_near_numpys(device):
    """Caught: the CPU's float32 sum folded 256 elements into each lane accumulator in a row,
    so 10**6 x 0.1 came out 2.3e-6 off (NumPy's pairwise sum: 6e-8); blocks of 32 per lane
    now (3.3e-7), contiguous and strided."""
    n = 10**6
    a = np.full(2 * n, 0.1, np.float32)
    exact = n * float(np.float32(0.1))
    x = T.asarray(a, device=device)
    for got in (x[:n].sum(), x[::2].sum(), x.reshape(2, n).sum(axis=1)[0]):
        assert abs(float(got.item()) - exact) / exact < 5e-7


@pytest.mark.parametrize("name", ["split", "chunk", "unbind", "tensor_split"])
def test_in_place_write_into_a_later_piece_of_a_multi_output_view(device, name):
    """Caught: writing in place into any piece but the first of split / chunk / unbind /
    tensor_split crashed backward with a bare IndexError (the piece kept its output number 1
    under the in-place node, which has one output). The write reaches the base, as any view's."""
    fns = {"split": lambda y: T.split(y, 2, axis=1), "chunk": lambda y: T.chunk(y, 2, 1),
           "unbind": lambda y: T.unbind(y, 1), "tensor_split": lambda y: T.tensor_split(y, 2, 1)}
    x = T.ones((3, 4), dtype=T.float64).requires_grad_()
    y = x * 1
    fns[name](y)[1].__imul__(4.0)
    T.exp(y).sum().backward()
    cols = [1] if name == "unbind" else [2, 3]
    want = np.full((3, 4), np.e)
    want[:, cols] = 4 * np.exp(4.0)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-14)


def test_transpose_of_two_axes_on_a_higher_rank_tensor_swaps_them(device):
    """PyTorch's x.transpose(0, 1) on a 3-d tensor (which NumPy refuses: its transpose wants
    every axis) swaps the two axes (it raised, pointing at swapaxes)."""
    x = T.arange(24.0, device=device).reshape(2, 3, 4)
    for a, b in ((0, 1), (-2, -1), (2, 0), (1, 1)):
        np.testing.assert_array_equal(x.transpose(a, b).numpy(), np.swapaxes(x.numpy(), a, b))
        np.testing.assert_array_equal(T.transpose(x, a, b).numpy(), np.swapaxes(x.numpy(), a, b))
    assert x.transpose(2, 0, 1).shape == (4, 2, 3) and T.swapaxes(x, 0, 1).shape == (3, 2, 4)
    m = T.arange(6.0, device=device).reshape(2, 3)
    assert m.transpose(1, 0).shape == (3, 2) and m.transpose(0, 1).shape == (2, 3)   # NumPy's
    with pytest.raises(ValueError, match="repeated axis"):
        x.transpose(0, 1, 1)
