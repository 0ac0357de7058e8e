"""CPU random kernels (tensor/cpu/csrc/random.c: Philox4x32-10, the same bits as the CUDA
twin tensor/cuda/random.py for the same seed and offset)."""
from __future__ import annotations

from . import kernels as K

_HEAD = "intptr_t out, int64_t n, uint64_t seed, uint64_t offset"
_SIGS = f"""
void rand_bits32({_HEAD}, int nthreads);
void rand_uniform_f32({_HEAD}, float low, float high, int nthreads);
void rand_uniform_f64({_HEAD}, double low, double high, int nthreads);
void rand_normal_f32({_HEAD}, float mean, float std, int nthreads);
void rand_normal_f64({_HEAD}, double mean, double std, int nthreads);
void rand_int64({_HEAD}, int64_t low, uint64_t range, int nthreads);
void randperm({_HEAD}, int nthreads);
"""

K.register_family("random", lambda _: ('#include "random.c"\n', _SIGS))


def fill(name: str, out, n: int, seed: int, offset: int, *params) -> None:
    """The fill `name` (rand_uniform_f32, rand_normal_f64, rand_int64, rand_bits32) over the n
    contiguous elements of out, drawing from Philox counter `offset` on."""
    K.kernel("random", None, name)(out.data_ptr(), n, seed, offset, *params, K._num_threads)


def randperm(out, n: int, seed: int, offset: int) -> None:
    """out (int64, n contiguous elements) = a random permutation of range(n)."""
    if n > 0:
        K.kernel("random", None, "randperm")(out.data_ptr(), n, seed, offset, K._num_threads)
