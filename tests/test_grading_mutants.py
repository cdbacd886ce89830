"""Unit tests, without a kernel, of the grading logic that decides points and what the instructor reads:
written against the mutants of a mutation audit that the other tests let through (a flipped comparison,
a dropped branch, a changed constant), each pinning one behaviour those mutants broke."""

from __future__ import annotations

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")

from varfunc.grading import reasons  # noqa: E402
from varfunc.grading.core import NOT_SOLVED, Exercise, Verdict  # noqa: E402
from varfunc.grading.execute import EXIT_CALL, CellRun  # noqa: E402
from varfunc.grading.expect import CheckFailed, expect_close  # noqa: E402
from varfunc.grading.hidden import VERDICT_MIME  # noqa: E402
from varfunc.grading.options import GradeOptions  # noqa: E402
from varfunc.grading.plan import Plan  # noqa: E402

EX = Exercise("ch03.mul", "Mul", 3, ("Mul",), lambda ns: None)
NONCE = "n" * 32


def _verdict_run(**payload) -> CellRun:
    verdict = {"exercise": EX.id, "nonce": NONCE, "passed": False, "case": "", **payload}
    return CellRun("ok", outputs=[{"output_type": "display_data", "data": {VERDICT_MIME: verdict}}])


def _plan(cells: int = 2) -> Plan:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1") for _ in range(cells)])
    return Plan(nb, list(range(cells)), {EX.id: cells - 2}, {EX.id: cells - 1}, nonce={EX.id: NONCE})


def _checked(solution: CellRun, run: CellRun) -> dict:
    return reasons.checked(EX, _plan(), [solution, run], GradeOptions())


# --- reasons: an exercise's status and points -----------------------------------------------------


def test_a_passing_verdict_gets_the_exercises_points():
    """Only a verdict that passed scores, and it scores all the points."""
    result = _checked(CellRun("ok"), _verdict_run(passed=True))
    assert (result["status"], result["points"], result["max_points"]) == ("passed", 3, 3)


def test_a_failing_verdict_scores_0_and_keeps_what_failed():
    """A failed check is 'failed', 0 points, with its case, expected and got in the entry."""
    result = _checked(CellRun("ok"), _verdict_run(case="Mul: a", expected="[1]", got="[2]"))
    assert (result["status"], result["points"]) == ("failed", 0)
    assert (result["case"], result["expected"], result["got"]) == ("Mul: a", "[1]", "[2]")


def test_replaced_library_code_is_never_a_pass():
    """A verdict marked not_checked scores 0 even when it says passed."""
    result = _checked(CellRun("ok"), _verdict_run(passed=True, not_checked=True, case="not checked"))
    assert (result["status"], result["points"]) == ("not_checked", 0)


@pytest.mark.parametrize(
    ("run", "status"),
    [
        (CellRun("timeout"), "timeout"),
        (CellRun("died", ename=EXIT_CALL), "crashed"),
        (CellRun("died"), "crashed"),
        (CellRun("not_run"), "not_run"),
    ],
)
def test_a_check_cell_that_did_not_finish_scores_0_with_its_status(run, status):
    """The runner cell's own end decides the status when it did not run to its end."""
    result = _checked(CellRun("ok"), run)
    assert (result["status"], result["points"]) == (status, 0)


def test_not_run_says_whether_time_ran_out_or_the_kernel_kept_dying():
    """A check not run after a dead exercise cell blames the kernel, else the notebook's time limit."""
    assert "kept dying" in _checked(CellRun("died"), CellRun("not_run"))["reason"]
    assert "time limit" in _checked(CellRun("error"), CellRun("not_run"))["reason"]


@pytest.mark.parametrize(
    ("solution", "status"),
    [
        (CellRun("ok"), "not_solved"),
        (CellRun("error", "NotImplementedError", ""), "not_solved"),
        (CellRun("error", "ValueError", "bad"), "error"),
        (CellRun("timeout"), "timeout"),
        (CellRun("died"), "crashed"),
    ],
)
def test_not_solved_only_when_the_cell_ran_or_stopped_at_its_stub(solution, status):
    """'not solved yet' is not_solved for a cell that ran or raised the stub; else what the cell did."""
    assert _checked(solution, _verdict_run(case=NOT_SOLVED))["status"] == status


def test_a_failed_exercise_cell_is_named_with_its_error():
    """A wrong answer from an exercise cell that raised is an error naming the cell's exception."""
    result = _checked(CellRun("error", "ValueError", "bad"), _verdict_run(case="Mul: a"))
    assert result["status"] == "error" and "ValueError: bad" in result["reason"]
    exited = _checked(CellRun("died", EXIT_CALL), _verdict_run(case="Mul: a"))
    assert (exited["status"], exited["reason"]) == ("crashed", reasons.EXITED)


def test_the_run_the_cell_hint_is_dropped_when_the_exercise_cell_failed():
    """'Mul not defined' after a cell that raised: the 'run the cell' hint would mislead."""
    hint = "run the exercise cell above"
    failed = _checked(CellRun("error", "ValueError", "x"), _verdict_run(case="Mul not defined", hint=hint))
    assert "hint" not in failed
    ran = _checked(CellRun("ok"), _verdict_run(case="Mul not defined", hint=hint))
    assert ran["hint"] == hint


def test_cell_errors_lists_failed_cells_but_not_the_runners():
    """The report's cell errors: the submission's cells that failed, never the grader's runner cell."""
    plan = _plan(3)
    plan.runner[EX.id] = 2
    runs = [CellRun("error", "ZeroDivisionError", "division by zero"), CellRun("ok"), CellRun("timeout")]
    errors = reasons.cell_errors(plan, runs)
    assert [(e["cell"], e["status"], e["error"]) for e in errors] == [
        (0, "error", "ZeroDivisionError: division by zero")
    ]


def test_an_earlier_failed_cell_that_defines_the_missing_name_is_named():
    """A NameError answer names the first earlier failed cell that defines the name, and what it did."""
    plan = _plan(3)
    plan.nb.cells[0].source = "SCALE = 1 / 0"
    plan.solution[EX.id], plan.runner[EX.id] = 1, 2
    runs = [CellRun("error", "ZeroDivisionError", "division by zero"), CellRun("ok"), None]
    runs[2] = _verdict_run(case="Mul: a", got="NameError: name 'SCALE' is not defined")
    result = reasons.exercise_result(EX, plan, runs, GradeOptions())
    assert "an earlier cell failed first: cell 1" in result["reason"]
    runs[0] = CellRun("timeout")
    assert (
        "which starts `SCALE = 1 / 0`, ran past its time limit"
        in (reasons.exercise_result(EX, plan, runs, GradeOptions())["reason"])
    )
    runs[0] = CellRun("ok")
    assert "earlier" not in reasons.exercise_result(EX, plan, runs, GradeOptions())["reason"]


# --- the checks' comparisons and verdicts ---------------------------------------------------------


def test_expect_close_uses_a_relative_tolerance_of_1e_6():
    """A relative error of 1e-7 passes, one of 1e-5 fails (a float32 rounding must fail)."""
    expect_close("c", np.array([1.0 + 1e-7]), np.array([1.0]))
    with pytest.raises(CheckFailed):
        expect_close("c", np.array([1.0 + 1e-5]), np.array([1.0]))


# --- the grading plan, hidden checks, predictions, reports not graded, release -------------------


def _chapter_nb(*cells):
    nb = nbformat.v4.new_notebook()
    for source, grade_id in cells:
        cell = nbformat.v4.new_code_cell(source)
        if grade_id:
            cell.metadata["nbgrader"] = {"grade_id": grade_id}
        nb.cells.append(cell)
    return nb


def test_the_plan_replaces_check_cells_and_reports_missing_and_unknown_cells():
    """Each check cell runs the grader's runner; a missing exercise silences its check; unknown ids noted."""
    from varfunc.grading.grade import chapter_exercises
    from varfunc.grading.notebook import cell_index
    from varfunc.grading.plan import plan_grading

    nb = _chapter_nb(
        ("x = 1", None),
        ("class Mul: pass", "ch03_mul"),
        ("check('ch03.mul')", "ch03_mul_check"),
        ("check('ch03.div')", "ch03_div_check"),
        ("y = 2", "ch03_extra"),
    )
    problems: list = []
    plan = plan_grading(nb, cell_index(nb)[0], chapter_exercises("ch03"), GradeOptions(), problems)
    assert plan.solution == {"ch03.mul": 1} and plan.runner == {"ch03.mul": 2}
    assert plan.nonce["ch03.mul"] in plan.nb.cells[2].source and "check(" not in plan.nb.cells[2].source
    assert "ch03.div" in plan.missing and plan.nb.cells[3].source.startswith("# varfunc grader: not run")
    assert any("'ch03_extra'" in p for p in problems) and any("ch03_div" in p for p in problems)
    assert not any("edited" in p for p in problems)


def test_a_deleted_check_cell_gets_a_runner_right_after_its_exercise_cell():
    """Without its check cell an exercise is still graded, by a runner added after its cell."""
    from varfunc.grading.grade import chapter_exercises
    from varfunc.grading.notebook import cell_index
    from varfunc.grading.plan import plan_grading

    nb = _chapter_nb(("class Mul: pass", "ch03_mul"), ("class Div: pass", "ch03_div"), ("z = 3", None))
    plan = plan_grading(nb, cell_index(nb)[0], chapter_exercises("ch03"), GradeOptions(), [])
    assert plan.runner == {"ch03.mul": 1, "ch03.div": 3} and plan.original == [0, None, 1, None, 2]


def test_hidden_tests_run_only_after_the_visible_checks_pass_and_a_failed_assert_fails():
    """A hidden assert that fails fails the exercise, with no expected value shown."""
    from varfunc.grading.hidden import HIDDEN_ASSERT, _verdict_fields, evaluate_hidden

    ex = "ch02.predict_grad"
    right = {"predicted_a_grad": [3.5, 4.5], "predicted_b_grad": None}
    visible = evaluate_hidden(ex, {}, "assert False")
    assert not visible.passed and HIDDEN_ASSERT not in visible.case
    assert evaluate_hidden(ex, dict(right), "assert True").passed
    failed = _verdict_fields(ex, dict(right), "assert 1 == 2, 'nope'", ())
    assert failed["passed"] is False and failed["case"].endswith(HIDDEN_ASSERT)
    assert failed["got"] == "'nope'" and "expected" not in failed


def test_a_prediction_computed_by_code_in_its_cell_is_refused():
    """An answer its cell computed with the kit's code fails; one typed in passes the hand check."""
    from varfunc.grading.predictions import expect_written_by_hand

    typed = {"In": ["", "import numpy as np\na = np.array([1.0, 2.0])"], "a": [1.0, 2.0], "np": np}
    expect_written_by_hand(typed, "a")
    computed = {"In": ["", "from varfunc import viz\na = viz.trace(x)"], "a": [1.0]}
    with pytest.raises(CheckFailed):
        expect_written_by_hand(computed, "a")
    expect_written_by_hand({"a": [1.0]}, "a")  # no history: nothing to judge
    expect_written_by_hand({"In": ["", "a = sorted([2.0, 1.0])"], "a": [1.0, 2.0]}, "a")  # a safe builtin


def test_a_verdict_with_nothing_expected_shows_no_expected_or_got_line():
    """A not-solved verdict reads case and hint only, not 'expected: None'."""
    text = str(Verdict(EX, False, NOT_SOLVED, hint="replace the raise line"))
    assert "expected" not in text and "got" not in text and "0/3 points" in text


def test_a_submission_not_graded_lists_why_and_every_exercise_at_0(tmp_path):
    """An unreadable file: its problem in the report, each chapter exercise not_graded with 0 points."""
    from varfunc.grading.grade import chapter_exercises, grade_submission

    path = tmp_path / "03_x.ipynb"
    path.write_text("not json")
    result = grade_submission(path, GradeOptions())
    assert result["status"] == "unreadable" and len(result["problems"]) == 1
    ids = [ex.id for ex in chapter_exercises("ch03")]
    assert [(e["id"], e["status"], e["points"]) for e in result["exercises"]] == [
        (i, "not_graded", 0) for i in ids
    ]
    assert (result["score"], result["max_score"]) == (0, sum(ex.points for ex in chapter_exercises("ch03")))


def test_expect_close_fails_a_wrong_shape_even_when_it_broadcasts():
    """(1, 2) for (2,) is a wrong shape, not a pass by broadcasting."""
    with pytest.raises(CheckFailed, match=r"\(shape\)"):
        expect_close("c", np.array([[1.0, 2.0]]), np.array([1.0, 2.0]))


def test_a_wrong_value_shows_what_was_expected_unless_secret():
    """Only a prediction's check (secret=True) hides the expected values."""
    with pytest.raises(CheckFailed) as failure:
        expect_close("c", np.array([2.0]), np.array([1.0]))
    assert np.array_equal(failure.value.expected, [1.0])


def test_nan_expected_where_nan_is_right_passes():
    """A NaN in the expected values is matched by a NaN in the answer."""
    expect_close("c", np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))


def test_the_worst_element_named_is_the_one_furthest_out_of_tolerance():
    """at=(name, inputs): the verdict names the input of the element with the biggest error."""
    with pytest.raises(CheckFailed) as failure:
        expect_close("c", np.array([[-1.0, 5.0]]), np.array([[1.0, 4.0]]), at=("a", np.array([[7.0, 8.0]])))
    assert "worst at a = 7: expected 1, got -1" in failure.value.case


def test_make_param_keeping_a_read_only_array_fails_the_hidden_check():
    """A make_param that copies every array but a read-only one fails the hidden check."""
    from varfunc import Variable
    from varfunc.grading.hidden import evaluate_hidden

    def make_param(data):
        if isinstance(data, np.ndarray) and not data.flags.writeable:
            return Variable(data)  # the bug: a read-only array kept as it is
        array = np.array(data, dtype=data.dtype if isinstance(data, np.ndarray) else None)
        return Variable(array if array.dtype.kind == "f" else array.astype(np.float64))

    verdict = evaluate_hidden("ch02.make_param", {"make_param": make_param})
    assert not verdict.passed and "read-only" in verdict.case


def test_release_file_keeps_a_students_copy_unless_forced(tmp_path):
    """release_file refuses to overwrite a file already at its target unless force is given."""
    from varfunc.grading.release import release_file

    source, target = tmp_path / "03_x.ipynb", tmp_path / "out" / "03_x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), source)
    target.parent.mkdir()
    target.write_text("a student's work")
    with pytest.raises(ValueError, match="nothing was written"):
        release_file(source, target)
    assert target.read_text() == "a student's work"
    release_file(source, target, force=True)
    assert "x = 1" in target.read_text()
