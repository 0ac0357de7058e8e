"""Less common Module methods PyTorch users call: to_empty, type, compile, share_memory, _apply
(the hook libraries built on PyTorch use to map every parameter and buffer),
register_backward_hook (PyTorch's deprecated spelling) and call_super_init; Module inherits them.
And nn.Buffer, PyTorch 2.5's way to declare a buffer by assignment (`self.mean = nn.Buffer(t,
persistent=False)`).

>>> import nn, tensor as T
>>> m = nn.BatchNorm1d(2).type(T.float64)
>>> [b.dtype.name for b in m.buffers()]
['float64', 'float64', 'float64']
"""
from __future__ import annotations

import warnings
from collections.abc import Callable

import tensor as T
from tensor import Tensor

from ._marks import TensorMarks

_BUFFERS = TensorMarks()   # a tensor made by Buffer(...): its persistent flag


def buffer_persistence(obj) -> bool | None:
    """The `persistent` flag of a tensor made by Buffer(...), None for anything else."""
    return _BUFFERS.value(obj) if type(obj) is Tensor else None


class _BufferMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return buffer_persistence(obj) is not None


class Buffer(metaclass=_BufferMeta):
    """Buffer(data, persistent=True): the tensor data itself, marked so that assigning it to a
    Module attribute registers it as a buffer (persistent ones are in state_dict), as
    torch.nn.Buffer.

    >>> import nn, tensor as T
    >>> m = nn.Module()
    >>> m.scale = nn.Buffer(T.ones(2), persistent=False)
    >>> [n for n, _ in m.named_buffers()], list(m.state_dict())
    (['scale'], [])
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        t = T.empty(0, dtype=T.float32) if data is None else data
        if not isinstance(t, Tensor):
            raise TypeError(f"Buffer: data must be a Tensor, got {type(t).__name__}")
        return _BUFFERS.mark(t, bool(persistent))


class ModuleExtras:
    call_super_init = False   # PyTorch's class flag (its Module.__init__ taking extra arguments)

    def _apply(self, fn: Callable, recurse: bool = True):
        """fn(t) for every parameter (its .data replaced in place: the same object stays, and
        its .grad is mapped too) and buffer of this module (and, with recurse, its
        descendants); returns self."""
        return self._apply_tensors(fn, recurse)

    def to_empty(self, *, device, recurse: bool = True):
        """Give every parameter and buffer new, uninitialised storage of its shape and dtype on
        `device` (PyTorch's, for a model built without data); returns self."""
        return self._apply(lambda t: T.empty(tuple(t.shape), dtype=t.dtype, device=device),
                           recurse)

    def type(self, dst_type):
        """Cast every parameter and buffer to dst_type (a dtype or its name), integer buffers
        included, as PyTorch's Module.type; returns self."""
        d = T.dtypes.dtype(dst_type)
        return self._apply(lambda t: t if t.dtype == d else t.astype(d))

    def share_memory(self):
        """Move every parameter and buffer into shared memory, in place (Tensor.share_memory_:
        processes forked or spawned afterwards see the same values, Hogwild training); returns
        self."""
        return self._apply(lambda t: t.share_memory_())

    def compile(self, *args, **kwargs):
        """Compile this module's forward in place (PyTorch's Module.compile): calls then replay
        it as tensor.compile does (its keywords, torch.compile's too); hooks still run on every
        call."""
        self.forward = T.compile(self.forward, *args, **kwargs)

    def register_backward_hook(self, hook: Callable):
        """PyTorch's deprecated spelling: registers hook as register_full_backward_hook does
        (PyTorch's own old behaviour, which saw only the last op's gradients, is not kept)."""
        warnings.warn("register_backward_hook is deprecated: registering it as a full backward "
                      "hook (register_full_backward_hook)", FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)
