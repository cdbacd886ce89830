"""Stopping a class's grading half-way (Ctrl-C, or SIGTERM from a job scheduler) without leaving
anything behind: the grading processes and their Jupyter kernels end, their scratch folders go, and
the reports already written stay, so running the same command again resumes where it stopped.

Ctrl-C reaches every process of the terminal's process group: the parent (``grade_class``) gets a
KeyboardInterrupt, each grading process ignores it and waits for the parent's SIGTERM, on which it
kills its kernel (which runs in a session of its own, out of Ctrl-C's reach) and exits.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from typing import Any

from .execute import kill_kernels

STOP_WAIT = 10  # seconds a grading process gets to kill its kernel before it is killed itself


class Stopped(KeyboardInterrupt):
    """SIGTERM asked the grading to stop (Ctrl-C raises a plain KeyboardInterrupt)."""


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """While inside, SIGTERM raises Stopped, as Ctrl-C raises KeyboardInterrupt (main thread only)."""
    if not _in_main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise Stopped(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """While inside, Ctrl-C and SIGTERM do nothing (a second one must not cut the clean-up short)."""
    if not _in_main_thread():
        yield
        return
    previous = {number: signal.signal(number, signal.SIG_IGN) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)


def obey_the_parent(scratch: str) -> None:
    """In a grading process: leave Ctrl-C to the parent; on SIGTERM kill the kernel, remove the
    scratch folder and exit at once."""

    def stop(signum: int, frame: Any) -> None:
        kill_kernels()
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(128 + signum)

    # a handler that does nothing, not SIG_IGN, which the kernel would inherit: its interrupts are SIGINTs
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    signal.signal(signal.SIGTERM, stop)


def stop_processes(running: Iterable[tuple[BaseProcess, str]]) -> None:
    """End each (grading process, its scratch folder): SIGTERM, then SIGKILL after STOP_WAIT seconds."""
    running = list(running)
    with uninterrupted():
        for process, _ in running:
            process.terminate()
        for process, scratch in running:
            process.join(STOP_WAIT)
            if process.is_alive():
                process.kill()
                process.join()
            shutil.rmtree(scratch, ignore_errors=True)
