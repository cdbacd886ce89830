"""The grader's Jupyter client (``execute.py`` runs the notebooks with it): nbclient's, with these changes.

- A SIGTERM that arrives while the kernel is being launched waits until the launch is done
  (``stopping.launching``): before then the kernel's process runs, but its process group, which
  ``stopping.kill_kernels`` ends, is not known yet.
- A submission keeps its cells' outputs up to a limit (``OutputBudget``, ``--max-output``); past it
  they are dropped, all but the verdicts the grader's runner cells show, so a cell that prints
  gigabytes fills neither the grading process's memory nor the report, and the points stay right.
  Every way nbclient changes a cell's outputs is counted: new outputs, ``clear_output`` (at once or
  with ``wait=True``) and in-place display updates (``display(..., display_id=...)``, a handle's
  ``update()``).
- It is no widget front end: comm messages are ignored. nbclient kept every comm's state (unbounded,
  and unused: the grader saves no notebook) and mimicked the Output widget, whose outputs bypassed
  the budget and which sent each one back to the kernel; they now reach the cell like any print.
- It forgets the displays of a cleared cell (nbclient kept an entry per display id, and scanned them
  all on each clear: a loop showing fresh ids slowed down quadratically and outputs were lost).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import nbclient
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from .hidden import RUNNER_MARK, VERDICT_MIME
from .notebook import source_of
from .stopping import launching

# The methods of NotebookClient that GraderClient overrides and calls, with their arguments after
# self. nbclient is not pinned: a release that renamed one would leave the output limit unenforced
# without a word, so grade checks them first (check_nbclient).
NBCLIENT_METHODS = {
    "process_message": ("msg", "cell", "cell_index"),
    "output": ("outs", "msg", "display_id", "cell_index"),
    "clear_output": ("outs", "msg", "cell_index"),
    "clear_display_id_mapping": ("cell_index",),
    "_update_display_id": ("display_id", "msg"),
    "handle_comm_msg": ("outs", "msg", "cell_index"),
}
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")  # the messages nbclient keeps
PAYLOAD = ("text", "data", "metadata", "ename", "evalue", "traceback")  # what an output's size counts


class GraderKernelManager(AsyncKernelManager):
    """Jupyter's kernel manager, whose launch a grading process told to stop waits for."""

    async def start_kernel(self, **kw: Any) -> None:
        """Launch the kernel; a SIGTERM meanwhile stops the grading process once its group is known."""
        with launching():
            await super().start_kernel(**kw)


def check_nbclient(client: type = NotebookClient) -> None:
    """Refuse an nbclient whose methods the grader builds on are gone or take other arguments."""
    changed = [
        name
        for name, arguments in NBCLIENT_METHODS.items()
        if not callable(getattr(client, name, None))
        or tuple(inspect.signature(getattr(client, name)).parameters)[1:] != arguments
    ]
    if changed:
        raise ValueError(  # (grade's command line shows a ValueError as one line, exit status 2)
            f"grade: this nbclient ({nbclient.__version__}) changed {', '.join(changed)}, which the "
            "grader's output limit builds on (varfunc/grading/kernels.py); install the nbclient the kit "
            "is tested with: pip install 'nbclient>=0.11,<0.12'"
        )


@dataclass
class OutputBudget:
    """A submission's outputs: how many characters it may keep in all (0: no limit), how many it
    keeps now, and the positions of the cells whose outputs were cut.

    ``used`` counts what the notebook keeps, not what it sent: outputs that ``clear_output`` removed
    are taken off, and a display updated in place counts its new content instead of the old. The
    limit is there for the grading process's memory and the notebook's size, which cleared or
    replaced outputs no longer take; counting them too cut the outputs of a notebook whose progress
    loop (``clear_output(wait=True)``, then a line or a figure) keeps one at a time, and those of
    every cell after it. Each message is held only while it is handled, and the time limits bound
    how many there are. A cell replayed after a restart counts again: its first run's outputs stay
    (in its ``CellRun``). Once something was cut, everything after it is too (verdicts aside), as the
    report says: the notebook keeps what it showed up to the limit.
    """

    limit: int
    used: int = 0
    cut: set[int] = field(default_factory=set)

    def fits(self, size: int) -> bool:
        """Whether size more characters may be kept: nothing was cut yet and the limit holds them."""
        return not self.limit or (not self.cut and self.used + size <= self.limit)


class GraderClient(NotebookClient):
    """nbclient's NotebookClient that keeps outputs within the submission's budget (verdicts aside)."""

    def __init__(self, nb: Any, budget: OutputBudget, **kw: Any) -> None:
        super().__init__(nb, **kw)
        self.budget = budget
        self.current = 0  # the position of the cell whose messages are handled now

    def process_message(self, msg: dict, cell: Any, cell_index: int) -> Any:
        """nbclient's, noting the cell it is for: a display update is counted against that cell."""
        self.current = cell_index
        return super().process_message(msg, cell, cell_index)

    def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
        """Keep an output (nbclient's way) while the budget lasts, and a runner's verdict always."""
        if msg["msg_type"] not in OUTPUT_TYPES:
            return super().output(outs, msg, display_id, cell_index)  # nbclient logs and drops it
        if self.clear_before_next_output:  # clear_output(wait=True) waited for this output
            self._clear(outs, cell_index)
        size = output_size(msg["content"])
        if not self.budget.fits(size) and not self._is_verdict(msg, cell_index):
            self.budget.cut.add(cell_index)
            return None
        self.budget.used += size
        return super().output(outs, msg, display_id, cell_index)

    def clear_output(self, outs: list, msg: dict, cell_index: int) -> None:
        """nbclient's clear_output; what it clears is no longer kept, nor counted."""
        if msg["content"].get("wait"):
            self.clear_before_next_output = True
        else:
            self._clear(outs, cell_index)

    def _clear(self, outs: list, cell_index: int) -> None:
        """Remove a cell's outputs and its displays (as nbclient does), taking them off the budget."""
        self.budget.used -= sum(output_size(out) for out in outs)
        outs[:] = []
        self.clear_display_id_mapping(cell_index)
        self.clear_before_next_output = False

    def clear_display_id_mapping(self, cell_index: int) -> None:
        """Forget the displays in a cell; a display id left in no cell is dropped (nbclient kept it)."""
        for display_id, cells in list(self._display_id_map.items()):
            cells.pop(cell_index, None)
            if not cells:
                del self._display_id_map[display_id]

    def _update_display_id(self, display_id: str, msg: dict) -> None:
        """Update a display's outputs in place (nbclient's way) if their new size fits the budget."""
        shown = [
            self.nb.cells[cell].outputs[index]
            for cell, indices in self._display_id_map.get(display_id, {}).items()
            for index in indices
        ]
        if not shown:
            return  # no output shows it (any more): nothing to update
        before = sum(output_size(out) for out in shown)
        new = output_size(msg["content"])  # its data and metadata, as each output showing it will hold
        if not self.budget.fits(new * len(shown) - before):
            self.budget.cut.add(self.current)
            return
        super()._update_display_id(display_id, msg)
        self.budget.used += sum(output_size(out) for out in shown) - before

    def handle_comm_msg(self, outs: list, msg: dict, cell_index: int) -> None:
        """Ignore comm messages (widgets): the grader keeps no widget state and shows no widget."""

    def _is_verdict(self, msg: dict, cell_index: int) -> bool:
        """True for what a grader's runner cell displays with the verdict's MIME type."""
        data = (msg.get("content") or {}).get("data")
        runner = source_of(self.nb.cells[cell_index]).startswith(RUNNER_MARK)
        return runner and isinstance(data, dict) and VERDICT_MIME in data


def output_size(output: dict) -> int:
    """The characters of an output that the budget counts, the same in the message's content and in
    the output nbclient makes of it: its text, data, metadata and error."""
    return sum(text_size(output.get(key)) for key in PAYLOAD)


def text_size(value: Any) -> int:
    """The characters of text in a message's content: its strings, however nested."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(text_size(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(text_size(item) for item in value)
    return 0
