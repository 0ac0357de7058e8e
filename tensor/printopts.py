"""The print options set by tensor.set_printoptions (tensor/printing.py), as NumPy's
array2string arguments: a leaf module, so that Tensor's repr and str (tensor/interop.py) use
them without importing the op layer."""
from __future__ import annotations

import math
import sys

OPTS: dict = {}   # the options set (an unset one follows NumPy's)


def array2string_kwargs(threshold=None) -> dict:
    """numpy.array2string's keyword arguments for the options set (threshold: the default one
    when it was not set)."""
    o = OPTS
    kw: dict = {}
    th = o.get("threshold", threshold)
    if th is not None:
        kw["threshold"] = sys.maxsize if th == math.inf else int(th)
    for mine, theirs in (("precision", "precision"), ("edgeitems", "edgeitems"),
                         ("linewidth", "max_line_width"), ("suppress", "suppress_small"), ("sign", "sign"),
                         ("floatmode", "floatmode")):
        if mine in o:
            kw[theirs] = o[mine]
    if o.get("formatter") is not None:
        kw["formatter"] = o["formatter"]
    if o.get("legacy") is not None:
        kw["legacy"] = o["legacy"]
    sci = o.get("sci_mode")
    if sci is False:
        kw["suppress_small"] = True
    elif sci is True:
        prec = o.get("precision", 8)
        kw["formatter"] = {"float_kind": lambda v: f"{v:.{prec}e}"}
    return kw


def numpy_context():
    """NumPy's printoptions context for the options array2string takes no argument for (nanstr,
    infstr): NumPy's print options inside it, the caller's restored after."""
    import contextlib

    import numpy as np
    given = {k: OPTS[k] for k in ("nanstr", "infstr") if k in OPTS}
    return np.printoptions(**given) if given else contextlib.nullcontext()
