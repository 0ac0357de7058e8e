"""Matrix products: matmul (NumPy's broadcasting rules), dot, tensordot, outer.

Transposed and strided operands are read through their strides by the blocked kernel
(packing absorbs the layout), so `a.T @ b` makes no copy.

>>> import tensor as T
>>> a = T.arange(6.0).reshape(2, 3)
>>> (a @ a.T).tolist()
[[5.0, 14.0], [14.0, 50.0]]
"""
from __future__ import annotations

from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor
from .cpu import kernels as K
from .views import broadcast_shapes, broadcast_to, norm_axis_tuple

_GEMM_SIG = ("void gemm_{}(int64_t batch, int64_t M, int64_t N, int64_t K, intptr_t A, int64_t sAb, "
             "int64_t sAm, int64_t sAk, intptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, "
             "intptr_t C, int64_t sCb, int64_t sCm, int64_t sCn, int nthreads);")


def _gemm_source(_):
    return '#include "gemm.c"\n', "\n".join(_GEMM_SIG.format(d.sfx) for d in dt.ALL)


K.register_family("gemm", _gemm_source)


def _operand(x, op):
    x = ew.as_operand(x)
    if not isinstance(x, Tensor):
        from .creation import asarray
        x = asarray(x)
    return x


def matmul(a, b, out: Tensor | None = None) -> Tensor:
    """Matrix product with NumPy's rules: 1-D operands are promoted and the added axis removed,
    leading (batch) axes broadcast."""
    a, b = _operand(a, "matmul"), _operand(b, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes "
                         f"{a.shape} and {b.shape} (use * for scalars)")
    if a.device != b.device:
        raise ValueError(f"matmul: tensors are on different devices: {a.device} and {b.device}")
    d = dt.result_type(a, b)
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    M, Ka = a2.shape[-2:]
    Kb, N = b2.shape[-2:]
    if Ka != Kb:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape}: inner dimensions {Ka} != {Kb}")
    try:
        batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape}: batch dimensions "
                         f"{a2.shape[:-2]} and {b2.shape[:-2]} do not broadcast") from None
    a3 = broadcast_to(a2.astype(d, copy=False), batch + (M, Ka), "matmul")
    b3 = broadcast_to(b2.astype(d, copy=False), batch + (Kb, N), "matmul")
    res = ew.empty_tensor(batch + (M, N), d, a.device)
    _gemm_batched(a3, b3, res)
    shape = batch + ((M,) if a.ndim > 1 else ()) + ((N,) if b.ndim > 1 else ())
    res = res.reshape(shape)
    if out is not None:
        ew._prepare_out("matmul", out, shape, d)
        ew.copy_into(out, res)
        return out
    return res


def gemm_batches(a: Tensor, b: Tensor, c: Tensor):
    """The launches of a batched gemm c = a @ b (a: (*batch, M, K), b: (*batch, K, N),
    c: (*batch, M, N), broadcast batch strides allowed): the batch dims are coalesced jointly
    and all but the innermost one looped over here. Yields (count, pa, sa, pb, sb, pc, sc):
    base addresses and batch strides (in elements) of one launch per operand."""
    isz = c.dtype.itemsize
    dims = []
    for i in range(c.ndim - 2):
        n = c.shape[i]
        if n == 1:
            continue
        sa, sb, sc = a.strides[i], b.strides[i], c.strides[i]
        if dims and dims[-1][1] == sa * n and dims[-1][2] == sb * n and dims[-1][3] == sc * n:
            dims[-1] = [dims[-1][0] * n, sa, sb, sc]
        else:
            dims.append([n, sa, sb, sc])
    if not dims:
        dims = [[1, 0, 0, 0]]
    inner, outer = dims[-1], dims[:-1]
    pa0, pb0, pc0 = a.data_ptr(), b.data_ptr(), c.data_ptr()
    idx = [0] * len(outer)
    while True:
        oa = sum(i * s[1] for i, s in zip(idx, outer)) * isz
        ob = sum(i * s[2] for i, s in zip(idx, outer)) * isz
        oc = sum(i * s[3] for i, s in zip(idx, outer)) * isz
        yield inner[0], pa0 + oa, inner[1], pb0 + ob, inner[2], pc0 + oc, inner[3]
        k = len(outer) - 1
        while k >= 0:
            idx[k] += 1
            if idx[k] < outer[k][0]:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            return


def _gemm_batched(a: Tensor, b: Tensor, c: Tensor) -> None:
    if c.device.type == "cuda":
        from .cuda import gemm as _cg
        if c.dtype.kind == "f" and c.dtype.itemsize == 2 and not _cg.tensor_cores(c.device):
            # no 16-bit tensor-core kernel before sm_80: fp32 products and sums, one rounding
            c32 = ew.empty_tensor(c.shape, dt.float32, c.device)
            _cg.gemm_batched(ew.astype(a, dt.float32), ew.astype(b, dt.float32), c32)
            ew.copy_into(c, c32)
            return
        _cg.gemm_batched(a, b, c)
        return
    fn = K.kernel("gemm", None, f"gemm_{c.dtype.sfx}")
    M, K_ = a.shape[-2:]
    N = b.shape[-1]
    nt = K._num_threads
    for cnt, pa, sa, pb, sb, pc, sc in gemm_batches(a, b, c):
        fn(cnt, M, N, K_, pa, sa, a.strides[-2], a.strides[-1], pb, sb, b.strides[-2],
           b.strides[-1], pc, sc, c.strides[-2], c.strides[-1], nt)


def tensordot(a, b, axes=2) -> Tensor:
    """Sum products over the given axes (NumPy's tensordot)."""
    a, b = _operand(a, "tensordot"), _operand(b, "tensordot")
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={axes} is invalid for shapes {a.shape} and {b.shape}")
        ax_a, ax_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = norm_axis_tuple(ax_a, a.ndim, "tensordot", "axes of a")
        ax_b = norm_axis_tuple(ax_b, b.ndim, "tensordot", "axes of b")
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: axes lists differ in length: {ax_a} and {ax_b}")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: shape mismatch for sum: axis {i} of {a.shape} and axis "
                             f"{j} of {b.shape}")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    ksize = 1
    for i in ax_a:
        ksize *= a.shape[i]
    ma = nb = 1  # explicit sizes: reshape(-1, 0) is ambiguous when ksize is 0
    for i in free_a:
        ma *= a.shape[i]
    for j in free_b:
        nb *= b.shape[j]
    am = a.permute(*free_a, *ax_a).reshape(ma, ksize)
    bm = b.permute(*ax_b, *free_b).reshape(ksize, nb)
    return matmul(am, bm).reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


def dot(a, b) -> Tensor:
    """NumPy's dot: matmul for 1-D/2-D, sum over a's last and b's second-to-last axis beyond."""
    a, b = _operand(a, "dot"), _operand(b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        return ew.binary("multiply", a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [0 if b.ndim == 1 else b.ndim - 2]))


def outer(a, b) -> Tensor:
    """Outer product of the flattened inputs."""
    a, b = _operand(a, "outer"), _operand(b, "outer")
    return ew.binary("multiply", a.reshape(-1, 1), b.reshape(1, -1))


def inner(a, b) -> Tensor:
    """Sum product over the last axes (NumPy's inner)."""
    a, b = _operand(a, "inner"), _operand(b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return ew.binary("multiply", a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


FUNCS = {"matmul": matmul, "dot": dot, "tensordot": tensordot, "outer": outer, "inner": inner}
