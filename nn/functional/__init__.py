"""torch.nn.functional for tensor: activations, linear, normalization, dropout, losses,
distances, convolution, pooling (unpooling included), embedding and attention, as functions.

Each family lives beside its layers (nn/_functional.py, nn/_functional_extra.py and
nn/_functional_more.py for the activations and losses, nn/conv.py, nn/pooling.py, ...); this
package only gathers them under torch's names.

>>> import tensor as T
>>> from nn import functional as F
>>> F.relu(T.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""
from tensor import Tensor

from .._functional import (
                           binary_cross_entropy,
                           binary_cross_entropy_with_logits,
                           check_reduction,
                           cross_entropy,
                           dropout,
                           gelu,
                           l1_loss,
                           layer_norm,
                           leaky_relu,
                           linear,
                           log_softmax,
                           mse_loss,
                           nll_loss,
                           one_hot,
                           relu,
                           sigmoid,
                           silu,
                           softmax,
                           tanh,
)
from .._functional_extra import (
                           celu,
                           cosine_embedding_loss,
                           cosine_similarity,
                           elu,
                           gaussian_nll_loss,
                           glu,
                           hardsigmoid,
                           hardswish,
                           hardtanh,
                           hinge_embedding_loss,
                           huber_loss,
                           kl_div,
                           logsigmoid,
                           margin_ranking_loss,
                           mish,
                           pairwise_distance,
                           poisson_nll_loss,
                           prelu,
                           relu6,
                           selu,
                           smooth_l1_loss,
                           soft_margin_loss,
                           softmin,
                           softplus,
                           softsign,
                           tanhshrink,
                           triplet_margin_loss,
)
from .._functional_layers import (
                           adaptive_max_pool1d,
                           adaptive_max_pool2d,
                           alpha_dropout,
                           bilinear,
                           dropout1d,
                           dropout2d,
                           instance_norm,
                           interpolate,
                           pad,
                           pixel_shuffle,
                           pixel_unshuffle,
                           rms_norm,
)
from .._functional_more import (
                           cdist,
                           dropout3d,
                           feature_alpha_dropout,
                           gumbel_softmax,
                           hardshrink,
                           multi_margin_loss,
                           multilabel_margin_loss,
                           multilabel_soft_margin_loss,
                           normalize,
                           pdist,
                           rrelu,
                           softshrink,
                           threshold,
                           triplet_margin_with_distance_loss,
)
from .._functional_more_pool import (
                           adaptive_max_pool3d,
                           embedding_bag,
                           local_response_norm,
                           lp_pool1d,
                           lp_pool2d,
                           lp_pool3d,
                           max_unpool1d,
                           max_unpool2d,
                           max_unpool3d,
)
from ..attention import multi_head_attention_forward
from ..conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, fold, unfold
from ..ctc import ctc_loss
from ..embedding import embedding
from ..grid import affine_grid, grid_sample
from ..normalization import batch_norm, group_norm
from ..pooling import (
                           adaptive_avg_pool1d,
                           adaptive_avg_pool2d,
                           adaptive_avg_pool3d,
                           avg_pool1d,
                           avg_pool2d,
                           avg_pool3d,
                           max_pool1d,
                           max_pool2d,
                           max_pool3d,
)
from ..sdpa import scaled_dot_product_attention

__all__ = ["linear", "relu", "leaky_relu", "gelu", "silu", "tanh", "sigmoid", "softmax",
           "log_softmax", "layer_norm", "dropout", "one_hot", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "check_reduction", "multi_head_attention_forward", "scaled_dot_product_attention",
           "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "fold", "unfold", "embedding", "batch_norm",
           "group_norm", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool3d",
           "max_pool1d", "max_pool2d",
           "softplus", "elu", "selu", "celu", "relu6", "hardtanh", "hardsigmoid", "hardswish",
           "logsigmoid", "mish", "softsign", "tanhshrink", "glu", "prelu", "softmin",
           "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
           "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "pairwise_distance",
           "cosine_similarity", "pad", "interpolate", "rms_norm", "instance_norm",
           "pixel_shuffle", "pixel_unshuffle", "dropout1d", "dropout2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "bilinear", "alpha_dropout",
           "threshold", "hardshrink", "softshrink", "rrelu", "dropout3d", "feature_alpha_dropout",
           "normalize", "pdist", "gumbel_softmax", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "triplet_margin_with_distance_loss", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "local_response_norm", "adaptive_max_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "embedding_bag", "grid_sample",
           "affine_grid", "ctc_loss", "cdist"]


# ---- PyTorch's in-place spellings: the activation written into input, which is returned
# (refused, as PyTorch's, on a leaf that requires grad).
def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


_threshold = threshold   # (threshold_'s parameter of that name hides the function)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


__all__ += ["relu_", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_", "threshold_", "rrelu_"]


# ---- PyTorch's other spellings: the *_with_indices pools, the deprecated upsample family
def _with_indices(pool):
    def fn(input: Tensor, *args, **kwargs):
        kwargs["return_indices"] = True
        return pool(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = pool.__name__ + "_with_indices"
    fn.__doc__ = f"{pool.__name__}(..., return_indices=True): (output, indices)."
    return fn


max_pool1d_with_indices = _with_indices(max_pool1d)
max_pool2d_with_indices = _with_indices(max_pool2d)
max_pool3d_with_indices = _with_indices(max_pool3d)
adaptive_max_pool1d_with_indices = _with_indices(adaptive_max_pool1d)
adaptive_max_pool2d_with_indices = _with_indices(adaptive_max_pool2d)
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners=None) -> Tensor:
    """PyTorch's deprecated name of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """interpolate(mode='nearest') (PyTorch's deprecated name)."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """interpolate(mode='bilinear', align_corners=True) (PyTorch's deprecated name)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


from ..linear import channel_shuffle

native_channel_shuffle = channel_shuffle

__all__ += ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
            "adaptive_max_pool3d_with_indices", "upsample", "upsample_nearest", "upsample_bilinear",
            "channel_shuffle", "native_channel_shuffle"]

from ..fractional_pool import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)

__all__ += ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
            "fractional_max_pool3d_with_indices"]
