"""DataParallel, as torch.nn.DataParallel's interface: a wrapper whose forward runs the wrapped
module (kept as .module, so state_dict keys carry the "module." prefix, as PyTorch's).

It does not split the batch over several devices: the whole batch runs where the module is
(one device computes what the replicas would, batch-norm statistics then over the whole batch);
for multi-device training use nn.parallel.DistributedDataParallel. Giving more than one
device id warns once.

>>> import nn, tensor as T
>>> dp = nn.DataParallel(nn.Linear(2, 1))
>>> dp(T.ones((3, 2))).shape, list(dp.state_dict())
((3, 1), ['module.weight', 'module.bias'])
"""
from __future__ import annotations

import warnings

from .module import Module


class DataParallel(Module):
    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected a Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device, self.dim = output_device, dim
        if len(self.device_ids) > 1:
            warnings.warn("DataParallel runs the whole batch on one device (the module's), not "
                          f"split over {self.device_ids}; use nn.parallel."
                          "DistributedDataParallel for multi-device training", UserWarning,
                          stacklevel=2)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
