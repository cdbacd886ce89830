"""Stopping a class's grading half-way (Ctrl-C, SIGTERM) leaves no grading process, no kernel and no
scratch folder behind, keeps the reports already written, and says that a re-run resumes.

The submission that is being graded when the grading stops runs an endless loop in a kernel that
cannot see its grader go (its os.getppid is pinned), so only the grader's clean-up can end it. Every
wait has a time limit, and whatever a failing test leaves running is killed.
"""

from __future__ import annotations

import copy
import json
import multiprocessing.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from varfunc.grading import batch  # noqa: E402
from varfunc.grading.batch import grade_class  # noqa: E402
from varfunc.grading.grade import GradeOptions  # noqa: E402

pytestmark = [
    pytest.mark.slow,  # starts Jupyter kernels
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups"),
]

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "notebooks" / "03_functions_and_the_forward_graph.ipynb"
OPTIONS = GradeOptions(cell_timeout=60, notebook_timeout=120)
WAIT = 60  # seconds, at most, for anything to happen
RESUME = "run the same command again to resume where it stopped"


def _endless(path: Path, record: Path) -> Path:
    """A submission whose kernel writes 'kernel-pid grader-pid' to record, then loops for ever."""
    nb = copy.deepcopy(nbformat.read(SOURCE, as_version=4))
    loop = (
        "import os\n"
        f"open({str(record) + '.tmp'!r}, 'w').write(f'{{os.getpid()}} {{os.getppid()}}')\n"
        f"os.replace({str(record) + '.tmp'!r}, {str(record)!r})\n"
        "_grader = os.getppid()\n"
        "os.getppid = lambda: _grader  # the kernel's watch on its parent never sees the grader go\n"
        "while True:\n    pass\n"
    )
    nb.cells.insert(2, nbformat.v4.new_code_cell(loop))
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    return path


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")  # a zombie is dead


def _gone(pids: list[int]) -> bool:
    """True once none of pids runs (waiting up to 10 s for them to end)."""
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(_alive(pid) for pid in pids)


def _group(group: int) -> list[int]:
    """The processes in a process group still running (Linux: read from /proc; elsewhere none)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _recorded(record: Path) -> list[int]:
    return [int(pid) for pid in record.read_text().split()] if record.exists() else []


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _start(command: list[str], **popen: object) -> subprocess.Popen:
    """Popen, the command getting SIGINT's default action even where pytest ignores SIGINT: a
    non-interactive shell starts a job run with & (make test &, a CI script) with SIGINT ignored,
    a command inherits that, and Python keeps it, so grade would never see the test's Ctrl-C."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # exec resets it to SIG_DFL
    try:
        return subprocess.Popen(command, **popen)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_command_started_gets_ctrl_c_even_where_pytest_ignores_it():
    shows = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a job started with &
    try:
        child = _start([sys.executable, "-c", shows], stdout=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert child.communicate(timeout=WAIT)[0].split() == [b"True"]
    assert signal.getsignal(signal.SIGINT) is previous


@pytest.fixture
def scratch_root(tmp_path, monkeypatch):
    """The temporary folder that grading makes its scratch folders in (varfunc-grade-*)."""
    root = tmp_path / "tmp"
    root.mkdir()
    # multiprocessing's own folder (pymp-*) made now, outside root: it is made once per process and
    # removed at exit, when root may be gone
    multiprocessing.util.get_temp_dir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_ctrl_c_in_grade_class_ends_the_graders_and_kernels_and_keeps_the_reports(
    tmp_path, scratch_root, monkeypatch
):
    record = tmp_path / "pids.txt"
    endless = _endless(tmp_path / "endless" / SOURCE.name, record)
    solved = tmp_path / "solved" / SOURCE.name
    solved.parent.mkdir()
    solved.write_bytes(SOURCE.read_bytes())

    class CtrlC:
        """A progress bar on which Ctrl-C is pressed once a submission was graded."""

        def update(self, n: int) -> None:
            _wait_for(record)  # the endless loop runs
            raise KeyboardInterrupt

        def set_postfix_str(self, text: str) -> None: ...

        def close(self) -> None: ...

    monkeypatch.setattr(batch, "_progress", lambda total, enabled: CtrlC())
    try:
        with pytest.raises(KeyboardInterrupt):
            grade_class([endless, solved], tmp_path / "grades", OPTIONS, jobs=2)
        assert _gone(_recorded(record)), "the kernel or its grading process is still running"
    finally:
        _kill(_recorded(record))
    assert list(scratch_root.glob("varfunc-grade-*")) == []
    assert (tmp_path / "grades" / "solved" / SOURCE.stem).with_suffix(".json").exists()
    assert not (tmp_path / "grades" / "endless" / SOURCE.stem).with_suffix(".json").exists()
    summary = (tmp_path / "grades" / "summary.csv").read_text(encoding="utf-8-sig").splitlines()
    assert len(summary) == 2 and summary[1].startswith("solved,")


@pytest.mark.parametrize(
    "signal_number, to_the_group, status",
    [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143)],
    ids=["ctrl-c", "sigterm"],
)
def test_a_stopped_grade_command_leaves_nothing_running(tmp_path, signal_number, to_the_group, status):
    """Ctrl-C in a terminal signals the whole process group; a scheduler's SIGTERM the command alone."""
    record, scratch_root, grades = tmp_path / "pids.txt", tmp_path / "tmp", tmp_path / "grades"
    scratch_root.mkdir()
    endless = _endless(tmp_path / "alice" / SOURCE.name, record)
    unreadable = tmp_path / "bob" / SOURCE.name
    unreadable.parent.mkdir()
    unreadable.write_text("not json")  # graded at once: its report is written before the signal
    command = [sys.executable, "-m", "varfunc.grading", "grade", str(endless), str(unreadable)]
    command += ["--report", str(grades), "--jobs", "2", "--timeout", "60", "--no-progress"]
    env = {**os.environ, "TMPDIR": str(scratch_root)}
    grading = _start(
        command, cwd=REPO, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _wait_for(record)
        _wait_for((grades / "bob" / SOURCE.stem).with_suffix(".json"))
        (os.killpg if to_the_group else os.kill)(grading.pid, signal_number)
        _, err = grading.communicate(timeout=WAIT)
        assert _gone(_recorded(record)), "the kernel or its grading process is still running"
        assert _gone(_group(grading.pid)), "a process of the grade command is still running"
    finally:
        if grading.poll() is None:
            os.killpg(grading.pid, signal.SIGKILL)
        # the kernel runs in a session of its own and holds the command's pipes: end it before reading
        _kill(_recorded(record) + _group(grading.pid))
        grading.communicate(timeout=WAIT)
    assert grading.returncode == status
    lines = err.decode().strip().splitlines()
    assert RESUME in lines[-1] and "Traceback" not in err.decode(), err.decode()
    assert list(scratch_root.glob("varfunc-grade-*")) == []
    summary = (grades / "summary.csv").read_text(encoding="utf-8-sig").splitlines()
    assert len(summary) == 2 and summary[1].startswith("bob,")


@pytest.mark.skipif(sys.platform == "win32", reason="no fork server on Windows")
def test_the_graders_fork_server_ignores_ctrl_c_before_its_slow_imports():
    """A Ctrl-C in grade's first seconds, while the fork server imported nbclient (it ignores SIGINT
    only once its imports are done), printed the server's traceback after grade's own 'stopped' line."""
    from multiprocessing import forkserver

    from varfunc.grading import batch

    batch._context()
    assert forkserver._forkserver._preload_modules[0] == "varfunc.grading._forkserver"
    shows = (
        "import signal, varfunc.grading._forkserver; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    )
    assert subprocess.run([sys.executable, "-c", shows], capture_output=True, check=True).stdout.split() == [
        b"True"
    ]


STOPPED_WHILE_LAUNCHING = """
import os, signal, sys
from pathlib import Path
import nbformat
from varfunc.grading.execute import execute
from varfunc.grading.stopping import obey_the_parent

scratch, record = sys.argv[1], Path(sys.argv[2])
obey_the_parent(scratch)
getpgid = os.getpgid

def launched(pid):  # the kernel's process runs; the provisioner asks for its group next
    record.write_text(str(pid))
    os.kill(os.getpid(), signal.SIGTERM)
    return getpgid(pid)

os.getpgid = launched
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
execute(nb, Path(scratch), cell_timeout=5, notebook_timeout=10, kernel_name="sleeper")
"""


def test_a_sigterm_while_a_kernel_is_launched_ends_that_kernel(tmp_path):
    """A SIGTERM between the kernel's start and the moment its process group was known left the kernel
    running: kill_kernels did not know its group yet. The kernel here is a process that sleeps (it has
    no parent watch to end it), so only the grading process's clean-up can end it."""
    spec = tmp_path / "jupyter" / "kernels" / "sleeper" / "kernel.json"
    spec.parent.mkdir(parents=True)
    argv = [sys.executable, "-c", "import time; time.sleep(300)", "{connection_file}"]
    spec.write_text(json.dumps({"argv": argv, "display_name": "sleeper", "language": "python"}))
    scratch, record = tmp_path / "scratch", tmp_path / "kernel.pid"
    scratch.mkdir()
    env = {**os.environ, "JUPYTER_PATH": str(tmp_path / "jupyter")}
    command = [sys.executable, "-c", STOPPED_WHILE_LAUNCHING, str(scratch), str(record)]
    log = tmp_path / "log.txt"  # not a pipe: a kernel left running would hold it open
    try:
        with open(log, "w") as out:
            done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=WAIT)
        assert done.returncode == 128 + signal.SIGTERM, log.read_text()
        assert _gone(_recorded(record)), "the kernel launched when SIGTERM came is still running"
    finally:
        _kill(_recorded(record))
    assert not scratch.exists()
