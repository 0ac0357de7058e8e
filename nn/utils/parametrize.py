"""Parametrizations, as torch.nn.utils.parametrize: a module's tensor computed from others.

register_parametrization(module, "weight", P) moves the parameter to
`module.parametrizations.weight.original` and makes `module.weight` a property that returns
P(original) on every read (so autograd carries gradients to `original`). Registering again on
the same name chains them: weight = P2(P1(original)). A parametrization with a right_inverse
method also runs backwards: at registration original = right_inverse(weight), so the weight
keeps its value, and `module.weight = X` sets original = right_inverse(X). right_inverse may
return several tensors: they become original0, original1, ... and forward takes them all.

Like PyTorch, the module's class becomes a subclass named Parametrized<Class>, and state_dict
keys are `parametrizations.weight.original` (or `...original0`, `...original1`).

>>> import tensor as T
>>> from nn.linear import Linear
>>> from nn.module import Module
>>> class Symmetric(Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).mT
>>> m = register_parametrization(Linear(3, 3), "weight", Symmetric())
>>> type(m).__name__, list(m.state_dict())
('ParametrizedLinear', ['bias', 'parametrizations.weight.original'])
>>> bool((m.weight == m.weight.mT).all()), is_parametrized(m, "weight")
(True, True)
"""
from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

from autograd import no_grad
from tensor import Tensor

from ..containers import ModuleDict, ModuleList
from ..module import Module, Parameter, is_parameter

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached():
    """Inside this context a parametrized tensor is computed once, at its first read, and
    reused for every later read (a weight read once per time step of an RNN, say)."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register(module: Module, name: str, t: Tensor) -> None:
    if is_parameter(t):
        module.register_parameter(name, t)
    else:
        module.register_buffer(name, t)


def _check_like(what: str, got, dtype, shape, hint: str) -> None:
    if not isinstance(got, Tensor):
        raise ValueError(f"{what} must return a tensor, got {type(got).__name__}")
    if got.dtype != dtype:
        raise ValueError(f"{what} may not change the dtype{hint}: {dtype.name} -> {got.dtype.name}")
    if got.shape != shape:
        raise ValueError(f"{what} may not change the shape{hint}: {shape} -> {got.shape}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in order, holding its unparametrized value as
    `original` (or `original0`, `original1`, ... when right_inverse returns a sequence)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList: requires one or more modules")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor | Sequence):
            raise ValueError("register_parametrization: 'right_inverse' must return a Tensor or "
                             f"a sequence of tensors, got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != dtype or str(new.device) != str(original.device):
                raise ValueError("register_parametrization: when 'right_inverse' returns one "
                                 f"tensor it may not change the dtype or device: {dtype.name} on "
                                 f"{original.device} -> {new.dtype.name} on {new.device}")
            with no_grad():
                if new is not original:
                    original.data = new
            _register(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError("register_parametrization: 'right_inverse' must return "
                                     f"tensors; element {i} is a {type(t).__name__}")
                if is_parameter(original):
                    t = Parameter(t, original.requires_grad)
                else:
                    t = t.detach().requires_grad_(original.requires_grad)
                _register(self, f"original{i}", t)
        if not unsafe:
            _check_like("register_parametrization: a parametrization", self(), dtype, shape,
                        " of the tensor unless unsafe=True")

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that this list's forward gives `value` (each parametrization's
        right_inverse, last first)."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement "
                                       "right_inverse")
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"right_inverse should return a tensor, got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"right_inverse returned dtype {value.dtype.name}, while "
                                     f"original has dtype {self.original.dtype.name}")
                self.original.data = value
                return
            if not isinstance(value, Sequence) or len(value) != self.ntensors:
                raise ValueError(f"right_inverse must return a sequence of {self.ntensors} "
                                 f"tensors, got {type(value).__name__}")
            for i, t in enumerate(value):
                orig = getattr(self, f"original{i}")
                if not isinstance(t, Tensor) or t.dtype != orig.dtype:
                    raise ValueError(f"right_inverse: element {i} must be a tensor of dtype "
                                     f"{orig.dtype.name}, got {getattr(t, 'dtype', type(t))}")
                orig.data = t

    def forward(self) -> Tensor:
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x


def _getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict()")


def _setattr(self, name: str, value) -> None:
    """module.weight = X on a parametrized weight runs right_inverse; a Parameter is refused
    there (as PyTorch's: the name is taken by the parametrization)."""
    if name in type(self).__dict__ and isinstance(type(self).__dict__[name], property):
        if is_parameter(value):
            raise KeyError(f"attribute {name!r} already exists (it is parametrized: assign a "
                           "plain tensor to set it through right_inverse)")
        object.__setattr__(self, name, value)
        return
    Module.__setattr__(self, name, value)


def _deepcopy(self, memo: dict):
    """copy.deepcopy of a parametrized module: the copy gets a Parametrized class of its own
    (with the same properties), so that (un)registering a parametrization on one of the two
    leaves the other's class alone."""
    cls = type(self)
    new = cls.__bases__[0].__deepcopy__(self, memo)
    _own_class(new, cls)
    return new


def _own_class(module: Module, cls: type) -> None:
    """Give module a fresh copy of the Parametrized class cls (its injected properties too)."""
    namespace = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    module.__class__ = type(cls.__name__, cls.__bases__, namespace)


def _inject_new_class(module: Module) -> None:
    """Switch module to a new subclass Parametrized<Class> of its class, one per module (the
    parametrized tensors are properties of that class)."""
    cls = type(module)
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,),
                            {"__getstate__": _getstate, "__setattr__": _setattr,
                             "__deepcopy__": _deepcopy})


def _inject_property(module: Module, name: str) -> None:
    def get(self) -> Tensor:
        p = self.parametrizations[name]
        if not _cache_enabled:
            return p()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = p()
        return _cache[key]

    def set_(self, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(get, set_))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make module.<tensor_name> computed by `parametrization` from module.parametrizations.
    <tensor_name>.original (see the module docstring); returns module.

    unsafe=True allows the parametrization to change the tensor's shape or dtype (nothing is
    checked)."""
    if not isinstance(parametrization, Module):
        raise TypeError("register_parametrization: the parametrization must be a Module, got "
                        f"{type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            _check_like("register_parametrization: a parametrization", X, Y.dtype, Y.shape,
                        f" of module.{tensor_name} unless unsafe=True")
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    _check_like("register_parametrization: right_inverse", Z, Y.dtype, Y.shape,
                                f" of module.{tensor_name} unless unsafe=True")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"register_parametrization: module.{tensor_name} is None")
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"register_parametrization: module {module._get_name()} has no "
                         f"parameter, buffer or parametrized element named {tensor_name!r}")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether module has any parametrization (tensor_name=None) or one on tensor_name."""
    ps = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(ps, ModuleDict):
        return False
    return len(ps) > 0 if tensor_name is None else tensor_name in ps


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo register_parametrization on tensor_name: it becomes a plain parameter (or buffer)
    again, holding its current parametrized value (leave_parametrized=True) or `original`."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"remove_parametrizations: module {module._get_name()} has no "
                         f"parametrization on {tensor_name!r}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                original.data = getattr(module, tensor_name).detach()
    else:
        if not leave_parametrized:
            raise ValueError("remove_parametrizations: cannot leave unparametrized "
                             "(leave_parametrized=False) a tensor parametrized by a sequence "
                             "of tensors")
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t.detach()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before register_parametrization replaced it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]
