"""Recurrent layers as torch.nn's: RNN, LSTM, GRU and their one-step cells.

Same constructor arguments, parameter names and shapes (weight_ih_l{k}[_reverse],
weight_hh_l{k}[_reverse], bias_ih_l{k}[_reverse], bias_hh_l{k}[_reverse], weight_hr_l{k} for an
LSTM's projection), initialisation (U(-1/sqrt(hidden), 1/sqrt(hidden)) for every parameter),
gate order (LSTM: input, forget, cell, output; GRU: reset, update, new) and input / output
layouts ((L, N, H), batch_first (N, L, H), or unbatched (L, H)), so a state_dict loads across.
A PackedSequence (nn.utils.rnn) input gives a PackedSequence output: each sequence runs for its
own length (steps past it cost nothing), and h_n holds each one's state after its last step.

Each layer and direction makes one matrix product for the input projections of every time
step, then one small product per step for the hidden state. The time loop of a layer and
direction is one autograd node with a hand-written reverse loop, LSTM and GRU steps one fused
kernel each way (nn/_rnn_fused.py); forward-mode AD, saved-tensor hooks and mixed dtypes take
the op-by-op recording instead. Dropout (training mode) acts between layers.

>>> import tensor as T
>>> _ = T.manual_seed(0)
>>> lstm = LSTM(4, 3, num_layers=2, batch_first=True)
>>> out, (h, c) = lstm(T.ones((2, 5, 4)))
>>> out.shape, h.shape, c.shape
((2, 5, 3), (2, 2, 3), (2, 2, 3))
"""
from __future__ import annotations

import itertools
import math
import warnings

import tensor as T
from tensor import Tensor

from . import _functional as F
from . import _rnn_fused, init
from ._rnn_fused import _step
from .module import Module, Parameter
from .utils.rnn import PackedSequence, batch_sizes_of

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _param(shape, dtype, device) -> Parameter:
    return Parameter(T.empty(shape, dtype=T.float32 if dtype is None else dtype, device=device))


class RecurrentInputError(ValueError, RuntimeError):
    """A recurrent module's input that PyTorch refuses too, a sequence of length 0 (a
    ValueError, and a RuntimeError as PyTorch raises)."""


def _check_float(name: str, x: Tensor, device=None) -> None:
    """Integer and bool inputs are refused (PyTorch: no such weights). Float inputs of another
    dtype than the weights' promote, as in Linear and the convolutions (a float64 input, NumPy's
    default, into float32 weights gives float64 results); PyTorch raises instead. The input
    must be on the weights' device."""
    if x.dtype.kind != "f":
        raise TypeError(f"{name}: expected a floating-point input, got {x.dtype.name}")
    _same_device(name, "input", x, device)


def _same_device(name: str, what: str, x: Tensor, device) -> None:
    if device is not None and x.device != device:
        raise ValueError(f"{name}: the {what} is on {x.device}, the parameters on {device}")


def _check_state(name: str, s, device=None) -> None:
    """A given hidden / cell state: a floating-point tensor (an integer one would promote
    into the float weights' products silently; PyTorch refuses it)."""
    if not isinstance(s, Tensor):
        raise TypeError(f"{name}: expected the hidden state as a Tensor, got {type(s).__name__}")
    if s.dtype.kind != "f":
        raise TypeError(f"{name}: expected a floating-point hidden state, got {s.dtype.name}")
    _same_device(name, "hidden state", s, device)


def _positive(name: str, **sizes) -> None:
    for what, v in sizes.items():
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"{name}: {what} must be a positive integer, got {v!r}")


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrence shared by RNN, LSTM and GRU."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        name = type(self).__name__
        _positive(name, input_size=input_size, hidden_size=hidden_size, num_layers=num_layers)
        if not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout must be in [0, 1], got {dropout}")
        if dropout > 0 and num_layers == 1:     # as PyTorch: it would drop nothing
            warnings.warn(f"{name}: dropout acts between recurrent layers, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers=1", UserWarning, stacklevel=3)
        if proj_size < 0 or proj_size and (mode != "LSTM" or proj_size >= hidden_size):
            raise ValueError(f"{name}: proj_size must be 0, or (LSTM only) in [1, hidden_size="
                             f"{hidden_size}), got {proj_size}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        dirs = 2 if bidirectional else 1
        gate, out = _GATES[mode] * hidden_size, proj_size or hidden_size
        self._names: list[list[str]] = []   # per (layer, direction): its parameter names
        for layer in range(num_layers):
            fan_in = input_size if layer == 0 else out * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate, fan_in)), ("weight_hh", (gate, out))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for p, shape in shapes:
                    setattr(self, p + sfx, _param(shape, dtype, device))
                self._names.append([p + sfx for p, _ in shapes])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's init: every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        k = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -k, k)

    def _weights(self, layer: int, d: int):
        got = dict.fromkeys(("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))
        for n in self._names[layer * (2 if self.bidirectional else 1) + d]:
            got[n[:n.index("_l")]] = getattr(self, n)
        return got

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        for k, default in (("proj_size", 0), ("num_layers", 1), ("bias", True),
                           ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, k) != default:
                s += f", {k}={getattr(self, k)}"
        return s

    def flatten_parameters(self) -> None:
        """A no-op, for PyTorch code that calls it: PyTorch packs the weights into one cuDNN
        buffer; here every step reads the parameters where they are."""

    def _state_dtype(self, x: Tensor):
        """The omitted states' dtype: the input's promoted with the weights' (the dtype of
        every step's products)."""
        return T.result_type(x.dtype, getattr(self, self._names[0][0]).dtype)

    def _device(self):
        return getattr(self, self._names[0][0]).device

    @property
    def _flat_weights_names(self) -> list[str]:
        return [n for names in self._names for n in names]

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def _all_weights(self) -> list[list[str]]:
        """The parameter names per (layer, direction), as PyTorch's attribute."""
        return [list(names) for names in self._names]

    @property
    def all_weights(self) -> list[list[Tensor]]:
        """The parameters per (layer, direction), in PyTorch's order: [w_ih, w_hh, b_ih, b_hh
        (with bias), w_hr (with proj_size)]."""
        return [[getattr(self, n) for n in names] for names in self._names]

    def _check(self, x, hx, name: str):
        """(input as (L, N, H_in) or packed data, h0, c0, unbatched): hx checked and defaulted
        to zeros (and put in the packed batch's order)."""
        if isinstance(x, PackedSequence):
            return self._check_packed(x, hx, name)
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}: expected a Tensor or a PackedSequence input, got "
                            f"{type(x).__name__}")
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            lay = "(N, L, {})" if self.batch_first else "(L, N, {})"
            raise ValueError(f"{name}: expected input of shape {lay.format(self.input_size)} "
                             f"(batch_first={self.batch_first}) or unbatched "
                             f"(L, {self.input_size}), got shape {tuple(x.shape)}")
        _check_float(name, x, self._device())
        if x.shape[1 if self.batch_first and x.ndim == 3 else 0] == 0:
            raise RecurrentInputError(f"{name}: expected sequence length to be larger than 0, "
                                      f"got input of shape {tuple(x.shape)}")
        unbatched = x.ndim == 2
        x = T.expand_dims(x, 1) if unbatched else (T.swapaxes(x, 0, 1) if self.batch_first else x)
        h0, c0 = self._states(hx, x.shape[1], self._state_dtype(x), x.device, unbatched, name)
        return x, h0, c0, unbatched

    def _check_packed(self, x: PackedSequence, hx, name: str):
        data = x.data
        if data.ndim != 2 or data.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected packed data of shape (*, {self.input_size}), got "
                             f"{tuple(data.shape)}")
        _check_float(name, data, self._device())
        sizes = batch_sizes_of(x, name)
        n = sizes[0] if sizes else 0
        h0, c0 = self._states(hx, n, self._state_dtype(data), data.device, False, name)
        if x.sorted_indices is not None and hx is not None:   # hx is in the caller's order
            h0 = h0[:, x.sorted_indices]
            c0 = c0[:, x.sorted_indices] if c0 is not None else None
        return data, h0, c0, False

    def _states(self, hx, n: int, dtype, device, unbatched: bool, name: str):
        """(h0, c0) as (layers * directions, n, H): hx checked, or zeros."""
        dirs = 2 if self.bidirectional else 1
        out = self.proj_size or self.hidden_size
        want = [(dirs * self.num_layers, n, out)]
        if self.mode == "LSTM":
            want.append((dirs * self.num_layers, n, self.hidden_size))
            if hx is not None and (not isinstance(hx, tuple | list) or len(hx) != 2):
                raise TypeError(f"{name}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
        elif hx is not None and not isinstance(hx, Tensor):
            raise TypeError(f"{name}: hx must be a tensor h_0, got {type(hx).__name__}")
        states = list(hx) if isinstance(hx, tuple | list) else [hx] * len(want)
        got = []
        for s, shape in zip(states, want):
            if s is None:
                got.append(T.zeros(shape, dtype=dtype, device=device))
                continue
            sh = shape[::2] if unbatched else shape
            _check_state(name, s, device)
            if tuple(s.shape) != sh:
                raise ValueError(f"{name}: expected hidden state of shape {sh}, got "
                                 f"{tuple(s.shape)}")
            got.append(T.expand_dims(s, 1) if unbatched else s)
        return got[0], (got[1] if self.mode == "LSTM" else None)

    def _direction(self, gx: Tensor, sizes, h: Tensor, c, w: dict, reverse: bool):
        """One layer and direction over the projected inputs gx: (L, N, gates * H) for a padded
        batch (sizes None), else packed rows (sum(sizes), gates * H). Returns (output, h, c):
        output (L, N, H_out), or packed rows; a packed sequence's h and c stop at its end."""
        steps = gx.shape[0] if sizes is None else len(sizes)
        if steps and _rnn_fused.usable(gx, h, c, w["weight_hh"], w["bias_hh"], w["weight_hr"]):
            return _rnn_fused.run(self.mode, gx, sizes, h, c, w["weight_hh"], w["bias_hh"],
                                  w["weight_hr"], reverse)
        starts = None if sizes is None else [0, *itertools.accumulate(sizes)]
        seq = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            g = gx[t] if sizes is None else gx[starts[t]:starts[t + 1]]
            b = g.shape[0]  # a packed step runs the b longest sequences (a prefix of the batch)
            full = b == h.shape[0]
            hb, cb = _step(self.mode, g, h if full else h[:b],
                           c if full or c is None else c[:b], w["weight_hh"], w["bias_hh"],
                           w["weight_hr"])
            seq[t] = hb
            if full:
                h, c = hb, cb
            else:           # the rest keep their state: ended (forward) or not begun (reverse)
                h = T.concat([hb, h[b:]])
                c = None if c is None else T.concat([cb, c[b:]])
        if not seq:
            shape = (0,) + tuple(h.shape if sizes is None else h.shape[1:])
            return T.zeros(shape, dtype=gx.dtype, device=gx.device), h, c
        return (T.stack(seq) if sizes is None else T.concat(seq)), h, c

    def forward(self, input, hx=None):
        name = type(self).__name__
        x, h0, c0, unbatched = self._check(input, hx, name)
        packed = input if isinstance(input, PackedSequence) else None
        sizes = None if packed is None else batch_sizes_of(packed)
        dirs = 2 if self.bidirectional else 1
        hs, cs = [], []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                x = F.dropout(x, self.dropout, True)
            outs = []
            for d in range(dirs):
                w = self._weights(layer, d)
                k = layer * dirs + d
                # every step's input projection in one product
                gx = F.linear(x, w["weight_ih"], w["bias_ih"])
                y, h, c = self._direction(gx, sizes, h0[k], None if c0 is None else c0[k], w,
                                          bool(d))
                outs.append(y)
                hs.append(h)
                cs.append(c)
            x = outs[0] if dirs == 1 else T.concat(outs, axis=-1)
        h_n = T.stack(hs)
        c_n = T.stack(cs) if self.mode == "LSTM" else None
        if packed is not None:
            out = PackedSequence(x, packed.batch_sizes, packed.sorted_indices,
                                 packed.unsorted_indices)
            if packed.unsorted_indices is not None:     # back to the caller's order
                h_n = h_n[:, packed.unsorted_indices]
                c_n = None if c_n is None else c_n[:, packed.unsorted_indices]
        elif unbatched:
            out, h_n, c_n = x[:, 0], h_n[:, 0], (None if c_n is None else c_n[:, 0])
        else:
            out = T.swapaxes(x, 0, 1) if self.batch_first else x
        return (out, h_n) if self.mode != "LSTM" else (out, (h_n, c_n))


class RNN(RNNBase):
    """Elman RNN: h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), tanh or relu."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_" + nonlinearity.upper(), input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o from x_t and h_{t-1}; c_t = f c + i g,
    h_t = o tanh(c_t) (times W_hr^T with proj_size). hx and the returned state: (h, c)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit: r, z gates; n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn));
    h_t = (1 - z) n + z h_{t-1}."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class RNNCellBase(Module):
    """One step of a recurrence (RNNCell, LSTMCell, GRUCell): input (N, H_in) or (H_in,)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool, device,
                 dtype) -> None:
        super().__init__()
        _positive(type(self).__name__, input_size=input_size, hidden_size=hidden_size)
        self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, hidden_size, bias
        gate = _GATES[mode] * hidden_size
        self.weight_ih = _param((gate, input_size), dtype, device)
        self.weight_hh = _param((gate, hidden_size), dtype, device)
        if bias:
            self.bias_ih, self.bias_hh = _param((gate,), dtype, device), _param((gate,), dtype, device)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _run(self, x, states):
        name = type(self).__name__
        if not isinstance(x, Tensor) or x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"{name}: expected input of shape (N, {self.input_size}) or "
                             f"({self.input_size},), got {got}")
        _check_float(name, x, self.weight_ih.device)
        unbatched = x.ndim == 1
        if unbatched:
            x = T.expand_dims(x, 0)
        shape = (x.shape[0], self.hidden_size)
        full = []
        for s in states:
            if s is None:
                full.append(T.zeros(shape, dtype=T.result_type(x.dtype, self.weight_ih.dtype),
                                    device=x.device))
                continue
            _check_state(name, s, x.device)
            if tuple(s.shape) != (shape[1:] if unbatched else shape):
                raise ValueError(f"{name}: expected hidden state of shape "
                                 f"{shape[1:] if unbatched else shape}, got {tuple(s.shape)}")
            full.append(T.expand_dims(s, 0) if unbatched else s)
        gx = F.linear(x, self.weight_ih, self.bias_ih)
        h, c = full[0], full[1] if len(full) > 1 else None
        if self.mode in ("LSTM", "GRU") and _rnn_fused.usable(gx, h, c, self.weight_hh,
                                                               self.bias_hh):   # one node
            _, h, c = _rnn_fused.run(self.mode, T.expand_dims(gx, 0), None, h, c, self.weight_hh,
                                     self.bias_hh, None, False)
        else:
            h, c = _step(self.mode, gx, h, c, self.weight_hh, self.bias_hh)
        if unbatched:
            h, c = h[0], (c[0] if c is not None else None)
        return h, c


class RNNCell(RNNCellBase):
    """h' = nonlinearity(x W_ih^T + b_ih + h W_hh^T + b_hh)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got "
                             f"{nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_" + nonlinearity.upper(), input_size, hidden_size, bias, device,
                         dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._run(input, [hx])[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c'); hx is (h, c) or None (zeros)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx=None):
        if hx is not None and (not isinstance(hx, tuple | list) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h, c), got {type(hx).__name__}")
        return self._run(input, list(hx) if hx is not None else [None, None])


class GRUCell(RNNCellBase):
    """One GRU step: returns h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._run(input, [hx])[0]
