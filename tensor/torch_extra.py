"""PyTorch's top-level functions not covered elsewhere, built from the public (recorded) ops,
so autograd records every step and they need no derivative rule of their own (public.py's
COMPOSITE).
"""
from __future__ import annotations

COMPOSITES: dict = {}   # name -> function, published by tensor/public.py as T.name
NOT_METHODS: set = set()   # names that are functions only (no Tensor method), as NumPy / PyTorch
METHODS: dict = {}   # name -> function(self, ...): Tensor methods only (PyTorch's), no T.name
