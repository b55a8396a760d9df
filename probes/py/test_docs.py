"""The code of every docs/integrations/*-py.md page, run against a real gate.

Each page's first ```python block is a complete program: it reads the gate's port and
the three role tokens from the environment, asserts what the page says, and prints
"ok" last. Needs the frameworks (the venv of probes/install.sh) and the gate
(gateproc: $SOUNDGATE_BIN, or built from this repository)."""

import glob
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "clients", "python", "tests"))

from gateproc import TOKENS, start_gate  # noqa: E402

PAGES = sorted(glob.glob(os.path.join(REPO, "docs", "integrations", "*-py.md")))


def code_of(page):
    m = re.search(r"```python\n(.*?)```", open(page).read(), re.S)
    assert m, f"{page}: no python code block"
    return m.group(1)


@pytest.fixture(scope="module")
def gate():
    g = start_gate()
    yield g
    g.stop()


def test_every_python_framework_has_a_page():
    names = {os.path.basename(p) for p in PAGES}
    assert {"langgraph-py.md", "llamaindex-workflows-py.md", "agent-framework-py.md", "openai-agents-py.md", "crewai-py.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[os.path.basename(p) for p in PAGES])
def test_page_code_runs(gate, page, tmp_path):
    src = tmp_path / "page.py"
    src.write_text(code_of(page))
    env = {**os.environ, "SOUNDGATE_PORT": str(gate.port), "SOUNDGATE_AGENT_TOKEN": TOKENS["agent"],
           "SOUNDGATE_APPROVER_TOKEN": TOKENS["approver"], "SOUNDGATE_OPERATOR_TOKEN": TOKENS["operator"],
           "PYTHONPATH": os.path.join(REPO, "clients", "python", "src"), "CREWAI_DISABLE_TELEMETRY": "true",
           "CREWAI_TRACING_ENABLED": "false", "OTEL_SDK_DISABLED": "true"}
    p = subprocess.run([sys.executable, str(src)], env=env, capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.strip().splitlines()[-1] == "ok", p.stdout[-2000:]
