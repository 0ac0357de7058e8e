"""The op tables are complete: every elementwise op (tensor/optable.py) and every reduction or
scan (tensor/redtable.py) declares its derivative, autograd has a rule exactly where one is
declared, every public op has a rule or says it has none, and the reductions table's kernels,
output dtypes, identities, NumPy references and derivatives hold for every entry."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import gradcheck, gradgradcheck
from autograd.graph import RULES
from tensor import dtypes as dt
from tensor.cpu import kernels as CPU
from tensor.cuda import kernels as CUDA
from tensor.optable import BINARY, NO_RULE, NONE, OPS, OUT, UNARY, ZERO, Grad
from tensor.public import COMPOSITE, NO_GRAD, PUB
from tensor.redtable import KERNELS, REDUCTIONS


def _float_out(op) -> bool:
    """Can the op give a float result (the only kind autograd differentiates)?"""
    return not op.out_bool and ("f" in op.kinds or op.int_to is not None)


# ---------------------------------------------------------------- elementwise derivatives

@pytest.mark.parametrize("op", UNARY + BINARY, ids=lambda o: o.name)
def test_every_elementwise_op_declares_its_derivative(op):
    assert op.grad is not None, f"{op.name}: no grad= in the op table (partials, ZERO or NONE)"
    assert (op.grad == NONE) == (not _float_out(op)), \
        f"{op.name}: NONE is for ops without a float result, and only for them"
    if op.grad == ZERO:
        assert op.arity == 1, "ZERO is unary; a binary op gives zero partials"
    if op.grad == NO_RULE:
        assert _float_out(op), f"{op.name}: NO_RULE is for float results (else NONE)"
    if isinstance(op.grad, Grad):
        assert len(op.grad.d) == op.arity
        assert set(op.grad.save) <= set(range(op.arity)) | {OUT}
        assert all(callable(p) or isinstance(p, float) for p in op.grad.d)


@pytest.mark.parametrize("op", UNARY + BINARY, ids=lambda o: o.name)
def test_rules_exist_exactly_where_the_table_declares_a_derivative(op):
    assert (op.name in RULES) == (op.grad not in (NONE, NO_RULE))
    if isinstance(op.grad, Grad):
        assert RULES[op.name].save == frozenset(op.grad.save)
    inplace = op.name + "_"
    # every differentiable op's in-place form has one; so has a NONE op's (x.eq_(y) on a float
    # x: zero gradients, autograd/rules_elementwise._overwritten); a NO_RULE op's has none
    has = op.grad != NO_RULE
    assert (inplace in RULES) == has, f"{inplace}: rule and the table's grad disagree"
    if isinstance(op.grad, Grad) and op.grad.inplace is True:
        assert RULES[inplace] is RULES[op.name]


def test_every_public_op_has_a_rule_or_declares_none():
    """A public op recorded without a rule and not in NO_GRAD would silently give no gradient
    (an integer, bool or None result) or fail only when someone differentiates it."""
    names = {w.__wrapped_op__ for w in PUB.values()}
    assert NO_GRAD <= names and COMPOSITE <= names
    missing = sorted(n for n in names if n not in RULES and n not in NO_GRAD | COMPOSITE)
    assert not missing, f"public ops with neither a derivative rule nor grad=False: {missing}"
    # (nn records its own ops under some of the same names; T.softmax, T.log_softmax and T.relu
    # are composites around tensor/rowops.py's recorded ops of the same names, which nn records
    # too, their rules autograd/rules_rowops.py's)
    both = sorted(n for n in NO_GRAD | COMPOSITE if n in RULES
                  and not RULES[n].vjp.__module__.startswith(("nn.", "autograd.rules_rowops")))
    assert not both, f"declared without a derivative (or as a composite), yet with a rule: {both}"
    assert not NO_GRAD & COMPOSITE


def test_composites_record_their_steps_not_themselves():
    """A COMPOSITE is published unwrapped: a wrapper would record it as one node, hiding the
    public calls inside it (nested calls are not recorded) and then needing a rule."""
    for n in COMPOSITE:
        assert not hasattr(PUB[n], "__wrapped__"), n
    x = T.tensor([1.0, 4.0, 9.0], dtype=T.float64, requires_grad=True)
    y = T.diff(x)
    assert y.grad_fn is not None and y.grad_fn.op != "diff"


@pytest.mark.parametrize("op", [o for o in UNARY + BINARY if o.grad == NO_RULE],
                         ids=lambda o: o.name)
def test_ops_declared_without_a_derivative_refuse_to_be_differentiated(op):
    """NO_RULE (PyTorch's not_implemented: nextafter): a float result autograd will not
    differentiate raises where a gradient or tangent would pass, instead of giving none."""
    assert op.name in NO_GRAD
    x = T.tensor([0.5, 2.0], dtype=T.float64, requires_grad=True)
    fn = PUB[op.name]
    with pytest.raises(NotImplementedError, match=op.name):
        fn(*[x] * op.arity)
    with autograd.no_grad():
        assert not fn(*[x] * op.arity).requires_grad


def test_table_aliases_are_the_same_public_function():
    for op in UNARY + BINARY:
        for a in op.aliases:
            assert PUB[a] is PUB[op.name] and PUB[a + "_"] is PUB[op.name + "_"]
    for r in REDUCTIONS:
        for a in r.aliases:
            if r.name in ("max", "min"):   # max(dim=) is PyTorch's (values, indices); amax never
                assert PUB[a].__name__ == r.name and getattr(T, a) is PUB[a]
                continue
            assert PUB[a] is PUB[r.name] and getattr(T, a) is getattr(T, r.name)


def test_derivative_partials_are_differentiable_again_through_the_public_functions():
    """The table's partials call tensor's public (recorded) functions: a second derivative of
    sin goes through cos's rule."""
    x = T.tensor([0.3, 1.1], dtype=T.float64, requires_grad=True)
    (g,) = autograd.grad(T.sin(x).sum(), x, create_graph=True)
    (gg,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), -np.sin([0.3, 1.1]), rtol=1e-14)
    assert OPS["sin"].grad.save == (0,)


# ---------------------------------------------------------------- the reductions table

@pytest.mark.parametrize("r", REDUCTIONS, ids=lambda r: r.name)
def test_reduction_rules_exist_exactly_where_declared(r):
    for n in (r.name, *r.aliases):
        assert (n in RULES) == r.grad, n
        assert (n in NO_GRAD) == (not r.grad and n == r.name), n


@pytest.mark.parametrize("d", dt.REAL, ids=lambda d: d.name)   # complex ones compose (reductions.py)
def test_reductions_table_drives_both_kernel_sources(d):
    names = [f"{r.name}_{d.sfx}" for r in KERNELS]   # the public entries and the kernel-only ones
    src, cdef = CPU.red_source(d)
    # the include, one instantiation per entry, and the vector folds' #define switches
    lines = src.splitlines()
    inst = [ln for ln in lines if ln.startswith(("SX_REDUCE(", "SX_ARGREDUCE(", "SX_SCAN("))]
    assert lines[0] == '#include "reduce.h"' and len(inst) == len(KERNELS)
    assert all(ln.startswith(("#", "SX_")) for ln in lines)
    assert all(f"void {n}(" in cdef for n in names)
    assert CUDA.kernel_names("red", d) == names
    for r in KERNELS:
        assert r.macro(d) in src
        assert r.functor(d) in CUDA.entries("red", d)[1][f"{r.name}_{d.sfx}"]


def _values(d: dt.DType, shape) -> np.ndarray:
    rng = np.random.default_rng(3)
    if d.kind == "b":
        return rng.random(shape) < 0.5
    if d.kind in "iu":
        return rng.integers(0 if d.kind == "u" else -3, 4, shape).astype(d.name)
    v = rng.integers(-8, 9, shape) / 4.0
    if d.kind == "c":
        v = v + 1j * rng.integers(-8, 9, shape) / 4.0
    return v.astype(np.float32 if d is dt.bfloat16 else d.name)


@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("d", dt.ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("r", REDUCTIONS, ids=lambda r: r.name)
def test_every_entry_matches_numpy_in_its_output_dtype(r, d):
    a = _values(d, (3, 4))
    x = T.tensor(a, dtype=d)
    if d.kind == "c" and (r.identity in ("LO", "HI") or r.form == "arg"):
        with pytest.raises(TypeError, match="complex"):   # complex numbers have no order
            PUB[r.name](x)
        return
    wide = T.complex128 if d.kind == "c" else T.float64
    for axis in (0, 1, None):
        got = PUB[r.name](x, axis=axis)
        assert got.dtype is r.out_dtype(d), (r.name, d.name, axis)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ref = r.ref(a.astype(np.float64) if d.kind == "f" else a, axis=axis)
        np.testing.assert_allclose(got.astype(wide).numpy(), np.asarray(ref, wide.np),
                                   rtol={"f16": 1e-2, "bf16": 5e-2}.get(d.sfx, 1e-6))


@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("r", [r for r in REDUCTIONS if r.form == "reduce"], ids=lambda r: r.name)
def test_empty_folds_give_the_identity_or_raise(r):
    x = T.zeros((0, 3), dtype=T.float32)
    if r.identity in ("LO", "HI"):  # max/min: no identity in NumPy's sense (it raises too)
        with pytest.raises(ValueError, match=r.name):
            PUB[r.name](x, axis=0)
        return
    got = PUB[r.name](x, axis=0).numpy()
    np.testing.assert_array_equal(got, np.full(3, float(r.identity)))


@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("r", REDUCTIONS, ids=lambda r: r.name)
def test_every_entry_with_a_derivative_passes_gradcheck(r):
    rng = np.random.default_rng(5)
    x = T.tensor(rng.uniform(0.5, 2.0, (3, 4)), dtype=T.float64, requires_grad=True)
    if not r.grad:  # integer or bool result: nothing on the graph
        assert r.out_dtype(dt.float64).kind != "f" and not PUB[r.name](x, axis=1).requires_grad
        return
    fn = PUB[r.name]
    for axis in (1, 0):
        assert gradcheck(lambda t, axis=axis: fn(t, axis=axis), (x,))
    assert gradgradcheck(lambda t: fn(t, axis=1), (x,))
