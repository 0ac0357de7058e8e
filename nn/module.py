"""Module and Parameter, as torch.nn's (the containers are in nn/containers.py).

>>> import tensor as T
>>> from nn.module import Module, Parameter
>>> class Affine(Module):
...     def __init__(self, n):
...         super().__init__()
...         self.w = Parameter(T.ones(n, dtype=T.float32))
...         self.register_buffer("calls", T.zeros((), dtype=T.int64))
...     def forward(self, x):
...         return x * self.w
>>> m = Affine(3)
>>> [name for name, _ in m.named_parameters()], list(m.state_dict())
(['w'], ['w', 'calls'])
>>> m(T.ones(3, dtype=T.float32)).sum().backward(); m.w.grad.tolist()
[1.0, 1.0, 1.0]
"""
from __future__ import annotations

import copy
import itertools
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import tensor as T
from autograd import no_grad
from tensor import Tensor, _hook
from tensor.capture import watch

from . import _state_hooks as _sh
from ._marks import TensorMarks
from ._module_extra import ModuleExtras, buffer_persistence
from ._state_hooks import (  # noqa: F401  (StateDictError re-exported: nn.module's name)
    _EXTRA_STATE,
    RemovableHandle,
    StateDictError,
    _has_extra_state,
)

# --------------------------------------------------------------------------- Parameter
# A parameter is a plain Tensor remembered in this registry, not a Tensor subclass: autograd
# records only `type(x) is Tensor` inputs, so a subclass would silently drop out of the graph.
_PARAMS = TensorMarks()


def is_parameter(obj: Any) -> bool:
    """True for tensors created by Parameter(...)."""
    return type(obj) is Tensor and _PARAMS.value(obj) is not None


class _ParameterMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return is_parameter(obj)


class Parameter(metaclass=_ParameterMeta):
    """A leaf tensor that requires grad and that a Module registers when assigned to it.

    Parameter(data) returns a plain Tensor sharing data's memory (without its history);
    `isinstance(p, Parameter)` is True for it.

    >>> import tensor as T
    >>> p = Parameter(T.zeros(2, dtype=T.float32))
    >>> isinstance(p, Parameter), isinstance(p, T.Tensor), p.requires_grad, p.is_leaf
    (True, True, True, True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Tensor:
        if data is None:
            data = T.empty(0, dtype=T.float32)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: data must be a Tensor, got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return _PARAMS.mark(t)


# --------------------------------------------------------------------------- hooks, errors
def _extra_state_owners(m: Module, prefix: str, out: dict) -> dict:
    """{state_dict key of an '_extra_state' entry: its module}, walking as state_dict does."""
    if _has_extra_state(m):
        out[prefix + _EXTRA_STATE] = m
    for name, c in m._modules.items():
        if c is not None:
            _extra_state_owners(c, prefix + name + ".", out)
    return out


class IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:   # PyTorch's text when nothing is missing or unexpected
        return "<All keys matched successfully>" if not any(self) else (
            f"IncompatibleKeys(missing_keys={self[0]!r}, unexpected_keys={self[1]!r})")


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    return lines[0] if len(lines) == 1 else "\n".join([lines[0]] + [" " * n + x for x in lines[1:]])


def _parse_to(args, device, dtype):
    for a in args:
        if isinstance(a, Tensor):   # to(other): other's device and dtype, as PyTorch's
            device, dtype = a.device, a.dtype
        elif isinstance(a, T.Device) or (isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda")):
            device = a
        else:
            dtype = a
    return device, (T.dtypes.dtype(dtype) if dtype is not None else None)


# --------------------------------------------------------------------------- Module
def weight_and_bias(module, weight_shape: tuple, bias_size: int, bias: bool, dtype,
                    device) -> None:
    """A layer's parameters before its reset_parameters(): module.weight, uninitialised, of
    weight_shape, and module.bias of (bias_size,) when `bias`, else registered as None; dtype
    None is float32 (Linear, Bilinear, the convolutions)."""
    d = T.float32 if dtype is None else dtype
    module.weight = Parameter(T.empty(weight_shape, dtype=d, device=device))
    if bias:
        module.bias = Parameter(T.empty(bias_size, dtype=d, device=device))
    else:
        module.register_parameter("bias", None)


class Module(_sh.StateHooks, ModuleExtras):
    """Base class of every layer and model: subclass, assign Parameters, Modules and buffers
    in __init__ (after super().__init__()), and define forward()."""

    training: bool

    def __init__(self) -> None:
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_hook_kwargs"] = set()      # ids of forward (pre-)hooks registered with_kwargs
        d["_hook_always"] = set()      # ids of forward hooks registered always_call

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: forward() is not defined")

    def __call__(self, *args, **kwargs):
        if _hook.capture is not None:   # a captured step replays this mode: re-capture if it changes
            watch(self, "training")
        d = self.__dict__
        if not (self._forward_pre_hooks or self._forward_hooks or d.get("_backward_hooks")
                or d.get("_backward_pre_hooks")):
            return self.forward(*args, **kwargs)
        with_kw = d.get("_hook_kwargs", ())
        for k, hook in list(self._forward_pre_hooks.items()):
            if k in with_kw:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise TypeError("forward pre-hook with_kwargs must return None or a tuple "
                                        f"(args, kwargs), got {type(r).__name__}")
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        if d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
            from ._backward_hooks import call_with_backward_hooks
            return call_with_backward_hooks(self, args, lambda a: self._forward_and_hooks(a, kwargs))
        return self._forward_and_hooks(args, kwargs)

    def _forward_and_hooks(self, args, kwargs):
        always = self.__dict__.get("_hook_always", ())
        try:
            out = self.forward(*args, **kwargs)
        except BaseException:
            for k, hook in list(self._forward_hooks.items()):
                if k in always:   # always_call: run on the way out of a failing forward too
                    try:
                        self._call_forward_hook(k, hook, args, kwargs, None)
                    except Exception as e:   # (the forward's error goes on; this one is said)
                        warnings.warn(f"{self._get_name()}: a forward hook with always_call=True raised "
                                      f"{type(e).__name__}: {e} while the forward's own error was being "
                                      "raised; it was silenced", RuntimeWarning, stacklevel=3)
            raise
        for k, hook in list(self._forward_hooks.items()):
            r = self._call_forward_hook(k, hook, args, kwargs, out)
            if r is not None:
                out = r
        return out

    def _call_forward_hook(self, k, hook, args, kwargs, out):
        if k in self.__dict__.get("_hook_kwargs", ()):
            return hook(self, args, kwargs, out)
        return hook(self, args, out)

    # ---- registration
    def _check_name(self, name, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{what} name must be a str, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f"{what} name must be non-empty and contain no '.', got {name!r}")

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Add a parameter (or None: a declared slot, skipped by parameters())."""
        self._check_name(name, "parameter")
        if param is not None and not is_parameter(param):
            raise TypeError(f"cannot assign a {type(param).__name__} as parameter {name!r} "
                            "(wrap it: Parameter(tensor))")
        self._check_free(name, self._parameters)
        self._remove_attr(name, self._parameters)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running statistics...). Persistent
        buffers are in state_dict()."""
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"buffer {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        self._check_free(name, self._buffers)   # PyTorch's: a parameter stays one
        self._remove_attr(name, self._buffers)
        self._buffers[name] = tensor
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def add_module(self, name: str, module: Module | None) -> None:
        self._check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_free(name, self._modules)
        self._remove_attr(name, self._modules)
        self._modules[name] = module

    register_module = add_module

    def _check_free(self, name: str, keep: dict) -> None:
        """PyTorch's rule for register_*/add_module: a name that already is another attribute
        (a method, a plain attribute, an entry of another kind) raises KeyError, module
        untouched. Assignment (`m.name = value`) replaces instead."""
        if name not in keep and hasattr(self, name):
            raise KeyError(f"attribute {name!r} already exists")

    def _remove_attr(self, name: str, keep: dict) -> None:
        """Drop name from every namespace but `keep` (where a re-assignment keeps its place)."""
        self.__dict__.pop(name, None)
        for d in (self._parameters, self._buffers, self._modules):
            if d is not keep:
                d.pop(name, None)
        self._non_persistent.discard(name)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if is_parameter(value):
            if "_parameters" in d and not hasattr(type(self), name):
                self._remove_attr(name, self._parameters)   # assignment replaces, as PyTorch
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._check_name(name, "module")
            self._remove_attr(name, self._modules)
            self._modules[name] = value
        elif "_parameters" in d and name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign a {type(value).__name__} to parameter {name!r} "
                                "(a Parameter or None expected)")
            self._parameters[name] = None
        elif "_modules" in d and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign a {type(value).__name__} to submodule {name!r}")
            self._modules[name] = None
        elif (persistent := buffer_persistence(value)) is not None:   # nn.Buffer(t, persistent=..)
            self._remove_attr(name, self._buffers)
            self.register_buffer(name, value, persistent)
        elif "_buffers" in d and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign a {type(value).__name__} to buffer {name!r}")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if k in d and name in d[k]:
                return d[k][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for k in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(k, ()):
                del self.__dict__[k][name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # ---- traversal
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(qualified name, module) of this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                           remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for mp, m in mods:
            for name, t in getattr(m, attr).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield (f"{mp}.{name}" if mp else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(qualified name, parameter); a parameter shared by several modules comes once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        m = self
        for part in target.split(".") if target else ():
            sub = m._modules.get(part)
            if sub is None:
                raise AttributeError(f"{m._get_name()} has no submodule {part!r} (in {target!r})")
            m = sub
        return m

    def _get_member(self, target: str, table: str, kind: str) -> Tensor:
        """The parameter / buffer at the dotted path target."""
        mod, _, name = target.rpartition(".")
        m = self.get_submodule(mod)
        members = getattr(m, table)
        if name not in members:
            raise AttributeError(f"{m._get_name()} has no {kind} {name!r}")
        return members[name]

    def get_parameter(self, target: str) -> Tensor:
        return self._get_member(target, "_parameters", "parameter")

    def get_buffer(self, target: str) -> Tensor:
        return self._get_member(target, "_buffers", "buffer")

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put `module` at the dotted path `target` ("encoder.layers.0"), whose parent must
        exist; strict=True only replaces an existing submodule, as PyTorch's."""
        if not target:
            raise ValueError("set_submodule: target must name a submodule, got ''")
        if not isinstance(module, Module):
            raise TypeError(f"set_submodule: expected a Module, got {type(module).__name__}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if name not in parent._modules:
            if strict:
                raise AttributeError(f"{parent._get_name()} has no submodule {name!r} (in "
                                     f"{target!r}) to replace (strict=True)")
            if name in parent._parameters or name in parent._buffers or name in parent.__dict__:
                raise AttributeError(f"set_submodule: {target!r} is a {parent._get_name()} "
                                     "attribute that is not a Module")
        setattr(parent, name, module)

    # ---- modes and in-place changes
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every descendant (dropout, batch norm...)."""
        if not isinstance(mode, bool):
            raise TypeError(f"train: mode must be a bool, got {type(mode).__name__}")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's .grad: to None (default), or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    p.grad = p.grad.detach()
                    p.grad.zero_()

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call fn(m) on every submodule (children first) and on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply_tensors(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace each parameter's data (in place, identity kept; its grad mapped too) and each
        buffer by fn(t), in this module and (recurse) its descendants."""
        with no_grad():
            for m in self.modules() if recurse else (self,):
                for p in m._parameters.values():
                    if p is None:
                        continue
                    new = fn(p)
                    if new is not p:   # (the grad mapped first: its failure leaves p as it was)
                        g = None if p.grad is None else fn(p.grad)
                        p.data = new
                        if g is not None:
                            p.grad = g
                for k, b in m._buffers.items():
                    if b is not None:
                        m._buffers[k] = fn(b)
        return self

    def to(self, *args, device=None, dtype=None, non_blocking: bool = False) -> Module:
        """to(device), to(dtype), to(device, dtype) or to(tensor) (its device and dtype): moves
        every parameter and buffer, and casts the floating ones (integer buffers keep their
        dtype; a complex dtype casts the complex ones too, as PyTorch's). In place; returns
        self. non_blocking is accepted as PyTorch's (copies are ordered on the stream)."""
        if not isinstance(non_blocking, bool):
            raise TypeError(f"Module.to: non_blocking must be a bool, got {type(non_blocking).__name__}")
        device, dtype = _parse_to(args, device, dtype)
        if dtype is not None and dtype.kind not in "fc":
            raise TypeError(f"Module.to: only floating or complex dtypes are accepted, got "
                            f"{dtype.name}")
        kinds = "fc" if dtype is not None and dtype.kind == "c" else "f"

        def fn(t):
            d = dtype if dtype is not None and t.dtype.kind in kinds else None
            return t.to(device=device, dtype=d, copy=False) if device or d else t
        return self._apply_tensors(fn)

    def float(self) -> Module:
        return self.to(T.float32)

    def double(self) -> Module:
        return self.to(T.float64)

    def half(self) -> Module:
        return self.to(T.float16)

    def bfloat16(self) -> Module:
        return self.to(T.bfloat16)

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        return self.to("cuda" if device is None else f"cuda:{device}")

    # ---- hooks
    def _add_hook(self, table: str, hook: Callable, prepend: bool) -> RemovableHandle:
        d = self.__dict__
        hooks = d.setdefault(table, OrderedDict())
        h = RemovableHandle(hooks)
        hooks[h.id] = hook
        if prepend:
            hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """hook(module, args) runs before forward; a non-None result replaces args. With
        with_kwargs: hook(module, args, kwargs), returning None or (args, kwargs). prepend:
        before the hooks already there."""
        h = self._add_hook("_forward_pre_hooks", hook, prepend)
        if with_kwargs:
            self.__dict__.setdefault("_hook_kwargs", set()).add(h.id)
        return h

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
        """hook(module, args, output) runs after forward; a non-None result replaces output.
        with_kwargs: hook(module, args, kwargs, output); always_call: also when forward raises
        (with output None); prepend: before the hooks already there."""
        h = self._add_hook("_forward_hooks", hook, prepend)
        if with_kwargs:
            self.__dict__.setdefault("_hook_kwargs", set()).add(h.id)
        if always_call:
            self.__dict__.setdefault("_hook_always", set()).add(h.id)
        return h

    def register_full_backward_hook(self, hook: Callable, *, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) when the gradients of the module's tensor
        inputs are computed (grad_input: one per positional tensor input, None where none
        flows); a non-None result replaces grad_input, as PyTorch's."""
        return self._add_hook("_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, *,
                                        prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) before the module's gradients are computed; a non-None
        result replaces grad_output, as PyTorch's."""
        return self._add_hook("_backward_pre_hooks", hook, prepend)

    # ---- state
    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by qualified name (detached: same memory, no
        history; keep_vars=True gives the tensors themselves)."""
        out = OrderedDict() if destination is None else destination
        _sh.sd_pre(self, out, prefix, keep_vars)
        self._save_to_state_dict(out, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(out, prefix + name + ".", keep_vars)
        return _sh.sd_post(self, out, prefix)

    def load_state_dict(self, state_dict: Mapping[str, Tensor], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy tensors into the parameters and buffers of the same names (cast to their dtype);
        assign=True (PyTorch's) puts the given tensors themselves in their places instead (their
        dtype and device; a parameter stays a Parameter with the module's requires_grad).

        Everything is checked before anything is copied: a shape mismatch always raises, and
        with strict=True so does a missing or unexpected key (StateDictError, a ValueError and a
        RuntimeError, listing all of them). Returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"load_state_dict: expected a mapping, got {type(state_dict).__name__}")
        state_dict, strict, strict_after = _sh.load_pre(self, state_dict, strict)
        own = _sh.raw_state_dict(self)
        extra = _extra_state_owners(self, "", {})
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for k, t in own.items():
            if k not in state_dict or k in extra:
                continue
            v = state_dict[k]
            if not isinstance(v, Tensor):
                raise TypeError(f"load_state_dict: entry {k!r} is a {type(v).__name__}, not a Tensor")
            if v.shape != t.shape:
                errors.append(f"size mismatch for {k}: copying a tensor of shape {v.shape} from the "
                              f"checkpoint, the shape in the current model is {t.shape}")
            elif not assign:   # what copy_ would refuse, refused before anything is copied
                if v.dtype.kind == "c" and t.dtype.kind != "c":
                    errors.append(f"dtype mismatch for {k}: copying a {v.dtype.name} tensor from the "
                                  f"checkpoint into {t.dtype.name} would drop its imaginary parts")
                elif not t.flags.writeable:
                    errors.append(f"{k} is read-only in the current model (its memory cannot be written)")
        if strict:
            errors = _sh.key_lines(missing, unexpected) + errors
        if errors:
            raise _sh.load_error(self, errors)
        with no_grad():
            for k, t in own.items():
                if k in state_dict and k not in extra and state_dict[k] is not t:
                    v = state_dict[k]
                    if assign:
                        self._assign(k, t, v)
                    else:
                        t.copy_(v if v.device == t.device else v.to(t.device))
        for k, m in extra.items():
            if k in state_dict:
                m.set_extra_state(state_dict[k])
        return _sh.load_post(self, IncompatibleKeys(missing, unexpected), strict_after)

    def _assign(self, key: str, old: Tensor, v: Tensor) -> None:
        """load_state_dict(assign=True): v itself in the place of `key` (its module's parameter
        or buffer)."""
        path, _, name = key.rpartition(".")
        mod = self.get_submodule(path) if path else self
        if name in mod._parameters:
            mod._parameters[name] = v if is_parameter(v) and v.requires_grad == old.requires_grad \
                else Parameter(v.detach(), old.requires_grad)
        else:
            mod._buffers[name] = v

    def __setstate__(self, state: dict) -> None:
        """Unpickling: the parameters are Parameters again (the registry is by object id)."""
        self.__dict__.update(state)
        for p in self.__dict__.get("_parameters", {}).values():
            if p is not None and not is_parameter(p):
                _PARAMS.mark(p)

    def __deepcopy__(self, memo: dict) -> Module:
        """copy.deepcopy(model): parameters (still Parameters), their grads and buffers copied;
        tensors that share memory (views of one flat buffer) share it in the copy too, as
        Tensor's deepcopy keeps them (and PyTorch's)."""
        for m in self.modules():
            for t in itertools.chain(m._parameters.values(), m._buffers.values()):
                if t is not None and id(t) not in memo:
                    c = copy.deepcopy(t.detach(), memo)
                    if is_parameter(t):
                        c = Parameter(c, t.requires_grad)
                        c.grad = None if t.grad is None else copy.deepcopy(t.grad.detach(), memo)
                    memo[id(t)] = c
        new = object.__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            new.__dict__[k] = copy.deepcopy(v, memo)
        return new

    # ---- printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in repr (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()
                       if m is not None]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            s += extra_lines[0] if len(extra_lines) == 1 and not child_lines else \
                "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"

