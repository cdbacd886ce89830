"""What --max-output counts, fed nbclient's messages without a kernel: outputs that clear_output
removed and display contents that an update replaced no longer count (a progress loop that kept one
line at a time passed the limit), display updates count (a thousand handles updated with large
strings kept 100 MB past a 0.5 MiB limit), and comm messages keep nothing (nbclient kept every
widget's state). And the report folder's lock: a second grading run into a folder that one grades
into now is refused (the two deleted each other's reports and wrote a summary.csv short of
submissions), and a run that was stopped or killed does not block the next. No kernel runs here."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.batch import grade_class  # noqa: E402
from varfunc.grading.kernels import GraderClient, OutputBudget, output_size  # noqa: E402
from varfunc.grading.lock import LOCK_FILE, FolderBusy, grading_into, start_ticks  # noqa: E402

CH03 = "03_functions_and_the_forward_graph.ipynb"


def _client(cells: int, limit: int) -> GraderClient:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass") for _ in range(cells)])
    client = GraderClient(nb, OutputBudget(limit=limit), kernel_name="python3", record_timing=False)
    client.clear_before_next_output = False  # as nbclient sets it when a cell starts
    return client


def _send(client: GraderClient, cell: int, msg_type: str, **content: object) -> None:
    """Hand the client an IOPub message of the cell, as nbclient's message loop does."""
    msg = {"msg_type": msg_type, "header": {"msg_type": msg_type}, "content": content}
    msg["parent_header"] = {"msg_id": f"cell-{cell}"}
    client.process_message(msg, client.nb.cells[cell], cell)


def _display(client: GraderClient, cell: int, text: str, display_id: str, update: bool = False) -> None:
    kind = "update_display_data" if update else "display_data"
    data, transient = {"text/plain": text}, {"display_id": display_id}
    _send(client, cell, kind, data=data, metadata={}, transient=transient)


def _kept(client: GraderClient) -> int:
    """The characters of the outputs the notebook keeps (their text and data)."""
    return sum(output_size(output) for cell in client.nb.cells for output in cell.outputs)


def test_display_updates_count_and_stop_at_the_limit():
    """h.update(...) went around the budget: 100 small displays updated with 1,000 characters each
    kept 100,000 under a 10,000 limit, and no cell was said to be cut."""
    client = _client(cells=3, limit=10_000)
    for number in range(100):
        _display(client, 0, "s", f"handle-{number}")
    for number in range(100):
        _display(client, 1, "x" * 1000, f"handle-{number}", update=True)
    assert _kept(client) == client.budget.used <= 10_000
    assert client.budget.cut == {1}
    _display(client, 2, "y" * 20_000, "handle-0", update=True)  # one update alone past the limit
    assert _kept(client) == client.budget.used <= 10_000


def test_one_display_updated_again_and_again_keeps_its_last_content_only():
    client = _client(cells=2, limit=10_000)
    _display(client, 0, "s", "bar")
    for step in range(2000):
        _display(client, 1, f"{step:>8}" * 100, "bar", update=True)
    assert [output.data["text/plain"] for output in client.nb.cells[0].outputs] == [f"{1999:>8}" * 100]
    assert (_kept(client), client.budget.used, client.budget.cut) == (800, 800, set())


def test_cleared_outputs_no_longer_count():
    """A progress loop (clear_output(wait=True), then a line) printed 100,000 characters and kept
    100: the limit of 10,000 cut its outputs and those of every cell after it."""
    client = _client(cells=3, limit=10_000)
    for step in range(1000):
        _send(client, 0, "clear_output", wait=True)
        _send(client, 0, "stream", name="stdout", text=f"{step:>99}\n")
    _send(client, 1, "stream", name="stdout", text="x" * 9000)
    _send(client, 1, "clear_output", wait=False)
    _send(client, 2, "stream", name="stdout", text="after\n")
    assert [[output.text for output in cell.outputs] for cell in client.nb.cells] == [
        [f"{999:>99}\n"],
        [],
        ["after\n"],
    ]
    assert (client.budget.used, client.budget.cut) == (106, set())


def test_displays_of_cleared_outputs_are_forgotten():
    """nbclient kept an entry per display id shown, and scanned them all on every clear: a loop
    showing a fresh id each step slowed down quadratically (its last outputs were lost)."""
    client = _client(cells=1, limit=10_000)
    for step in range(500):
        _send(client, 0, "clear_output", wait=True)
        _display(client, 0, "x", f"step-{step}")
    assert list(client._display_id_map) == ["step-499"]
    assert client.budget.used == 1


def test_comm_messages_keep_no_state_and_output_widgets_capture_nothing():
    """nbclient kept the state every comm sent (1.5 MB for 300 of 5,000 characters), never used by
    the grader, and mimicked the Output widget, which kept the outputs it captured out of the cell."""
    client = _client(cells=1, limit=10_000)
    for number in range(300):
        state = {"_model_module": "x", "_model_name": "y", "value": "v" * 5000}
        _send(
            client, 0, "comm_open", comm_id=f"c{number}", target_name="jupyter.widget", data={"state": state}
        )
    assert client.widget_state == {}
    output = {"_model_module": "@jupyter-widgets/output", "_model_name": "OutputModel", "outputs": []}
    _send(client, 0, "comm_open", comm_id="out", target_name="jupyter.widget", data={"state": output})
    _send(client, 0, "comm_msg", comm_id="out", data={"method": "update", "state": {"msg_id": "cell-0"}})
    _send(client, 0, "stream", name="stdout", text="captured\n")
    assert client.comm_objects == {}
    assert [output.text for output in client.nb.cells[0].outputs] == ["captured\n"]


# --- the report folder's lock ---------------------------------------------------------------------

BLOCKED_RUN = """
import sys, time
from pathlib import Path
from varfunc.grading import batch

def held(report_dir):  # the run is about to write its summary: it holds the folder, and waits
    Path(sys.argv[3]).touch()
    while not Path(sys.argv[4]).exists():
        time.sleep(0.05)
    return shown(report_dir)

shown, batch._remove_orphaned_views = batch._remove_orphaned_views, held
batch.grade_class([Path(sys.argv[2])], Path(sys.argv[1]), progress=False)
"""


def _unreadable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not json")
    return path


def _blocked_run(tmp_path: Path, student: str) -> subprocess.Popen:
    """A grading run into tmp_path/grades, held before it writes its summary until go exists."""
    path = _unreadable(tmp_path / "sub" / student / CH03)
    ready, go = tmp_path / "ready", tmp_path / "go"
    args = [sys.executable, "-c", BLOCKED_RUN, str(tmp_path / "grades"), str(path), str(ready), str(go)]
    run = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not ready.exists():
        if run.poll() is not None or time.monotonic() > deadline:
            run.kill()
            pytest.fail(f"the first run did not get to its summary: {run.communicate()[1]}")
        time.sleep(0.05)
    return run


def _grade(tmp_path: Path, student: str) -> int:
    path = _unreadable(tmp_path / "sub" / student / CH03)
    return main(["grade", str(path), "--report", str(tmp_path / "grades"), "--no-progress"])


def _students(tmp_path: Path) -> list[str]:
    reports = (tmp_path / "grades").rglob("*.json")
    return sorted(json.loads(path.read_text())["student"] for path in reports)


def test_a_second_run_into_a_folder_being_graded_is_refused(tmp_path, capsys):
    """Two runs into one folder deleted each other's reports while they were written, and the one
    that ended first wrote a summary.csv without the other's submissions."""
    first = _blocked_run(tmp_path, "alice")
    try:
        assert _grade(tmp_path, "bob") == 2
    finally:
        (tmp_path / "go").touch()
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    grades = (tmp_path / "grades").resolve()
    refusal = capsys.readouterr().err
    assert f"nothing was graded: another grading run (process {first.pid} on " in refusal
    assert f"is grading into {grades} now" in refusal
    assert "Wait for it to end and run this command again, or grade into another --report" in refusal
    assert refusal.rstrip().endswith(f"delete {grades / LOCK_FILE}")
    assert _students(tmp_path) == ["alice"]
    assert not (grades / LOCK_FILE).exists()
    assert _grade(tmp_path, "bob") == 0  # once the first is done


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
def test_a_run_stopped_or_killed_leaves_no_lock_that_blocks(tmp_path, stop):
    """SIGTERM (and Ctrl-C, raised the same way) removes the lock; SIGKILL leaves it, stale: its
    process is gone, so the next run takes it over."""
    first = _blocked_run(tmp_path, "alice")
    first.send_signal(stop)
    first.communicate(timeout=120)
    assert (tmp_path / "grades" / LOCK_FILE).exists() == (stop == signal.SIGKILL)
    assert _grade(tmp_path, "bob") == 0
    assert not (tmp_path / "grades" / LOCK_FILE).exists()
    assert "bob" in _students(tmp_path)


def _holder(folder: Path, **record: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LOCK_FILE).write_text(json.dumps(record))
    return folder / LOCK_FILE


def test_a_lock_that_cannot_be_checked_holds(tmp_path):
    """Held by this very process, by a process on another machine, or being written now (no record
    yet): refused. Left by a process that is gone: taken over."""
    with grading_into(tmp_path / "mine"), pytest.raises(FolderBusy, match="process"):
        with grading_into(tmp_path / "mine"):
            pass
    _holder(tmp_path / "shared", pid=1, host="another-machine")
    with pytest.raises(FolderBusy, match="on another-machine"), grading_into(tmp_path / "shared"):
        pass
    (tmp_path / "young").mkdir()
    (tmp_path / "young" / LOCK_FILE).write_text("")
    with pytest.raises(FolderBusy, match="another grading run is grading"), grading_into(tmp_path / "young"):
        pass
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    lock = _holder(tmp_path / "stale", pid=int(gone.stdout), host=socket.gethostname())
    with grading_into(tmp_path / "stale"):
        assert json.loads(lock.read_text())["pid"] != int(gone.stdout)
    assert not lock.exists()


@pytest.mark.skipif(
    start_ticks(os.getpid()) is None, reason="process start times are read from Linux's /proc"
)
def test_a_lock_whose_process_number_now_belongs_to_a_later_process_is_stale(tmp_path):
    """A killed run's PID may be given to another process (a container restarted counts from 1
    again): the lock records when its process started, so the next run can tell the two apart."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ticks = start_ticks(other.pid)
        record = {"pid": other.pid, "host": socket.gethostname()}
        for name, extra in (("alive", {"ticks": ticks}), ("unknown", {}), ("unknown-too", {"ticks": "x"})):
            _holder(tmp_path / name, **record, **extra)
            with pytest.raises(FolderBusy, match=f"process {other.pid} "), grading_into(tmp_path / name):
                pass
        lock = _holder(tmp_path / "reused", **record, ticks=ticks - 1)  # its PID's first owner, gone
        with grading_into(tmp_path / "reused"):
            assert json.loads(lock.read_text())["ticks"] == start_ticks(os.getpid())
        assert not lock.exists()
    finally:
        other.kill()
        other.wait()


# --- the nbclient the output limit builds on -------------------------------------------------------


def test_an_nbclient_whose_methods_changed_is_refused_before_grading(tmp_path, capsys, monkeypatch):
    """GraderClient overrides nbclient methods that are not nbclient's public API: a release that
    renamed one, or changed its arguments, would leave the output limit unenforced without a word."""
    from nbclient import NotebookClient

    from varfunc.grading import kernels

    kernels.check_nbclient()  # the installed one fits

    class Renamed(NotebookClient):
        clear_display_id_mapping = None  # gone

    class NewArguments(NotebookClient):
        def output(self, outs, msg, display_id, cell_index, extra):  # one argument more
            pass

    for client, name in ((Renamed, "clear_display_id_mapping"), (NewArguments, "output")):
        with pytest.raises(ValueError, match=rf"grade: this nbclient \(.*\) changed {name}, .*nbclient>="):
            kernels.check_nbclient(client)
    monkeypatch.setattr(kernels, "NotebookClient", NewArguments)
    monkeypatch.setattr(kernels.check_nbclient, "__defaults__", (NewArguments,))
    assert _grade(tmp_path, "carol") == 2
    assert "changed output, which the grader's output limit builds on" in capsys.readouterr().err
    assert not (tmp_path / "grades").exists()  # refused before anything was graded or written
    with pytest.raises(ValueError, match="changed output"):  # grade_class called from Python too
        grade_class([tmp_path / "sub" / "carol" / CH03], tmp_path / "grades", progress=False)
    assert not (tmp_path / "grades").exists()
