"""Smoke test of benchmarks/training.py: its implementations train the same model the same way.

No timing is asserted. Each implementation starts from the same weights and sees the same batches,
so after an epoch they must report the same losses; otherwise the table compares unlike things.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is a package at the repository root, not installed
    sys.path.insert(0, str(ROOT))

import varfunc.data as data  # noqa: E402
from benchmarks import training  # noqa: E402


def workload():
    X, y = data.digits(256, seed=0)
    return X, y, training.initial_weights(), [training.epoch_batches(X, y, 32, seed) for seed in range(3)]


def test_varfunc_and_hand_written_numpy_train_alike():
    X, y, weights, epochs = workload()
    ours, reference = training.varfunc_trainer(weights), training.numpy_trainer(weights)
    for batches in epochs:  # several epochs: the updated weights and momentum carry over
        np.testing.assert_allclose(ours(batches), reference(batches), rtol=2e-5)
    fit_epoch = training.varfunc_fit_trainer(weights, X, y, 32)  # Minibatches with seed 0: epoch 0
    np.testing.assert_allclose(fit_epoch(None), training.numpy_trainer(weights)(epochs[0]), rtol=2e-5)


@pytest.mark.oracle
def test_pytorch_trains_alike():
    torch = pytest.importorskip("torch")
    _, _, weights, epochs = workload()
    ours, theirs = training.varfunc_trainer(weights), training.torch_trainer(torch, weights)
    for batches in epochs:
        np.testing.assert_allclose(ours(batches), theirs(batches), rtol=2e-5)


def test_measure_reports_every_implementation():
    _, _, weights, epochs = workload()
    trainers = {"varfunc": lambda: training.varfunc_trainer(weights)}
    trainers["numpy"] = lambda: training.numpy_trainer(weights)
    results = training.measure(trainers, epochs, repeats=2)
    assert list(results) == ["varfunc", "numpy"]
    for median, fastest, loss in results.values():
        assert 0 < fastest <= median and np.isfinite(loss)


def test_measure_times_each_implementation_in_blocks():
    """No epoch-by-epoch turns: an epoch after PyTorch's would pay for its spinning threads."""
    calls = []

    def logging(name):
        def make():
            return lambda batches: calls.append(name) or 1.0

        return make

    results = training.measure({"a": logging("a"), "b": logging("b")}, [[1]] * 7, repeats=6)
    switches_to = [name for previous, name in zip(calls, calls[1:]) if name != previous]
    assert calls.count("a") >= 6 and switches_to.count("a") <= 2  # the first epochs, then two passes
    assert [loss for _, _, loss in results.values()] == [1.0, 1.0]
