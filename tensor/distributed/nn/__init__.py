"""tensor.distributed.nn: the differentiable collectives (`functional`), as
torch.distributed.nn. See tensor.distributed.nn.functional for the conventions and the rule
that every rank must run the same backward."""
from __future__ import annotations

from . import functional

__all__ = ["functional"]
