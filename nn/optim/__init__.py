"""Optimizers (SGD, Adam, AdamW, RMSprop, SparseAdam, Adagrad, Adadelta, Adamax, NAdam, RAdam,
Rprop, ASGD, Adafactor, LBFGS, Muon)
and learning-rate schedulers (LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ExponentialLR,
ConstantLR, LinearLR, PolynomialLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR,
OneCycleLR, ReduceLROnPlateau, SequentialLR, ChainedScheduler), with PyTorch 2.x's API,
defaults, update formulas and state_dict layout.

A float32/float64 parameter whose gradient and state are contiguous, of its shape and of its
dtype is updated by one fused kernel (tensor/cpu/csrc/optim.h on the CPU, cuda_src/optim.cuh on
CUDA: reads p, grad and the state buffers once, writes them in place; no host round trip, no
temporaries). Anything else (other dtypes, non-contiguous parameters, state left in another
dtype by a parameter's dtype change) takes the same update written in tensor ops, as do
Adagrad, Adadelta, Adamax, NAdam and RAdam (nn/optim/algorithms_extra.py) and Rprop, ASGD and
Adafactor (nn/optim/algorithms_more.py) always. A float16 / bfloat16 parameter (without
master_weights) is updated on float32 copies of it, its gradient and its state, each rounded
back once a step (PyTorch's 16-bit ops compute in float32 with float32 scalars; in 16-bit
arithmetic a momentum of 0.9 or a beta2 of 0.999 would be rounded first). PyTorch's
implementation switches (foreach, fused, capturable) are accepted where PyTorch takes them, in
its positional order too, and change nothing; differentiable=True is refused.

>>> import tensor as T
>>> from nn.optim import SGD
>>> w = T.tensor([1.0, -2.0], dtype=T.float32, requires_grad=True)
>>> opt = SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(3):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> [round(v, 4) for v in w.tolist()]
[0.062, -0.124]
"""
from .algorithms import SGD, Adam, AdamW, RMSprop, SparseAdam
from .algorithms_extra import Adadelta, Adagrad, Adamax, NAdam, RAdam
from .algorithms_more import ASGD, Adafactor, Rprop
from .lbfgs import LBFGS
from .lr_scheduler import CosineAnnealingLR, LambdaLR, LRScheduler, StepLR
from .muon import Muon
from .optimizer import Optimizer
from .schedulers_extra import (
    ChainedScheduler,
    ConstantLR,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    ExponentialLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    OneCycleLR,
    PolynomialLR,
    ReduceLROnPlateau,
    SequentialLR,
)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "SparseAdam",
           "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD", "Adafactor",
           "LBFGS", "Muon",
           "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR",
           "ExponentialLR", "ConstantLR", "LinearLR", "PolynomialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "ReduceLROnPlateau",
           "SequentialLR", "ChainedScheduler"]

# `from torch.optim.lr_scheduler import OneCycleLR` & co: every scheduler under
# nn.optim.lr_scheduler too (the later ones live in schedulers_extra.py), with PyTorch's old
# name of the base class.
from . import lr_scheduler as _lr_scheduler  # noqa: E402
from . import swa_utils  # noqa: E402  (nn.optim.swa_utils, as torch.optim.swa_utils)

for _name in __all__[__all__.index("LRScheduler"):]:
    setattr(_lr_scheduler, _name, globals()[_name])
_lr_scheduler._LRScheduler = LRScheduler
del _name
