"""Fixtures of test_python_host.py: one real gate per session, the real upstream, a run.

The gate is started as the Python client's own tests start theirs
(clients/python/tests/gateproc.py: `soundgate serve` in memory mode with the roles
fixture of impl/server/servertest, $SOUNDGATE_BIN or a binary built from ./cmd/soundgate).
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "clients" / "python" / "tests"))

from gateproc import TOKENS, Gate, start_gate  # noqa: E402

FS_JS = REPO / "ci" / "mcp" / "upstream" / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"

_runs = itertools.count(1)


@pytest.fixture(scope="session")
def gate() -> Iterator[Gate]:
    g = start_gate()
    yield g
    g.stop()


@pytest.fixture(scope="session")
def upstream() -> str:
    """The real MCP server, as ci/mcp/install.sh installs it; under CI its absence fails."""
    node = shutil.which("node")
    if not FS_JS.is_file() or node is None:
        why = f"the real MCP upstream is not installed ({FS_JS} exists: {FS_JS.is_file()}, node: {node})"
        if os.environ.get("CI"):
            pytest.fail(f"{why}: run ci/mcp/install.sh (make test-mcp does)")
        pytest.skip(f"NOT RUN: {why}; run ci/mcp/install.sh, or make test-mcp")
    return str(FS_JS)


@pytest.fixture
def run_id() -> str:
    return f"mcp-py-{os.getpid()}-{next(_runs)}"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """The one directory the upstream may touch (its real path: the server resolves links)."""
    d = tmp_path / "files"
    d.mkdir()
    return d.resolve()


@pytest.fixture
def token_file(tmp_path: Path) -> str:
    p = tmp_path / "agent.token"
    p.write_text(TOKENS["agent"] + "\n")
    p.chmod(0o600)
    return str(p)


@pytest.fixture
def run(gate: Gate, run_id: str) -> str:
    """A run the operator opened."""
    import soundgate

    with soundgate.connect(token=TOKENS["operator"], path=gate.path) as op:
        op.open(run_id)
    return run_id
