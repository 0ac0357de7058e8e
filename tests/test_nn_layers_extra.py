"""The layers of nn/layers_extra.py, their functions (nn/_functional_layers.py) and
ParameterList / ParameterDict.

- torch-free: hand-computed values (pad in every mode with crops, interpolate in every mode
  with and without align_corners, rms/instance norm, pixel shuffle, channel dropout masks,
  adaptive max pooling with indices, bilinear), argument errors, float64 gradcheck;
- with torch (when importable): functions and modules forward and input/parameter gradients
  on random shapes and options, float32 and float64;
- every test on "cpu" and "cuda" (a GPU, else the emulator), with tiny sizes.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn import functional as F

pytestmark = pytest.mark.usefixtures("device")

F64 = T.float64


def rnd(*shape, seed=0, grad=True, dtype=F64):
    x = T.asarray(np.random.default_rng(seed).standard_normal(shape)).astype(dtype)
    return x.requires_grad_() if grad else x


def close(a, b, tol=1e-9):
    a = a.detach().astype(F64).numpy() if isinstance(a, T.Tensor) else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0))))


def row(x):
    return T.tensor([[x]], dtype=F64) if not isinstance(x, list) else T.tensor([x], dtype=F64)

# ---------------------------------------------------------------- pad (torch-free)


def test_pad_by_hand():
    x = T.tensor([[1.0, 2.0, 3.0, 4.0]])
    assert F.pad(x, (1, 2)).tolist() == [[0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0]]
    assert F.pad(x, (1, 0, 1, 0), value=7.0).tolist() == [[7.0] * 5, [7.0, 1.0, 2.0, 3.0, 4.0]]
    assert F.pad(x, (-1, 1)).tolist() == [[2.0, 3.0, 4.0, 0.0]]
    assert F.pad(x, (0, 0, -1, 0)).shape == (0, 4)
    assert F.pad(x, (2, 1), "reflect").tolist() == [[3.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0]]
    assert F.pad(x, (2, 1), "replicate").tolist() == [[1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 4.0]]
    assert F.pad(x, (2, 1), "circular").tolist() == [[3.0, 4.0, 1.0, 2.0, 3.0, 4.0, 1.0]]
    # negative amounts: reflect/replicate index the original, circular wraps what is left
    assert F.pad(x, (-1, 2), "reflect").tolist() == [[2.0, 3.0, 4.0, 3.0, 2.0]]
    assert F.pad(x, (2, -1), "replicate").tolist() == [[1.0, 1.0, 1.0, 2.0, 3.0]]
    assert F.pad(x, (2, -1), "circular").tolist() == [[2.0, 3.0, 1.0, 2.0, 3.0]]
    # the pad tuple starts from the last dim
    y = F.pad(T.arange(6.0).reshape(1, 2, 3), (0, 1, 1, 0), "replicate")
    assert y.tolist() == [[[0.0, 1.0, 2.0, 2.0], [0.0, 1.0, 2.0, 2.0], [3.0, 4.0, 5.0, 5.0]]]
    z = F.pad(T.ones((1, 1, 1)), (1, 1, 1, 1, 1, 1))          # constant: any rank
    assert z.shape == (3, 3, 3) and z.sum().item() == 1.0


def test_pad_gradients():
    x = row([1.0, 2.0, 3.0]).requires_grad_()
    g = ag.grad(F.pad(x, (2, 0), "reflect").sum(), [x])[0]
    assert g.tolist() == [[1.0, 2.0, 2.0]]
    g = ag.grad(F.pad(x, (-1, 2), "replicate").sum(), [x])[0]
    assert g.tolist() == [[0.0, 1.0, 3.0]]
    for mode, p in (("constant", (1, -1, 2, 0)), ("reflect", (1, 2, 0, 1)),
                    ("replicate", (2, 1, 1, 1)), ("circular", (1, 2, -1, 1))):
        assert ag.gradcheck(lambda a, m=mode, p=p: F.pad(a, p, m), [rnd(1, 3, 4)])


def test_pad_errors():
    x = T.ones((2, 3))
    with pytest.raises(ValueError, match="pad: padding length must be an even"):
        F.pad(x, (1,))
    with pytest.raises(ValueError, match="too large"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(NotImplementedError, match="mode 'edge'"):
        F.pad(x, (1, 1), "edge")
    with pytest.raises(NotImplementedError, match="needs a 2-d .unbatched. or 3-d"):
        F.pad(T.ones((1, 1, 2, 2)), (1, 1), "reflect")
    with pytest.raises(ValueError, match="less than the size 3"):
        F.pad(x, (3, 0), "reflect")
    with pytest.raises(ValueError, match="at most the size 3"):
        F.pad(x, (4, 0), "circular")
    with pytest.raises(ValueError, match="doesn't take in a value"):
        F.pad(x, (1, 1), "replicate", value=2.0)
    with pytest.raises(ValueError, match="negative output size"):
        F.pad(x, (-2, -2))

# ---------------------------------------------------------------- interpolate (torch-free)


def test_interpolate_by_hand():
    x = T.tensor([[[1.0, 2.0, 3.0]]])
    assert F.interpolate(x, scale_factor=2).tolist() == [[[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]]]
    assert F.interpolate(x, size=2).tolist() == [[[1.0, 2.0]]]                 # floor(j * 1.5)
    assert F.interpolate(x, size=2, mode="nearest-exact").tolist() == [[[1.0, 3.0]]]
    assert F.interpolate(x, size=5, mode="linear", align_corners=True).tolist() == \
        [[[1.0, 1.5, 2.0, 2.5, 3.0]]]
    # half-pixel centres: src = (j + 0.5) / 2 - 0.5, clamped at 0
    close(F.interpolate(x, scale_factor=2, mode="linear"), [[[1.0, 1.25, 1.75, 2.25, 2.75, 3.0]]])
    sq = T.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    close(F.interpolate(sq, size=3, mode="bilinear", align_corners=True),
          [[[[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]]])
    close(F.interpolate(sq, scale_factor=(1, 2), mode="bilinear"),
          [[[[0.0, 0.25, 0.75, 1.0], [2.0, 2.25, 2.75, 3.0]]]])
    y = F.interpolate(sq, scale_factor=2)
    assert y.shape == (1, 1, 4, 4) and y[0, 0, 3].tolist() == [2.0, 2.0, 3.0, 3.0]
    # the given scale maps coordinates unless recompute_scale_factor: 3 * 1.5 -> 4 outputs
    x4 = T.tensor([[[0.0, 1.0, 2.0]]])
    close(F.interpolate(x4, scale_factor=1.5, mode="linear"), [[[0.0, 0.5, 7 / 6, 11 / 6]]])
    close(F.interpolate(x4, scale_factor=1.5, mode="linear", recompute_scale_factor=True),
          [[[0.0, 0.625, 1.375, 2.0]]])
    assert nn.Upsample(scale_factor=2)(x).tolist() == F.interpolate(x, scale_factor=2).tolist()
    close(nn.UpsamplingBilinear2d(scale_factor=2)(sq)[0, 0, 0], [0.0, 1 / 3, 2 / 3, 1.0])
    assert nn.UpsamplingNearest2d(size=(1, 1))(sq).tolist() == [[[[0.0]]]]


def test_interpolate_bicubic_area_trilinear_by_hand():
    ramp = T.tensor([[[[0.0, 1.0, 2.0, 3.0]]]], dtype=F64)
    y = F.interpolate(ramp, size=(1, 7), mode="bicubic", align_corners=True)[0, 0, 0]
    # src = j / 2; the cubic kernel (A = -0.75) reproduces a line away from the edges, and at
    # src 0.5 the clamped taps read 0, 0, 1, 2 with weights k(1.5), k(0.5), k(0.5), k(1.5)
    close(y[2:5], [1.0, 1.5, 2.0])
    close(y[1], 0.59375 - 2 * 0.09375)
    img = T.asarray(np.random.default_rng(0).standard_normal((1, 2, 3, 4)))
    close(F.interpolate(img, size=(3, 4), mode="bicubic"), img.numpy())   # same size: itself
    x = T.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]], dtype=F64)
    close(F.interpolate(x, size=3, mode="area"), [[[1.5, 3.5, 5.5]]])
    close(F.interpolate(x, size=4, mode="area"), [[[1.5, 2.5, 4.5, 5.5]]])   # overlapping bins
    cube = T.asarray(np.arange(8.0).reshape(1, 1, 2, 2, 2))
    mid = F.interpolate(cube, size=3, mode="trilinear", align_corners=True)[0, 0, 1, 1, 1]
    close(mid, 3.5)


def test_interpolate_antialias_by_hand():
    # 4 -> 2, bilinear: the triangle widened to 2 pixels around centres 1 and 3 weighs pixels
    # (0, 1, 2) by (0.75, 0.75, 0.25) / 1.75 and (1, 2, 3) by (0.25, 0.75, 0.75) / 1.75
    x = T.tensor([[[[1.0, 2.0, 4.0, 8.0]]]], dtype=F64)
    y = F.interpolate(x, size=(1, 2), mode="bilinear", antialias=True)
    close(y, [[[[(0.75 * 1 + 0.75 * 2 + 0.25 * 4) / 1.75, (0.25 * 2 + 0.75 * 4 + 0.75 * 8) / 1.75]]]])
    img = rnd(1, 2, 9, 12, grad=False)
    for mode in ("bilinear", "bicubic"):       # the weights of each output sum to 1
        flat = F.interpolate(T.ones((1, 1, 9, 12), dtype=F64), size=(4, 5), mode=mode,
                             antialias=True)
        close(flat, np.ones((1, 1, 4, 5)))
    # upsampling: the filter does not widen, so bilinear is the plain one
    close(F.interpolate(img, size=(13, 17), mode="bilinear", antialias=True),
          F.interpolate(img, size=(13, 17), mode="bilinear").numpy())
    for kw in (dict(size=(2, 3), mode="bilinear"), dict(scale_factor=0.4, mode="bicubic",
                                                        align_corners=True)):
        assert ag.gradcheck(lambda a, kw=kw: F.interpolate(a, antialias=True, **kw),
                            [rnd(1, 1, 5, 7)])


def test_interpolate_gradients():
    x = T.tensor([[[1.0, 2.0, 3.0]]], dtype=F64).requires_grad_()
    g = ag.grad(F.interpolate(x, size=5, mode="linear", align_corners=True).sum(), [x])[0]
    close(g, [[[1.5, 2.0, 1.5]]])
    g = ag.grad(F.interpolate(x, scale_factor=2).sum(), [x])[0]
    assert g.tolist() == [[[2.0, 2.0, 2.0]]]
    for kw in (dict(size=(3, 5), mode="bilinear"), dict(scale_factor=1.5, mode="bilinear",
                                                         align_corners=True),
               dict(size=(2, 5), mode="nearest-exact"), dict(size=(4, 2), mode="bicubic"),
               dict(scale_factor=1.7, mode="bicubic", align_corners=True),
               dict(size=(1, 2), mode="area")):
        assert ag.gradcheck(lambda a, kw=kw: F.interpolate(a, **kw), [rnd(1, 2, 2, 3)])


def test_interpolate_errors():
    x = T.ones((1, 1, 3))
    with pytest.raises(ValueError, match="exactly one of size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="exactly one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners can only be set"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(ValueError, match="mode 'bilinear' needs 4-d"):
        F.interpolate(x, size=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="mode 'lanczos' is not supported"):
        F.interpolate(T.ones((1, 1, 2, 2)), size=2, mode="lanczos")
    with pytest.raises(ValueError, match="antialias=True applies to the bilinear and bicubic"):
        F.interpolate(T.ones((1, 1, 2, 2)), size=2, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="mode 'bicubic' needs 4-d"):
        F.interpolate(x, size=2, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners can only be set"):
        F.interpolate(x, size=2, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="greater than 0"):
        F.interpolate(x, scale_factor=0.2)
    with pytest.raises(ValueError, match="2 values"):
        F.interpolate(T.ones((1, 1, 2, 2)), size=(1, 2, 3))

# ---------------------------------------------------------------- normalization (torch-free)


def test_rms_norm_by_hand():
    x = T.tensor([[3.0, 4.0], [1.0, 1.0]], dtype=F64)
    close(F.rms_norm(x, 2, eps=0.0), [[3 / math.sqrt(12.5), 4 / math.sqrt(12.5)], [1.0, 1.0]])
    close(F.rms_norm(x, (2, 2), T.tensor([[2.0, 1.0], [1.0, 1.0]], dtype=F64), eps=0.0),
          np.array([[6.0, 4.0], [1.0, 1.0]]) / math.sqrt(27 / 4))
    z = F.rms_norm(T.zeros((1, 2), dtype=T.float32), 2)           # eps None: finfo(float32).eps
    assert z.tolist() == [[0.0, 0.0]]
    m = nn.RMSNorm([2])
    assert m.weight.tolist() == [1.0, 1.0] and m.eps is None and "eps=None" in repr(m)
    close(m(T.tensor([[0.0, 2.0]])), [[0.0, math.sqrt(2.0) * 2 / math.sqrt(4 + 2 * 1.1920928955078125e-07)]],
          tol=1e-6)
    assert nn.RMSNorm(2, elementwise_affine=False).weight is None
    with pytest.raises(ValueError, match="RMSNorm: expected input of shape"):
        m(T.ones((2, 3)))
    assert ag.gradcheck(lambda a, w: F.rms_norm(a, (3,), w, 1e-3), [rnd(2, 3), rnd(3, seed=1)])


def test_instance_norm_by_hand():
    x = T.tensor([[[0.0, 2.0], [1.0, 3.0]], [[4.0, 0.0], [3.0, 5.0]]], dtype=F64)
    close(F.instance_norm(x, eps=0.0), [[[-1.0, 1.0], [-1.0, 1.0]], [[1.0, -1.0], [-1.0, 1.0]]])
    rm, rv = T.zeros(2, dtype=F64), T.ones(2, dtype=F64)
    F.instance_norm(x, rm, rv, momentum=0.5)
    # per instance: means (1, 2 | 2, 4), unbiased vars (2, 2 | 8, 2) -> batch averages
    close(rm, [0.75, 1.5])
    close(rv, [0.5 + 0.5 * 5.0, 0.5 + 0.5 * 2.0])
    close(F.instance_norm(x, T.tensor([1.0, 1.0], dtype=F64), T.tensor([4.0, 1.0], dtype=F64),
                          T.tensor([2.0, 1.0], dtype=F64), T.tensor([0.0, 1.0], dtype=F64),
                          use_input_stats=False, eps=0.0),
          [[[-1.0, 1.0], [1.0, 3.0]], [[3.0, -1.0], [3.0, 5.0]]])
    m = nn.InstanceNorm1d(2, affine=True, track_running_stats=True, eps=0.0, dtype=F64)
    assert sorted(m.state_dict()) == ["bias", "num_batches_tracked", "running_mean",
                                      "running_var", "weight"]
    close(m(x), F.instance_norm(x, eps=0.0).detach().numpy())
    close(m.running_mean, [0.15, 0.3])
    close(m.running_var, [1.4, 1.1])
    m.eval()
    close(m(x[0]), (x[0].numpy() - np.array([[0.15], [0.3]])) / np.sqrt([[1.4], [1.1]]))
    with pytest.raises(ValueError, match="InstanceNorm1d: expected input's size at dim 1"):
        m(T.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="InstanceNorm2d: expected 3-d"):
        nn.InstanceNorm2d(2)(T.ones((2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert nn.InstanceNorm2d(3)(T.ones((1, 2, 2, 2))).shape == (1, 2, 2, 2)
    assert ag.gradcheck(lambda a, w, b: F.instance_norm(a, weight=w, bias=b),
                        [rnd(2, 2, 3), rnd(2, seed=1), rnd(2, seed=2)])

# ---------------------------------------------------------------- shapes, dropout (torch-free)


def test_pixel_shuffle_and_unflatten():
    x = T.arange(8.0).reshape(1, 8, 1, 1)
    assert F.pixel_shuffle(x, 2).tolist() == [[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]]
    y = rnd(2, 3, 12, 2, 3, grad=False)
    assert F.pixel_unshuffle(F.pixel_shuffle(y, 2), 2).tolist() == y.tolist()
    assert nn.PixelUnshuffle(3)(T.ones((2, 6, 6))).shape == (18, 2, 2)
    assert nn.PixelShuffle(2)(T.ones((4, 1, 1))).shape == (1, 2, 2)
    with pytest.raises(ValueError, match="divisible by upscale_factor"):
        F.pixel_shuffle(T.ones((1, 3, 2, 2)), 2)
    with pytest.raises(ValueError, match="divisible by downscale_factor"):
        F.pixel_unshuffle(T.ones((1, 1, 3, 2)), 2)
    with pytest.raises(ValueError, match="positive int"):
        nn.PixelShuffle(0)
    assert ag.gradcheck(lambda a: F.pixel_shuffle(a, 2) * T.arange(4.0, dtype=F64),
                        [rnd(1, 4, 2, 2)])
    u = nn.Unflatten(-1, (2, -1))
    assert u(T.arange(6.0).reshape(1, 6)).tolist() == [[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]]
    assert nn.Unflatten(0, (1, 2, 1))(T.ones((2, 3))).shape == (1, 2, 1, 3)
    with pytest.raises(ValueError, match="does not match the size 6"):
        nn.Unflatten(1, (4, -1))(T.ones((1, 6)))
    with pytest.raises(ValueError, match="does not match"):
        nn.Unflatten(1, (2, 2))(T.ones((1, 6)))
    with pytest.raises(IndexError, match="out of range"):
        nn.Unflatten(3, (1,))(T.ones((2, 3)))


def test_channel_dropout():
    T.manual_seed(0)
    x = T.ones((4, 6, 5))
    y = F.dropout1d(x, 0.5)
    per = y.numpy().reshape(24, 5)
    assert set(np.unique(per)) <= {0.0, 2.0} and (per.min(1) == per.max(1)).all()
    assert 0 < (per[:, 0] == 0).sum() < 24
    y = nn.Dropout2d(0.25)(T.ones((3, 5, 2, 2)))
    per = y.numpy().reshape(15, 4)
    assert (per.min(1) == per.max(1)).all() and set(np.unique(per)) <= {0.0, 4 / 3}
    assert F.dropout1d(x, 1.0).sum().item() == 0.0
    d = nn.Dropout1d(0.5).eval()
    assert d(x) is x and "p=0.5" in repr(d)
    u = nn.Dropout1d(0.9)(T.ones((5, 7)))                         # unbatched: (C, L)
    assert (u.numpy().min(1) == u.numpy().max(1)).all()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert F.dropout2d(T.ones((2, 3, 4)), 0.5).shape == (2, 3, 4)
    assert any("3-d input" in str(v.message) for v in w)
    with pytest.raises(ValueError, match="dropout1d: expected 2-d or 3-d"):
        F.dropout1d(T.ones((1, 2, 3, 4)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(1.5)
    x = rnd(2, 3, 4)
    T.manual_seed(3)
    g = ag.grad(F.dropout1d(x, 0.5).sum(), [x])[0].numpy()
    T.manual_seed(3)
    mask = F.dropout1d(T.ones((2, 3, 4), dtype=F64), 0.5).numpy()
    assert (g == mask).all()

def test_alpha_dropout():
    p, neg = 0.2, 1.7580993408473766
    a = 1 / math.sqrt((neg * neg * p + 1) * (1 - p))
    x = rnd(4000, seed=5)
    T.manual_seed(1)
    y = F.alpha_dropout(x, p, training=True)
    T.manual_seed(1)
    keep = (T.random.rand(4000, dtype=T.float32) >= p).numpy()
    ref = np.where(keep, a * x.detach().numpy() + neg * a * p, -neg * a + neg * a * p)
    close(y, ref)
    assert 0.75 < keep.mean() < 0.85
    assert abs(y.detach().numpy().mean()) < 0.1 and abs(y.detach().numpy().var() - 1) < 0.1
    close(ag.grad(y.sum(), [x])[0], np.where(keep, a, 0.0))
    assert F.alpha_dropout(x, p) is x and nn.AlphaDropout(p).eval()(x) is x
    assert F.alpha_dropout(T.ones(3), 1.0, training=True).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="alpha_dropout: dropout probability"):
        F.alpha_dropout(x, -0.1)

# ---------------------------------------------------------------- containers (torch-free)


def test_parameter_list_and_dict():
    pl = nn.ParameterList([nn.Parameter(T.zeros(2)), T.ones(3)])
    pl.append(T.ones(1))
    pl += [T.ones(4)]
    assert len(pl) == 4 and [p.shape for p in pl] == [(2,), (3,), (1,), (4,)]
    assert all(isinstance(p, nn.Parameter) for p in pl) and pl[-1].shape == (4,)
    pl[1] = T.zeros(5)
    assert pl[1].shape == (5,) and len(pl[1:3]) == 2
    pd = nn.ParameterDict({"w": T.ones((2, 2))})
    pd["b"] = T.zeros(2)
    pd.update([("c", T.ones(1))])
    assert list(pd) == ["w", "b", "c"] and "b" in pd and pd.get("z") is None
    del pd["c"]
    assert list(pd.keys()) == ["w", "b"] and isinstance(pd["b"], nn.Parameter)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.pl, self.pd = pl, pd

        def forward(self, x):
            return x @ self.pd["w"] + self.pd["b"] + self.pl[0].sum()

    m = M()
    assert sorted(m.state_dict()) == ["pd.b", "pd.w", "pl.0", "pl.1", "pl.2", "pl.3"]
    assert len(list(m.parameters())) == 6 and "Parameter containing" in repr(m)
    opt = nn.optim.SGD(m.parameters(), lr=1.0)
    m(T.ones((1, 2))).sum().backward()
    opt.step()
    assert pd["b"].tolist() == [-1.0, -1.0] and pl[0].tolist() == [-2.0, -2.0]
    sd = {k: v * 0 + 3 for k, v in m.state_dict().items()}
    m.load_state_dict(sd)
    assert pd["w"].tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert pd.pop("w").shape == (2, 2) and len(pd) == 1
    with pytest.raises(IndexError, match="ParameterList: index 9"):
        pl[9]
    with pytest.raises(KeyError):
        pd["nope"]

# ---------------------------------------------------------------- pooling, bilinear, fold


def test_adaptive_max_pool_by_hand():
    x = T.tensor([[[1.0, 5.0, 2.0, 0.0, 3.0]]], dtype=F64).requires_grad_()
    y, i = F.adaptive_max_pool1d(x, 3, return_indices=True)       # windows [0,2) [1,4) [3,5)
    assert y.tolist() == [[[5.0, 5.0, 3.0]]] and i.tolist() == [[[1, 1, 4]]]
    assert ag.grad(y.sum(), [x])[0].tolist() == [[[0.0, 2.0, 0.0, 0.0, 1.0]]]
    sq = T.arange(12.0).reshape(1, 3, 4)
    y, i = nn.AdaptiveMaxPool2d((2, None), return_indices=True)(sq)
    assert y.tolist() == [[[4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]]
    assert i.tolist() == [[[4, 5, 6, 7], [8, 9, 10, 11]]]
    t = T.tensor([[[2.0, 2.0, 1.0]]])                              # ties: the first maximum
    assert F.adaptive_max_pool1d(t, 1, True)[1].tolist() == [[[0]]]
    assert nn.AdaptiveMaxPool1d(2)(T.ones((2, 5))).shape == (2, 2)
    with pytest.raises(ValueError, match="adaptive_max_pool2d: expected 3-d or 4-d"):
        F.adaptive_max_pool2d(T.ones((2, 2)), 1)
    assert F.adaptive_max_pool1d(T.ones((1, 2)), 0).shape == (1, 0)   # PyTorch's: empty
    assert ag.gradcheck(lambda a: F.adaptive_max_pool2d(a, (2, 3)), [rnd(1, 2, 3, 5)])


def test_bilinear_by_hand():
    w = T.tensor([[[1.0, 2.0], [3.0, 4.0]]], dtype=F64)
    y = F.bilinear(T.tensor([[1.0, 0.0]], dtype=F64), T.tensor([[0.0, 1.0]], dtype=F64), w,
                   T.tensor([0.5], dtype=F64))
    assert y.tolist() == [[2.5]]
    m = nn.Bilinear(3, 2, 4)
    assert m.weight.shape == (4, 3, 2) and m.bias.shape == (4,)
    assert float(T.max(T.abs(m.weight)).item()) <= 1 / math.sqrt(3)
    assert m(T.ones(3), T.ones(2)).shape == (4,)                   # unbatched
    assert m(T.ones((5, 6, 3)), T.ones((5, 6, 2))).shape == (5, 6, 4)
    assert nn.Bilinear(2, 2, 1, bias=False).bias is None
    with pytest.raises(ValueError, match="bilinear: inputs of shapes"):
        m(T.ones((1, 2)), T.ones((1, 2)))
    assert ag.gradcheck(F.bilinear, [rnd(2, 3), rnd(2, 2, seed=1), rnd(4, 3, 2, seed=2),
                                     rnd(4, seed=3)])


def test_fold_unfold_modules():
    x = rnd(2, 3, 4, 4, grad=False)
    cols = nn.Unfold(2, stride=2)(x)
    assert cols.shape == (2, 12, 4)
    close(nn.Fold((4, 4), 2, stride=2)(cols), x.numpy())
    assert nn.Unfold(2)(x[0]).shape == (12, 9)
    assert nn.Fold((3, 3), 2)(T.ones((4, 4))).reshape(-1).tolist() == \
        [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]
    assert "kernel_size=2" in repr(nn.Unfold(2))

# ---------------------------------------------------------------- against torch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


DT = {"float32": (T.float32, np.float32, 2e-5), "float64": (F64, np.float64, 1e-9)}


def vs_torch(torch, fn, tfn, arrays, dn, seed=0):
    """Forward both functions, backward one random cotangent, compare outputs and gradients."""
    dtype, npd, tol = DT[dn]
    arrays = [np.asarray(a, dtype=npd) for a in arrays]
    xs = [T.asarray(a).requires_grad_() for a in arrays]
    txs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    y, ty = fn(*xs), tfn(*txs)
    close(y, ty.detach().numpy(), tol)
    g = np.random.default_rng(seed).standard_normal(tuple(ty.shape)).astype(npd)
    for a, b in zip(ag.grad((y * T.asarray(g)).sum(), xs),
                    torch.autograd.grad(ty, txs, torch.from_numpy(g))):
        close(a, b.numpy(), tol)


def _arr(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


PAD_CASES = [((2, 3, 4, 5), (1, 2), "constant"), ((2, 3, 4, 5), (-1, 2, 3, -2), "constant"),
             ((3, 4, 5), (2, 1), "reflect"), ((2, 3, 4, 5), (3, 0, -1, 2), "reflect"),
             ((3, 4, 5), (1, 3, 2, 0), "replicate"), ((1, 2, 3, 4, 5), (1, 1, 0, 2, 1, -1),
                                                      "replicate"),
             ((2, 3, 5), (3, -2), "circular"), ((2, 2, 4, 5), (1, 2, 3, 4), "circular")]


@pytest.mark.parametrize("dn", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(PAD_CASES)))
def test_pad_vs_torch(torch, case, dn):
    shape, p, mode = PAD_CASES[case]
    vs_torch(torch, lambda a: F.pad(a, p, mode), lambda a: torch.nn.functional.pad(a, p, mode),
             [_arr(case, *shape)], dn, case)


INTERP = [((2, 3, 5), dict(size=8, mode="nearest")), ((2, 3, 5), dict(scale_factor=0.6)),
          ((1, 2, 7), dict(scale_factor=1.7, mode="nearest-exact")),
          ((2, 2, 5), dict(size=9, mode="linear")),
          ((2, 2, 5), dict(scale_factor=2.3, mode="linear", align_corners=True)),
          ((2, 2, 6), dict(scale_factor=0.7, mode="linear", recompute_scale_factor=True)),
          ((1, 2, 4, 5), dict(size=(7, 3), mode="bilinear")),
          ((1, 2, 4, 5), dict(scale_factor=(1.5, 0.8), mode="bilinear", align_corners=True)),
          ((1, 2, 4, 5), dict(scale_factor=2, mode="bilinear", align_corners=False)),
          ((1, 2, 3, 4), dict(size=(5, 7), mode="nearest-exact")),
          ((1, 1, 2, 3, 4), dict(scale_factor=1.5, mode="nearest")),
          ((2, 2, 5, 7), dict(size=(8, 4), mode="bicubic")),
          ((1, 2, 5, 7), dict(scale_factor=2.5, mode="bicubic", align_corners=True)),
          ((1, 2, 6, 5), dict(scale_factor=(0.5, 1.7), mode="bicubic")),
          ((1, 2, 9), dict(size=4, mode="area")), ((1, 2, 4), dict(size=7, mode="area")),
          ((1, 2, 9, 10), dict(size=(4, 3), mode="area")),
          ((1, 1, 5, 6, 7), dict(size=(3, 2, 9), mode="area")),
          ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="trilinear")),
          ((1, 1, 3, 4, 5), dict(size=(2, 7, 3), mode="trilinear", align_corners=True)),
          ((2, 2, 9, 11), dict(size=(4, 3), mode="bilinear", antialias=True)),
          ((1, 2, 8, 7), dict(scale_factor=(0.3, 1.6), mode="bicubic", antialias=True)),
          ((1, 2, 8, 7), dict(size=(3, 5), mode="bicubic", antialias=True, align_corners=True))]


@pytest.mark.parametrize("dn", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate_vs_torch(torch, case, dn):
    shape, kw = INTERP[case]
    vs_torch(torch, lambda a: F.interpolate(a, **kw),
             lambda a: torch.nn.functional.interpolate(a, **kw), [_arr(case, *shape)], dn, case)


def test_functions_vs_torch(torch):
    tf = torch.nn.functional
    for dn in DT:
        vs_torch(torch, lambda a, w: F.rms_norm(a, (3, 4), w),
                 lambda a, w: tf.rms_norm(a, (3, 4), w), [_arr(1, 2, 3, 4), _arr(2, 3, 4)], dn)
        vs_torch(torch, lambda a, w, b: F.instance_norm(a, weight=w, bias=b),
                 lambda a, w, b: tf.instance_norm(a, weight=w, bias=b),
                 [_arr(3, 2, 3, 4, 2), _arr(4, 3), _arr(5, 3)], dn)
        vs_torch(torch, lambda a: F.pixel_shuffle(a, 3), lambda a: tf.pixel_shuffle(a, 3),
                 [_arr(6, 2, 18, 2, 3)], dn)
        vs_torch(torch, lambda a: F.pixel_unshuffle(a, 2), lambda a: tf.pixel_unshuffle(a, 2),
                 [_arr(7, 3, 4, 6)], dn)
        vs_torch(torch, lambda a: F.adaptive_max_pool2d(a, (3, 2)),
                 lambda a: tf.adaptive_max_pool2d(a, (3, 2)), [_arr(8, 2, 2, 5, 7)], dn)
        vs_torch(torch, lambda a: F.adaptive_max_pool1d(a, 4),
                 lambda a: tf.adaptive_max_pool1d(a, 4), [_arr(9, 3, 7)], dn)
        vs_torch(torch, F.bilinear, tf.bilinear,
                 [_arr(10, 4, 3), _arr(11, 4, 5), _arr(12, 2, 3, 5), _arr(13, 2)], dn)
    ones = np.ones(400)                              # the two values alpha_dropout can give
    mine = np.unique(F.alpha_dropout(T.asarray(ones), 0.3, True).numpy())
    theirs = np.unique(tf.alpha_dropout(torch.from_numpy(ones), 0.3, True).numpy())
    close(mine, theirs)
    x = _arr(14, 2, 3, 5, 6)
    for os in ((2, 3), 4, (5, 6), (None, 4)):
        y, i = F.adaptive_max_pool2d(T.asarray(x), os, True)
        ty, ti = tf.adaptive_max_pool2d(torch.from_numpy(x), os, True)
        close(y, ty.numpy())
        assert i.tolist() == ti.tolist()


def test_modules_vs_torch(torch):
    tnn = torch.nn
    pairs = [(nn.RMSNorm([4, 3]), tnn.RMSNorm([4, 3], dtype=torch.float64), (2, 4, 3)),
             (nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
              tnn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                 dtype=torch.float64), (2, 3, 4, 3)),
             (nn.InstanceNorm1d(2), tnn.InstanceNorm1d(2), (2, 5)),
             (nn.Upsample(scale_factor=2, mode="bilinear"),
              tnn.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
             (nn.UpsamplingBilinear2d(size=(5, 4)), tnn.UpsamplingBilinear2d(size=(5, 4)),
              (1, 2, 3, 3)),
             (nn.UpsamplingNearest2d(scale_factor=3), tnn.UpsamplingNearest2d(scale_factor=3),
              (1, 1, 2, 3)),
             (nn.Unflatten(1, (2, 3)), tnn.Unflatten(1, (2, 3)), (2, 6, 2)),
             (nn.AdaptiveMaxPool2d((2, 3)), tnn.AdaptiveMaxPool2d((2, 3)), (2, 5, 7)),
             (nn.Fold((4, 5), 2), tnn.Fold((4, 5), 2), (1, 8, 12)),
             (nn.Unfold(2, padding=1), tnn.Unfold(2, padding=1), (2, 3, 3))]
    for k, (m, tm, shape) in enumerate(pairs):
        m = m.to(F64)
        for name, v in m.state_dict().items():
            tm.state_dict()[name].copy_(torch.from_numpy(v.numpy().copy()))
        x = _arr(k, *shape)
        vs_torch(torch, m, tm, [x], "float64", k)
        for name, v in m.state_dict().items():
            close(v, tm.state_dict()[name].numpy())
        for mm in (m, tm):
            mm.eval()
        vs_torch(torch, m, tm, [x], "float64", k)
    m, tm = nn.Bilinear(3, 2, 4).to(F64), tnn.Bilinear(3, 2, 4, dtype=torch.float64)
    for name, v in m.state_dict().items():
        tm.state_dict()[name].copy_(torch.from_numpy(v.numpy().copy()))
    vs_torch(torch, m, tm, [_arr(1, 5, 3), _arr(2, 5, 2)], "float64")
    assert sorted(m.state_dict()) == sorted(tm.state_dict())
