"""nn.load on damaged files: every load raises CheckpointError or returns exactly what was
saved (issue 11, item 8). It used to let NotImplementedError (an unknown zip compression method
or version), RuntimeError (an "encrypted" flag), RecursionError (deep nesting) and MemoryError
(a header claiming a huge array) escape, and a damaged zip directory could hide entries, so a
checkpoint loaded as a plain .npz of fewer arrays."""
from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np
import pytest

import nn
import tensor as T
from nn.serialization import CheckpointError

FORMAT = "stridex-state-v1"


def _state():
    return {"w": T.arange(6.0).reshape(2, 3), "b": T.tensor([1.5, -2.0], dtype="bfloat16"),
            "opt": {"step": 3, "lr": 0.1, "state": {0: T.zeros(3, dtype="int32")}, "names": ["a", None]},
            "pair": (T.tensor([True, False]), 2)}


def _same(a, b) -> bool:
    if isinstance(b, T.Tensor):
        return (isinstance(a, T.Tensor) and a.dtype is b.dtype and a.shape == b.shape
                and a.astype("float64").tolist() == b.astype("float64").tolist())
    if isinstance(b, dict):
        return isinstance(a, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in b)
    if isinstance(b, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _load_or_checkpoint_error(path, data: bytes, want, what: str) -> bool:
    """True when loading data raised CheckpointError; else the result must equal want."""
    path.write_bytes(data)
    try:
        got = nn.load(path)
    except CheckpointError:
        return True
    assert _same(got, want), f"{what}: a damaged file loaded as something else: {got!r}"
    return False


@pytest.mark.parametrize("compress", [False, True], ids=["stored", "deflated"])
def test_truncated_and_flipped_checkpoints_raise_checkpoint_error(tmp_path, compress):
    """Truncation at every third length, every byte xor 0xFF, random bytes at 200 positions."""
    sd = _state()
    src = tmp_path / "ok.npz"
    nn.save(sd, src, compress=compress)
    raw = src.read_bytes()
    assert _same(nn.load(src), sd)
    bad = tmp_path / "bad.npz"
    refused = 0
    for n in range(0, len(raw), 3):
        refused += _load_or_checkpoint_error(bad, raw[:n], sd, f"truncated to {n} bytes")
    rng = np.random.default_rng(11)
    for i in range(len(raw)):
        b = bytearray(raw)
        b[i] ^= 0xFF
        refused += _load_or_checkpoint_error(bad, bytes(b), sd, f"byte {i} flipped")
    for i in rng.integers(0, len(raw), 200):
        b = bytearray(raw)
        b[i] = (b[i] + int(rng.integers(1, 256))) % 256
        refused += _load_or_checkpoint_error(bad, bytes(b), sd, f"byte {i} = {b[i]}")
    assert refused > len(raw) // 2  # most mutations are caught (the rest hit fields zipfile ignores)


def _npy(shape, descr="<f8", payload=b"") -> bytes:
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload


def _unclosed_header() -> bytes:
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, "
    header += b" " * (118 - len(header)) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + bytes(24)


def _tree(text: str) -> bytes:
    b = io.BytesIO()
    np.save(b, np.array(text))
    return b.getvalue()


def _zip(path, members: dict) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def _nested(depth: int) -> str:
    root = '{"list": [' * depth + '{"value": 1}' + ']}' * depth
    return '{"format": "' + FORMAT + '", "root": ' + root + "}"


def _patched(raw: bytes, sig: bytes, offset: int, fmt: str, value) -> bytes:
    """raw with a field of every record starting with sig (a zip header signature) replaced."""
    b = bytearray(raw)
    i = b.find(sig)
    while i >= 0:
        struct.pack_into(fmt, b, i + offset, value)
        i = b.find(sig, i + 1)
    return bytes(b)


def _refused(path, what: str) -> None:
    try:
        got = nn.load(path)
    except CheckpointError as e:
        assert str(e).startswith("load: "), what
        return
    raise AssertionError(f"{what}: loaded {got!r}")


def test_crafted_damage_raises_checkpoint_error(tmp_path):
    w = {"dict": [["w", {"tensor": "w", "dtype": "float64"}]]}
    files = {
        "deep json": {"__tree__.npy": _tree(_nested(100_000))},          # RecursionError in json
        "deep tree": {"__tree__.npy": _tree(_nested(900))},              # RecursionError in decode
        "huge array": {"__tree__.npy": _tree(json.dumps({"format": FORMAT, "root": w})),
                       "w.npy": _npy((2**40,))},                          # MemoryError
        "huge flat array": {"w.npy": _npy((2**40,))},
        "too big array": {"w.npy": _npy((2**40, 2**40))},
        "bad dtype": {"w.npy": _npy((2,), "<m8[s]", bytes(16))},
        "object dtype": {"w.npy": _npy((1,), "|O", bytes(8))},
        "tree not json": {"__tree__.npy": _tree("{not json")},
        "tree a number": {"__tree__.npy": _tree("3")},
        "bad node": {"__tree__.npy": _tree(json.dumps({"format": FORMAT, "root": {"list": 3}}))},
        "missing entry": {"__tree__.npy": _tree(json.dumps({"format": FORMAT, "root": w}))},
        "unclosed header": {"w.npy": _unclosed_header()},                # tokenize.TokenError
    }
    for what, members in files.items():
        p = tmp_path / f"{what}.npz"
        _zip(p, members)
        _refused(p, what)
    ok = tmp_path / "ok.npz"
    nn.save(_state(), ok)
    raw = ok.read_bytes()
    patches = {  # (signature, field offset, format, value): local header b"PK\3\4", central b"PK\1\2"
        "unknown compression method": (b"PK\x01\x02", 10, "<H", 99),   # NotImplementedError
        "zip version 21.0": (b"PK\x01\x02", 6, "<H", 210),             # NotImplementedError
        "encrypted flag": (b"PK\x01\x02", 8, "<H", 1),                 # RuntimeError
        "compressed patched data": (b"PK\x01\x02", 8, "<H", 1 << 5),   # NotImplementedError
        "strong encryption": (b"PK\x01\x02", 8, "<H", 1 << 6),
        "entry count": (b"PK\x05\x06", 10, "<H", 2),                   # a shorter directory
    }
    for what, (sig, off, fmt, value) in patches.items():
        p = tmp_path / "patched.npz"
        p.write_bytes(_patched(raw, sig, off, fmt, value))
        _refused(p, what)
    with pytest.raises(FileNotFoundError):
        nn.load(tmp_path / "missing.npz")
    assert _same(nn.load(ok), _state())
