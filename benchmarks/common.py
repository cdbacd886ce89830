"""What every benchmark shares: PyTorch if it is installed, the timing loop, and table cells."""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

torch: Any = None  # imported by load_torch(): the memory subprocesses and the smoke test do without


def load_torch() -> Any:
    """Import PyTorch if it is installed (its columns read "n/a" otherwise); also sets common.torch."""
    global torch
    try:
        import torch as module
    except ImportError:
        return None
    torch = module
    return torch


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


def verdict(ok: bool | None) -> str:
    """PASS, MISS, or "not measured" for None (PyTorch missing, memory unreadable)."""
    return "not measured" if ok is None else "PASS" if ok else "MISS"


def ratio_text(ratio: float, ok: bool) -> str:
    """'1.504x': a ratio for a target line, to 3 decimals, rounded toward its verdict (see toward_verdict)."""
    return f"{toward_verdict(ratio, ok)}x"


def toward_verdict(value: float, ok: bool, decimals: int = 3) -> str:
    """value to decimals, rounded down for a PASS and up for a MISS.

    Every target is an upper limit with at most that many decimals, so the number shown then lies on
    the same side of the limit as the value itself: 1.5004 against 1.5 reads 1.501x MISS, not
    1.500x MISS, and a chapter's 19.97 s against 20 s reads 19.9, not 20.0.
    """
    scale = 10**decimals
    scaled = value * scale
    return f"{(math.floor(scaled) if ok else math.ceil(scaled)) / scale:.{decimals}f}"
