"""Stopping a class's grading half-way (Ctrl-C, or SIGTERM from a job scheduler) without leaving
anything behind: the grading processes and their Jupyter kernels end, their scratch folders go, and
the reports already written stay, so running the same command again resumes where it stopped.

Ctrl-C reaches every process of the terminal's process group: the parent (``grade_class``) gets a
KeyboardInterrupt, each grading process ignores it and waits for the parent's SIGTERM, on which it
kills its kernel (which runs in a session of its own, out of Ctrl-C's reach) and exits. A SIGTERM
that arrives while a kernel is being launched waits until the launch is done: before then the
kernel's process runs, but its process group, which ``kill_kernels`` ends, is not known yet.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from multiprocessing.process import BaseProcess
from typing import Any

STOP_WAIT = 10  # seconds a grading process gets to kill its kernel before it is killed itself
_KERNELS: list = []  # the nbclient clients whose kernels this process runs now (kill_kernels ends them)


@dataclass
class _Launch:
    """Whether a kernel is being launched now, and the stop that waits for the launch to end."""

    active: bool = False
    stop: Callable[[], None] | None = None


_LAUNCH = _Launch()


@contextmanager
def running(client: Any) -> Iterator[None]:
    """While inside, kill_kernels ends the kernel of client (an nbclient NotebookClient)."""
    _KERNELS.append(client)
    try:
        yield
    finally:
        _KERNELS.remove(client)


def kill_kernels() -> None:
    """Kill the kernels this process runs, with all they started (a grading process told to stop)."""
    for client in list(_KERNELS):
        group = getattr(getattr(client.km, "provisioner", None), "pgid", None)  # set once it launched
        if group and hasattr(os, "killpg"):
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass


@contextmanager
def launching() -> Iterator[None]:
    """While inside (a kernel being launched), a grading process told to stop waits, and stops on leaving."""
    _LAUNCH.active = True
    try:
        yield
    finally:
        _LAUNCH.active = False
        stop, _LAUNCH.stop = _LAUNCH.stop, None
        if stop is not None:
            stop()


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
        if _LAUNCH.active:  # the new kernel's process group is not known yet: stop once it is
            _LAUNCH.stop = partial(stop, signum, frame)
            return
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
