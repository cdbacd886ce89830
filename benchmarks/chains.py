"""Parts (a) and (c) of the core benchmarks: the scalar chain ``y = y * 1.0001 + 0.5``, at 1,000 steps
against PyTorch and hand-written NumPy, and at 10^4 to 10^6 ops for time and memory scaling.

benchmarks/run.py runs them (``make bench``); part (c) runs each size in a fresh subprocess,
``python -m benchmarks.run --chain-child OPS ROUNDS IMPL first|again``.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys

import numpy as np

from varfunc import Variable

from . import common
from . import numpy_reference as ref
from .common import cell, compare, load_torch, ratio_text, verdict

# --- (a) the scalar chain ------------------------------------------------------------------------


def chain_varfunc(steps: int, backward: bool = True) -> tuple:
    """The chain on a 0-d float64 Variable; returns (y, dy/dx) as arrays."""
    x = Variable(np.array(1.0), requires_grad=True)
    y = ref.chain_forward(x, steps)
    if backward:
        y.backward()
    return y.data, x.grad


def chain_torch(steps: int, backward: bool = True) -> tuple:
    """The same chain on a 0-d float64 tensor."""
    torch = common.torch
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    y = ref.chain_forward(x, steps)
    if backward:
        y.backward()
    return y.detach().numpy(), x.grad.numpy() if backward else None


def part_a(steps: int, rounds: int) -> tuple[str, bool | None]:
    """The chain's table and target line; the verdict is None (not measured) without PyTorch."""
    y_ref, g_ref = ref.chain_forward_backward(steps)
    y_vf, g_vf = chain_varfunc(steps)
    assert np.allclose(y_vf, y_ref) and np.allclose(g_vf, g_ref), "varfunc's chain disagrees with NumPy's"
    total = {
        "varfunc": lambda: chain_varfunc(steps),
        "NumPy by hand": lambda: ref.chain_forward_backward(steps),
    }
    forward = {
        "varfunc": lambda: chain_varfunc(steps, backward=False),
        "NumPy by hand": lambda: ref.chain_forward(np.array(1.0), steps),
    }
    if common.torch is not None:
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
            f"Target: varfunc at most 1.5x PyTorch's forward + backward time: {ratio_text(ratio, ok)}, "
            f"**{verdict(ok)}**."
        )
    else:
        ok = None
        target = "Target: at most 1.5x PyTorch: not measured (PyTorch is not installed)."
    title = f"### (a) Chain of {steps:,} scalar steps `y = y * 1.0001 + 0.5` ({2 * steps:,} ops)\n\n"
    return title + "\n".join(rows) + "\n\n" + target + "\n", ok


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
        before, peak = _status_bytes("VmRSS"), lambda: _status_bytes("VmHWM")
    else:  # no /proc: ru_maxrss, which also counts the start-up peak (an underestimate at small sizes)
        import resource

        scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
        peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale  # noqa: E731
        before = peak()
    chain_varfunc(ops // 2)
    return peak() - before


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


def _scaling(values: list, limit: float = 12) -> tuple[bool, str]:
    """Whether each value is at most limit times the one before, and those ratios for a target line."""
    ratios = [b / a for a, b in zip(values, values[1:])]
    return all(r <= limit for r in ratios), ", ".join(ratio_text(r, r <= limit) for r in ratios)


def part_c(sizes: list, rounds: dict, repeats: int = 2) -> tuple[str, bool, bool | None]:
    """The long chains' table and verdicts: time, and memory (None where no peak could be measured)."""
    impls = ["varfunc"] + (["torch"] if common.torch is not None else [])
    reports = _chain_timings(sizes, rounds, impls, repeats)
    first = {ops: reports["varfunc", ops][0] for ops in sizes}
    fastest = {key: min(r["time"][0] for r in rs) for key, rs in reports.items()}
    median = {key: statistics.median(r["time"][1] for r in rs) for key, rs in reports.items()}
    times = [fastest["varfunc", ops] for ops in sizes]
    paused = [first[ops]["paused"][0] for ops in sizes]
    peaks = [first[ops]["growth"] for ops in sizes]
    mem_measured = all(peak > 0 for peak in peaks)  # 0: the peak did not rise, or could not be read
    torch_times = [fastest["torch", ops] for ops in sizes] if "torch" in impls else None
    step_t, step_p = _steps(times), _steps(paused)
    step_m = _steps(peaks) if mem_measured else ["n/a"] * len(sizes)
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
    time_ok, time_steps = _scaling(times)
    mem_ok, mem_steps = _scaling(peaks) if mem_measured else (None, "no rise in peak memory was seen")
    reference = ""
    if torch_times:
        torch_ok, torch_steps = _scaling(torch_times)
        reference = (
            f"- for reference, PyTorch's own chains on this machine, same rule: "
            f"{torch_steps}, {'within' if torch_ok else '**not** within'} 12x;\n"
        )
    body = (
        "### (c) Long chains (`y = y * 1.0001 + 0.5`, two ops per step), backward included\n\n"
        + "\n".join(rows)
        + "\n\nTargets (on varfunc's collector-on figures):\n"
        + f"- 10x the ops in at most 12x the time, at every step ({time_steps}): **{verdict(time_ok)}**;\n"
        + reference
        + f"- peak memory linear (at most 12x per 10x the ops; {mem_steps}): **{verdict(mem_ok)}**.\n"
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
