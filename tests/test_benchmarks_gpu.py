"""benchmarks/gpu.py: skips cleanly without a GPU, and its varfunc model computes the hand-written step."""

import sys
from pathlib import Path

import numpy as np
from conftest import gpu_only

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is a package at the repository root, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks import gpu, results  # noqa: E402
from benchmarks import numpy_reference as ref  # noqa: E402
from varfunc import backend  # noqa: E402


def test_without_a_gpu_it_says_what_is_missing_and_writes_nothing(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(backend, "_gpu_status", (False, "CuPy is installed but no NVIDIA driver answered"))
    monkeypatch.setattr(results, "RESULTS", tmp_path / "RESULTS.md")
    assert gpu.main([]) == 0
    assert capsys.readouterr().out == (
        "GPU benchmark skipped: CuPy is installed but no NVIDIA driver answered\n"
    )
    assert not (tmp_path / "RESULTS.md").exists()


def test_the_benchmark_model_computes_the_hand_written_step():
    """The class timed on the GPU, run here on the CPU: same losses and weights as numpy_reference."""
    sizes, batch = (12, 8, 5), 6
    params = ref.init_mlp(sizes, dtype=np.float64)
    x, labels = ref.make_batch(batch, sizes[0], sizes[2], dtype=np.float64)
    model = gpu.VarfuncMLP(params, x, labels, device="cpu")
    by_hand = {name: array.copy() for name, array in params.items()}
    for _ in range(3):
        np.testing.assert_allclose(model.step(), ref.mlp_step(by_hand, x, labels, gpu.LR), rtol=1e-10)
    for name, array in by_hand.items():
        np.testing.assert_allclose(model.params[name].data, array, rtol=1e-10)
        assert not np.allclose(array, params[name])


@gpu_only()
def test_quick_run_on_the_gpu():
    body, ok = gpu.run((32, 16, 4), 8, rounds=1, cpu_rounds=1)
    assert "varfunc on CuPy" in body and "varfunc on NumPy" in body and "CuPy " in body
    assert ok in (True, False, None)
