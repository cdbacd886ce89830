"""Run a notebook in a fresh Jupyter kernel, cell by cell, with time limits and recovery.

Used by the grader (``grade.py``): the kernel first takes the guard's snapshot of the libraries
(``guard.py``); an endless loop is interrupted at the cell's time limit; a kernel
that dies (``os._exit``, a crash), is shut down by the notebook (IPython's ``exit()``) or stays stuck
after the interrupt is restarted and the cells that ran before are replayed (their state, not their
outputs), so the cells after it still run. On Linux the kernel may hold at most ``memory_gib`` GiB
of data (``RLIMIT_DATA``, which NumPy's arrays count in): past it an allocation raises MemoryError in
the student's cell, where it would otherwise push the grading machine into swap or the OOM killer.
A submission keeps at most ``max_output_mib`` MiB of outputs (``kernels.OutputBudget``).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .guard import GUARD_ENV
from .guard import STARTUP as GUARD_STARTUP
from .hidden import RUNNER_MARK, VERDICT_MIME
from .notebook import source_of
from .stopping import running

MAX_RESTARTS = 3
TIMEOUT_ERROR = "CellTimeoutError"
EXIT_CALL = "exit()"  # the ename of a cell that called IPython's exit() or quit(): the kernel shuts down


@dataclass
class CellRun:
    """How one cell's execution ended: ok, error, timeout, died (the kernel) or not_run."""

    status: str = "not_run"
    ename: str = ""
    evalue: str = ""
    outputs: list = field(default_factory=list)
    cut: bool = False  # some of its outputs were dropped: the submission's outputs passed the limit


def _client(nb: Any, workdir: Path, kernel_name: str, replies: dict, budget: Any) -> Any:
    from .kernels import GraderClient, GraderKernelManager  # nbclient: imported when a kernel runs

    def on_executed(cell: Any, cell_index: int, execute_reply: dict) -> None:
        replies[cell_index] = execute_reply.get("content", {})

    return GraderClient(
        nb,
        budget,
        kernel_manager_class=GraderKernelManager,
        timeout=None,  # set before each cell
        interrupt_on_timeout=True,
        error_on_timeout={"ename": TIMEOUT_ERROR, "evalue": "the cell ran past its time limit"},
        allow_errors=True,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(workdir)}},
        startup_timeout=120,
        iopub_timeout=5,
        record_timing=False,
        on_cell_executed=on_executed,
    )


def _kernel_env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(MPLBACKEND="Agg", IPYTHONDIR=str(workdir / ".ipython"), PYTHONDONTWRITEBYTECODE="1")
    env[GUARD_ENV] = "1"
    return env


MEMORY_STARTUP = """\
# varfunc grader: the submission's memory limit (see varfunc/grading/execute.py)
import sys as _vf_sys
if _vf_sys.platform.startswith("linux"):
    import resource as _vf_resource
    _vf_hard = _vf_resource.getrlimit(_vf_resource.RLIMIT_DATA)[1]  # an unprivileged process cannot raise it
    _vf_limit = {limit} if _vf_hard == _vf_resource.RLIM_INFINITY else min({limit}, _vf_hard)
    _vf_resource.setrlimit(_vf_resource.RLIMIT_DATA, (_vf_limit, _vf_limit))  # and neither can the notebook
    del _vf_resource, _vf_hard, _vf_limit
del _vf_sys
"""


def _install_startup(workdir: Path, memory_gib: float) -> None:
    """The kernel's startup files, run before the submission's first cell: the guard's snapshot, and
    the memory limit (memory_gib 0: none)."""
    startup = workdir / ".ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-varfunc-guard.py").write_text(GUARD_STARTUP)
    if memory_gib:
        (startup / "01-varfunc-memory.py").write_text(MEMORY_STARTUP.format(limit=int(memory_gib * 2**30)))


def execute(
    nb: Any,
    workdir: Path,
    *,
    cell_timeout: float,
    notebook_timeout: float,
    kernel_name: str = "python3",
    memory_gib: float = 0,
    max_output_mib: float = 0,
) -> list[CellRun]:
    """Run every code cell in a fresh kernel; restart and replay after a death or a stuck interrupt.

    memory_gib: the kernel's memory limit, max_output_mib: the outputs the notebook keeps in all,
    replays included (0: no limit for either)."""
    from nbclient.exceptions import DeadKernelError

    from .kernels import OutputBudget

    _install_startup(workdir, memory_gib)
    work = copy.deepcopy(nb)
    probe = {"cell_type": "code", "source": "pass", "metadata": {}, "outputs": [], "execution_count": None}
    work["cells"].append(type(work["cells"][0])(probe) if work["cells"] else probe)
    runs = [CellRun() for _ in nb["cells"]]
    deadline = time.monotonic() + notebook_timeout
    budget = OutputBudget(limit=int(max_output_mib * 2**20))

    def run_cell(position: int) -> None:
        client.timeout = max(1, round(min(cell_timeout, deadline - time.monotonic())))
        client.execute_cell(work["cells"][position], position)

    position, restarts = 0, 0
    while position < len(runs) and restarts <= MAX_RESTARTS:
        replies: dict[int, dict] = {}
        client = _client(work, workdir, kernel_name, replies, budget)
        restart, current = False, position
        try:
            with running(client), client.setup_kernel(env=_kernel_env(workdir), stderr=subprocess.DEVNULL):
                for current in range(position):  # replay what ran before a restart (state only)
                    if runs[current].status in ("ok", "error") and not _is_runner(work["cells"][current]):
                        run_cell(current)
                while position < len(runs) and not restart:
                    current, cell = position, work["cells"][position]
                    if cell["cell_type"] != "code" or not source_of(cell).strip():
                        runs[position].status = "ok"
                    elif time.monotonic() >= deadline:
                        break
                    else:
                        run_cell(position)
                        runs[position] = _outcome(replies.get(position, {}), work["cells"][position])
                        runs[position].cut = position in budget.cut
                        if memory_gib and runs[position].ename == "MemoryError":
                            limit = f"(the grader's limit: {memory_gib:g} GiB, --memory)"
                            runs[position].evalue = f"{runs[position].evalue} {limit}".lstrip()
                        if runs[position].status == "timeout":
                            restart = not _responds(client, work, replies)
                        restart = restart or runs[position].ename == EXIT_CALL  # it is shutting down
                    position += 1
        except DeadKernelError:
            runs[current] = CellRun("died", "DeadKernelError", "the kernel died while running this cell")
            runs[current].cut = current in budget.cut
            position = max(position, current + 1)
            restart = True
        if not restart:
            break
        restarts += 1
    return runs


def _responds(client: Any, work: Any, replies: dict) -> bool:
    """After a timeout: does the interrupted kernel answer a trivial cell within a few seconds?"""
    probe = len(work["cells"]) - 1
    before, client.timeout = client.timeout, 5
    try:
        client.execute_cell(work["cells"][probe], probe)
    finally:
        client.timeout = before
    return replies.get(probe, {}).get("ename") != TIMEOUT_ERROR


def _outcome(reply: dict, cell: Any) -> CellRun:
    outputs = list(cell.get("outputs", []))
    if any(_asks_to_exit(payload) for payload in reply.get("payload") or []):
        # exit() raises nothing: the cell goes on, then the kernel stops (in Jupyter too)
        return CellRun("died", EXIT_CALL, "called exit() or quit(), which shuts the kernel down", outputs)
    if reply.get("ename") == TIMEOUT_ERROR:
        return CellRun("timeout", TIMEOUT_ERROR, "ran past its time limit", outputs)
    if reply.get("status") == "error":
        return CellRun("error", reply.get("ename", ""), str(reply.get("evalue", ""))[:500], outputs)
    return CellRun("ok", outputs=outputs)


def _asks_to_exit(payload: Any) -> bool:
    """True for the payload of exit() or quit(), not of exit(keep_kernel=True)."""
    return isinstance(payload, dict) and payload.get("source") == "ask_exit" and not payload.get("keepkernel")


def _is_runner(cell: Any) -> bool:
    return source_of(cell).startswith(RUNNER_MARK)


def verdict_of(run: CellRun, exercise_id: str, nonce: str) -> dict | None:
    """The verdict the grader's runner displayed in a check cell, if it got that far.

    Only a verdict for this exercise that carries this check's nonce counts: the notebook's code,
    which runs inside the checks, may display verdicts of its own. The runner displays exactly one;
    a second one with the nonce was copied from the runner's source or its frame (during the checks,
    or from an IPython event callback after them), so the exercise fails, saying so.
    """
    verdicts = [_payload(output) for output in run.outputs]
    ours = [v for v in verdicts if v.get("exercise") == exercise_id and v.get("nonce") == nonce]
    if len(ours) > 1:
        return {
            "exercise": exercise_id,
            "passed": False,
            "case": f"the check cell showed {len(ours)} verdicts for this exercise where the grader "
            "shows one: the notebook's code displayed a verdict of its own",
            "expected": None,
            "got": None,
        }
    return ours[0] if ours else None


def _payload(output: Any) -> dict:
    """The verdict an output carries, or {} (no verdict, or not a JSON object)."""
    data = output.get("data") if isinstance(output, dict) else None
    payload = data.get(VERDICT_MIME) if isinstance(data, dict) else None
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except ValueError:
            return {}
    return dict(payload) if isinstance(payload, dict) else {}


def grading_workdir() -> tempfile.TemporaryDirectory:
    """A fresh, empty working directory for one submission's kernel."""
    return tempfile.TemporaryDirectory(prefix="varfunc-grade-")
