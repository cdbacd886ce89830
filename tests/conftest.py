"""Shared test set-up: the Hypothesis profile and a seeded random generator."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# "ci" (the default): no deadline (timings vary on shared 2-core machines) and few examples, so the
# whole suite stays fast. HYPOTHESIS_PROFILE=thorough runs many more.
settings.register_profile(
    "ci", deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "thorough", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    """A NumPy Generator with a fixed seed: the same data on every run."""
    return np.random.default_rng(20160916)


def _gpu_reason() -> str:
    from varfunc.backend import gpu_status

    available, reason = gpu_status()
    return "" if available else reason


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """Run a test body once per device; the GPU case skips cleanly (saying why) where there is none."""
    if request.param == "cuda":
        reason = _gpu_reason()
        if reason:
            pytest.skip(f"no GPU: {reason}")
    return request.param


def rand(*shape, seed=0):
    """Standard-normal float64 data of the given shape, the same for the same seed."""
    return np.random.default_rng(seed).standard_normal(shape)


def on_device(device: str, value):
    """value with every NumPy array in it (also inside tuples, lists and Variables) moved to device."""
    from varfunc import Variable
    from varfunc.backend import to_device

    if isinstance(value, np.ndarray):
        return to_device(value, device)
    if isinstance(value, Variable):
        return Variable(to_device(value.data, device), requires_grad=value.requires_grad)
    if isinstance(value, (tuple, list)):
        return type(value)(on_device(device, v) for v in value)
    return value


def gpu_only():
    """A skip mark for GPU-only cases (evaluated when the test runs)."""
    return pytest.mark.skipif(bool(_gpu_reason()), reason="needs a GPU (CuPy, a driver and a device)")
