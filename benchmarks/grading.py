"""Seconds to grade a class: 30 submissions of chapter 03 with ``--jobs 2``.

Run as ``python -m benchmarks.grading`` (rewrites the "grading" section of RESULTS.md; ``--quick``
grades 4 submissions and only prints). The class is made from the instructor notebook: a third
full solutions, a third the released copy (nothing solved), a third a wrong gradient in ``Mul``.
Each submission runs in its own fresh kernel, as ``python -m varfunc.grading grade`` runs it.
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

import nbformat

from varfunc.grading.batch import grade_class
from varfunc.grading.notebook import nbgrader_meta
from varfunc.grading.options import GradeOptions
from varfunc.grading.release import release_notebook

from .results import publish

SOURCE = Path(__file__).resolve().parents[1] / "notebooks" / "03_functions_and_the_forward_graph.ipynb"
WRONG_MUL = (
    "class Mul(Function):\n    def forward(self, a, b):\n        self.save_for_backward(a, b)\n"
    "        return a * b\n\n    def backward(self, g):\n        a, b = self.saved_tensors\n"
    "        return sum_to_shape(g * a, a.shape), sum_to_shape(g * b, b.shape)\n"
)


def make_class(root: Path, size: int) -> list[Path]:
    """size submissions in root/student_NN/, cycling through solved, released and wrong."""
    instructor = nbformat.read(SOURCE, as_version=4)
    released, _ = release_notebook(instructor)
    wrong = copy.deepcopy(instructor)
    for cell in wrong.cells:
        if nbgrader_meta(cell).get("grade_id") == "ch03_mul":
            cell.source = WRONG_MUL
    kinds = [instructor, released, wrong]
    paths = []
    for n in range(size):
        path = root / f"student_{n:02d}" / SOURCE.name
        path.parent.mkdir(parents=True)
        nbformat.write(kinds[n % 3], path)
        paths.append(path)
    return paths


def main(argv: list | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--quick", action="store_true", help="smoke run: 4 submissions, print only")
    args = parser.parse_args(argv)
    if args.quick:
        args.submissions, args.no_write = 4, True
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_class(Path(tmp) / "class", args.submissions)
        start = time.perf_counter()
        reports = grade_class(paths, Path(tmp) / "reports", GradeOptions(), jobs=args.jobs, progress=False)
        seconds = time.perf_counter() - start
    scores = sorted({r["score"] for r in reports})
    per = [r["seconds"] for r in reports]
    body = "\n".join(
        [
            f"`python -m varfunc.grading grade` on {len(paths)} submissions of chapter 03 "
            f"(`{SOURCE.name}`, {len(nbformat.read(SOURCE, as_version=4).cells)} cells, 2 exercises) with "
            f"`--jobs {args.jobs}`: a third solved, a third the released copy, a third with a wrong "
            "gradient. Each submission runs in a fresh kernel; the time includes starting the kernels.",
            "",
            "| submissions | jobs | total seconds | wall seconds per submission | each submission alone |",
            "|---:|---:|---:|---:|---:|",
            f"| {len(paths)} | {args.jobs} | {seconds:.1f} | {seconds / len(paths):.2f} | "
            f"{min(per):.1f} to {max(per):.1f} s |",
            "",
            f"Scores seen: {scores} (of {reports[0]['max_score']}).",
        ]
    )
    return publish("grading", "python -m benchmarks.grading", body, write=not args.no_write)


if __name__ == "__main__":
    main()
