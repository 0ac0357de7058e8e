"""nn: modules, layers, losses and optimizers on top of tensor and autograd.

>>> import tensor as T, nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
>>> model(T.ones((3, 4), dtype="float32")).shape
(3, 2)
"""
from . import amp, data, functional, init, optim, parallel, utils  # optim: nn.optim.SGD, Adam, ...
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .attention import MultiheadAttention
from .containers import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout
from .embedding import Embedding
from .linear import Flatten, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .serialization import load, save
