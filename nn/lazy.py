"""Lazy modules, as torch.nn's: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d,
LazyBatchNorm1d/2d/3d and LazyInstanceNorm1d/2d/3d take their input size (in_features,
in_channels, num_features) from the first input they see.

Until then their parameters are UninitializedParameter (and the batch norms' running statistics
UninitializedBuffer): empty placeholder tensors, which an optimizer may already hold, since the
first forward materialises each of them in place (same tensor object, now shaped), initialises
it as the ordinary layer does (its reset_parameters) and turns the module into that layer
(LazyLinear becomes a Linear, as PyTorch's). Loading a state dict into a lazy module
materialises its parameters with the loaded shapes.

>>> import nn, tensor as T
>>> m = nn.LazyLinear(3)
>>> isinstance(m.weight, nn.UninitializedParameter), m.has_uninitialized_params()
(True, True)
>>> m(T.ones((2, 5))).shape, type(m).__name__, m.weight.shape
((2, 3), 'Linear', (3, 5))
"""
from __future__ import annotations

import tensor as T
from autograd import no_grad
from tensor import Tensor

from ._marks import TensorMarks
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers_extra import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .module import Parameter
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d

_UNINIT = TensorMarks()   # placeholders not materialised yet


def is_uninitialized(t) -> bool:
    return _UNINIT.value(t) is not None


_mark = _UNINIT.mark


class _UninitMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and is_uninitialized(obj) and cls._is_param(obj)


def materialize(t: Tensor, shape, device=None, dtype=None) -> Tensor:
    """Give the placeholder t storage of `shape` (uninitialised values), in place: t stays the
    same object (an optimizer holding it keeps it) and is no longer uninitialised."""
    if not is_uninitialized(t):
        raise RuntimeError(f"materialize: the tensor of shape {tuple(t.shape)} is not an "
                           "uninitialized parameter or buffer")
    with no_grad():
        t.data = T.empty(tuple(shape), dtype=dtype or t.dtype, device=device or t.device)
    _UNINIT.unmark(t)
    return t


class UninitializedParameter(metaclass=_UninitMeta):
    """A parameter whose shape is not known yet (a lazy module's): an empty float tensor that
    is a Parameter; materialize(p, shape) gives it its storage."""

    _is_param = staticmethod(lambda t: isinstance(t, Parameter))

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None) -> Tensor:
        return _mark(Parameter(T.empty(0, dtype=dtype or T.float32, device=device), requires_grad))


class UninitializedBuffer(metaclass=_UninitMeta):
    """A buffer whose shape is not known yet (a lazy batch norm's running statistics)."""

    _is_param = staticmethod(lambda t: not isinstance(t, Parameter))

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None) -> Tensor:
        return _mark(T.empty(0, dtype=dtype or T.float32, device=device))


class LazyModuleMixin:
    """The machinery of the Lazy* layers: placeholders in __init__ (_make_lazy), a forward
    pre-hook that infers the input size from the first input, materialises, initialises and
    turns the module into cls_to_become, and a load_state_dict pre-hook that materialises the
    placeholders with the loaded entries' shapes."""

    cls_to_become: type | None = None
    _in_attr = ""   # the attribute the first input sets (in_features, in_channels, ...)

    def _make_lazy(self, names: tuple, buffers: tuple = ()) -> None:
        for n in names:
            if self._parameters.get(n) is not None:
                old = self._parameters[n]
                self._parameters[n] = UninitializedParameter(old.requires_grad, old.device,
                                                             old.dtype)
        for n in buffers:
            if self._buffers.get(n) is not None:
                old = self._buffers[n]
                self._buffers[n] = UninitializedBuffer(False, old.device, old.dtype)
        self._lazy_hooks()

    def _lazy_hooks(self) -> None:
        self._lazy_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)
        self._lazy_load = self._register_load_state_dict_pre_hook(LazyModuleMixin._lazy_load_hook,
                                                                  with_module=True)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_uninitialized"] = [(table, k) for table in ("_parameters", "_buffers")
                                   for k, t in getattr(self, table).items()
                                   if t is not None and is_uninitialized(t)]
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        names = state.pop("_uninitialized", [])
        super().__setstate__(state)
        for table, k in names:
            _mark(getattr(self, table)[k])

    def __deepcopy__(self, memo: dict):
        """The copy's placeholders are uninitialised too, with hooks of its own."""
        new = super().__deepcopy__(memo)
        for table in ("_parameters", "_buffers"):
            for k, t in getattr(self, table).items():
                if t is not None and is_uninitialized(t):
                    _mark(getattr(new, table)[k])
        if "_lazy_hook" in self.__dict__:
            new._forward_pre_hooks.pop(self._lazy_hook.id, None)
            new._load_pre_hooks.pop(self._lazy_load.id, None)
            new._lazy_hooks()
        return new

    def has_uninitialized_params(self) -> bool:
        return any(is_uninitialized(t) for t in (*self._parameters.values(), *self._buffers.values())
                   if t is not None)

    def _in_size(self, x: Tensor) -> int:
        raise NotImplementedError

    def _shapes(self, n: int) -> dict:
        """{parameter or buffer name: its shape} for input size n."""
        raise NotImplementedError

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Materialise and initialise the placeholders for `input` (the first forward's)."""
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__}: expected a Tensor input, got "
                            f"{type(input).__name__}")
        if not self.has_uninitialized_params():
            if getattr(self, self._in_attr) == 0:   # loaded from a state dict, or nothing to make
                self._set_in_size(self._size_from_weights() or int(self._in_size(input)))
            return
        n = int(self._in_size(input))
        self._set_in_size(n)
        with no_grad():
            for name, shape in self._shapes(n).items():
                t = self._parameters.get(name, self._buffers.get(name))
                if t is not None and is_uninitialized(t):
                    materialize(t, shape)
            self.reset_parameters()

    def _set_in_size(self, n: int) -> None:
        setattr(self, self._in_attr, n)

    def _infer_parameters(self, args) -> None:
        self.initialize_parameters(*args)
        if self.has_uninitialized_params():
            raise RuntimeError(f"{type(self).__name__}: not all parameters were initialised by "
                               "the first forward")
        self._lazy_hook.remove()
        self._lazy_load.remove()
        for k in ("_lazy_hook", "_lazy_load"):
            self.__dict__.pop(k, None)
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _size_from_weights(self) -> int:
        w = self._parameters.get("weight")
        return 0 if w is None else int(w.shape[1])

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing, unexpected,
                        errors) -> None:
        for table in (self._parameters, self._buffers):
            for name, t in table.items():
                v = state_dict.get(prefix + name)
                if t is not None and is_uninitialized(t) and isinstance(v, Tensor):
                    materialize(t, v.shape)


# ---- Linear -------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last size of its first input."""

    cls_to_become = Linear
    _in_attr = "in_features"

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, out_features, bias, device, dtype)
        self._make_lazy(("weight", "bias"))

    def _in_size(self, x: Tensor) -> int:
        if x.ndim == 0:
            raise ValueError(f"LazyLinear: expected input of shape (*, in_features), got {x.shape}")
        return x.shape[-1]

    def _shapes(self, n: int) -> dict:
        return {"weight": (self.out_features, n), "bias": (self.out_features,)}

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()


# ---- convolutions -------------------------------------------------------------------------
class _LazyConvMixin(LazyModuleMixin):
    _in_attr = "in_channels"

    def _in_size(self, x: Tensor) -> int:
        nd = self._nd
        if x.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"{type(self).__name__}: expected a {nd + 1}-d (unbatched) or "
                             f"{nd + 2}-d input, got shape {tuple(x.shape)}")
        n = x.shape[0] if x.ndim == nd + 1 else x.shape[1]
        if n % self.groups:
            raise ValueError(f"{type(self).__name__}: in_channels ({n}) must be divisible by "
                             f"groups ({self.groups})")
        return n

    def _shapes(self, n: int) -> dict:
        out, g = self.out_channels, self.groups
        w = (n, out // g) if self._transposed else (out, n // g)
        return {"weight": w + tuple(self.kernel_size), "bias": (out,)}

    def _size_from_weights(self) -> int:
        w = self.weight
        return int(w.shape[0]) if self._transposed else int(w.shape[1]) * self.groups

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()


def _lazy_conv(base: type, transposed: bool) -> type:
    if transposed:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                     groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                     device=None, dtype=None) -> None:
            base.__init__(self, 0, out_channels, kernel_size, stride, padding, output_padding,
                          groups, bias, dilation, padding_mode, device, dtype)
            self._make_lazy(("weight", "bias"))
    else:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                     groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                     device=None, dtype=None) -> None:
            base.__init__(self, 0, out_channels, kernel_size, stride, padding, dilation, groups,
                          bias, padding_mode, device, dtype)
            self._make_lazy(("weight", "bias"))
    name = "Lazy" + base.__name__
    doc = f"{base.__name__} whose in_channels is the channel size of its first input."
    return type(name, (_LazyConvMixin, base), {"__init__": __init__, "cls_to_become": base,
                                                "__doc__": doc, "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)


# ---- batch / instance norm ----------------------------------------------------------------
class _LazyNormMixin(LazyModuleMixin):
    _in_attr = "num_features"
    _stats = ("running_mean", "running_var")

    def _in_size(self, x: Tensor) -> int:
        nd = getattr(self, "_nd", None)
        if nd is not None and x.ndim == nd + 1:   # an unbatched instance norm input
            return x.shape[0]
        if x.ndim < 2:
            raise ValueError(f"{type(self).__name__}: expected an input with a channel "
                             f"dimension, got shape {tuple(x.shape)}")
        return x.shape[1]

    def _shapes(self, n: int) -> dict:
        return {k: (n,) for k in ("weight", "bias") + self._stats}

    def _size_from_weights(self) -> int:
        for k in ("weight",) + self._stats:
            t = self._parameters.get(k, self._buffers.get(k))
            if t is not None:
                return int(t.shape[0])
        return 0

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params():
            super().reset_parameters()


def _lazy_norm(base: type, affine: bool, track: bool) -> type:
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = affine,
                 track_running_stats: bool = track, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        base.__init__(self, 0, eps, momentum, affine, track_running_stats, device, dtype,
                      bias=bias)
        self._make_lazy(("weight", "bias"), self._stats)
    name = "Lazy" + base.__name__
    doc = f"{base.__name__} whose num_features is the channel size of its first input."
    return type(name, (_LazyNormMixin, base), {"__init__": __init__, "cls_to_become": base,
                                               "__doc__": doc, "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, True, True)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, True, True)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, True, True)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, False, False)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, False, False)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, False, False)

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyModuleMixin", "materialize",
           "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
