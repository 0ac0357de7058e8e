"""tensor.fft against NumPy: every length 1..4096 and some large primes (the Stockham and
Bluestein paths of tensor/cpu/csrc/fft.h), every function with n / axis / s / axes / norm,
dtypes, strided inputs; gradients (gradcheck, gradgradcheck, forward mode) and errors; on both
devices (CUDA: cuda_src/fft.cuh, on the emulator or a GPU).
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T

F = T.fft
pytestmark = pytest.mark.usefixtures("device")


def _c(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _close(got, want, tol=1e-12):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert np.abs(got - want).max(initial=0.0) <= tol * scale, np.abs(got - want).max()


def test_every_length_up_to_4096_and_large_primes():
    """complex128 within 1e-12 of NumPy (relative to the largest output), complex64 within
    2e-6, forward and inverse, for n = 1..4096 (two rows each) and primes past the radices.
    (CUDA, on the emulator: every 37th length and the primes, all in batched calls.)"""
    rng = np.random.default_rng(0)
    cpu = T.get_default_device().type == "cpu"
    for n in [n for n in range(1, 4097) if cpu or n % 37 in (1, 2)] + [10007, 65537]:
        a = _c(rng, 2 if n < 4097 else 1, n)
        x = T.asarray(a)
        _close(F.fft(x), np.fft.fft(a))
        _close(F.ifft(x), np.fft.ifft(a))
        if n % 64 == 1 or n > 4096:
            a32 = a.astype(np.complex64)
            _close(F.fft(T.asarray(a32)), np.fft.fft(a32.astype(np.complex128)), 2e-6)


def test_long_rows_four_step():
    """Long rows (CUDA: the four-step transform, tensor/cuda/fft.py, from 2^13 with fewer rows
    than SMs and from 2^17 always; Bluestein's (primes 8209, 4099 x 17) through it; the CPU's
    one path): NumPy's within 1e-12 (complex128) / 2e-6 (complex64), both directions, strided
    input, rfft / irfft."""
    rng = np.random.default_rng(3)
    for n, rows in [(1 << 13, 1), (3 * 5 * 7 * 11 * 16, 1), (1 << 17, 2), (8209, 1), (17 * 4099, 2)]:
        a = _c(rng, rows, n)
        x = T.asarray(a)
        _close(F.fft(x), np.fft.fft(a))
        _close(F.ifft(x, norm="ortho"), np.fft.ifft(a, norm="ortho"))
        a32 = a.astype(np.complex64)
        _close(F.fft(T.asarray(a32)), np.fft.fft(a32.astype(np.complex128)), 2e-6)
    b = _c(rng, 2 << 13, 3)
    _close(F.fft(T.asarray(b)[:, 1], axis=0), np.fft.fft(b[:, 1], axis=0))   # a strided column
    r = rng.standard_normal(1 << 14)
    _close(F.rfft(T.asarray(r)), np.fft.rfft(r))
    _close(F.irfft(F.rfft(T.asarray(r))), r)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_functions_match_numpy(norm):
    rng = np.random.default_rng(1)
    a, r, r3 = _c(rng, 3, 10), rng.standard_normal((4, 9)), rng.standard_normal((3, 4, 5))
    A, R, R3 = T.asarray(a), T.asarray(r), T.asarray(r3)
    k = {"norm": norm}
    _close(F.fft(A, **k), np.fft.fft(a, **k))
    _close(F.fft(A, 13, 0, **k), np.fft.fft(a, 13, 0, **k))
    _close(F.ifft(A, 7, **k), np.fft.ifft(a, 7, **k))
    _close(F.rfft(R, **k), np.fft.rfft(r, **k))
    _close(F.rfft(R, 12, axis=0, **k), np.fft.rfft(r, 12, axis=0, **k))
    for n in (None, 1, 2, 7, 30):
        _close(F.irfft(A, n, **k), np.fft.irfft(a, n, **k))
        _close(F.hfft(A, n, **k), np.fft.hfft(a, n, **k))
    _close(F.ihfft(R, **k), np.fft.ihfft(r, **k))
    _close(F.fftn(R3, **k), np.fft.fftn(r3, **k))
    _close(F.fftn(R3, s=(3, 6), axes=(0, 2), **k), np.fft.fftn(r3, s=(3, 6), axes=(0, 2), **k))
    _close(F.ifftn(R3, s=(2, 7), **k), np.fft.ifftn(r3, s=(2, 7), axes=(1, 2), **k))
    _close(F.rfftn(R3, **k), np.fft.rfftn(r3, **k))
    _close(F.irfftn(T.asarray(np.fft.rfftn(r3)), **k), np.fft.irfftn(np.fft.rfftn(r3), **k))
    _close(F.irfftn(T.asarray(np.fft.rfftn(r3)), s=(4, 5), axes=(1, 2), **k),
           np.fft.irfftn(np.fft.rfftn(r3), s=(4, 5), axes=(1, 2), **k))


def test_strided_inputs_dtypes_frequencies_and_shifts():
    rng = np.random.default_rng(2)
    a = _c(rng, 6, 8)
    _close(F.fft(T.asarray(a)[::2, ::-1].T), np.fft.fft(a[::2, ::-1].T))
    assert F.rfft(T.asarray(rng.standard_normal(8).astype(np.float32))).dtype is T.complex64
    assert F.fft(T.asarray(np.arange(4))).dtype is T.complex128
    assert F.fft(T.asarray(np.ones(4, np.float32)).astype(T.bfloat16)).dtype is T.complex64
    assert F.irfft(T.asarray(a.astype(np.complex64))).dtype is T.float32
    for n, d in ((7, 0.5), (8, 1.0), (1, 2.0)):
        _close(F.fftfreq(n, d), np.fft.fftfreq(n, d))
        _close(F.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    assert F.fftfreq(4, dtype=T.float32).dtype is T.float32
    r3 = rng.standard_normal((3, 4, 5))
    _close(F.fftshift(T.asarray(r3)), np.fft.fftshift(r3))
    _close(F.ifftshift(T.asarray(r3), axes=1), np.fft.ifftshift(r3, axes=1))
    _close(F.ifftshift(F.fftshift(T.asarray(r3), axes=(0, 2)), axes=(0, 2)), r3)
    assert F.fft(T.zeros((3, 0), dtype=T.complex128), 4).shape == (3, 4)


GRADS = {
    "fft": (lambda z: F.fft(z, 6, norm="ortho"), "c", (3, 5)),
    "ifft": (lambda z: F.ifft(z, 4), "c", (3, 5)),
    "rfft": (lambda z: F.rfft(z, 7), "r", (3, 5)),
    "irfft": (lambda z: F.irfft(z, 6), "c", (3, 4)),
    "irfft_odd": (lambda z: F.irfft(z, 5, norm="forward"), "c", (3, 4)),
    "hfft": (lambda z: F.hfft(z), "c", (3, 4)),
    "ihfft": (lambda z: F.ihfft(z), "r", (3, 5)),
    "fftn": (lambda z: F.fftn(z, axes=(0, 1)), "c", (2, 3)),
    "rfftn": (lambda z: F.rfftn(z), "r", (2, 3, 4)),
    "irfftn": (lambda z: F.irfftn(z), "c", (2, 3)),
    "bluestein": (lambda z: F.fft(z, 17), "c", (2, 17)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name):
    """Reverse mode against finite differences (float64 / complex128), second order for the
    transforms themselves, and forward mode through the jvp rule."""
    fn, kind, shape = GRADS[name]
    rng = np.random.default_rng(3)
    v = _c(rng, *shape) if kind == "c" else rng.standard_normal(shape)
    z = T.asarray(v).requires_grad_()
    assert autograd.gradcheck(fn, (z,))
    if name in ("fft", "irfft", "rfft"):
        assert autograd.gradgradcheck(fn, (z,))
    t = T.asarray(_c(rng, *shape) if kind == "c" else rng.standard_normal(shape))
    out, tan = autograd.jvp(fn, T.asarray(v), t)
    eps = 1e-6
    num = (fn(T.asarray(v) + eps * t) - fn(T.asarray(v) - eps * t)) / (2 * eps)
    _close(tan, num.numpy(), 1e-6)


def test_errors():
    x = T.asarray(np.ones((2, 4)))
    with pytest.raises(ValueError, match="fft: norm must be"):
        F.fft(x, norm="none")
    with pytest.raises(ValueError, match=r"fft: invalid number of data points \(0\)"):
        F.fft(x, 0)
    with pytest.raises(ValueError, match=r"irfft: invalid number of data points \(0\)"):
        F.irfft(T.asarray(np.ones(1)))
    with pytest.raises(TypeError, match="rfft: expects a real input, got complex128"):
        F.rfft(x.astype(T.complex128))
    with pytest.raises(ValueError, match="fftn: axes .* repeat"):
        F.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError, match="fftn: s .* and axes .* must have the same length"):
        F.fftn(x, s=(2, 2, 2), axes=(0, 1))
    with pytest.raises(TypeError, match="fft: expected a Tensor or an array-like"):
        F.fft(object())
    with pytest.raises(ValueError, match=r"fftn: s \(3, 5, 6\) has more entries than x has dim"):
        F.fftn(x, s=(3, 5, 6))   # the axes wrapped round before: "repeat an axis"
    with pytest.raises(ValueError, match=r"hfft: invalid number of data points \(0\)"):
        F.hfft(T.asarray(np.ones(1)))


def test_array_likes_and_numpys_minus_one_lengths():
    np.testing.assert_allclose(F.fft([1.0, 2.0, 0.5]).numpy(), np.fft.fft([1.0, 2.0, 0.5]), atol=1e-14)
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    for fn, nfn, s in ((F.fftn, np.fft.fftn, (-1, 6)), (F.rfftn, np.fft.rfftn, (3, -1)),
                       (F.ifftn, np.fft.ifftn, (5, -1))):
        np.testing.assert_allclose(fn(T.asarray(x), s=s).numpy(), nfn(x, s=s, axes=(1, 2)), atol=1e-13)
    X = np.fft.rfftn(x, axes=(1, 2))   # irfftn: -1 is the axis's length, not 2 (m - 1)
    for s in ((-1, -1), (-1, 7)):
        got, want = F.irfftn(T.asarray(X), s=s), np.fft.irfftn(X, s=s, axes=(1, 2))
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, atol=1e-13)
