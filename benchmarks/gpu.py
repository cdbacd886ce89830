"""GPU benchmark: an MLP training step where the GPU matters, varfunc on CuPy side by side with
PyTorch on CUDA and varfunc on NumPy.

Run from the repository root on a machine with an NVIDIA GPU (``pip install -e '.[gpu,oracle]'``;
``make bench-gpu`` does this)::

    python -m benchmarks.gpu            # 4096-4096-10, batch 4096, float32; rewrites the "gpu" section
    python -m benchmarks.gpu --quick    # 512-512-10, batch 512; prints only

Without a GPU it prints which of CuPy, the driver or the device is missing and exits with 0,
leaving RESULTS.md as it is. Target from the devices issue: varfunc on CuPy within 1.3x of
PyTorch's CUDA step at the large size. The model and the ops are the ones of benchmarks/run.py
part (b): mm, + bias, relu, log_softmax, indexing, mean, then SGD.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from varfunc import backend

from . import numpy_reference as ref
from . import run as core
from .common import ratio_text
from .results import write_section
from .run import VarfuncMLP

LR = core.LR
TARGET = 1.3


def load_torch_cuda() -> tuple[Any, str]:
    """(torch, version line) when PyTorch can use the GPU, else (None, why not)."""
    torch = core.load_torch()  # also what core.TorchMLP runs on
    if torch is None:
        return None, "PyTorch is not installed (pip install -e '.[oracle]')"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} has no CUDA here (a CPU build, or no driver)"
    return torch, f"PyTorch {torch.__version__} (CUDA {torch.version.cuda})"


def time_steps(step: Callable[[], float], rounds: int) -> tuple[float, float, float]:
    """(fastest, median) seconds per step after two warm-up steps, and the first step's loss."""
    first_loss = step()
    step()  # kernels compiled, memory pools filled
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), first_loss


def cupy_versions() -> str:
    """CuPy, CUDA runtime and device name, for the results."""
    cupy = backend._cupy_module()
    runtime = cupy.cuda.runtime.runtimeGetVersion()
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    return f"CuPy {cupy.__version__}, CUDA runtime {runtime // 1000}.{runtime % 1000 // 10}, {name}"


def run(sizes: tuple, batch: int, rounds: int, cpu_rounds: int) -> tuple[str, bool | None]:
    """The results table and whether the target was met (None when PyTorch on CUDA is missing)."""
    params = ref.init_mlp(sizes)
    x, labels = ref.make_batch(batch, sizes[0], sizes[2])
    timings = {"varfunc on CuPy": time_steps(VarfuncMLP(params, x, labels, device="cuda").step, rounds)}
    torch, torch_line = load_torch_cuda()
    if torch is not None:
        timings["PyTorch on CUDA"] = time_steps(core.TorchMLP(params, x, labels, device="cuda").step, rounds)
    timings["varfunc on NumPy"] = time_steps(VarfuncMLP(params, x, labels, device="cpu").step, cpu_rounds)
    gpu = timings["varfunc on CuPy"][0]
    rows = ["| implementation | step ms | first loss | vs varfunc on CuPy |", "|---|---:|---:|---:|"]
    for name, (fastest, median, loss) in timings.items():
        ms = f"{fastest * 1e3:.2f} ({median * 1e3:.2f})"
        rows.append(f"| {name} | {ms} | {loss:.4f} | {fastest / gpu:.2f}x |")
    label = "-".join(map(str, sizes))
    if torch is None:
        verdict, ok = f"not measured: {torch_line}.", None
    else:
        ratio = gpu / timings["PyTorch on CUDA"][0]
        ok = ratio <= TARGET
        verdict = f"{ratio_text(ratio, ok)}, **{'PASS' if ok else 'MISS'}**."
    body = (
        f"{cupy_versions()}; {torch_line}.\n\n"
        f"MLP {label}, batch {batch}, float32: one training step (forward, loss, backward, SGD). "
        "Times: fastest step after two warm-up steps, median in brackets. All three start from the "
        "same weights and batch, so their first losses agree.\n\n"
        + "\n".join(rows)
        + f"\n\nTarget: varfunc on CuPy within {TARGET}x of PyTorch on CUDA: {verdict}\n"
    )
    return body, ok


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="512-512-10, batch 512; RESULTS.md untouched")
    args = parser.parse_args(argv)
    available, reason = backend.gpu_status()
    if not available:
        print(f"GPU benchmark skipped: {reason}")
        return 0
    if args.quick:
        body, _ = run((512, 512, 10), 512, rounds=5, cpu_rounds=2)
    else:
        body, _ = run((4096, 4096, 10), 4096, rounds=20, cpu_rounds=3)
    print(body)
    if not args.quick:
        write_section("gpu", "python -m benchmarks.gpu", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
