"""Every Python package of the source tree is in pyproject.toml's package list: a package
missing there is left out of a (non-editable) install, whose users then fail to import it."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^packages = \[(.*?)\]", text, re.S | re.M).group(1)
    listed = set(re.findall(r'"([\w.]+)"', block))
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for top in ("tensor", "autograd", "nn") for p in (ROOT / top).rglob("__init__.py")}
    assert found - listed == set(), "packages missing from pyproject.toml's list"
