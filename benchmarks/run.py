"""Core speed benchmarks: varfunc side by side with PyTorch (CPU) and hand-written NumPy.

Run from the repository root (``make bench`` does this)::

    python -m benchmarks.run            # full run, rewrites the "core" section of RESULTS.md
    python -m benchmarks.run --quick    # smoke run on small sizes, prints only

Three parts, each with its target from the core issue:

(a) a chain of 1,000 scalar steps ``y = y * 1.0001 + 0.5``, forward and backward:
    at most 1.5x PyTorch's time;
(b) an MLP training step (forward, loss, backward, SGD update), 784-512-10 at batch 256 and
    64-64-10 at batch 64, float32: the large one within 1.05x of hand-written NumPy, the small
    one faster than PyTorch;
(c) chains of 10^4, 10^5 and 10^6 ops, backward included: 10x the ops in at most 12x the time,
    and peak memory growing linearly (measured in a fresh subprocess per size, see RESULTS.md).

Timing: every implementation is warmed up, then timed in rounds of one or more calls; the median
round is reported, with the fastest in brackets. The garbage collector stays on, as in a student's session.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from varfunc import Variable, backend

from . import numpy_reference as ref
from .results import write_section

torch: Any = None  # imported by load_torch(): the memory subprocesses and the smoke test do without


def load_torch() -> Any:
    """Import PyTorch if it is installed (its columns read "n/a" otherwise)."""
    global torch
    try:
        import torch as module
    except ImportError:
        return None
    torch = module
    return torch


LR = 0.01

# --- timing --------------------------------------------------------------------------------------


def compare(
    fns: dict[str, Callable[[], Any]],
    rounds: int,
    number: int = 1,
    collector: bool = True,
    passes: int = 2,
    warmup: bool = True,
) -> dict[str, tuple]:
    """{name: (fastest, median) seconds per call}: each function warmed up, then timed in rounds.

    The functions take turns in passes (A B C, A B C), each pass timing one function's rounds
    in a block: PyTorch's and OpenBLAS's worker threads spin for a while after each call, so
    alternating call by call made each library pay for the other's. With collector=False the
    cyclic garbage collector is paused during the timed calls (a diagnostic for part (c)).
    """
    times: dict[str, list] = {name: [] for name in fns}
    for _ in range(passes):
        for name, fn in fns.items():
            for _ in range(max(1, number // 5) if warmup else 0):  # first calls, caches, thread pools
                fn()
            for _ in range(max(1, rounds // passes)):
                gc.collect()  # start every round from the same collector state
                if not collector:
                    gc.disable()
                start = time.perf_counter()
                for _ in range(number):
                    fn()
                times[name].append((time.perf_counter() - start) / number)
                gc.enable()
    return {name: (min(ts), statistics.median(ts)) for name, ts in times.items()}


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def cell(timing: tuple) -> str:
    """'fastest (median)' in ms."""
    return f"{ms(timing[0])} ({ms(timing[1])})"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


# --- (a) the scalar chain ------------------------------------------------------------------------


def chain_varfunc(steps: int, backward: bool = True) -> tuple:
    """The chain on a 0-d float64 Variable; returns (y, dy/dx) as arrays."""
    x = Variable(np.array(1.0), requires_grad=True)
    y = x
    for _ in range(steps):
        y = y * ref.SCALE + ref.SHIFT
    if backward:
        y.backward()
    return y.data, x.grad


def chain_torch(steps: int, backward: bool = True) -> tuple:
    """The same chain on a 0-d float64 tensor."""
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    y = x
    for _ in range(steps):
        y = y * ref.SCALE + ref.SHIFT
    if backward:
        y.backward()
    return y.detach().numpy(), x.grad.numpy() if backward else None


def chain_numpy_forward(steps: int) -> np.ndarray:
    y = np.array(1.0)
    for _ in range(steps):
        y = y * ref.SCALE + ref.SHIFT
    return y


def part_a(steps: int, rounds: int) -> tuple[str, bool]:
    y_ref, g_ref = ref.chain_forward_backward(steps)
    y_vf, g_vf = chain_varfunc(steps)
    assert np.allclose(y_vf, y_ref) and np.allclose(g_vf, g_ref), "varfunc's chain disagrees with NumPy's"
    total = {
        "varfunc": lambda: chain_varfunc(steps),
        "NumPy by hand": lambda: ref.chain_forward_backward(steps),
    }
    forward = {
        "varfunc": lambda: chain_varfunc(steps, backward=False),
        "NumPy by hand": lambda: chain_numpy_forward(steps),
    }
    if torch is not None:
        y_t, g_t = chain_torch(steps)
        assert np.allclose(y_t, y_ref) and np.allclose(g_t, g_ref), "PyTorch's chain disagrees with NumPy's"
        total["PyTorch"] = lambda: chain_torch(steps)
        forward["PyTorch"] = lambda: chain_torch(steps, backward=False)
    t_total = compare(total, rounds)
    t_forward = compare(forward, rounds)
    rows = [
        "| implementation | forward ms | forward + backward ms | vs PyTorch | vs NumPy by hand |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in total:
        best = t_total[name][0]
        vs_torch = f"{best / t_total['PyTorch'][0]:.2f}x" if "PyTorch" in t_total else "n/a"
        vs_numpy = f"{best / t_total['NumPy by hand'][0]:.2f}x"
        rows.append(f"| {name} | {cell(t_forward[name])} | {cell(t_total[name])} | {vs_torch} | {vs_numpy} |")
    if "PyTorch" in t_total:
        ratio = t_total["varfunc"][0] / t_total["PyTorch"][0]
        ok = ratio <= 1.5
        target = (
            f"Target: varfunc at most 1.5x PyTorch's forward + backward time: {ratio:.2f}x, "
            f"**{verdict(ok)}**."
        )
    else:
        ok = True
        target = "Target: at most 1.5x PyTorch: not measured (PyTorch is not installed)."
    title = f"### (a) Chain of {steps:,} scalar steps `y = y * 1.0001 + 0.5` ({2 * steps:,} ops)\n\n"
    return title + "\n".join(rows) + "\n\n" + target + "\n", ok


# --- (b) the MLP training step -------------------------------------------------------------------


class VarfuncMLP:
    """784-512-10 (or any size) built from core ops only: mm, + bias, relu, log_softmax, indexing, mean."""

    def __init__(
        self, params: dict, x: np.ndarray, labels: np.ndarray, lr: float = LR, device: str = "cpu"
    ) -> None:
        on_device = lambda array: backend.to_device(array, device)  # noqa: E731
        self.params = {
            name: Variable(on_device(array.copy()), requires_grad=True) for name, array in params.items()
        }
        self.x = Variable(on_device(x), requires_grad=False)
        self.rows = on_device(np.arange(x.shape[0]))
        self.labels = on_device(labels)
        self.lr = lr

    def step(self) -> float:
        W1, b1, W2, b2 = (self.params[name] for name in ("W1", "b1", "W2", "b2"))
        for p in self.params.values():
            # backward then writes fresh gradients (no zeros to add into). Zeroing in place, as the
            # kit's optimizers do, timed the same on 784-512-10 and about 8 % slower on 64-64-10.
            p.grad = None
        hidden = (self.x.mm(W1) + b1).relu()
        logits = hidden.mm(W2) + b2
        loss = -logits.log_softmax(dim=1)[self.rows, self.labels].mean()
        loss.backward()
        for p in self.params.values():
            p.data -= self.lr * p.grad
        return loss.item()

    def arrays(self) -> dict:
        return {name: p.data for name, p in self.params.items()}


class TorchMLP:
    """The same model and the same ops in PyTorch."""

    def __init__(
        self, params: dict, x: np.ndarray, labels: np.ndarray, lr: float = LR, device: str = "cpu"
    ) -> None:
        self.params = {
            name: torch.tensor(array.copy(), device=device, requires_grad=True)
            for name, array in params.items()
        }
        self.x = torch.from_numpy(x).to(device)
        self.rows = torch.arange(x.shape[0], device=device)
        self.labels = torch.from_numpy(labels).to(device)
        self.lr = lr

    def step(self) -> float:
        W1, b1, W2, b2 = (self.params[name] for name in ("W1", "b1", "W2", "b2"))
        for p in self.params.values():
            p.grad = None
        hidden = (self.x.mm(W1) + b1).relu()
        logits = hidden.mm(W2) + b2
        loss = -logits.log_softmax(dim=1)[self.rows, self.labels].mean()
        loss.backward()
        with torch.no_grad():
            for p in self.params.values():
                p -= self.lr * p.grad
        return loss.item()


class NumpyMLP:
    """The hand-written reference (benchmarks/numpy_reference.py)."""

    def __init__(self, params: dict, x: np.ndarray, labels: np.ndarray, lr: float = LR) -> None:
        self.params = {name: array.copy() for name, array in params.items()}
        self.x, self.labels, self.lr = x, labels, lr

    def step(self) -> float:
        return ref.mlp_step(self.params, self.x, self.labels, self.lr)


def mlp_models(sizes: tuple, batch: int) -> dict:
    params = ref.init_mlp(sizes)
    x, labels = ref.make_batch(batch, sizes[0], sizes[2])
    models = {"varfunc": VarfuncMLP(params, x, labels), "NumPy by hand": NumpyMLP(params, x, labels)}
    if torch is not None:
        models["PyTorch"] = TorchMLP(params, x, labels)
    return models


def part_b(configs: list, rounds: int) -> tuple[str, list]:
    rows = [
        "| model | batch | varfunc ms | PyTorch ms | NumPy by hand ms "
        "| varfunc / PyTorch | varfunc / NumPy | PyTorch / NumPy |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    targets, oks = [], []
    for sizes, batch, number, target in configs:
        models = mlp_models(sizes, batch)
        # Four passes: each model's rounds are spread over the run, so a noisy minute hits all three.
        times = compare({name: model.step for name, model in models.items()}, rounds, number, passes=4)
        name = "-".join(map(str, sizes))
        cells = [cell(times[k]) for k in models]
        if "PyTorch" not in times:
            cells.append("n/a")
        vf, np_t = times["varfunc"][0], times["NumPy by hand"][0]
        torch_t = times["PyTorch"][0] if "PyTorch" in times else None
        vs_torch = f"{vf / torch_t:.2f}x" if torch_t else "n/a"
        torch_vs_numpy = f"{torch_t / np_t:.2f}x" if torch_t else "n/a"
        rows.append(
            f"| {name} | {batch} | {cells[0]} | {cells[2]} | {cells[1]} | {vs_torch} "
            f"| {vf / np_t:.2f}x | {torch_vs_numpy} |"
        )
        if target == "numpy":
            ok = vf <= 1.05 * np_t
            targets.append(
                f"{name}: varfunc within 1.05x of NumPy by hand: {vf / np_t:.2f}x, **{verdict(ok)}**."
            )
        elif torch_t is None:
            ok = True
            targets.append(f"{name}: faster than PyTorch: not measured (PyTorch is not installed).")
        else:
            ok = vf < torch_t
            targets.append(f"{name}: varfunc faster than PyTorch: {vf / torch_t:.2f}x, **{verdict(ok)}**.")
        oks.append(ok)
    body = (
        "### (b) MLP training step (forward, loss, backward, SGD update), float32\n\n"
        + "\n".join(rows)
        + "\n\nTargets:\n"
        + "".join(f"- {t}\n" for t in targets)
    )
    return body, oks


# --- (c) long chains: time and peak memory -------------------------------------------------------


def _status_bytes(field: str) -> int:
    """A memory figure from /proc/self/status (Linux), e.g. VmRSS or VmHWM, or 0 if unreadable."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024  # "VmHWM:   12345 kB"
    except OSError:
        pass
    return 0


def _reset_peak() -> bool:
    """Reset this process's peak resident memory (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_growth(ops: int) -> int:
    """Bytes by which the peak resident memory rises above the start while one chain runs."""
    gc.collect()
    if _reset_peak():
        before = _status_bytes("VmRSS")
        chain_varfunc(ops // 2)
        return _status_bytes("VmHWM") - before
    # no /proc: ru_maxrss, which also counts the start-up peak (an underestimate at small sizes)
    import resource

    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    chain_varfunc(ops // 2)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale - before


def chain_child(ops: int, rounds: int, impl: str = "varfunc", first: bool = True) -> dict:
    """Part (c) for one size and one implementation, in a fresh process; prints a JSON report.

    For varfunc, the first repeat also measures peak memory (untimed, before the timings) and the
    same chains with the collector paused.
    """
    if impl == "torch":
        if load_torch() is None:
            raise SystemExit("benchmarks.run: --chain-child torch needs PyTorch installed")
        run = {impl: lambda: chain_torch(ops // 2)}
        chain_torch(100)  # warm up
    else:
        run = {impl: lambda: chain_varfunc(ops // 2)}
        chain_varfunc(100)
    report: dict = {"ops": ops, "impl": impl, "growth": None, "paused": None}
    if impl == "varfunc" and first:
        report["growth"] = _peak_growth(ops)
    report["time"] = compare(run, rounds, passes=1)[impl]
    if impl == "varfunc" and first:
        report["paused"] = compare(run, max(1, rounds // 3), collector=False, passes=1, warmup=False)[impl]
    print(json.dumps(report))
    return report


def run_chain_child(ops: int, rounds: int, impl: str, first: bool) -> dict:
    """chain_child in a subprocess that imports only NumPy and varfunc, or PyTorch (see RESULTS.md)."""
    args = ["--chain-child", str(ops), str(rounds), impl, "first" if first else "again"]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", *args], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _chain_timings(sizes: list, rounds: dict, impls: list, repeats: int) -> dict:
    """{(impl, ops): child reports}: the children take turns (size by size, repeat by repeat),
    so a noisy minute on the machine cannot land on one size alone."""
    reports: dict = {(impl, ops): [] for impl in impls for ops in sizes}
    for repeat in range(repeats):
        for ops in sizes:
            for impl in impls:
                reports[impl, ops].append(run_chain_child(ops, rounds[ops], impl, first=repeat == 0))
    return reports


def _steps(values: list) -> list:
    """'-' for the first size, then each value's ratio to the one 10x smaller, as text."""
    return ["-"] + [f"{b / a:.2f}x" for a, b in zip(values, values[1:])]


def part_c(sizes: list, rounds: dict, repeats: int = 2) -> tuple[str, bool, bool]:
    impls = ["varfunc"] + (["torch"] if torch is not None else [])
    reports = _chain_timings(sizes, rounds, impls, repeats)
    first = {ops: reports["varfunc", ops][0] for ops in sizes}
    fastest = {key: min(r["time"][0] for r in rs) for key, rs in reports.items()}
    median = {key: statistics.median(r["time"][1] for r in rs) for key, rs in reports.items()}
    times = [fastest["varfunc", ops] for ops in sizes]
    paused = [first[ops]["paused"][0] for ops in sizes]
    peaks = [max(first[ops]["growth"], 1) for ops in sizes]
    torch_times = [fastest["torch", ops] for ops in sizes] if "torch" in impls else None
    step_t, step_p, step_m = _steps(times), _steps(paused), _steps(peaks)
    step_torch = _steps(torch_times) if torch_times else ["n/a"] * len(sizes)
    rows = [
        "| ops | varfunc s | µs per op | time vs 10x fewer ops | PyTorch s | PyTorch vs 10x fewer ops "
        "| varfunc, collector paused: s | vs 10x fewer ops | peak memory MB | bytes per op "
        "| memory vs 10x fewer ops |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, ops in enumerate(sizes):
        torch_cell = f"{fastest['torch', ops]:.3f} ({median['torch', ops]:.3f})" if torch_times else "n/a"
        rows.append(
            f"| {ops:,} | {times[i]:.3f} ({median['varfunc', ops]:.3f}) | {times[i] / ops * 1e6:.2f} "
            f"| {step_t[i]} | {torch_cell} | {step_torch[i]} | {paused[i]:.3f} | {step_p[i]} "
            f"| {peaks[i] / 2**20:.1f} | {peaks[i] / ops:.0f} | {step_m[i]} |"
        )
    time_ok = all(b <= 12 * a for a, b in zip(times, times[1:]))
    mem_ok = all(b <= 12 * a for a, b in zip(peaks, peaks[1:]))
    reference = ""
    if torch_times:
        torch_ok = all(b <= 12 * a for a, b in zip(torch_times, torch_times[1:]))
        reference = (
            f"- for reference, PyTorch's own chains on this machine, same rule: "
            f"{', '.join(step_torch[1:])}, {'within' if torch_ok else '**not** within'} 12x;\n"
        )
    body = (
        "### (c) Long chains (`y = y * 1.0001 + 0.5`, two ops per step), backward included\n\n"
        + "\n".join(rows)
        + "\n\nTargets (on varfunc's collector-on figures):\n"
        + f"- 10x the ops in at most 12x the time, at every step: **{verdict(time_ok)}**;\n"
        + reference
        + f"- peak memory linear (at most 12x per 10x the ops): **{verdict(mem_ok)}**.\n"
        + f"\nEach size ran {'once' if repeats == 1 else f'{repeats} times'} in fresh subprocesses, "
        "the sizes and libraries taking turns; times are the fastest round of all (median of the "
        "runs' medians in brackets). The "
        "'collector paused' columns rerun varfunc's chains under `gc.disable()`: a diagnostic that "
        "separates varfunc's own work from CPython's cyclic garbage collector (see below).\n"
    )
    return body, time_ok, mem_ok


MEMORY_NOTE = """\
How (c) is measured. Each size runs in fresh subprocesses: varfunc's never imports PyTorch, which
is loaded in the main process for (a) and (b) and adds about 150,000 objects that CPython's
cyclic garbage collector would walk on every full collection (that would bill PyTorch's import
to varfunc's scaling); PyTorch's own chains run in subprocesses of their own. In varfunc's first
child for each size, peak memory is measured first, in an untimed pass: the child
warms up, resets the kernel's peak-memory mark (`/proc/self/clear_refs`), reads its resident
memory (`VmRSS`), runs one chain forward and backward, and reports how far the peak (`VmHWM`) rose
above the start. That is what the operating system actually had to provide (NumPy buffers,
Python objects, allocator overhead), costs one extra run per size and does not slow the measured
code down. `tracemalloc` was not used: it slows every allocation two to three times and sees only
allocations made through Python's allocator hooks. Bytes per op cover the Function with its graph
fields (`previous_functions`, `output_ids`, ...) and, during backward, the engine's dependency
counts; the intermediate Variables of this chain are freed as it goes. Then the child times the
chain (warm-up, rounds, the fastest and the median), and again with the collector paused.
"""


# --- main ----------------------------------------------------------------------------------------


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run on small sizes; RESULTS.md untouched")
    parser.add_argument("--chain-child", nargs=4, help=argparse.SUPPRESS)  # ops rounds impl first|again
    args = parser.parse_args(argv)
    if args.chain_child:
        ops, rounds, impl, repeat = args.chain_child
        chain_child(int(ops), int(rounds), impl, first=repeat == "first")
        return 0

    if args.quick:
        steps, rounds_a = 100, 3
        mlp = [((64, 32, 10), 16, 5, "numpy"), ((16, 16, 4), 8, 5, "torch")]
        rounds_b = 3
        sizes_c, rounds_c, repeats_c = [10**3, 10**4], {10**3: 3, 10**4: 2}, 1
    else:
        steps, rounds_a = 1000, 25
        mlp = [((784, 512, 10), 256, 5, "numpy"), ((64, 64, 10), 64, 50, "torch")]
        rounds_b = 60  # each round is 5 or 50 steps; 15 rounds left the fastest at the noise's mercy
        sizes_c, rounds_c, repeats_c = [10**4, 10**5, 10**6], {10**4: 15, 10**5: 4, 10**6: 2}, 2

    start = time.perf_counter()
    load_torch()
    threads = f", PyTorch {torch.__version__} with {torch.get_num_threads()} threads" if torch else ""
    print(f"varfunc core benchmarks{threads}", file=sys.stderr)
    body_a, ok_a = part_a(steps, rounds_a)
    print(body_a)
    body_b, ok_b = part_b(mlp, rounds_b)
    print(body_b)
    body_c, ok_time, ok_mem = part_c(sizes_c, rounds_c, repeats_c)
    print(body_c)
    elapsed = time.perf_counter() - start
    print(f"({elapsed:.0f} s)", file=sys.stderr)
    if not args.quick:
        summary = (
            f"Summary: (a) **{verdict(ok_a)}**, (b) large **{verdict(ok_b[0])}**, small "
            f"**{verdict(ok_b[1])}**, (c) time **{verdict(ok_time)}**, memory **{verdict(ok_mem)}**.\n\n"
            "Times: fastest round after a warm-up, median round in brackets; ratios and targets use "
            "the fastest rounds (other work on the machine can only add time). The garbage collector "
            "stays on. PyTorch runs on the CPU with its default threads; the "
            "PyTorch and varfunc models use the same ops (mm, +, relu, log_softmax, indexing, mean) "
            "and both clear gradients by setting them to None before each step.\n"
        )
        write_section(
            "core", "make bench", "\n".join([summary, body_a, body_b, body_c, MEMORY_NOTE, RESULTS_NOTES])
        )
    return 0


# Written by hand after profiling (what limits each figure, what changed in the core); copied into
# RESULTS.md under the tables.
RESULTS_NOTES = Path(__file__).with_name("core_notes.md").read_text()

if __name__ == "__main__":
    sys.exit(main())
