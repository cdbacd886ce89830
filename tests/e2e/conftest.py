"""End-to-end set-up: JupyterLab started as `make lab` starts it, and headless Chromium driven by Playwright.

Everything runs on copies in a temporary folder (HOME included): the stored notebooks are never
touched. The server listens on 127.0.0.1 only, with a random token; the browser may reach nothing
else. Server, kernels and browser are stopped in `finally` blocks, also when a test fails.
Without Chromium or Playwright the tests skip with the reason, unless VARFUNC_E2E_REQUIRED=1 (set
by .ci/run), which turns the skip into a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .labpage import BUDGET_S, NOTEBOOKS, ROOT, STUDENT_CHAPTER, STUDENT_DIR, left, start_clock

ARTIFACTS = Path(os.environ.get("VARFUNC_E2E_ARTIFACTS", ROOT / "test-artifacts" / "e2e"))
# Chromium flags that work as root in a container, with no network beyond the local server.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    """The Chromium to drive: $VARFUNC_CHROMIUM, else Debian's `chromium` on PATH."""
    return os.environ.get("VARFUNC_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def missing_tools() -> str:
    """Why the end-to-end tests cannot run here ('' when they can)."""
    for module, extra in (("playwright", "e2e"), ("jupyterlab", "lab"), ("nbformat", "test")):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (the `{extra}` extra; `make e2e` installs it)"
    if chromium_path() is None:
        return "no Chromium (Debian: apt-get install chromium; or set VARFUNC_CHROMIUM to a chromium binary)"
    return ""


@pytest.fixture(scope="session")
def tools() -> str:
    """The Chromium binary; skips (or fails, with VARFUNC_E2E_REQUIRED=1) when a tool is missing."""
    reason = missing_tools()
    if reason:
        if os.environ.get("VARFUNC_E2E_REQUIRED") == "1":
            pytest.fail(f"end-to-end tests required but cannot run: {reason}")
        pytest.skip(reason)
    return chromium_path()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_cleared(source: Path, target: Path) -> None:
    """Copy the chapters with outputs and execution counts cleared: every output seen comes from the test."""
    import nbformat  # the test extra; checked by `tools`

    target.mkdir(parents=True)
    for path in sorted(source.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nbformat.write(nb, target / path.name)


@dataclass
class Lab:
    """A running JupyterLab: where it serves, its token and folders, and the process to stop."""

    url: str
    token: str
    root: Path
    home: Path
    proc: subprocess.Popen = field(repr=False)
    blocked: list[str] = field(default_factory=list)  # requests the browser tried outside the server

    def api(self, method: str, path: str) -> object:
        """Call the server's REST API; the decoded JSON answer (None when empty)."""
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Shut down every session's kernel (between tests, so chapters do not compete for the CPU)."""
        for session in self.api("GET", "/api/sessions") or []:
            self.api("DELETE", f"/api/sessions/{session['id']}")


def _wait_until_serving(lab: Lab, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + left(timeout)
    while time.monotonic() < deadline:
        if lab.proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited ({lab.proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            lab.api("GET", "/api/status")
            return
        except OSError:
            time.sleep(0.25)
    raise RuntimeError(f"JupyterLab did not serve within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server, then whatever it started that still runs (kernels have sessions of their own)."""
    try:
        import psutil  # comes with ipykernel

        children = psutil.Process(proc.pid).children(recursive=True)
    except Exception:  # noqa: BLE001 - psutil missing or the server already gone
        children = []
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
            proc.wait(wait)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    for child in children:
        try:
            child.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass


def release_student_copy(target: Path) -> None:
    """The student copy of one chapter, made by the instructor's release command."""
    source = NOTEBOOKS / STUDENT_CHAPTER
    command = [sys.executable, "-m", "varfunc.grading", "release", str(source), str(target)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[1:])} failed:\n{done.stdout}{done.stderr}")


@pytest.fixture(scope="session")
def lab(tools: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab as `make lab` starts it (python -m varfunc.lab), on cleared copies in a temporary folder."""
    start_clock()
    base = tmp_path_factory.mktemp("e2e")
    root, home = base / "notebooks", base / "home"
    copy_cleared(NOTEBOOKS, root)
    release_student_copy(root / STUDENT_DIR)
    home.mkdir()
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    command = [
        sys.executable, "-m", "varfunc.lab", str(root),
        "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
    ]  # fmt: skip
    log = base / "jupyterlab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command, cwd=base, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    lab = Lab(f"http://127.0.0.1:{port}", token, root, home, proc)
    try:
        _wait_until_serving(lab, log)
        yield lab
    finally:
        _stop(proc)
        if log.exists():  # the server's log, next to the screenshots, for a failed run
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, ARTIFACTS / "jupyterlab.log")


@pytest.fixture(scope="session")
def browser(tools: str, lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A headless Chromium context (fresh profile) that may only reach the local JupyterLab."""
    from playwright.sync_api import sync_playwright  # the e2e extra; checked by `tools`

    def only_local(route: object) -> None:
        url = route.request.url
        if url.startswith(lab.url + "/"):
            route.continue_()
        else:
            lab.blocked.append(url)
            route.abort()

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=tools,
            headless=True,
            args=CHROMIUM_ARGS,
            env={**os.environ, "HOME": str(lab.home)},
            viewport={"width": 1400, "height": 900},
        )
        try:
            context.route("**/*", only_local)
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: object, lab: Lab) -> Iterator[object]:
    """A fresh browser tab (waits cut to the run's budget); closed, and its kernels shut down, after."""
    if left(1) < 1:
        pytest.fail(f"the end-to-end run is past its budget of {BUDGET_S:.0f} s")
    tab = browser.new_page()
    tab.set_default_timeout(max(1.0, left(60)) * 1000)
    try:
        yield tab
    finally:
        tab.close()
        try:
            lab.shutdown_kernels()
        except OSError:
            pass


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The folder for screenshots (test-artifacts/e2e, or $VARFUNC_E2E_ARTIFACTS)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
