"""The files behind nn.save and nn.load: NumPy's .npz format, checked before writing and after reading.

A .npz file is a zip archive that holds one ``NAME.npy`` file per array. nn.save checks every entry
before it touches a file, writes a temporary file beside the target and renames it onto the target
only once it is complete: an interrupted save (Ctrl-C, a full disk) leaves the previous checkpoint
whole. nn.load reads numbers only (never pickled objects, which can run code when read back).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import zipfile
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..backend import to_device
from ..errors import DTypeError, VarfuncError
from ..variable import Variable

SAVED_KINDS = "biufc"  # bool, integers, unsigned integers, floats, complex: what nn.load reads back

# Errors about the path or the machine, not about what the file holds: Python's own message says which.
_NOT_ABOUT_CONTENTS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError, MemoryError)


# What nn.save cannot write, and what to do instead (.npz files hold named arrays, nothing nested).
NOT_NESTED = (
    "nn.save writes one flat dict {name: array}, a Module or its state_dict(); an optimizer's "
    "state_dict() or a checkpoint dict ({'model': ..., 'epoch': ...}) is not supported: save each "
    "Module with nn.save(model, path), and keep the rest with pickle (pickle.dump(optimizer."
    "state_dict(), file)), or rebuild the optimizer after loading the model"
)


def with_article(name: str) -> str:
    """'an Adam', 'a list': a type's name as a message says it."""
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def arrays_to_save(state: Any) -> OrderedDict:
    """{name: NumPy array on the host} from a state dict, every entry checked before any file is touched."""
    if not isinstance(state, Mapping):
        if hasattr(state, "param_groups"):  # an optimizer: nn cannot import optim to ask isinstance
            raise DTypeError(f"nn.save: got {with_article(type(state).__name__)} optimizer; {NOT_NESTED}")
        raise DTypeError(
            "nn.save: expected a Module or a dict of arrays (model.state_dict()), got "
            f"{with_article(type(state).__name__)}"
        )
    if {"state", "param_groups"} <= set(state):
        raise DTypeError(f"nn.save: this is an optimizer's state_dict(); {NOT_NESTED}")
    arrays = OrderedDict()
    for name, value in state.items():
        if not isinstance(name, str):
            raise DTypeError(
                f"nn.save: the key {name!r} is {with_article(type(name).__name__)}; the names in a state "
                "dict are strings, as model.state_dict() gives them"
            )
        value = value.data if isinstance(value, Variable) else value
        if isinstance(value, Mapping):
            raise DTypeError(f"nn.save: {name!r} is a dict; {NOT_NESTED}")
        if not hasattr(value, "shape"):
            raise DTypeError(
                f"nn.save: {name!r} is {with_article(type(value).__name__)}, not an array; .npz files "
                "hold arrays only (save a Module or its state_dict())"
            )
        try:
            array = np.asarray(to_device(value, "cpu"))
        except (TypeError, ValueError, RuntimeError) as error:  # a torch tensor that requires grad, ...
            raise DTypeError(
                f"nn.save: {name!r} is {with_article(type(value).__name__)} that cannot become a NumPy array "
                f"({error})"
            ) from None
        if array.dtype.kind not in SAVED_KINDS:
            raise DTypeError(
                f"nn.save: {name!r} holds {array.dtype} data, which nn.load would refuse to read back "
                "(objects are stored with pickle); save numbers only (bool, integer, float or complex "
                "arrays), e.g. value.astype(np.float32)"
            )
        arrays[name] = array
    return arrays


def write_npz(file: Any, arrays: Mapping) -> None:
    """Write arrays to an open binary file as np.savez does (which would take an array named 'file'
    for its own argument)."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def write_atomically(arrays: Mapping, path: Any) -> None:
    """Write arrays to the file named path (that exact name) through a temporary file beside it."""
    try:
        target = os.path.realpath(os.fsdecode(path))  # through a symbolic link, as open(path, "wb") writes
    except TypeError:
        raise DTypeError(
            "nn.save: path must be a file name (a str or a pathlib.Path), got "
            f"{with_article(type(path).__name__)}"
        ) from None
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(
            f"nn.save: the folder {folder!r} does not exist; create it first (os.makedirs)"
        )
    if os.path.isdir(target):
        raise IsADirectoryError(
            f"nn.save: {_shown(path)} is a folder; give a file name inside it, e.g. model.npz"
        )
    temporary = os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(4)}.tmp")
    file = open(temporary, "xb")  # "x": a new file, never someone else's
    try:
        with file:
            write_npz(file, arrays)
            file.flush()
            os.fsync(file.fileno())  # on the disk before it takes the old file's place
        if os.path.exists(target):
            shutil.copymode(target, temporary)  # keep the old file's permissions
        os.replace(temporary, target)  # one step: the old file or the new one, never half of one
    except BaseException:  # Ctrl-C too: remove the temporary file and leave the old one as it was
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _shown(path: Any) -> str:
    """The path as the message names it."""
    return repr(os.fsdecode(path)) if isinstance(path, (str, bytes, os.PathLike)) else repr(path)


def read_npz(path: Any) -> OrderedDict:
    """{name: NumPy array}, in order, from a file nn.save wrote; VarfuncError for any other file."""
    try:
        contents = np.load(path, allow_pickle=False)
        if isinstance(contents, np.lib.npyio.NpzFile):  # arrays are read here, while the file is open
            with contents:
                contents = OrderedDict((name, contents[name]) for name in contents.files)
    except _NOT_ABOUT_CONTENTS:
        raise
    except Exception as error:  # zipfile.BadZipFile, EOFError, ValueError, ...: the file's contents
        why = (
            "it holds pickled Python objects (or is damaged), which nn.load never reads: unpickling "
            "can run any code"
            if "pickle" in str(error)
            else "it is cut short or damaged, or nn.save did not write it"
        )
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        raise VarfuncError(
            f"nn.load: cannot read {_shown(path)} ({detail}): {why}; save the model again with "
            "nn.save(model, path)"
        ) from None
    if not isinstance(contents, OrderedDict):  # np.save's .npy: a single array, without a name
        raise VarfuncError(
            f"nn.load: {_shown(path)} holds a single {contents.dtype} array of shape {contents.shape} "
            "(np.save's .npy format), not a state dict; save the model with nn.save(model, path)"
        )
    for name, value in contents.items():
        if not isinstance(value, np.ndarray):  # another file in a zip archive comes back as bytes
            raise VarfuncError(
                f"nn.load: {_shown(path)} is a zip archive whose {name!r} is not a NumPy array, so nn.save "
                "did not write it (torch.save writes zip archives too: read those with torch.load and "
                "pass {name: tensor.numpy()} to load_state_dict)"
            )
    return contents
