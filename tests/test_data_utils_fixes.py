"""Fixes from the differential hunt of nn.data, nn.utils, nn.init and nn.serialization against
torch.utils.data / torch.nn.utils / torch.nn.init / torch.load (each test says what it caught):

- DataLoader(batch_size=None) converts samples as torch's default_convert, and applies
  collate_fn to each sample; a sampler's keys reach the dataset unchanged (tuples, strings);
  a dataset's __getitems__ is used for a batch; StackDataset.
- unpad_sequence accepts a zero length (the pad_sequence round trip of an empty sequence).
- copy.deepcopy of a parametrized module gets a class of its own.
- clip_grad_norm_ / get_total_norm with gradients on two devices.
- nn.load's map_location and weights_only; save / load with file objects.
- xavier_*_ on an empty 1-D tensor raises the fan error.
- functional_call with a tuple of dicts.
- fuse_conv_bn_eval of a grouped transposed convolution.
"""
from __future__ import annotations

import collections
import copy
import io

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT

import tensor as T
from autograd import no_grad
from nn import init
from nn.conv import ConvTranspose2d
from nn.data import DataLoader, Dataset, StackDataset, Subset, TensorDataset, default_convert
from nn.linear import Linear
from nn.module import Module, Parameter
from nn.normalization import BatchNorm2d
from nn.serialization import load, save
from nn.utils import clip_grad_norm_, fuse_conv_bn_eval, get_total_norm
from nn.utils import parametrize as P
from nn.utils.rnn import pad_sequence, unpad_sequence
from nn.utils.stateless import functional_call

cuda_only = pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")
NT = collections.namedtuple("NT", "a b")


def _plain(x):
    """Nested samples with tensors (ours or torch's) as ("T", dtype name, values)."""
    if hasattr(x, "tolist") and hasattr(x, "dtype") and not isinstance(x, np.ndarray | np.generic):
        return ("T", str(x.dtype).rsplit(".", 1)[-1], x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return (type(x).__name__, [_plain(v) for v in x])
    return x


class _Items(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


SAMPLES = [{"x": np.float32(1.5), "a": np.arange(3, dtype=np.int32), "n": 2},
           (np.int64(2), "s", np.array(["u"])), NT(np.float64(0.5), [np.int16(1), 3.0])]


# ---- 1: batch_size=None used to hand NumPy samples through unconverted (torch converts) --------

def test_batch_size_none_converts_like_torch():
    torch = pytest.importorskip("torch")
    import torch.utils.data as TD
    ours = [_plain(b) for b in DataLoader(_Items(SAMPLES), batch_size=None)]
    ref = [_plain(b) for b in TD.DataLoader(SAMPLES, batch_size=None)]
    assert ours == ref
    assert [_plain(default_convert(s)) for s in SAMPLES] == \
        [_plain(TD.default_convert(s)) for s in SAMPLES]
    x = torch.tensor(np.arange(6.0).reshape(3, 2))
    ours = [_plain(b) for b in DataLoader(TensorDataset(T.arange(6.0).reshape(3, 2)), batch_size=None)]
    assert ours == [_plain(b) for b in TD.DataLoader(TD.TensorDataset(x), batch_size=None)]


def test_batch_size_none_applies_collate_fn_per_sample():
    # caught: collate_fn was ignored without batching (torch calls it on every sample)
    loader = DataLoader(_Items([1, 2, 3]), batch_size=None, collate_fn=lambda s: s * 10)
    assert list(loader) == [10, 20, 30]


# ---- 3: a sampler's keys were forced into one int64 array (tuples flattened, strings crashed) ----

class _Grid(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, ij):
        return ij[0] * 10 + ij[1]


class _Named(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, k):
        return {"a": 1, "b": 2}[k]


def test_sampler_keys_reach_the_dataset_unchanged():
    pytest.importorskip("torch")
    import torch.utils.data as TD
    keys = [(0, 1), (2, 3), (1, 1)]
    for bs in (2, None):
        ours = DataLoader(_Grid(), sampler=keys, batch_size=bs)
        ref = TD.DataLoader(_Grid(), sampler=keys, batch_size=bs)
        assert [_plain(b) for b in ours] == [_plain(b) for b in ref]
        assert len(ours) == len(ref)
    ours = [_plain(b) for b in DataLoader(_Named(), sampler=["b", "a"])]
    assert ours == [_plain(b) for b in TD.DataLoader(_Named(), sampler=["b", "a"])]


@pytest.mark.usefixtures("device")
def test_tensor_dataset_fast_path_with_sampler_and_shuffle():
    # (guards the TensorDataset fast path, now fed the sampler's keys as a list, on each device)
    x = np.arange(14.0).reshape(7, 2)
    ds = TensorDataset(T.asarray(x), T.arange(7))
    got = [b[0].tolist() for b in DataLoader(ds, batch_size=3, sampler=[np.int64(6), 0, 3, 3])]
    assert got == [x[[6, 0, 3]].tolist(), x[[3]].tolist()]
    seen = np.concatenate([b[1].numpy() for b in DataLoader(ds, batch_size=3, shuffle=True,
                                                             generator=T.random.Generator(1))])
    assert sorted(seen.tolist()) == list(range(7))


# ---- 6: StackDataset was missing; DataLoader ignored __getitems__ -------------------------------

def test_stack_dataset_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.utils.data as TD
    a, b = np.arange(8.0).reshape(4, 2), np.arange(4)
    ours = StackDataset(TensorDataset(T.asarray(a)), _Items(list(b)))
    ref = TD.StackDataset(TD.TensorDataset(torch.tensor(a)), list(b))
    assert len(ours) == len(ref) == 4 and _plain(ours[2]) == _plain(ref[2])
    ours_d = StackDataset(x=_Items([1, 2]), y=_Items(["p", "q"]))
    ref_d = TD.StackDataset(x=[1, 2], y=["p", "q"])
    assert ours_d[1] == ref_d[1]
    assert [_plain(v) for v in DataLoader(ours_d, batch_size=2)] == \
        [_plain(v) for v in TD.DataLoader(ref_d, batch_size=2)]
    with pytest.raises(ValueError, match="size mismatch"):
        StackDataset(_Items([1]), _Items([1, 2]))
    with pytest.raises(ValueError, match="not both"):
        StackDataset(_Items([1]), y=_Items([1]))


class _Batched(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        raise AssertionError("the batch should be fetched with __getitems__")

    def __getitems__(self, idx):
        return [10 * i for i in idx]


def test_getitems_fetches_whole_batches():
    assert [b.tolist() for b in DataLoader(_Batched(), batch_size=2)] == [[0, 10], [20, 30], [40]]
    sub = Subset(_Batched(), [4, 0])
    assert [b.tolist() for b in DataLoader(sub, batch_size=2)] == [[40, 0]]


# ---- 2: unpad_sequence refused a zero length -----------------------------------------------------

def test_unpad_sequence_empty_sequence_round_trip():
    torch = pytest.importorskip("torch")
    seqs = [np.zeros((0, 2)), np.arange(6.0).reshape(3, 2), np.ones((1, 2))]
    for bf in (False, True):
        ours = unpad_sequence(pad_sequence([T.asarray(s) for s in seqs], bf), T.asarray([0, 3, 1]), bf)
        ref = torch.nn.utils.rnn.unpad_sequence(
            torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], bf),
            torch.tensor([0, 3, 1]), bf)
        assert [tuple(o.shape) for o in ours] == [tuple(r.shape) for r in ref]
        assert [o.tolist() for o in ours] == [r.tolist() for r in ref]
    with pytest.raises(ValueError, match="at least 0"):
        unpad_sequence(T.zeros((2, 3)), [-1, 2], batch_first=True)


# ---- 4: deepcopy of a parametrized module shared its class (torch has the same bug) -------------

class _Double(Module):
    def forward(self, x):
        return 2 * x


def test_deepcopy_of_parametrized_module_is_independent():
    m = P.register_parametrization(Linear(3, 3), "weight", _Double())
    m2 = copy.deepcopy(m)
    assert type(m2) is not type(m) and type(m2).__name__ == "ParametrizedLinear"
    assert m2.weight.tolist() == m.weight.tolist()
    P.register_parametrization(m2, "bias", _Double())
    assert m.bias.tolist() == m.bias.tolist() and not P.is_parametrized(m, "bias")
    P.remove_parametrizations(m2, "weight")
    P.remove_parametrizations(m2, "bias")
    assert type(m2) is Linear
    assert m.weight.shape == (3, 3) and P.is_parametrized(m, "weight")   # used to raise
    orig = m.parametrizations.weight.original.detach().numpy()
    np.testing.assert_array_equal(m.weight.detach().numpy(), 2 * orig)


# ---- clip_grad_norm_ failed with gradients on two devices (T.stack across devices) ---------------

@cuda_only
def test_clip_grad_norm_across_devices():
    a = Parameter(T.zeros(2, dtype=T.float32))
    a.grad = T.asarray([3.0, 0.0], dtype=T.float32)
    b = Parameter(T.zeros(1, dtype=T.float32, device="cuda"))
    b.grad = T.asarray([4.0], dtype=T.float32, device="cuda")
    total = clip_grad_norm_([a, b], 1.0)
    assert str(total.device) == "cpu" and float(total) == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad.tolist() + b.grad.tolist(), [0.6, 0.0, 0.8], rtol=1e-5)
    inf = get_total_norm([b.grad, a.grad], float("inf"))
    assert str(inf.device).startswith("cuda") and float(inf) == pytest.approx(0.8, rel=1e-5)


# ---- 5: load had no map_location / weights_only; save / load took only paths --------------------

def test_save_load_file_objects_and_map_location():
    sd = {"w": T.arange(6.0).reshape(2, 3), "n": {"b": T.ones(2, dtype=T.bfloat16), "k": 3}}
    buf = io.BytesIO()
    save(sd, buf)
    for loc in (None, "cpu", T.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}):
        buf.seek(0)
        back = load(buf, map_location=loc, weights_only=True)
        assert back["w"].tolist() == sd["w"].tolist() and back["n"]["k"] == 3
        assert back["n"]["b"].dtype is T.bfloat16 and str(back["w"].device) == "cpu"
    buf.seek(0)
    assert load(buf, map_location=lambda t, where: t * 2)["w"].tolist() == (sd["w"] * 2).tolist()
    buf.seek(0)
    with pytest.raises(TypeError, match="map_location"):
        load(buf, map_location=3)


@cuda_only
def test_load_map_location_cuda(tmp_path):
    save({"w": T.arange(3.0)}, tmp_path / "a.npz")
    back = load(tmp_path / "a.npz", map_location="cuda")
    assert str(back["w"].device).startswith("cuda") and back["w"].tolist() == [0.0, 1.0, 2.0]


# ---- 7: xavier_*_ on an empty 1-D tensor returned silently (torch raises the fan error) ----------

@pytest.mark.parametrize("fn", ["xavier_uniform_", "xavier_normal_"])
def test_xavier_on_empty_1d_raises(fn):
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        getattr(init, fn)(T.zeros(0))
    assert getattr(init, fn)(T.zeros((0, 3))).shape == (0, 3)   # 2-D empty: a no-op


# ---- 8: functional_call refused a tuple of dicts (torch.func.functional_call takes one) ----------

def test_functional_call_tuple_of_dicts():
    torch = pytest.importorskip("torch")
    from torch.func import functional_call as torch_call
    w, b, x = np.array([[1.0, 2.0]]), np.array([0.5]), np.array([[3.0, 4.0]])
    m = Linear(2, 1, dtype=T.float64)
    ours = functional_call(m, ({"weight": T.asarray(w)}, {"bias": T.asarray(b)}), (T.asarray(x),))
    ref = torch_call(torch.nn.Linear(2, 1).double(), ({"weight": torch.tensor(w)},
                                                       {"bias": torch.tensor(b)}), (torch.tensor(x),))
    assert ours.tolist() == ref.tolist()
    with pytest.raises(ValueError, match="more than one"):
        functional_call(m, ({"weight": T.asarray(w)}, {"weight": T.asarray(w)}), (T.asarray(x),))


# ---- fuse_conv_bn_eval of a grouped transposed convolution raised a broadcast error --------------

def test_fuse_grouped_transposed_conv_bn():
    rng = np.random.default_rng(0)
    conv = ConvTranspose2d(4, 6, 3, groups=2).eval()
    bn = BatchNorm2d(6).eval()
    with no_grad():
        bn.running_mean.copy_(T.asarray(rng.standard_normal(6).astype(np.float32)))
        bn.running_var.copy_(T.asarray(rng.uniform(0.5, 2.0, 6).astype(np.float32)))
        bn.weight.copy_(T.asarray(rng.standard_normal(6).astype(np.float32)))
        bn.bias.copy_(T.asarray(rng.standard_normal(6).astype(np.float32)))
    x = T.asarray(rng.standard_normal((2, 4, 5, 5)).astype(np.float32))
    fused = fuse_conv_bn_eval(conv, bn, transpose=True)
    np.testing.assert_allclose(fused(x).numpy(), bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)


def test_default_collate_names_itself_for_string_arrays():
    # caught: the error came from T.asarray, not naming default_collate (torch's names it)
    from nn.data import default_collate
    with pytest.raises(TypeError, match="default_collate: .*dtype <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_trunc_normal_bad_bounds_name_trunc_normal():
    # caught: a > b raised "uniform: need low <= high" with the erf-transformed bounds, std=0 a
    # ZeroDivisionError
    with pytest.raises(ValueError, match="trunc_normal_: the bounds need a <= b, got a=2.0, b=-2.0"):
        init.trunc_normal_(T.zeros(3), 0.0, 1.0, 2.0, -2.0)
    with pytest.raises(ValueError, match="trunc_normal_: std must be positive"):
        init.trunc_normal_(T.zeros(3), 0.0, 0.0)
    w = init.trunc_normal_(T.zeros(2000), 0.5, 2.0, 0.0, 1.0, generator=T.random.Generator(0)).numpy()
    assert w.min() >= 0.0 and w.max() <= 1.0 and 0.4 < w.mean() < 0.6
