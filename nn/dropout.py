"""Dropout: zero elements with probability p while training (scaling the rest by 1/(1-p)),
the identity in eval mode.

>>> import tensor as T
>>> d = Dropout(0.5)
>>> y = d(T.ones(1000))                       # training: zeros and 2.0s
>>> sorted(set(y.tolist())), d.eval()(T.ones(3)).tolist()
([0.0, 2.0], [1.0, 1.0, 1.0])
"""
from __future__ import annotations

import numbers

from tensor import Tensor

from . import _functional as F
from .module import Module


class Dropout(Module):
    """The mask comes from tensor.random's default generator (see nn.functional.dropout)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), inplace

    def forward(self, input: Tensor) -> Tensor:   # PyTorch's name: m(input=t) works
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


__all__ = ["Dropout"]
