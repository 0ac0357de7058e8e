"""L-BFGS (PyTorch's torch.optim.LBFGS): a limited-memory quasi-Newton method over all the
parameters as one flat vector, one `step(closure)` running up to max_iter iterations.

The direction is the two-loop recursion over the last history_size pairs (s, y) of steps and
gradient changes (a pair with y.s <= 1e-10 is skipped), scaled by y.s / y.y; the first step is
lr * min(1, 1 / ||g||_1). With line_search_fn=None each iteration takes step lr; with
"strong_wolfe" a line search (cubic interpolation, sufficient decrease c1 = 1e-4, curvature
c2 = 0.9) picks it. Stops at max_iter iterations or max_eval closure calls, or when the largest
gradient entry is <= tolerance_grad, or a step or loss change is <= tolerance_change.
maximize=True maximises the closure's loss. A complex parameter takes part as its (real,
imaginary) pairs, a sparse gradient densified, as PyTorch's.

>>> import tensor as T
>>> from nn.optim import LBFGS
>>> w = T.tensor([3.0, -2.0], dtype=T.float64, requires_grad=True)
>>> opt = LBFGS([w], lr=1.0, line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad()
...     loss = ((w - T.tensor([1.0, 2.0], dtype=T.float64)) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> [round(v, 6) for v in w.tolist()]
[1.0, 2.0]
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import tensor as T
from autograd import enable_grad, no_grad

from .optimizer import Optimizer


def _cubic_min(x1, f1, g1, x2, f2, g2, lo, hi):
    """The minimiser in [lo, hi] of the cubic through (x1, f1, g1) and (x2, f2, g2); the
    interval's middle when the cubic has no real minimum, or no finite one (the two points'
    slopes equal on a linear stretch, or the points equal: PyTorch's tensor arithmetic goes on
    with NaN there)."""
    try:
        d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
        disc = d1 * d1 - g1 * g2
        if not disc >= 0:
            return (lo + hi) / 2
        d2 = math.sqrt(disc)
        if x1 <= x2:
            x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    except (ZeroDivisionError, OverflowError):
        return (lo + hi) / 2
    if not math.isfinite(x):
        return (lo + hi) / 2
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tol=1e-9, max_ls=25):
    """A step t along d satisfying the strong Wolfe conditions: bracketing, then zoom by cubic
    interpolation (moved inside the bracket when it keeps landing near an end). evaluate(t) ->
    (loss, flat gradient) at x + t d. Returns (f, g, t, evaluations)."""
    dmax = float(T.max(T.abs(d)))
    f_new, g_new = evaluate(t)
    gtd_new = float(T.vecdot(g_new, d))
    evals = ls_iter = 0
    evals += 1
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    bracket = None
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket = [(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)]
            break
        if abs(gtd_new) <= -c2 * gtd:
            return f_new, g_new, t, evals
        if gtd_new >= 0:
            bracket = [(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)]
            break
        t_next = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                            t + 0.01 * (t - t_prev), t * 10)
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(T.vecdot(g_new, d))
        ls_iter += 1
    if bracket is None:   # no bracket within max_ls: the better of the start and the last point
        bracket = [(0.0, f, g, gtd), (t, f_new, g_new, gtd_new)]
    insufficient = False
    while ls_iter < max_ls:
        (a, fa, _, da), (b, fb, _, db) = bracket
        if abs(b - a) * dmax < tol:
            break
        lo, hi = min(a, b), max(a, b)
        t = _cubic_min(a, fa, da, b, fb, db, lo, hi)
        eps = 0.1 * (hi - lo)
        if min(hi - t, t - lo) < eps:   # too close to an end: moved inside (PyTorch's rule)
            if insufficient or t >= hi or t <= lo:
                t = hi - eps if abs(t - hi) < abs(t - lo) else lo + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(T.vecdot(g_new, d))
        ls_iter += 1
        low = 0 if bracket[0][1] <= bracket[1][1] else 1   # the end with the lower loss
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[1 - low] = (t, f_new, g_new, gtd_new)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                return f_new, g_new, t, evals
            if gtd_new * (bracket[1 - low][0] - bracket[low][0]) >= 0:
                bracket[1 - low] = bracket[low]
            bracket[low] = (t, f_new, g_new, gtd_new)
    best = bracket[0] if bracket[0][1] <= bracket[1][1] else bracket[1]
    return best[1], best[2], best[0], evals


class LBFGS(Optimizer):
    """PyTorch's LBFGS: lr=1, max_iter=20, max_eval=max_iter * 5 / 4, tolerance_grad=1e-7,
    tolerance_change=1e-9, history_size=100, line_search_fn=None or "strong_wolfe". One
    parameter group; step(closure) is required (the closure zeroes the gradients, computes the
    loss, calls backward and returns the loss). Its state (the pairs) lives on the first
    parameter, as PyTorch's."""

    def __init__(self, params: Iterable, lr: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None, *, maximize: bool = False) -> None:
        if not lr >= 0:
            raise ValueError(f"LBFGS: invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn,
                                      maximize=maximize))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    def _params(self):
        return self.param_groups[0]["params"]

    def state_dict(self) -> dict:
        """PyTorch's layout; the pairs' lists are copied too (a snapshot)."""
        sd = super().state_dict()
        for st in sd["state"].values():
            for k, v in st.items():
                if isinstance(v, list):
                    st[k] = [x.copy() if isinstance(x, T.Tensor) else x for x in v]
        return sd

    def load_state_dict(self, state_dict: dict) -> None:
        """Options and state (numbers, flat vectors over all parameters and lists of them:
        copied onto the parameters' device, not shaped like a parameter)."""
        groups = state_dict["param_groups"]
        if len(groups) != 1 or len(groups[0]["params"]) != len(self._params()):
            raise ValueError("LBFGS.load_state_dict: the saved state has another parameter list")
        first = self._params()[0]
        # the flat vectors are real: a complex parameter's (real, imaginary) pairs
        real = T.view_as_real(first).dtype if first.dtype.kind == "c" else first.dtype

        def load(v):
            if isinstance(v, list):
                return [load(x) for x in v]
            if getattr(v, "shape", None) == ():   # PyTorch's scalars (ro, H_diag, t): numbers
                return float(v.item())
            if isinstance(v, T.Tensor) or hasattr(v, "__array__"):   # a torch state_dict's too
                return T.asarray(v, dtype=real, device=first.device).copy()
            return v
        saved = state_dict["state"].get(0, state_dict["state"].get("0", {}))
        loaded = {k: load(v) for k, v in saved.items()}   # (a bad entry raises before any change)
        self.state = type(self.state)(dict)
        self.state[first] = loaded
        self.param_groups = [{**groups[0], "params": self._params()}]

    def _flat_grad(self):
        """The gradients as one flat vector (a complex one's (real, imaginary) pairs as two
        reals, a sparse one densified, a missing one zeros), negated for maximize."""
        parts = []
        for p in self._params():
            g = p.grad
            if g is None:
                g = T.zeros(p.shape, dtype=p.dtype, device=p.device)
            elif not isinstance(g, T.Tensor):   # a sparse gradient
                g = g.to_dense()
            g = g.detach()
            parts.append(T.reshape(T.view_as_real(g) if g.dtype.kind == "c" else g, (-1,)))
        flat = T.concat(parts)
        return -flat if self.param_groups[0].get("maximize") else flat

    def _loss(self, value) -> float:
        """A closure's loss as the minimised number (negated for maximize)."""
        return -float(value) if self.param_groups[0].get("maximize") else float(value)

    def _add(self, t: float, d) -> None:
        with no_grad():
            i = 0
            for p in self._params():
                r = T.view_as_real(p) if p.dtype.kind == "c" else p   # writes p (a view)
                n = r.numel()
                r.add_(T.reshape(d[i:i + n], r.shape) * t)
                i += n

    def _values(self):
        return [T.copy(p.detach()) for p in self._params()]

    def _set(self, values) -> None:
        with no_grad():
            for p, v in zip(self._params(), values):
                p.copy_(v)

    def step(self, closure: Callable | None = None):
        """Up to max_iter iterations, each calling closure (more with the line search). A
        closure that raises (or an interrupt) leaves the parameters and the state as they were
        before the step, not at a half-done iteration or a line search's trial point."""
        if closure is None:
            raise TypeError("LBFGS.step: a closure that recomputes the loss is required")
        if not self._params():   # nothing to optimise: the loss only, as PyTorch's
            with enable_grad():
                return closure()
        state = self.state[self._params()[0]]
        x0 = self._values()
        snap = {k: list(v) if isinstance(v, list) else v for k, v in state.items()}
        try:
            return self._iterate(closure, state)
        except BaseException:
            self._set(x0)
            state.clear()
            state.update(snap)
            raise

    def _iterate(self, closure, state):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = self._loss(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if float(T.max(T.abs(g))) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        dirs, stps, ro = state.get("old_dirs", []), state.get("old_stps", []), state.get("ro", [])
        h_diag, g_prev = state.get("H_diag", 1.0), state.get("prev_flat_grad")
        n = 0
        while n < max_iter:
            n += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, dirs, stps, ro, h_diag = -g, [], [], [], 1.0
            else:
                y, s = g - g_prev, d * t
                ys = float(T.vecdot(y, s))
                if ys > 1e-10:
                    if len(dirs) == group["history_size"]:
                        dirs.pop(0), stps.pop(0), ro.pop(0)
                    dirs.append(y), stps.append(s), ro.append(1.0 / ys)
                    h_diag = ys / float(T.vecdot(y, y))
                q, al = -g, [0.0] * len(dirs)
                for i in range(len(dirs) - 1, -1, -1):
                    al[i] = float(T.vecdot(stps[i], q)) * ro[i]
                    q = q - dirs[i] * al[i]
                d = q * h_diag
                for i in range(len(dirs)):
                    be = float(T.vecdot(dirs[i], d)) * ro[i]
                    d = d + stps[i] * (al[i] - be)
            g_prev, prev_loss = T.copy(g), loss
            t = min(1.0, 1.0 / float(T.sum(T.abs(g)))) * lr if state["n_iter"] == 1 else lr
            gtd = float(T.vecdot(g, d))
            if gtd > -tol_change:   # not a descent direction
                break
            ls_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x0 = self._values()

                def evaluate(step, x0=x0, d=d):
                    self._set(x0)
                    self._add(step, d)
                    with enable_grad():
                        f = self._loss(closure())
                    return f, self._flat_grad()
                loss, g, t, ls_evals = _strong_wolfe(evaluate, t, d, loss, g, gtd,
                                                     max_ls=max_eval - evals)
                self._set(x0)
                self._add(t, d)
                opt_cond = float(T.max(T.abs(g))) <= tol_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n != max_iter:
                    with enable_grad():
                        loss = self._loss(closure())
                    g = self._flat_grad()
                    opt_cond = float(T.max(T.abs(g))) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n == max_iter or evals >= max_eval or opt_cond
                    or float(T.max(T.abs(d * t))) <= tol_change or abs(loss - prev_loss) < tol_change):
                break
        state.update(d=d, t=t, old_dirs=dirs, old_stps=stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=g_prev, prev_loss=prev_loss)
        return orig_loss
