"""The contract's scenario files (testdata/scenarios), unchanged, through the Python client.

Each request goes over the wire on the connection of the role that may send it, and its
answer is rendered as internal/scenario renders a core reply; what no request can do
(set the clock, take the timeouts due, retire a run) goes to the scenario gate's control
input. The expected outputs are the files' own: the Go core, the Go server and this
client must all print them.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import soundgate
from gateproc import REPO, TOKENS, ScenarioGate

DIR = REPO / "testdata" / "scenarios"
FILES = sorted(DIR.glob("*.txt"))


def parse(path: Path) -> List[Tuple[int, str, str]]:
    """The cases of a datadriven file: (line number, command line, expected output)."""
    lines = path.read_text().split("\n")
    cases, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        start, cmd = i + 1, line
        i += 1
        if i >= len(lines) or lines[i] != "----":
            raise ValueError(f"{path.name}:{start}: want ---- after the command")
        i += 1
        out = []
        while i < len(lines) and lines[i] != "":
            out.append(lines[i])
            i += 1
        cases.append((start, cmd, "".join(o + "\n" for o in out)))
    return cases


def go_quote(s: str) -> str:
    """Go's %q (strconv.Quote) for the strings the scenarios hold."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[ch])
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif o < 0x80 or ch.isprintable():
            out.append(ch)
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return "".join(out) + '"'


def args_of(cmd: str) -> Tuple[str, Dict[str, Optional[str]]]:
    words = shlex.split(cmd)
    args: Dict[str, Optional[str]] = {}
    for w in words[1:]:
        k, eq, v = w.partition("=")
        args[k] = v if eq else None
    return words[0], args


def run_view(r: dict, with_deadline: bool) -> str:
    s = f"run {r['run']} {r['status']} epoch={r['epoch']} pending=[{' '.join(r.get('pending', []))}]"
    if with_deadline and r.get("deadline_ms"):
        s += f" deadline={r['deadline_ms']}"
    return s + "\n"


class Driver:
    def __init__(self, g: ScenarioGate) -> None:
        self.g = g
        self.now = 0
        self.agent = soundgate.connect(token=TOKENS["agent"], port=g.port)
        self.approver = soundgate.connect(token=TOKENS["approver"], path=g.path)
        self.operator = soundgate.connect(token=TOKENS["operator"], port=g.port)

    def close(self) -> None:
        for c in (self.agent, self.approver, self.operator):
            c.close()

    def step(self, cmd: str) -> str:
        op, a = args_of(cmd)
        if op == "clock":
            self.now = int(a["now"] or 0)
            return self.g.control({"cmd": "clock", "now": self.now})
        if op == "timeout":
            return self.g.control({"cmd": "timeout"})
        if op == "retire":
            return self.g.control({"cmd": "retire", "run": a["run"], "upto": "upto" in a})
        try:
            return self.request(op, a)
        except soundgate.GateError as e:
            return f"error: {e.type}\n"

    def request(self, op: str, a: Dict[str, Optional[str]]) -> str:
        run = a.get("run") or ""
        if op == "open":
            timeout = int(a["deadline"]) - self.now if a.get("deadline") else None
            r = self.operator.open(run, timeout if timeout and timeout > 0 else None)
            return f"run {r['run']} {r['status']} epoch={r['epoch']} created={str(r['created']).lower()}\n"
        if op == "admit":
            ans = self.agent.admit(run, a["key"] or "", int(a["epoch"] or 0), gated="gated" in a)
            s = ans.answer
            if ans.denied:
                s += f" reason={ans.reason}"
            if ans.outcome is not None:
                s += f" outcome={ans.outcome} result={go_quote(ans.result or '')}"
            return s + f" epoch={ans.epoch}\n"
        if op == "decide":
            r = self.approver.decide(run, a["key"] or "", "approve" if "approve" in a else "reject")
            return f"decided {r['decision']} repeat={str(r['repeat']).lower()}\n"
        if op == "complete":
            r = self.agent.complete(run, a["key"] or "", "ok" if "ok" in a else "failed", a.get("result") or "")
            return f"completed repeat={str(r['repeat']).lower()}\n"
        if op == "cancel":
            return run_view({**self.operator.cancel(run), "pending": []}, False)
        if op == "fence":
            r = self.operator.fence(run)
            return run_view({"run": r["run"], "status": "active", "epoch": r["epoch"], "pending": []}, False)
        if op == "status":
            key = a.get("key")
            r = self.agent.status(run, key)
            s = run_view(r, True)
            if key is not None:
                e = r["effect"]
                s += f"effect {e['key']} {e['status']}"
                if e["status"] in ("held", "released"):
                    s += f" epoch={e['epoch']} gated={str(e.get('gated', False)).lower()}"
                if e.get("approved"):
                    s += " approved"
                if e.get("outcome"):
                    s += f" outcome={e['outcome']} result={go_quote(e.get('result', ''))}"
                s += "\n"
            return s
        raise ValueError(f"unknown scenario command {op!r}")


def test_the_scenario_files_are_there():
    assert len(FILES) >= 8, f"no scenario files in {DIR}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario(path: Path):
    g = ScenarioGate()
    d = Driver(g)
    try:
        cases = parse(path)
        assert cases, f"{path.name} holds no case"
        for line, cmd, want in cases:
            got = d.step(cmd)
            assert got == want, f"{path.name}:{line}: {cmd}\n--- want\n{want}--- got\n{got}"
    finally:
        d.close()
        g.stop()
