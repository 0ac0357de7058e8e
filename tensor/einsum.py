"""einsum: Einstein summation (NumPy's `np.einsum`, PyTorch's `torch.einsum`) as a composition
of the public ops, so autograd (reverse and forward mode) differentiates it step by step.

Each operand first loses its repeated labels (diagonal), its size-1 axes that broadcast against
a longer one elsewhere (squeeze) and the labels no other operand or the output names (sum).
The operands are then contracted two at a time, in a greedy order (NumPy's 'greedy' path) or
left to right, each pair as one batched matmul: labels both keep -> batch axes, labels both
drop -> the inner axis, the rest -> rows and columns. A last permute orders the output.

>>> import tensor as T
>>> a, b = T.arange(6.0).reshape(2, 3), T.arange(12.0).reshape(3, 4)
>>> T.einsum("ij,jk->ik", a, b).tolist() == (a @ b).tolist()
True
>>> T.einsum("ii", T.arange(9).reshape(3, 3)).item()      # the trace: implicit output ()
12
>>> T.einsum("...j,j", a, T.ones(3)).tolist()            # ellipsis: broadcast batch axes
[3.0, 12.0]
"""
from __future__ import annotations

import string
from math import prod

from . import dtypes as dt
from ._tensor import Tensor
from .convert import asarray
from .optable import T as P  # tensor's public (recorded) functions

_LETTERS = frozenset(string.ascii_letters)
_ELLIPSIS = None   # a parsed term's place holder for '...'


# ---------------------------------------------------------------- parsing

def _where(subscripts: str, ts) -> str:
    shapes = ", ".join(str(t.shape) for t in ts)
    return f"(subscripts {subscripts!r}, shapes {shapes})"


def _term(term: str, subscripts: str, what: str) -> list:
    """One term's letters, with _ELLIPSIS where its '...' stands."""
    if term.count("...") > 1 or "." in term.replace("...", "", 1):
        raise ValueError(f"einsum: {what} of {subscripts!r} has a '.' that is not part of one "
                         f"ellipsis '...'")
    head, dots, tail = term.partition("...")
    return list(head) + ([_ELLIPSIS] if dots else []) + list(tail)


def _split(subscripts: str) -> tuple[list, list | None]:
    """The input terms and the output term (None: implicit) of a subscripts string."""
    s = subscripts.replace(" ", "")
    for c in s:
        if c not in _LETTERS and c not in ".,->":
            raise ValueError(f"einsum: invalid character {c!r} in subscripts {subscripts!r} "
                             f"(labels are ASCII letters)")
    arrows = s.count("->")
    if arrows > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} have {arrows} '->', at most one")
    if s.count("-") != arrows or s.count(">") != arrows:
        raise ValueError(f"einsum: subscripts {subscripts!r} have a '-' or '>' outside '->'")
    lhs, _, rhs = s.partition("->")
    if "," in rhs:
        raise ValueError(f"einsum: the output of subscripts {subscripts!r} has a ','")
    terms = [_term(t, subscripts, f"operand {i}") for i, t in enumerate(lhs.split(","))]
    return terms, (_term(rhs, subscripts, "the output") if arrows else None)


def _axes_labels(terms: list, ts: list, subscripts: str) -> list:
    """Every operand's label per axis: its letters, and for the axes under its '...' the ints
    E-e .. E-1 (e its ellipsis rank, E the largest), so ellipses broadcast from the right."""
    ranks = []
    for i, (term, t) in enumerate(zip(terms, ts)):
        k = len(term) - (_ELLIPSIS in term)
        if k > t.ndim or (k < t.ndim and _ELLIPSIS not in term):
            name = "".join("..." if c is _ELLIPSIS else c for c in term)
            raise ValueError(f"einsum: operand {i} is labelled {name!r} ({k} dimensions) but "
                             f"has shape {t.shape} {_where(subscripts, ts)}")
        ranks.append(t.ndim - k)
    top = max(ranks)
    out = []
    for term, e in zip(terms, ranks):
        labels = []
        for c in term:
            labels.extend(range(top - e, top) if c is _ELLIPSIS else [c])
        out.append(labels)
    return out


def _label_name(label) -> str:
    return f"label {label!r}" if isinstance(label, str) else "an axis under '...'"


def _sizes(inputs: list, ts: list, subscripts: str) -> dict:
    """Each label's size: equal within an operand (a diagonal), else broadcast (1 or n)."""
    sizes, seen = {}, {}
    for i, (labels, t) in enumerate(zip(inputs, ts)):
        mine = {}
        for label, n in zip(labels, t.shape):
            if mine.setdefault(label, n) != n:
                raise ValueError(f"einsum: label {label!r} repeats in operand {i} with sizes "
                                 f"{mine[label]} and {n} {_where(subscripts, ts)}")
        for label, n in mine.items():
            m = sizes.get(label)
            if m is None or m == 1:
                sizes[label], seen[label] = n, i
            elif n not in (1, m):
                raise ValueError(f"einsum: {_label_name(label)} has size {m} in operand "
                                 f"{seen[label]} and size {n} in operand {i} "
                                 f"{_where(subscripts, ts)}")
    return sizes


def _output(out, inputs: list, subscripts: str) -> list:
    """The output's labels: explicit, or NumPy's implicit rule (the ellipsis axes, then the
    letters that appear exactly once, sorted)."""
    every = [label for labels in inputs for label in labels]
    dims = sorted({label for label in every if isinstance(label, int)})
    if out is None:
        once = sorted(c for c in set(every) if isinstance(c, str) and every.count(c) == 1)
        return dims + once
    letters = [c for c in out if c is not _ELLIPSIS]
    for c in letters:
        if letters.count(c) > 1:
            raise ValueError(f"einsum: output label {c!r} repeats in subscripts {subscripts!r}")
        if c not in every:
            raise ValueError(f"einsum: output label {c!r} of subscripts {subscripts!r} is in no "
                             f"input")
    labels = []
    for c in out:
        labels.extend(dims if c is _ELLIPSIS else [c])
    return labels


# ---------------------------------------------------------------- steps on operands

def _size(labels, sizes: dict) -> int:
    return prod(sizes[label] for label in labels)


def _diagonals(t: Tensor, labels: list) -> tuple[Tensor, list]:
    """A repeated label becomes one axis: the diagonal (a view), appended last."""
    labels = list(labels)
    for label in dict.fromkeys(labels):
        while labels.count(label) > 1:
            a = labels.index(label)
            b = labels.index(label, a + 1)
            t = P.diagonal(t, 0, a, b)
            labels = [x for k, x in enumerate(labels) if k not in (a, b)] + [label]
    return t, labels


def _unbroadcast(t: Tensor, labels: list, sizes: dict) -> tuple[Tensor, list]:
    """Drop the size-1 axes whose label is longer elsewhere: the operand is constant along it,
    which is what leaving the label out means to the contraction."""
    drop = tuple(k for k, label in enumerate(labels) if t.shape[k] == 1 != sizes[label])
    if not drop:
        return t, labels
    return P.squeeze(t, drop), [x for k, x in enumerate(labels) if k not in drop]


def _reduce(t: Tensor, labels: list, keep) -> tuple[Tensor, list]:
    """Sum out the labels not in keep; ints and bools sum in their own dtype (NumPy's einsum:
    an int8 einsum is int8, a bool one is bool)."""
    axes = tuple(k for k, label in enumerate(labels) if label not in keep)
    if not axes:
        return t, labels
    own = t.dtype if t.dtype.kind in "biu" else None
    return P.sum(t, axis=axes, dtype=own), [x for x in labels if x in keep]


def _contract(a: Tensor, la: list, b: Tensor, lb: list, keep: set, sizes: dict):
    """a and b contracted over the labels they share and keep does not hold."""
    a, la = _reduce(a, la, keep | set(lb))
    b, lb = _reduce(b, lb, keep | set(la))
    batch = [x for x in la if x in lb and x in keep]
    inner = [x for x in la if x in lb and x not in keep]
    ra = [x for x in la if x not in lb]
    rb = [x for x in lb if x not in la]

    def shape(ls):
        return tuple(sizes[x] for x in ls)
    a = P.permute(a, [la.index(x) for x in batch + ra + inner])
    b = P.permute(b, [lb.index(x) for x in batch + inner + rb])
    if not inner:   # nothing to sum: a broadcast product, no matmul
        a = P.reshape(a, shape(batch + ra) + (1,) * len(rb))
        b = P.reshape(b, shape(batch) + (1,) * len(ra) + shape(rb))
        return P.multiply(a, b), batch + ra + rb
    m, k, n = _size(ra, sizes), _size(inner, sizes), _size(rb, sizes)
    r = P.matmul(P.reshape(a, shape(batch) + (m, k)), P.reshape(b, shape(batch) + (k, n)))
    return P.reshape(r, shape(batch + ra + rb)), batch + ra + rb


# ---------------------------------------------------------------- the contraction order

def _greedy(labels: list, output: list, sizes: dict) -> tuple[int, int]:
    """NumPy's greedy choice: the pair whose contraction shrinks memory the most (inputs' sizes
    minus the result's), then the fewest flops; pairs that share no label come last."""
    best = None
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            rest = set(output).union(*(ls for k, ls in enumerate(labels) if k not in (i, j)))
            both = set(labels[i]) | set(labels[j])
            removed = (_size(labels[i], sizes) + _size(labels[j], sizes)
                       - _size(both & rest, sizes))
            key = (set(labels[i]).isdisjoint(labels[j]), -removed, _size(both, sizes), i, j)
            best = key if best is None or key < best else best
    return best[-2], best[-1]


def _path(optimize, n: int, output: list, sizes: dict):
    """How to pick each step's operands (positions in the running list, where every result goes
    last): a function of (step, the operands' labels). Checked before anything runs."""
    if isinstance(optimize, str) and optimize != "greedy" or isinstance(optimize, list | tuple):
        return _explicit(optimize, n)
    if not optimize:   # left to right: the first two, then the next one with the result
        return lambda step, labels: (0, 1) if step == 0 else (len(labels) - 1, 0)
    return lambda step, labels: _greedy(labels, output, sizes)


def _explicit(optimize, n: int):
    """A path as np.einsum_path gives it: ['einsum_path', (0, 2), (0, 1)]."""
    steps = list(optimize) if isinstance(optimize, list | tuple) else []
    steps = steps[1:] if steps and steps[0] == "einsum_path" else steps
    left = n if isinstance(optimize, list | tuple) else -1
    for s in steps:
        if not (isinstance(s, tuple | list) and s and all(isinstance(p, int) for p in s)
                and len(set(s)) == len(s) and all(0 <= p < left for p in s)):
            left = -1
            break
        left -= len(s) - 1
    if left != 1 or (n > 1 and not steps):
        raise ValueError(f"einsum: optimize must be True, False, 'greedy' or a contraction path "
                         f"for {n} operands (a list of tuples of operand positions, as "
                         f"np.einsum_path gives), got {optimize!r}")
    return lambda step, labels: tuple(steps[step])


# ---------------------------------------------------------------- einsum

def _operands(operands: tuple) -> list:
    """Tensors on one device; PyTorch's form einsum(eq, [a, b]) too."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple) and operands[0] \
            and all(isinstance(o, Tensor) for o in operands[0]):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum: needs at least one operand")
    ts = [o for o in operands if isinstance(o, Tensor)]
    dev = ts[0].device if ts else None
    for t in ts[1:]:
        if t.device != dev:
            raise ValueError(f"einsum: tensors are on different devices: {dev} and {t.device}")
    return [o if isinstance(o, Tensor) else _array_like(o, i, dev) for i, o in enumerate(operands)]


def _array_like(o, i: int, dev) -> Tensor:
    """Operand i (not a Tensor) as one, or a TypeError naming einsum."""
    if o is None:
        raise TypeError(f"einsum: operand {i} is None (expected a Tensor or an array-like)")
    try:
        return asarray(o, device=dev)
    except (TypeError, ValueError) as e:
        raise TypeError(f"einsum: operand {i} is not a Tensor or an array-like "
                        f"({type(o).__name__}: {e})") from None


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(sub, what: str) -> str:
    """A sublist of NumPy's interleaved einsum (ints in [0, 52), Ellipsis) as subscript letters."""
    chars = []
    for v in sub:
        if v is Ellipsis:
            chars.append("...")
        elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(_LETTERS):
            chars.append(_LETTERS[v])
        else:
            raise ValueError(f"einsum: {what} must hold ints in [0, {len(_LETTERS)}) or Ellipsis, got {v!r}")
    return "".join(chars)


def _interleaved(args: tuple):
    """(subscripts, operands) of NumPy's einsum(op0, sublist0, op1, sublist1, ..., [out])."""
    pairs, rest = args[:len(args) // 2 * 2], args[len(args) // 2 * 2:]
    ops = pairs[0::2]
    terms = [_sublist(sub, f"sublist {i}") for i, sub in enumerate(pairs[1::2])]
    spec = ",".join(terms)
    if rest:
        spec += "->" + _sublist(rest[0], "the output sublist")
    return spec, ops


def einsum(subscripts: str, *operands, optimize=True) -> Tensor:
    """Einstein summation over the operands as `subscripts` spell it (NumPy's einsum).

    `"ij,jk->ik"` names each operand's axes with letters (case matters) and the output's after
    '->'; without '->' the output is the letters that appear once, sorted. A letter repeated in
    one operand takes its diagonal; letters left out of the output are summed over. '...' stands
    for the axes not named (they broadcast, as NumPy's). Size-1 axes broadcast against longer
    ones of the same label. The result has the operands' result_type. optimize: True or
    'greedy' picks the contraction order (NumPy's greedy path), False contracts left to right,
    a path as np.einsum_path gives it is followed. The result may be a view of an
    operand ('ii->i', 'ij->ji'), as NumPy's.

    >>> import tensor as T
    >>> x = T.arange(6.0).reshape(2, 3)
    >>> T.einsum("ij->j", x).tolist()
    [3.0, 5.0, 7.0]
    >>> T.einsum("i,j", T.tensor([1, 2]), T.tensor([3, 4])).tolist()     # outer product
    [[3, 4], [6, 8]]
    >>> T.einsum("bij,bjk->bik", [T.ones((5, 2, 3)), T.ones((5, 3, 4))]).shape   # PyTorch's form
    (5, 2, 4)
    """
    if not isinstance(subscripts, str):
        if operands and isinstance(operands[0], (list, tuple)):   # op0, sublist0, ...
            subscripts, operands = _interleaved((subscripts,) + operands)
        else:
            raise TypeError(f"einsum: subscripts must be a str, got {type(subscripts).__name__} "
                            "(or NumPy's interleaved form einsum(op0, sublist0, op1, sublist1, ..., "
                            "[out]), a list of ints after each operand)")
    ts = _operands(operands)
    terms, out = _split(subscripts)
    if len(terms) != len(ts):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) but "
                         f"{len(ts)} were given (shapes {', '.join(str(t.shape) for t in ts)})")
    inputs = _axes_labels(terms, ts, subscripts)
    sizes = _sizes(inputs, ts, subscripts)
    output = _output(out, inputs, subscripts)
    choose = _path(optimize, len(ts), output, sizes)
    d = dt.result_type(*ts)
    ops = []
    for t, labels in zip(ts, inputs):
        t, labels = _diagonals(t if t.dtype is d else P.astype(t, d), labels)
        ops.append(_unbroadcast(t, labels, sizes))
    for i, (t, labels) in enumerate(ops):
        ops[i] = _reduce(t, labels, set(output).union(*(ls for k, (_, ls) in enumerate(ops)
                                                        if k != i)))
    return _run(ops, output, sizes, choose)


def _run(ops: list, output: list, sizes: dict, choose) -> Tensor:
    """Contract the operands choose picks, into one appended last, until one is left; then
    sum what the output drops and order its axes."""
    step = 0
    while len(ops) > 1:
        picked = choose(step, [ls for _, ls in ops])
        step += 1
        rest = [o for k, o in enumerate(ops) if k not in picked]
        t, labels = ops[picked[0]]
        for n, p in enumerate(picked[1:], 2):
            keep = set(output).union(*(ls for _, ls in rest), *(ops[q][1] for q in picked[n:]))
            t, labels = _contract(t, labels, *ops[p], keep, sizes)
        ops = rest + [(t, labels)]
    t, labels = _reduce(*ops[0], set(output))
    return P.permute(t, [labels.index(x) for x in output])
