"""Devices: one test body for CPU and GPU (the GPU case skips where there is none), moves as Functions,
clear errors for mixed devices and for a missing GPU, and detection that never crashes."""

import time

import numpy as np
import pytest

import varfunc as vf
from varfunc import EventLog, Variable, backend
from varfunc.nn import Linear, cross_entropy, layers, module
from varfunc.optim import SGD


def on(device, array, **kwargs):
    """A leaf Variable holding array on device."""
    return Variable(backend.to_device(np.asarray(array), device), **kwargs)


def test_engine_order_and_gradients_on_each_device(device):
    x, y = on(device, [2.0]), on(device, [3.0])
    c = (x * 2) * 3 + (y + 1) * 4
    log = EventLog()
    c.backward(recorder=log)
    names = [type(fn).__name__ for fn in log.visit_order()]
    assert names == ["Add", "MulConstant", "AddConstant", "Leaf", "MulConstant", "MulConstant", "Leaf"]
    assert x.grad.tolist() == [6.0] and y.grad.tolist() == [4.0]
    assert x.grad.__class__ is x.data.__class__ and x.device == device.replace("cuda", "cuda:0")


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: (a * b + a / (b * b + 1)).sum(),
        lambda a, b: (a.mm(b.t()).tanh() ** 2).mean(),
        lambda a, b: a.log_softmax(1).sum(0) * b[0],
        lambda a, b: vf.cat([a, b], 0).max(0)[0].sigmoid(),
        lambda a, b: a[[0, 0, 1]].exp().sum(1) + b.abs().sum(),
    ],
)
def test_ops_gradcheck_on_each_device(device, fn, rng):
    a = on(device, rng.standard_normal((2, 3)))
    b = on(device, rng.standard_normal((2, 3)))
    assert vf.gradcheck(fn, (a, b))


def test_a_training_step_on_each_device(device, rng):
    model = Linear(4, 3, rng=np.random.default_rng(0)).double()
    model.to(device)
    x = on(device, rng.standard_normal((8, 4)), requires_grad=False)
    target = on(device, rng.integers(0, 3, 8))
    optimizer = SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.device == x.device and p.grad.__class__ is p.data.__class__ for p in model.parameters())


def test_cpu_on_the_cpu_is_the_same_variable():
    x = Variable(np.ones(2))
    assert x.cpu() is x and not x.is_cuda and x.device == "cpu"


def test_asking_for_a_gpu_where_there_is_none_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(backend, "_gpu_status", None)
    monkeypatch.setenv("VARFUNC_FORCE_CPU", "1")
    x = Variable(np.ones(2))
    with pytest.raises(vf.DeviceError, match="VARFUNC_FORCE_CPU"):
        x.cuda()
    assert x.device == "cpu" and x.creator.__class__ is vf.Leaf  # nothing changed


def test_detection_never_crashes_and_is_quick(monkeypatch):
    monkeypatch.setattr(backend, "_gpu_status", None)
    start = time.perf_counter()
    available, reason = backend.gpu_status()
    assert isinstance(available, bool) and reason
    assert time.perf_counter() - start < 30  # a probe, not a benchmark: only a hang would fail
    if not available:
        assert any(
            word in reason
            for word in ("CuPy is not installed", "driver", "no GPU device", "kernel", "VARFUNC_FORCE_CPU")
        )


def test_detection_names_a_missing_cupy(monkeypatch):
    def no_cupy():
        raise ImportError("No module named 'cupy'")

    monkeypatch.setattr(backend, "_cupy_module", no_cupy)
    monkeypatch.delenv("VARFUNC_FORCE_CPU", raising=False)
    available, reason = backend._probe_gpu()
    assert not available and "CuPy is not installed" in reason and ".[gpu]" in reason


def test_a_gpu_without_a_driver_is_named(monkeypatch):
    class Runtime:
        @staticmethod
        def getDeviceCount():
            raise RuntimeError("cudaErrorInsufficientDriver")

    class FakeCupy:
        cuda = type("cuda", (), {"runtime": Runtime})

    monkeypatch.setattr(backend, "_cupy_module", lambda: FakeCupy)
    monkeypatch.delenv("VARFUNC_FORCE_CPU", raising=False)
    available, reason = backend._probe_gpu()
    assert not available and "no NVIDIA driver" in reason


def test_a_driver_without_a_device_is_named(monkeypatch):
    class Runtime:
        @staticmethod
        def getDeviceCount():
            return 0

    class FakeCupy:
        cuda = type("cuda", (), {"runtime": Runtime})

    monkeypatch.setattr(backend, "_cupy_module", lambda: FakeCupy)
    monkeypatch.delenv("VARFUNC_FORCE_CPU", raising=False)
    available, reason = backend._probe_gpu()
    assert not available and "no GPU device" in reason


def gpu_or_skip():
    available, reason = backend.gpu_status()
    if not available:
        pytest.skip(f"no GPU: {reason}")


def test_moves_are_functions_and_gradients_flow_back():
    gpu_or_skip()
    x = Variable(np.array([1.0, 2.0]))
    on_gpu = x.cuda()
    assert on_gpu.is_cuda and type(on_gpu.creator).__name__ == "CudaTransfer"
    back = (on_gpu * 3).cpu()
    assert back.device == "cpu"
    back.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.device == "cpu"


def test_mixing_devices_names_both_and_the_fix():
    gpu_or_skip()
    a = Variable(np.ones(2))
    b = Variable(np.ones(2)).cuda()
    with pytest.raises(vf.DeviceError, match=r"Add: .*cpu.*cuda:0.*\.cuda\(\) or \.cpu\(\)"):
        a + b


class FakeGpuArray:
    """Passes backend's CuPy test (its class lives in a 'cupy...' module) without any GPU: enough for
    the device checks, which run before any arithmetic."""

    __module__ = "cupy_fake"

    def __init__(self, *shape):
        self.shape, self.ndim, self.dtype = shape, len(shape), np.dtype(np.float64)
        self.device = type("Device", (), {"id": 0})()


def test_mixing_devices_is_refused_before_anything_changes_without_a_gpu():
    a = Variable(np.ones(2))
    h = a * 1
    b = Variable(FakeGpuArray(2))
    assert b.device == "cuda:0" and b.is_cuda
    pattern = (
        r"{}: inputs live on different devices \(input 0 on cpu, input 1 on cuda:0\).*\.cuda\(\) or \.cpu\(\)"
    )
    for op, call in [("Add", lambda: h + b), ("Mul", lambda: h * b), ("Add", lambda: h.add_(b))]:
        with pytest.raises(vf.DeviceError, match=pattern.format(op)):
            call()
    assert h.data.tolist() == [1.0, 1.0] and h._version == [0] and type(h.creator).__name__ == "MulConstant"


def test_a_gradient_on_another_device_is_refused():
    x = Variable(np.ones(2))
    with pytest.raises(vf.DeviceError, match=r"grad: got an array on cuda:0 for a Variable on cpu"):
        x.grad = FakeGpuArray(2)
    with pytest.raises(vf.DeviceError, match=r"backward: the gradient is on cuda:0 but the Variable is on"):
        (x * 2).backward(FakeGpuArray(2))
    assert x.grad.tolist() == [0.0, 0.0]


def test_module_to_moves_each_parameter_and_its_grad_keeping_the_variables(monkeypatch):
    # the .data and .grad setters refuse another device, so Module.to once raised on every GPU
    monkeypatch.setattr(module, "to_device", lambda array, device: FakeGpuArray(*array.shape))
    model = Linear(3, 2)
    weight, bias = model.weight, model.bias
    weight.grad = np.ones((2, 3), dtype=np.float32)
    version = weight._version[0]
    assert model.cuda() is model
    assert model.weight is weight and model.bias is bias and weight._version[0] == version + 1
    assert (weight.device, bias.device, backend.device_of(weight.grad)) == ("cuda:0", "cuda:0", "cuda:0")
    assert bias._grad is None  # no gradient yet: none is made on the way
    moved = []
    monkeypatch.setattr(
        layers, "to_device", lambda array, device: moved.append(device) or FakeGpuArray(*array.shape)
    )
    model.reset_parameters()  # new weights drawn on the CPU, then put where the layer lives
    assert moved == ["cuda:0", "cuda:0"] and weight.device == "cuda:0" and weight._version[0] == version + 2


def test_forcing_the_cpu_skips_the_probe(monkeypatch):
    """VARFUNC_FORCE_CPU answers at once, without importing CuPy."""

    def must_not_import():
        raise AssertionError("the probe imported CuPy although VARFUNC_FORCE_CPU is set")

    monkeypatch.setattr(backend, "_cupy_module", must_not_import)
    monkeypatch.setenv("VARFUNC_FORCE_CPU", "1")
    available, reason = backend._probe_gpu()
    assert not available and "VARFUNC_FORCE_CPU" in reason


def test_a_device_that_cannot_run_a_kernel_is_named(monkeypatch):
    class Runtime:
        @staticmethod
        def getDeviceCount():
            return 1

    class FakeCupy:
        cuda = type("cuda", (), {"runtime": Runtime})
        float32 = "float32"

        @staticmethod
        def arange(*args, **kwargs):
            raise RuntimeError("nvrtc: cannot compile")

    monkeypatch.setattr(backend, "_cupy_module", lambda: FakeCupy)
    monkeypatch.delenv("VARFUNC_FORCE_CPU", raising=False)
    available, reason = backend._probe_gpu()
    assert not available and "could not run a kernel" in reason and "nvrtc" in reason


def test_data_already_on_the_gpu_is_cut_and_evaluated_where_it_is():
    """Minibatches, train_test_split, evaluate and fit's trial passed GPU arrays through np.asarray,
    which CuPy refuses (the stand-in refuses it the same way)."""
    from varfunc.data.loader import as_arrays
    from varfunc.grading.fake_gpu import FakeGpuArray

    on_gpu = FakeGpuArray(np.arange(6.0).reshape(3, 2))
    assert backend.device_of(on_gpu) == "cuda:0"
    kept, variable, listed = as_arrays([on_gpu, Variable(on_gpu), [1, 2, 3]])
    assert kept is on_gpu and variable is on_gpu and isinstance(listed, np.ndarray)


def test_a_gpu_variable_compares_with_a_numpy_array_or_a_list(monkeypatch):
    """x_gpu == np_array raised CuPy's "Unsupported type": arithmetic moved such operands, comparisons not."""
    from varfunc import operators
    from varfunc.grading.fake_gpu import FakeGpuArray

    monkeypatch.setattr(operators, "to_device", lambda array, device: FakeGpuArray(array))
    x = Variable(FakeGpuArray(np.array([1.0, 2.0, 3.0])))
    for other in (np.array([1.0, 5.0, 3.0]), [1.0, 5.0, 3.0]):
        assert (x == other).data.get().tolist() == [True, False, True]
    assert (x > 1.5).data.get().tolist() == [False, True, True]


@pytest.mark.parametrize(
    "make", [lambda ps: vf.optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: vf.optim.Adam(ps)]
)
def test_optimizer_state_left_on_another_device_is_a_device_error_before_any_step(make):
    """After model.cuda() the buffers stayed behind and the next step raised CuPy's "Unsupported type"."""
    from varfunc.grading.fake_gpu import FakeGpuArray

    w = Variable(np.ones(3))
    optimizer = make([w])
    w.grad = np.ones(3)
    optimizer.step()
    before = w.data.copy()
    name = next(n for n, v in optimizer.state[w].items() if backend.is_array(v))
    optimizer.state[w][name] = FakeGpuArray(optimizer.state[w][name])  # as if w had moved, not its state
    with pytest.raises(
        vf.DeviceError, match=rf"step: the '{name}' of a parameter of shape \(3,\) is on cuda:0"
    ):
        optimizer.step()
    assert np.array_equal(w.data, before)


@pytest.mark.parametrize("key", [(np.array([0, 5]),), (0, np.array([-4, 1]))], ids=["5 of 3", "-4 of 3"])
def test_an_index_out_of_range_is_refused_on_the_gpu_too(key):
    """CuPy returned x[[0, 2]] for x[[0, 5]] of a length-3 Variable, and backward put the gradient there."""
    from varfunc.functions import Index
    from varfunc.grading.fake_gpu import on_fake_gpu  # wraps an index out of range around, as CuPy does

    data = np.arange(3.0) if len(key) == 1 else np.arange(6.0).reshape(2, 3)
    with pytest.raises(vf.ShapeError, match="out of bounds"):
        Index(key).forward(on_fake_gpu(data))
    assert Index((np.array([0, 2]),)).forward(on_fake_gpu(np.arange(3.0))).get().tolist() == [0.0, 2.0]
