"""Review of the saved-tensor hooks, forward_ad, flex_attention, Muon and stack_module_state
(hunt 9): each test caught a bug of the first version (said in its docstring)."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import forward_ad as fwAD
from autograd import saved_tensors_hooks
from autograd.grad_mode import state


class _ExpSavingOutput(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = T.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_custom_function_saved_output_keeps_its_graph_under_hooks(device):
    """Caught: a custom Function that saves its own output, under saved_tensors_hooks, restored
    it without its graph (packed before the output was marked), so a second derivative
    (create_graph) raised 'does not require grad' instead of giving exp(x)."""
    xv = np.array([0.5, 1.0, -0.25])
    x = T.tensor(xv, device=device, requires_grad=True)
    calls = []
    with saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        y = _ExpSavingOutput.apply(x).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    (g2,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().cpu().numpy(), np.exp(xv), rtol=1e-12)
    np.testing.assert_allclose(g2.cpu().numpy(), np.exp(xv), rtol=1e-12)
    assert calls == [1]


def test_stack_module_state_takes_a_modulelist_as_the_models():
    """Caught: a ModuleList was stacked as one model ('0.weight' of shape (1, ...)); PyTorch
    takes it as the list of models. Mixed requires_grad was silently False (PyTorch raises)."""
    from nn.containers import ModuleList
    from nn.linear import Linear
    from nn.utils.stateless import stack_module_state
    models = [Linear(3, 2), Linear(3, 2)]
    params, buffers = stack_module_state(ModuleList(models))
    assert sorted(params) == ["bias", "weight"] and buffers == {}
    np.testing.assert_array_equal(params["weight"].numpy(),
                                  np.stack([m.weight.detach().numpy() for m in models]))
    assert params["weight"].requires_grad and params["weight"].is_leaf
    models[1].bias.requires_grad = False
    with pytest.raises(RuntimeError, match="bias.*requires grad"):
        stack_module_state(models)
    for m in models:
        m.bias.requires_grad = False
    assert not stack_module_state(models)[0]["bias"].requires_grad


def test_make_dual_of_a_dual_tensor_raises():
    """Caught: make_dual on a tensor that already carries a tangent replaced the tangent
    silently; PyTorch refuses (unpack the primal or detach first)."""
    with fwAD.dual_level():
        d = fwAD.make_dual(T.ones(2), T.tensor([1.0, 2.0]))
        with pytest.raises(RuntimeError, match="make_dual.*already carries a tangent"):
            fwAD.make_dual(d, T.ones(2))
        p = fwAD.unpack_dual(d).primal
        d2 = fwAD.make_dual(p, T.tensor([3.0, 4.0]))
        assert fwAD.unpack_dual(d2).tangent.tolist() == [3.0, 4.0]
        assert fwAD.unpack_dual(d).tangent.tolist() == [1.0, 2.0]


def test_dual_level_does_not_pile_up_references():
    """Caught: every op on a dual tensor appended a weak reference that lived until the level
    ended: a loop inside one dual_level grew without bound (20000 ops: 40000 references)."""
    with fwAD.dual_level():
        x = fwAD.make_dual(T.ones(3), T.tensor([1.0, 0.0, 2.0]))
        for _ in range(5000):
            y = T.sin(x) * 2.0
        assert len(state.fw_tensors) < 3000
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(),
                                   2.0 * np.cos(1.0) * np.array([1.0, 0.0, 2.0]), rtol=1e-6)
        kept = y
    assert fwAD.unpack_dual(kept).tangent is None   # the level's tangents are dropped still
    assert fwAD.unpack_dual(x).tangent is None


def test_flex_attention_score_mod_with_star_args_and_max_scores_not_differentiable():
    """Caught: a score_mod written `lambda *args: ...` (PyTorch calls it with 5 arguments) was
    refused for not having 5 named parameters; max_scores (AuxRequest) required grad, where
    PyTorch marks it non-differentiable."""
    from nn.attention.flex_attention import AuxRequest, flex_attention
    rng = np.random.default_rng(0)
    qv = rng.standard_normal((1, 2, 3, 4))
    q = T.tensor(qv, requires_grad=True)
    out, aux = flex_attention(q, q, q, score_mod=lambda *a: a[0] * 2.0,
                              return_aux=AuxRequest(lse=True, max_scores=True))
    s = qv @ np.swapaxes(qv, -1, -2) * (2.0 / 2.0)    # scale 1/sqrt(4), then doubled
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(out.detach().numpy(), (p / p.sum(-1, keepdims=True)) @ qv, rtol=1e-10)
    np.testing.assert_allclose(aux.max_scores.numpy(), s.max(-1), rtol=1e-12)
    assert aux.lse.requires_grad and not aux.max_scores.requires_grad
    with pytest.raises(TypeError, match="score_mod takes"):
        flex_attention(q, q, q, score_mod=lambda b, h, q_idx, kv_idx: q_idx >= kv_idx)


def test_forward_over_reverse_through_hooked_saved_tensors():
    """Caught: under saved_tensors_hooks the restored saved tensors lost their forward-mode
    tangents, so hessian (jacfwd of jacrev) and forward_ad over grad were silently wrong
    (diag [0.62, 0.68, 0.86] for [3.07, 1.23, -5.72])."""
    from autograd.func import hessian
    xv = np.array([0.5, 1.0, 2.0])

    def f(x):
        return (T.exp(T.sin(x)) * x).sum()

    s, c = np.sin(xv), np.cos(xv)
    want = np.exp(s) * (c * c * xv - s * xv + 2.0 * c)   # d2/dx2 of exp(sin x) x
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        h = hessian(f)(T.tensor(xv)).numpy()
    np.testing.assert_allclose(h, np.diag(want), rtol=1e-12, atol=1e-12)
    x = T.tensor(xv, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, T.ones(3))
        with saved_tensors_hooks(lambda t: ("packed", t), lambda p: p[1]):
            y = f(d)
        (g,) = autograd.grad(y, x, create_graph=True)
        np.testing.assert_allclose(fwAD.unpack_dual(g).tangent.numpy(), want, rtol=1e-12)


def test_disable_saved_tensors_hooks_is_a_decorator_too():
    """Caught: PyTorch's disable_saved_tensors_hooks (a contextmanager) decorates functions;
    ours was a plain class: 'object is not callable'."""
    from autograd import disable_saved_tensors_hooks

    @disable_saved_tensors_hooks("no hooks in f")
    def f(x):
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            return x

    with pytest.raises(RuntimeError, match="no hooks in f"):
        f(1)
    with pytest.raises(RuntimeError, match="no hooks in f"):   # re-entrant: a second call too
        f(2)
    with saved_tensors_hooks(lambda t: t, lambda t: t):          # and nothing left disabled
        pass


def test_dual_level_is_a_decorator_too():
    """Caught: PyTorch's dual_level decorates functions; ours was not callable."""
    @fwAD.dual_level()
    def tangent_of_sin(x):
        d = fwAD.make_dual(x, T.ones(x.shape))
        return fwAD.unpack_dual(T.sin(d)).tangent

    xv = np.array([0.0, 1.0, 2.5])
    for _ in range(2):   # the level is left after each call
        np.testing.assert_allclose(tangent_of_sin(T.tensor(xv)).numpy(), np.cos(xv), rtol=1e-12)
        assert state.fw_level == 0


def test_block_mask_from_kv_blocks_and_numel():
    """Caught: BlockMask.from_kv_blocks (how PyTorch users build a mask from their own block
    lists) and BlockMask.numel were missing. Fields checked against PyTorch's; the output
    against a dense NumPy reference (the blocks listed, mask_mod None: all of each block)."""
    from nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention
    rng = np.random.default_rng(3)
    M = rng.random((2, 1, 10, 7)) > 0.4
    Mt = T.tensor(M)

    def mask(b, h, q, k):
        return Mt[b, h, q, k]

    ref = create_block_mask(mask, 2, 1, 10, 7, BLOCK_SIZE=(4, 3))
    bm = BlockMask.from_kv_blocks(ref.kv_num_blocks, ref.kv_indices, ref.full_kv_num_blocks,
                                  ref.full_kv_indices, BLOCK_SIZE=(4, 3), mask_mod=mask,
                                  seq_lengths=(10, 7))
    for f in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
              "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"):
        np.testing.assert_array_equal(getattr(bm, f).numpy(), getattr(ref, f).numpy(), err_msg=f)
    assert bm.shape == (2, 1, 10, 7) and bm.numel() == 140 and bm.sparsity() == ref.sparsity()
    torch = pytest.importorskip("torch")
    from torch.nn.attention import flex_attention as tfa
    tref = tfa.create_block_mask(lambda b, h, q, k: torch.tensor(M)[b, h, q, k], 2, 1, 10, 7,
                                 device="cpu", BLOCK_SIZE=(4, 3))
    np.testing.assert_array_equal(bm.kv_indices.numpy(), tref.kv_indices.numpy())
    np.testing.assert_array_equal(bm.full_q_indices.numpy(), tref.full_q_indices.numpy())
    # only partial blocks listed, no mask_mod: each listed block is attended to in full
    causal = create_block_mask(lambda b, h, q, k: q >= k, None, None, 8, 8, BLOCK_SIZE=4)
    diag = BlockMask.from_kv_blocks(causal.kv_num_blocks, causal.kv_indices, BLOCK_SIZE=4)
    assert diag.shape == (1, 1, 8, 8) and diag.full_kv_num_blocks is None
    qv = rng.standard_normal((1, 1, 8, 4))
    s = qv[0, 0] @ qv[0, 0].T / 2.0
    keep = np.zeros((8, 8), bool)
    keep[:4, :4] = keep[4:, 4:] = True
    p = np.where(keep, np.exp(s - s.max(-1, keepdims=True)), 0.0)
    want = (p / p.sum(-1, keepdims=True)) @ qv[0, 0]
    got = flex_attention(T.tensor(qv), T.tensor(qv), T.tensor(qv), block_mask=diag)
    np.testing.assert_allclose(got.numpy()[0, 0], want, rtol=1e-10)


def test_muon_half_precision_steps_match_pytorch():
    """Caught: for float16 parameters Muon did its momentum / nesterov / weight-decay / update
    arithmetic in float16 (a rounding per operation, and lerp's 1 - weight in double), where
    PyTorch computes each step in float32 and rounds once: 1-3 ULP off after a few steps
    (168 of 360 entries in a sweep); now bitwise equal."""
    torch = pytest.importorskip("torch")
    from nn.optim.muon import Muon
    rng = np.random.default_rng(8)
    for shape, kw in [((4, 6), {}), ((5, 3), {"nesterov": False}),
                      ((3, 5), {"momentum": 0.6, "weight_decay": 0.3,
                                "adjust_lr_fn": "match_rms_adamw"})]:
        w0 = rng.standard_normal(shape)
        tw = torch.tensor(w0, dtype=torch.float16, requires_grad=True)
        ow = T.tensor(w0).astype(T.float16)
        ow.requires_grad = True
        topt, oopt = torch.optim.Muon([tw], lr=0.05, **kw), Muon([ow], lr=0.05, **kw)
        for _ in range(4):
            g = rng.standard_normal(shape)
            tw.grad = torch.tensor(g, dtype=torch.float16)
            ow.grad = T.tensor(g).astype(T.float16)
            topt.step()
            oopt.step()
        np.testing.assert_array_equal(ow.astype(T.float32).numpy(), tw.detach().float().numpy())
        np.testing.assert_array_equal(
            oopt.state[ow]["momentum_buffer"].astype(T.float32).numpy(),
            topt.state[tw]["momentum_buffer"].float().numpy())
