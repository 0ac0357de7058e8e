"""Autocast's op table (beside the op table, tensor/optable.py): which ops an autocast region
(tensor/amp.py) runs in its low dtype and which in float32. An op not listed runs in the dtypes
it is given, promoting mixed inputs to the widest as everywhere (elementwise arithmetic, cat,
where, index_put...).

- LOW: the products, which tensor cores and bandwidth reward: matmul, linear, einsum,
  convolutions, attention. Their floating inputs (float32, and the other 16-bit type) are cast
  to the region's dtype; float64 is left alone.
- FP32: what needs float32's range or precision: softmax and its log, layer and group norm,
  losses, reductions (sum, mean, prod, cumulative, logsumexp, std, var, vector norms),
  exp/log/pow and their kin, and the factorizations and solvers of linalg (inv, solve, det,
  cholesky, qr, svd, eigh, eig, lu, pinv: PyTorch's CPU list). 16-bit floating
  inputs are cast to float32.
  (batch_norm is not listed: its statistics are mean and var, which are, and its output keeps
  the input's dtype, as PyTorch's; its running statistics are updated where they are.)

The names are the ops' recorded names (tensor._hook.differentiable: "linalg_vector_norm", not
"vector_norm"; "power", not its alias "pow") or those that nn's composite functions declare with
tensor.amp.autocast_op (tests/test_capture_fixes.py checks that every name is one). Composites
published unrecorded follow the ops they run: einsum's products are matmuls (LOW), vecdot is a
product and a sum (float32), cumulative_sum/prod are cumsum/cumprod, linalg.norm,
matrix_norm('fro') and x.norm() are linalg_vector_norm. PyTorch's lists, with one difference
the issue asked for: `mean` runs in float32 (PyTorch keeps the input's 16-bit dtype,
accumulating in float32 inside).
"""
from __future__ import annotations

LOW = "low"
FP32 = "fp32"

_LOW = ("matmul", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
        "conv_transpose2d", "conv_transpose3d", "scaled_dot_product_attention")

_FP32 = (
    # softmax, norms (statistics)
    "softmax", "log_softmax", "layer_norm", "group_norm",
    # losses
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
    "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "cosine_similarity", "softplus",
    # sampling (PyTorch's CPU list; its CUDA one promotes to the widest input)
    "grid_sample",
    # reductions
    "sum", "mean", "prod", "cumsum", "cumprod", "logsumexp", "std", "var", "linalg_vector_norm",
    # exp, log, pow and their kin
    "exp", "expm1", "log", "log1p", "log2", "log10", "power", "reciprocal", "rsqrt", "erfinv",
    "arccos", "arcsin", "cosh", "sinh", "tan",
    # linear algebra (PyTorch's CPU list; its CUDA kernels refuse 16-bit inputs)
    "linalg_cholesky", "linalg_det", "linalg_eig", "linalg_eigh", "linalg_lu_factor",
    "linalg_pinv", "linalg_qr", "linalg_solve", "linalg_solve_triangular", "linalg_svd",
)

TABLE = {**{n: LOW for n in _LOW}, **{n: FP32 for n in _FP32}}
