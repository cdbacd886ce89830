"""One grading run at a time per report folder: two at once deleted each other's reports while they
were being written, and the one that ended first wrote a summary.csv missing the other's submissions.

A run holds the folder's lock file (``LOCK_FILE``: which process, on which machine, since when),
created atomically (``O_CREAT | O_EXCL``), while it grades and writes the summary; it removes it when
it ends, stopped too (Ctrl-C, SIGTERM). A second run into the folder is refused (``FolderBusy``),
saying what to do. A lock left by a run that was killed (SIGKILL, a crash, a power cut) is stale when
its process no longer runs on this machine, or, on Linux, when its process number now belongs to a
process started later (PIDs are reused: a container restarted counts from 1 again), and the next run
takes it over; a lock from another machine (a shared folder) cannot be checked and holds until it is
deleted by hand.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".grading-lock"  # not .json: the summary reads every *.json in the folder
YOUNG = 10.0  # seconds during which a lock that cannot be read yet may be one being written now
_HELD: set[Path] = set()  # the locks this process holds (its own PID in a lock is not enough: PIDs repeat)


class FolderBusy(ValueError):
    """Another grading run is writing into the report folder."""


@contextmanager
def grading_into(report_dir: Path) -> Iterator[None]:
    """While inside, this process alone grades into report_dir; FolderBusy if another run does."""
    path = (Path(report_dir) / LOCK_FILE).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    record = _acquire(path)
    _HELD.add(path)
    try:
        yield
    finally:
        _HELD.discard(path)
        if _read(path) == record:  # not a lock another run took over meanwhile (see _acquire)
            path.unlink(missing_ok=True)


def _acquire(path: Path) -> dict:
    """Create the lock file holding this run's record (removing a stale one first) and return it."""
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
    record["ticks"] = start_ticks(os.getpid())
    record["token"] = uuid.uuid4().hex
    for _ in range(3):  # another run may take over the same stale lock at the same time: try again
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _read(path)
            if not _stale(path, holder):
                raise FolderBusy(_busy(path, holder)) from None
            if _read(path) == holder:  # still the stale one, not a lock created since
                path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f)
        return record
    raise FolderBusy(_busy(path, _read(path)))


def _read(path: Path) -> dict | None:
    """The record in a lock file, or None (gone, being written, or not a lock's)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("pid"), int) else None


def _stale(path: Path, holder: dict | None) -> bool:
    """Whether a lock file is left by a run that is over: its process is gone from this machine."""
    if holder is None:  # unreadable: a run writing it now, unless it has been so for a while
        try:
            return time.time() - path.stat().st_mtime > YOUNG
        except OSError:
            return True  # gone meanwhile
    if holder.get("host") != socket.gethostname():
        return False  # another machine's process: it cannot be checked from here
    if holder["pid"] == os.getpid():
        return path not in _HELD  # a dead run that had this process's number
    if not process_exists(holder["pid"]):
        return True
    ticks, now = holder.get("ticks"), start_ticks(holder["pid"])
    return isinstance(ticks, int) and now is not None and ticks != now  # its number, a later process's


def start_ticks(pid: int) -> int | None:
    """When process pid started, in clock ticks since boot (Linux's /proc; None elsewhere, or if it
    cannot be read): with the PID, it tells a process from a later one given the same number. Unlike
    a wall-clock time, it does not move when the clock is set."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return int(stat.rsplit(")", 1)[1].split()[19])  # field 22 (the name before it may hold spaces)
    except (OSError, IndexError, ValueError):
        return None


def process_exists(pid: int) -> bool:
    """Whether a process with this PID runs on this machine (someone else's included)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _windows_process_exists(pid)
    try:
        os.kill(pid, 0)  # signal 0: checks, sends nothing
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def _windows_process_exists(pid: int) -> bool:
    """process_exists on Windows, where os.kill(pid, 0) would terminate the process."""
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it exists, someone else's
    try:
        code = wintypes.DWORD()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return True
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def _busy(path: Path, holder: dict | None) -> str:
    """The refusal: which folder, who holds it, why that matters and what to do."""
    folder = path.parent
    who = "another grading run"
    if holder is not None:
        who += f" (process {holder['pid']} on {holder.get('host', 'an unknown machine')}"
        started = holder.get("started")
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if _number(started) else ""
        who += f", since {since})" if since else ")"
    return (
        f"nothing was graded: {who} is grading into {folder} now, and two runs into one report folder "
        "delete each other's reports and write a summary.csv without the other's submissions. Wait "
        "for it to end and run this command again, or grade into another --report folder. If no "
        f"grading runs into {folder} (that run was killed, and its process number is now another "
        f"program's, or it ran on another machine), delete {path}"
    )


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 2**40
