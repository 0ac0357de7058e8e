"""F.grid_sample and F.affine_grid (nn/grid.py).

- torch-free: the identity grid gives the image back in every mode; a one-pixel translation
  shifts it, with zeros / border / reflection padding filling what comes in as their
  definitions say; bilinear at a midpoint is the neighbours' mean; nearest rounds half to even;
  affine_grid's points are theta times the pixel centres; float64 gradcheck with respect to the
  input and the grid (bilinear, bicubic, trilinear); errors; the CPU and CUDA device agree;
- PyTorch (where importable): outputs and both gradients equal torch's in float64 for every
  mode x padding x align_corners, in 2-D and 3-D.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import autograd as ag
import tensor as T
from nn import functional as F

RNG = np.random.default_rng(21)


def _affine(n, tx=0.0, ty=0.0):
    return T.asarray(np.tile(np.array([[1.0, 0.0, tx], [0.0, 1.0, ty]]), (n, 1, 1)))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("align", [False, True])
def test_identity_grid_gives_the_image_back(mode, align):
    x = RNG.standard_normal((2, 3, 4, 5))
    grid = F.affine_grid(_affine(2), (2, 3, 4, 5), align_corners=align)
    y = F.grid_sample(T.asarray(x), grid, mode=mode, align_corners=align)
    np.testing.assert_allclose(y.numpy(), x, rtol=1e-12, atol=1e-12)


def test_translation_and_padding_modes():
    x = RNG.standard_normal((1, 1, 3, 4))
    # x + 2/W in normalised units is one pixel right (align_corners=False): column j reads j + 1
    grid = F.affine_grid(_affine(1, tx=2 / 4), (1, 1, 3, 4), align_corners=False)
    want = {"zeros": np.concatenate([x[..., 1:], np.zeros((1, 1, 3, 1))], axis=-1),
            "border": np.concatenate([x[..., 1:], x[..., 3:]], axis=-1),
            # 4 lies half a pixel past the edge at 3.5, so it reflects onto 3
            "reflection": np.concatenate([x[..., 1:], x[..., 3:]], axis=-1)}
    for pm, w in want.items():
        got = F.grid_sample(T.asarray(x), grid, padding_mode=pm, align_corners=False)
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-12, atol=1e-12, err_msg=pm)
    # two pixels right reflects columns 2, 3 onto 3, 2 (edges at -0.5 and 3.5)
    grid = F.affine_grid(_affine(1, tx=4 / 4), (1, 1, 3, 4), align_corners=False)
    got = F.grid_sample(T.asarray(x), grid, padding_mode="reflection", align_corners=False)
    np.testing.assert_allclose(got.numpy(), x[..., [2, 3, 3, 2]], rtol=1e-12)
    # bilinear at the midpoint of the first two pixels of row 0 (align_corners=True)
    pt = T.asarray(np.array([[[[-1 + 1 / 3, -1.0]]]]))
    got = F.grid_sample(T.asarray(x), pt, align_corners=True)
    np.testing.assert_allclose(got.numpy().ravel(), [(x[0, 0, 0, 0] + x[0, 0, 0, 1]) / 2])
    # nearest rounds half to even: pixel 0.5 reads pixel 0, 1.5 reads pixel 2
    pts = T.asarray(np.array([[[[-1 + 1 / 3, -1.0], [-1 + 1.0, -1.0]]]]))
    got = F.grid_sample(T.asarray(x), pts, mode="nearest", align_corners=True)
    np.testing.assert_array_equal(got.numpy().ravel(), x[0, 0, 0, [0, 2]])


def test_affine_grid_definition():
    theta = RNG.standard_normal((2, 2, 3))
    for align in (False, True):
        g = F.affine_grid(T.asarray(theta), (2, 1, 3, 4), align_corners=align).numpy()
        xs, ys = np.linspace(-1, 1, 4), np.linspace(-1, 1, 3)
        if not align:
            xs, ys = xs * 3 / 4, ys * 2 / 3
        pts = np.stack(list(np.meshgrid(xs, ys)) + [np.ones((3, 4))], axis=-1)     # (H, W, 3)
        np.testing.assert_allclose(g, np.einsum("hwk,nck->nhwc", pts, theta), rtol=1e-12)
    theta3 = RNG.standard_normal((1, 3, 4))
    assert F.affine_grid(T.asarray(theta3), (1, 2, 2, 3, 4)).shape == (1, 2, 3, 4, 3)


@pytest.mark.parametrize("mode,pm,nd", [("bilinear", "zeros", 2), ("bicubic", "reflection", 2),
                                        ("bilinear", "border", 3)])
def test_gradcheck(mode, pm, nd):
    x = T.asarray(RNG.standard_normal((1, 2) + (3,) * nd)).requires_grad_()
    # points away from pixel boundaries, where the interpolation is differentiable
    g = T.asarray(RNG.uniform(-1.3, 1.3, (1, 2, 2, nd) if nd == 2 else (1, 2, 1, 2, 3)))
    assert ag.gradcheck(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=pm,
                                                   align_corners=False), [x, g.requires_grad_()])


def test_errors():
    x = T.ones((1, 1, 3, 3))
    g = T.zeros((1, 2, 2, 2))
    with pytest.raises(ValueError, match=r"grid_sample: expected input \(N, C, H, W\) with grid"):
        F.grid_sample(x, T.zeros((1, 2, 2, 3)))
    with pytest.raises(ValueError, match="grid_sample: mode must be one of"):
        F.grid_sample(x, g, mode="area")
    with pytest.raises(ValueError, match="grid_sample: padding_mode must be one of"):
        F.grid_sample(x, g, padding_mode="circular")
    with pytest.raises(ValueError, match="mode 'bicubic' takes 4-D input only"):
        F.grid_sample(T.ones((1, 1, 2, 2, 2)), T.zeros((1, 1, 1, 1, 3)), mode="bicubic")
    with pytest.raises(TypeError, match="grid_sample: input and grid must have one floating dtype"):
        F.grid_sample(x, g.astype(T.float32))
    with pytest.raises(ValueError, match=r"affine_grid: expected theta of shape \(N, 2, 3\)"):
        F.affine_grid(T.zeros((1, 3, 3)), (1, 1, 4, 4))
    with pytest.raises(ValueError, match="affine_grid: size must be positive"):
        F.affine_grid(T.zeros((1, 2, 3)), (1, 1, 0, 4))


def test_devices_agree(device):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    g = RNG.uniform(-1.2, 1.2, (2, 3, 2, 2)).astype(np.float32)
    want = F.grid_sample(T.asarray(x), T.asarray(g), mode="bicubic", padding_mode="border")
    xd, gd = (T.asarray(a, device=device).requires_grad_() for a in (x, g))
    got = F.grid_sample(xd, gd, mode="bicubic", padding_mode="border")
    np.testing.assert_allclose(got.detach().to("cpu").numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    got.sum().backward()
    assert xd.grad.device == xd.device and gd.grad.shape == gd.shape


CASES = [(nd, mode, pm, align) for nd in (2, 3)
         for mode, pm, align in itertools.product(("bilinear", "nearest", "bicubic"),
                                                  ("zeros", "border", "reflection"), (False, True))
         if not (nd == 3 and mode == "bicubic")]


@pytest.mark.parametrize("nd,mode,pm,align", CASES)
def test_matches_torch(nd, mode, pm, align):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 4, 5) if nd == 2 else (2, 3, 3, 4, 5))
    g = RNG.uniform(-1.6, 1.6, (2, 3, 4, 2) if nd == 2 else (2, 2, 3, 4, 3))
    xt, gt = (torch.tensor(a, requires_grad=True) for a in (x, g))
    xo, go = (T.asarray(a).requires_grad_() for a in (x, g))
    yt = torch.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=pm, align_corners=align)
    yo = F.grid_sample(xo, go, mode=mode, padding_mode=pm, align_corners=align)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = RNG.standard_normal(tuple(yt.shape))
    (yt * torch.tensor(w)).sum().backward()
    (yo * T.asarray(w)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    # nearest: torch returns a zero grid gradient; ours leaves the grid unconnected (None)
    gg = np.zeros(g.shape) if go.grad is None else go.grad.numpy()
    np.testing.assert_allclose(gg, gt.grad.numpy(), rtol=1e-10, atol=1e-12)
    th = RNG.standard_normal((2, nd, nd + 1))
    size = (2, 3) + ((4, 5) if nd == 2 else (3, 4, 5))
    np.testing.assert_allclose(F.affine_grid(T.asarray(th), size, align_corners=align).numpy(),
                               torch.nn.functional.affine_grid(torch.tensor(th), size,
                                                               align_corners=align).numpy(),
                               rtol=1e-12, atol=1e-14)
