"""The fake GPU of the checks refuses one number read back to the host where a check asks for that too
(ch09.one_hot: int(labels[i]), labels[i].item(), float(...) and an if on a label passed it), and lets
it through where a check refuses only arrays' copies (the kit's own code reads single numbers)."""

import numpy as np
import pytest

from varfunc.grading.fake_gpu import HOST_COPY, FakeGpuArray, fake_gpu

READS = {
    "int": lambda x: int(x[1]),
    "float": lambda x: float(x[1]),
    "item": lambda x: x[1].item(),
    "bool": lambda x: bool(x[1] == 2),
    "tolist of one": lambda x: x[1:2].tolist(),
}


@pytest.mark.parametrize("read", READS)
def test_a_number_read_back_is_a_host_copy_where_a_check_refuses_numbers(read):
    labels = FakeGpuArray(np.array([0, 2, 1]))
    with fake_gpu(host_copies=False, host_numbers=False):
        with pytest.raises(TypeError, match=f"^{HOST_COPY}"):
            READS[read](labels)


@pytest.mark.parametrize("read", READS)
def test_a_number_read_back_passes_where_only_arrays_copies_are_refused(read):
    labels = FakeGpuArray(np.array([0, 2, 1]))
    with fake_gpu(host_copies=False):
        assert READS[read](labels) in (2, 2.0, True, [2])
    assert int(labels[1]) == 2  # and outside a check
