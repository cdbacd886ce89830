"""The simulated GPU behaves as CuPy where the kit relies on it (ufunc out=, lists of arrays, ufunc.at,
flags), so that in-place ops, advanced-index gradients and a student's in-place forward are checked
on it as on the CPU; and a move between two GPUs lands on the one asked for."""

from types import SimpleNamespace

import numpy as np
import pytest

import varfunc as vf
from varfunc import Function, Variable, backend
from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu


def gpu(array):
    return FakeGpuArray(np.asarray(array))


def test_a_ufunc_with_out_returns_the_out_array_itself():
    """CuPy returns out (so a -= b keeps a); the fake returned a new wrapper of the same memory."""
    x = gpu([1.0, 2.0])
    assert np.add(x, 1, out=(x,)) is x
    y = x
    y -= 1
    assert y is x and x.get().tolist() == [1.0, 2.0]


def test_a_list_of_arrays_from_numpy_stays_on_the_gpu():
    parts = np.split(gpu(np.arange(4.0)), [1])
    assert isinstance(parts, list) and all(isinstance(p, FakeGpuArray) for p in parts)


def test_scatter_add_needs_no_cupyx_and_takes_host_or_gpu_keys():
    with fake_gpu(host_copies=False):
        target = gpu(np.zeros(3))
        backend.scatter_add(target, np.array([0, 0, 2]), gpu([1.0, 2.0, 3.0]))
        backend.scatter_add(target, gpu([1, 1]), 5.0)
    assert target.get().tolist() == [3.0, 10.0, 3.0]


@pytest.mark.parametrize(
    ("ufunc", "dtype", "error"),
    [
        (np.add, np.int64, TypeError),  # NumPy's default integer: CUDA has no atomic add for it
        (np.add, np.bool_, TypeError),
        (np.multiply, np.float64, NotImplementedError),  # CuPy's at: add, subtract, maximum, minimum
    ],
)
def test_ufunc_at_refuses_what_cupys_atomics_cannot_do(ufunc, dtype, error):
    """The fake scattered into any dtype with any ufunc, so a GPU-only failure passed its tests."""
    with pytest.raises(error, match="supports|not supported on CuPy"):
        ufunc.at(gpu(np.zeros(3, dtype)), np.array([0, 0]), 1)
    for kind in (np.float16, np.float32, np.float64, np.int32):  # a gradient's dtypes, and int32
        target = gpu(np.zeros(3, kind))
        np.add.at(target, np.array([0, 0]), 1)
        assert target.get().tolist() == [2, 0, 0]


def test_cupys_functions_refuse_numpy_arrays_and_take_them_only_through_asarray():
    """xp.where(mask, np.zeros(3), g) passed on the fake; CuPy raises (its functions take GPU arrays)."""
    with fake_gpu():
        xp = backend.get_array_module(gpu([1.0]))
        g = gpu([1.0, 2.0, 3.0])
        with pytest.raises(TypeError, match="a GPU array cannot be combined with a NumPy array"):
            xp.where(g > 1, np.zeros(3), g)
        with pytest.raises(TypeError, match="a GPU array cannot be combined with a NumPy array"):
            xp.concatenate([g, np.ones(2)])
        assert xp.where(g > 1, xp.asarray(np.zeros(3)), g).get().tolist() == [1.0, 0.0, 0.0]


def test_tolist_is_a_host_copy_where_a_check_asks_for_none():
    """labels.tolist() passed a check that the labels never leave the GPU; CuPy's is get().tolist()."""
    with fake_gpu(host_copies=False):
        with pytest.raises(TypeError, match=r"copy to the host.*\.tolist\(\)"):
            gpu([1, 2, 3]).tolist()
        assert gpu([1, 2, 3]).max().item() == 3  # one number read back: a sync, not an array's copy


def test_a_gpu_kernel_gives_inf_and_nan_quietly_whatever_numpys_errstate_says():
    """CuPy ignores np.errstate; the fake raised FloatingPointError under errstate(all='raise')."""
    with np.errstate(all="raise"):
        quotient = gpu([1.0, 0.0]) / 0.0
    assert np.isinf(quotient.get()[0]) and np.isnan(quotient.get()[1])


def test_flags_are_cupys_and_shape_can_be_set():
    x = gpu(np.zeros((2, 3)))
    assert x.flags.c_contiguous and not hasattr(x.flags, "writeable")  # CuPy has no read-only arrays
    x.shape = (3, 2)
    assert x.get().shape == (3, 2)


IN_PLACE = {
    "add_": lambda h: h.add_(2.0),
    "add_ Variable": lambda h: h.add_(h * 2),
    "sub_": lambda h: h.sub_(0.5),
    "mul_": lambda h: h.mul_(3.0),
    "div_": lambda h: h.div_(4.0),
    "neg_": lambda h: h.neg_(),
    "exp_": lambda h: h.exp_(),
    "tanh_": lambda h: h.tanh_(),
    "sigmoid_": lambda h: h.sigmoid_(),
    "%=": lambda h: h.__imod__(0.7),
    "//=": lambda h: h.__ifloordiv__(0.7),
    "+=": lambda h: h.__iadd__(1.5),
}


def _run_in_place(device_data, op):
    x = Variable(device_data)
    h = x * 1
    result = op(h)
    (result * result).sum().backward()
    return h, result, x


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_ops_on_the_gpu_match_the_cpu(name):
    """They all failed on the fake: "forward marked an input dirty (mark_dirty) and returned it 0 times"."""
    data = np.array([0.3, -1.2, 2.5])
    h_cpu, r_cpu, x_cpu = _run_in_place(data.copy(), IN_PLACE[name])
    with fake_gpu(host_copies=False):
        h, result, x = _run_in_place(gpu(data.copy()), IN_PLACE[name])
        assert result is h and h._version == [1] and backend.device_of(x.grad) == "cuda:0"
    assert np.allclose(h.data.get(), h_cpu.data) and np.allclose(x.grad.get(), x_cpu.grad)


class AddsOneInPlace(Function):
    """A student's forward that changes its input without mark_dirty."""

    def forward(self, a):
        a += 1
        return a * 1

    def backward(self, grad_output):
        return grad_output


@pytest.mark.parametrize("on_gpu", [False, True], ids=["cpu", "gpu"])
def test_a_students_unmarked_in_place_forward_is_refused_on_the_gpu_too(on_gpu):
    """The inputs were compared with copies only on the CPU: on the GPU x.data silently became [1, 2, 3]."""
    with fake_gpu(host_copies=False):
        data = gpu(np.arange(3.0)) if on_gpu else np.arange(3.0)
        x = Variable(data, requires_grad=False) * 1
        with pytest.raises(vf.InplaceError, match=r"AddsOneInPlace.*changed input 0 .*without mark_dirty"):
            AddsOneInPlace()(x)
    kept = x.data.get() if on_gpu else x.data
    assert kept.tolist() == [0.0, 1.0, 2.0] and x._version == [0]  # put back


def test_a_host_gradient_reaching_a_gpu_leaf_is_a_device_error():
    """It was converted silently (xp.array(grad)), hiding a backward that left the device."""
    with fake_gpu():
        x = Variable(gpu(np.ones(3)))
        with pytest.raises(vf.DeviceError, match=r"gradient on cpu reached a leaf of shape \(3,\) on cuda:0"):
            x._accumulate_grad(np.ones(3))
        assert x._grad is None
        x._accumulate_grad(gpu(np.ones(3)))
        assert backend.device_of(x.grad) == "cuda:0"


class _OnGpu:
    """An array on one of two simulated GPUs (its class lives in a 'cupy...' module, as CuPy's)."""

    __module__ = "cupy_two_gpus"

    def __init__(self, device_id):
        self.device = SimpleNamespace(id=device_id)


class _TwoGpus:
    """Just enough of CuPy for backend.to_device, with two devices. Its asarray is CuPy's: an array on
    the current device as it is, one from another device copied to the current one."""

    current = 0

    class cuda:
        runtime = SimpleNamespace(getDevice=lambda: _TwoGpus.current)

        class Device:
            def __init__(self, index):
                self.index = index

            def __enter__(self):
                self.before, _TwoGpus.current = _TwoGpus.current, self.index

            def __exit__(self, *exc):
                _TwoGpus.current = self.before

    @staticmethod
    def asarray(array):
        return array if array.device.id == _TwoGpus.current else _OnGpu(_TwoGpus.current)


def test_a_move_between_gpus_lands_on_the_gpu_asked_for(monkeypatch):
    monkeypatch.setattr(backend, "_cupy_module", lambda: _TwoGpus)
    monkeypatch.setattr(backend, "_gpu_status", (True, "2 simulated GPUs"))
    on_0 = _OnGpu(0)
    assert backend.to_device(on_0, "cuda:0") is on_0 and backend.to_device(on_0, "cuda") is on_0
    on_1 = backend.to_device(on_0, "cuda:1")
    assert backend.device_of(on_1) == "cuda:1" and _TwoGpus.current == 0
    assert backend.device_of(backend.to_device(on_1, "cuda")) == "cuda:0"  # 'cuda': the current one
