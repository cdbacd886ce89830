"""Smoke test of the core benchmarks on tiny sizes: the benchmark code runs, and its references agree.

No timing is asserted. The real check is that varfunc's MLP step and the hand-written NumPy step in
benchmarks/numpy_reference.py give the same loss and the same updated weights, so the NumPy
reference the benchmarks compare against computes what varfunc computes.
"""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is a package at the repository root, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks import chains, common, results, run  # noqa: E402
from benchmarks import numpy_reference as ref  # noqa: E402


def test_chain_matches_the_hand_written_chain_rule():
    y, grad = chains.chain_varfunc(50)
    y_ref, grad_ref = ref.chain_forward_backward(50)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-12)
    np.testing.assert_allclose(grad, ref.SCALE**50, rtol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("form", ["nn", "core ops"])
def test_varfunc_and_numpy_mlp_steps_agree(form, dtype, rtol):
    sizes, batch = (12, 8, 5), 6
    params = ref.init_mlp(sizes, dtype=dtype)
    x, labels = ref.make_batch(batch, sizes[0], sizes[2], dtype=dtype)
    varfunc_model = run.FORMS[form][0](params, x, labels, lr=0.5)
    numpy_model = run.NumpyMLP(params, x, labels, lr=0.5)
    for _ in range(3):  # several steps: the updated weights feed the next forward pass
        loss_vf = varfunc_model.step()
        loss_np = numpy_model.step()
        np.testing.assert_allclose(loss_vf, loss_np, rtol=rtol)
    updated = varfunc_model.arrays()
    for name, array in numpy_model.params.items():
        assert updated[name].dtype == dtype
        np.testing.assert_allclose(updated[name], array, rtol=rtol, atol=rtol)
        assert not np.allclose(array, params[name]), f"{name} was not updated"


@pytest.mark.oracle
@pytest.mark.parametrize("form", ["nn", "core ops"])
def test_torch_mlp_steps_agree_with_numpy(monkeypatch, form):
    monkeypatch.setattr(common, "torch", pytest.importorskip("torch"))
    sizes, batch = (12, 8, 5), 6
    params = ref.init_mlp(sizes, dtype=np.float64)
    x, labels = ref.make_batch(batch, sizes[0], sizes[2], dtype=np.float64)
    torch_model = run.FORMS[form][1](params, x, labels, lr=0.5)
    numpy_model = run.NumpyMLP(params, x, labels, lr=0.5)
    for _ in range(3):
        np.testing.assert_allclose(torch_model.step(), numpy_model.step(), rtol=1e-10)
    updated = torch_model.arrays()
    for name, array in numpy_model.params.items():
        np.testing.assert_allclose(updated[name], array, rtol=1e-10, atol=1e-12)


def test_quick_mode_functions_run_on_tiny_sizes(monkeypatch, capsys):
    monkeypatch.setattr(common, "torch", None)  # the PyTorch columns read n/a without it
    body_a, ok_a = chains.part_a(steps=5, rounds=1)
    assert "(a) Chain of 5 scalar steps" in body_a and ok_a is None  # not measured without PyTorch
    body_b, oks = run.part_b([((6, 4, 3), 2, 1, "numpy"), ((5, 4, 3), 2, 1, "torch")], rounds=1)
    forms = len(run.FORMS)  # one row and one verdict per form, for each of the two sizes
    assert body_b.count("| 2 |") == 2 * forms and [len(form_oks) for form_oks in oks] == [forms, forms]
    chains.chain_child(200, rounds=1)
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["ops"] == 200 and report["growth"] >= 0
    assert len(report["time"]) == len(report["paused"]) == 2  # (fastest, median)


def test_part_c_table_takes_the_fastest_run_of_each_size(monkeypatch):
    monkeypatch.setattr(common, "torch", None)
    calls = []

    def in_process(ops, rounds, impl, first):
        calls.append((ops, impl, first))
        return chains.chain_child(ops, rounds, impl, first)

    monkeypatch.setattr(chains, "run_chain_child", in_process)
    body, time_ok, mem_ok = chains.part_c([100, 1000], {100: 1, 1000: 1}, repeats=2)
    # sizes take turns, and only the first repeat measures memory and the paused collector
    assert calls == [
        (100, "varfunc", True),
        (1000, "varfunc", True),
        (100, "varfunc", False),
        (1000, "varfunc", False),
    ]
    rows = [line for line in body.splitlines() if line.startswith("| 1")]
    assert [row.split(" | ")[0] for row in rows] == ["| 100", "| 1,000"]
    assert rows[0].split(" | ")[3] == "-" and rows[1].split(" | ")[3].endswith("x")
    assert "n/a" in rows[1]  # no PyTorch column without PyTorch
    assert isinstance(time_ok, bool) and mem_ok in (True, False, None)  # None: no peak seen at 100 ops


def test_torch_chain_child_reports_its_timing(capsys):
    pytest.importorskip("torch")
    report = chains.chain_child(200, rounds=1, impl="torch", first=True)
    assert report["impl"] == "torch" and report["growth"] is None and report["paused"] is None
    assert 0 < report["time"][0] <= report["time"][1]


def test_without_pytorch_its_targets_read_not_measured(monkeypatch):
    monkeypatch.setattr(common, "torch", None)
    body_a, ok_a = chains.part_a(steps=5, rounds=1)
    _, oks = run.part_b([((6, 4, 3), 2, 1, "numpy"), ((5, 4, 3), 2, 1, "torch")], rounds=1)
    assert ok_a is None and "not measured" in body_a
    assert oks[1] == [None] * len(run.FORMS) and all(ok in (True, False) for ok in oks[0])
    summary = run.summary_line(ok_a, oks, True, None)
    assert "(a) **not measured**" in summary and "memory **not measured**" in summary
    small = summary.split("small:")[1].split(";")[0]
    assert "PASS" not in small and small.count("not measured") == len(run.FORMS)


def test_a_verdict_never_contradicts_the_ratio_it_shows(monkeypatch):
    """Ratios a hair over or under a limit: the 3-decimal ratio lies on the verdict's side of it."""
    timings = {"NumPy by hand": 1.0, "varfunc nn": 1.0504, "varfunc core ops": 1.0496}
    timings |= {"PyTorch nn": 1.0505, "PyTorch core ops": 1.0495}
    monkeypatch.setattr(run, "compare", lambda fns, *args, **kwargs: {k: (t, t) for k, t in timings.items()})
    body, _ = run.part_b([((6, 4, 3), 2, 1, "numpy"), ((5, 4, 3), 2, 1, "torch")], rounds=1)
    lines = re.findall(r"(within 1.05x of NumPy|faster than PyTorch).*: ([\d.]+)x, \*\*(PASS|MISS)\*\*", body)
    assert len(lines) == 2 * len(run.FORMS)
    for target, shown, verdict in lines:
        passes = float(shown) <= 1.05 if target.startswith("within") else float(shown) < 1
        assert passes == (verdict == "PASS"), (target, shown, verdict)
    for limit in (1.0, 1.05, 1.3, 1.5, 12.0):
        for ratio in np.linspace(limit - 0.002, limit + 0.002, 41):
            shown = float(common.ratio_text(ratio, ratio <= limit)[:-1])
            assert (shown <= limit) == (ratio <= limit) and abs(shown - ratio) <= 0.001


@pytest.mark.parametrize("growth", [lambda ops: 0, lambda ops: 0 if ops < 1000 else 800 * ops])
def test_part_c_reads_memory_not_measured_without_a_peak(monkeypatch, growth):
    monkeypatch.setattr(common, "torch", None)
    monkeypatch.setattr(chains, "_peak_growth", growth)
    monkeypatch.setattr(
        chains, "run_chain_child", lambda ops, rounds, impl, first: chains.chain_child(ops, 1)
    )
    body, _, mem_ok = chains.part_c([100, 1000], {100: 1, 1000: 1}, repeats=1)
    assert mem_ok is None and re.search(r"peak memory linear .*: \*\*not measured\*\*", body)


def test_write_section_replaces_a_last_section_without_a_final_newline(monkeypatch, tmp_path):
    monkeypatch.setattr(results, "RESULTS", tmp_path / "RESULTS.md")
    results.write_section("one", "cmd", "first body")
    results.RESULTS.write_text(results.RESULTS.read_text().rstrip("\n"))
    results.write_section("one", "cmd", "second body")
    text = results.RESULTS.read_text()
    assert text.count("<!-- one:start -->") == 1 and "second body" in text and "first body" not in text


def test_the_chapter_times_never_contradict_their_verdict(monkeypatch, tmp_path):
    from benchmarks import chapters

    for i in range(4):
        (tmp_path / f"0{i}_x.ipynb").touch()
    seconds = iter([19.97, 5.04, 20.0, 75.01])  # the last brings the total to 120.02 s
    monkeypatch.setattr(chapters, "hide_dot", lambda: None)
    monkeypatch.setattr(chapters.shutil, "which", lambda name: None)
    monkeypatch.setattr(chapters, "NOTEBOOKS", tmp_path)
    monkeypatch.setattr(chapters, "run_chapter", lambda path: next(seconds))
    body = chapters.main(["--no-write"])
    assert "| 00_x | 19.9 | yes |" in body and "| 01_x | 5.0 | yes |" in body
    assert "| 02_x | 20.0 | **no** |" in body
    assert "(slowest 75.1 s, **MISS**)" in body and "(120.1 s, **MISS**)" in body


def test_the_instruction_counts_child_runs_the_chain():
    """The child that valgrind counts (python -m benchmarks.instructions --run N) runs and exits 0."""
    from benchmarks import instructions

    assert instructions.main(["--run", "1"]) == 0


def test_part_b_in_fresh_processes_takes_each_models_fastest_round_of_all(monkeypatch):
    """One process with a slow NumPy reference (3.89 ms against 2.54 ms) made a large MLP's verdict
    PASS: each model now gets its fastest round over every process, and the median of their medians."""
    runs = iter(
        [
            {"NumPy by hand": [3.89, 4.16], "varfunc nn": [2.89, 3.0]},  # the slow reference
            {"NumPy by hand": [2.54, 2.67], "varfunc nn": [2.86, 3.1]},
        ]
    )
    children = []

    def child(command, **kwargs):
        children.append(command)
        return type("Done", (), {"stdout": "warming up\n" + json.dumps(next(runs)) + "\n"})()

    monkeypatch.setattr(run.subprocess, "run", child)
    times = run.mlp_timings((784, 512, 10), 256, 5, 30, processes=2)
    assert times == {"NumPy by hand": (2.54, (4.16 + 2.67) / 2), "varfunc nn": (2.86, (3.0 + 3.1) / 2)}
    assert len(children) == 2 and children[0][-5:] == ["--mlp-child", "784,512,10", "256", "5", "30"]


def test_the_mlp_child_prints_every_models_timing_as_json(capsys):
    assert run.main(["--mlp-child", "6,4,3", "2", "1", "1"]) == 0
    times = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {"NumPy by hand", "varfunc nn", "varfunc core ops"} <= set(times)
    assert all(len(t) == 2 and 0 < t[0] <= t[1] for t in times.values())
