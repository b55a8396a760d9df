"""The sync client against a real gate: roles, answers, typed errors, limits, transports."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest

import soundgate
from gateproc import REPO, TOKENS, start_gate


# --- hello and roles ---------------------------------------------------------------


@pytest.mark.parametrize("name,role", [("agent", "agent"), ("approver", "approver"), ("operator", "operator")])
def test_hello_grants_the_tokens_role_on_both_transports(gate, name, role):
    for where in ({"port": gate.port}, {"path": gate.path}):
        with soundgate.connect(token=TOKENS[name], **where) as c:
            assert c.role == role
            assert c.server.startswith("soundgate ")


def test_unknown_token_is_unauthenticated(gate):
    with pytest.raises(soundgate.Unauthenticated) as e:
        soundgate.connect(token="no-such-token-0123456789", port=gate.port)
    assert e.value.type == "unauthenticated" and e.value.code == -32001


def test_agent_may_not_decide(agent, run):
    assert agent.admit(run, "wire", 1, gated=True).held
    with pytest.raises(soundgate.Forbidden) as e:
        agent.decide(run, "wire", "approve")
    assert e.value.type == "forbidden" and e.value.method == "decide"
    assert agent.status(run)["pending"] == ["wire"]  # the refusal changed nothing


def test_scoped_token_is_forbidden_outside_its_runs(gate, operator, run):
    with soundgate.connect(token=TOKENS["scoped"], port=gate.port) as scoped:
        with pytest.raises(soundgate.Forbidden):
            scoped.admit(run, "k", 1)


# --- the answers --------------------------------------------------------------------


def test_admit_complete_duplicate(agent, run):
    a = agent.admit(run, "send-email", 1)
    assert a.admitted and a.epoch == 1 and str(a) == "admit"
    assert agent.admit(run, "send-email", 1).duplicate  # admitted once, ever
    assert agent.complete(run, "send-email", "ok", "250 OK") == {"repeat": False}
    assert agent.complete(run, "send-email", "ok", "250 OK") == {"repeat": True}
    d = agent.admit(run, "send-email", 1)
    assert (d.answer, d.outcome, d.result) == ("duplicate", "ok", "250 OK")
    with pytest.raises(soundgate.Conflict):
        agent.complete(run, "send-email", "ok", "other")


def test_empty_result_of_a_completed_effect_is_the_empty_string(agent, run):
    agent.admit(run, "k", 1)
    agent.complete(run, "k", "ok")
    d = agent.admit(run, "k", 1)
    assert (d.outcome, d.result) == ("ok", "")


def test_gated_effect_holds_its_siblings_until_approved(agent, approver, run):
    assert agent.admit(run, "wire-money", 1, gated=True).held
    assert agent.admit(run, "delete-branch", 1).held  # P1: the sibling waits too
    assert approver.decide(run, "wire-money", "approve") == {"decision": "approve", "repeat": False}
    assert approver.decide(run, "wire-money", "approve")["repeat"] is True
    assert agent.admit(run, "delete-branch", 1).admitted
    assert agent.admit(run, "wire-money", 1).admitted


def test_reject_denies_the_held_siblings(agent, approver, run):
    agent.admit(run, "wire-money", 1, gated=True)
    agent.admit(run, "post", 1)
    approver.decide(run, "wire-money", "reject")
    for k in ("wire-money", "post"):
        a = agent.admit(run, k, 1)
        assert (a.answer, a.reason, str(a)) == ("denied", "rejected", "denied(rejected)")
    with pytest.raises(soundgate.NotPending):
        approver.decide(run, "never-asked", "approve")


def test_parked_admit_is_answered_by_the_decision(gate, agent, approver, run):
    agent.admit(run, "gate", 1, gated=True)
    got = {}

    def park():
        with soundgate.connect(token=TOKENS["agent"], port=gate.port) as a2:
            t0 = time.monotonic()
            got["answer"] = a2.admit(run, "sibling", 1, wait_ms=20000)
            got["took"] = time.monotonic() - t0

    t = threading.Thread(target=park)
    t.start()
    time.sleep(0.2)
    assert "answer" not in got  # still parked
    approver.decide(run, "gate", "approve")
    t.join(10)
    assert got["answer"].admitted and got["took"] < 10


def test_admit_wait_returns_the_last_held_answer_when_time_runs_out(agent, run):
    agent.admit(run, "gate", 1, gated=True)
    t0 = time.monotonic()
    a = agent.admit_wait(run, "sibling", 1, wait_ms=100, total_ms=300)
    assert a.held and 0.25 < time.monotonic() - t0 < 5


def test_cancel_and_fence(agent, operator, run):
    assert operator.fence(run)["epoch"] == 2
    a = agent.admit(run, "late", 1)
    assert (a.answer, a.reason, a.epoch) == ("denied", "stale_epoch", 2)
    with pytest.raises(soundgate.BadEpoch):
        agent.admit(run, "k", 3)
    c = operator.cancel(run)
    assert c["status"] == "cancelled"
    assert agent.admit(run, "k", c["epoch"]).reason == "cancelled"
    with pytest.raises(soundgate.RunFinal):
        operator.fence(run)


def test_status_reads_run_and_effect(agent, operator, run_id):
    with pytest.raises(soundgate.UnknownRun):
        agent.status(run_id)
    r = operator.open(run_id, timeout_ms=60000)
    assert r["created"] is True and r["deadline_ms"] > 0
    assert operator.open(run_id)["created"] is False
    s = agent.status(run_id, "nothing")
    assert s["effect"] == {"key": "nothing", "status": "absent"} and s["pending"] == []


# --- arguments refused before sending -------------------------------------------------


@pytest.mark.parametrize("kwargs,field", [
    ({"epoch": True}, "epoch"),        # a bool is not an int
    ({"epoch": 1.0}, "epoch"),
    ({"epoch": 0}, "epoch"),
    ({"epoch": 2**53}, "epoch"),
    ({"epoch": "1"}, "epoch"),
    ({"wait_ms": 300001}, "wait_ms"),
    ({"wait_ms": False}, "wait_ms"),
    ({"gated": 1}, "gated"),
    ({"key": ""}, "key"),
    ({"key": "k" * 257}, "key"),
    ({"key": "\u20ac" * 86}, "key"),    # 86 characters, 258 bytes
    ({"key": "a\ud800b"}, "key"),       # a lone surrogate has no UTF-8 form
    ({"run": "r" * 129}, "run"),
    ({"run": 7}, "run"),
])
def test_bad_arguments_are_refused_before_sending(agent, run, kwargs, field):
    args = {"run": run, "key": "k", "epoch": 1, **kwargs}
    with pytest.raises(soundgate.ArgumentError) as e:
        agent.admit(args.pop("run"), args.pop("key"), args.pop("epoch"), **args)
    assert e.value.field == field
    assert agent.status(run, "k")["effect"]["status"] == "absent"  # nothing reached the gate
    assert not agent.closed


def test_limits_are_bytes_and_inclusive(agent, operator, run_id):
    run = run_id + "-" + "\u20ac" * ((128 - len(run_id) - 1) // 3)
    run += "x" * (128 - len(run.encode()))
    assert len(run.encode()) == 128
    assert operator.open(run)["run"] == run
    key = "\u00e9" * 128  # 256 bytes
    assert agent.admit(run, key, 1).admitted
    result = "r" * soundgate.RESULT_BYTES_MAX
    agent.complete(run, key, "ok", result)
    assert agent.admit(run, key, 1).result == result
    with pytest.raises(soundgate.ArgumentError) as e:
        agent.complete(run, key, "ok", result + "r")
    assert e.value.field == "result"


def test_a_line_over_the_limit_is_refused_and_the_connection_stays(agent, run):
    agent.admit(run, "k", 1)
    with pytest.raises(soundgate.RequestTooLargeError) as e:
        agent.complete(run, "k", "ok", "\x01" * 16000)  # 16,000 bytes, each escaped to six
    assert e.value.size > soundgate.LINE_BYTES_MAX
    assert agent.complete(run, "k", "ok", "\x01" * 100) == {"repeat": False}
    assert agent.admit(run, "k", 1).result == "\x01" * 100


def test_an_answer_longer_than_any_request_is_read(gate, agent, run):
    keys = [f"{i:04d}-" + "k" * 245 for i in range(300)]
    for k in keys:
        assert agent.admit(run, k, 1, gated=True).held
    s = agent.status(run)
    assert s["pending"] == sorted(keys)  # an answer line of about 76 KB


# --- the connection ---------------------------------------------------------------------


def test_closed_client_raises(gate):
    c = soundgate.connect(token=TOKENS["agent"], port=gate.port)
    c.close()
    assert c.closed
    with pytest.raises(soundgate.ConnectionClosedError):
        c.status("any")


def test_gate_going_away_breaks_the_connection():
    g = start_gate()
    c = soundgate.connect(token=TOKENS["operator"], port=g.port)
    c.open("r")
    g.stop()
    with pytest.raises(soundgate.ConnectionClosedError):
        c.status("r")
    with pytest.raises(soundgate.ConnectionClosedError):
        c.status("r")


def test_nothing_listening_is_a_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(soundgate.ConnectionClosedError):
        soundgate.connect(token="t", port=port)


def test_silent_server_times_out_and_closes(tmp_path):
    srv = socket.socket(socket.AF_UNIX)
    path = str(tmp_path / "silent.sock")
    srv.bind(path)
    srv.listen(1)
    t0 = time.monotonic()
    with pytest.raises(soundgate.CallTimeoutError) as e:
        soundgate.connect(token="t", path=path, timeout=0.3)
    assert e.value.method == "hello" and 0.25 < time.monotonic() - t0 < 5
    srv.close()


def test_garbage_answer_is_a_protocol_error(tmp_path):
    srv = socket.socket(socket.AF_UNIX)
    path = str(tmp_path / "bad.sock")
    srv.bind(path)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        conn.recv(1024)
        conn.sendall(b"this is not json\n")
        time.sleep(0.5)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    with pytest.raises(soundgate.ProtocolError):
        soundgate.connect(token="t", path=path, timeout=5)
    srv.close()


def test_connect_needs_exactly_one_address():
    with pytest.raises(ValueError):
        soundgate.connect(token="t")
    with pytest.raises(ValueError):
        soundgate.connect(token="t", port=1, path="/x")
    with pytest.raises(soundgate.ArgumentError):
        soundgate.connect(token="", port=1)


# --- the error types are the protocol's -------------------------------------------------


def test_error_classes_are_the_protocols_error_table():
    text = (REPO / "docs" / "protocol.md").read_text()
    section = text[text.index("## Errors"):text.index("## Limits")]
    table = dict((t, int(c)) for c, t in re.findall(r"^\| (-\d+) \| `([a-z_0-9]+)` \|", section, re.M))
    assert table, "no error table found in docs/protocol.md"
    assert set(soundgate.ERROR_CLASSES) == set(table)
    for typ, cls in soundgate.ERROR_CLASSES.items():
        assert cls.TYPE == typ and issubclass(cls, soundgate.GateError)
        assert soundgate.error_class(typ) is cls
    assert soundgate.error_class("from_a_later_release") is soundgate.GateError


def test_error_codes_match_what_the_gate_sends(agent, run_id):
    with pytest.raises(soundgate.UnknownRun) as e:
        agent.admit(run_id, "k", 1)
    assert e.value.code == -32010


def test_token_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("SOUNDGATE_TOKEN", raising=False)
    monkeypatch.delenv("SOUNDGATE_TOKEN_FILE", raising=False)
    assert soundgate.token() is None
    assert soundgate.token("flag") == "flag"
    monkeypatch.setenv("SOUNDGATE_TOKEN", "from-env")
    assert soundgate.token() == "from-env"
    f = tmp_path / "tok"
    f.write_text("from-file\n")
    assert soundgate.token(file=str(f)) == "from-file"  # a file named outright wins over the environment
    monkeypatch.delenv("SOUNDGATE_TOKEN")
    monkeypatch.setenv("SOUNDGATE_TOKEN_FILE", str(f))
    assert soundgate.token() == "from-file"
    for bad in ("", "\n", "two\nlines\n"):
        f.write_text(bad)
        with pytest.raises(soundgate.ArgumentError):
            soundgate.token(file=str(f))
    with pytest.raises(soundgate.ArgumentError):
        soundgate.token(file=str(Path(tmp_path) / "missing"))


def test_the_tests_use_the_installed_package():
    pkg = Path(soundgate.__file__).resolve().parent
    assert (pkg / "py.typed").is_file(), "py.typed is not installed: type checkers would ignore the package"
    if os.environ.get("SOUNDGATE_PY_EXPECT_INSTALLED"):
        assert "site-packages" in pkg.parts, f"imported from {pkg}, not from the installed copy"
