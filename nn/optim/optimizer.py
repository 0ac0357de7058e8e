"""The Optimizer base class (param groups, step with closure, state_dict) and the launch of
the fused update kernels (the backend's optim_step: one pass over p, grad and the state
buffers, in place)."""
from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import autograd
import tensor as T
from tensor import dtypes as dt
from tensor._tensor import Tensor
from tensor.aliasing import check_writable
from tensor.backend import OPTIM_FLAGS, backend_for
from tensor.capture import island

# ---- PyTorch's implementation switches -----------------------------------------------------


def impl_flags(name: str, accepted: str, flags: dict) -> None:
    """Check the implementation switches PyTorch's optimizer `name` takes (`accepted`, a
    space-separated subset of foreach / fused / capturable / differentiable), so that its training
    scripts run unchanged. They choose how an update is computed, not what it computes: here
    every update takes the fused kernel where it can and a step is already capturable
    (tensor.capture runs it as an island), so foreach, fused and capturable are accepted and
    ignored; differentiable=True (autograd through the step) is not available."""
    for k, v in flags.items():
        if k not in accepted.split():
            raise TypeError(f"{name}.__init__() got an unexpected keyword argument {k!r}")
        if v is not None and not isinstance(v, bool):
            raise TypeError(f"{name}: {k} must be a bool or None, got {type(v).__name__}")
        if k == "differentiable" and v:
            raise NotImplementedError(f"{name}: differentiable=True (autograd through the "
                                      "optimizer step) is not supported")


# ---- fused kernels --------------------------------------------------------------------------

_MAXIMIZE, _NESTEROV, _FIRST, _MOMENTUM, _AMSGRAD, _DECOUPLED, _CENTERED, _WD = (
    OPTIM_FLAGS[k] for k in ("maximize", "nesterov", "first", "momentum", "amsgrad", "decoupled",
                             "centered", "wd"))   # the kernels' flag word (cuda_src/scalar/optim_step.h)


def _fusable(p: Tensor, g: Tensor, *bufs: Tensor | None) -> bool:
    """The fused kernels need a float32/float64 parameter, and a gradient and state buffers that
    are contiguous, on its device and shaped like it (the kernels loop over p.size elements of
    each); the state in p's dtype, the gradient too (or, in a master copy's gathered update, the
    16-bit parameter's, which the multi-tensor kernel reads). (Private fields: this runs for
    every parameter at every step.)"""
    d = p._dtype
    if (d is not dt.float32 and d is not dt.float64) or not p.is_contiguous():
        return False
    if g._dtype is not d and not (d is dt.float32 and g._dtype in _HALF
                                  and getattr(_collect, "calls", None) is not None):
        return False
    shape, dev = p._shape, p._storage.device
    for b in (g, *bufs):
        if b is not None and (b._shape != shape or (b is not g and b._dtype is not d)
                              or not b.is_contiguous() or not b._storage.device == dev):
            return False
    return True


_HALF = (dt.float16, dt.bfloat16)


_OPTIM_PTRS = {"sgd": 3, "adam": 5, "rmsprop": 5}   # leading address arguments of each kernel
_collect = threading.local()   # .calls: a list while master-weight updates are being gathered


def _launch(name: str, p: Tensor, *args) -> None:
    calls = getattr(_collect, "calls", None)
    if calls is not None:   # a master copy's update: launched with the others (_master_updates)
        calls.append((name, args))
        return
    # the kernel writes p in place, as the tensor-op path's in-place ops (which check) would
    check_writable(p, f"{name} step")
    backend_for(p.device).optim_step(name, p, *args)


def _touch(*ts: Tensor | None) -> None:
    """A kernel wrote these in place: bump their version so autograd's saved-tensor check sees it."""
    for t in ts:
        if t is not None:
            t._storage.version += 1


def _ptr(t: Tensor | None) -> int:
    return 0 if t is None else t.data_ptr()


def _zeros(p: Tensor) -> Tensor:
    return T.zeros(p.shape, dtype=p.dtype, device=p.device)


# ---- base class -----------------------------------------------------------------------------

def _hooks(opt, table: str) -> dict:
    return opt.__dict__.setdefault(table, OrderedDict())


def _with_hooks(name: str, fn):
    """fn (a step, state_dict or load_state_dict of an Optimizer class) running the hooks
    registered by register_step_pre_hook & co around it, once per outermost call (a subclass's
    method calling super()'s runs them once)."""
    def step(self, *args, **kwargs):
        if name == "step":   # read by LRScheduler.step's check of the calling order
            self.__dict__["_opt_called"] = True
        active = self.__dict__.setdefault("_hooks_active", set())
        if name in active:
            return fn(self, *args, **kwargs)
        active.add(name)
        try:
            if name == "step":
                for h in list(_hooks(self, "_step_pre").values()):
                    r = h(self, args, kwargs)
                    if r is not None:
                        if not (isinstance(r, tuple) and len(r) == 2):
                            raise RuntimeError("optimizer step pre-hook must return None or a tuple "
                                               f"(new_args, new_kwargs), got {r!r}")
                        args, kwargs = r
                out = fn(self, *args, **kwargs)
                for h in list(_hooks(self, "_step_post").values()):
                    h(self, args, kwargs)
                return out
            if name == "state_dict":
                for h in list(_hooks(self, "_sd_pre").values()):
                    h(self)
                out = fn(self, *args, **kwargs)
                for h in list(_hooks(self, "_sd_post").values()):
                    r = h(self, out)
                    out = out if r is None else r
                return out
            sd = args[0] if args else kwargs.pop("state_dict")
            for h in list(_hooks(self, "_load_pre").values()):
                r = h(self, sd)
                sd = sd if r is None else r
            out = fn(self, sd, *args[1:], **kwargs)
            for h in list(_hooks(self, "_load_post").values()):
                h(self)
            return out
        finally:
            active.discard(name)
    step.__name__, step.__qualname__, step.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    return step


class Optimizer:
    """Base class: holds `param_groups` (dicts of params + options) and per-parameter `state`.

    Subclasses set `defaults` and implement `_update(group, p, state)` for one parameter.
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("step", "state_dict", "load_state_dict"):   # hooks run around overrides too
            if name in cls.__dict__:
                setattr(cls, name, _with_hooks(name, cls.__dict__[name]))

    def _register(self, table: str, hook: Callable, prepend: bool = False):
        from .._state_hooks import add_hook
        return add_hook(_hooks(self, table), hook, prepend)

    def register_step_pre_hook(self, hook: Callable):
        """hook(optimizer, args, kwargs) before each step(); may return (new_args, new_kwargs)."""
        return self._register("_step_pre", hook)

    def register_step_post_hook(self, hook: Callable):
        """hook(optimizer, args, kwargs) after each step()."""
        return self._register("_step_post", hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """hook(optimizer) before state_dict()."""
        return self._register("_sd_pre", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """hook(optimizer, state_dict) after state_dict(); a non-None result replaces it."""
        return self._register("_sd_post", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """hook(optimizer, state_dict) before load_state_dict(); a non-None result is loaded."""
        return self._register("_load_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """hook(optimizer) after load_state_dict()."""
        return self._register("_load_post", hook, prepend)

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state: dict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got a Tensor of shape {tuple(params.shape)}")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones take the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"add_param_group: expected a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        if "params" not in group:   # PyTorch's KeyError
            raise KeyError(f"'params': a parameter group needs a 'params' entry, got the keys "
                           f"{sorted(group)}")
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs; use a list")
        params = list(params)
        named = [isinstance(p, tuple) for p in params]
        if any(named):   # PyTorch 2.x: (name, parameter) pairs, as named_parameters() gives
            if not all(named) or any(len(p) != 2 or not isinstance(p[0], str) for p in params):
                raise ValueError("all optimizer params should be with/without names (a group "
                                 "mixes (name, parameter) pairs with other entries)")
            group["param_names"] = [n for n, _ in params]
            params = [p for _, p in params]
        group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if p.dtype.kind not in "fc":
                raise TypeError(f"optimizer can only optimize floating-point and complex Tensors, got "
                                f"{p.dtype.name}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self._check_options(group)
        if len({id(p) for p in params}) != len(params):
            raise ValueError("optimizer: a parameter group contains the same parameter twice")
        for g in self.param_groups:
            if ("param_names" in g) != ("param_names" in group):
                raise ValueError("all optimizer param groups should be with/without names: cannot add "
                                 f"a param group {'with' if 'param_names' in group else 'without'} "
                                 "names to this optimizer")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def _check_options(self, group: dict[str, Any]) -> None:
        """Raise ValueError for invalid options (PyTorch's checks)."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (set to None, or fill with zeros)."""
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none or not isinstance(p.grad, Tensor):   # a sparse grad: None
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad = p.grad.detach()
                    with autograd.no_grad():
                        p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a gradient; `closure` recomputes and returns the loss.

        Inside a step compiled with tensor.compile it is an island: it runs eagerly on every
        replay, since it reads its step count, learning rate and options in Python (the step
        hooks with it)."""
        return island(_hooked_step, self, closure)

    def _step(self, closure):
        loss = None
        if closure is not None:
            with autograd.enable_grad():
                loss = closure()
        with autograd.no_grad():
            # every error raised before anything changes, in any group
            todos = [self._checked(group) for group in self.param_groups]
            for group, todo in zip(self.param_groups, todos):
                masters, gathered = [], {}
                try:
                    for p, g in todo:
                        state = self.state.get(p, {})
                        if p.dtype.kind == "c":
                            state = _complex_update(self._update, group, p, g, state)
                        elif _uses_master(group, p):
                            masters.append((p, g, state))
                        elif p.dtype in _HALF and self._half_in_float32 and isinstance(g, Tensor):
                            state = _half_update(self._update, group, p, g, state)
                        elif p.dtype is dt.float32:
                            self._gather(gathered, group, p, p, g, state)
                        else:
                            self._update(group, p, g, state)
                        if state:  # SGD without momentum keeps none, as in PyTorch
                            self.state[p] = state
                finally:   # an update whose state advanced is applied, even after an error
                    self._launch_gathered(gathered)
                if masters:
                    self._master_updates(group, masters)
        return loss

    def _checked(self, group: dict[str, Any]) -> list[tuple[Tensor, Any]]:
        """(p, its gradient) for each p of the group with one, after checking all of them (the
        gradient, that p is writable, the state's shapes and dtypes), so that a step that
        raises has changed no parameter and no state."""
        todo = []
        for p in group["params"]:
            if p.grad is None:
                continue
            g = self._grad(p)
            if not isinstance(g, Tensor):
                self._check_sparse(group)
            check_writable(p, f"{type(self).__name__}.step")
            state = self.state.get(p)
            if state:
                self._check_state(group, p, state)
            todo.append((p, g))
        return todo

    def _check_sparse(self, group: dict[str, Any]) -> None:
        """Raise when the group's options do not go with a sparse gradient (checked with the
        rest, before any parameter changes)."""

    _scalar_state = frozenset({"step", "mu_product"})   # state entries that are not p-shaped

    def _refuses_mixed(self, group: dict[str, Any]) -> bool:
        """Whether state of another float dtype than its parameter's is an error (PyTorch's
        Adam family raises) rather than used as it is (its SGD, Adagrad, Adadelta promote)."""
        return False

    def _check_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        """Refuse state that is not shaped like p (the fused kernels would run past it) or not on
        p's device (the model moved after a step), or, where PyTorch refuses it, of another
        dtype (p's changed since, e.g. by model.double())."""
        want = dt.float32 if _uses_master(group, p) else p.dtype
        name = type(self).__name__
        for k, v in state.items():
            if not isinstance(v, Tensor) or k in self._scalar_state:
                continue
            if v._shape != p._shape:
                raise ValueError(f"{name}.step: state {k!r} has shape {tuple(v.shape)}, its "
                                 f"parameter {tuple(p.shape)}")
            if v.device != p.device:
                raise ValueError(
                    f"{name}.step: state {k!r} is on {v.device} but its parameter "
                    f"{tuple(p.shape)} is on {p.device} (the model moved after a step, e.g. by "
                    "model.to(device)): move the state with opt.load_state_dict(opt.state_dict()), "
                    "or make a new optimizer")
            if v.dtype != want and self._refuses_mixed(group):
                raise TypeError(
                    f"{name}.step: state {k!r} is {v.dtype.name} but its parameter "
                    f"{tuple(p.shape)} is {want.name} (its dtype changed after a step, e.g. by "
                    "model.double(); PyTorch raises here too): cast the state with "
                    "opt.load_state_dict(opt.state_dict()), or make a new optimizer")

    def _gather(self, gathered: dict, group: dict[str, Any], p: Tensor, m: Tensor, g,
                state: dict[str, Any]) -> bool:
        """Run the algorithm's update of p on m (p itself, or its float32 master) with its
        fused kernel call gathered into `gathered` (by kernel, dtype, device and scalars)
        instead of launched; False when it updated m with tensor ops instead (nothing to
        gather). The float32 parameters' updates go through the masters' multi-tensor kernels
        too (master = parameter): one launch a group instead of one a parameter, PyTorch's
        foreach, bitwise the per-parameter kernel's."""
        _collect.calls = calls = []
        try:
            self._update(group, m, g, state)   # the algorithm's own
        finally:
            _collect.calls = None
        if not calls:
            return False
        (name, args), k = calls[0], _OPTIM_PTRS[calls[0][0]]
        gathered.setdefault((name, p.dtype, p.device, args[k + 1:]), []).append((p, args))
        return True

    @staticmethod
    def _launch_gathered(gathered: dict) -> None:
        for (name, _, device, rest), items in gathered.items():
            if len(items) == 1 and items[0][0].dtype is dt.float32:   # one tensor: its kernel
                p, args = items[0]
                backend_for(device).optim_step(name, p, *args)
                continue
            cols = [[a[j] for _, a in items] for j in range(_OPTIM_PTRS[name])]
            backend_for(device).optim_master(name, [p for p, _ in items], cols, rest[:-1],
                                             rest[-1])
        gathered.clear()

    def _master_updates(self, group: dict[str, Any], masters: list) -> None:
        """master_weights: the float32 copy of each 16-bit p (state "master", made at the first
        step, and again when p was written since the last step) takes the update with float32
        state, p the result rounded to its dtype. The algorithm's fused kernel calls are gathered
        (its _update runs on the master and the 16-bit gradient) and launched as multi-tensor
        kernels, one per (kernel, dtype, device, scalars): the backends' optim_master, which
        also writes p. An update the kernels cannot take ran as tensor ops; p is copied then."""
        gathered: dict = {}
        try:
            for p, g, state in masters:
                m = state.pop("master", None)
                if m is None or state.pop("_p_version", None) != p._storage.version:
                    m = p.astype(dt.float32).contiguous()
                if not self._gather(gathered, group, p, m, g, state):
                    p.copy_(m)
                state["master"] = m   # (after the update: a first step finds the state empty)
                self.state[p] = state
        finally:
            self._launch_gathered(gathered)
        for p, _, state in masters:
            p._storage.version += 1
            state["_p_version"] = p._storage.version

    def _update(self, group: dict[str, Any], p: Tensor, g: Tensor, state: dict[str, Any]) -> None:
        raise NotImplementedError

    _half_in_float32 = True   # a 16-bit parameter's update runs in float32 (_half_update)
    _sparse_grads = False   # whether _update takes a tensor.sparse.SparseCOO gradient
    _sparse_hint = ""       # what the refusal of one suggests instead

    def _grad(self, p: Tensor) -> Tensor:
        g = p.grad
        if not isinstance(g, Tensor) and not self._sparse_grads:
            raise RuntimeError(f"{type(self).__name__} does not support sparse gradients"
                               f"{self._sparse_hint}")
        if tuple(g.shape) != tuple(p.shape) or g.dtype is not p.dtype:
            raise ValueError(f"{type(self).__name__}.step: gradient {tuple(g.shape)} {g.dtype.name} "
                             f"does not match its parameter {tuple(p.shape)} {p.dtype.name}")
        g = g.detach()
        if not isinstance(g, Tensor):
            if g.device != p.device:
                raise ValueError(f"{type(self).__name__}.step: sparse gradient on {g.device}, "
                                 f"its parameter on {p.device}")
            return g
        if not g.is_contiguous() and p.is_contiguous():
            g = g.contiguous()  # one copy keeps the update in the fused kernel
        return g

    # -- state_dict: PyTorch's layout, parameters replaced by their index in group order --
    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}.
        State tensors are copies (a snapshot, unlike PyTorch's references)."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                if p in self.state:
                    state[index[id(p)]] = {k: v.copy() if isinstance(v, Tensor) else v
                                           for k, v in self.state[p].items() if k != "_p_version"}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load options and state saved by state_dict() (tensors are copied and cast to each
        parameter's dtype and device)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(groups)} parameter groups, the optimizer "
                             f"has {len(self.param_groups)}")
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match "
                                 "the size of optimizer's group")
        by_index = {i: (p, saved) for mine, saved in zip(self.param_groups, groups)
                    for i, p in zip(saved["params"], mine["params"])}
        state = defaultdict(dict)   # built whole, then set: a bad entry changes nothing
        for i, st in state_dict["state"].items():
            p, group = by_index.get(int(i), (None, None))
            if p is None:
                continue
            # a master-weight parameter's state is float32 (its master copy included)
            d = dt.float32 if _uses_master(group, p) else p.dtype
            state[p] = {k: _load_value(k, v, p, d, int(i), self._scalar_state) for k, v in st.items()}
            if "master" in state[p]:
                state[p]["_p_version"] = p._storage.version
        self.state = state
        self.param_groups = [{**({"param_names": mine["param_names"]} if "param_names" in mine else {}),
                              **saved, "params": mine["params"]}
                             for mine, saved in zip(self.param_groups, groups)]


def sparse_entries(p: Tensor, g) -> tuple[Tensor, Tensor]:
    """(keys into p's flat image, values) of p's sparse gradient g (a 2-D SparseCOO),
    coalesced: duplicate entries summed deterministically (a stable sort, in their order)."""
    c = g.coalesce()
    idx = c.indices()
    return idx[0] * p.shape[1] + idx[1], c.values()


def flat_update(p: Tensor, fn) -> None:
    """fn(flat view of p) updates p in place (a contiguous copy, written back, when p is not
    contiguous)."""
    c = p if p.is_contiguous() else p.contiguous()
    fn(c.reshape(-1))
    if c is not p:
        p.copy_(c)


def _uses_master(group: dict[str, Any], p: Tensor) -> bool:
    """Whether p is updated through a float32 master copy (a 16-bit float with master_weights)."""
    return bool(group.get("master_weights")) and p.dtype in (dt.float16, dt.bfloat16)


def _complex_update(update, group: dict[str, Any], p: Tensor, g: Tensor, state: dict[str, Any]) -> dict:
    """PyTorch's treatment of a complex parameter: every algorithm updates its (real, imaginary)
    pairs as real numbers (view_as_real of the parameter, its gradient and its state, zero-copy),
    and the state stays complex, shaped like the parameter (state_dict as PyTorch's)."""
    def real(v):
        return T.view_as_real(v) if isinstance(v, Tensor) and v.dtype.kind == "c" else v
    rp = T.view_as_real(p)
    rstate = {k: real(v) for k, v in state.items()}
    update(group, rp, T.view_as_real(g), rstate)
    return {k: T.view_as_complex(v) if isinstance(v, Tensor) and v.shape == rp.shape else v
            for k, v in rstate.items()}


_origin = threading.local()   # .dtype: the 16-bit dtype of the parameter _half_update runs


def param_dtype(p: Tensor):
    """The dtype of the parameter being updated: p's, or the 16-bit one whose float32 copy p is
    (in _half_update; Adafactor's default eps1 is that dtype's epsilon, as PyTorch's)."""
    return getattr(_origin, "dtype", None) or p.dtype


def _half_update(update, group: dict[str, Any], p: Tensor, g: Tensor, state: dict[str, Any]) -> dict:
    """A float16 / bfloat16 parameter without master weights: its update runs on float32 copies
    of p, its gradient and its 16-bit state, each written back (rounded to p's dtype) once; the
    state stays in p's dtype, as PyTorch's. PyTorch's 16-bit ops compute in float32 with their
    scalars in float32 too; run in 16-bit tensor ops here, every scalar (momentum 0.9, beta2
    0.999, a decay 1 - lr * weight_decay) would be rounded to 16 bits first (0.999 is 1.0 in
    bfloat16), a silently different algorithm."""
    wide = {k: v.astype(dt.float32) if isinstance(v, Tensor) and v.dtype is p.dtype else v
            for k, v in state.items()}
    p32 = p.astype(dt.float32).contiguous()
    _origin.dtype = p.dtype
    try:
        update(group, p32, g.astype(dt.float32).contiguous(), wide)
    finally:
        _origin.dtype = None
    p.copy_(p32)
    out = {}
    for k, v in wide.items():
        old = state.get(k)
        if isinstance(v, Tensor) and v is not old and v.dtype is dt.float32:
            if isinstance(old, Tensor) and old.dtype is p.dtype:
                old.copy_(v)   # (in place: the state's tensors keep their identity)
                v = old
            elif old is None:
                v = v.astype(p.dtype)
        out[k] = v
    return out


def _load_value(key: str, v, p: Tensor, dtype, index: int, scalar_keys=frozenset()):
    if key == "step":
        return int(float(v.item() if hasattr(v, "item") else v))
    if v is None:
        return None
    t = v if isinstance(v, Tensor) else T.asarray(v)
    if key not in scalar_keys and tuple(t.shape) != tuple(p.shape):
        # PyTorch fails at the next step; the fused kernels would run past the buffer
        raise ValueError(f"load_state_dict: state {key!r} of parameter {index} has shape "
                         f"{tuple(t.shape)}, the parameter {tuple(p.shape)}")
    return T.asarray(t, dtype=dtype, device=p.device).copy().contiguous()


def _check_nonneg(name: str, value: float, what: str) -> None:
    if not 0.0 <= value:
        raise ValueError(f"{name}: invalid {what}: {value}")


_hooked_step = _with_hooks("step", lambda self, *args, **kwargs: self._step(*args, **kwargs))
for _name in ("state_dict", "load_state_dict"):   # (step: its hooks run inside its island)
    setattr(Optimizer, _name, _with_hooks(_name, Optimizer.__dict__[_name]))
del _name
