"""The reports of a graded submission: JSON (for tools), Markdown and HTML (for people), and the
class summary CSV (one row per submission with a report in the folder, the points of every exercise)."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

from .names import shortened
from .notebook import cell_name

STATUS_TEXT = {
    "passed": "passed",
    "failed": "a check failed",
    "not_solved": "not solved",
    "error": "error",
    "timeout": "time limit",
    "crashed": "kernel died",
    "missing": "cell missing",
    "not_run": "not run",
    "not_checked": "library code replaced",
    "not_graded": "not graded",
}
DETAILS = ("case", "expected", "got", "hint")


def title(report: dict) -> str:
    """One line: who, which chapter, the score."""
    who = report.get("student") or Path(report["submission"]).stem
    chapter = report.get("chapter") or "unknown chapter"
    return f"{who}, {chapter}: {report['score']} / {report['max_score']} points"


LATE = "yes (Canvas's download names the file as submitted after the due date)"


def identity(report: dict) -> list[tuple[str, str]]:
    """What the .md and .html reports say the submission is, besides the title: (label, text) pairs."""
    fields = [("Submission", report["submission"]), ("Status", report["status"])]
    return fields + ([("Late", LATE)] if report.get("late") else [])


def markdown(report: dict) -> str:
    """The report as Markdown: the score, problems with the notebook, a table, then what failed and why."""
    shown = [
        f"{label}: `{text}`" if label == "Submission" else f"{label}: {text}"
        for label, text in identity(report)
    ]
    lines = [f"# {title(report)}", "", "  \n".join(shown)]  # two spaces: a line break in Markdown
    if report["problems"]:
        lines += ["", "## Problems with the notebook", ""] + [f"- {p}" for p in report["problems"]]
    lines += ["", "## Exercises", "", "| exercise | points | result | why |", "|---|---:|---|---|"]
    for ex in report["exercises"]:
        why = ex["reason"].replace("|", "\\|").replace("\n", "<br>")  # a table row is one line
        result = STATUS_TEXT.get(ex["status"], ex["status"])
        lines.append(
            f"| `{ex['id']}` {ex['title']} | {ex['points']} / {ex['max_points']} | {result} | {why} |"
        )
    failed = [ex for ex in report["exercises"] if any(k in ex for k in DETAILS)]
    if failed:
        lines += ["", "## What failed", ""]
        for ex in failed:
            lines.append(f"### `{ex['id']}`")
            lines += [f"- {key}: {_code(ex[key])}" for key in DETAILS if key in ex]
            lines.append("")
    if report.get("cell_errors"):
        lines += ["", "## Cells that raised an error", ""]
        for err in report["cell_errors"]:
            tag = f", grade_id `{err['grade_id']}`" if err.get("grade_id") else ""
            lines.append(f"- {_where(err)}{tag}: {err['status']}: {_code(err['error'])}")
    return "\n".join(lines).rstrip() + "\n"


def _code(value: object) -> str:
    """value as Markdown code inside a list item: inline on one line, else an indented fenced block
    (fenced with more backticks than it holds in a row, so no line of it can end the block)."""
    text = str(value)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    if "\n" not in text and "`" not in text:
        return f"`{text}`"
    body = "\n".join(f"  {line}" for line in text.splitlines())
    return f"\n\n  {fence}\n{body}\n  {fence}\n"


def to_html(report: dict) -> str:
    """The report as a standalone HTML page."""
    esc = html.escape
    rows = []
    for ex in report["exercises"]:
        details = "".join(
            f"<div><b>{key}</b>: <code>{esc(str(ex[key]))}</code></div>" for key in DETAILS if key in ex
        )
        rows.append(
            f'<tr class="{esc(ex["status"])}"><td><code>{esc(ex["id"])}</code><br>{esc(ex["title"])}</td>'
            f"<td>{ex['points']} / {ex['max_points']}</td>"
            f"<td>{esc(STATUS_TEXT.get(ex['status'], ex['status']))}</td>"
            f"<td>{esc(ex['reason'])}{details}</td></tr>"
        )
    problems = "".join(f"<li>{esc(p)}</li>" for p in report["problems"])
    errors = "".join(
        f"<li>{esc(_where(e))}{_html_grade_id(e)}: {esc(e['status'])}: <code>{esc(e['error'])}</code></li>"
        for e in report.get("cell_errors", [])
    )
    shown = [
        f"{esc(label)}: <code>{esc(text)}</code>" if label == "Submission" else f"{esc(label)}: {esc(text)}"
        for label, text in identity(report)
    ]
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{esc(title(report))}</title><style>"
        "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.4em;vertical-align:top}tr.passed td{background:#e8f6e8}"
        "tr:not(.passed) td{background:#fbeaea}code{white-space:pre-wrap}</style></head><body>\n"
        f"<h1>{esc(title(report))}</h1>\n<p>{'<br>'.join(shown)}</p>\n"
        + (f"<h2>Problems with the notebook</h2><ul>{problems}</ul>\n" if problems else "")
        + "<h2>Exercises</h2>\n<table><tr><th>exercise</th><th>points</th><th>result</th><th>why</th></tr>\n"
        + "\n".join(rows)
        + "\n</table>\n"
        + (f"<h2>Cells that raised an error</h2><ul>{errors}</ul>\n" if errors else "")
        + "</body></html>\n"
    )


def _html_grade_id(cell_error: dict) -> str:
    """', grade_id <code>ch03_mul</code>' for a cell error of an exercise's cell, as the .md says it."""
    grade_id = cell_error.get("grade_id")
    return f", grade_id <code>{html.escape(grade_id)}</code>" if grade_id else ""


def _where(cell_error: dict) -> str:
    """The cell that raised, as a student finds it (the JSON keeps its 0-based position)."""
    position = cell_error["cell"]
    return cell_name(position) if position is not None else "a cell the grader added"


def report_file(base: Path, suffix: str) -> Path:
    """A report's file: suffix appended to base (grades/alice/hw3.final + .json), nothing cut off."""
    return base.with_name(base.name + suffix)


def write_reports(report: dict, base: Path) -> None:
    """Write base.json, base.md and base.html (the JSON last: its presence marks the report complete)."""
    base.parent.mkdir(parents=True, exist_ok=True)
    report_file(base, ".md").write_text(markdown(report), encoding="utf-8")
    report_file(base, ".html").write_text(to_html(report), encoding="utf-8")
    partial = report_file(base, ".json.partial")
    partial.write_text(json.dumps(report, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    partial.replace(report_file(base, ".json"))


def remove_orphaned_views(report_dir: Path) -> list[Path]:
    """Remove the .md and .html reports whose .json is gone, and return their paths without suffix.

    The .json is the report (the summary lists the .json files): one deleted to drop a submission or
    to grade it again, or never written (a grading stopped half-way), leaves .md and .html files
    that must not be sent to the student as a grade. Other .md and .html files stay.
    """
    removed = set()
    for view in sorted([*Path(report_dir).rglob("*.md"), *Path(report_dir).rglob("*.html")]):
        base = view.with_suffix("")
        if not report_file(base, ".json").exists() and _is_view(view):
            view.unlink(missing_ok=True)
            removed.add(base)
    return sorted(removed)


def _is_view(path: Path) -> bool:
    """True for a .md or .html file that markdown() or to_html() wrote (told by its first lines)."""
    try:
        with open(path, encoding="utf-8") as f:
            start = f.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    if path.suffix == ".md":
        return start.startswith("# ") and "\n\nSubmission: `" in start
    return start.startswith("<!DOCTYPE html>") and "<p>Submission: <code>" in start


PLAIN = ("passed", "failed", "not_solved")  # the statuses an exercise's points say all about
REPORT_KEYS = {"submission", "status", "score", "max_score", "exercises", "problems"}


def saved_reports(report_dir: Path) -> list[dict]:
    """Every submission's JSON report in report_dir and its subfolders (other JSON files left out)."""
    reports = []
    for path in sorted(Path(report_dir).rglob("*.json")):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(report, dict) and REPORT_KEYS <= set(report):
            reports.append(report)
    return reports


def write_summary(reports: list[dict], path: Path) -> None:
    """The class summary: one row per submission, a column per exercise (its points, the columns in
    the order of exercise_columns, whichever students are listed).

    UTF-8 with a byte order mark, so that spreadsheet programs read accented names right. Written
    whole or not at all: into summary.csv.partial, which then replaces summary.csv, so a run stopped
    while writing it (Ctrl-C, SIGTERM, a full disk) leaves the last complete summary.
    """
    exercise_ids = exercise_columns(reports)
    header = ["student", "submission", "chapter", "status", "late", "score", "max_score", *exercise_ids]
    rows = [header + ["look at", "notes"]]
    by_student = _submissions_per_student(reports)
    rows += [_summary_row(r, exercise_ids, by_student) for r in _in_class_order(reports)]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        with open(partial, "w", newline="", encoding="utf-8-sig") as f:
            csv.writer(f).writerows(rows)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def _in_class_order(reports: list[dict]) -> list[dict]:
    """The reports by student (in natural order), chapter and submission."""
    return sorted(
        reports,
        key=lambda r: (_natural(r.get("student", "")), r.get("chapter") or "", _natural(r["submission"])),
    )


def _summary_row(r: dict, exercise_ids: list[str], by_student: dict) -> list:
    """One submission's row of the summary (text that a spreadsheet would run as a formula made text)."""
    points = {ex["id"]: ex["points"] for ex in r["exercises"]}
    late = "yes" if r.get("late") else ""
    row = [r.get("student", ""), r["submission"], r.get("chapter") or "", r["status"], late, r["score"]]
    look_at = _look_at(r)
    same = by_student.get((r.get("student"), r.get("chapter")), [])
    if len(same) > 1:
        others = shortened([s for s in same if s != r["submission"]])
        what = r.get("chapter") or "this file"
        look_at.append(f"one of {len(same)} submissions of {what} by this student (also {others})")
    return [
        *[_as_text(value) for value in row],
        r["max_score"],
        *[points.get(i, "") for i in exercise_ids],
        _as_text("; ".join(look_at)),
        _as_text("; ".join(r["problems"])),
    ]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what spreadsheet programs read as a formula


def _as_text(value: object) -> object:
    """A text cell that a spreadsheet would run as a formula (a file named ``=HYPERLINK(...).ipynb``)
    gets a leading apostrophe, which spreadsheets read as "this is text"; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _natural(text: str) -> tuple:
    """A sort key that puts student2 before student10, whatever the case."""
    parts = re.split(r"(\d+)", text)  # text, number, text, ...: odd places hold the numbers
    return tuple(int(part) if n % 2 else part.casefold() for n, part in enumerate(parts)), text


def _submissions_per_student(reports: list[dict]) -> dict:
    """{(student, chapter): the submissions' paths, in order} for the students their paths name."""
    submissions: dict = {}
    for r in reports:
        if r.get("student"):
            submissions.setdefault((r["student"], r.get("chapter")), []).append(r["submission"])
    return {key: sorted(paths, key=_natural) for key, paths in submissions.items()}


def exercise_columns(reports: list[dict]) -> list[str]:
    """The exercises of the reports by chapter, each chapter's in the order its check module lists them."""
    from .grade import chapter_exercises  # the chapters' check modules: imported when needed

    ids = {ex["id"] for report in reports for ex in report["exercises"]}
    chapters = {i.split(".")[0] for i in ids if re.fullmatch(r"ch\d\d\.\w+", i)}  # ch03.mul
    order = {ex.id: n for chapter in chapters for n, ex in enumerate(chapter_exercises(chapter))}
    return sorted(ids, key=lambda i: (i.split(".")[0], order.get(i, len(order)), i))


CELL_TROUBLE = {"timeout": "timed out", "died": "killed the kernel", "error": "raised an error"}


def _look_at(report: dict) -> list[str]:
    """What the points do not tell: a 0 that is not a wrong or unsolved answer (a timeout, a crash,
    replaced library code, ...), and a pass whose exercise cell timed out, crashed or raised after."""
    trouble = {e["grade_id"]: e["status"] for e in report.get("cell_errors", []) if e.get("grade_id")}
    notes = ["the kit's files changed while it was graded (notes)"] if report.get("kit_changed") else []
    for ex in report["exercises"]:
        cell = trouble.get(ex["id"].replace(".", "_"))
        if ex["status"] not in PLAIN:
            notes.append(f"{ex['id']}: {ex['status']}")
        elif ex["status"] == "passed" and cell in CELL_TROUBLE:
            notes.append(f"{ex['id']}: passed, but its cell {CELL_TROUBLE[cell]}")
    return notes


def summary_rows(path: Path) -> int:
    """How many submissions a summary CSV lists."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        return max(sum(1 for _ in csv.reader(f)) - 1, 0)
