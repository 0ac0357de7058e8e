"""PyTorch's short-time Fourier transforms, stft and istft, built on tensor.fft: frames gathered
with take, windowed, transformed along their last axis; istft overlap-adds the inverse transforms
with index_add and divides by the overlap-added squared window (the NOLA condition: that sum
must not vanish inside the kept range). PyTorch's arguments and defaults (center=True with
reflect padding, hop n_fft // 4, a rectangular window when None, onesided for real input).

Compositions of the public (recorded) ops: differentiable in both directions.

>>> import tensor as T
>>> from tensor.torch_spectral import istft, stft
>>> S = stft(T.ones(16), 8, window=T.hann_window(8), return_complex=True)
>>> S.shape, S.dtype.name
((5, 9), 'complex128')
>>> [round(v, 12) for v in istft(S, 8, window=T.hann_window(8)).tolist()] == [1.0] * 16
True
"""
from __future__ import annotations

import operator

from . import dtypes as dt
from . import fft as F
from . import torch_extra2 as X2
from ._tensor import Tensor
from .creation import arange, ones, zeros
from .optable import T as P  # tensor's public (recorded) functions

_PAD = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}


def _sizes(op: str, n_fft, hop_length, win_length):
    n_fft = operator.index(n_fft)
    hop = n_fft // 4 if hop_length is None else operator.index(hop_length)
    win = n_fft if win_length is None else operator.index(win_length)
    if n_fft <= 0:
        raise ValueError(f"{op}: expected 0 < n_fft, got n_fft={n_fft}")
    if hop <= 0:
        raise ValueError(f"{op}: expected hop_length > 0, got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise ValueError(f"{op}: expected 0 < win_length <= n_fft, got win_length={win}, n_fft={n_fft}")
    return n_fft, hop, win


def _window(op: str, window, win: int, n_fft: int, like: Tensor) -> Tensor:
    """The window (ones when None) padded with zeros on both sides to n_fft, centred."""
    if window is None:
        w = ones((win,), dtype=dt.real_of(like.dtype) if like.dtype.kind == "c" else like.dtype,
                 device=like.device)
    else:
        w = X2._tensor(window, op)
        if w.ndim != 1 or w.shape[0] != win:
            raise ValueError(f"{op}: expected a 1-d window of size win_length={win}, got shape {w.shape}")
        if w.device != like.device:
            raise ValueError(f"{op}: the window is on {w.device}, the input on {like.device}")
    left = (n_fft - win) // 2
    return P.pad(w, [(left, n_fft - win - left)]) if win < n_fft else w


def _frame_index(n_frames: int, hop: int, n_fft: int, device) -> Tensor:
    starts = P.multiply(arange(n_frames, dtype=dt.int64, device=device), hop)
    return P.add(P.expand_dims(starts, 1), P.expand_dims(arange(n_fft, dtype=dt.int64, device=device), 0))


def stft(input, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided=None, return_complex=None) -> Tensor:
    """The short-time Fourier transform of a 1-d signal (L,) or a batch (B, L): (B?, n_freq, n_frames),
    n_freq = n_fft // 2 + 1 when onesided (the default for a real input and window) else n_fft,
    n_frames = 1 + (L' - n_fft) // hop_length, L' the length after center's padding of n_fft // 2
    on both sides (pad_mode 'reflect', 'constant', 'replicate' or 'circular'). normalized scales
    by n_fft^-1/2. return_complex must be given for real input, as PyTorch's; False returns the
    real view (..., 2)."""
    op = "stft"
    x = X2._tensor(input, op)
    if x.ndim not in (1, 2):
        raise ValueError(f"{op}: expected a 1-d or 2-d (batch, length) input, got shape {x.shape}")
    if x.dtype.kind not in "fc":
        raise TypeError(f"{op}: expected a floating-point or complex input, got {x.dtype.name}")
    n_fft, hop, win = _sizes(op, n_fft, hop_length, win_length)
    w = _window(op, window, win, n_fft, x)
    cplx = x.dtype.kind == "c" or w.dtype.kind == "c"
    if return_complex is None:
        if not cplx:
            raise ValueError(f"{op}: requires the return_complex parameter be given for real inputs "
                             "(return_complex=True, as PyTorch)")
        return_complex = True
    onesided = not cplx if onesided is None else bool(onesided)
    if onesided and cplx:
        raise ValueError(f"{op}: onesided=True needs a real input and window; use onesided=False")
    batched = x.ndim == 2
    if not batched:
        x = P.expand_dims(x, 0)
    if center:
        if pad_mode not in _PAD:
            raise ValueError(f"{op}: pad_mode must be one of {sorted(_PAD)}, got {pad_mode!r}")
        half = n_fft // 2
        if pad_mode == "reflect" and half >= x.shape[-1]:
            raise ValueError(f"{op}: reflect padding of {half} needs a signal longer than that, got length "
                             f"{x.shape[-1]}")
        x = P.pad(x, [(0, 0), (half, half)], mode=_PAD[pad_mode])
    length = x.shape[-1]
    if n_fft > length:
        raise ValueError(f"{op}: expected 0 < n_fft <= {length} (the padded signal length), got "
                         f"n_fft={n_fft}")
    # (B, 1 + (length - n_fft) // hop, n_fft): the frames as a zero-copy view, windowed
    frames = P.multiply(x.unfold(-1, n_fft, hop), w)
    norm = "ortho" if normalized else "backward"
    spec = F.rfft(frames, axis=-1, norm=norm) if onesided else F.fft(frames, axis=-1, norm=norm)
    spec = P.swapaxes(spec, -1, -2)
    if not batched:
        spec = P.squeeze(spec, 0)
    return spec if return_complex else P.view_as_real(P.contiguous(spec))


def istft(input, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
          normalized: bool = False, onesided=None, length=None, return_complex: bool = False) -> Tensor:
    """The inverse of stft: a complex (B?, n_freq, n_frames) spectrogram to the signal (B?, L),
    overlap-adding the windowed inverse transforms and dividing by the overlap-added squared
    window; L = n_fft + hop_length (n_frames - 1), less n_fft // 2 at each end when center, or
    `length` (cropped or zero-padded). onesided defaults to n_freq != n_fft. A ValueError when the
    squared window's overlap-add falls below 1e-11 in the kept range (PyTorch's NOLA check)."""
    op = "istft"
    s = X2._tensor(input, op)
    if s.dtype.kind != "c":
        raise TypeError(f"{op}: expected a complex spectrogram, got {s.dtype.name} (use view_as_complex)")
    if s.ndim not in (2, 3):
        raise ValueError(f"{op}: expected a 2-d (n_freq, n_frames) or 3-d batch input, got shape {s.shape}")
    n_fft, hop, win = _sizes(op, n_fft, hop_length, win_length)
    batched = s.ndim == 3
    if not batched:
        s = P.expand_dims(s, 0)
    n_freq, n_frames = s.shape[-2], s.shape[-1]
    onesided = n_freq != n_fft if onesided is None else bool(onesided)
    if onesided:
        if n_freq != n_fft // 2 + 1:
            raise ValueError(f"{op}: a onesided spectrogram of n_fft={n_fft} has {n_fft // 2 + 1} "
                             f"frequencies, got {n_freq}")
        if return_complex:
            raise ValueError(f"{op}: return_complex=True needs a two-sided spectrogram (onesided=False)")
    elif n_freq != n_fft:
        raise ValueError(f"{op}: a two-sided spectrogram of n_fft={n_fft} has {n_fft} frequencies, "
                         f"got {n_freq}")
    if n_frames == 0:
        raise ValueError(f"{op}: the spectrogram has no frames")
    w = _window(op, window, win, n_fft, s)
    if w.dtype.kind == "c" and not return_complex:
        raise ValueError(f"{op}: a complex window needs return_complex=True")
    norm = "ortho" if normalized else "backward"
    spec = P.swapaxes(s, -1, -2)   # (B, frames, n_freq)
    inverse = F.irfft if onesided else F.ifft
    frames = inverse(spec, n=n_fft, axis=-1, norm=norm)
    if not return_complex and frames.dtype.kind == "c":
        frames = P.real(frames)
    frames = P.multiply(frames, w)
    total = n_fft + hop * (n_frames - 1)
    idx = P.reshape(_frame_index(n_frames, hop, n_fft, s.device), (-1,))
    y = P.index_add(zeros((s.shape[0], total), dtype=frames.dtype, device=s.device), 1, idx,
                    P.reshape(frames, (s.shape[0], -1)))
    w2 = P.real(P.multiply(w, P.conj(w))) if w.dtype.kind == "c" else P.multiply(w, w)
    env = P.index_add(zeros((total,), dtype=w2.dtype, device=s.device), 0, idx,
                      P.reshape(P.broadcast_to(w2, (n_frames, n_fft)), (-1,)))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + operator.index(length)
    else:
        end = total - n_fft // 2 if center else total
    stop = min(end, total)
    y = P.getitem(y, (slice(None), slice(start, stop)))
    env = P.getitem(env, slice(start, stop))
    if env.numel() and bool(P.any(P.less(P.abs(env.detach()), 1e-11))):
        raise ValueError(f"{op}: window overlap add min: the squared window's overlap-add vanishes in the "
                         "output range (choose a window and hop_length that satisfy NOLA)")
    y = P.divide(y, env)
    if end > total:
        y = P.pad(y, [(0, 0), (0, end - total)])
    return y if batched else P.squeeze(y, 0)
