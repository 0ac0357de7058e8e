"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, as torch.nn's.

>>> import tensor as T
>>> from nn.containers import ModuleDict, ModuleList, Sequential
>>> from nn.module import Module
>>> class Double(Module):
...     def forward(self, x): return 2 * x
>>> s = Sequential(Double(), ModuleList([Double()])[0])
>>> s(T.ones(2)).tolist(), len(s), len(ModuleDict({"a": Double()}))
([4.0, 4.0], 2, 1)
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from .module import Module


def _index(i, n: int, what: str) -> int:
    i = operator.index(i)   # TypeError for a str, as PyTorch
    if not -n <= i < n:
        raise IndexError(f"{what}: index {i} is out of range for length {n}")
    return i % n


class Sequential(Module):
    """Modules applied in order: Sequential(a, b, c)(x) == c(b(a(x))).

    >>> import tensor as T
    >>> class Double(Module):
    ...     def forward(self, x): return 2 * x
    >>> s = Sequential(Double(), Double())
    >>> s(T.ones(2)).tolist(), len(s), repr(s).splitlines()[1]
    ([4.0, 4.0], 2, '  (0): Double()')
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], Mapping):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):   # PyTorch's name: seq(input=t) works
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i):
        items = list(self._modules.items())
        if isinstance(i, slice):
            return Sequential(OrderedDict(items[i]))
        return items[_index(i, len(items), "Sequential")][1]

    def __setitem__(self, i: int, module: Module) -> None:
        key = list(self._modules)[_index(i, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, i) -> None:
        keys = list(self._modules)
        for k in (keys[i] if isinstance(i, slice) else [keys[_index(i, len(keys), "Sequential")]]):
            del self._modules[k]
        if all(k.isdigit() for k in keys):  # numbered: renumber 0..n-1, as PyTorch
            mods = list(self._modules.values())
            self._modules.clear()
            self._modules.update((str(j), m) for j, m in enumerate(mods))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put module at index (0..len, negative from the end), as PyTorch's: the entries
        after it move up one number."""
        if not isinstance(module, Module):
            raise TypeError(f"Sequential.insert: expected a Module, got {type(module).__name__}")
        if not all(k.isdigit() for k in self._modules):
            raise ValueError("Sequential.insert: the entries are named, not numbered 0..n-1")
        n = len(self)
        index = operator.index(index)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} is out of range for length {n}")
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        self._modules.update((str(j), m) for j, m in enumerate(mods))
        return self

    def pop(self, key: int | slice):
        """Remove and return the entry (or Sequential of entries) at key."""
        v = self[key]
        del self[key]
        return v

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("Sequential: + takes only another Sequential, got "
                             f"{type(other).__name__}")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("Sequential: += takes only another Sequential, got "
                             f"{type(other).__name__}")
        return self.extend(list(other))

    def __mul__(self, other: int) -> Sequential:
        """The same modules repeated (shared, not copied), as PyTorch's."""
        if not isinstance(other, int) or isinstance(other, bool):
            raise TypeError(f"Sequential: * takes an int, got {type(other).__name__}")
        if other <= 0:
            raise ValueError(f"Sequential: * takes a positive int, got {other}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__


class ModuleList(Module):
    """A list of modules, registered as children (indexable, iterable, appendable)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return ModuleList(mods[i])
        return mods[_index(i, len(mods), "ModuleList")]

    def __setitem__(self, i: int, module: Module) -> None:
        self.add_module(str(_index(i, len(self), "ModuleList")), module)

    def __delitem__(self, i) -> None:
        mods = list(self._modules.values())
        if isinstance(i, slice):
            del mods[i]
        else:
            del mods[_index(i, len(mods), "ModuleList")]
        self._modules.clear()
        self.extend(mods)  # keys stay "0".."n-1"

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        self.extend(mods)

    def pop(self, key: int | slice):
        """Remove and return the module (or ModuleList of modules) at key."""
        v = self[key]
        del self[key]
        return v

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])


class ModuleDict(Module):
    """An ordered dict of modules, registered as children."""

    def __init__(self, modules: Mapping[str, Module] | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for k, m in pairs:
            self[k] = m


def _as_parameter(value):
    """Tensors become Parameters (as PyTorch's containers do); other values are kept as is."""
    from tensor import Tensor

    from .module import Parameter, is_parameter
    if isinstance(value, Tensor) and not is_parameter(value):
        return Parameter(value)
    return value


def _entries_repr(pairs) -> str:
    """One line per (key, entry) of a parameter container, as PyTorch's repr."""
    lines = []
    for k, p in pairs:
        if hasattr(p, "shape"):
            lines.append(f"({k}): Parameter containing: [{p.dtype.name} of size "
                         f"{'x'.join(map(str, p.shape))}]")
        else:
            lines.append(f"({k}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


class ParameterList(Module):
    """A list of parameters, registered under "0", "1", ... so that parameters() and
    state_dict() see them; plain tensors are wrapped in Parameter, as torch.nn.ParameterList.

    >>> import tensor as T
    >>> from nn.module import Parameter
    >>> pl = ParameterList([Parameter(T.zeros(2)), T.ones(3)])
    >>> len(pl), [n for n, _ in pl.named_parameters()], pl[-1].requires_grad
    (2, ['0', '1'], True)
    """

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _set(self, i: int, value) -> None:
        value = _as_parameter(value)
        from .module import is_parameter
        if is_parameter(value) or value is None:
            self._remove_attr(str(i), self._parameters)   # it may hold a plain value now
            self.register_parameter(str(i), value)
        else:
            self._remove_attr(str(i), self._parameters)
            self._parameters.pop(str(i), None)
            object.__setattr__(self, str(i), value)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ParameterList([self[j] for j in range(len(self))[i]])
        return getattr(self, str(_index(i, len(self), "ParameterList")))

    def __setitem__(self, i: int, value) -> None:
        self._set(_index(i, len(self), "ParameterList"), value)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable) -> ParameterList:
        return self.extend(values)

    def append(self, value) -> ParameterList:
        i = self._size
        self._size += 1
        self._set(i, value)
        return self

    def extend(self, values: Iterable) -> ParameterList:
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return _entries_repr(enumerate(self))


class ParameterDict(Module):
    """An ordered dict of parameters, registered under their keys so that parameters() and
    state_dict() see them; plain tensors are wrapped in Parameter, as torch.nn.ParameterDict.

    >>> import tensor as T
    >>> pd = ParameterDict({"w": T.ones(2)})
    >>> pd["b"] = T.zeros(1)
    >>> list(pd), sorted(pd.state_dict())
    (['w', 'b'], ['b', 'w'])
    """

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict: keys must be str, got {type(key).__name__}")
        self._check_name(key, "ParameterDict entry")
        if key not in self._keys:   # "keys", "_parameters", ...: KeyError, as PyTorch
            self._check_free(key, self._parameters)
        value = _as_parameter(value)
        from .module import is_parameter
        self._keys[key] = None
        self._remove_attr(key, self._parameters)   # a replaced entry may change kind
        if is_parameter(value) or value is None:
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)
            object.__setattr__(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default=None):
        return self[key] if key in self._keys else default

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def update(self, parameters: Mapping | Iterable) -> None:
        """Add or replace entries: an OrderedDict or ParameterDict in its order, another mapping
        (a plain dict) in sorted key order (PyTorch's rule, so that parameters() and the
        optimizer's parameter indices match its), an iterable of (key, value) pairs in order."""
        if isinstance(parameters, OrderedDict | ParameterDict):
            pairs = parameters.items()
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items(), key=lambda kv: str(kv[0]))
        else:
            pairs = parameters
        for k, v in pairs:
            self[k] = v

    def setdefault(self, key: str, default=None):
        """self[key], first set to default (wrapped in Parameter if a tensor) if key is new."""
        if key not in self._keys:
            self[key] = default
        return self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters (not copies of them)."""
        return ParameterDict(self.items())

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        """A new ParameterDict with every key set to default."""
        return ParameterDict((k, default) for k in keys)

    def __or__(self, other: ParameterDict) -> ParameterDict:
        if not isinstance(other, ParameterDict):
            return NotImplemented
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        if not isinstance(other, ParameterDict):
            return NotImplemented
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return _entries_repr(self.items())
