"""The grader's Jupyter client (``execute.py`` runs the notebooks with it): nbclient's, with two changes.

- A SIGTERM that arrives while the kernel is being launched waits until the launch is done
  (``stopping.launching``): before then the kernel's process runs, but its process group, which
  ``stopping.kill_kernels`` ends, is not known yet.
- A submission keeps its cells' outputs up to a limit (``OutputBudget``, ``--max-output``); past it
  they are dropped, all but the verdicts the grader's runner cells show, so a cell that prints
  gigabytes fills neither the grading process's memory nor the report, and the points stay right.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from .hidden import RUNNER_MARK, VERDICT_MIME
from .notebook import source_of
from .stopping import launching


class GraderKernelManager(AsyncKernelManager):
    """Jupyter's kernel manager, whose launch a grading process told to stop waits for."""

    async def start_kernel(self, **kw: Any) -> None:
        """Launch the kernel; a SIGTERM meanwhile stops the grading process once its group is known."""
        with launching():
            await super().start_kernel(**kw)


@dataclass
class OutputBudget:
    """A submission's outputs: how many characters it may keep in all (0: no limit), how many it
    got, and the positions of the cells whose outputs were cut."""

    limit: int
    used: int = 0
    cut: set[int] = field(default_factory=set)


class GraderClient(NotebookClient):
    """nbclient's NotebookClient that drops outputs past the submission's budget (verdicts aside)."""

    def __init__(self, nb: Any, budget: OutputBudget, **kw: Any) -> None:
        super().__init__(nb, **kw)
        self.budget = budget

    def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
        """Keep an output (nbclient's way) while the budget lasts, and a runner's verdict always."""
        self.budget.used += text_size(msg.get("content"))
        within = not self.budget.limit or self.budget.used <= self.budget.limit
        if within or self._is_verdict(msg, cell_index):
            return super().output(outs, msg, display_id, cell_index)
        self.budget.cut.add(cell_index)
        return None

    def _is_verdict(self, msg: dict, cell_index: int) -> bool:
        """True for what a grader's runner cell displays with the verdict's MIME type."""
        data = (msg.get("content") or {}).get("data")
        runner = source_of(self.nb.cells[cell_index]).startswith(RUNNER_MARK)
        return runner and isinstance(data, dict) and VERDICT_MIME in data


def text_size(value: Any) -> int:
    """The characters of text in a message's content: its strings, however nested."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(text_size(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(text_size(item) for item in value)
    return 0
