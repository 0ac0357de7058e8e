"""nn.optim.LBFGS (PyTorch's algorithm): a quadratic's exact minimiser, Rosenbrock's minimum,
both line-search modes, the history limit, stopping rules, errors; PyTorch's iterates where it
is installed (fixed step: equal to rounding; strong Wolfe: the same minimiser)."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from nn.optim import LBFGS

pytestmark = pytest.mark.usefixtures("device")
RNG = np.random.default_rng(0)
A, B, X0 = RNG.normal(size=(6, 4)), RNG.normal(size=6), RNG.normal(size=4)


def _quad(w):
    return ((T.asarray(A) @ w - T.asarray(B)) ** 2).sum()


def _rosen(w):
    return (100 * (w[1:] - w[:-1] ** 2) ** 2 + (1 - w[:-1]) ** 2).sum()


def _run(f, x0, steps, **kw):
    w = T.asarray(np.array(x0, dtype=np.float64)).requires_grad_()
    opt = LBFGS([w], **kw)

    def closure():
        opt.zero_grad()
        loss = f(w)
        loss.backward()
        return loss
    for _ in range(steps):
        opt.step(closure)
    return w.detach().numpy(), opt.state[w]


@pytest.mark.parametrize("ls", [None, "strong_wolfe"])
def test_minimises(ls):
    """To the optimum within the loss-change tolerance (1e-9: |x - x*| ~ 1e-5 here)."""
    w, st = _run(_quad, X0, 3 if ls else 20, lr=1.0 if ls else 0.05, line_search_fn=ls)
    best = np.linalg.lstsq(A, B, rcond=None)[0]
    np.testing.assert_allclose(w, best, atol=1e-4)
    assert _quad(T.asarray(w)).item() - _quad(T.asarray(best)).item() < 1e-8
    assert st["func_evals"] > 0 and len(st["old_dirs"]) <= 100
    if ls:   # Rosenbrock's valley needs the line search
        w, _ = _run(_rosen, [-1.2, 1.0, 0.5], 6, line_search_fn=ls, history_size=5)
        np.testing.assert_allclose(w, [1.0, 1.0, 1.0], atol=1e-4)


def test_history_limit_and_stops():
    _, st = _run(_rosen, [-1.2, 1.0, 0.5, 0.3], 2, history_size=3, line_search_fn="strong_wolfe")
    assert len(st["old_dirs"]) == 3
    w, st = _run(_quad, np.linalg.lstsq(A, B, rcond=None)[0], 1)   # already optimal: 1 call
    assert st["func_evals"] == 1 and st["n_iter"] == 0
    _, st = _run(_quad, X0, 1, max_iter=4, line_search_fn=None, lr=0.01)
    assert st["n_iter"] == 4 and st["func_evals"] == 4   # the last iteration is not evaluated


def test_errors():
    w = T.zeros(2, dtype=T.float64, requires_grad=True)
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe'"):
        LBFGS([w], line_search_fn="armijo")
    with pytest.raises(ValueError, match="invalid learning rate"):
        LBFGS([w], lr=-1.0)
    with pytest.raises(ValueError, match="per-parameter options"):
        LBFGS([{"params": [w]}, {"params": [T.zeros(1, requires_grad=True)]}])
    with pytest.raises(TypeError, match="closure .* is required"):
        LBFGS([w]).step()


def test_matches_torch():
    torch = pytest.importorskip("torch")
    if T.get_default_device().type != "cpu":
        pytest.skip("PyTorch's CPU build is the reference")
    for ls, f in ((None, _quad), (None, _rosen), ("strong_wolfe", _quad), ("strong_wolfe", _rosen)):
        x0 = X0 if f is _quad else [-1.2, 1.0, 0.5]
        ours, _ = _run(f, x0, 1 if ls else 3, lr=1.0 if ls else 0.05, line_search_fn=ls,
                       max_iter=5 if ls else 20)
        tw = torch.tensor(np.array(x0, dtype=np.float64), requires_grad=True)
        topt = torch.optim.LBFGS([tw], lr=1.0 if ls else 0.05, line_search_fn=ls,
                                 max_iter=5 if ls else 20)

        def closure(tw=tw, topt=topt, quad=f is _quad):
            topt.zero_grad()
            loss = ((torch.tensor(A) @ tw - torch.tensor(B)) ** 2).sum() if quad else \
                (100 * (tw[1:] - tw[:-1] ** 2) ** 2 + (1 - tw[:-1]) ** 2).sum()
            loss.backward()
            return loss
        for _ in range(1 if ls else 3):
            topt.step(closure)
        np.testing.assert_allclose(ours, tw.detach().numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{ls} {f.__name__}")


def test_state_dict_round_trip_continues_as_uninterrupted():
    def steps(n, resume_at=None):
        w = T.asarray(np.array([-1.2, 1.0, 0.5])).requires_grad_()
        opt = LBFGS([w], max_iter=3, history_size=4, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = _rosen(w)
            loss.backward()
            return loss
        for k in range(n):
            if k == resume_at:
                sd = opt.state_dict()
                opt = LBFGS([w], max_iter=3, history_size=4, line_search_fn="strong_wolfe")
                opt.load_state_dict(sd)
            opt.step(closure)
        return w.detach().numpy()
    np.testing.assert_array_equal(steps(5, resume_at=2), steps(5))
