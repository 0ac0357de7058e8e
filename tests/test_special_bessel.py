"""torch.special's Bessel functions, Airy's Ai and the orthogonal polynomials (tensor/optable_special.py,
cuda_src/scalar/bessel.h): values against mpmath (50 digits, recorded below) to ~1e-13 over the
whole real line (1e3, 1e8, 1e300 included), PyTorch's edge values (NaN at +-inf, NaN / -inf / inf
at x < 0 / 0 for Y and K), its dtype rules in tensor.special, derivatives against central
differences, both devices; against PyTorch itself where it is installed (random x and n, n up to
1000, in and outside [-1, 1], float32 and float64)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd
import tensor as T
from tensor import special as S

pytestmark = pytest.mark.usefixtures("device")

INF, NAN = math.inf, math.nan

# (x, value) by mpmath at 50 digits (rounded to 17)
_MPMATH = {
    "bessel_j0": [
        (-7.5, 2.663396578803784e-1),
        (0.1, 9.9750156206604003e-1),
        (1.0, 7.6519768655796655e-1),
        (2.404825557695773, -6.1087652597367304e-17),
        (5.0, -1.775967713143383e-1),
        (24.9, 8.324596835301549e-2),
        (25.1, 1.0827567149994945e-1),
        (100.0, 1.9985850304223122e-2),
        (1000.0, 2.4786686152420175e-2),
        (100000000.0, 3.2060295340412078e-5),
        (1e+300, -7.8606730627240933e-151),
    ],
    "bessel_j1": [
        (-7.5, -1.3524842757970551e-1),
        (1e-05, 4.9999999999375004e-6),
        (1.0, 4.4005058574493352e-1),
        (3.8317059702075125, -6.1498073569949061e-17),
        (5.0, -3.2757913759146522e-1),
        (24.9, -1.3485569953140887e-1),
        (25.1, -1.1463478413442257e-1),
        (100.0, -7.7145352014112158e-2),
        (1000.0, 4.7283119070895239e-3),
        (100000000.0, 7.3063911815518549e-5),
        (1e+300, -1.368136045034248e-151),
    ],
    "bessel_y0": [
        (1e-300, -4.3983516362276533e+2),
        (1e-05, -7.4031602837019701),
        (0.8935769662791675, -2.3389279284062103e-17),
        (1.0, 8.8256964215676958e-2),
        (2.0, 5.1037567264974512e-1),
        (5.0, -3.0851762524903378e-1),
        (24.9, -1.3649918399676524e-1),
        (25.1, -1.1676770763803695e-1),
        (1000.0, 4.7159179776228134e-3),
        (100000000.0, 7.3063911655217071e-5),
        (1e+300, -1.368136045034248e-151),
    ],
    "bessel_y1": [
        (1e-05, -6.366197727536548e+4),
        (0.5, -1.4714723926702431),
        (2.197141326031017, 2.5133066789221221e-17),
        (2.0, -1.0703243154093755e-1),
        (5.0, 1.4786314339122684e-1),
        (24.9, -8.6002557595554252e-2),
        (25.1, -1.1062223322783099e-1),
        (1000.0, -2.4784331292351779e-2),
        (100000000.0, -3.206029497509252e-5),
        (1e+300, 7.8606730627240933e-151),
    ],
    "modified_bessel_k0": [
        (1e-300, 6.9089145941387212e+2),
        (1e-05, 1.1628856980944362e+1),
        (0.5, 9.2441907122766586e-1),
        (1.0, 4.2102443824070833e-1),
        (1.0000001, 4.2102437804999039e-1),
        (5.0, 3.6910983340425943e-3),
        (50.0, 3.4101677497894955e-23),
        (700.0, 4.6697764316853769e-306),
    ],
    "modified_bessel_k1": [
        (1e-300, 9.9999999999999997e+299),
        (1e-05, 9.9999999939355707e+4),
        (0.5, 1.6564411200033009),
        (1.0, 6.0190723019723457e-1),
        (1.0000001, 6.019071279040788e-1),
        (5.0, 4.0446134454521642e-3),
        (50.0, 3.4441022267175556e-23),
        (700.0, 4.6731107967079661e-306),
    ],
    "scaled_modified_bessel_k0": [
        (1e-05, 1.1628973270095616e+1),
        (0.5, 1.5241093857739095),
        (1.0, 1.144463079806895),
        (5.0, 5.4780756431351899e-1),
        (700.0, 4.7362369454613572e-2),
        (100000000.0, 1.2533141357488576e-4),
        (1e+300, 1.2533141373155002e-150),
    ],
    "scaled_modified_bessel_k1": [
        (1e-05, 1.0000099994435512e+5),
        (0.5, 2.7310097082117857),
        (1.0, 1.6361534862632582),
        (5.0, 6.0027385878831258e-1),
        (700.0, 4.7396187653494544e-2),
        (100000000.0, 1.2533141420154283e-4),
        (1e+300, 1.2533141373155002e-150),
    ],
    "spherical_bessel_j0": [
        (-3.0, 4.7040002686622407e-2),
        (1e-08, 9.9999999999999998e-1),
        (0.5, 9.58851077208406e-1),
        (3.141592653589793, 3.8981718325193756e-17),
        (100.0, -5.0636564110975879e-3),
        (1e+300, -8.1788191211590855e-301),
    ],
    "airy_ai": [
        (-1e16, 5.3593540813048847e-5),   # (1e-9: the phase in two doubles; NaN below -2.5e19)
        (-100000000.0, -5.5541288000569947e-3),
        (-1000.0, 5.5971895773019919e-2),
        (-10.6, -3.0457846499736687e-1),
        (-10.4, -2.8680545563082977e-1),
        (-2.338107410459767, 2.743319340666283e-17),
        (-0.3, 4.3090309528558086e-1),
        (0.0, 3.5502805388781724e-1),
        (1.4, 8.2038049807610687e-2),
        (1.6, 6.2536907968931953e-2),
        (10.0, 1.1047532552898686e-10),
        (100.0, 2.6344821520881845e-291),
    ],
}

_BESSEL = tuple(_MPMATH)
_POLYS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
          "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
          "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
          "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")


def _amp(name, x):
    """The scale of the function near x: its oscillation's amplitude where it has zeros."""
    ax = abs(x)
    if name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
        return math.sqrt(2 / (math.pi * ax)) if ax > 1 else 1.0
    if name == "airy_ai" and x < -1:
        return ax ** -0.25 / math.sqrt(math.pi)
    if name == "spherical_bessel_j0" and ax > 1:
        return 1 / ax
    return 0.0


@pytest.mark.parametrize("name", _BESSEL)
def test_bessel_values_against_mpmath(name):
    """Relative error <= 1e-13 away from zeros, <= 1e-15 of the amplitude near them (the
    kernels' first version passed Y0(1e-300) and Ai(-1e8) too: Ai's phase 2/3 |x|^3/2 is
    carried in double-double)."""
    xs, want = zip(*_MPMATH[name])
    got = getattr(S, name)(T.asarray(list(xs), dtype=T.float64)).numpy()
    for x, g, w in zip(xs, got, want):
        err = abs(g - w)
        tol = 1e-8 if x == -1e16 else 1e-13
        assert err <= tol * abs(w) or err <= 2e-15 * _amp(name, x), (name, x, g, w)
    if name == "airy_ai":
        assert math.isnan(S.airy_ai(T.asarray([-1e20], dtype=T.float64)).item())


def test_bessel_edge_values_as_pytorch():
    """NaN, +-inf, +-0 and negative arguments give PyTorch's values (J and Y NaN at +-inf,
    Y -inf at +-0 and NaN below; K inf at +-0, 0 at inf, NaN below; j1(-0) = -0)."""
    x = T.asarray([NAN, INF, -INF, 0.0, -0.0, -1.0], dtype=T.float64)
    want = {
        "bessel_j0": [NAN, NAN, NAN, 1.0, 1.0, 0.7651976865579666],
        "bessel_j1": [NAN, NAN, NAN, 0.0, -0.0, -0.44005058574493355],
        "bessel_y0": [NAN, NAN, NAN, -INF, -INF, NAN],
        "bessel_y1": [NAN, NAN, NAN, -INF, -INF, NAN],
        "modified_bessel_k0": [NAN, 0.0, NAN, INF, INF, NAN],
        "modified_bessel_k1": [NAN, 0.0, NAN, INF, INF, NAN],
        "scaled_modified_bessel_k0": [NAN, 0.0, NAN, INF, INF, NAN],
        "scaled_modified_bessel_k1": [NAN, 0.0, NAN, INF, INF, NAN],
        "spherical_bessel_j0": [NAN, 0.0, 0.0, 1.0, 1.0, 0.8414709848078965],
        "airy_ai": [NAN, NAN, NAN, 0.3550280538878172, 0.3550280538878172, 0.5355608832923521],
    }
    for name, w in want.items():
        got = getattr(S, name)(x).numpy()
        np.testing.assert_allclose(got, w, rtol=1e-15, equal_nan=True, err_msg=name)
        np.testing.assert_array_equal(np.signbit(got[3:5]), np.signbit(np.asarray(w[3:5])), err_msg=name)


def test_float32_rounds_the_double_result_and_follows_pytorch_dtypes():
    """float32 in, float32 out (computed in double, rounded once); integers and bools in the
    default float dtype (PyTorch's), where the table's tensor.<name> follows NumPy's loops."""
    xs = [0.5, 3.0, 24.0, 30.0, 1e4]
    for name in _BESSEL:
        x32 = T.asarray(xs, dtype=T.float32)
        got = getattr(S, name)(x32)
        assert got.dtype is T.float32
        want = getattr(S, name)(T.astype(x32, T.float64)).numpy().astype(np.float32)
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
        assert getattr(S, name)(T.asarray([1, 2])).dtype is T.get_default_dtype(), name
        assert getattr(S, name)(T.asarray([True])).dtype is T.get_default_dtype(), name
        assert getattr(S, name)(T.asarray([1, 2], dtype=T.int16)).dtype is T.get_default_dtype(), name
        assert getattr(T, name)(T.asarray([1, 2], dtype=T.int16)).dtype is T.float32, name   # NumPy's
    assert S.modified_bessel_i0(T.asarray([1, 2], dtype=T.int8)).dtype is T.get_default_dtype()
    np.testing.assert_allclose(S.modified_bessel_i1(T.asarray([1.0], dtype=T.float64)).numpy(),
                               [0.5651591039924851], rtol=1e-14)
    with pytest.raises(TypeError, match="bessel_j0"):
        S.bessel_j0(T.asarray([1j]))


def test_polynomial_conventions():
    """n truncated (2.7 -> 2; -0.5 -> 0), negative / NaN / huge n -> 0 (and quickly: 1e30 does not
    loop), PyTorch's values at x = +-1 and its closed forms for |x| < 1."""
    x = T.asarray([-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 1.5], dtype=T.float64)
    want = {
        ("chebyshev_polynomial_t", 7.0): [-5042.0, -1.0, -0.5, 0.0, -0.8461632, 1.0, 421.5],
        ("chebyshev_polynomial_u", 7.9): [-10864.0, -8.0, -1.0, 0.0, -0.6785664, 8.0, 987.0],
        ("chebyshev_polynomial_v", 3.0): [-71.0, -7.0, 1.0, 1.0, -0.344, 1.0, 13.0],
        ("chebyshev_polynomial_w", 7.0): [-7953.0, -1.0, 0.0, -1.0, -0.1199104, 15.0, 1364.0],
        ("shifted_chebyshev_polynomial_t", 3.0): [-485.0, -99.0, -26.0, -1.0, 0.944, 1.0, 26.0],
        ("hermite_polynomial_h", 3.0): [-40.0, 4.0, 5.0, 0.0, -3.384, -4.0, 9.0],
        ("hermite_polynomial_he", 7.0): [-86.0, 20.0, 40.0234375, 0.0, -28.7158113, -20.0, 54.4921875],
        ("laguerre_polynomial_l", 3.0): [43 / 3, 17 / 3, 2.8958333333333335, 1.0, 0.2305, -2 / 3, -0.6875],
        ("legendre_polynomial_p", 7.0): [-2199.125, -1.0, -0.22314453125, 0.0, -0.22407298125, 1.0,
                                         192.37646484375],
    }
    for (name, n), w in want.items():
        np.testing.assert_allclose(getattr(S, name)(x, n).numpy(), w, rtol=1e-13, atol=1e-14,
                                   err_msg=name)
    for name in _POLYS:
        f = getattr(S, name)
        for n in (-1, -0.5, NAN, 1e30, INF, -INF):
            want_n = 1.0 if n == -0.5 else 0.0
            np.testing.assert_array_equal(f(x, n).numpy(), np.full(7, want_n), err_msg=f"{name} n={n}")
        # n as a tensor, broadcast against x
        got = f(x[:, None], T.asarray([0, 1, 2]))
        assert got.shape == (7, 3)
        np.testing.assert_array_equal(got.numpy()[:, 0], np.ones(7))
    # a recurrence past n = 2^16 gives NaN (it caught: the table's random test drew n ~ 1e8 for
    # hermite_polynomial_h and ran 11 minutes; n = 1e15 would hang PyTorch's loop as it did ours)
    big = T.asarray([0.5, 0.5, 2.0], dtype=T.float64)
    for name in ("legendre_polynomial_p", "laguerre_polynomial_l", "hermite_polynomial_he"):
        got = getattr(S, name)(big, T.asarray([1e15, 2.0 ** 16 + 1, 1e15], dtype=T.float64)).numpy()
        assert np.isnan(got).all(), name
    np.testing.assert_allclose(S.legendre_polynomial_p(big[:1], 2.0 ** 16).numpy(),
                               [-2.368201239214501e-3], rtol=1e-9)   # (PyTorch's: a value at the bound)
    np.testing.assert_allclose(S.chebyshev_polynomial_t(big[:1], 3e6).numpy(), [1.0])   # (cos form: no bound)
    # at infinity the recurrence gives PyTorch's values (inf - inf: NaN from n = 3 on)
    t = S.chebyshev_polynomial_t(T.asarray([INF, -INF], dtype=T.float64), T.asarray([[1], [2], [3]]))
    np.testing.assert_array_equal(t.numpy(), [[INF, -INF], [INF, INF], [NAN, NAN]])


def test_polynomial_dtypes_as_pytorch():
    f = S.chebyshev_polynomial_t
    x32, x64 = T.asarray([0.5], dtype=T.float32), T.asarray([0.5], dtype=T.float64)
    n64, n32 = T.asarray([3]), T.asarray([3.0], dtype=T.float32)
    assert f(x32, n64).dtype is T.float32     # (the table's own rule, NumPy's, gives float64)
    assert f(x64, 3).dtype is T.float64
    assert f(x32, T.asarray([3.0], dtype=T.float64)).dtype is T.float64
    assert f(T.asarray([1, 2]), n64).dtype is T.get_default_dtype()
    assert f(2.0, n64).dtype is T.get_default_dtype()
    assert f(0.5, T.asarray([3.0], dtype=T.float64)).dtype is T.float64
    assert f(x64, n32).dtype is T.float64
    np.testing.assert_allclose(f(x32, n64).numpy(), [-1.0])
    with pytest.raises(TypeError, match="chebyshev_polynomial_t"):
        f(x32, "3")


def _fd(fn, x, h=1e-6):
    xp, xm = T.asarray(x + h, dtype=T.float64), T.asarray(x - h, dtype=T.float64)
    return (fn(xp).numpy() - fn(xm).numpy()) / (2 * h)


@pytest.mark.parametrize("name, xs", [
    ("bessel_j0", [-3.0, 0.0, 0.7, 4.0, 30.0]), ("bessel_j1", [-3.0, 0.0, 0.7, 4.0, 30.0]),
    ("bessel_y0", [0.3, 1.5, 4.0, 30.0]), ("bessel_y1", [0.3, 1.5, 4.0, 30.0]),
    ("modified_bessel_k0", [0.3, 1.5, 4.0]), ("modified_bessel_k1", [0.3, 1.5, 4.0]),
    ("scaled_modified_bessel_k0", [0.3, 1.5, 4.0, 30.0]),
    ("scaled_modified_bessel_k1", [0.3, 1.5, 4.0, 30.0]),
    ("spherical_bessel_j0", [-3.0, -0.2, 0.0, 1e-3, 0.24, 0.26, 5.0])])
def test_derivatives_against_central_differences(name, xs):
    fn = getattr(S, name)
    x = T.tensor(xs, dtype=T.float64, requires_grad=True)
    (g,) = autograd.grad(fn(x).sum(), [x])
    want = _fd(fn, np.asarray(xs))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-7, atol=1e-8, err_msg=name)


def test_second_derivative_of_j0_is_recorded():
    """J0'' = -J1' = -(J0 - J1 / x): the backward pass is itself differentiable."""
    x = T.tensor([0.0, 1.5, 7.0], dtype=T.float64, requires_grad=True)
    (g,) = autograd.grad(S.bessel_j0(x).sum(), [x], create_graph=True)
    (gg,) = autograd.grad(g.sum(), [x])
    xv = np.asarray([1.5, 7.0])
    j0, j1 = S.bessel_j0(T.asarray(xv)).numpy(), S.bessel_j1(T.asarray(xv)).numpy()
    np.testing.assert_allclose(gg.numpy(), np.concatenate([[-0.5], -(j0 - j1 / xv)]), rtol=1e-12)


def test_no_derivative_for_airy_and_polynomials():
    """Refused at the call (the table's NO_RULE, as PyTorch's not-implemented derivative), with
    the op's name; without a gradient they run."""
    x = T.tensor([0.5], dtype=T.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="airy_ai"):
        S.airy_ai(x)
    with pytest.raises(NotImplementedError, match="legendre_polynomial_p"):
        S.legendre_polynomial_p(x, 3)
    with autograd.no_grad():
        np.testing.assert_allclose(S.legendre_polynomial_p(x, 2).numpy(), [-0.125])


def test_against_pytorch():
    """Random x (in and outside [-1, 1], and far out for the Bessel functions) and n (up to 1000),
    float64 and float32, against torch.special itself: to its accuracy, which is a float's for
    J0, J1, Y0, Y1 (1e-8 relative off their zeros) and airy_ai (1e-6 at x = -2.57) even in
    float64 (test_bessel_values_against_mpmath holds ours to 1e-13)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-40, 40, 40), np.exp(rng.uniform(-10, 12, 20)), [1e-4, 2.0, 25.0]])
    for name in _BESSEL:
        tf = getattr(torch.special, name)
        for d, td, rtol in ((T.float64, torch.float64, 1e-5), (T.float32, torch.float32, 1e-5)):
            xv = x.astype(d.np)
            want = tf(torch.from_numpy(xv).to(td)).numpy().astype(np.float64)
            got = getattr(S, name)(T.asarray(xv)).numpy().astype(np.float64)
            amp = np.asarray([_amp(name, v) for v in xv.astype(np.float64)])
            atol = 1e-6 * np.maximum(amp, 1.0 if d is T.float32 else 0.0) * (1.0 + np.abs(xv))
            assert np.array_equal(np.isnan(got), np.isnan(want)), (name, d.name)
            ok = ~np.isnan(want)
            bad = ~(np.abs(got - want) <= atol + rtol * np.abs(want))[ok]
            assert not bad.any(), (name, d.name, xv[ok][bad], got[ok][bad], want[ok][bad])
    xs = np.concatenate([rng.uniform(-1, 1, 30), rng.uniform(-3, 3, 30), [1.0, -1.0, 0.0]])
    ns = np.concatenate([rng.integers(0, 1000, 30), rng.integers(-2, 20, 33)]).astype(np.float64)
    for name in _POLYS:
        tf = getattr(torch.special, name)
        want = tf(torch.from_numpy(xs), torch.from_numpy(ns)).numpy()
        got = getattr(S, name)(T.asarray(xs), T.asarray(ns)).numpy()
        fin = np.isfinite(want) & (np.abs(want) < 1e300)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-9, atol=1e-12, err_msg=name)
        np.testing.assert_array_equal(np.isnan(got[~fin]), np.isnan(want[~fin]), err_msg=name)
        small = np.abs(ns) < 25
        want32 = tf(torch.from_numpy(xs[small]).float(), torch.from_numpy(ns[small]).long()).numpy()
        got32 = getattr(S, name)(T.asarray(xs[small], dtype=T.float32), T.asarray(ns[small], dtype=T.int64))
        assert got32.dtype is T.float32
        fin = np.isfinite(want32)
        np.testing.assert_allclose(got32.numpy()[fin], want32[fin], rtol=2e-4,
                                   atol=1e-4, err_msg=name)
