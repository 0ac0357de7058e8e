"""Small fixes of the twelfth session's review: set_printoptions is all or nothing; T.load of a
truncated or damaged .npy / .npz names the file (zipfile's and NumPy's errors did not)."""
import numpy as np
import pytest

import tensor as T
from tensor.serialization import CheckpointError


def test_set_printoptions_with_a_bad_value_changes_nothing():
    before = T.get_printoptions()
    try:
        with pytest.raises(ValueError, match="threshold"):
            T.set_printoptions(precision=3, nanstr="nope", threshold=-5)
        assert T.get_printoptions() == before
        with pytest.raises(ValueError, match="profile"):
            T.set_printoptions(precision=2, profile="huge")
        assert T.get_printoptions() == before
    finally:
        T.set_printoptions(profile="default")


@pytest.mark.parametrize("kind", ["npy", "npz"])
def test_load_of_a_truncated_file_names_it(tmp_path, kind):
    path = tmp_path / f"a.{kind}"
    if kind == "npy":
        np.save(path, np.arange(1000.0))
    else:
        np.savez(path, x=np.arange(1000.0), y=np.ones(3))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(CheckpointError, match=f"a.{kind}"):
        T.load(path)
    path.write_bytes(data)
    got = T.load(path)
    first = got if kind == "npy" else got["x"]
    np.testing.assert_array_equal(first.numpy(), np.arange(1000.0))


def test_load_keeps_numpys_own_refusals(tmp_path):
    path = tmp_path / "obj.npy"
    np.save(path, np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle"):
        T.load(path)
    with pytest.raises(FileNotFoundError):
        T.load(tmp_path / "missing.npy")


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_sigmoid_of_large_negatives_underflows_gradually(device, dtype):
    """sigmoid(x) = e^x / (1 + e^x) for x < 0: the CUDA kernels computed 1 / (1 + exp(-x)),
    0 once exp(-x) overflows (float32 x < -88.7; the CPU's float64 below -709), where the
    answer is the subnormal e^x."""
    xs = {"float32": [-89.0, -95.0, -100.0], "bfloat16": [-89.0, -90.0],
          "float64": [-710.0, -720.0, -740.0]}[dtype]
    got = T.sigmoid(T.asarray(np.array(xs), dtype=dtype, device=device)).astype("float64").numpy()
    want = T.asarray(np.exp(np.array(xs))).astype(dtype).astype("float64").numpy()
    assert (want > 0).all()
    np.testing.assert_allclose(got, want, rtol=2 ** -6 if dtype == "bfloat16" else 1e-6)
    mid = np.array([-30.0, -1.0, 0.0, 2.0, 40.0])
    got = T.sigmoid(T.asarray(mid, dtype=dtype, device=device)).astype("float64").numpy()
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-mid)), rtol=2 ** -7 if dtype == "bfloat16" else 1e-6)
