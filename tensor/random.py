"""Random numbers from one counter-based Philox4x32-10 stream (cuda_src/philox.h).

A Generator is (seed, offset): every draw reads the blocks starting at `offset` and moves it
past them, so the same seed gives the same bits on every device, and saving/restoring the
state (as checkpointing does) replays the same numbers.

>>> import tensor as T
>>> g = T.random.Generator(42)
>>> a = g.rand(3); _ = g.manual_seed(42); b = g.rand(3)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import contextlib
import math
import operator
import os
import struct

from . import _hook, random_extra, random_more
from . import dtypes as dt
from ._tensor import Tensor
from .backend import backend_for
from .convert import asarray
from .creation import _shape
from .device import device as parse_device
from .elementwise import empty_tensor

_MASK64 = (1 << 64) - 1
_F64_MAX = 1.7976931348623157e308
_F32_MAX = 3.4028234663852886e38


def _below16(x: float, d: dt.DType) -> float:
    """The largest float16 / bfloat16 value that is < x."""
    if d is dt.float16:
        import numpy as np
        v = np.float16(x)
        return float(v if v < x else np.nextafter(v, np.float16(-np.inf)))
    u = struct.unpack("<I", struct.pack("<f", x))[0] >> 16  # bfloat16: the top half of a float32
    while True:
        v = struct.unpack("<f", struct.pack("<I", u << 16))[0]
        if v < x:
            return v
        u = 0x8001 if u == 0 else (u - 1 if u < 0x8000 else u + 1)  # one bfloat16 ulp down


def _finite_max(dtype) -> float:
    """The largest finite value of the dtype a uniform draw is computed and stored in."""
    d = dt.dtype(dtype) if dtype is not None else dt.get_default_dtype()
    d = dt.real_of(d) if d.kind == "c" else d
    if d is dt.float16:
        return 65504.0
    if d is dt.bfloat16:   # 0x7F7F: (2 - 2^-7) 2^127, just below float32's
        return 3.3895313892515355e38
    return _F64_MAX if d is dt.float64 else _F32_MAX


def _fold_seed(s: int) -> int:
    """A 64-bit Philox key from any int: seeds in [-2**63, 2**64) wrap (as PyTorch's); the bits
    above those enter through a 64-bit mix, so 2**64 + k and k are different streams."""
    if -2**63 <= s < 2**64:
        return s & _MASK64
    key, rest = s & _MASK64, s >> 64   # (rest is -1, -2, ... for a seed below -2**63)
    while rest not in (0, -1):
        w = ((rest & _MASK64) + 0x9E3779B97F4A7C15) & _MASK64
        w = ((w ^ (w >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        w = ((w ^ (w >> 27)) * 0x94D049BB133111EB) & _MASK64
        key = ((key ^ w ^ (w >> 31)) * 0x9E3779B97F4A7C15 + 1) & _MASK64
        rest >>= 64
    return key ^ (0x5851F42D4C957F2D if rest == -1 else 0)


def _size(size, op):
    """A shape from size=None, an int, a tuple, or varargs (rand(2, 3) / rand((2, 3)))."""
    if size is None:
        return ()
    if isinstance(size, tuple) and len(size) == 1 and isinstance(size[0], tuple | list):
        size = size[0]
    return _shape(size, op)


def _arraylike(*params) -> bool:
    return any(isinstance(p, Tensor | list | tuple) or getattr(p, "ndim", 0) > 0 for p in params)


class Generator:
    """A Philox4x32-10 stream: (seed, offset in 128-bit blocks)."""

    def __init__(self, seed: int | None = None):
        self.manual_seed(seed)

    def manual_seed(self, seed: int | None = None) -> Generator:
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        try:   # (a negative seed wraps, as PyTorch's)
            self.seed = _fold_seed(operator.index(seed))
        except TypeError:
            raise TypeError(f"manual_seed: the seed must be an int, got {type(seed).__name__} "
                            f"{seed!r}") from None
        self.offset = 0
        if _hook.capture is not None:   # a step that seeds: its replays draw what it drew
            _hook.capture.reseeded(self)
        return self

    def get_state(self) -> tuple[int, int]:
        return (self.seed, self.offset)

    def set_state(self, state) -> None:
        """Back to a (seed, offset) pair get_state returned; a bad one raises, changing nothing
        (an offset outside [0, 2**64) would make every later draw fail after moving on)."""
        try:
            seed, offset = state
            seed, offset = operator.index(seed), operator.index(offset)
        except (TypeError, ValueError):
            raise TypeError(f"set_state: expects a (seed, offset) pair of ints, as get_state returns, "
                            f"got {state!r:.80}") from None
        if not 0 <= offset < 2**64:
            raise ValueError(f"set_state: offset must be in [0, 2**64), got {offset}")
        self.seed, self.offset = _fold_seed(seed), offset
        if _hook.capture is not None:
            _hook.capture.restored(self)

    def _take(self, n: int, per_block: int) -> int:
        off = self.offset
        self.offset += -(-n // per_block)
        c = _hook.capture
        if c is not None:   # a replay draws from the offset the generator has then
            c.drew(self, off)
        return off

    def _fill(self, shape, dtype, kind, a, b, device=None):
        d = dt.dtype(dtype) if dtype is not None else dt.get_default_dtype()
        if d.kind == "c" and kind == "normal" and a == 0.0 and b == 1.0:
            # PyTorch's complex randn: unit variance in all, each part N(0, 1/2)
            return self._fill(shape, d, kind, 0.0, 0.5 ** 0.5, device)
        if d.kind == "c":   # the parts drawn as pairs of the real dtype (PyTorch's complex rand)
            from .views import view_as_complex
            return view_as_complex(self._fill(tuple(shape) + (2,), dt.real_of(d), kind, a, b, device))
        if d.kind != "f":
            raise TypeError(f"{kind}: dtype must be floating, got {d.name}")
        gen = dt.float64 if d is dt.float64 else dt.float32
        out = empty_tensor(shape, gen, parse_device(device))
        n = out.numel()
        if n:
            off = self._take(n, 4 if gen is dt.float32 else 2)
            backend_for(out.device).random_fill(f"rand_{kind}_{gen.sfx}", out, n, self.seed, off, a, b)
        if gen is d:
            return out
        res = out.astype(d)
        if kind == "uniform" and n and a < b:
            # rounding to a 16-bit float can reach `high` (rand: 1.0 once in ~2^12 draws);
            # those values become the largest 16-bit value below it, so [low, high) holds
            from .elementwise import binary, where
            hit = binary("greater_equal", res.astype(dt.float64), b)
            res = where(hit, max(a, _below16(b, d)), res)
        return res

    def rand(self, *size, dtype=None, device=None) -> Tensor:
        """Uniform in [0, 1)."""
        return self._fill(_size(size, "rand"), dtype, "uniform", 0.0, 1.0, device)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None, device=None) -> Tensor:
        if _arraylike(low, high):   # NumPy broadcasts array bounds: low + (high - low) U
            return random_extra._affine(self, "uniform", low, high, size, dtype, device)
        if not high >= low:
            raise ValueError(f"uniform: need low <= high, got low={low}, high={high}")
        low, high = float(low), float(high)
        top = _finite_max(dtype)
        if not (abs(low) <= top and abs(high) <= top and high - low <= top):
            # the kernel's fma(high - low, u, low) would be inf or NaN for every sample (NumPy:
            # OverflowError; PyTorch refuses too)
            raise OverflowError(f"uniform: low={low}, high={high}: the bounds and high - low must be "
                                f"finite in the sampled dtype (largest finite value {top:g})")
        return self._fill(_size(size, "uniform"), dtype, "uniform", low, high, device)

    def randn(self, *size, dtype=None, device=None) -> Tensor:
        """Standard normal (Box-Muller)."""
        return self._fill(_size(size, "randn"), dtype, "normal", 0.0, 1.0, device)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None, device=None) -> Tensor:
        if _arraylike(loc, scale):   # NumPy broadcasts array parameters: loc + scale Z
            return random_extra._affine(self, "normal", loc, scale, size, dtype, device)
        loc, scale = float(loc), float(scale)
        if not scale >= 0:
            raise ValueError(f"normal: scale must be non-negative, got {scale}")
        if not (math.isfinite(loc) and math.isfinite(scale)):   # every sample would be NaN or inf
            raise ValueError(f"normal: loc and scale must be finite, got loc={loc}, scale={scale}")
        return self._fill(_size(size, "normal"), dtype, "normal", loc, scale, device)

    def randint(self, low, high=None, size=None, dtype=None, device=None) -> Tensor:
        """Integers in [low, high) (NumPy's argument order; randint(n) is [0, n)). Ranges up to
        a 64-bit dtype's whole range: [0, 2**64) for uint64, [-2**63, 2**63) for int64 (other
        dtypes are drawn in int64 and cast) give uniform 64-bit words. A float dtype takes each
        draw rounded to it; bounds past its largest finite value raise ValueError.

        >>> import tensor as T
        >>> T.randint(0, 2**64, (2,), dtype=T.uint64).dtype
        tensor.uint64
        """
        if high is None:
            low, high = 0, low
        if _arraylike(low, high):
            return random_extra._integers_array(self, low, high, size, dtype, device)
        low, high = operator.index(low), operator.index(high)
        if high <= low:
            raise ValueError(f"randint: empty range [{low}, {high})")
        d = dt.dtype(dtype) if dtype is not None else dt.int64
        lo, hi = dt.iinfo_bounds(d if d.kind in "iub" else dt.int64)   # bool: [0, 1], as NumPy
        if low < lo or high - 1 > hi:
            what = f"{d.name}'s [{lo}, {hi}]" if d.kind in "iub" else f"int64's [{lo}, {hi}], " \
                f"which {d.name} is drawn in"
            raise ValueError(f"randint: range [{dt.show_int(low)}, {dt.show_int(high)}) does not fit "
                             f"{what}")
        if d.kind in "fc" and max(-low, high - 1) > _finite_max(d):
            # drawn in int64, the cast would store inf (PyTorch refuses these bounds too)
            raise ValueError(f"randint: range [{dt.show_int(low)}, {dt.show_int(high)}) does not fit "
                             f"{d.name}, whose largest finite value is {_finite_max(d):g}")
        # one kernel for both 64-bit dtypes: low + word % span in wrapping 64-bit arithmetic
        # (uint64 values are the bits of an int64 low), span 2**64 passed as 0 (the raw words)
        out = empty_tensor(_size(size, "randint"), dt.uint64 if d is dt.uint64 else dt.int64,
                           parse_device(device))
        n = out.numel()
        if n:
            low64 = (low + 2**63) % 2**64 - 2**63
            backend_for(out.device).random_fill("rand_int64", out, n, self.seed, self._take(n, 2),
                                                low64, (high - low) % 2**64)
        return out if out.dtype is d else out.astype(d)

    def permutation(self, x, device=None) -> Tensor:
        """A random permutation of range(x) (int) or of x along its first axis (a copy).
        device: where an int's permutation is made (a tensor's stays on its device)."""
        if isinstance(x, int) or hasattr(x, "__index__") and not isinstance(x, Tensor):
            n = operator.index(x)
            if n < 0:
                raise ValueError(f"permutation: n must be non-negative, got {n}")
            out = empty_tensor((n,), dt.int64, parse_device(device))
            if n:
                backend_for(out.device).randperm(out, n, self.seed, self._take(n, 2))
            return out
        x = asarray(x)
        if x.ndim == 0:
            raise ValueError("permutation: x must be an int or have at least one dimension")
        from .indexing import take
        out = take(x, self.permutation(x.shape[0], device=x.device), axis=0)
        return out if device is None else out.to(device)

    # NumPy Generator names
    def random(self, size=None, dtype=None, device=None) -> Tensor:
        return self.rand(_size(size, "random"), dtype=dtype, device=device)

    def standard_normal(self, size=None, dtype=None, device=None) -> Tensor:
        return self.randn(_size(size, "standard_normal"), dtype=dtype, device=device)

    def integers(self, low, high=None, size=None, dtype=None, endpoint=False, device=None) -> Tensor:
        """NumPy's integers: [low, high), or [low, high] with endpoint=True."""
        if endpoint:
            low, high = (0, low) if high is None else (low, high)
            high = high + 1 if _arraylike(high) else operator.index(high) + 1
            return self.randint(low, high, size, dtype, device)
        return self.randint(low, high, size, dtype, device)


default_generator = Generator(0)


def default_rng(seed: int | Generator | None = None) -> Generator:
    """A new Generator (seed None: from os.urandom); a Generator passes through, as NumPy's."""
    return seed if isinstance(seed, Generator) else Generator(seed)


def seed(s: int) -> None:
    """Reseed the default generator."""
    default_generator.manual_seed(s)


manual_seed = seed


def get_rng_state() -> tuple[int, int]:
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


def initial_seed() -> int:
    """The seed the default generator was last seeded with (torch.random.initial_seed)."""
    return default_generator.seed


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, device_type=None):
    """Within the block, draws from the default generator are undone afterwards: its state is
    restored on exit (torch.random.fork_rng). One counter-based generator serves every device
    here, so devices / device_type (which devices' generators PyTorch saves) change nothing."""
    if devices is not None and not isinstance(devices, list | tuple):
        devices = list(devices)   # (an iterable of devices, as PyTorch's: checked for that)
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def _gen(generator):
    return default_generator if generator is None else generator


def rand(*shape, size=None, dtype=None, generator=None, requires_grad: bool = False,
         device=None) -> Tensor:
    t = _gen(generator).rand(*_sized(shape, size, "rand"), dtype=dtype, device=device)
    return t.requires_grad_() if requires_grad else t


def randn(*shape, size=None, dtype=None, generator=None, requires_grad: bool = False,
          device=None) -> Tensor:
    t = _gen(generator).randn(*_sized(shape, size, "randn"), dtype=dtype, device=device)
    return t.requires_grad_() if requires_grad else t


def _sized(shape: tuple, size, op: str) -> tuple:
    """rand / randn's shape: separate ints, one tuple, or PyTorch's size= (not two of them)."""
    if size is None:
        return shape
    if shape:
        raise TypeError(f"{op}: give the shape once (positionally or size=)")
    return tuple(size) if isinstance(size, list | tuple) else (size,)


def randint(low, high=None, size=None, dtype=None, generator=None, device=None) -> Tensor:
    """NumPy's randint(low, high, size); a tuple in high's place is PyTorch's randint(high,
    size) (NumPy's high is a number or a list of them)."""
    if size is None and isinstance(high, tuple):
        low, high, size = 0, low, high
    return _gen(generator).randint(low, high, size, dtype, device)


def uniform(low=0.0, high=1.0, size=None, dtype=None, generator=None, device=None) -> Tensor:
    return _gen(generator).uniform(low, high, size, dtype, device)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, generator=None, device=None) -> Tensor:
    return _gen(generator).normal(loc, scale, size, dtype, device)


def permutation(x, generator=None, device=None) -> Tensor:
    if generator is not None and not hasattr(generator, "permutation"):
        raise TypeError(f"permutation: generator must be a tensor.random.Generator, got "
                        f"{type(generator).__name__}")
    return _gen(generator).permutation(x, device)


FUNCS = {"rand": rand, "randn": randn, "randint": randint, "uniform": uniform, "normal": normal,
         "permutation": permutation, "manual_seed": manual_seed, "seed": seed,
         "get_rng_state": get_rng_state, "set_rng_state": set_rng_state, "Generator": Generator,
         "default_rng": default_rng}


# the rest of NumPy's Generator API (gamma, beta, poisson, choice, ...): methods and tensor.random.<name>
globals().update(random_extra.attach(Generator, _gen))
# weibull, pareto, ..., the legacy random / random_sample / standard_normal, RandomState
globals().update(random_more.attach(Generator, _gen))
