"""einsum against np.einsum (and torch.einsum where installed): a table of subscripts over
contiguous and non-contiguous float64 operands, int / complex / bool dtypes, random expressions
drawn by hypothesis, the contraction orders (greedy, left to right, an explicit path) agreeing,
reverse- and forward-mode derivatives (einsum is a composite: its steps are recorded), errors."""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT
from helpers import assert_close, make_tensor, make_view
from hypothesis import given
from hypothesis import strategies as st

import autograd
import tensor as T
from autograd.forward import jvp
from tensor import dtypes as dt

pytestmark = pytest.mark.usefixtures("device")
E = importlib.import_module("tensor.einsum")   # the module (T.einsum is the function)

# (subscripts, operand shapes)
CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->ij", [(2, 3)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("ij->", [(2, 3)]),
    ("ij->i", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("iji->ji", [(2, 3, 2)]),
    ("ijji->", [(2, 3, 3, 2)]),
    ("i,i", [(4,), (4,)]),
    ("i,i->i", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("ij,ji->", [(2, 3), (3, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bkj->bki", [(2, 3, 4), (2, 5, 4)]),
    ("ijk,kl->ijl", [(2, 3, 4), (4, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...i,...i->...", [(3, 4), (4,)]),
    ("...,...", [(2, 1), (3,)]),
    ("i...->...", [(2, 3, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 5, 1)]),
    ("...ij->...ji", [(3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd->", [(2, 3), (3, 4), (4, 2)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ea,fb,abcd,gc,hd->efgh", [(2, 2), (2, 3), (2, 3, 2, 2), (2, 2), (2, 2)]),
    (",->", [(), ()]),
    ("->", [()]),
    ("", [()]),
    (",i->i", [(), (3,)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    ("ij->i", [(0, 3)]),
    ("ij,jk", [(0, 2), (2, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    ("Ab,bA->A", [(2, 3), (3, 2)]),
    ("aB,Ba", [(2, 3), (3, 2)]),
    ("Ba,aA", [(2, 3), (3, 4)]),
    ("i,i", [(1,), (3,)]),
    ("ij,j->i", [(3, 1), (4,)]),
]


def _ids(case):
    return f"{case[0].replace(' ', '_') or 'empty'}:{case[1]}"


def _operands(shapes, rng, view: bool):
    """(NumPy values, tensors): float64, each a non-contiguous view when asked (where its
    shape allows one)."""
    vals, ts = [], []
    for s in shapes:
        a = rng.standard_normal(s)
        v, t = make_view(rng, a, dt.float64) if view else (a, make_tensor(a, dt.float64))
        vals.append(v)
        ts.append(t)
    return vals, ts


@pytest.mark.parametrize("view", [False, True], ids=["contiguous", "views"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_table_matches_numpy(case, view):
    s, shapes = case
    vals, ts = _operands(shapes, np.random.default_rng(len(s) + 7 * len(shapes)), view)
    got = T.einsum(s, *ts)
    assert_close(got, np.einsum(s, *vals), what=f"einsum({s!r}, {shapes})")
    assert got.device == ts[0].device


DTYPE_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("i,j", [(3,), (2,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("ij->j", [(3, 4)]), ("ii->i", [(3, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
]


def _values(rng, shape, d):
    if d == "bool":
        return rng.random(shape) < 0.5
    if d.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d)
    if d.startswith(("int", "uint")):
        return rng.integers(0 if d.startswith("u") else -9, 10, shape).astype(d)
    return rng.standard_normal(shape).astype(d)


@pytest.mark.parametrize("dtypes", ["int64", "int32", "complex128", "complex64", "bool",
                                    "float32", "float32+float64", "uint8+int8",
                                    "complex64+float64", "int64+float32"])
@pytest.mark.parametrize("case", DTYPE_CASES, ids=_ids)
def test_dtypes_match_numpy(case, dtypes):
    """The result has the operands' result_type, computed in it (ints exactly)."""
    s, shapes = case
    names = dtypes.split("+")
    rng = np.random.default_rng(3)
    vals = [_values(rng, sh, names[k % len(names)]) for k, sh in enumerate(shapes)]
    got = T.einsum(s, *[make_tensor(v, dt.dtype(v.dtype.name)) for v in vals])
    want = np.einsum(s, *vals)
    if got.dtype.kind == "c":
        tol = 1e-5 if got.dtype is dt.complex64 else 1e-12
        assert got.dtype.name == want.dtype.name and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
    else:
        assert_close(got, want, what=f"einsum({s!r}) {dtypes}")


def test_int_and_bool_keep_their_dtype_as_numpy():
    """NumPy's einsum sums an int8 in int8 (wrapping) and a bool as logical or."""
    x = T.tensor([100, 100, 7], dtype=T.int8)
    assert_close(T.einsum("i->", x), np.einsum("i->", np.array([100, 100, 7], np.int8)))
    b = np.array([[True, False], [False, False]])
    assert_close(T.einsum("ij->i", T.asarray(b)), np.array([True, False]))
    assert_close(T.einsum("ij,jk->ik", T.asarray(b), T.asarray(b.T)), np.array([[1, 0], [0, 0]],
                                                                                bool))


def test_scalars_and_lists_as_operands():
    """Python scalars and nested lists are array-likes (NumPy's asarray); a list of tensors
    alone is PyTorch's einsum(eq, [a, b])."""
    x = T.arange(3.0)
    assert_close(T.einsum(",i->i", 2, x), np.array([0.0, 2.0, 4.0]))
    assert_close(T.einsum("i,i", [1, 2, 3], [4, 5, 6]), np.array(32))
    a, b = T.ones((2, 3)), T.ones((3, 4))
    assert_close(T.einsum("ij,jk", [a, b]), np.full((2, 4), 3.0))
    assert_close(T.einsum("ij,jk", (a, b)), np.full((2, 4), 3.0))


# ---------------------------------------------------------------- random expressions

@st.composite
def expressions(draw):
    """(subscripts, shapes): 1-3 operands over labels 'abcA' (repeats, size-1 broadcasts, sizes
    0-3), an ellipsis of rank 0-2 on some operands, an implicit or a random explicit output."""
    sizes = {c: draw(st.integers(0, 3)) for c in "abcA"}
    top = draw(st.integers(0, 2))
    ell = [draw(st.integers(1, 3)) for _ in range(top)]
    terms, shapes, any_ell = [], [], False
    for _ in range(draw(st.integers(1, 3))):
        labels = draw(st.lists(st.sampled_from("abcA"), max_size=3))
        shape = [sizes[c] if labels.count(c) > 1 or draw(st.integers(0, 4)) else 1
                 for c in labels]
        term = "".join(labels)
        if draw(st.booleans()):
            any_ell = True
            e = draw(st.integers(0, top))
            dims = [n if draw(st.integers(0, 3)) else 1 for n in ell[top - e:]]
            at = draw(st.integers(0, len(labels)))
            term, shape = term[:at] + "..." + term[at:], shape[:at] + dims + shape[at:]
        terms.append(term)
        shapes.append(tuple(shape))
    s = ",".join(terms)
    if draw(st.booleans()):
        letters = sorted({c for t in terms for c in t if c != "."})
        out = "".join(draw(st.permutations(letters))[:draw(st.integers(0, len(letters)))])
        if any_ell:   # np.einsum (optimize=False) refuses to drop '...' axes; see the torch test
            at = draw(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        s += "->" + out
    return s, shapes


@given(expressions(), st.integers(0, 2**32 - 1), st.booleans())
def test_random_expressions_match_numpy(expr, seed, view):
    s, shapes = expr
    vals, ts = _operands(shapes, np.random.default_rng(seed), view)
    want = np.einsum(s, *vals)
    for optimize in (True, False):
        assert_close(T.einsum(s, *ts, optimize=optimize), want,
                     what=f"einsum({s!r}, {shapes}, optimize={optimize})")


# ---------------------------------------------------------------- contraction order

PATH_CASES = [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(8, 2), (2, 8), (8, 3)]),
    ("ab,bc,cd,de->ae", [(5, 2), (2, 7), (7, 1), (1, 6)]),
    ("i,j,k->", [(2,), (3,), (4,)]),
    ("bij,bjk,bkl->bil", [(2, 3, 9), (2, 9, 2), (2, 2, 4)]),
    ("ab,cd,bc,de->ae", [(3, 4), (5, 2), (4, 5), (2, 3)]),
]


def _greedy_path(s, shapes):
    """The pairs E._greedy picks, each result appended last (np.einsum_path's convention)."""
    ins, out = s.split("->")
    labels = [list(t) for t in ins.split(",")]
    sizes = {c: n for t, sh in zip(ins.split(","), shapes) for c, n in zip(t, sh)}
    path = []
    while len(labels) > 1:
        i, j = E._greedy(labels, list(out), sizes)
        path.append((i, j))
        keep = set(out).union(*(ls for k, ls in enumerate(labels) if k not in (i, j)))
        both = [c for c in dict.fromkeys(labels[i] + labels[j]) if c in keep]
        labels = [ls for k, ls in enumerate(labels) if k not in (i, j)] + [both]
    return path


@pytest.mark.parametrize("case", PATH_CASES, ids=_ids)
def test_paths_agree_and_greedy_is_numpys(case):
    s, shapes = case
    vals, ts = _operands(shapes, np.random.default_rng(5), view=True)
    path = np.einsum_path(s, *vals, optimize="greedy")[0]
    assert _greedy_path(s, shapes) == path[1:]
    want = np.einsum(s, *vals)
    for optimize in (True, "greedy", False, path, path[1:], [(0, 1)] * (len(shapes) - 1)):
        assert_close(T.einsum(s, *ts, optimize=optimize), want, what=f"{s} {optimize}")
    if len(shapes) > 2:   # one step over three operands at once
        assert_close(T.einsum(s, *ts, optimize=[tuple(range(3))] + [(0, 1)] * (len(shapes) - 3)),
                     want)


def _matmul_shapes(r) -> list:
    """The operand shapes of every matmul recorded on the way to r."""
    found, stack, seen = [], [r.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.op == "matmul":
            found.append(tuple(a.shape for a in node.ctx.args))
        stack.extend(e[0] for e in node.next if e)
    return sorted(found)


@pytest.mark.parametrize("optimize,want", [
    (True, [((2, 40), (40, 3)), ((40, 2), (2, 3))]),
    (False, [((40, 2), (2, 40)), ((40, 40), (40, 3))])])
def test_one_matmul_per_pair_in_the_chosen_order(optimize, want):
    """A matrix chain whose left-to-right order builds a 40x40 intermediate: greedy contracts
    the small pair first; every pairwise contraction is one matmul."""
    a, b, c = (T.ones(s, requires_grad=True) for s in [(40, 2), (2, 40), (40, 3)])
    r = T.einsum("ij,jk,kl->il", a, b, c, optimize=optimize)
    assert _matmul_shapes(r) == want
    assert_close(r, np.full((40, 3), 80.0))


# ---------------------------------------------------------------- derivatives

GRAD_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 2)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("...ij,...j->...i", [(2, 2, 3), (3,)]),
    ("i,i", [(1,), (3,)]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=_ids)
def test_gradcheck(case):
    s, shapes = case
    rng = np.random.default_rng(11)
    xs = [make_tensor(rng.standard_normal(sh), dt.float64).requires_grad_() for sh in shapes]
    assert autograd.gradcheck(lambda *a: T.einsum(s, *a), tuple(xs))
    r = T.einsum(s, *xs)
    assert r.grad_fn is not None and r.grad_fn.op != "einsum"   # its steps are the nodes


@pytest.mark.parametrize("case", [GRAD_CASES[k] for k in (0, 3, 4, 6, 7)], ids=_ids)
def test_forward_mode(case):
    """einsum is linear in each operand: J t = sum over k of einsum with operand k replaced by
    its tangent, which np.einsum gives exactly."""
    s, shapes = case
    rng = np.random.default_rng(13)
    ps = [rng.standard_normal(sh) for sh in shapes]
    vs = [rng.standard_normal(sh) for sh in shapes]
    out, tan = jvp(lambda *a: T.einsum(s, *a), tuple(make_tensor(p, dt.float64) for p in ps),
                   tuple(make_tensor(v, dt.float64) for v in vs))
    assert_close(out, np.einsum(s, *ps))
    want = sum(np.einsum(s, *(vs[k] if k == m else ps[k] for k in range(len(ps))))
               for m in range(len(ps)))
    assert_close(tan, want, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- errors

ERRORS = [
    ("ij,jk", [(2, 3), (4, 5)], r"label 'j' has size 3 in operand 0 and size 4 in operand 1"),
    ("ii", [(2, 3)], r"label 'i' repeats in operand 0 with sizes 2 and 3"),
    ("...,...", [(2,), (3,)], r"an axis under '...' has size 2 in operand 0 and size 3"),
    ("ij", [(2, 3), (3,)], r"name 1 operand\(s\) but 2 were given \(shapes \(2, 3\), \(3,\)\)"),
    ("i,j", [(2,)], r"name 2 operand\(s\) but 1 were given"),
    ("ij->k", [(2, 3)], r"output label 'k' of subscripts 'ij->k' is in no input"),
    ("ij->ii", [(2, 3)], r"output label 'i' repeats"),
    ("i$j", [(2, 3)], r"invalid character '\$' in subscripts 'i\$j'"),
    ("i1", [(2, 3)], r"invalid character '1'"),
    ("ij->i->j", [(2, 3)], r"2 '->', at most one"),
    ("i-j", [(2, 3)], r"'-' or '>' outside '->'"),
    ("i>j", [(2, 3)], r"'-' or '>' outside '->'"),
    ("..i", [(2,)], r"operand 0 of '..i' has a '.' that is not part of one ellipsis"),
    ("......", [(2,)], r"not part of one ellipsis"),
    ("i->...i.", [(2,)], r"the output of 'i->...i.' has a '.'"),
    ("ij,i", [(2,), (2,)], r"operand 0 is labelled 'ij' \(2 dimensions\) but has shape \(2,\)"),
    ("i", [(2, 3)], r"operand 0 is labelled 'i' \(1 dimensions\) but has shape \(2, 3\)"),
    ("i...jk", [(2, 3)], r"labelled 'i...jk' \(3 dimensions\)"),
    ("i->i,i", [(2,)], r"the output of subscripts 'i->i,i' has a ','"),
]


@pytest.mark.parametrize("s,shapes,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(s, shapes, match):
    with pytest.raises(ValueError, match="einsum: " + ".*" + match if match[0] != "^" else match):
        T.einsum(s, *[T.ones(sh) for sh in shapes])


def test_argument_errors():
    x = T.ones((2, 2))
    with pytest.raises(TypeError, match="einsum: subscripts must be a str, got Tensor"):
        T.einsum(x, "ij")
    with pytest.raises(ValueError, match="einsum: needs at least one operand"):
        T.einsum("ij")
    for bad in ("optimal", [(0, 2)], [(0, 1), (0, 1)], [(0, 0)], "einsum_path", [(0, 1.0)]):
        with pytest.raises(ValueError, match="einsum: optimize must be True, False, 'greedy'"):
            T.einsum("ij,jk", x, x, optimize=bad)
    assert not hasattr(T.Tensor, "einsum")   # neither NumPy nor PyTorch has the method


@pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")
def test_operands_on_different_devices(device):
    a, b = T.ones((2, 3), device="cpu"), T.ones((3, 2), device="cuda")
    with pytest.raises(ValueError, match="einsum: tensors are on different devices: cpu and "
                                         "cuda"):
        T.einsum("ij,jk", a, b)


# ---------------------------------------------------------------- PyTorch

TORCH_CASES = [
    ("...i->i", [(2, 3, 4)]),                    # '...' axes left out of the output are summed
    ("b...ij,b...jk->b...ik", [(2, 1, 3, 4), (2, 5, 4, 2)]),
    ("ii->i", [(3, 3)]),
    ("i,i", [(1,), (3,)]),
    ("Ab,bA->A", [(2, 3), (3, 2)]),
    ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 5)]),
]


@pytest.mark.parametrize("case", TORCH_CASES, ids=_ids)
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    s, shapes = case
    vals, ts = _operands(shapes, np.random.default_rng(17), view=True)
    want = torch.einsum(s, [torch.from_numpy(np.ascontiguousarray(v)) for v in vals]).numpy()
    assert_close(T.einsum(s, ts), want)
    assert_close(T.einsum(s, *ts, optimize=False), want)


def test_docstring_examples_run():
    import doctest
    r = doctest.testmod(E)
    assert r.attempted >= 8 and r.failed == 0
