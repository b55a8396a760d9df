"""Real gates for the tests: `soundgate serve` in memory mode, and the scenario gate.

The binaries are built from this repository with `go build` once per process, or taken
from $SOUNDGATE_BIN (and $SCENARIOGATE_BIN); a gate started here writes its trace into $SOUNDGATE_TRACE_DIR
when that is set (as clients/node/test/server.mjs does), for trace validation.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "impl" / "server" / "servertest" / "roles.json"


def _tokens() -> Dict[str, str]:
    by_name = {t["name"]: t["token"] for t in json.loads(FIXTURE.read_text())["tokens"]}
    return {"agent": by_name["agent"], "scoped": by_name["scoped"], "approver": by_name["alice"],
            "operator": by_name["ops"]}


TOKENS = _tokens()

_built: Dict[str, str] = {}
_build_lock = threading.Lock()


def _build(pkg: str, name: str, env_bin: Optional[str]) -> str:
    if env_bin and os.environ.get(env_bin):
        return os.environ[env_bin]
    with _build_lock:
        if pkg not in _built:
            out = Path(tempfile.mkdtemp(prefix="soundgate-py-bin-")) / name
            subprocess.run(["go", "build", "-o", str(out), pkg], cwd=REPO, check=True)
            _built[pkg] = str(out)
        return _built[pkg]


def gate_binary() -> str:
    return _build("./cmd/soundgate", "soundgate", "SOUNDGATE_BIN")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_traces = 0


class Gate:
    """A running `soundgate serve` on a loopback port and a Unix socket."""

    def __init__(self, extra_args: Optional[List[str]] = None) -> None:
        global _traces
        self.dir = tempfile.mkdtemp(prefix="soundgate-py-test-")
        roles = Path(self.dir) / "roles.json"
        roles.write_text(FIXTURE.read_text())
        roles.chmod(0o600)
        self.port = _free_port()
        self.path = str(Path(self.dir) / "gate.sock")
        args = [gate_binary(), "serve", "--roles", str(roles), "--listen", f"127.0.0.1:{self.port}",
                "--unix", self.path, "--durability", "memory"]
        if os.environ.get("SOUNDGATE_TRACE_DIR"):
            _traces += 1
            args += ["--trace", str(Path(os.environ["SOUNDGATE_TRACE_DIR"]) / f"trace-py-{os.getpid()}-{_traces}.ndjson")]
        args += extra_args or []
        self.log_path = Path(self.dir) / "server.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gate exited {self.proc.returncode}: {self.log()}")
            if os.path.exists(self.path) and b"listening" in self.log_path.read_bytes():
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return
                except OSError:
                    pass
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"gate did not start within 15s: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_gate(extra_args: Optional[List[str]] = None) -> Gate:
    """Starts a gate with the project's roles fixture (tokens in TOKENS)."""
    return Gate(extra_args)


class ScenarioGate:
    """internal/scenario/scenariogate: a real server whose clock the test sets."""

    def __init__(self) -> None:
        bin = _build("./internal/scenario/scenariogate", "scenariogate", "SCENARIOGATE_BIN")
        self.proc = subprocess.Popen([bin], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        first = json.loads(self.proc.stdout.readline() or "{}")
        if "tcp" not in first:
            self.stop()
            raise RuntimeError("scenariogate did not start")
        self.path: str = first["unix"]
        host, port = first["tcp"].rsplit(":", 1)
        self.host, self.port = host, int(port)

    def control(self, cmd: Dict[str, object]) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        ans = json.loads(self.proc.stdout.readline())
        if "error" in ans:
            raise RuntimeError(f"scenariogate: {ans['error']}")
        return str(ans["out"])

    def stop(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
