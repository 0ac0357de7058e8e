"""Flatten parameters into one vector and back, as torch.nn.utils.convert_parameters.

parameters_to_vector concatenates (differentiably) the flattened parameters; vector_to_parameters
points each parameter at its slice of a vector (a view: no copy, as PyTorch's `param.data = ...`).

>>> import tensor as T
>>> from nn.module import Parameter
>>> ps = [Parameter(T.zeros((2, 2), dtype=T.float32)), Parameter(T.zeros(1, dtype=T.float32))]
>>> vector_to_parameters(T.arange(5, dtype=T.float32), ps)
>>> ps[0].tolist(), ps[1].tolist(), parameters_to_vector(ps).tolist()
([[0.0, 1.0], [2.0, 3.0]], [4.0], [0.0, 1.0, 2.0, 3.0, 4.0])
"""
from __future__ import annotations

from collections.abc import Iterable

import tensor as T
from autograd import no_grad
from tensor import Tensor


def _same_device(params: list[Tensor], what: str) -> None:
    devices = {str(p.device) for p in params}
    if len(devices) > 1:
        raise TypeError(f"{what}: found parameters on different devices ({sorted(devices)}); "
                        "all must be on one device")


def _as_list(parameters, what: str) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"{what}: expected Tensors, got a {type(p).__name__}")
    _same_device(params, what)
    return params


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter's entries in order (gradients flow back)."""
    params = _as_list(parameters, "parameters_to_vector")
    if not params:
        raise ValueError("parameters_to_vector: expected at least one parameter")
    return T.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Point each parameter at its consecutive slice of vec, reshaped to its shape (in place:
    references held elsewhere, by an optimizer for instance, stay valid)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-D, got shape {vec.shape}")
    params = _as_list(parameters, "vector_to_parameters")
    total = sum(p.numel() for p in params)
    if total != vec.shape[0]:
        raise ValueError(f"vector_to_parameters: vec has {vec.shape[0]} entries, the parameters "
                         f"have {total}")
    if params and str(vec.device) != str(params[0].device):
        raise TypeError(f"vector_to_parameters: vec is on {vec.device}, the parameters on "
                        f"{params[0].device}")
    pointer = 0
    with no_grad():
        for p in params:
            n = p.numel()
            new = vec.detach()[pointer:pointer + n].reshape(p.shape)
            p.data = new if new.dtype == p.dtype else new.astype(p.dtype)
            pointer += n


__all__ = ["parameters_to_vector", "vector_to_parameters"]
