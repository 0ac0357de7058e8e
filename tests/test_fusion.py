"""Fusion in captured steps (tensor/fusion.py; the backends' fused.py): runs of elementwise
calls as one generated kernel, with broadcast and strided inputs, ending in a reduction of their
value or starting at the matmul whose product they read (its epilogue), on both devices.
Every result must be bitwise the eager one; the kernel counts show what was fused.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_compile import _data, _quiet, _same

import tensor as T
from nn import functional as F
from tensor.optable import NONE, UNARY

pytestmark = pytest.mark.usefixtures("device")


FUSION_CASES = [
    ("chain", lambda a, b, c, d: d + (a + b) * c),
    ("unary", lambda a, b, c, d: T.tanh(T.exp(a * 0.5) - b) / (1.0 + T.abs(c))),
    ("casts_f16", lambda a, b, c, d: ((a.astype(T.float16) * b.astype(T.float16)).astype(T.float32)
                                      + c).astype(T.bfloat16).astype(T.float64) * d),
    ("where", lambda a, b, c, d: T.where(a > b, c * 2.0, d - 1.0) + T.maximum(a, c)),
    ("in_place", lambda a, b, c, d: (a * 1.0).add_(b).mul_(c).sub_(d)),
    ("ints", lambda a, b, c, d: ((a * 10).astype(T.int32) // 3 + (b * 10).astype(T.int32)) % 7),
    ("intermediate_kept", lambda a, b, c, d: ((a + b).sum(), (a + b) * c)),
]


@pytest.mark.parametrize("name,f", FUSION_CASES, ids=[n for n, _ in FUSION_CASES])
def test_fused_runs_match_eager_bitwise(name, f, device):
    cf = T.compile(f)
    for seed in range(4):
        args = [x.astype(T.float32) for x in _data(seed, *[(257,)] * 4)]
        _same(_quiet(cf, *args), f(*args))
    s = cf.stats()
    assert s["replays"] == 2
    assert s["fused_calls"] >= 2, s


def test_fused_kernel_writes_what_is_read_later(device):
    """An intermediate of a fused run that a later call reads (a matmul, the result) is
    written out; one the step frees unread stays in the kernel's buffer."""
    w = T.asarray(np.random.default_rng(0).standard_normal((8, 8)))

    def f(x):
        h = T.tanh(x * 2.0 + 1.0)      # a run of three: x*2 and +1 are intermediates
        return (h @ w) * 3.0 - h
    cf = T.compile(f)
    for seed in range(4):
        (x,) = _data(seed, (8, 8))
        _same(_quiet(cf, x), f(x))
    assert cf.stats()["fused_calls"] >= 3


@pytest.mark.parametrize("graphs", ["1", "0"])
def test_arguments_and_results_in_place(device, graphs, monkeypatch):
    """A replay reads its tensor arguments where they are and hands its result over without
    copying, when only rebasable kernel calls use them (prepared and fused calls; on CUDA a
    program that replays through CUDA Graphs copies instead: tests/test_cuda_graphs.py)."""
    monkeypatch.setenv("STRIDEX_CUDA_GRAPHS", graphs)
    cf = T.compile(lambda a, b: T.exp(a) * b + 1.0)
    outs = []
    for seed in range(4):
        a, b = _data(seed, (100,), (100,))
        outs.append(_quiet(cf, a, b))
        _same(outs[-1], T.exp(a) * b + 1.0)
    s = cf.stats()
    assert s["fused_calls"] == 3
    assert (s["inputs_in_place"], s["outputs_in_place"]) == (2, 1)
    assert len({o.data_ptr() for o in outs}) == 4   # each result its own memory
    for seed, o in enumerate(outs):                 # earlier results are not overwritten
        a, b = _data(seed, (100,), (100,))
        _same(o, T.exp(a) * b + 1.0)


BROADCAST_CASES = [   # runs whose inputs are strided views: (name, f(a, b, w), replay launches)
    ("bias_rows", lambda a, b, w: T.tanh(a * 2.0 + w) * b, 1),
    ("bias_columns", lambda a, b, w: (a - a[:, :1]) * b, 1),
    ("flipped", lambda a, b, w: T.exp(a * 0.5) + b[::-1, :], 1),
    ("transposed", lambda a, b, w: (a[:30, :] * 2.0) + b[:30, :].T, 1),
    ("sliced", lambda a, b, w: (a[:, ::2] + 1.0) * b[:, 1::2], 1),
    ("into_a_sum", lambda a, b, w: ((a + w) * b).sum(axis=0), 1),
    ("in_place", lambda a, b, w: (a * 1.0).add_(w).mul_(b), 1),
    # ops on a transposed tensor keep its layout: the run goes in the output's memory order
    ("transposed_outputs", lambda a, b, w: T.tanh(a.T * 2.0 + 1.0) * b.T, 1),
    ("permuted_3d", lambda a, b, w: T.exp(a.reshape(37, 5, 6).transpose(2, 0, 1) * 0.5) - 1.0, 1),
    ("transposed_into_a_sum", lambda a, b, w: (a.T * b.T).sum(axis=0), 1),
    # the two casts (of 1110 and of 30 elements) are runs of their own
    ("cast_f16", lambda a, b, w: (a.astype(T.float16) + w.astype(T.float16)).astype(T.float32) * b, 3),
    # a view of memory the run wrote: the run ends before it (two kernels)
    ("reads_what_it_wrote", lambda a, b, w: (lambda h: (h + h[::-1, :]) * 3.0)(a * 2.0), 2),
]


@pytest.mark.parametrize("name,f,launches", BROADCAST_CASES, ids=[c[0] for c in BROADCAST_CASES])
def test_fused_runs_with_broadcast_and_strided_inputs(name, f, launches, device):
    """Inputs broadcast to their op's shape (a bias), transposed or sliced are read at their
    offsets inside the fused kernel, and outputs in another memory order (ops on a transposed
    tensor) are written in it: bitwise eager's results, in eager's layout."""
    cf = T.compile(f)
    for seed in range(3):
        a, b, w = [x.astype(T.float32) for x in _data(seed, (37, 30), (37, 30), (30,))]
        got, want = _quiet(cf, a, b, w), f(a, b, w)
        _same(got, want)
        assert got.strides == want.strides
    s = cf.stats()
    assert s["replays"] == 1 and s["replay_launches"] == launches, s


GEMM_CASES = [   # a matmul, then a run reading its product: (name, f(x, w, b), sizes M K N,
    #                kernels a CPU replay launches)
    ("linear_gelu", lambda x, w, b: F.gelu(F.linear(x, w.T, b)), (10, 30, 50), 1),
    ("bias_tanh_big", lambda x, w, b: T.tanh(x @ w + b) * 2.0, (200, 300, 150), 1),
    ("batched", lambda x, w, b: T.exp((x.reshape(2, 5, 30) @ w) * 0.1) - 1.0, (10, 30, 50), 1),
    ("in_place", lambda x, w, b: (x @ w).add_(b).mul_(0.5), (10, 30, 50), 1),
    ("k_zero", lambda x, w, b: (x[:, :0] @ w[:0, :]) + b, (10, 30, 50), 1),
    ("thin_transposed", lambda x, w, b: (w.T @ x.T[:, :3]) * 3.0 + 1.0, (10, 30, 50), 1),
    # the casts of x and of w are runs of their own
    ("int32", lambda x, w, b: ((x * 4).astype(T.int32) @ (w * 4).astype(T.int32)) % 5, (10, 30, 50), 3),
    # (b's cast first: a call between the matmul and its epilogue would keep them apart)
    ("float16", lambda x, w, b: (lambda b16: (x.astype(T.float16) @ w.astype(T.float16) + b16)
                                 .astype(T.float32))(b.astype(T.float16)), (10, 30, 50), 4),
    # the backend gemm adding beta * input on its accumulator (addmm & co, 16-bit linear with a
    # bias), then the run: one kernel still
    ("addmm_relu", lambda x, w, b: F.relu(T.addmm(b, x, w)) + 1.0, (10, 30, 50), 1),
    ("addmm_scaled_big", lambda x, w, b: T.tanh(T.addmm(b, x, w, beta=0.5, alpha=-2.0)), (200, 300, 150), 1),
    ("addmm_beta0", lambda x, w, b: T.exp(T.addmm(b, x, w, beta=0, alpha=0.25)), (10, 30, 50), 1),
    ("baddbmm", lambda x, w, b: T.baddbmm(b, x.reshape(2, 5, 30), T.broadcast_to(w, (2, 30, 50))) * 3.0,
     (10, 30, 50), 1),
    ("addmv", lambda x, w, b: T.sigmoid(T.addmv(b[:10], x, w[:, 0])), (10, 30, 50), 1),
    ("linear16_bias", lambda x, w, b: F.relu(F.linear(*(t.astype(T.bfloat16) for t in (x, w.T, b))))
     .astype(T.float32), (10, 30, 50), 4),
]


@pytest.mark.parametrize("name,f,mkn,launches", GEMM_CASES, ids=[c[0] for c in GEMM_CASES])
def test_fused_runs_as_matmul_epilogues(name, f, mkn, launches, device):
    """A run reading a matmul's product runs as the matmul's epilogue on each finished block
    of it: bitwise eager's, on every gemm path (CPU: small, packed over threads, batched,
    K == 0, thin and transposed; CUDA: SIMT, tensor cores, integers)."""
    m, k, n = mkn
    cf = T.compile(f)
    for seed in range(3):
        x, w, b = [t.astype(T.float32) for t in _data(seed, (m, k), (k, n), (n,))]
        _same(_quiet(cf, x, w, b), f(x, w, b))
    s = cf.stats()
    assert s["replays"] == 1 and s["replay_launches"] == launches, s
    assert s["fused_calls"] == s["launches"] - (3 if name in ("float16", "linear16_bias") else 0), s


def test_16bit_matmul_without_tensor_cores_keeps_its_float32_path(monkeypatch, device):
    """On a CUDA device below sm_80 the backend computes a 16-bit product in float32 (no
    tensor-core kernel runs there: it traps): a captured run after it must not fuse into the
    16-bit kernel. Bitwise eager's; the run fuses apart from the product."""
    from tensor.cuda import gemm as G
    if device != "cuda":
        pytest.skip("a CUDA device's case")
    monkeypatch.setattr(G, "tensor_cores", lambda device: False)
    f = GEMM_CASES[-1][1]   # linear16_bias
    cf = T.compile(f)
    for seed in range(3):
        x, w, b = [t.astype(T.float32).to("cuda") for t in _data(seed, (10, 30), (30, 50), (50,))]
        _same(_quiet(cf, x, w, b), f(x, w, b))
    s = cf.stats()
    assert s["replays"] == 1 and s["replay_launches"] > 4, s


HEAD_CASES = [   # a reduction over rows, then a run reading it broadcast along them:
    # (name, f(a, b), kernels a replay launches)
    ("softmax_by_hand", lambda a, b: (lambda e: e / e.sum(axis=-1, keepdims=True))(
        T.exp(a - a.max(axis=-1, keepdims=True))), 2),
    ("max_subtracted", lambda a, b: a - a.max(axis=-1, keepdims=True), 1),
    ("three_dims", lambda a, b: T.exp(a.reshape(4, 8, 50) - a.reshape(4, 8, 50).max(axis=-1, keepdims=True))
     * b.reshape(4, 8, 50), 1),
    ("in_place", lambda a, b: (lambda t: t.sub_(t.max(axis=-1, keepdims=True)))(a * 1.0), 2),
    # (a > 0) ends in the reduction (a run of its own): the next run cannot have it too
    ("any_bool", lambda a, b: (a > 0).any(axis=-1, keepdims=True) & (b > 0), 2),
    # int32 rows summed into int64 (the run casts q * 3 up to it)
    ("sum_int", lambda a, b: (lambda q: q * 3 - q.sum(axis=-1, keepdims=True))((a * 8).astype(T.int32)),
     3),
    # too few rows (the fused kernel is parallel over rows): two kernels
    ("few_rows", lambda a, b: a[:3] - a[:3].sum(axis=-1, keepdims=True), 2),
]


@pytest.mark.parametrize("name,f,launches", HEAD_CASES, ids=[c[0] for c in HEAD_CASES])
def test_row_reductions_head_the_runs_that_read_them(name, f, launches, device):
    """A reduction over the last axis whose result a run reads broadcast along that axis heads
    the run: a row at a time (a block a row on CUDA), its reduction (the unfused kernel's
    code), then the run on the row. Bitwise eager's; the launches show the fusion."""
    cf = T.compile(f)
    for seed in range(3):
        a, b = [x.astype(T.float32) for x in _data(seed, (32, 50), (32, 50))]
        _same(_quiet(cf, a, b), f(a, b))
    s = cf.stats()
    assert s["replays"] == 1 and s["replay_launches"] == launches, s


REDUCE_CASES = [   # (name, f(a, b), shape, kernels a replay launches)
    ("sum_all", lambda a, b: ((a - b) * (a - b)).sum(), (37, 300), 1),
    ("sum_rows_split", lambda a, b: (T.tanh(a) * b + 1.0).sum(axis=1), (2, 70001), 1),
    ("sum_columns", lambda a, b: T.exp(a * 0.5).sum(axis=0), (3000, 40), 1),
    ("max_inner", lambda a, b: T.maximum(a, b).max(axis=1), (64, 33), 1),
    ("min_two_axes", lambda a, b: (a * b).reshape(6, 11, 13).min(axis=(0, 2)), (66, 13), 1),
    ("transposed", lambda a, b: (a + b).T.sum(axis=1), (40, 21), 1),
    ("flipped", lambda a, b: T.flip(a * b, axis=1).prod(axis=0), (5, 30), 1),
    ("any_bool", lambda a, b: (a > b).any(axis=0), (50, 9), 1),
    ("all_bool", lambda a, b: T.logical_not(a > 3.0).all(), (50, 9), 1),
    ("mean_f16", lambda a, b: (a.astype(T.float16) * 2.0).mean(axis=1), (30, 70), 2),
    # the int32 cast's memory is the f32 product's, read as another dtype: two runs
    ("sum_ints", lambda a, b: ((a * 10).astype(T.int32) % 7).sum(axis=1), (30, 70), 2),
    ("intermediate_kept", lambda a, b: ((a * b).sum(axis=1), (a * b) + 1.0), (20, 20), 2),
]


@pytest.mark.parametrize("name,f,shape,launches", REDUCE_CASES, ids=[c[0] for c in REDUCE_CASES])
def test_fused_runs_into_reductions_match_eager_bitwise(name, f, shape, launches, device):
    """A run ending in a reduction of its value is one kernel (the reduction's own, computing
    each element instead of loading it): bitwise the unfused result, every layout path
    (split ranges, columns, several axes, transposed and flipped views, 16-bit, ints, bool)."""
    cf = T.compile(f)
    for seed in range(3):
        a, b = [x.astype(T.float32) for x in _data(seed, shape, shape)]
        _same(_quiet(cf, a, b), f(a, b))
    s = cf.stats()
    assert s["replays"] == 1 and s["replay_launches"] == launches, s
    assert s["fused_calls"] == s["launches"] - (3 if name in ("float16", "linear16_bias") else 0), s


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_fused_blocks_round_as_unfused(dtype, device):
    """Every float op of the table inside one fused run longer than the kernel's block (its
    vector loops and their remainders fall elsewhere than the unfused kernels'): bitwise the
    unfused results."""
    fns = [getattr(T, op.name) for op in UNARY if "f" in op.kinds and not op.out_bool
           and op.grad != NONE]

    def g(a, b):
        return tuple(fn(a * 0.5 + b) - b for fn in fns)
    rng = np.random.default_rng(1)
    x = T.asarray(rng.standard_normal(1201)).astype(dtype)
    y = T.asarray(rng.uniform(0.5, 1.5, 1201)).astype(dtype)
    cf = T.compile(g)
    for _ in range(3):
        got = _quiet(cf, x, y)
    for fn, r, w in zip(fns, got, g(x, y)):
        np.testing.assert_array_equal(r.astype(T.float64).numpy(), w.astype(T.float64).numpy(),
                                      err_msg=fn.__name__)
    assert cf.stats()["fused_calls"] >= 3 * len(fns)   # (in several runs: fusion.MAX_RUN_OPERANDS)


def test_kernels_built_in_parallel_leave_stdout_alone(device, tmp_path, monkeypatch):
    """A capture builds its fused kernels on several threads; a build must not swap sys.stdout
    (a redirect from two threads at once left it pointing at a buffer: later prints vanished)."""
    import sys
    monkeypatch.setenv("STRIDEX_CACHE_DIR", str(tmp_path))
    before = sys.stdout
    cols = 41 + np.random.default_rng().integers(0, 1000)   # shapes no other build has seen

    def f(a, b, w):   # three runs (of three sizes): three kernels to build
        return T.tanh(a * 2.0 + w) * b, T.exp(w * 0.5) - 1.0, T.sqrt(T.abs(a[:3])) + 1.0
    cf = T.compile(f)
    for seed in range(3):
        a, b, w = [x.astype(T.float32) for x in _data(seed, (5, cols), (5, cols), (cols,))]
        _same(_quiet(cf, a, b, w), f(a, b, w))
    assert cf.stats()["replay_launches"] == 3 and sys.stdout is before


def test_a_chain_wider_than_a_kernel_is_fused_in_several_runs(device):
    """60 results of one chain: more operands than one fused kernel takes (CUDA's: 96); the
    planner splits the chain (it had been refused whole there), each part bitwise unfused."""
    def g(a, b):
        return tuple(T.exp(a * (0.01 * k) + b) - b for k in range(60))
    rng = np.random.default_rng(3)
    x = T.asarray(rng.standard_normal(257), device=device).astype(T.float32)
    y = T.asarray(rng.uniform(0.5, 1.5, 257), device=device).astype(T.float32)
    cf = T.compile(g)
    for _ in range(3):
        got = _quiet(cf, x, y)
    for r, w in zip(got, g(x, y)):
        np.testing.assert_array_equal(r.numpy(), w.numpy())
    s = cf.stats()
    assert s["fused_calls"] >= 3 * 60 and s["replay_launches"] < s["launches"] // 3, s
