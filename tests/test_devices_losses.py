"""Losses and their targets on the devices: a target (or class weights) on another device than the
input is a DeviceError naming the loss, as torch refuses it; labels on the GPU stay there, with no
copy to the host on any call (checked on the simulated GPU, which refuses host copies)."""

import numpy as np
import pytest

import varfunc as vf
from varfunc import Variable, backend, nn
from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu

SCORES = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0], [2.0, 2.0, -2.0], [0.0, 1.5, 1.0]])
LABELS = np.array([1, 2, 0, 2])


def gpu(array):
    return FakeGpuArray(np.asarray(array))


LOSSES = {
    "cross_entropy": lambda x, t: nn.cross_entropy(x, t),
    "nll_loss": lambda x, t: nn.nll_loss(x.log_softmax(1), t),
}
REGRESSION = {"mse_loss": nn.mse_loss, "l1_loss": nn.l1_loss, "smooth_l1_loss": nn.smooth_l1_loss}


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("scores_on_gpu", [False, True], ids=["cpu scores", "gpu scores"])
def test_labels_on_another_device_are_a_device_error_naming_the_loss(name, scores_on_gpu):
    """They were copied to the host and then to the input's device, silently, on every call."""
    with fake_gpu():
        scores = Variable(gpu(SCORES) if scores_on_gpu else SCORES.copy())
        labels = Variable(LABELS.copy() if scores_on_gpu else gpu(LABELS))
        here, there = ("cuda:0", "cpu") if scores_on_gpu else ("cpu", "cuda:0")
        with pytest.raises(vf.DeviceError, match=rf"^{name}: input is on {here} but target is on {there}"):
            LOSSES[name](scores, labels)
        if not scores_on_gpu:  # a raw GPU array too; a host array may go to the GPU (below)
            with pytest.raises(vf.DeviceError, match=rf"^{name}: .*target is on cuda:0"):
                LOSSES[name](scores, gpu(LABELS))
        assert scores._grad is None and scores._version == [0]


@pytest.mark.parametrize("name", REGRESSION)
def test_a_regression_target_on_another_device_names_the_loss_not_sub(name):
    with fake_gpu():
        output = Variable(np.ones((2, 1)))
        with pytest.raises(vf.DeviceError, match=rf"^{name}: input is on cpu but target is on cuda:0"):
            REGRESSION[name](output, Variable(gpu(np.zeros((2, 1)))))


def test_class_weights_on_another_device_are_a_device_error():
    with fake_gpu():
        scores, labels = Variable(SCORES.copy()), LABELS.copy()
        for loss in (nn.cross_entropy, lambda x, t, **kw: nn.nll_loss(x.log_softmax(1), t, **kw)):
            with pytest.raises(vf.DeviceError, match=r": input is on cpu but weight is on cuda:0"):
                loss(scores, labels, weight=gpu([1.0, 2.0, 1.0]))


OPTIONS = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"weight": np.array([1.0, 3.0, 0.5])},
    {"ignore_index": 2},
    {"ignore_index": 2, "weight": np.array([1.0, 3.0, 0.5]), "reduction": "none"},
    {"label_smoothing": 0.2, "ignore_index": 0},
    {"label_smoothing": 0.1, "weight": np.array([1.0, 3.0, 0.5])},
]


def _loss_and_grad(scores, labels, options, nll):
    x = Variable(scores)
    loss = nn.nll_loss(x.log_softmax(1), labels, **options) if nll else nn.cross_entropy(x, labels, **options)
    loss.sum().backward()
    return loss, x


CASES = [(False, o) for o in OPTIONS] + [(True, o) for o in OPTIONS if "label_smoothing" not in o]


@pytest.mark.parametrize(
    "nll, options", CASES, ids=[f"{'nll' if n else 'ce'}:{','.join(o) or 'default'}" for n, o in CASES]
)
def test_gpu_labels_stay_on_the_gpu_and_give_the_cpus_loss(nll, options):
    """Every call copied the labels (and weights) to the host, and the mask and weights back."""
    loss_cpu, x_cpu = _loss_and_grad(SCORES.copy(), LABELS.copy(), options, nll)
    on_gpu = {k: gpu(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
    with fake_gpu(host_copies=False):
        loss, x = _loss_and_grad(gpu(SCORES), Variable(gpu(LABELS)), on_gpu, nll)
        assert loss.device == "cuda:0" and backend.device_of(x.grad) == "cuda:0"
    assert np.allclose(loss.data.get(), loss_cpu.data) and np.allclose(x.grad.get(), x_cpu.grad)


def test_host_labels_and_weights_go_to_a_gpu_input():
    with fake_gpu():
        loss = nn.cross_entropy(Variable(gpu(SCORES)), LABELS.copy(), weight=[1.0, 2.0, 1.0])
        assert loss.device == "cuda:0"


def test_a_gpu_label_out_of_range_is_named_without_a_host_copy():
    with fake_gpu(host_copies=False):
        scores = Variable(gpu(SCORES))
        with pytest.raises(ValueError, match=r"target holds class 7 but input has 3 classes"):
            nn.cross_entropy(scores, Variable(gpu([1, 7, 0, 2])))
        with pytest.raises(vf.DTypeError, match=r"integer class indices, got dtype float64"):
            nn.nll_loss(scores, Variable(gpu([1.0, 2.0, 0.0, 2.0])))
        assert nn.nll_loss(scores, Variable(gpu([1, -100, 0, 2]))).device == "cuda:0"  # ignored
