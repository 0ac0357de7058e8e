"""Module's state_dict / load_state_dict hooks, as torch.nn.Module's: register_state_dict_pre_hook,
register_state_dict_post_hook, register_load_state_dict_pre_hook,
register_load_state_dict_post_hook and the private _register_state_dict_hook and
_register_load_state_dict_pre_hook that libraries built on PyTorch use.

Module.state_dict runs `sd_pre` and `sd_post` around each module's entries; load_state_dict
runs `load_pre` (every module's pre-hooks, on a copy of the given mapping that they may edit)
before it checks and copies anything, and `load_post` (the post-hooks, which may edit the
missing / unexpected key lists in place) before its strict check.

>>> import nn
>>> m = nn.Linear(2, 2)
>>> def drop_bias(mod, sd, prefix, meta):
...     del sd[prefix + "bias"]
>>> h = m.register_state_dict_post_hook(drop_bias)
>>> list(m.state_dict())
['weight']
"""
from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class RemovableHandle:
    """Returned by register_*_hook: remove() unregisters the hook (also as a context manager)."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._refer(hooks)
        self.id = next(RemovableHandle._ids)

    def _refer(self, hooks: dict) -> None:
        try:   # (OrderedDict takes weak references without showing __weakref__)
            self.hooks_ref = weakref.ref(hooks)
        except TypeError:
            self.hooks_ref = lambda: hooks

    def __getstate__(self):   # picklable, as PyTorch's (with the module holding the hooks)
        return {"hooks": self.hooks_ref(), "id": self.id}

    def __setstate__(self, state) -> None:
        self.id = state["id"]
        self._refer(state["hooks"] if state["hooks"] is not None else OrderedDict())

    def remove(self) -> None:
        hooks = self.hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class StateDictError(ValueError, RuntimeError):
    """load_state_dict: missing, unexpected or mis-shaped entries (a ValueError, and a
    RuntimeError as PyTorch raises)."""


_EXTRA_STATE = "_extra_state"


def load_error(module, lines: list) -> StateDictError:
    """load_state_dict's error listing `lines` (PyTorch's wording)."""
    return StateDictError(f"Error(s) in loading state_dict for {module._get_name()}:\n\t"
                          + "\n\t".join(map(str, lines)))


def key_lines(missing: list, unexpected: list) -> list:
    """The strict check's lines: the missing and the unexpected keys, where there are any."""
    return [f"{what} key(s) in state_dict: " + ", ".join(map(repr, keys))
            for what, keys in (("Missing", missing), ("Unexpected", unexpected)) if keys]


def _has_extra_state(m) -> bool:
    """Whether m's class overrides get_extra_state (then state_dict stores what it returns)."""
    return type(m).get_extra_state is not StateHooks.get_extra_state


def add_hook(hooks: OrderedDict, hook: Callable, prepend: bool = False) -> RemovableHandle:
    """Register hook in the table hooks (first with prepend): its handle removes it."""
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    if prepend:
        hooks.move_to_end(h.id, last=False)
    return h


def _table(m, name: str) -> OrderedDict:
    return m.__dict__.setdefault(name, OrderedDict())


class StateHooks:
    """The state_dict machinery Module inherits: extra state, the per-module save / load steps
    and the hook registration methods."""

    _version = 1   # PyTorch's: stored per module in state_dict()._metadata

    def get_extra_state(self) -> Any:
        """Override, with set_extra_state, to keep state that is not a parameter or buffer
        (any value save/load can store) in state_dict, under the key '_extra_state' of this
        module; load_state_dict hands it back to set_extra_state. As PyTorch's."""
        raise RuntimeError(f"{self._get_name()}.get_extra_state: not overridden; define "
                           "get_extra_state and set_extra_state to store extra state")

    def set_extra_state(self, state: Any) -> None:
        """Restore what get_extra_state returned (see there)."""
        raise RuntimeError(f"{self._get_name()}.set_extra_state: not overridden; define "
                           "get_extra_state and set_extra_state to load extra state")

    def _state_hook(self, table: str, hook: Callable, prepend: bool = False):
        return add_hook(_table(self, table), hook, prepend)

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        """Put this module's own entries (not its submodules') in destination: its parameters,
        persistent buffers and extra state, as PyTorch's; a subclass may override it."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        if _has_extra_state(self):
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def _load_from_state_dict(self, state_dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """PyTorch's per-module loading step. Here load_state_dict loads the whole model at
        once (after checking everything), so this base does nothing; a subclass's override
        runs before that loading, like a load pre-hook: it may edit state_dict (rename or
        convert its entries, then call super()) and append to error_msgs."""

    def register_state_dict_pre_hook(self, hook: Callable):
        """hook(module, prefix, keep_vars) before this module's state_dict entries are made."""
        return self._state_hook("_sd_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook: Callable):
        """hook(module, state_dict, prefix, local_metadata) after this module's (and its
        submodules') entries are in state_dict; it may edit state_dict in place and must
        return None."""
        return self._state_hook("_sd_post_hooks", (hook, True))

    def _register_state_dict_hook(self, hook: Callable):
        """As register_state_dict_post_hook, but a non-None result replaces the state dict."""
        return self._state_hook("_sd_post_hooks", (hook, False))

    def register_load_state_dict_pre_hook(self, hook: Callable):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) before anything is loaded; it may edit state_dict (a copy
        of the mapping given to load_state_dict) and append to error_msgs."""
        return self._state_hook("_load_pre_hooks", (hook, True))

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False):
        """As register_load_state_dict_pre_hook, the hook without the module argument unless
        with_module."""
        return self._state_hook("_load_pre_hooks", (hook, with_module))

    def register_load_state_dict_post_hook(self, hook: Callable):
        """hook(module, incompatible_keys) after loading, before load_state_dict's strict check:
        it may remove entries of incompatible_keys.missing_keys / unexpected_keys in place, and
        must return None."""
        return self._state_hook("_load_post_hooks", hook)


def raw_state_dict(module) -> OrderedDict:
    """module.state_dict(keep_vars=True) as Module's own saving makes it: without the
    state_dict hooks and _save_to_state_dict overrides (what load_state_dict checks against;
    PyTorch's loading ignores them too)."""
    out: OrderedDict = OrderedDict()
    for m, prefix in _walk(module, ""):
        StateHooks._save_to_state_dict(m, out, prefix, True)
    return out


def _metadata(m) -> dict:
    return {"version": getattr(type(m), "_version", 1)}


def sd_pre(m, out, prefix: str, keep_vars: bool) -> None:
    if hasattr(out, "__dict__"):   # PyTorch's per-module versions (_load_from_state_dict reads
        out.__dict__.setdefault("_metadata", OrderedDict())[prefix[:-1]] = _metadata(m)   # them)
    for hook in list(m.__dict__.get("_sd_pre_hooks", {}).values()):
        hook(m, prefix, keep_vars)


def sd_post(m, out, prefix: str):
    for hook, public in list(m.__dict__.get("_sd_post_hooks", {}).values()):
        r = hook(m, out, prefix, _metadata(m))
        if r is not None:
            if public:
                raise RuntimeError("state_dict post-hook must return None (edit the state dict "
                                   f"in place), got a {type(r).__name__}")
            out = r
    return out


def _walk(m, prefix: str, post_order: bool = False):
    """(module, its key prefix) as load_state_dict visits them (no de-duplication)."""
    if not post_order:
        yield m, prefix
    for name, c in m._modules.items():
        if c is not None:
            yield from _walk(c, prefix + name + ".", post_order)
    if post_order:
        yield m, prefix


def _overrides_load(m) -> bool:
    return type(m)._load_from_state_dict is not StateHooks._load_from_state_dict


def load_pre(module, state_dict, strict: bool):
    """Run the load pre-hooks; returns (the mapping to load, the strictness of the checks
    before copying, the strictness after the post-hooks or None when there are none)."""
    has_pre = any(m.__dict__.get("_load_pre_hooks") or _overrides_load(m)
                  for m, _ in _walk(module, ""))
    has_post = any(m.__dict__.get("_load_post_hooks") for m, _ in _walk(module, ""))
    if not (has_pre or has_post):
        return state_dict, strict, None
    sd = OrderedDict(state_dict)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        sd._metadata = meta
    if has_pre:
        own = raw_state_dict(module)
        missing = [k for k in own if k not in sd]
        unexpected = [k for k in sd if k not in own]
        errors: list = []
        for m, prefix in _walk(module, ""):
            local = (meta or {}).get(prefix[:-1], {})
            for hook, with_module in list(m.__dict__.get("_load_pre_hooks", {}).values()):
                args = (sd, prefix, local, strict, missing, unexpected, errors)
                hook(m, *args) if with_module else hook(*args)
            if _overrides_load(m):
                m._load_from_state_dict(sd, prefix, local, strict, missing, unexpected, errors)
        if errors:
            raise load_error(module, errors)
    return sd, (strict and not has_post), (strict if has_post else None)


def load_post(module, keys, strict_after):
    """Run the load post-hooks (children first), then the strict check they could affect."""
    if strict_after is None:
        return keys
    for m, _ in _walk(module, "", post_order=True):
        for hook in list(m.__dict__.get("_load_post_hooks", {}).values()):
            if hook(m, keys) is not None:
                raise RuntimeError("load_state_dict post-hook must return None (edit "
                                   "incompatible_keys in place)")
    if strict_after and (keys.missing_keys or keys.unexpected_keys):
        raise load_error(module, key_lines(keys.missing_keys, keys.unexpected_keys))
    return keys
