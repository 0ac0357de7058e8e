"""Matrix products: matmul (NumPy's broadcasting rules), dot, tensordot, outer.

Transposed and strided operands are read through their strides by the blocked kernel
(packing absorbs the layout), so `a.T @ b` makes no copy.

>>> import tensor as T
>>> a = T.arange(6.0).reshape(2, 3)
>>> (a @ a.T).tolist()
[[5.0, 14.0], [14.0, 50.0]]
"""
from __future__ import annotations

import operator

from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor, contiguous_strides, tracked
from .axes import norm_axis_tuple
from .backend import backend_for
from .views import broadcast_shapes, broadcast_to
from .views import complex_part as part


def matmul(a, b, out: Tensor | None = None) -> Tensor:
    """Matrix product with NumPy's rules: 1-D operands are promoted and the added axis removed,
    leading (batch) axes broadcast."""
    if type(a) is Tensor and type(b) is Tensor and out is None and len(a._shape) == 2 == len(b._shape) \
            and a._dtype is b._dtype and a._dtype.kind in "fiu" and a._shape[1] == b._shape[0]:
        dev = a._storage.device   # the common case (2-D, one dtype, one device), decided at once
        if dev is b._storage.device:
            res = ew.empty_tensor((a._shape[0], b._shape[1]), a._dtype, dev)
            (dev._be or backend_for(dev)).gemm(a, b, res)
            return res
    if type(a) is Tensor and type(b) is Tensor and out is None and a._dtype is b._dtype \
            and a._dtype.kind in "fiu" and 0 < len(a._shape) < 3 and 0 < len(b._shape) < 3 \
            and a._shape[-1] == b._shape[0] and a._storage.device is b._storage.device:
        return _vector_product(a, b)   # a vector on one side (or both): no batch, one dtype
    if getattr(a, "_tensor_defers", False) or getattr(b, "_tensor_defers", False):
        return sparse_matmul(a, b, out)
    a, b = ew.as_tensor(a), ew.as_tensor(b)
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
    if d.kind == "c":
        _complex_gemm(a3, b3, res)
    else:
        backend_for(res.device).gemm(a3, b3, res)
    shape = batch + ((M,) if a.ndim > 1 else ()) + ((N,) if b.ndim > 1 else ())
    res = res.reshape(shape)
    if out is not None:
        ew._prepare_out("matmul", out, shape, d)
        ew.copy_into(out, res)
        return out
    return res


def _vector_product(a: Tensor, b: Tensor) -> Tensor:
    """a @ b for 1-D or 2-D a and b (one of them 1-D), one dtype and device: the vector seen as
    a one-row / one-column matrix in place, one gemm, the added axis dropped (the general path's
    reshapes and broadcasts cost ~50 us a call, a 64-element dot 60 us)."""
    K = b._shape[0]
    a2 = a if len(a._shape) == 2 else Tensor._make(a._storage, (1, K), (K * a._strides[0], a._strides[0]),
                                                   a._offset, a._dtype)
    b2 = b if len(b._shape) == 2 else Tensor._make(b._storage, (K, 1), (b._strides[0], 1), b._offset,
                                                   b._dtype)
    M, N = a2._shape[0], b2._shape[1]
    dev = a._storage.device
    res = ew.empty_tensor((M, N), a._dtype, dev)
    (dev._be or backend_for(dev)).gemm(a2, b2, res)
    shape = ((M,) if len(a._shape) == 2 else ()) + ((N,) if len(b._shape) == 2 else ())
    return Tensor._make(res._storage, shape, contiguous_strides(shape), 0, res._dtype)


def gemm_add(a: Tensor, b: Tensor, d: Tensor | None, alpha=1.0, beta=1.0, op: str = "gemm_add") -> Tensor:
    """alpha * (a @ b) + beta * d in one GEMM whose result is rounded once (16-bit floats: d
    added on the float32 accumulator, as PyTorch's addmm; float32 / float64: the bits of the
    separate ops), unrecorded: a and b float matrices (M, K), (K, N) or batches of them
    (B, M, K), (B, K, N) of one dtype and device, d broadcastable to the product (its dtype or
    float32, not read when beta is 0; alpha 0 drops the product, its NaN too). The op layer
    checks shapes, dtypes and devices first."""
    shape = a._shape[:-1] + b._shape[-1:]
    c = ew.empty_tensor(shape, a._dtype, a._storage.device)
    dv = None if beta == 0 or d is None else broadcast_to(d, shape, op)
    backend_for(c.device).gemm(a, b, c, d=dv, alpha=alpha, beta=beta)
    return c


def check_addend(name, inp, prod_shape, dtype, device) -> None:
    """addmm & co: inp a tensor on the product's device, of its dtype, broadcasting to it."""
    if not isinstance(inp, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(inp).__name__}")
    if inp.device != device:
        raise ValueError(f"{name}: tensors are on different devices: {inp.device}, {device}")
    if broadcast_shapes(inp.shape, prod_shape, op=name) != prod_shape:
        raise ValueError(f"{name}: input of shape {inp.shape} does not broadcast to the "
                         f"product's shape {prod_shape}")
    if inp.dtype is not dtype:
        raise TypeError(f"{name}: input is {inp.dtype.name} but the product is {dtype.name}")


def add_product(name, inp, mats, product, beta, alpha, composite, shape, floats="f"):
    """beta * inp + alpha * (the op's product of mats, its checked operands) of shape `shape`.
    Float operands (of a kind in floats: "f" all, "h" the 16-bit ones) and an input of their
    dtype take product(d, alpha, beta) (None: gemm_add of mats): GEMMs that add d (inp
    broadcast) on their accumulator and round once (PyTorch's value for 16-bit floats; float32
    / float64: the bits of the composite); others, and alpha 0, composite() (recorded ops).
    When autograd follows an operand, the composite's graph carries the gradient and (16-bit)
    its value is replaced by the GEMM's: the value never depends on whether a gradient is
    wanted."""
    x = mats[0]
    if not (x.dtype.kind == "f" and (floats == "f" or x.dtype.itemsize == 2) and isinstance(inp, Tensor)
            and inp.dtype is x.dtype and alpha != 0 and not isinstance(alpha, complex)
            and not isinstance(beta, complex)):
        return composite()
    if any(tracked(t) for t in (inp, *mats)):
        r = composite()   # (float32 / float64: already the GEMM's bits)
        if x.dtype.itemsize > 2:
            return r
    else:
        check_addend(name, inp, shape, x.dtype, x.device)
        r = None
    (a, b), d = mats, inp
    if len(shape) == 1:   # (addmv: the product is a column)
        b = as_column(b)
        d = inp if beta == 0 else as_column(broadcast_to(inp, shape, name))
    c = product(d, alpha, beta) if product else gemm_add(a, b, d, alpha, beta, name)
    c = c if c.shape == shape else c._view(shape, contiguous_strides(shape))
    if r is None:
        return c
    ew.copy_into(r, c)   # (the graph's result, fresh: an unrecorded write of the GEMM's value)
    return r


def as_column(v: Tensor) -> Tensor:
    """A vector (n,) as an (n, 1) view."""
    return v._view(v._shape + (1,), v._strides + (0,))


def gemm_add_batches(x: Tensor, y: Tensor, d: Tensor, alpha, beta, op: str = "addbmm") -> Tensor:
    """beta * d + alpha * (the sum over i of x[i] @ y[i]) as PyTorch's addbmm computes it: one
    gemm_add a batch, in order, each rounded (beta * d + alpha * x[0] @ y[0], then + alpha *
    x[i] @ y[i]); no batch: beta * d."""
    n, m, k = x.shape
    if n == 0:
        return gemm_add(x._view((m, 0), (1, 1)), y._view((0, y.shape[2]), (1, 1)), d, alpha, beta, op)
    r = d
    for i in range(n):
        xi, yi = (Tensor._make(t._storage, t._shape[1:], t._strides[1:], t._offset + i * t._strides[0],
                               t._dtype) for t in (x, y))
        r = gemm_add(xi, yi, r, alpha, beta if i == 0 else 1, op)
    return r


def sparse_matmul(a, b, out):
    """matmul with a tensor.sparse matrix on one side (or both: a sparse product): A @ B (SpMM),
    which tensor.sparse's ops record (the public T.matmul sends such operands here before
    recording a dense product).
    An out= is written outside the graph, so a dense operand that needs a gradient or carries a
    tangent is refused with one, as PyTorch's out= arguments are."""
    dense = b if getattr(a, "_tensor_defers", False) else a
    if getattr(dense, "_tensor_defers", False):   # both sparse: a sparse product (A @ B)
        if out is not None:
            raise TypeError("matmul: out= takes a dense product; the product of two sparse "
                            "matrices is sparse (write C = A @ B)")
        return a @ b
    if out is not None and isinstance(dense, Tensor) and (dense.requires_grad or getattr(
            getattr(dense, "_ag", None), "tangent", None) is not None):
        raise TypeError("matmul: out= does not support automatic differentiation (the dense "
                        "operand needs a gradient); write out = A @ B")
    if not isinstance(dense, Tensor):
        raise TypeError(f"matmul: a sparse matrix multiplies a dense Tensor, got "
                        f"{type(dense).__name__}")
    res = a @ b
    if out is not None:
        ew._prepare_out("matmul", out, res.shape, res.dtype)
        ew.copy_into(out, res)
        return out
    return res


def _complex_gemm(a: Tensor, b: Tensor, res: Tensor) -> None:
    """res = a @ b for complex operands: four real products of the parts (strided views, which
    the gemm kernels read in place), (ar br - ai bi) + i (ar bi + ai br)."""
    rd = dt.real_of(res.dtype)
    ar, ai, br, bi = (part(x, k) for x in (a, b) for k in (0, 1))

    def mm(x, y):
        r = ew.empty_tensor(res.shape, rd, res.device)
        backend_for(res.device).gemm(x, y, r)
        return r
    ew.binary("subtract", mm(ar, br), mm(ai, bi), out=part(res, 0))
    ew.binary("add", mm(ar, bi), mm(ai, br), out=part(res, 1))


def tensordot(a, b, axes=2) -> Tensor:
    """Sum products over the given axes (NumPy's tensordot)."""
    a, b = ew.as_tensor(a), ew.as_tensor(b)
    if not isinstance(axes, list | tuple):
        try:   # one count: an int, a NumPy integer, a 0-d integer tensor (as PyTorch's dims)
            axes = operator.index(axes)
        except TypeError:   # a pair of axis lists as an array (NumPy's, PyTorch's)
            axes = axes.tolist() if getattr(axes, "ndim", 0) else axes
            if not isinstance(axes, list | tuple):
                raise TypeError(f"tensordot: axes must be an integer or a pair of axis lists, "
                                f"got {type(axes).__name__} {axes!r}") from None
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
    a, b = ew.as_tensor(a), ew.as_tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        return ew.binary("multiply", a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [0 if b.ndim == 1 else b.ndim - 2]))


def outer(a, b) -> Tensor:
    """Outer product of the flattened inputs."""
    a, b = ew.as_tensor(a), ew.as_tensor(b)
    return ew.binary("multiply", a.reshape(-1, 1), b.reshape(1, -1))


def inner(a, b) -> Tensor:
    """Sum product over the last axes (NumPy's inner)."""
    a, b = ew.as_tensor(a), ew.as_tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        return ew.binary("multiply", a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: shapes {a.shape} and {b.shape}: the last dimensions differ "
                         f"({a.shape[-1]} != {b.shape[-1]})")
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


FUNCS = {"matmul": matmul, "dot": dot, "tensordot": tensordot, "outer": outer, "inner": inner}
