"""CPU matrix products (tensor/cpu/csrc/gemm.c: blocked, packed, OpenMP). CUDA twin:
tensor/cuda/gemm.py."""
from __future__ import annotations

from .. import dtypes as dt
from ..views import GEMM_D_SCALE, gemm_add_mode, gemm_batches
from . import kernels as K

_ARGS = ("int64_t batch, int64_t M, int64_t N, int64_t K, intptr_t A, int64_t sAb, int64_t sAm, "
         "int64_t sAk, intptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, intptr_t C, int64_t sCb, "
         "int64_t sCm, int64_t sCn, int nthreads")
_GEMM_SIG = "void gemm_{0}(" + _ARGS + ");\nvoid gemm_epi_{0}(" + _ARGS + ", intptr_t epi, intptr_t ctx);"
_ADD_SIG = ("void gemm_add_{0}(" + _ARGS + ", intptr_t D, int64_t sDb, int64_t sDm, int64_t sDn, int dk, "
            "double alpha, double beta, intptr_t epi, intptr_t ctx);")
_FLOATS = ("f32", "f64", "f16", "bf16")

# gemm.c's build parts: the dtypes each exports and its GM_TYPES mask (bits GM_T_*)
_PARTS = {"f32": (("f32",), 0x1), "f64": (("f64",), 0x2), "half": (("f16", "bf16"), 0xC),
          "int": (("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "b8"), 0x3F0)}
_PART_OF = {s: part for part, (sfxs, _) in _PARTS.items() for s in sfxs}


def _part(name: str) -> str:
    """The module of gemm_<sfx>, gemm_epi_<sfx>, gemm_add_<sfx> and gemm_bf16_amx (the bfloat16
    one's)."""
    return _PART_OF[name.split("_")[-1] if name != "gemm_bf16_amx" else "bf16"]


def _source(_d, part: str | None = None) -> tuple[str, str]:
    sfxs, mask = _PARTS[part] if part else ([d.sfx for d in dt.REAL], 0x3FF)
    return (f"#define GM_TYPES {mask:#x}\n#include \"gemm.c\"\n",
            "\n".join(_GEMM_SIG.format(s) + ("\n" + _ADD_SIG.format(s) if s in _FLOATS else "")
                      for s in sfxs) + "\nint gemm_bf16_amx(void);")


K.register_family("gemm", _source, part=_part)


def bf16_amx() -> bool:
    """Whether bfloat16 matrix products run on AMX tiles here (the compiler targets AMX-BF16,
    the kernel lets the process use it, STRIDEX_AMX is not 0), else widened to float32."""
    return bool(K.kernel("gemm", None, "gemm_bf16_amx")())


_PLAIN: dict = {}   # dtype -> its gemm_<sfx> (a small product's Python time is most of its time)


def gemm(a, b, c, *, d=None, alpha=1.0, beta=1.0) -> None:
    """c[...] = a[...] @ b[...] for a: (*batch, M, K), b: (*batch, K, N), c: (*batch, M, N),
    already broadcast (batch strides may be 0), all of c's dtype; strided operands are read
    through their strides (packing absorbs the layout). With d or alpha != 1 (keywords):
    c = alpha * (a @ b) + beta * d rounded once (gemm_add)."""
    if d is not None or alpha != 1:
        return gemm_add(a, b, c, d, alpha, beta)
    fn = _PLAIN.get(c._dtype)
    if fn is None:
        fn = _PLAIN[c._dtype] = K.kernel("gemm", None, f"gemm_{c._dtype.sfx}")
    sc = c._strides
    if len(sc) == 2:   # one launch, no batch to walk
        sa, sb = a._strides, b._strides
        fn(1, c._shape[0], c._shape[1], a._shape[1], a.data_ptr(), 0, sa[0], sa[1], b.data_ptr(), 0,
           sb[0], sb[1], c.data_ptr(), 0, sc[0], sc[1], K._num_threads)
        return
    nt = K._num_threads
    for args in batch_args(a, b, c):
        fn(*args, nt)


def batch_args(a, b, c) -> list:
    """The gemm_<dtype> arguments but the thread count of each launch of c = a @ b (the batch
    dims walked by views.gemm_batches): (count, M, N, K, A, its batch, row and k strides, B,
    its batch, k and column strides, C, its batch, row and column strides)."""
    M, K_ = a.shape[-2:]
    N = b.shape[-1]
    sa, sb, sc = a._strides[-2:], b._strides[-2:], c._strides[-2:]
    return [(cnt, M, N, K_, pa, sba, *sa, pb, sbb, *sb, pc, sbc, *sc)
            for cnt, pa, sba, pb, sbb, pc, sbc in gemm_batches(a, b, c)]


def gemm_add(a, b, c, d, alpha=1.0, beta=1.0) -> None:
    """c = alpha * (a @ b) + beta * d with one rounding of c (16-bit floats: in float32 on the
    accumulator, as PyTorch's addmm; float32 / float64: the bits of the separate ops). a, b, c
    as gemm's, float dtypes, 2-D or 3-D (one batch dim); d: c's shape (broadcast strides
    allowed), c's dtype or float32, not overlapping c, or None (beta 0: not read; alpha 0 drops
    the product, its NaN included)."""
    terms = add_terms(c, d, alpha, beta)
    fn = K.kernel("gemm", None, f"gemm_add_{c.dtype.sfx}")
    for args in batch_args(a, b, c):
        fn(*args, K._num_threads, *terms, 0, 0)


def add_terms(c, d, alpha, beta) -> tuple:
    """gemm_add_<sfx>'s arguments after the thread count and before the epilogue's: (D, its
    batch, row and column strides, dk, alpha, beta)."""
    dk = gemm_add_mode(c, d, beta)
    dp, ds = (d.data_ptr(), d._strides) if dk != GEMM_D_SCALE else (0, (0,) * len(c._shape))
    return (dp, ds[0] if len(ds) == 3 else 0, ds[-2], ds[-1], dk, float(alpha), float(beta))
