"""Operands and index keys on another device than the Variable: a DeviceError that names the operator
(or Variable[...]) and both devices, as Variable with Variable always gave; a host array still goes
to a GPU Variable's device. GPU index keys are checked where they are, with no copy to the host."""

import re
import warnings

import numpy as np
import pytest

import varfunc as vf
from varfunc import Variable, backend
from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu


def gpu(array):
    return FakeGpuArray(np.asarray(array))


MASKS = {"==": lambda a, b: a == b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b}
MASKS.update({"&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b})


@pytest.mark.parametrize("symbol", MASKS)
@pytest.mark.parametrize("gpu_first", [False, True], ids=["cpu op gpu", "gpu op cpu"])
def test_comparing_variables_on_two_devices_names_the_operator_and_devices(symbol, gpu_first):
    """It was CuPy's bare TypeError ("Unsupported type <class 'numpy.ndarray'>")."""
    with fake_gpu():
        cpu, on_gpu = Variable(np.array([1, 0, 1])), Variable(gpu([1, 1, 0]))
        a, b = (on_gpu, cpu) if gpu_first else (cpu, on_gpu)
        devices = "input 0 on cuda:0, input 1 on cpu" if gpu_first else "input 0 on cpu, input 1 on cuda:0"
        with pytest.raises(vf.DeviceError, match=rf"^{re.escape(symbol)}: .*{devices}"):
            MASKS[symbol](a, b)


@pytest.mark.parametrize(
    "op, name",
    [
        (lambda x, raw: x + raw, "Add"),
        (lambda x, raw: raw + x, "Add"),
        (lambda x, raw: x * raw, "Mul"),
        (lambda x, raw: x.mm(raw.reshape(3, 1)), "Mm"),
        (lambda x, raw: x == raw, "=="),
        (lambda x, raw: (x > 0) & (raw > 0), "&"),
    ],
)
def test_a_gpu_array_meeting_a_cpu_variable_is_refused_not_copied_to_the_host(op, name):
    """cpu_var + gpu_array copied the GPU array to the host on every call, silently."""
    with fake_gpu():
        x = Variable(np.ones((1, 3)), requires_grad=False) * 1
        with pytest.raises(vf.DeviceError, match=rf"^{name}: .*input 0 on cpu, input 1 on cuda:0"):
            op(x, gpu(np.ones(3)))
        assert x._version == [0] and type(x.creator).__name__ == "MulConstant"


def test_a_host_array_or_list_meeting_a_gpu_variable_still_goes_to_the_gpu():
    with fake_gpu(host_copies=True):
        x = Variable(gpu([1.0, 2.0, 3.0]))
        for result in (
            x + np.ones(3),
            x * [1.0, 2.0, 3.0],
            x == np.array([1.0, 0.0, 3.0]),
            x.cmax(np.zeros(3)),
        ):
            assert result.device == "cuda:0"
        assert (x == [1.0, 0.0, 3.0]).data.get().tolist() == [True, False, True]


def test_an_index_on_another_device_is_a_device_error_naming_the_indexing():
    """cpu_var[gpu_mask] gave CuPy's "Implicit conversion to a NumPy array is not allowed"."""
    with fake_gpu():
        x = Variable(np.arange(4.0))
        mask = Variable(gpu([True, False, True, False]))
        with pytest.raises(
            vf.DeviceError, match=r"^Variable\[.*\]: the index is on cuda:0 but the Variable is on cpu"
        ):
            x[mask]
        with pytest.raises(vf.DeviceError, match=r"^Variable\[\(slice.*\]: the index is on cuda:0"):
            Variable(np.ones((2, 4)))[:, gpu([0, 1])]
        assert Variable(gpu(np.arange(4.0)))[np.array([3, 0])].data.get().tolist() == [3.0, 0.0]  # host key


@pytest.mark.parametrize(
    "shape, key, words",
    [
        ((3,), (gpu([0, 5]),), "index 5 is out of bounds for axis 0 with size 3"),
        ((2, 3), (slice(None), gpu([-4, 1])), "index -4 is out of bounds for axis 1 with size 3"),
        ((2, 3), (Ellipsis, gpu([3])), "index 3 is out of bounds for axis 1 with size 3"),
        (
            (2, 3, 2),
            (gpu(np.ones((2, 3), bool)), gpu([2])),
            "index 2 is out of bounds for axis 2 with size 2",
        ),
        ((2, 3), (None, gpu([2]), gpu([0])), "index 2 is out of bounds for axis 0 with size 2"),
    ],
)
def test_gpu_integer_keys_are_range_checked_on_the_gpu(shape, key, words):
    """CuPy wraps an out-of-range index around; the check copied every key to the host to ask NumPy."""
    with fake_gpu(host_copies=False):
        x = Variable(gpu(np.zeros(shape)))
        with pytest.raises(vf.ShapeError, match=rf"^Variable\[.*\]: {words} \(the Variable has shape"):
            x[key]


@pytest.mark.parametrize(
    "key",
    [
        ([10], slice(0, 0)),  # another axis picks nothing: NumPy still reads the 10 and refuses it
        ([], [10]),  # the index arrays broadcast to nothing: NumPy reads no value and accepts it
        ([10], [False, False, False, False]),  # a mask picking nothing, broadcast with [10]
        ([2], slice(0, 0), [7]),
        ([[10]],),
    ],
    ids=["empty slice beside", "broadcast to nothing", "empty mask beside", "two checked", "2-d"],
)
def test_a_gpu_key_whose_result_is_empty_is_range_checked_as_numpy_does(key):
    """The check skipped every key whose result was empty, so [10] beside an empty slice passed."""
    data = np.zeros((3, 4, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # NumPy before 2.3 warned where it now raises
        try:
            expected = data[
                tuple(np.array(k, dtype=int if k == [] else None) if isinstance(k, list) else k for k in key)
            ]
        except (IndexError, DeprecationWarning) as error:
            expected = error
    with fake_gpu(host_copies=False):
        x = Variable(gpu(data))
        gpu_key = tuple(
            gpu(np.array(k, dtype=int if k == [] else None)) if isinstance(k, list) else k for k in key
        )
        if isinstance(expected, Exception):
            with pytest.raises(
                vf.ShapeError, match=r"^Variable\[.*\]: index \d+ is out of bounds for axis \d"
            ):
                x[gpu_key]
        else:
            assert x[gpu_key].shape == expected.shape


def test_gpu_masks_and_integer_keys_index_and_scatter_back_without_host_copies():
    """Masks were copied to the host on every forward, and backward needed cupyx."""
    data = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
    with fake_gpu(host_copies=False):
        x = Variable(gpu(data))
        picked = x[x > 0]
        rows = x[Variable(gpu([1, 1, 0]))]
        both = x[gpu([0, 1]), gpu([2, 2])]
        (picked.sum() + rows.sum() * 2 + both.sum() * 10).backward()
        assert backend.device_of(x.grad) == "cuda:0"
    assert picked.data.get().tolist() == [1.0, 3.0, 5.0]
    assert x.grad.get().tolist() == [[3.0, 2.0, 13.0], [4.0, 5.0, 14.0]]
    with fake_gpu(host_copies=False), pytest.raises(vf.ShapeError, match="boolean index did not match"):
        Variable(gpu(data))[gpu([True, False, True])]


@pytest.mark.parametrize(
    "key",
    [
        ([True, False, True], [-3, 2]),  # a mask picking 2 rows beside 2 column indices
        ([-3, 1], [False, False, False, True]),
        ([False, True, True], slice(None), [1, -1]),
        ([3], [False, False, False, False]),  # picks nothing: out of range, but nothing is read
        (True, [0], slice(None), [3]),  # True adds an axis, as None does
    ],
    ids=["mask then ints", "ints then mask", "mask, slice, ints", "empty pick", "True then ints"],
)
def test_a_gpu_mask_beside_integer_indices_indexes_as_on_the_cpu(key):
    """The range check stood each GPU mask in by an all-False one, whose count of picks differs."""
    data = np.arange(60.0).reshape(3, 4, 5)
    expected = data[tuple(np.array(k) if isinstance(k, list) else k for k in key)]
    with fake_gpu(host_copies=False):
        got = Variable(gpu(data))[tuple(gpu(k) if isinstance(k, list) else k for k in key)]
    assert got.data.get().tolist() == expected.tolist()
