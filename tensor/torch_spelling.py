"""PyTorch's spellings of the NumPy-rooted functions, so code written for torch runs unchanged:
the keywords `keepdim` (NumPy's keepdims), `dim` (axis), `dims` (flip, roll), `shifts` (roll),
`diagonal` (triu, tril), `unbiased` (std, var), `alpha` (add, sub), `as_tuple` (nonzero), and
the forms where PyTorch's answer differs from NumPy's, chosen by a keyword only PyTorch has
(`dim` / `keepdim`, an `out=(values, indices)` pair), never by position (where NumPy's meaning
stays; a bool where NumPy's dtype goes, x.sum(1, True), is PyTorch's keepdim, as no dtype is a
bool: x.std(1, True) PyTorch's unbiased):

- max / min / median / nanmedian with dim= (one int) or keepdim=: the (values, indices) named
  pair (median the lower of the two middle values; the gradient goes to the index, as
  PyTorch's); max(x, other) / min(x, other=...): the element-wise maximum / minimum;
- sort(x, dim=...): (values, indices); x.sort(dim=..., descending=...) too, and x.sort(axis=...)
  sorts in place as NumPy's (a bare x.sort() is refused: the two libraries disagree);
- a reduction's dim=0 / -1 of a 0-d tensor is the whole of it (PyTorch's; NumPy's axis=0 raises);
- split(x, n, dim=...): pieces of n (or of the listed sizes) as torch.split (x.split(n) is
  PyTorch's always: NumPy arrays have no split method);
- squeeze(x, dim=...): dims whose size is not 1 stay (NumPy raises for them);
- std / var with dim= (None too), keepdim= or unbiased=: PyTorch's default correction 1 unless
  ddof / correction says otherwise;
- nonzero(x, as_tuple=False): the (n, ndim) index matrix.

apply(PUB) installs the wrappers (tensor/public.py, once every function is published).

>>> import tensor as T
>>> x = T.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
>>> v, i = x.max(dim=1)
>>> v.tolist(), i.tolist(), x.sum(dim=1, keepdim=True).shape
([5.0, 7.0], [1, 0], (2, 1))
"""
from __future__ import annotations

import functools
import inspect
import operator
from typing import NamedTuple

from . import _hook
from ._tensor import Tensor
from .torch_extra2 import split as torch_split


class MaxResult(NamedTuple):
    values: Tensor
    indices: Tensor


class MinResult(NamedTuple):
    values: Tensor
    indices: Tensor


class MedianResult(NamedTuple):
    values: Tensor
    indices: Tensor


class SortResult(NamedTuple):
    values: Tensor
    indices: Tensor


_UNSET = object()

# keyword renames where the meaning is the same (besides the generic keepdim and dim ones)
_RENAMES = {"flip": {"dims": "axis"}, "roll": {"dims": "axis", "shifts": "shift"},
            "triu": {"diagonal": "k"}, "tril": {"diagonal": "k"}}
# their own wrappers below (the answer's form differs with PyTorch's keywords)
_OWN = {"max", "min", "median", "nanmedian", "sort", "split", "squeeze", "std", "var", "nonzero",
        "add", "sub", "subtract", "add_", "sub_", "subtract_"}


def _like(f, fn):
    """f dressed as fn (name, doc, signature). A composite (fn without __wrapped__, its steps
    recorded each) stays one: no __wrapped__ on f either (tests/test_optable.py checks it)."""
    functools.update_wrapper(f, fn)
    f.__spelled__ = fn   # the function it wraps (tests compare it with its module's)
    if not hasattr(fn, "__wrapped__"):
        del f.__wrapped__
        try:
            f.__signature__ = inspect.signature(fn)
        except (TypeError, ValueError):
            pass
    return f


def _renaming(fn, name: str, renames: dict, reduction: bool = False, bool_keepdim: bool = False):
    """fn taking PyTorch's keyword names too (renames: PyTorch's -> fn's). A reduction (fn has
    keepdims) also takes dim=0 / -1 of a 0-d tensor, as PyTorch's: the whole tensor.
    bool_keepdim: fn(x, axis, dtype, keepdims...) (sum, mean...) reads a bool where the dtype
    goes as PyTorch's positional keepdim (x.sum(1, True); no dtype is True or False)."""
    theirs = frozenset(renames) | ({"dim"} if reduction else set())
    dim_to = renames.get("dim", "dim")   # where dim= lands (fn's own dim= when it has one)

    def rename(args, kwargs):
        dim_given = "dim" in kwargs
        for their, ours in renames.items():
            if their in kwargs:
                if ours in kwargs:
                    raise TypeError(f"{name}: got both {their}= (PyTorch's) and {ours}= (NumPy's)")
                kwargs[ours] = kwargs.pop(their)
        if reduction and dim_given and args and _scalar_dim(args[0], kwargs[dim_to]):
            kwargs[dim_to] = None

    def f(*args, **kwargs):
        if kwargs and not theirs.isdisjoint(kwargs):   # (one C call when no keyword is PyTorch's)
            rename(args, kwargs)
        return fn(*args, **kwargs)

    def g(*args, **kwargs):
        if len(args) == 3 and args[2].__class__ is bool:
            if "keepdims" in kwargs or "keepdim" in kwargs:
                raise TypeError(f"{name}: keepdim given twice (positional and keyword)")
            args, kwargs["keepdims"] = args[:2], args[2]
        if kwargs and not theirs.isdisjoint(kwargs):
            rename(args, kwargs)
        return fn(*args, **kwargs)
    return _like(g if bool_keepdim else f, fn)


def _scalar_dim(x, d) -> bool:
    """d names the one dim PyTorch lets a 0-d tensor have (0 or -1, alone or in a 1-tuple)."""
    if getattr(x, "ndim", None) != 0:
        return False
    if isinstance(d, tuple | list) and len(d) == 1:
        d = d[0]
    return _one_dim(d) and operator.index(d) in (0, -1)


def _params(fn) -> dict:
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}


def _one_dim(d) -> bool:
    try:
        operator.index(d)
        return True
    except TypeError:
        return False


def _keep(keepdims, keepdim, name) -> bool:
    """keepdims (NumPy's) or keepdim (PyTorch's), at most one given; False for neither."""
    if keepdim is None:
        return False if keepdims is _UNSET else keepdims
    if keepdims is not _UNSET and keepdims is not None:
        raise TypeError(f"{name}: got both keepdim= (PyTorch's) and keepdims= (NumPy's)")
    return bool(keepdim)


def _minmax(PUB, name: str, pair, result):
    red, arg, elementwise = PUB[name], PUB["arg" + name], PUB[pair]

    def f(x, axis=None, keepdims=_UNSET, *, dim=None, keepdim=None, out=None, other=None):
        if other is not None:   # torch.max(input, other=...)
            if axis is not None or dim is not None or keepdims is not _UNSET or keepdim is not None:
                raise TypeError(f"{name}: other= (element-wise) takes no axis, dim or keepdim")
            axis = other
        if other is not None or isinstance(axis, Tensor):   # torch.max(input, other): element-wise
            return elementwise(x, axis) if out is None else elementwise(x, axis, out=out)
        keep = _keep(keepdims, keepdim, name)
        torch_form = ((dim is not None or keepdim is not None or isinstance(out, tuple | list))
                      and (dim is None or axis is None) and _one_dim(dim if dim is not None else axis))
        if not torch_form:
            kw = {"dim": dim} if dim is not None else {}
            return red(x, axis, keep, **kw) if out is None else red(x, axis, keep, out=out, **kw)
        r = _arg_pick(PUB, red, arg, x, dim if dim is not None else axis, keep, name, result)
        return r if out is None else _into(out, r, name)
    return _like(f, red)


def _arg_pick(PUB, red, arg, x, d, keep: bool, name: str, result):
    """torch.max / min(x, dim): for a tensor autograd follows, the values gathered at arg's
    indices, so that a gradient flows to the one element picked (PyTorch's rule; amax's splits
    it among ties); otherwise the reduction's values (the same numbers, ~8x quicker)."""
    x = _tensor(x)
    if x.ndim == 0:
        return _scalar_pair(PUB, x, d, name, result)
    if not _followed(x):
        return result(red(x, dim=d, keepdims=keep), arg(x, dim=d, keepdims=keep))
    idx = arg(x, dim=d, keepdims=True)
    vals = PUB["take_along_axis"](x, idx, d)
    if not keep:
        vals, idx = PUB["squeeze"](vals, d), PUB["squeeze"](idx, d)
    return result(vals, idx)


def _followed(x) -> bool:
    """Whether autograd follows x here: x requires grad (or carries a tangent) and grad mode is
    on (or a forward-mode level is open)."""
    if not (x._requires_grad or x._ag is not None):
        return False
    g = _hook.grad_state
    return g is None or g.grad_enabled or bool(g.fw_level)


def _scalar_pair(PUB, x, d, name: str, result):
    """PyTorch's (values, indices) along dim 0 / -1 of a 0-d tensor: (a copy of x, 0)."""
    from .axes import norm_axis
    from .creation import zeros
    norm_axis(d, 1, name)
    return result(PUB["copy"](x), zeros((), dtype="int64", device=x.device))


def _tensor(x):
    if isinstance(x, Tensor):
        return x
    from .convert import asarray
    return asarray(x)


def _into(out, r, name):
    """PyTorch's out=(values, indices): each checked as NumPy's and PyTorch's out= are (dtype
    castable, shape, device), then written."""
    from . import elementwise as ew
    if not isinstance(out, tuple | list) or len(out) != 2:
        raise TypeError(f"{name}: out= must be a (values, indices) pair with dim=")
    for o, v in zip(out, r):
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}: out= must be a pair of tensors, got {type(o).__name__}")
        ew._prepare_out(name, o, v.shape, v.dtype, v.device)
        o[...] = v
    return type(r)(*out)


def _median(PUB, name: str, skip_nan: bool):
    numpy_form = PUB[name]

    def f(x, axis=None, keepdims=_UNSET, *, dim=None, keepdim=None, out=None):
        keep = _keep(keepdims, keepdim, name)
        d = dim if dim is not None else axis
        if ((dim is None and keepdim is None and out is None) or (dim is not None and axis is not None)
                or not _one_dim(d)):
            if out is not None:
                raise TypeError(f"{name}: out= is PyTorch's (values, indices) pair, with one dim")
            return numpy_form(x, axis, keep, **({"dim": dim} if dim is not None else {}))
        r = _lower_median(PUB, x, operator.index(d), keep, skip_nan, name)
        return r if out is None else _into(out, r, name)
    return _like(f, numpy_form)


def _lower_median(PUB, x, d: int, keep: bool, skip_nan: bool, name: str):
    """torch.median / nanmedian along d: the lower middle value and its index; a NaN in a slice
    gives NaN (at a NaN's index) for median, is left out by nanmedian."""
    from .axes import norm_axis
    x = _tensor(x)
    if x.ndim == 0:   # (a 0-d tensor has PyTorch's dim 0 / -1)
        return _scalar_pair(PUB, x, d, name, MedianResult)
    a = norm_axis(d, x.ndim, name)
    if x.shape[a] == 0:
        raise IndexError(f"{name}: dim {d} of shape {x.shape} is empty: no median")
    order = PUB["argsort"](x, axis=a)               # stable, NaN last
    nans = PUB["sum"](PUB["isnan"](x), axis=a, keepdims=True)
    n = x.shape[a]
    valid = n - nans                                 # the non-NaN count
    if skip_nan:
        k = PUB["maximum"](valid - 1, 0) // 2
    else:                                            # a NaN: the first NaN, at position valid
        k = PUB["where"](nans > 0, valid, (n - 1) // 2)
    idx = PUB["take_along_axis"](order, k, a)
    vals = PUB["take_along_axis"](x, idx, a)
    if not keep:
        vals, idx = PUB["squeeze"](vals, a), PUB["squeeze"](idx, a)
    return MedianResult(vals, idx)


def _sort(PUB):
    numpy_form = PUB["sort"]

    def f(x, /, axis=_UNSET, kind=None, order=None, *, descending=False, stable=True, dim=None, out=None):
        if dim is None and out is None:
            return numpy_form(x, -1 if axis is _UNSET else axis, kind, order, descending=descending,
                              stable=stable)
        x = _tensor(x)   # PyTorch's (dim= or out=(values, indices)): the pair
        d = _axis_or_dim(axis, dim, -1, "sort")
        if x.ndim == 0:
            r = _scalar_pair(PUB, x, d, "sort", SortResult)
        else:
            idx = PUB["argsort"](x, axis=d, descending=descending, stable=True)
            # values gathered at the indices where autograd follows x (the gradient goes back
            # through them), else sorted again (the same values, ~5x quicker than the gather)
            r = SortResult(PUB["take_along_axis"](x, idx, d) if _followed(x)
                           else numpy_form(x, d, descending=descending, stable=True), idx)
        return r if out is None else _into(out, r, "sort")
    return _like(f, numpy_form)


def _sort_method(PUB):
    fn = PUB["sort"]

    def sort(self, *args, **kwargs):
        """x.sort(dim=-1, descending=False, stable=False): PyTorch's (values, indices);
        x.sort(axis=-1): NumPy's in-place sort (returns None). A bare x.sort() or a positional
        axis is refused: NumPy sorts in place there, PyTorch returns a pair."""
        if "axis" in kwargs or "kind" in kwargs:
            if args or {"dim", "descending"} & kwargs.keys():
                raise TypeError("x.sort: give NumPy's axis= or PyTorch's dim=, not both")
            self[...] = fn(self, kwargs.get("axis", -1), kwargs.get("kind"))
            return None
        if "dim" in kwargs or "descending" in kwargs or "stable" in kwargs:
            if len(args) > 1:
                raise TypeError("x.sort: at most one positional argument (dim)")
            dim = args[0] if args else kwargs.pop("dim", -1)
            kwargs.pop("stable", None)
            return fn(self, dim=dim, descending=kwargs.pop("descending", False), **kwargs)
        raise TypeError("x.sort(): NumPy's sorts x in place and returns None, PyTorch's returns "
                        "(values, indices); say which: x.sort(dim=-1) (PyTorch's), x.sort(axis=-1) "
                        "(NumPy's, in place) or T.sort(x, axis) (a sorted copy)")
    return sort


def _axis_or_dim(axis, dim, default, name: str):
    if axis is not _UNSET and dim is not None:
        raise TypeError(f"{name}: give axis (NumPy's) or dim (PyTorch's), not both")
    return dim if dim is not None else (default if axis is _UNSET else axis)


def _split(PUB):
    numpy_form = PUB["split"]

    def f(x, indices_or_sections, axis=_UNSET, *, dim=None):
        if dim is None:
            return numpy_form(x, indices_or_sections, 0 if axis is _UNSET else axis)
        # PyTorch's pieces (x.split's)
        return torch_split(x, indices_or_sections, _axis_or_dim(axis, dim, 0, "split"))
    return _like(f, numpy_form)


def _squeeze(PUB):
    numpy_form = PUB["squeeze"]

    def f(x, axis=None, *, dim=None):
        if dim is None:
            return numpy_form(x, axis)
        if axis is not None:
            raise TypeError("squeeze: give axis (NumPy's) or dim (PyTorch's), not both")
        dims = (dim,) if _one_dim(dim) else tuple(dim)
        x = _tensor(x)
        from .axes import norm_axis
        keep = tuple(norm_axis(d, max(x.ndim, 1), "squeeze") for d in dims)
        ones = tuple(d for d in keep if x.ndim and x.shape[d] == 1)   # PyTorch: others stay
        return numpy_form(x, ones) if ones else (numpy_form(x, ()) if x.ndim else x)
    return _like(f, numpy_form)


def _moments(PUB, name: str):
    numpy_form = PUB[name]

    def f(x, axis=None, dtype=None, ddof=_UNSET, keepdims=_UNSET, *, correction=None, dim=_UNSET,
          keepdim=None, unbiased=None, out=None):
        if dtype.__class__ is bool:   # PyTorch's positional x.std(dim, unbiased, keepdim)
            if unbiased is not None:
                raise TypeError(f"{name}: unbiased given twice (positional and keyword)")
            dtype, unbiased = None, dtype
            if ddof.__class__ is bool:
                if keepdim is not None:
                    raise TypeError(f"{name}: keepdim given twice (positional and keyword)")
                ddof, keepdim = _UNSET, ddof
        keep = _keep(keepdims, keepdim, name)
        if unbiased is not None:
            if ddof is not _UNSET or correction is not None:
                raise TypeError(f"{name}: give one of unbiased= (PyTorch's), correction= or ddof=")
            correction = 1 if unbiased else 0
        elif ddof is not _UNSET and correction is not None and ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't both be given (as NumPy's)")
        elif ddof is _UNSET and correction is None and (dim is not _UNSET or keepdim is not None):
            correction = 1   # PyTorch's default (dim=None too, as f(x, dim=None) passes it)
        ddof = 0 if ddof is _UNSET else ddof
        dim = None if dim is _UNSET else dim
        if dim is not None and _scalar_dim(x, dim):
            dim = None   # PyTorch's dim 0 / -1 of a 0-d tensor: the whole of it
        kw = {} if out is None else {"out": out}   # (NumPy's np.std(t) passes out=None)
        return numpy_form(x, axis, dtype, ddof, keep, correction=correction, dim=dim, **kw)
    return _like(f, numpy_form)


def _nonzero(PUB):
    numpy_form = PUB["nonzero"]

    def f(x, *, as_tuple=None):
        if as_tuple is None:
            return numpy_form(x)
        if as_tuple:   # PyTorch's: a 0-d tensor reads as 1-d ((tensor([0]),) where it is nonzero)
            return numpy_form(PUB["atleast_1d"](x) if getattr(x, "ndim", 1) == 0 else x)
        return PUB["argwhere"](x)
    return _like(f, numpy_form)


def _alpha(fn, PUB):
    def f(a, b, *args, alpha=None, **kwargs):
        if alpha is not None and alpha != 1:
            # a Python number stays one (weak: float32 x + 1 * 2 stays float32, as PyTorch's)
            b = b * alpha if isinstance(b, int | float | complex) else PUB["multiply"](b, alpha)
        return fn(a, b, *args, **kwargs)
    return _like(f, fn)


def apply(PUB: dict) -> dict:
    """Wrap PUB's functions to take PyTorch's spellings (in place; a function published under
    several names gets one wrapper); returns the Tensor methods that differ from the functions
    (sort, split)."""
    done: dict = {}   # id(function) -> its wrapper

    def wrap(name, make):
        fn = PUB[name]
        w = done.get(id(fn))
        if w is None:
            w = done[id(fn)] = make(fn)
        PUB[name] = w

    for name, fn in list(PUB.items()):
        if name in _OWN or not callable(fn):
            continue
        ps = _params(fn)
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps.values()):
            continue
        renames = dict(_RENAMES.get(name, {}))
        if "keepdims" in ps and "keepdim" not in ps:
            renames["keepdim"] = "keepdims"
        if "axis" in ps and "dim" not in ps:
            renames["dim"] = "axis"
        if renames:
            order = list(ps)[2:4]
            wrap(name, lambda f, n=name, r=renames, red="keepdims" in ps,
                 b=order == ["dtype", "keepdims"]: _renaming(f, n, r, red, b))
    PUB["max"] = _minmax(PUB, "max", "maximum", MaxResult)
    PUB["min"] = _minmax(PUB, "min", "minimum", MinResult)
    PUB["median"] = _median(PUB, "median", False)
    PUB["nanmedian"] = _median(PUB, "nanmedian", True)
    PUB["sort"] = _sort(PUB)
    PUB["split"] = _split(PUB)
    PUB["squeeze"] = _squeeze(PUB)
    PUB["std"], PUB["var"] = _moments(PUB, "std"), _moments(PUB, "var")
    PUB["nonzero"] = _nonzero(PUB)
    for name in ("add", "sub", "subtract", "add_", "sub_", "subtract_"):
        wrap(name, lambda f: _alpha(f, PUB))
    return {"sort": _sort_method(PUB)}
