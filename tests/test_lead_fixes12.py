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
