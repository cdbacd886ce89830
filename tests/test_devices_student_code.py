"""Gradients that code outside the kit (a student's Function, a hook) puts on another device than its
input's: refused with a DeviceError that names who returned it, checked on the simulated GPU of
varfunc.grading.fake_gpu, so that it runs without one."""

import numpy as np
import pytest

import varfunc as vf
from varfunc import Function, Variable, backend
from varfunc.backend import get_array_module
from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu


class NumpyZerosBackward(Function):
    """x * 2 whose backward makes its gradient with np.zeros: on the host whatever the input's device."""

    def forward(self, a):
        return a * 2

    def backward(self, grad_output):
        grad = np.zeros(grad_output.shape)
        grad[...] = 2.0
        return grad


class DeviceAgnosticDouble(Function):
    """The same, written as chapter 09 teaches: the gradient made with the input's array module."""

    def forward(self, a):
        return a * 2

    def backward(self, grad_output):
        return get_array_module(grad_output).full(grad_output.shape, 2.0)


class HostToFakeGpu(Function):
    """A student's own transfer: its input on the host, its output on the (fake) GPU, and back."""

    def forward(self, a):
        return FakeGpuArray(a.copy())

    def backward(self, grad_output):
        return grad_output.get()


def test_a_students_gradient_on_the_host_for_a_gpu_input_is_refused():
    with fake_gpu():
        x = Variable(FakeGpuArray(np.ones(3)))
        y = NumpyZerosBackward()(x).sum()
        with pytest.raises(
            vf.DeviceError, match=r"NumpyZerosBackward.*input 0.*on cpu for an input on cuda:0"
        ):
            y.backward()
        assert x._grad is None  # refused before it reached the leaf
        z = DeviceAgnosticDouble()(x).sum()
        z.backward()
        assert backend.device_of(x.grad) == "cuda:0" and x.grad.get().tolist() == [2.0, 2.0, 2.0]


def test_a_students_transfer_function_may_send_its_gradient_to_another_device():
    with fake_gpu():
        x = Variable(np.arange(3.0))
        moved = HostToFakeGpu()(x)
        assert moved.device == "cuda:0"
        (moved * 3).sum().backward()
        assert backend.device_of(x.grad) == "cpu" and x.grad.tolist() == [3.0, 3.0, 3.0]


def test_a_hooks_gradient_on_another_device_is_refused():
    with fake_gpu():
        x = Variable(FakeGpuArray(np.ones(2)))
        y = x * 3
        y.register_hook("to_host", lambda grad: grad.get())
        with pytest.raises(
            vf.DeviceError, match=r"hook on output 0 of MulConstant.*on cpu for an input on cuda:0"
        ):
            y.sum().backward()
        z = x * 3
        z.creator.register_hook("host_inputs", lambda grad_input, grad_output: (np.ones(2),))
        with pytest.raises(
            vf.DeviceError, match=r"hook 'host_inputs' on MulConstant.*on cpu for an input on cuda:0"
        ):
            z.sum().backward()
        assert x._grad is None
