"""Bad input gets a clear exception naming the op, never an internal error or silent garbage
(hunt 6, badinput). The table holds the cases the hunt fixed (each says what the old code did);
test_light_sweep calls every public function of `tensor` with a few wrong first arguments and
fails on an internal error class (AttributeError, KeyError, ...) leaking out, or on a library
left broken (grad mode, default dtype, a following op)."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T

INTERNAL = (AttributeError, KeyError, UnboundLocalError, AssertionError, ZeroDivisionError, NameError,
            RecursionError, SystemError)


def _x():
    return T.ones((2, 3))


# (label, call, exception, text the message must contain); old behaviour in the comment
FIXED = [
    # returned ('a', 'b', 'c')
    ("broadcast_shapes str", lambda: T.broadcast_shapes("abc"), TypeError, "broadcast_shapes"),
    # returned ([1, 2], [3])
    ("broadcast_shapes ragged", lambda: T.broadcast_shapes([[1, 2], [3]]), TypeError, "broadcast_shapes"),
    # returned (-1, 2)
    ("broadcast_shapes negative", lambda: T.broadcast_shapes((-1, 2)), ValueError, "negative"),
    ("broadcast_shapes tensor", lambda: T.broadcast_shapes(T.ones(3)), TypeError, "broadcast_shapes"),
    # returned a tensor of shape (1, 1, 1, 2, 3): None read as "every axis"
    ("expand_dims None", lambda: T.expand_dims(_x(), None), TypeError, "expand_dims"),
    # TypeError "'float' object cannot be interpreted as an integer" (no op named)
    ("diagonal float offset", lambda: T.diagonal(_x(), 1.5), TypeError, "diagonal"),
    # the rest: AttributeError ("'NoneType' object has no attribute 'ndim'", '_dtype', '_ro'...)
    ("transpose None", lambda: T.transpose(None), TypeError, "transpose"),
    ("permute str", lambda: T.permute("abc", (0,)), TypeError, "permute"),
    ("reshape None", lambda: T.reshape(None, (2,)), TypeError, "reshape"),
    ("view None", lambda: T.view(None, 2), TypeError, "view"),
    ("flatten None", lambda: T.flatten(None), TypeError, "flatten"),
    ("ravel str", lambda: T.ravel("abc"), TypeError, "ravel"),
    ("squeeze None", lambda: T.squeeze(None), TypeError, "squeeze"),
    ("expand None", lambda: T.expand(None, 2), TypeError, "expand"),
    ("flip None", lambda: T.flip(None), TypeError, "flip"),
    ("matrix_transpose None", lambda: T.matrix_transpose(None), TypeError, "matrix_transpose"),
    ("view_as_real None", lambda: T.view_as_real(None), TypeError, "view_as_real"),
    ("view_as_complex None", lambda: T.view_as_complex(None), TypeError, "view_as_complex"),
    ("contiguous None", lambda: T.contiguous(None), TypeError, "contiguous"),
    ("copy None", lambda: T.copy(None), TypeError, "copy"),
    ("clone str", lambda: T.clone("abc"), TypeError, "copy"),
    ("zero_ list", lambda: T.zero_([1.0, 2.0]), TypeError, "zero_"),
    ("fill_ None", lambda: T.fill_(None, 1), TypeError, "fill_"),
    ("expand_as None", lambda: _x()[:1].expand_as(None), TypeError, "expand_as"),
    # returned a (1, 6) view / a 1-element tensor: a bool is no size (NumPy and PyTorch: TypeError)
    ("reshape bool size", lambda: _x().reshape(True, 6), TypeError, "reshape"),
    ("view bool size", lambda: _x().view(6, np.True_), TypeError, "view"),
    ("zeros bool size", lambda: T.zeros(True), TypeError, "zeros"),
    ("empty bool size", lambda: T.empty(3, True), TypeError, "empty"),
]


@pytest.mark.parametrize("label,call,exc,text", FIXED, ids=[c[0] for c in FIXED])
def test_fixed_bad_inputs_raise_naming_the_op(label, call, exc, text):
    with pytest.raises(exc, match=text):
        call()


def test_broadcast_shapes_valid_forms_match_numpy():
    for shapes in [((2, 1), (3,), ()), (3, (2, 1)), ([4, 1], (1, 5)), ((np.int64(2), 1), 1), ((0, 3), (1,))]:
        assert T.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        T.broadcast_shapes((2, 3), (4,))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_expand_dims_and_diagonal_still_take_ints(device):
    a = np.arange(6.0).reshape(2, 3)
    x = T.tensor(a, device=device)
    assert T.expand_dims(x, (0, -1)).shape == np.expand_dims(a, (0, -1)).shape
    np.testing.assert_array_equal(T.diagonal(x, np.int64(1)).cpu().numpy(), np.diagonal(a, 1))
    np.testing.assert_array_equal(T.diagonal(x, -1).cpu().numpy(), np.diagonal(a, -1))


def test_view_functions_take_array_likes_as_numpy():
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    n = np.array(a)
    cases = [
        (lambda m, x: m.reshape(x, (3, 2)), lambda x: np.reshape(x, (3, 2))),
        (lambda m, x: m.transpose(x), np.transpose),
        (lambda m, x: m.swapaxes(x, 0, 1), lambda x: np.swapaxes(x, 0, 1)),
        (lambda m, x: m.moveaxis(x, 0, 1), lambda x: np.moveaxis(x, 0, 1)),
        (lambda m, x: m.ravel(x), np.ravel),
        (lambda m, x: m.flip(x), np.flip),
        (lambda m, x: m.diagonal(x), np.diagonal),
        (lambda m, x: m.squeeze([x]), lambda x: np.squeeze([x])),
        (lambda m, x: m.expand_dims(x, 1), lambda x: np.expand_dims(x, 1)),
        (lambda m, x: m.copy(x), np.copy),
        (lambda m, x: m.contiguous(x), np.ascontiguousarray),
    ]
    for ours, ref in cases:
        np.testing.assert_array_equal(ours(T, a).numpy(), ref(n))
        np.testing.assert_array_equal(ours(T, n).numpy(), ref(n))


def test_creation_shapes_as_numpy():
    # np.zeros(np.array([2, 3])) works; it was a TypeError here (an ndarray has __index__)
    for shape in [np.array([2, 3]), (np.int64(2), 3), 4, [0, 2]]:
        assert T.zeros(shape).shape == np.zeros(shape).shape
        assert T.ones(shape).numpy().tolist() == np.ones(shape).tolist()


def test_zero_and_fill_on_tensors_still_work():
    x = T.ones((2, 2))
    assert x.zero_().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert T.fill_(x, 3).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(ValueError, match="zero_"):   # read-only: the message names zero_
        T.broadcast_to(T.ones(2), (2, 2)).zero_()


# ------------------------------------------------------------------ the light sweep
SKIP = {"save", "savetxt", "savez", "savez_compressed", "load", "loadtxt", "compile", "printoptions",
        "set_printoptions", "set_memory_limit", "set_num_threads", "set_default_device", "empty_cache",
        "frombuffer", "ndindex", "ndenumerate", "autocast", "fromiter", "set_rng_state", "seed",
        "manual_seed", "set_default_dtype", "use_deterministic_algorithms",
        "set_deterministic_debug_mode", "set_float32_matmul_precision"}
# leaks allowed here (none left: bmm's and tofile's, found by the hunt, are fixed)
KNOWN: set = set()
BAD = {"None": lambda: (None,), "str": lambda: ("abc",), "ragged": lambda: ([[1, 2], [3]],),
       "objarr": lambda: (np.array([1, "a"], dtype=object),), "zerod": lambda: (T.tensor(1.0),),
       "cplx": lambda: (T.ones((2, 3), dtype=T.complex64),)}


def _public():
    for n in sorted(dir(T)):
        f = getattr(T, n)
        if n.startswith("_") or n in SKIP or not callable(f) or isinstance(f, type):
            continue
        yield n, f


def _methods():
    x = T.ones((2, 3))
    for n in sorted(dir(T.Tensor)):
        # (tofile("abc") would write a file named abc)
        if n.startswith("_") or n in SKIP or n in ("tofile", "backward", "register_hook"):
            continue
        f = getattr(x, n, None)
        if callable(f) and not isinstance(f, type):
            yield n, f


def test_light_sweep_no_internal_errors_and_no_broken_state():
    import autograd
    dtype0, grad0 = T.get_default_dtype(), autograd.is_grad_enabled()
    leaks = []
    for n, f in list(_public()) + list(_methods()):
        for b, make in BAD.items():
            try:
                f(*make())
            except INTERNAL as e:
                if (n, b) not in KNOWN:
                    leaks.append(f"{n}({b}): {type(e).__name__}: {e}")
            except Exception:
                pass
            assert T.get_default_dtype() is dtype0, (n, b)
            assert autograd.is_grad_enabled() == grad0, (n, b)
    assert (T.ones((2, 2)) + 1).sum().item() == 8.0
    assert not leaks, "\n".join(leaks)
