"""Every docstring example of the library's modules (tensor, nn, autograd) runs and prints
what it says: an example that drifts from the code fails here."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import autograd
import nn
import tensor

_SKIP = (".emulator", "tensor.distributed.run")   # (a program generator; a launcher's main)


def _modules() -> list[str]:
    names = []
    for pkg in (tensor, nn, autograd):
        names.append(pkg.__name__)
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
                  if not any(s in m.name for s in _SKIP)]
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    r = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert r.failed == 0, f"{name}: {r.failed} of {r.attempted} docstring examples failed"
