"""The CPU kernel families split into modules by kernel name (tensor/cpu/kernels.py: "ew",
"red"; tensor/cpu/gemm.py: "gemm"): every kernel lives in exactly one part, the parts together
are the whole family, and a first use builds only the part it needs (a cold start compiles
the ops a program uses, not a dtype's whole table)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensor as T
from tensor import dtypes as dt
from tensor.cpu import gemm as cpu_gemm  # noqa: F401 - registers the gemm family
from tensor.cpu import kernels as K

ROOT = Path(__file__).resolve().parent.parent


def _names(cdef: str) -> list:
    return re.findall(r"(\w+)\s*\(", cdef)


@pytest.mark.parametrize("family,dtypes", [("ew", dt.ALL), ("red", dt.REAL), ("gemm", [None])])
def test_parts_cover_the_family_once(family, dtypes):
    part_of = K._PARTS[family]
    for d in dtypes:
        whole = _names(K._SOURCES[family](d)[1])
        assert len(whole) == len(set(whole))
        parts = {part_of(n) for n in whole}
        assert len(parts) >= 2, (family, d, parts)
        seen = []
        for p in sorted(parts):
            names = _names(K._SOURCES[family](d, p)[1])
            if family == "gemm":   # every part reports AMX (the bfloat16 part's answer counts)
                names = [n for n in names if n != "gemm_bf16_amx"]
            assert all(part_of(n) == p for n in names), (family, d, p)
            seen += names
        expect = [n for n in whole if not (family == "gemm" and n == "gemm_bf16_amx")]
        assert sorted(seen) == sorted(expect), (family, d)


def test_common_ops_are_in_the_core_part():
    for name in ("add_f32", "multiply_i64", "where_f32", "greater_f16", "logical_not_b8", "exp_f64",
                 "maximum_u8"):
        assert K.ew_part(name) == "core", name
    assert K.ew_part("cast_f32_i8") == "cast"
    assert K.ew_part("sin_f32") == "math" and K.ew_part("erf_f64") == "math"
    for name in ("bessel_j0_f32", "zeta_f64", "lgamma_f32", "digamma_f64", "i0e_f32", "erfinv_f32"):
        assert K.ew_part(name) == "special", name
    assert K.red_part("sum_f32") == "sum" and K.red_part("argmin_i64") == "arg"
    assert K.red_part("cumprod_f64") == "scan" and K.red_part("min_u8") == "minmax"


def test_a_split_family_needs_a_kernel_name():
    with pytest.raises(TypeError, match="split by kernel"):
        K.module("ew", dt.float32)


def test_every_gemm_part_builds_and_multiplies():
    """Each of gemm.c's four builds (GM_TYPES masks) exports its dtypes and computes right."""
    rng = np.random.default_rng(0)
    for d in ("float32", "float64", "float16", "bfloat16", "int8", "uint16", "int64", "bool"):
        a = rng.integers(0, 3, (5, 7)).astype(np.float64)
        b = rng.integers(0, 3, (7, 4)).astype(np.float64)
        got = (T.asarray(a).astype(d) @ T.asarray(b).astype(d)).astype("float64").numpy()
        want = (a != 0) @ (b != 0) if d == "bool" else a @ b
        np.testing.assert_array_equal(got, want.astype(np.float64), err_msg=d)
    assert len(K.modules("gemm", None)) == 4


def test_a_cold_first_add_builds_only_the_core_part(tmp_path):
    """With an empty kernel cache, x + 1 in float32 compiles the core elementwise part (and
    what creating x needs), not the math, special-function or other dtypes' modules."""
    code = "import tensor as T\nx = T.ones(3, dtype=T.float32) + 1\nassert x.tolist() == [2.0] * 3\n"
    env = dict(os.environ, STRIDEX_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    built = {m.group(1) for f in os.listdir(tmp_path)
             if (m := re.match(r"_sx_(\w+?)_[0-9a-f]{24}", f)) or (m := re.match(r"(\w+?)-[0-9a-f]{24}", f))}
    assert "ew_core_f32" in built, built
    assert not {b for b in built if b.startswith(("ew_math", "ew_special", "red_", "gemm"))}, built
