"""Hidden checks, run only by ``python -m varfunc.grading grade``, and the runner that grading uses.

``check("ch03.mul")`` in a notebook runs an exercise's visible checks. Grading also runs its hidden
checks: the ones registered here with ``@hidden_check`` (a few ship with the kit, below), the ones in
the instructor's own files (``grade --hidden my_checks.py``), and the code inside the
``### BEGIN HIDDEN TESTS`` regions of the instructor's check cells (``grade --source notebooks/``),
which ``release`` removes from the student copies, as nbgrader does.

The grader replaces every check cell of a submission with a call to ``run`` (see ``runner_source``),
after deleting every ``varfunc.grading`` module from ``sys.modules``: the checks are imported afresh
after the student's code ran, so patching ``check``, ``evaluate`` or a registered check in the
notebook changes nothing; and ``run`` grades nothing if the notebook replaced library code the
checks rely on (NumPy, varfunc, builtins, IPython's display: see ``guard.py``), before the checks
or while they ran the student's code.
"""

from __future__ import annotations

import os
import runpy
import traceback
from collections.abc import Callable, Iterable

import numpy as np

from ..function import Function
from ..variable import Variable
from .core import (
    RAISED,
    CheckFailed,
    Verdict,
    evaluate,
    expect_close,
    expect_equal,
    lookup,
    raised_verdict,
    running,
    show,
)
from .floats import numpy_defaults
from .guard import GUARD_ENV, SNAPSHOT_KEY, Snapshot, kept_snapshot
from .names import shortened

HIDDEN: dict[str, list[Callable[[dict], None]]] = {}
VERDICT_MIME = "application/vnd.varfunc.verdict+json"
RUNNER_MARK = "# varfunc grader:"
HIDDEN_ASSERT = "an assertion in the hidden tests"
NOTHING_EXPECTED = (RAISED, HIDDEN_ASSERT)  # verdicts with no expected value: an error, a failed assert


def hidden_check(exercise_id: str) -> Callable:
    """Register the decorated function (namespace -> None, raising CheckFailed) as a hidden check."""

    def register(run: Callable[[dict], None]) -> Callable[[dict], None]:
        HIDDEN.setdefault(exercise_id, []).append(run)
        return run

    return register


def evaluate_hidden(exercise_id: str, namespace: dict, hidden_source: str = "") -> Verdict:
    """The visible checks, then (if they pass) the hidden ones: registered checks and hidden test code."""
    verdict = evaluate(exercise_id, namespace)
    if not verdict.passed:
        return verdict
    ex = lookup(exercise_id)
    runs = list(HIDDEN.get(exercise_id, []))
    if hidden_source.strip():
        runs.append(lambda ns: _run_hidden_source(hidden_source, ns))
    for run in runs:
        try:
            with numpy_defaults():  # as evaluate: not the notebook's np.seterr
                run(namespace)
        except CheckFailed as failure:
            case = f"hidden check: {failure.case}"
            return Verdict(ex, False, case, failure.expected, failure.got, failure.hint)
        except Exception as error:  # noqa: BLE001 - the student's code may raise anything
            raised = raised_verdict(ex, error)  # names the case that ran the student's code, if known
            return Verdict(ex, False, f"hidden check: {raised.case}", got=raised.got, hint=raised.hint)
    return verdict


HIDDEN_SOURCE_NAME = "<hidden tests>"


def _run_hidden_source(source: str, namespace: dict) -> None:
    """Run the instructor's hidden test code in the notebook's namespace; a failed assert fails the check.

    An error the student's code raises there is reported with the hidden line that called it.
    """
    try:
        exec(compile(source, HIDDEN_SOURCE_NAME, "exec"), namespace)
    except AssertionError as error:
        raise CheckFailed(HIDDEN_ASSERT, got=str(error) or "assert failed") from None
    except Exception as error:
        line = _hidden_line(error, source)
        if line:
            with running(f"the hidden tests' line {line}"):
                raise


def _hidden_line(error: BaseException, source: str) -> str:
    """'N, `code`' for the last line of the hidden tests in error's traceback, or '' if none is."""
    numbers = [
        number
        for frame, number in traceback.walk_tb(error.__traceback__)
        if frame.f_code.co_filename == HIDDEN_SOURCE_NAME
    ]
    if not numbers:
        return ""
    lines = source.splitlines()
    code = lines[numbers[-1] - 1].strip() if 0 < numbers[-1] <= len(lines) else ""
    return f"{numbers[-1]}, `{code}`" if code else str(numbers[-1])


def run(
    exercise_id: str,
    namespace: dict,
    hidden_source: str = "",
    hidden_files: Iterable[str] = (),
    nonce: str = "",
) -> None:
    """Grade one exercise in the student's kernel and display the verdict as JSON for the grader.

    The verdict carries the grader's nonce for this check, so that a verdict the notebook displays
    itself (it cannot know the nonce) is not taken for this one (``execute.verdict_of``).
    """
    from IPython.display import display  # only inside a kernel

    snapshot = kept_snapshot()
    # IPython's publisher as it was before the notebook ran: a replaced one never sees the verdict
    show = snapshot.show if snapshot is not None else lambda data: display(data, raw=True)
    payload = {
        "exercise": exercise_id,
        "nonce": nonce,
        "passed": False,
        "case": "",
        "expected": None,
        "got": None,
    }
    try:
        payload.update(_guarded_verdict(snapshot, exercise_id, namespace, hidden_source, hidden_files))
    except SystemExit as stop:
        payload.update(case="your code called sys.exit()", got=f"SystemExit({stop.code!r})")
    except KeyboardInterrupt:
        payload.update(case="interrupted: your code ran past the time limit (an endless loop?)")
    except BaseException as error:  # noqa: BLE001 - the grader reports anything, never stops
        payload.update(case="the checks could not run", got=f"{type(error).__name__}: {error}")
    payload.setdefault("text", f"✘ {exercise_id}: {payload['case']}")
    show({VERDICT_MIME: payload, "text/plain": payload["text"]})


def _guarded_verdict(
    snapshot: Snapshot | None, exercise_id: str, namespace: dict, hidden_source: str, hidden_files: Iterable
) -> dict:
    """The verdict's fields, unless the notebook replaced library code before or while the checks ran."""
    tampered = _tampering(snapshot)
    if tampered:
        return tampered
    fields = _verdict_fields(exercise_id, namespace, hidden_source, hidden_files)
    return _tampering(snapshot, while_checking=True) or fields


def _verdict_fields(exercise_id: str, namespace: dict, hidden_source: str, hidden_files: Iterable) -> dict:
    """The visible and hidden checks' verdict, as the fields of the grader's payload."""
    for path in hidden_files:
        runpy.run_path(str(path))  # registers the instructor's @hidden_check functions
    verdict = evaluate_hidden(exercise_id, namespace, hidden_source)
    fields = {"passed": verdict.passed, "case": verdict.case, "hint": verdict.hint, "text": str(verdict)}
    if verdict.expected is not None or verdict.got is not None:
        fields.update(expected=show(verdict.expected), got=show(verdict.got))
    if verdict.case.endswith(NOTHING_EXPECTED):
        fields.pop("expected", None)  # an error or a failed assert: no expected value to show
    return fields


def _tampering(snapshot: Snapshot | None, while_checking: bool = False) -> dict:
    """A failed verdict's fields if the notebook replaced library code since the grader's snapshot."""
    if snapshot is None:
        if os.environ.get(GUARD_ENV):
            return {
                "not_checked": True,
                "case": "not checked: the grader's snapshot of the libraries was removed by the notebook",
            }
        return {}  # run outside the grader (a test, a notebook): nothing to compare with
    replaced = snapshot.replaced()
    if not replaced:
        return {}
    reloaded = snapshot.reloaded()  # importlib.reload: new classes, while old Variables keep theirs
    changed = reloaded or replaced
    shown = shortened(changed)
    what = "reloaded library modules" if reloaded else "replaced library code"
    when = " while the checks ran" if while_checking else ""
    remove = (
        "importlib.reload (it makes new classes, while what was made before keeps the old ones)"
        if reloaded
        else "the lines that assign to NumPy, varfunc, IPython or builtin names (or their code or defaults)"
    )
    return {
        "not_checked": True,
        "case": f"not checked: the notebook {what} that the checks rely on{when} ({shown})",
        "hint": f"grading runs your notebook as written: remove {remove}, and solve the exercise in its own "
        "cell",
    }


def runner_source(
    exercise_id: str, hidden_source: str = "", hidden_files: Iterable[str] = (), nonce: str = ""
) -> str:
    """The code the grader puts in place of a check cell: fresh imports of the checks, then ``run``.

    The notebook's own ``varfunc.grading`` modules are set aside while the fresh ones run, and put
    back afterwards, so the notebook's later cells see the modules they imported. ``nonce`` is the
    grader's secret for this check, made at grading time: the verdict must carry it. In the grader's
    kernel the checks are imported with the ``import_module`` the guard kept before the notebook ran
    (a notebook that replaced ``importlib.import_module`` cannot hand the cell a fake ``run``).
    """
    files = [str(p) for p in hidden_files]
    call = f"run({exercise_id!r}, globals(), {hidden_source!r}, {files!r}, {nonce!r})"
    return (
        f"{RUNNER_MARK} the checks are imported afresh, so nothing the notebook changed applies\n"
        "import importlib as _vf_importlib, sys as _vf_sys\n"
        f"_vf_snapshot = _vf_sys.modules.get({SNAPSHOT_KEY!r})\n"
        "_vf_import = _vf_importlib.import_module if _vf_snapshot is None else _vf_snapshot.import_module\n"
        "_vf_grading = lambda: [n for n in list(_vf_sys.modules) if n.startswith('varfunc.grading')]\n"
        "_vf_saved = {n: _vf_sys.modules.pop(n) for n in _vf_grading()}\n"
        "try:\n"
        f"    _vf_import('varfunc.grading.hidden').{call}\n"
        "finally:\n"
        "    [_vf_sys.modules.pop(n) for n in _vf_grading()]\n"
        "    _vf_sys.modules.update(_vf_saved)\n"
        "    if 'varfunc.grading' in _vf_saved:\n"
        "        _vf_sys.modules['varfunc'].grading = _vf_saved['varfunc.grading']\n"
        "    del _vf_importlib, _vf_sys, _vf_snapshot, _vf_import, _vf_grading, _vf_saved\n"
        # this cell's text (hidden tests, the --hidden paths, the secret) out of IPython's history,
        # where a later cell could read it (In, _i<n>) and put it in its error, into the report
        "    _vf_shell = globals().get('get_ipython', lambda: None)()\n"
        "    if _vf_shell is not None:\n"
        "        _vf_shell.history_manager.input_hist_parsed[-1] = ''\n"
        "        _vf_shell.history_manager.input_hist_raw[-1] = ''\n"
        "        _vf_shell.history_manager._i00 = _vf_shell.user_ns[f'_i{_vf_shell.execution_count}'] = ''\n"
        "    del _vf_shell\n"
    )


# --- the kit's hidden checks ----------------------------------------------------------------------


@hidden_check("ch02.make_param")
def _make_param_views_and_read_only(ns: dict) -> None:
    """A view of a bigger array and a read-only array must both be copied into a writable array."""
    base = np.arange(10.0)
    case = "make_param(a view of another array)"
    with running(case):
        param = ns["make_param"](base[::2])
    if np.shares_memory(param.data, base):
        raise CheckFailed(f"{case}: memory", "an array of its own", "a view")
    frozen = np.array([1.0, 2.0])
    frozen.setflags(write=False)
    case = "make_param(a read-only array)"
    with running(case):
        param = ns["make_param"](frozen)
    expect_equal(f"{case}: its data is writable", param.data.flags.writeable, True)
    # A 0-d float32 array, not the NumPy scalar np.float32(2.5): the exercise promises a list, a
    # Python number or a NumPy array, and a right answer may treat a scalar as a number (float64)
    case = "make_param(np.array(2.5, dtype=np.float32))"
    with running(case):
        param = ns["make_param"](np.array(2.5, dtype=np.float32))
    expect_close(case, param.data, np.float32(2.5))
    expect_equal(f"{case}: dtype", param.dtype, np.float32)


@hidden_check("ch02.describe")
def _describe_other_functions(ns: dict) -> None:
    """describe must name any Function, not only the ones the visible checks use."""
    x = Variable(np.array([1.0, 2.0]))
    for case, variable, expected in [
        ("x.sum()", x.sum(), "computed by Sum"),
        ("x * x", x * x, "computed by Mul"),
        ("x.exp()", x.exp(), "computed by Exp"),
        ("-x", -x, "computed by Negate"),
    ]:
        with running(f"describe({case})"):
            description = ns["describe"](variable)
        expect_equal(f"describe({case})", description, expected)


def _same_input_twice(ns: dict, name: str, expected_grad: Callable[[np.ndarray], np.ndarray]) -> None:
    """op(a, a): both gradients reach the same leaf and must be summed there."""
    cls = ns[name]
    if not (isinstance(cls, type) and issubclass(cls, Function)):
        raise CheckFailed(f"{name} is not a Function subclass")
    data = np.array([[0.5, -1.5, 2.0], [1.25, -0.75, 3.0]])
    a = Variable(data.copy())
    case = f"{name}()(a, a)"
    with running(case):
        cls()(a, a).sum().backward()
    expect_close(f"{case}: the gradient for a", a.grad, expected_grad(data), rtol=1e-6)


def _three_d_broadcast(ns: dict, name: str, op: Callable) -> None:
    """Broadcasting across three dimensions, both operands stretched."""
    rng = np.random.default_rng(2016)
    a_data = rng.uniform(0.5, 2.0, (2, 1, 4))
    b_data = rng.uniform(0.5, 2.0, (3, 1))
    a, b = Variable(a_data.copy()), Variable(b_data.copy())
    case = f"{name} of shapes (2, 1, 4) and (3, 1)"
    with running(f"{case}: forward"):
        out = ns[name]()(a, b)
    expect_close(f"{case}: forward", out.data, op(a_data, b_data))
    with running(f"{case}: backward"):
        out.sum().backward()
    expect_equal(f"{case}: shape of b.grad", b.grad.shape, (3, 1))


@hidden_check("ch03.mul")
def _mul_hidden(ns: dict) -> None:
    """Mul()(a, a) gives 2a; a 3-d broadcast keeps each gradient's shape."""
    _same_input_twice(ns, "Mul", lambda a: 2 * a)
    _three_d_broadcast(ns, "Mul", lambda a, b: a * b)


@hidden_check("ch03.div")
def _div_hidden(ns: dict) -> None:
    """Div()(a, a) is 1 everywhere, so its gradient is 0; a 3-d broadcast keeps each gradient's shape."""
    _same_input_twice(ns, "Div", np.zeros_like)
    _three_d_broadcast(ns, "Div", lambda a, b: a / b)
