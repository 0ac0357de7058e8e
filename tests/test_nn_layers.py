"""Layers of nn: convolutions (nn/conv.py), pooling, normalization, embedding, attention.

- torch-free: hand-computed values, float64 gradcheck / gradgradcheck of every layer, the
  im2col/col2im primitives against their as_strided composition (values, gradients, jvp),
  batch norm's running statistics, the wrong-input-shape errors, PyTorch's init and shapes.
- with torch: every layer against torch (weights copied over; outputs and gradients of input
  and parameters, float32 and float64, hypothesis-drawn shapes and stride / padding /
  dilation / groups combinations).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import synced
from hypothesis import given
from hypothesis import strategies as st

import autograd as ag
import tensor as T
from autograd.forward import jvp
from nn.attention import MultiheadAttention, multi_head_attention_forward
from nn.conv import (
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    col2im,
    conv1d,
    conv2d,
    conv_transpose2d,
    fold,
    im2col,
    unfold,
)
from nn.embedding import Embedding, embedding
from nn.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, batch_norm, group_norm
from nn.pooling import (
    AdaptiveAvgPool2d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool2d,
)

pytestmark = pytest.mark.usefixtures("device")

F64 = T.float64


def rnd(*shape, seed=0, grad=True, dtype=F64):
    x = T.asarray(np.random.default_rng(seed).standard_normal(shape)).astype(dtype)
    return x.requires_grad_() if grad else x


def close(a, b, dtype=F64):
    tol = 1e-9 if dtype is F64 else 2e-4
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0))))


# ---------------------------------------------------------------- hand-computed values

def test_conv_values_by_hand():
    x = T.arange(16.0).reshape(1, 1, 4, 4)
    assert conv2d(x, T.ones((1, 1, 2, 2)), stride=2).reshape(-1).tolist() == [10.0, 18.0, 42.0, 50.0]
    y = conv2d(x, T.ones((2, 1, 1, 1)), T.tensor([0.0, 1.0]), padding=1)
    assert y.shape == (1, 2, 6, 6) and y[0, 1, 0, 0].item() == 1.0 and y[0, 0, 1, 1].item() == 0.0
    assert conv1d(T.ones((1, 1, 5)), T.ones((1, 1, 3)), dilation=2).tolist() == [[[3.0]]]
    assert conv2d(T.ones((3, 3)).reshape(1, 3, 3), T.ones((1, 1, 3, 3)), padding="same")[0].tolist() \
        == [[4.0, 6.0, 4.0], [6.0, 9.0, 6.0], [4.0, 6.0, 4.0]]
    # transposed conv scatters every input pixel's kernel, overlaps summed
    y = conv_transpose2d(T.ones((1, 1, 2, 2)), T.ones((1, 1, 3, 3)), stride=2, output_padding=1)
    assert y.shape == (1, 1, 6, 6) and y[0, 0, 2].tolist() == [2.0, 2.0, 4.0, 2.0, 2.0, 0.0]


def test_pooling_values_by_hand():
    x = T.tensor([[[[1.0, 5.0, 2.0], [4.0, 3.0, 0.0], [7.0, 6.0, 9.0]]]], requires_grad=True)
    y, idx = max_pool2d(x, 2, stride=1, return_indices=True)
    assert y.reshape(-1).tolist() == [5.0, 5.0, 7.0, 9.0] and idx.reshape(-1).tolist() == [1, 1, 6, 8]
    y.sum().backward()  # the two windows sharing the 5 both send it their gradient
    assert x.grad.reshape(-1).tolist() == [0, 2, 0, 0, 0, 0, 1, 0, 1]
    assert avg_pool2d(x, 2, padding=1, count_include_pad=False).reshape(-1).tolist() == \
        [1.0, 3.5, 5.5, 4.5]
    close(adaptive_avg_pool2d(x, (1, 2)).reshape(-1), [26 / 6, 25 / 6])
    ties = T.ones((1, 1, 2, 2)).requires_grad_()
    max_pool2d(ties, 2).sum().backward()  # ties: the first maximum gets the gradient
    assert ties.grad.reshape(-1).tolist() == [1.0, 0.0, 0.0, 0.0]
    nan = max_pool2d(T.tensor([[[[1.0, math.nan], [3.0, 2.0]]]]), 2, return_indices=True)
    assert math.isnan(nan[0].item()) and nan[1].item() == 1  # NaN propagates, as PyTorch


def test_batch_norm_running_stats_by_hand():
    bn = BatchNorm1d(2, dtype=F64)
    x = T.tensor([[1.0, 2.0], [3.0, 6.0]])
    y = bn(x)  # batch mean (2, 4), biased var (1, 4), unbiased (2, 8)
    close(y, [[-1 / math.sqrt(1 + 1e-5), -2 / math.sqrt(4 + 1e-5)],
              [1 / math.sqrt(1 + 1e-5), 2 / math.sqrt(4 + 1e-5)]])
    close(bn.running_mean, [0.2, 0.4])
    close(bn.running_var, [0.9 + 0.2, 0.9 + 0.8])
    assert bn.num_batches_tracked.item() == 1 and bn.num_batches_tracked.dtype is T.int64
    bn.eval()
    close(bn(x), (np.array([[1.0, 2.0], [3.0, 6.0]]) - [0.2, 0.4]) / np.sqrt(np.array([1.1, 1.7]) + 1e-5))
    assert bn.num_batches_tracked.item() == 1  # eval does not count
    cum = BatchNorm2d(1, momentum=None, affine=False, dtype=F64)
    for v in (1.0, 5.0):  # cumulative average of the batch means: (1 + 5) / 2
        cum(T.tensor([v, v + 2.0]).reshape(2, 1, 1, 1))
    close(cum.running_mean, [4.0])
    close(cum.running_var, [2.0])
    free = BatchNorm1d(2, track_running_stats=False).eval()  # no stats: always the batch's
    assert free.running_mean is None and "running_mean" not in free.state_dict()
    close(free(T.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=T.float32)), [[-1, -1], [1, 1]], T.float32)


def test_group_norm_layer_norm_embedding_by_hand():
    close(group_norm(T.tensor([[1.0, 3.0, 0.0, 4.0]]), 2, eps=0.0), [[-1, 1, -1, 1]])
    assert group_norm(T.zeros((0, 4, 3)), 2).shape == (0, 4, 3)   # an empty batch
    assert GroupNorm(2, 4)(T.zeros((0, 4), dtype=T.float32)).shape == (0, 4)
    r = 1 / math.sqrt(1 + 1e-5)
    close(LayerNorm(2, dtype=F64)(T.tensor([[1.0, 3.0]])), [[-r, r]])
    w = T.arange(6.0).reshape(3, 2).requires_grad_()
    out = embedding(T.tensor([[2, 0], [2, 1]]), w, padding_idx=1)
    assert out.tolist() == [[[4.0, 5.0], [0.0, 1.0]], [[4.0, 5.0], [2.0, 3.0]]]
    out.sum().backward()  # row 2 read twice accumulates; padding row 1 gets nothing
    assert w.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]


def test_attention_by_hand():
    e = T.eye(4)
    x = T.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]]).reshape(3, 1, 4)
    args = (4, 2, T.concatenate([e, e, e]), None, None, None, False, 0.0, e, None)
    out, w = multi_head_attention_forward(x, x, x, *args)
    s = math.exp(1 / math.sqrt(2))  # head 0 sees dims 0-1: query i matches key i
    close(w[0, 0], [s / (s + 2) / 2 + 1 / 6, 1 / (s + 2) / 2 + 1 / 6, 1 / (s + 2) / 2 + 1 / 6])
    mask = T.tensor([[False, True, True]] * 3)
    out, w = multi_head_attention_forward(x, x, x, *args, attn_mask=mask,
                                          average_attn_weights=False)
    assert w.shape == (1, 2, 3, 3) and w[0, :, :, 0].tolist() == [[1.0] * 3] * 2
    close(out[:, 0], [[1, 0, 0, 0]] * 3)  # everyone attends key 0 only


# ---------------------------------------------------------------- primitives vs composition

def _im2col_composed(x, k, s, pads, d):
    xp = T.pad(x, ((0, 0), (0, 0)) + pads)
    n, c, h, w = xp.shape
    oh, ow = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1, (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    st = xp.strides
    return T.as_strided(xp, (c, k[0], k[1], n, oh, ow), (st[1], d[0] * st[2], d[1] * st[3], st[0],
                                                        s[0] * st[2], s[1] * st[3]))


@pytest.mark.parametrize("k,s,pads,d", [((2, 3), (1, 2), ((1, 0), (2, 1)), (2, 1)),
                                        ((3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),
                                        ((1, 2), (3, 1), ((0, 0), (0, 0)), (1, 2))])
def test_im2col_col2im_against_composition(k, s, pads, d):
    x = rnd(2, 3, 6, 7)
    ours, ref = im2col(x, k, s, pads, d, 0.0), _im2col_composed(x, k, s, pads, d)
    close(ours, ref)
    g = rnd(*ref.shape, seed=1, grad=False)
    (gx,) = ag.grad((ours * g).sum(), [x])
    (gx_ref,) = ag.grad((ref * g).sum(), [x])
    close(gx, gx_ref)
    close(col2im(g, (6, 7), s, pads, d), gx_ref)  # col2im is im2col's adjoint
    t = rnd(2, 3, 6, 7, seed=2, grad=False)
    _, tan = jvp(lambda a: im2col(a, k, s, pads, d, 0.0), (x.detach(),), (t,))
    close(tan, im2col(t, k, s, pads, d, 0.0))
    assert ag.gradgradcheck(lambda a: col2im(im2col(a, k, s, pads, d, 0.0) ** 2, (6, 7), s, pads, d),
                            (rnd(1, 1, 6, 7, seed=3),))


# ---------------------------------------------------------------- gradcheck (float64, no torch)

GRADCHECK = {
    "conv2d": (lambda x, w, b: conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                      groups=2), [(1, 4, 5, 4), (2, 2, 2, 2), (2,)]),
    "conv2d_same": (lambda x, w: conv2d(x, w, padding="same"), [(1, 1, 4, 3), (1, 1, 2, 3)]),
    "conv1d": (lambda x, w, b: conv1d(x, w, b, stride=2, padding=1), [(2, 2, 5), (3, 2, 3), (3,)]),
    "conv_transpose2d": (lambda x, w, b: conv_transpose2d(x, w, b, stride=2, padding=1,
                                                          output_padding=1, groups=2, dilation=1),
                         [(1, 2, 3, 2), (2, 1, 3, 2), (2,)]),
    "unfold_fold": (lambda x: fold(unfold(x, 2, padding=1) * 2, (3, 4), 2, padding=1), [(1, 2, 3, 4)]),
    "max_pool2d": (lambda x: max_pool2d(x, 3, 2, padding=1, ceil_mode=True), [(1, 2, 5, 4)]),
    "avg_pool2d": (lambda x: avg_pool2d(x, (2, 3), 2, padding=1, count_include_pad=False),
                   [(1, 2, 4, 5)]),
    "adaptive_avg_pool2d": (lambda x: adaptive_avg_pool2d(x, (2, 3)), [(1, 2, 5, 4)]),
    "batch_norm": (lambda x, w, b: batch_norm(x, None, None, w, b, training=True), [(3, 2, 2), (2,), (2,)]),
    "group_norm": (lambda x, w, b: group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    "embedding": (lambda w: embedding(T.tensor([[0, 2], [2, 2]]), w, padding_idx=1), [(3, 2)]),
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_gradcheck(name):
    fn, shapes = GRADCHECK[name]
    assert ag.gradcheck(fn, [rnd(*s, seed=i) for i, s in enumerate(shapes)])


def test_gradgradcheck_conv():
    assert ag.gradgradcheck(lambda x, w: conv2d(x, w, stride=2, padding=1),
                            [rnd(1, 2, 4, 3), rnd(2, 2, 2, 2, seed=1)])
    assert ag.gradgradcheck(lambda x, w: conv_transpose2d(x, w, stride=2),
                            [rnd(1, 2, 2, 2), rnd(2, 1, 2, 2, seed=1)])


def test_gradcheck_attention():
    def f(q, k, w_in, w_out):
        return multi_head_attention_forward(q, k, k, 4, 2, w_in, None, None, None, False, 0.0,
                                            w_out, None, attn_mask=T.tensor([[False, True]] * 2))
    assert ag.gradcheck(f, [rnd(2, 1, 4), rnd(2, 1, 4, seed=1), rnd(12, 4, seed=2),
                            rnd(4, 4, seed=3)])


def test_conv_jvp_matches_vjp():
    x, w, t = rnd(2, 3, 5, 5, grad=False), rnd(4, 3, 3, 3, seed=1), rnd(2, 3, 5, 5, seed=2, grad=False)
    g = rnd(2, 4, 3, 3, seed=3, grad=False)
    _, tan = jvp(lambda a: conv2d(a, w.detach(), stride=2, padding=1), (x,), (t,))
    xg = x.detach().requires_grad_()
    (gx,) = ag.grad((conv2d(xg, w.detach(), stride=2, padding=1) * g).sum(), [xg])
    close((tan * g).sum(), (gx * t).sum())  # <J t, g> == <t, J^T g>


# ---------------------------------------------------------------- errors, shapes, init

def O(*shape):  # noqa: E743
    return T.ones(shape, dtype=T.float32)


SHAPE_ERRORS = [
    (lambda: Conv2d(3, 4, 3)(O(2, 5, 8, 8)),
     r"Conv2d: expected input of shape \(N, 3, H, W\) or \(3, H, W\), got \(2, 5, 8, 8\)"),
    (lambda: Conv2d(3, 4, 3)(O(8, 8)), r"Conv2d: .*got \(8, 8\)"),
    (lambda: Conv1d(2, 4, 3)(O(2, 2, 3, 3)),
     r"Conv1d: expected input of shape \(N, 2, L\) or \(2, L\), got \(2, 2, 3, 3\)"),
    (lambda: ConvTranspose2d(2, 4, 3)(O(1, 3, 4, 4)),
     r"ConvTranspose2d: expected .*\(N, 2, H, W\).*got \(1, 3, 4, 4\)"),
    (lambda: conv2d(O(1, 3, 2, 2), O(1, 3, 3, 3)), r"conv2d: input of shape \(1, 3, 2, 2\).* smaller"),
    (lambda: conv2d(O(1, 4, 5, 5), O(2, 3, 3, 3)), r"conv2d: input of shape \(1, 4, 5, 5\) has 4 channels"),
    (lambda: conv2d(O(1, 1, 5, 5), O(1, 1, 3, 3), stride=2, padding="same"), r"same"),
    (lambda: Conv2d(3, 4, 3, groups=2), r"divisible by groups"),
    (lambda: MaxPool2d(2)(O(2, 3)),
     r"MaxPool2d: expected input of shape \(N, C, H, W\) or \(C, H, W\), got \(2, 3\)"),
    (lambda: MaxPool1d(2)(O(1, 2, 3, 4)), r"MaxPool1d: expected input of shape \(N, C, L\)"),
    (lambda: AvgPool2d(5)(O(1, 1, 3, 3)),
     r"AvgPool2d: input of shape \(1, 1, 3, 3\) is too small for kernel_size \(5, 5\)"),
    (lambda: MaxPool2d(3, padding=2)(O(1, 1, 3, 3)), r"MaxPool2d: padding \(2, 2\) must be at most half"),
    (lambda: AdaptiveAvgPool2d(2)(O(3)), r"AdaptiveAvgPool2d: expected input .* got \(3,\)"),
    (lambda: BatchNorm2d(3)(O(2, 3, 4)),
     r"BatchNorm2d: expected input of shape \(N, 3, H, W\), got \(2, 3, 4\)"),
    (lambda: BatchNorm1d(3)(O(2, 4)),
     r"BatchNorm1d: expected input of shape \(N, 3\) or \(N, 3, L\), got \(2, 4\)"),
    (lambda: BatchNorm1d(3)(O(1, 3)), r"BatchNorm1d: expected more than 1 value per channel"),
    (lambda: GroupNorm(2, 4)(O(2, 3, 5)),
     r"GroupNorm: expected input of shape \(N, 4, \*\), got \(2, 3, 5\)"),
    (lambda: LayerNorm((3, 4))(O(2, 4, 3)),
     r"LayerNorm: expected input of shape \(\*, 3, 4\), got \(2, 4, 3\)"),
    (lambda: MultiheadAttention(8, 2)(O(3, 2, 6), O(3, 2, 6), O(3, 2, 6)),
     r"MultiheadAttention: expected query of shape \(L, N, 8\) or \(L, 8\), got \(3, 2, 6\)"),
    (lambda: MultiheadAttention(8, 2, batch_first=True)(O(2, 3, 8), O(2, 3, 8), O(2, 4, 8)),
     r"MultiheadAttention: key .* and value .* differ"),
    (lambda: MultiheadAttention(4, 2)(O(3, 2, 4), O(3, 2, 4), O(3, 2, 4), attn_mask=O(3, 2)),
     r"MultiheadAttention: attn_mask must have shape \(3, 3\) or \(4, 3, 3\), got \(3, 2\)"),
    (lambda: MultiheadAttention(6, 4), r"divisible by num_heads"),
]


@pytest.mark.parametrize("case", range(len(SHAPE_ERRORS)))
def test_shape_errors(case):
    call, msg = SHAPE_ERRORS[case]
    with pytest.raises(ValueError, match=msg):
        call()


def test_embedding_errors():
    with pytest.raises(IndexError, match=r"Embedding: index 5 is out of range for a table of 5 rows "
                                         r"\(at position 1 of the flattened indices of shape \(2,\)\)"):
        synced(Embedding(5, 2)(T.tensor([0, 5])))
    with pytest.raises(IndexError, match=r"Embedding: index -1 is out of range for a table of 5 rows "
                                         r"\(at position 2 of the flattened indices of shape \(2, 2\)\)"):
        synced(Embedding(5, 2)(T.tensor([[0, 4], [-1, -2]])))
    with pytest.raises(TypeError, match="Embedding: expected an integer index tensor, got float64"):
        Embedding(5, 2)(T.tensor([0.0]))


def test_module_shapes_and_init():
    T.manual_seed(0)
    c = Conv2d(4, 6, (3, 2), groups=2)
    assert c.weight.shape == (6, 2, 3, 2) and c.weight.dtype is T.float32 and c.bias.shape == (6,)
    bound = 1 / math.sqrt(2 * 3 * 2)  # kaiming_uniform(a=sqrt(5)) gives the same bound as bias
    for p in (c.weight, c.bias):
        assert 0 < float(T.max(T.abs(p)).item()) <= bound and float(T.std(p).item()) > bound / 4
    ct = ConvTranspose2d(4, 6, 3, groups=2, bias=False, dtype=F64)
    assert ct.weight.shape == (4, 3, 3, 3) and ct.bias is None and ct.weight.dtype is F64
    assert [n for n, _ in ConvTranspose1d(2, 3, 2).named_parameters()] == ["weight", "bias"]
    e = Embedding(20, 50, padding_idx=-1)
    assert e.padding_idx == 19 and e.weight[19].tolist() == [0.0] * 50
    assert abs(float(T.std(e.weight[:19]).item()) - 1.0) < 0.1
    bn = BatchNorm2d(3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    mha = MultiheadAttention(8, 2, kdim=3, vdim=5)
    assert [n for n, _ in mha.named_parameters()] == ["q_proj_weight", "k_proj_weight",
                                                     "v_proj_weight", "in_proj_bias",
                                                     "out_proj.weight", "out_proj.bias"]
    assert mha.k_proj_weight.shape == (8, 3) and mha.in_proj_bias.tolist() == [0.0] * 24
    assert repr(Conv2d(1, 2, 3, padding="same")) == \
        "Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1), padding='same')"


def test_conv_unbatched_and_empty_batch():
    c = Conv2d(2, 3, 3, padding=1, dtype=F64)
    x = rnd(2, 5, 4, grad=False)
    close(c(x), c(T.expand_dims(x, 0))[0])
    assert c(T.zeros((0, 2, 5, 4), dtype=F64)).shape == (0, 3, 5, 4)
    assert max_pool2d(x, 2).shape == (2, 2, 2)
    xt = T.permute(rnd(5, 4, 2, 2, grad=False), (2, 3, 0, 1))  # not contiguous
    for pad in (0, 1):
        c = Conv2d(2, 3, 3, padding=pad, dtype=F64)
        close(c(xt), c(T.contiguous(xt)))


# ---------------------------------------------------------------- against torch

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


DTYPES = {"float32": (T.float32, np.float32), "float64": (F64, np.float64)}


def copy_into_torch(m, tm, torch):
    """Our (freshly initialised) parameters and buffers into tm, checking the names match."""
    ours, theirs = m.state_dict(), tm.state_dict()
    assert set(ours) == set(theirs)
    with torch.no_grad():
        for k, v in ours.items():
            theirs[k].copy_(torch.from_numpy(v.numpy().copy()))


def compare(m, tm, torch, arrays, dtype, call=lambda mod, *xs: mod(*xs), seed=0):
    """Forward both modules on the same inputs, backward the same random cotangent, compare
    outputs, input gradients and parameter gradients."""
    xs = [T.asarray(a).requires_grad_() for a in arrays]
    txs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    y, ty = call(m, *xs), call(tm, *txs)
    y, ty = (y[0], ty[0]) if isinstance(y, tuple) else (y, ty)
    g = np.random.default_rng(seed).standard_normal(ty.shape).astype(arrays[0].dtype)
    (y * T.asarray(g)).sum().backward()
    ty.backward(torch.from_numpy(g))
    close(y, ty.detach().numpy(), dtype)
    for x, tx in zip(xs, txs):
        close(x.grad, tx.grad.numpy(), dtype)
    tp = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        close(p.grad, tp[name].grad.numpy(), dtype)
    return y


@st.composite
def conv_cases(draw, nd, transposed=False):
    g = draw(st.sampled_from([1, 1, 2, 3]))
    cin, cout = g * draw(st.integers(1, 2)), g * draw(st.integers(1, 3))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    s = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    d = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    kw = dict(stride=s, dilation=d, groups=g, bias=draw(st.booleans()))
    if transposed:
        kw["padding"] = tuple(draw(st.integers(0, (kk - 1) * dd // 2)) for kk, dd in zip(k, d))
        kw["output_padding"] = tuple(draw(st.integers(0, max(ss, dd) - 1)) for ss, dd in zip(s, d))
        sizes = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    else:
        pads = draw(st.sampled_from(["same", "valid", "int"]) if s == (1,) * nd else st.just("int"))
        kw["padding"] = pads if pads != "int" else tuple(draw(st.integers(0, 2)) for _ in range(nd))
        p = (0,) * nd if isinstance(kw["padding"], str) else kw["padding"]
        sizes = tuple(draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), dd * (kk - 1) + 6))
                      for kk, dd, pp in zip(k, d, p))
    return cin, cout, k, kw, (draw(st.integers(1, 3)), cin) + sizes, draw(st.sampled_from(list(DTYPES)))


@given(case=conv_cases(2), seed=st.integers(0, 2**16))
def test_conv2d_vs_torch(torch, case, seed):
    cin, cout, k, kw, shape, dn = case
    m = Conv2d(cin, cout, k, **kw, dtype=DTYPES[dn][0])
    tm = torch.nn.Conv2d(cin, cout, k, **kw, dtype=getattr(torch, dn))
    copy_into_torch(m, tm, torch)
    x = np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dn][1])
    compare(m, tm, torch, [x], DTYPES[dn][0], seed=seed)


@given(case=conv_cases(1), seed=st.integers(0, 2**16))
def test_conv1d_vs_torch(torch, case, seed):
    cin, cout, k, kw, shape, dn = case
    m = Conv1d(cin, cout, k, **kw, dtype=DTYPES[dn][0])
    tm = torch.nn.Conv1d(cin, cout, k, **kw, dtype=getattr(torch, dn))
    copy_into_torch(m, tm, torch)
    x = np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dn][1])
    compare(m, tm, torch, [x], DTYPES[dn][0], seed=seed)


@given(case=conv_cases(2, transposed=True), seed=st.integers(0, 2**16), nd=st.sampled_from([1, 2]))
def test_conv_transpose_vs_torch(torch, case, seed, nd):
    cin, cout, k, kw, shape, dn = case
    k, shape = k[:nd], shape[:2 + nd]
    kw = {a: (v[:nd] if isinstance(v, tuple) else v) for a, v in kw.items()}
    cls, tcls = (ConvTranspose1d, torch.nn.ConvTranspose1d) if nd == 1 else \
        (ConvTranspose2d, torch.nn.ConvTranspose2d)
    m = cls(cin, cout, k, **kw, dtype=DTYPES[dn][0])
    tm = tcls(cin, cout, k, **kw, dtype=getattr(torch, dn))
    copy_into_torch(m, tm, torch)
    x = np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dn][1])
    compare(m, tm, torch, [x], DTYPES[dn][0], seed=seed)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_modes_vs_torch(torch, mode):
    m = Conv2d(2, 3, (3, 2), padding=(1, 2), padding_mode=mode, dilation=(1, 2), dtype=F64)
    tm = torch.nn.Conv2d(2, 3, (3, 2), padding=(1, 2), padding_mode=mode, dilation=(1, 2)).double()
    copy_into_torch(m, tm, torch)
    compare(m, tm, torch, [np.random.default_rng(0).standard_normal((2, 2, 5, 6))], F64)


def test_conv_transpose_output_size_vs_torch(torch):
    m = ConvTranspose2d(2, 3, 3, stride=2, padding=1, dtype=F64)
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    copy_into_torch(m, tm, torch)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5))
    y = compare(m, tm, torch, [x], F64, call=lambda mod, a: mod(a, output_size=(8, 10)))
    assert y.shape == (1, 3, 8, 10)


def test_unfold_fold_vs_torch(torch):
    F = torch.nn.functional
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    kw = dict(dilation=(2, 1), padding=1, stride=(1, 2))
    close(unfold(T.asarray(x), (2, 3), **kw), F.unfold(torch.from_numpy(x), (2, 3), **kw).numpy())
    c = np.random.default_rng(1).standard_normal((2, 18, 28))
    close(fold(T.asarray(c), (7, 8), (2, 3), **kw), F.fold(torch.from_numpy(c), (7, 8), (2, 3), **kw).numpy())


@st.composite
def pool_cases(draw, avg):
    nd = draw(st.sampled_from([1, 2]))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    kw = dict(kernel_size=k, stride=tuple(draw(st.integers(1, 3)) for _ in range(nd)),
              padding=tuple(draw(st.integers(0, kk // 2)) for kk in k),
              ceil_mode=draw(st.booleans()))
    if avg:
        kw["count_include_pad"] = draw(st.booleans())
        d = (1,) * nd
    else:
        d = kw["dilation"] = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    sizes = tuple(draw(st.integers(dd * (kk - 1) + 1, dd * (kk - 1) + 6)) for kk, dd in zip(k, d))
    lead = draw(st.sampled_from([(), (2,), (1, 3)]))[: 2 if nd == 1 else 3]
    return nd, kw, (lead or (2,)) + sizes, draw(st.sampled_from(list(DTYPES)))


def _fn_module(fn):
    class M:  # a stand-in "module" without parameters for compare()
        def __call__(self, x):
            return fn(x)

        def named_parameters(self):
            return iter(())
    return M()


@given(case=pool_cases(False), seed=st.integers(0, 2**16))
def test_max_pool_vs_torch(torch, case, seed):
    nd, kw, shape, dn = case
    x = np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dn][1])
    cls = MaxPool2d if nd == 2 else MaxPool1d
    tcls = getattr(torch.nn, cls.__name__)
    compare(_fn_module(cls(**kw)), tcls(**kw), torch, [x], DTYPES[dn][0], seed=seed)
    _, idx = cls(**kw, return_indices=True)(T.asarray(x))
    assert idx.tolist() == tcls(**kw, return_indices=True)(torch.from_numpy(x))[1].tolist()


@given(case=pool_cases(True), seed=st.integers(0, 2**16))
def test_avg_pool_vs_torch(torch, case, seed):
    nd, kw, shape, dn = case
    x = np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dn][1])
    fn = avg_pool2d if nd == 2 else avg_pool1d
    tfn = getattr(torch.nn.functional, fn.__name__)
    compare(_fn_module(lambda a: fn(a, **kw)), _fn_module(lambda a: tfn(a, **kw)), torch, [x],
            DTYPES[dn][0], seed=seed)


@given(h=st.integers(1, 9), w=st.integers(1, 9), oh=st.integers(1, 6), ow=st.integers(1, 6),
       dn=st.sampled_from(list(DTYPES)), seed=st.integers(0, 2**16))
def test_adaptive_avg_pool_vs_torch(torch, h, w, oh, ow, dn, seed):
    x = np.random.default_rng(seed).standard_normal((2, 3, h, w)).astype(DTYPES[dn][1])
    compare(_fn_module(AdaptiveAvgPool2d((oh, ow))), torch.nn.AdaptiveAvgPool2d((oh, ow)), torch,
            [x], DTYPES[dn][0], seed=seed)


@pytest.mark.parametrize("dn", list(DTYPES))
@pytest.mark.parametrize("cls,shape,kw", [
    (BatchNorm1d, (5, 3), {}), (BatchNorm1d, (4, 3, 6), {"momentum": None}),
    (BatchNorm2d, (4, 3, 5, 2), {}), (BatchNorm2d, (2, 3, 2, 2), {"affine": False, "momentum": 0.3}),
    (BatchNorm2d, (3, 3, 2, 4), {"track_running_stats": False})])
def test_batch_norm_vs_torch(torch, dn, cls, shape, kw):
    m, tm = cls(3, **kw, dtype=DTYPES[dn][0]), getattr(torch.nn, cls.__name__)(3, **kw)
    tm = tm.to(getattr(torch, dn))
    if m.weight is not None:  # not the trivial ones/zeros
        m.weight.detach().copy_(T.asarray(np.linspace(0.5, 2.0, 3)).astype(m.weight.dtype))
        m.bias.detach().copy_(T.asarray(np.linspace(-1.0, 1.0, 3)).astype(m.weight.dtype))
    copy_into_torch(m, tm, torch)
    rng = np.random.default_rng(0)
    for step in range(3):  # training steps: outputs, gradients and running statistics
        x = (rng.standard_normal(shape) * 2 + 1).astype(DTYPES[dn][1])
        compare(m, tm, torch, [x], DTYPES[dn][0], seed=step)
        for a, b in zip(m.buffers(), tm.buffers()):
            close(a, b.numpy(), DTYPES[dn][0])
        m.zero_grad(), tm.zero_grad()
    m.eval(), tm.eval()
    compare(m, tm, torch, [x], DTYPES[dn][0])


@pytest.mark.parametrize("dn", list(DTYPES))
def test_group_norm_layer_norm_vs_torch(torch, dn):
    d, tdt = DTYPES[dn][0], getattr(torch, dn)
    x = np.random.default_rng(0).standard_normal((3, 6, 4, 5)).astype(DTYPES[dn][1])
    for g in (1, 2, 3, 6):
        m, tm = GroupNorm(g, 6, dtype=d), torch.nn.GroupNorm(g, 6, dtype=tdt)
        T.random.manual_seed(g)
        m.weight.detach().copy_(T.random.randn(6, dtype=d)), m.bias.detach().copy_(T.random.randn(6, dtype=d))
        copy_into_torch(m, tm, torch)
        compare(m, tm, torch, [x], d)
    for ns in (5, (4, 5)):
        m, tm = LayerNorm(ns, dtype=d), torch.nn.LayerNorm(ns, dtype=tdt)
        copy_into_torch(m, tm, torch)
        compare(m, tm, torch, [x], d)


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"max_norm": 1.0}])
def test_embedding_vs_torch(torch, kw):
    m, tm = Embedding(7, 3, **kw), torch.nn.Embedding(7, 3, **kw)
    copy_into_torch(m, tm, torch)
    idx = np.array([[1, 0, 6], [2, 6, 6]])
    y, ty = m(T.asarray(idx)), tm(torch.from_numpy(idx))
    g = np.random.default_rng(0).standard_normal(ty.shape).astype(np.float32)
    (y * T.asarray(g)).sum().backward(), ty.backward(torch.from_numpy(g))
    close(y, ty.detach().numpy(), T.float32)
    close(m.weight.grad, tm.weight.grad.numpy(), T.float32)
    close(m.weight, tm.weight.detach().numpy(), T.float32)  # max_norm renormalized both


MHA_CASES = [  # (module kwargs, forward kwargs (masks by kind), batch_first, unbatched)
    ({}, {}, False, False),
    ({"kdim": 3, "vdim": 6}, {}, False, False),
    ({"bias": False}, {"need_weights": False}, True, False),
    ({"add_bias_kv": True, "add_zero_attn": True},
     {"key_padding_mask": "bool", "attn_mask": "bool2"}, False, False),
    ({}, {"key_padding_mask": "bool", "attn_mask": "float3", "average_attn_weights": False},
     True, False),
    ({}, {"key_padding_mask": "float"}, False, False),
    ({}, {"key_padding_mask": "bool1", "attn_mask": "bool3"}, False, True),
]


def _mask(kind, rng, n, h, lq, s):
    return {"bool": rng.random((n, s)) < 0.3, "float": rng.standard_normal((n, s)),
            "bool1": rng.random(s) < 0.3, "bool2": rng.random((lq, s)) < 0.3,
            "bool3": rng.random((n * h, lq, s)) < 0.3,
            "float3": rng.standard_normal((n * h, lq, s))}[kind]


@pytest.mark.parametrize("dn", list(DTYPES))
@pytest.mark.parametrize("case", range(len(MHA_CASES)))
def test_multihead_attention_vs_torch(torch, dn, case):
    kw, fkw, bf, unb = MHA_CASES[case]
    e, h, lq, s, n = 8, 2, 3, 5, 4
    m = MultiheadAttention(e, h, **kw, batch_first=bf, dtype=DTYPES[dn][0])
    tm = torch.nn.MultiheadAttention(e, h, **kw, batch_first=bf, dtype=getattr(torch, dn))
    copy_into_torch(m, tm, torch)
    rng = np.random.default_rng(case)
    fk = {k: (_mask(v, rng, 1 if unb else n, h, lq, s) if isinstance(v, str) else v)
          for k, v in fkw.items()}
    fk = {k: (v.astype(DTYPES[dn][1]) if getattr(v, "dtype", None) == np.float64 else v)
          for k, v in fk.items()}
    shp = (lambda t, d: (t, d)) if unb else (lambda t, d: (n, t, d) if bf else (t, n, d))
    arrays = [rng.standard_normal(shp(t, d)).astype(DTYPES[dn][1])
              for t, d in ((lq, e), (s, kw.get("kdim", e)), (s, kw.get("vdim", e)))]
    conv = {k: (T.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in fk.items()}
    tconv = {k: (torch.from_numpy(v) if isinstance(v, np.ndarray) else v) for k, v in fk.items()}
    compare(m, tm, torch, arrays, DTYPES[dn][0], seed=case,
            call=lambda mod, *xs: mod(*xs, **(conv if mod is m else tconv)))
    out, w = m(*[T.asarray(a) for a in arrays], **conv)
    tout, tw = tm(*[torch.from_numpy(a) for a in arrays], **tconv)
    assert (w is None) == (tw is None)
    if w is not None:
        close(w, tw.detach().numpy(), DTYPES[dn][0])


SELF_ATTN_CASES = [  # (module kwargs, forward kwargs, batch_first, unbatched)
    ({}, {}, False, False),
    ({}, {"need_weights": False}, True, False),
    ({"bias": False}, {"need_weights": False, "causal": True}, True, False),
    ({}, {"need_weights": False, "causal": True}, False, False),
    ({}, {"causal": True, "average_attn_weights": False}, True, False),   # the mask is read
    ({"add_bias_kv": True}, {"need_weights": False, "causal": True}, True, False),
    ({}, {"need_weights": False, "causal": True}, True, True),
]


@pytest.mark.parametrize("dn", list(DTYPES))
@pytest.mark.parametrize("case", range(len(SELF_ATTN_CASES)))
def test_multihead_self_attention_vs_torch(torch, dn, case):
    """query, key and value one tensor (one packed projection on our side), batch-first or not;
    is_causal with the causal attn_mask, which PyTorch takes as a hint (not read) where
    need_weights=False and no key_padding_mask: outputs and all gradients as PyTorch's."""
    kw, fkw, bf, unb = SELF_ATTN_CASES[case]
    e, h, L, n = 8, 2, 5, 3
    m = MultiheadAttention(e, h, **kw, batch_first=bf, dtype=DTYPES[dn][0])
    tm = torch.nn.MultiheadAttention(e, h, **kw, batch_first=bf, dtype=getattr(torch, dn))
    copy_into_torch(m, tm, torch)
    fkw = dict(fkw)
    mask = np.triu(np.ones((L, L), dtype=bool), 1)
    conv, tconv = dict(fkw), dict(fkw)
    if fkw.pop("causal", False):
        for d, f in ((conv, T.asarray), (tconv, torch.from_numpy)):
            del d["causal"]
            d["attn_mask"], d["is_causal"] = f(mask), True
    shape = (L, e) if unb else (n, L, e) if bf else (L, n, e)
    x = np.random.default_rng(case).standard_normal(shape).astype(DTYPES[dn][1])
    compare(m, tm, torch, [x], DTYPES[dn][0], seed=case,
            call=lambda mod, t: mod(t, t, t, **(conv if mod is m else tconv)))
    out, w = m(T.asarray(x), T.asarray(x), T.asarray(x), **conv)
    tx = torch.from_numpy(x)
    tout, tw = tm(tx, tx, tx, **tconv)
    close(out, tout.detach().numpy(), DTYPES[dn][0])
    assert (w is None) == (tw is None)
    if w is not None:
        close(w, tw.detach().numpy(), DTYPES[dn][0])


def test_fused_max_pool2d_matches_the_general_path():
    """The fused kernel (no padding/dilation) agrees with the where-chain path that
    return_indices takes: values (NaN included), gradients to the first maximum."""
    from nn.pooling import max_pool2d
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 3, 7, 9))
    a[0, 0, 0, 0] = np.nan
    a[1, 2, 2:4, 2:4] = 1.5  # a tie: the first maximum gets the gradient
    for k, s in [(2, 2), (3, 2), (2, 1)]:
        x1 = T.tensor(a, requires_grad=True)
        x2 = T.tensor(a, requires_grad=True)
        y1 = max_pool2d(x1, k, s)
        y2, _ = max_pool2d(x2, k, s, return_indices=True)
        np.testing.assert_array_equal(y1.detach().numpy(), y2.detach().numpy())
        g = T.tensor(rng.standard_normal(y1.shape))
        (y1 * g).sum().backward()
        (y2 * g).sum().backward()  # overlapping windows may sum in another order: 1 ulp
        np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-14, atol=1e-15)
        assert (x1.grad.numpy() != 0).sum() == (x2.grad.numpy() != 0).sum()
