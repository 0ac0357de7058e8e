"""Fixes from the nn.functional bug hunt (interpolate, grid_sample, lp_pool, threshold /
softshrink, conv bias checks, scalar-divisor gradients, adaptive average pooling, nearest
indices, hardswish, fold / unfold, NumPy integer arguments, embedding_bag offsets, bad input).

Every test asserts values without PyTorch; the last ones compare with PyTorch where it is
installed (skipped otherwise).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import nn
import tensor as T
from nn import functional as F

NAN, INF = math.nan, math.inf


def _grad(f, x):
    x = T.tensor(x, dtype=T.float64, requires_grad=True)
    f(x).sum().backward()
    return x.grad.numpy()


# ---------------------------------------------------------------- 1. interpolate, kept axes


@pytest.mark.parametrize("mode,nd", [("linear", 1), ("bilinear", 2), ("trilinear", 3)])
def test_linear_modes_copy_an_axis_whose_size_is_kept(mode, nd):
    x = T.reshape(T.arange(4.0, dtype=T.float64), (1, 1, 4) + (1,) * (nd - 1))
    y = F.interpolate(x, scale_factor=1.2, mode=mode)           # floor(4 * 1.2) == 4
    assert y.reshape(-1).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert _grad(lambda v: F.interpolate(v, scale_factor=1.2, mode=mode),
                 x.numpy()).reshape(-1).tolist() == [1.0] * 4


def test_bilinear_kept_axis_next_to_a_resampled_one():
    x = T.arange(16.0, dtype=T.float64).reshape(1, 1, 4, 4)
    y = F.interpolate(x, scale_factor=(1.2, 2.0), mode="bilinear")
    assert y.shape == (1, 1, 4, 8)
    assert y[0, 0, :, 0].tolist() == [0.0, 4.0, 8.0, 12.0]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_copies_kept_axes(mode):
    x = T.asarray(np.random.default_rng(0).standard_normal((1, 2, 4, 5)))
    y = F.interpolate(x, scale_factor=(1.2, 1.1), mode=mode, antialias=True)
    np.testing.assert_array_equal(y.numpy(), x.numpy())


# ---------------------------------------------------------------- 2. grid_sample, NaN / inf

_IMG = np.arange(12.0).reshape(1, 1, 3, 4) + 1


def _sample(points, **kw):
    g = T.asarray(np.array(points, dtype=np.float64).reshape(1, 1, -1, 2))
    return F.grid_sample(T.asarray(_IMG), g, align_corners=False, **kw).numpy().ravel()


def test_grid_sample_non_finite_coordinates_as_torch():
    pts = [[NAN, 0.0], [0.0, NAN], [INF, 0.0], [-INF, 0.0], [NAN, NAN]]
    assert np.isnan(_sample(pts)).all()                                   # zeros: NaN
    np.testing.assert_array_equal(_sample(pts, padding_mode="border"), [5, 2.5, 8, 5, 1])
    np.testing.assert_array_equal(_sample(pts, padding_mode="reflection"), [5, 2.5, 5, 5, 1])
    np.testing.assert_array_equal(_sample(pts, mode="nearest"), [0, 0, 0, 0, 0])
    np.testing.assert_array_equal(_sample(pts, mode="nearest", padding_mode="border"),
                                  [5, 3, 8, 5, 1])
    assert np.isnan(_sample(pts, mode="bicubic", padding_mode="border")).all()
    assert _sample([[0.3, 0.2]])[0] == pytest.approx(8.3)                 # finite: unchanged


def test_grid_sample_empty_batch_and_nearest_grid_gradient():
    y = F.grid_sample(T.zeros((0, 1, 3, 3)), T.zeros((0, 2, 2, 2)), align_corners=False)
    assert y.shape == (0, 1, 2, 2)
    g = T.tensor(np.random.default_rng(1).uniform(-1, 1, (1, 2, 2, 2)), requires_grad=True)
    F.grid_sample(T.asarray(_IMG), g, mode="nearest", align_corners=False).sum().backward()
    assert g.grad is not None and g.grad.tolist() == np.zeros((1, 2, 2, 2)).tolist()


# ---------------------------------------------------------------- 3. lp_pool, p = +-inf, 0


def test_lp_pool_infinite_and_zero_norm():
    x = T.tensor([[[0.5, -3.0, 2.0, 0.25]]], dtype=T.float64)
    assert F.lp_pool1d(x, INF, 2).tolist() == [[[3.0, 2.0]]]
    assert F.lp_pool1d(x, -INF, 2).tolist() == [[[0.5, 0.25]]]
    assert nn.LPPool1d(INF, 2)(x).tolist() == [[[3.0, 2.0]]]
    assert F.lp_pool2d(T.tensor([[[[1.0, -4.0], [2.0, 3.0]]]]), INF, 2).tolist() == [[[[4.0]]]]
    assert _grad(lambda v: F.lp_pool1d(v, INF, 2), x.numpy()).tolist() == [[[0, -1, 1, 0]]]
    with pytest.raises(ValueError, match="lp_pool1d: norm_type must be a non-zero"):
        F.lp_pool1d(x, 0, 2)


# ---------------------------------------------------------------- 4. NaN through threshold


def test_threshold_and_softshrink_pass_nan():
    x = [NAN, 0.5, 2.0]
    y = F.threshold(T.tensor(x), 1.0, -5.0).numpy()
    assert np.isnan(y[0]) and y[1:].tolist() == [-5.0, 2.0]
    assert np.isnan(nn.Threshold(1.0, -5.0)(T.tensor(x)).numpy()[0])
    assert _grad(lambda v: F.threshold(v, 1.0, -5.0), x).tolist() == [1.0, 0.0, 1.0]
    s = F.softshrink(T.tensor([NAN, 0.2, 1.5, -1.5])).numpy()
    assert np.isnan(s[0]) and s[1:].tolist() == [0.0, 1.0, -1.0]


# ---------------------------------------------------------------- 5. conv bias shapes


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_refuses_a_bias_of_the_wrong_length(nd):
    f = getattr(F, f"conv_transpose{nd}d")
    x, w = T.ones((1, 2) + (2,) * nd), T.ones((2, 3) + (2,) * nd)
    assert f(x, w, T.ones(3)).shape == (1, 3) + (3,) * nd
    with pytest.raises(ValueError, match=rf"conv_transpose{nd}d: .*1-D bias of 3 .*\(1,\)"):
        f(x, w, T.ones(1))


def test_conv_refuses_a_2d_or_wrong_length_bias():
    x, w = T.ones((1, 2, 4, 4)), T.ones((3, 2, 2, 2))
    with pytest.raises(ValueError, match=r"conv2d: .*1-D bias of 3 .*\(3, 1\)"):
        F.conv2d(x, w, T.ones((3, 1)))
    with pytest.raises(ValueError, match=r"conv2d: .*\(4,\)"):
        F.conv2d(x, w, T.ones(4))
    with pytest.raises(ValueError, match="conv1d"):
        F.conv1d(T.ones((1, 2, 4)), T.ones((3, 2, 2)), T.ones(2))


# ---------------------------------------------------------------- 6. gradients of x / 0


def test_division_by_a_zero_python_scalar_differentiates_as_ieee():
    assert _grad(lambda v: v / 0.0, [1.0, -2.0]).tolist() == [INF, INF]
    assert _grad(lambda v: v / -0.0, [1.0]).tolist() == [-INF]
    assert _grad(lambda v: v / 0, [1.0]).tolist() == [INF]
    x = T.zeros((0, 3), dtype=T.float64, requires_grad=True)
    F.kl_div(x, T.zeros((0, 3), dtype=T.float64), reduction="batchmean").backward()
    assert x.grad.shape == (0, 3)


def test_other_scalar_operand_partials_do_not_raise():
    assert _grad(lambda v: T.fmod(v, 0.0), [1.0, 2.0]).tolist() == [1.0, 1.0]
    assert _grad(lambda v: T.power(v, -1.0), [2.0]).tolist() == [-0.25]
    assert _grad(lambda v: T.true_divide(0.0, v), [2.0]).tolist() == [-0.0]


# ---------------------------------------------------------------- 7. adaptive average pooling


def test_adaptive_avg_pool_bins_long_inputs_and_zero_size():
    x = np.random.default_rng(2).standard_normal((2, 3, 2000))
    y = F.adaptive_avg_pool1d(T.asarray(x), 7).numpy()
    ref = np.stack([x[..., (i * 2000) // 7:-(-(i + 1) * 2000 // 7)].mean(-1) for i in range(7)],
                   -1)
    np.testing.assert_allclose(y, ref, rtol=1e-12)
    assert F.adaptive_avg_pool1d(T.tensor([[[1.0, 3.0, 2.0]]]), 2).tolist() == [[[2.0, 2.5]]]
    assert F.adaptive_avg_pool2d(T.ones((1, 1, 4, 4)), 0).shape == (1, 1, 0, 0)
    assert F.adaptive_max_pool2d(T.ones((1, 1, 4, 4)), (0, 2)).shape == (1, 1, 0, 2)
    assert F.adaptive_max_pool3d(T.ones((1, 2, 2, 2)), 0).shape == (1, 0, 0, 0)
    area = F.interpolate(T.arange(6.0).reshape(1, 1, 6), size=4, mode="area")
    assert area.reshape(-1).tolist() == [0.5, 1.5, 3.5, 4.5]     # bins [0,2) [1,3) [3,5) [4,6)


def test_absurd_output_sizes_are_refused_at_once():
    with pytest.raises(ValueError, match="adaptive_avg_pool2d: .*too many"):
        F.adaptive_avg_pool2d(T.ones((1, 1, 4, 4)), 2 ** 21)
    with pytest.raises(ValueError, match="interpolate: .*too large"):
        F.interpolate(T.ones((1, 1, 4, 4)), size=(10 ** 9, 10 ** 9))
    with pytest.raises(ValueError, match="max_unpool2d: .*too large"):
        F.max_unpool2d(T.ones((1, 1, 2, 2)), T.zeros((1, 1, 2, 2), dtype=T.int64), 2,
                       stride=2 ** 40)


# ---------------------------------------------------------------- 8. nearest indices


def test_nearest_float64_source_index_as_torch():
    x = T.arange(26.0, dtype=T.float64).reshape(1, 1, 26)
    assert F.interpolate(x, size=22, mode="nearest")[0, 0, 11].item() == 13.0
    x = T.arange(6.0, dtype=T.float64).reshape(1, 1, 6, 1, 1)
    y = F.interpolate(x, size=(37, 1, 1), mode="nearest-exact")
    assert y[0, 0, 18, 0, 0].item() == 3.0
    sq = T.arange(16.0).reshape(1, 1, 4, 4)         # 2-D nearest copies a kept axis, as torch
    assert F.interpolate(sq, scale_factor=1.1).tolist() == sq.tolist()


# ---------------------------------------------------------------- 9. hardswish at inf


def test_hardswish_gradient_at_infinities():
    assert _grad(F.hardswish, [INF, -INF, NAN, 1.0]).tolist() == pytest.approx([1, 0, 1, 5 / 6])


# ---------------------------------------------------------------- 10. unbatched fold / unfold


def test_unfold_and_fold_take_unbatched_input():
    x = T.asarray(np.random.default_rng(3).standard_normal((3, 4, 5)))
    cols = F.unfold(x, 2)
    assert cols.shape == (12, 12)
    np.testing.assert_array_equal(cols.numpy(), F.unfold(x.reshape(1, 3, 4, 5), 2)[0].numpy())
    back = F.fold(cols, (4, 5), 2)
    assert back.shape == (3, 4, 5)
    np.testing.assert_array_equal(back.numpy(), F.fold(cols.reshape(1, 12, 12), (4, 5), 2)[0]
                                  .numpy())
    with pytest.raises(ValueError, match=r"unfold: .*\(C, H, W\), got \(1, 1, 3, 3, 3\)"):
        F.unfold(T.ones((1, 1, 3, 3, 3)), 2)


# ---------------------------------------------------------------- 11. NumPy integers


def test_numpy_integers_are_ints():
    i = np.int64
    x = T.arange(18.0).reshape(1, 2, 3, 3)
    assert F.max_pool2d(x, i(2), ceil_mode=True).shape == (1, 2, 2, 2)
    assert F.avg_pool2d(x, i(2), i(1)).shape == (1, 2, 2, 2)
    assert F.conv2d(T.ones((1, 1, 5, 5)), T.ones((1, 1, 1, 1)), stride=i(2)).shape == (1, 1, 3, 3)
    assert nn.Conv2d(2, 3, i(2))(T.ones((1, 2, 6, 6))).shape == (1, 3, 5, 5)
    assert F.adaptive_avg_pool2d(x, (i(1), i(2))).shape == (1, 2, 1, 2)
    assert F.local_response_norm(x, i(2)).shape == (1, 2, 3, 3)
    with pytest.raises(ValueError, match="max_pool2d: kernel_size must be an int"):
        F.max_pool2d(x, 2.0)


# ---------------------------------------------------------------- 12. embedding_bag offsets


def test_embedding_bag_last_offset_must_end_the_input():
    w = T.arange(20.0).reshape(10, 2)
    ids = T.tensor([1, 2, 3, 4, 5, 6])
    y = F.embedding_bag(ids, w, T.tensor([0, 2, 6]), mode="sum", include_last_offset=True)
    assert y.tolist() == [[6.0, 8.0], [36.0, 40.0]]
    with pytest.raises(ValueError, match=r"embedding_bag: .*offsets\[-1\] \(4\) must equal .* 6"):
        F.embedding_bag(ids, w, T.tensor([0, 2, 4]), mode="sum", include_last_offset=True)


# ---------------------------------------------------------------- 13. bad input, named


def test_bad_input_names_the_op():
    x = T.ones((1, 1, 4, 4))
    for sf in (NAN, INF, -1.0):
        with pytest.raises(ValueError, match="interpolate: scale_factor must be finite"):
            F.interpolate(x, scale_factor=sf)
    p, t = T.full((2, 3), 0.5), T.ones((2, 3))
    with pytest.raises(ValueError, match=r"binary_cross_entropy: weight of shape \(2,\)"):
        F.binary_cross_entropy(p, t, weight=T.ones(2))
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits: pos_weight"):
        F.binary_cross_entropy_with_logits(p, t, pos_weight=T.ones(2))
    assert F.binary_cross_entropy(p, t, weight=T.ones(3)).item() == pytest.approx(math.log(2))


# ---------------------------------------------------------------- PyTorch, where installed


def test_interpolate_and_grid_sample_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(4)
    for mode, nd in (("linear", 1), ("bilinear", 2), ("trilinear", 3), ("bicubic", 2),
                     ("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 3)):
        x = rng.standard_normal((1, 2) + (4, 5, 6)[:nd])
        for sf in ((1.2, 2.0, 0.7)[:nd], (1.1,) * nd, (0.6, 1.0, 1.3)[:nd]):
            for aa in ((False, True) if mode in ("bilinear", "bicubic") else (False,)):
                want = tf.interpolate(torch.tensor(x), scale_factor=sf, mode=mode, antialias=aa)
                got = F.interpolate(T.asarray(x), scale_factor=sf, mode=mode, antialias=aa)
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    for n, o in ((26, 22), (30, 26), (18, 33)):
        for mode in ("nearest", "nearest-exact"):
            x = np.arange(float(n)).reshape(1, 1, n)
            want = tf.interpolate(torch.tensor(x), size=o, mode=mode).numpy()
            assert F.interpolate(T.asarray(x), size=o, mode=mode).tolist() == want.tolist()
    g = np.array([[NAN, 0.0], [0.0, NAN], [INF, 0.0], [-INF, 0.0], [0.0, INF], [INF, INF]])
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (False, True):
                kw = dict(mode=mode, padding_mode=pad, align_corners=align)
                gg = g.reshape(1, 1, -1, 2)
                want = tf.grid_sample(torch.tensor(_IMG), torch.tensor(gg), **kw).numpy()
                got = F.grid_sample(T.asarray(_IMG), T.asarray(gg), **kw).numpy()
                np.testing.assert_array_equal(got, want)
