"""nn: modules, layers, losses and optimizers on top of tensor and autograd.

>>> import tensor as T, nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
>>> model(T.ones((3, 4), dtype="float32")).shape
(3, 2)
"""
from . import amp, data, functional, init, optim, parallel, utils  # optim: nn.optim.SGD, Adam, ...
from ._module_extra import Buffer
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
)
from .adaptive_softmax import AdaptiveLogSoftmaxWithLoss
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .ctc import CTCLoss
from .data_parallel import DataParallel
from .dropout import Dropout
from .embedding import Embedding
from .fractional_pool import FractionalMaxPool2d, FractionalMaxPool3d
from .layers_extra import (
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AlphaDropout,
    Bilinear,
    Dropout1d,
    Dropout2d,
    Fold,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    PixelShuffle,
    PixelUnshuffle,
    RMSNorm,
    Unflatten,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .layers_more import (
    AdaptiveMaxPool3d,
    CosineSimilarity,
    Dropout3d,
    EmbeddingBag,
    FeatureAlphaDropout,
    Hardshrink,
    LocalResponseNorm,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PairwiseDistance,
    RReLU,
    Softmax2d,
    Softshrink,
    Threshold,
    TripletMarginWithDistanceLoss,
)
from .lazy import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
    LazyModuleMixin,
    UninitializedBuffer,
    UninitializedParameter,
)
from .linear import ChannelShuffle, Flatten, Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .module import Module, Parameter
from .multihead_attention import MultiheadAttention
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .serialization import load, save
from .sync_batchnorm import SyncBatchNorm
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
