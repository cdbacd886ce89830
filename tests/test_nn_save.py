"""nn.save and nn.load: what save refuses before touching a file, an interrupted save that leaves the
old file whole, and load's errors for files that nn.save did not write (or that were cut short)."""

import io
import os
import re

import numpy as np
import pytest
from nn_models import TwoLayer

import varfunc.nn as nn
from varfunc import DTypeError, VarfuncError


def saved_model(tmp_path, name="model.pt"):
    """A TwoLayer saved under tmp_path/name, its state dict and the file's bytes."""
    nn.manual_seed(3)
    model = TwoLayer()
    path = tmp_path / name
    nn.save(model, path)
    return path, model.state_dict(), path.read_bytes()


def assert_loads_as(path, state):
    loaded = nn.load(path)
    assert list(loaded) == list(state)
    for name, value in state.items():
        np.testing.assert_array_equal(loaded[name], value)


@pytest.mark.parametrize("cut", [0, 10, 100, -30, -1])
def test_load_of_a_file_cut_short_names_load_the_path_and_what_to_do(tmp_path, cut):
    """Before: zipfile.BadZipFile: File is not a zip file (or EOFError: No data left in file)."""
    path, _, data = saved_model(tmp_path)
    path.write_bytes(data[:cut])
    with pytest.raises(
        VarfuncError, match=rf"nn.load: cannot read '{path}' .*cut short or damaged.*nn.save\(model, path\)"
    ):
        nn.load(path)


def test_load_of_a_pickled_object_array_says_it_never_unpickles(tmp_path):
    """Before: ValueError: Object arrays cannot be loaded when allow_pickle=False."""
    path = tmp_path / "objects.npz"
    np.savez(path, w=np.array([1, "x"], dtype=object))
    with pytest.raises(VarfuncError, match=r"nn.load: cannot read .*objects.npz.*pickled Python objects"):
        nn.load(path)


def test_load_of_a_single_array_or_of_another_zip_archive_says_what_it_is(tmp_path):
    """Before: np.save's .npy gave "'numpy.ndarray' object does not support the context manager
    protocol", and a zip archive of other files loaded as bytes."""
    np.save(tmp_path / "one.npy", np.ones(3))
    with pytest.raises(VarfuncError, match=r"one.npy' holds a single float64 array of shape \(3,\)"):
        nn.load(tmp_path / "one.npy")
    import zipfile

    with zipfile.ZipFile(tmp_path / "other.pt", "w") as archive:
        archive.writestr("archive/data.pkl", b"not an array")
    with pytest.raises(VarfuncError, match=r"other.pt' is a zip archive whose 'archive/data.pkl' is not a"):
        nn.load(tmp_path / "other.pt")


def test_load_still_reads_a_file_object_and_leaves_a_missing_file_to_python(tmp_path):
    path, state, data = saved_model(tmp_path)
    assert_loads_as(io.BytesIO(data), state)
    with pytest.raises(FileNotFoundError):
        nn.load(tmp_path / "missing.pt")


@pytest.mark.parametrize(
    "value, dtype",
    [
        (np.array([1, "x"], dtype=object), "object"),
        (np.array([None, None]), "object"),
        (np.array(["a", "b"]), "<U1"),
    ],
    ids=["objects", "Nones", "strings"],
)
def test_save_refuses_what_load_cannot_read_before_touching_the_file(tmp_path, value, dtype):
    """Before: an object array was written over the good file, which nn.load then refused."""
    path, state, data = saved_model(tmp_path)
    bad = dict(state, extra=value)
    with pytest.raises(DTypeError, match=rf"nn.save: 'extra' holds {dtype} data, which nn.load would refuse"):
        nn.save(bad, path)
    assert path.read_bytes() == data
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]


def test_save_keeps_booleans_integers_and_complex_numbers(tmp_path):
    state = {"mask": np.array([True, False]), "count": np.arange(3, dtype=np.uint8), "z": np.array(1 + 2j)}
    nn.save(state, tmp_path / "kinds.npz")
    loaded = nn.load(tmp_path / "kinds.npz")
    assert [loaded[k].dtype for k in state] == [v.dtype for v in state.values()]


@pytest.mark.parametrize("name", ["file", "allow_pickle"])
def test_save_takes_any_name_np_savez_would_take_for_its_own_argument(tmp_path, name):
    """Before: TypeError: savez() got multiple values for argument 'file'."""
    nn.save({name: np.ones(2)}, tmp_path / "x.npz")
    assert list(nn.load(tmp_path / "x.npz")) == [name]


@pytest.mark.parametrize(
    "state, words",
    [
        (
            [np.ones(2)],
            r"nn.save: expected a Module or a dict of arrays \(model.state_dict\(\)\), got a list",
        ),
        ({0: np.ones(2)}, r"nn.save: the key 0 is an int; the names in a state dict are strings"),
    ],
)
def test_save_names_what_is_not_a_state_dict(tmp_path, state, words):
    """Before: AttributeError: 'list' object has no attribute 'items'; savez's 'keywords must be strings'."""
    with pytest.raises(DTypeError, match=words):
        nn.save(state, tmp_path / "x.npz")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, OSError])
def test_an_interrupted_save_leaves_the_old_file_whole(tmp_path, monkeypatch, interrupt):
    """Before: the file was opened with "wb" (emptied) first, so Ctrl-C or a full disk part-way through
    the arrays left a file that nn.load could not read, and the previous checkpoint was gone."""
    path, state, data = saved_model(tmp_path)
    write_array = np.lib.format.write_array
    written = []

    def interrupted(*args, **kwargs):
        if written:
            raise interrupt("stopped part-way")
        written.append(write_array(*args, **kwargs))

    monkeypatch.setattr(np.lib.format, "write_array", interrupted)
    nn.manual_seed(4)
    with pytest.raises(interrupt, match="stopped part-way"):
        nn.save(TwoLayer(), path)
    monkeypatch.undo()
    assert written, "the save got as far as its first array"
    assert path.read_bytes() == data
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]  # no temporary file left behind
    assert_loads_as(path, state)


def test_save_replaces_the_file_keeps_its_permissions_and_writes_through_a_link(tmp_path):
    path, _, _ = saved_model(tmp_path)
    os.chmod(path, 0o600)
    os.symlink(path.name, tmp_path / "latest.pt")
    state = {"w": np.arange(3.0)}
    nn.save(state, tmp_path / "latest.pt")
    assert (tmp_path / "latest.pt").is_symlink()
    assert_loads_as(path, state)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["latest.pt", "model.pt"]


def test_save_names_a_missing_folder_a_folder_and_a_path_that_is_not_a_name(tmp_path):
    model = TwoLayer()
    with pytest.raises(FileNotFoundError, match=r"nn.save: the folder '.*/no' does not exist; create it"):
        nn.save(model, tmp_path / "no" / "model.pt")
    with pytest.raises(IsADirectoryError, match=r"nn.save: .* is a folder; give a file name inside it"):
        nn.save(model, tmp_path)
    with pytest.raises(DTypeError, match=r"nn.save: path must be a file name .* got a BytesIO"):
        nn.save(model, io.BytesIO())
    assert os.listdir(tmp_path) == []


def test_save_says_an_optimizer_or_a_checkpoint_dict_is_not_supported(tmp_path):
    """Before: "'state' is a dict, not an array; ... (save a Module or its state_dict())" for an
    optimizer's state_dict, and "got a Adam" for the optimizer itself."""
    import varfunc.optim as optim

    model = nn.Linear(2, 1)
    optimizer = optim.Adam(model.parameters())
    path = tmp_path / "checkpoint.npz"
    for thing, start in (
        (optimizer, "got an Adam optimizer"),
        (optimizer.state_dict(), "this is an optimizer's state_dict()"),
        ({"model": model.state_dict(), "epoch": 3}, "'model' is a dict"),
    ):
        with pytest.raises(DTypeError, match=rf"nn.save: {re.escape(start)}; .*is not supported.*pickle"):
            nn.save(thing, path)
    assert not path.exists()
