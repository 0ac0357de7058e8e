"""The print options of tensors: set_printoptions, get_printoptions and the printoptions context
manager (and NumPy's text forms on the host: array2string, array_str, array_repr, savetxt,
loadtxt), with NumPy's names (precision, threshold, edgeitems, linewidth, suppress, sign,
floatmode) and PyTorch's (profile, sci_mode). They are this library's own, apart from NumPy's:
an option never set follows NumPy's current one (tensors are formatted by NumPy's array2string
on the host), and setting one here leaves NumPy's printing alone.

array_repr / array_str / array2string use them; `array2string_kwargs` gives NumPy's array2string
arguments for them, for Tensor's repr and str (tensor/interop.py) to pass.

>>> import tensor as T
>>> with T.printoptions(precision=2):
...     T.get_printoptions()["precision"]
2
"""
from __future__ import annotations

import math

from . import dtypes as dt
from .convert import asarray
from .interop import repr_of
from .numpy_extra2 import pub
from .numpy_extra3 import host_array
from .printopts import OPTS as _OPTS
from .printopts import array2string_kwargs, numpy_context
from .sorting import tensor_arg

_KEYS = ("precision", "threshold", "edgeitems", "linewidth", "suppress", "sign", "floatmode", "sci_mode",
         "nanstr", "infstr", "formatter", "legacy")
# PyTorch's profiles
_PROFILES = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80}}


def _check(name: str, v):
    if name in ("precision", "edgeitems", "linewidth"):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"set_printoptions: {name} must be an int >= 0, got {v!r}")
    elif name == "threshold":
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or v < 0:
            raise ValueError("set_printoptions: threshold must be a number >= 0 (inf: never summarise), "
                             f"got {v!r}")
    elif name == "suppress":
        if not isinstance(v, bool):
            raise TypeError(f"set_printoptions: suppress must be a bool, got {type(v).__name__}")
    elif name == "sci_mode":
        if v is not None and not isinstance(v, bool):
            raise TypeError(f"set_printoptions: sci_mode must be None or a bool, got {type(v).__name__}")
    elif name == "sign" and v not in ("-", "+", " "):
        raise ValueError(f"set_printoptions: sign must be '-', '+' or ' ', got {v!r}")
    elif name == "floatmode" and v not in ("fixed", "unique", "maxprec", "maxprec_equal"):
        raise ValueError("set_printoptions: floatmode must be 'fixed', 'unique', 'maxprec' or "
                         f"'maxprec_equal', got {v!r}")


@pub()
def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, suppress=None,
                     nanstr=None, infstr=None, formatter=None, sign=None, floatmode=None, *, legacy=None,
                     profile=None, sci_mode=None) -> None:
    """Sets the options given (None leaves one as it is, except formatter, which every call
    resets, as NumPy's); profile ('default', 'short', 'full': PyTorch's) first sets its group,
    then the others given apply. sci_mode True prints floats in scientific notation, False never
    (NumPy's suppress), None as the values suggest. nanstr, infstr, formatter (a dict of
    callables by kind) and legacy are NumPy's. A bad value raises and changes no option."""
    saved = dict(_OPTS)
    try:
        _set_options(precision, threshold, edgeitems, linewidth, suppress, nanstr, infstr, formatter,
                     sign, floatmode, legacy, profile, sci_mode)
    except BaseException:   # (the options were set while checked: none of them stays)
        _OPTS.clear()
        _OPTS.update(saved)
        raise


def _set_options(precision, threshold, edgeitems, linewidth, suppress, nanstr, infstr, formatter,
                 sign, floatmode, legacy, profile, sci_mode) -> None:
    for name, v in (("nanstr", nanstr), ("infstr", infstr)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"set_printoptions: {name} must be a str, got {type(v).__name__}")
    if formatter is not None and not isinstance(formatter, dict):
        raise TypeError(f"set_printoptions: formatter must be a dict of callables, got "
                        f"{type(formatter).__name__}")
    _OPTS["formatter"] = formatter
    for name, v in (("nanstr", nanstr), ("infstr", infstr), ("legacy", legacy)):
        if v is not None:
            _OPTS[name] = v
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        _OPTS.update(_PROFILES[profile])
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth,
                 suppress=suppress, sign=sign, floatmode=floatmode)
    for k, v in given.items():
        if v is not None:
            _check(k, v)
            _OPTS[k] = v
    if sci_mode is not None or profile is not None:
        _check("sci_mode", sci_mode)
        _OPTS["sci_mode"] = sci_mode


def _numpy_options() -> dict:
    import numpy as np
    o = np.get_printoptions()
    return {"precision": o["precision"], "threshold": 1000, "edgeitems": o["edgeitems"],
            "linewidth": o["linewidth"], "suppress": o["suppress"], "sign": o["sign"],
            "floatmode": o["floatmode"], "nanstr": o["nanstr"], "infstr": o["infstr"],
            "formatter": o["formatter"], "legacy": o["legacy"], "sci_mode": None}


@pub()
def get_printoptions() -> dict:
    """The current options (those never set: NumPy's current ones; threshold 1000)."""
    return {**_numpy_options(), **_OPTS}


class _Scoped:
    """set_printoptions(**kwargs) for a with block; the options before it restored after."""

    def __init__(self, kwargs: dict):
        self._kwargs, self._saved = kwargs, None

    def __enter__(self) -> dict:
        self._saved = dict(_OPTS)
        try:
            set_printoptions(**self._kwargs)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return get_printoptions()

    def __exit__(self, *exc) -> None:
        _OPTS.clear()
        _OPTS.update(self._saved)


@pub()
def printoptions(**kwargs):
    """A context manager: set_printoptions(**kwargs) inside the with block, the previous options
    restored after it (`with T.printoptions(precision=3) as opts:`, opts the options inside)."""
    return _Scoped(kwargs)


# ---------------------------------------------------------------- text forms (NumPy's, on the host)


def _host_array(a, op: str):
    t = tensor_arg(a, op)
    if t.dtype is dt.bfloat16:   # (NumPy has no bfloat16: its values are exact in float32)
        t = t.astype(dt.float32)
    return host_array(t, op)


@pub()
def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ", prefix="",
                 **kwargs) -> str:
    """The values of a as text, by NumPy's array2string (its keyword arguments); the options
    set here fill the ones not given."""
    import numpy as np
    kw = {**array2string_kwargs(), **kwargs}
    for k, v in (("max_line_width", max_line_width), ("precision", precision),
                 ("suppress_small", suppress_small)):
        if v is not None:
            kw[k] = v
    with numpy_context():
        return np.array2string(_host_array(a, "array2string"), separator=separator, prefix=prefix, **kw)


@pub()
def array_str(a, max_line_width=None, precision=None, suppress_small=None) -> str:
    """str(a) with these options: the values only, as NumPy's array_str."""
    return array2string(a, max_line_width, precision, suppress_small)


@pub()
def array_repr(arr, max_line_width=None, precision=None, suppress_small=None) -> str:
    """repr(arr) with these options: tensor([...], dtype=..., device=...)."""
    t = tensor_arg(arr, "array_repr")
    body = array2string(t, max_line_width, precision, suppress_small, separator=", ", prefix="tensor(",
                        **({} if "threshold" in _OPTS else {"threshold": 1000}))
    return repr_of(t, body)


@pub()
def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="", comments="# ",
            encoding=None) -> None:
    """Writes a 1-d or 2-d tensor to a text file, one row a line, by NumPy's savetxt."""
    import numpy as np
    x = _host_array(X, "savetxt")
    if x.ndim not in (1, 2):
        raise ValueError(f"savetxt: expects a 1-d or 2-d tensor, got shape {x.shape}")
    np.savetxt(fname, x, fmt=fmt, delimiter=delimiter, newline=newline, header=header, footer=footer,
               comments=comments, encoding=encoding)


@pub()
def loadtxt(fname, dtype=None, *args, device=None, **kwargs):
    """A tensor of a text file's numbers, by NumPy's loadtxt (its arguments; dtype float64 when
    None), on device."""
    import numpy as np
    d = dt.float64 if dtype is None else dt.dtype(dtype)
    if d.np is None:
        raise TypeError(f"loadtxt: cannot read {d.name} (no NumPy dtype); read float32 and cast")
    return asarray(np.ascontiguousarray(np.loadtxt(fname, d.np, *args, **kwargs)), device=device)
