"""Packaging checks: environment.yml and pyproject.toml list the same dependencies,
the Makefile has its entry points, and CI runs `make test`."""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# conda-forge name -> PyPI name, for packages whose names differ.
CONDA_TO_PYPI = {
    "python-graphviz": "graphviz",
    "matplotlib-base": "matplotlib",
}
# conda-only entries: the `dot` programs, the interpreter and pip itself.
CONDA_ONLY = {"graphviz", "python", "pip"}
# Extras that environment.yml installs; `gpu` and `oracle` are commented routes there.
ENV_EXTRAS = ("lab", "test")

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _split(req):
    """'numpy >=1.24' -> ('numpy', '>=1.24'); also for conda specs without build strings."""
    m = _REQ.match(req.split(";")[0])
    assert m, f"cannot parse requirement {req!r}"
    return _norm(m.group(1)), m.group(3).replace(" ", "")


@pytest.fixture(scope="module")
def pyproject():
    tomllib = pytest.importorskip(
        "tomllib", reason="tomllib (Python >= 3.11) is needed to parse pyproject.toml"
    )
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def env():
    yaml = pytest.importorskip("yaml", reason="PyYAML is needed to parse environment.yml")
    with open(ROOT / "environment.yml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def _pypi_deps(pyproject):
    project = pyproject["project"]
    reqs = list(project["dependencies"])
    for extra in ENV_EXTRAS:
        reqs += project["optional-dependencies"][extra]
    deps = dict(_split(r) for r in reqs)
    assert len(deps) == len(reqs), f"duplicate requirement in pyproject.toml: {reqs}"
    return deps


def _conda_deps(env):
    specs = [d for d in env["dependencies"] if isinstance(d, str)]
    deps = {}
    for spec in specs:
        name, version = _split(spec)
        assert name not in deps, f"duplicate entry in environment.yml: {name}"
        deps[name] = version
    return deps


def test_environment_yml_shape(env):
    assert env["name"] == "varfunc"
    assert env["channels"] == ["conda-forge"]
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    assert pip_sections == [["-e ."]], "environment.yml should install the package with pip -e ."


def test_environment_yml_matches_pyproject(pyproject, env):
    pypi = _pypi_deps(pyproject)
    conda = _conda_deps(env)

    for name in CONDA_ONLY:
        assert name in conda, f"environment.yml should list {name!r}"
    assert conda["python"] == pyproject["project"]["requires-python"].replace(" ", "")

    mapped = {CONDA_TO_PYPI.get(n, n): v for n, v in conda.items() if n not in CONDA_ONLY}
    only_conda = sorted(set(mapped) - set(pypi))
    only_pypi = sorted(set(pypi) - set(mapped))
    assert not only_conda, f"in environment.yml but not in pyproject.toml: {only_conda}"
    assert not only_pypi, f"in pyproject.toml but not in environment.yml: {only_pypi}"

    differ = {n: (pypi[n], mapped[n]) for n in pypi if pypi[n] != mapped[n]}
    assert not differ, f"version constraints differ (pyproject, conda): {differ}"


def test_optional_routes(pyproject):
    extras = pyproject["project"]["optional-dependencies"]
    # An unpinned torch pulls a multi-GB CUDA build: the oracle is pinned exactly.
    assert extras["oracle"] == ["torch==2.13.0"]
    assert extras["gpu"] == ["cupy-cuda12x"]
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert "pytorch==2.13.0" in text, "environment.yml should document the pinned oracle route"
    assert re.search(r"#.*\bcupy\b", text), "environment.yml should document the GPU route"
    # conda-forge names Playwright's Python package `playwright-python`.
    assert extras["e2e"] == ["playwright"]
    assert re.search(r"#.*\bplaywright-python\b", text), "environment.yml should document the e2e route"


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
