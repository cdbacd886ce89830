"""Packaging checks: environment.yml and pyproject.toml list the same dependencies (extra by extra,
with the same versions and markers, the commented optional routes included), the Makefile's venv
step and entry points, and CI runs `make test` and insists on the PyTorch oracle."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

ROOT = Path(__file__).resolve().parents[1]

# conda-forge name -> PyPI name, for packages whose names differ (conda's cupy + cuda-version=N is
# PyPI's cupy-cudaNx, see _conda_section).
CONDA_TO_PYPI = {
    "python-graphviz": "graphviz",
    "matplotlib-base": "matplotlib",
    "pytorch": "torch",
    "playwright-python": "playwright",
}
# conda-only entries: the `dot` programs, the interpreter and pip itself.
CONDA_ONLY = {"graphviz", "python", "pip"}
# Extras that environment.yml installs; the others are commented-out routes there.
ENV_EXTRAS = ("lab", "test")

_CONDA_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*([<>=!~].*)?$")


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _version(spec):
    """A version constraint in one spelling ('>=1,<2' and '<2,>=1' agree); conda's own forms as they are."""
    try:
        return str(SpecifierSet(spec))
    except InvalidSpecifier:
        return spec


@pytest.fixture(scope="module")
def pyproject():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the test extra installs tomli
        tomllib = pytest.importorskip("tomli", reason="tomli is needed to parse pyproject.toml on 3.10")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def env():
    yaml = pytest.importorskip("yaml", reason="PyYAML is needed to parse environment.yml")
    with open(ROOT / "environment.yml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def _env_sections():
    """environment.yml's dependencies read from the text, since the optional routes are comments:
    {section: [(spec, trailing comment, commented out)]}. A comment naming an extra ("# lab extra",
    "(the `gpu` extra)") starts that extra's section; entries before the first one are section None."""
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    sections, section = {None: []}, None
    for line in text.split("\ndependencies:\n", 1)[1].splitlines():
        entry = re.match(r"^\s*(#\s*)?-\s+(.*)$", line)
        if entry:
            spec, _, comment = entry.group(2).partition("#")
            if spec.strip() == "pip:":
                break
            sections[section].append((spec.strip(), comment.strip(), bool(entry.group(1))))
            continue
        heading = re.search(r"(?:^\s*#\s*|`)([a-z0-9-]+)`? extra\b", line)
        if heading:
            section = heading.group(1)
            assert section not in sections, f"environment.yml has two sections for the {section} extra"
            sections[section] = []
    return sections


def _conda_section(entries):
    """{PyPI name: (version, marker)} for one section; a marker is written `marker: ...` in the comment."""
    parsed = {}
    for spec, comment, _ in entries:
        m = _CONDA_SPEC.match(spec)
        assert m, f"cannot parse the conda spec {spec!r} in environment.yml"
        name = _norm(m.group(1))
        assert name not in parsed, f"duplicate entry in environment.yml: {name}"
        marker = re.search(r"\bmarker:\s*(.+)$", comment)
        parsed[name] = (_version(m.group(2) or ""), str(Marker(marker.group(1))) if marker else None)
    if "cupy" in parsed:
        cuda = parsed.pop("cuda-version", ("", None))[0]
        assert re.fullmatch(r"=\d+", cuda), "environment.yml: cupy needs a cuda-version=N entry"
        parsed[f"cupy-cuda{cuda[1:]}x"] = parsed.pop("cupy")
    return {CONDA_TO_PYPI.get(n, n): v for n, v in parsed.items() if n not in CONDA_ONLY}


def _pypi_section(requirements):
    """{name: (version, marker)} for one list of pyproject requirements."""
    parsed = {}
    for text in requirements:
        req = Requirement(text)
        name = _norm(req.name)
        assert name not in parsed, f"duplicate requirement in pyproject.toml: {name}"
        # conda has no extras: list the packages an extra brings in both files instead
        assert not req.extras and not req.url, f"pyproject.toml: environment.yml cannot express {text!r}"
        parsed[name] = (_version(str(req.specifier)), str(req.marker) if req.marker else None)
    return parsed


def test_environment_yml_shape(env):
    assert env["name"] == "varfunc"
    assert env["channels"] == ["conda-forge"]
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    assert pip_sections == [["-e ."]], "environment.yml should install the package with pip -e ."


def test_environment_yml_matches_pyproject(pyproject, env):
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    sections = _env_sections()
    # the text reading sees every entry that conda will install, so none escapes the comparison
    installed = [spec for entries in sections.values() for spec, _, commented in entries if not commented]
    assert installed == [d for d in env["dependencies"] if isinstance(d, str)]

    assert set(sections) == {None, *extras}, "environment.yml should have one section per pyproject extra"
    for section, entries in sections.items():
        routed = section not in (None, *ENV_EXTRAS)
        where = f"environment.yml, {section or 'base'} section"
        assert all(commented == routed for *_, commented in entries), (
            f"{where}: {'optional routes are commented out' if routed else 'entries are installed'}"
        )
        wanted = project["dependencies"] if section is None else extras[section]
        assert _conda_section(entries) == _pypi_section(wanted), f"{where} differs from pyproject.toml"

    specs = {_CONDA_SPEC.match(spec).group(1): spec for spec in installed}
    for name in CONDA_ONLY:
        assert name in specs, f"environment.yml should list {name!r}"
    assert specs["python"] == "python" + project["requires-python"].replace(" ", "")


def test_optional_routes(pyproject):
    extras = pyproject["project"]["optional-dependencies"]
    # Pinned exactly, so every run compares against the same PyTorch.
    assert extras["oracle"] == ["torch==2.13.0"]
    # 14: cupy.put_along_axis (the backward of max, min, median and mode with a dim), NumPy 2's promotion
    assert extras["gpu"] == ["cupy-cuda12x>=14"]
    assert extras["e2e"] == ["playwright"]


def test_makefile_targets():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?![:=])", text, re.MULTILINE))
    missing = {"lab", "test", "bench", "e2e"} - targets
    assert not missing, f"Makefile lacks targets {sorted(missing)}"


def test_ci_runs_make_test():
    path = ROOT / ".ci" / "run"
    assert os.access(path, os.X_OK), ".ci/run should be executable"
    lines = path.read_text(encoding="utf-8").splitlines()
    code = [ln.split("#", 1)[0] for ln in lines if not ln.lstrip().startswith("#")]
    assert any(re.search(r"\bmake\s+test\b", ln) for ln in code), ".ci/run should call make test"
    assert any(re.search(r"\bmake\s+e2e\b", ln) for ln in code), ".ci/run should call make e2e"
    assert any(re.search(r"\bmake\s+lint\b", ln) for ln in code), ".ci/run should call make lint"
    # the oracle tests skip without torch: CI checks that it imports, at the pinned version
    assert any("torch.__version__" in ln for ln in code), ".ci/run should check the torch version"


needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(*args, **kwargs):
    return subprocess.run(["make", "-C", str(ROOT), *args], capture_output=True, text=True, **kwargs)


@needs_make
def test_make_says_when_the_python_is_missing(tmp_path):
    run = _make("install", "PYTHON=python-not-here", f"VENV={tmp_path / 'venv'}")
    assert run.returncode != 0
    assert "python-not-here not found" in run.stderr and "PYTHON=" in run.stderr, run.stderr


@needs_make
def test_make_says_when_the_python_is_there_but_does_not_run(tmp_path):
    # a pyenv shim for a version that is not selected: on PATH, but it exits 127 instead of running
    fake = tmp_path / "python3.12"
    fake.write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
    fake.chmod(0o755)
    run = _make("install", f"PYTHON={fake}", f"VENV={tmp_path / 'venv'}")
    assert run.returncode != 0
    assert "does not run" in run.stderr and "older than" not in run.stderr, run.stderr


@needs_make
def test_a_working_venv_is_reused_whatever_python_says(tmp_path):
    # a venv whose pip works (a stand-in that records what it is asked), with a stale stamp:
    # make reinstalls into it without asking for PYTHON, which names no interpreter here
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls"
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\n')
    python.chmod(0o755)
    run = _make("install", "PYTHON=python-not-here", f"VENV={venv}", timeout=60)
    assert run.returncode == 0, run.stderr
    assert "-m pip install -e .[" in log.read_text()  # (the extras are whatever make was given)


@needs_make
def test_install_stamp_does_not_depend_on_the_order_of_extras(tmp_path):
    def stamp(extras):
        run = _make("-n", "install", f"EXTRAS={extras}", f"VENV={tmp_path}")
        return [ln for ln in run.stdout.splitlines() if ln.startswith("touch ")]

    assert stamp("lab,test") == stamp("test,lab") != []


@needs_make
def test_make_bench_installs_the_oracle(tmp_path):
    run = _make("-n", "bench", f"VENV={tmp_path}")
    installs = re.findall(r'pip install -e "\.\[(.*)\]"', run.stdout)
    assert installs and "oracle" in installs[0].split(","), run.stdout


@needs_make
def test_a_venv_that_cannot_get_pip_is_removed_with_a_message(tmp_path):
    # a python3 whose venv module is half there, as Debian's without python3-venv: a venv without pip
    fake = tmp_path / "python3"
    fake.write_text(
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "-m venv" ]; then "{sys.executable}" -m venv --without-pip "$3"; exit 1; fi\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    fake.chmod(0o755)
    venv = tmp_path / "venv"
    run = _make("install", f"PYTHON={fake}", f"VENV={venv}", timeout=120)
    assert run.returncode != 0
    assert "python3-venv" in run.stderr, run.stderr
    assert not venv.exists(), "the half-made venv should be removed"


def test_nbval_sanitizers_mask_addresses_svg_and_machine_lines():
    nbval_plugin = pytest.importorskip("nbval.plugin", reason="nbval is not installed")
    text = (ROOT / "tests" / "nbval_sanitize.cfg").read_text(encoding="utf-8")
    patterns = nbval_plugin.get_sanitize_patterns(text)
    assert len(patterns) == 4

    def clean(s):
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    assert clean("<Leaf object at 0x7f3a2c1d>") == clean("<Leaf object at 0x55e0aa10ff>")
    svg = (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        "<!-- Generated by graphviz version {v} -->\n"
        '<svg width="{w}pt"><g id="node1"><title>{w}</title></g></svg>\n'
    )
    assert clean(svg.format(v="2.43.0", w=62)) == clean(svg.format(v="14.0.1", w=71))
    assert clean('<svg width="62"/>') == clean('<svg width="71"/>')  # IPython's SVG() output
    gpu = "GPU here: {}\npictures: yes"
    assert clean(gpu.format("no (CuPy is not installed)")) == clean(gpu.format("yes, 1 CUDA device(s)"))
    assert clean("pictures: yes") != clean("pictures: no")
    versions = "Versions here: Python {}, NumPy 2.4.6, varfunc 0.1.0\nplots: yes"
    assert clean(versions.format("3.11.7")) == clean(versions.format("3.13.1"))
    assert clean("Versions: 1") != clean("Versions: 2")  # only the chapter's own prefix is masked
