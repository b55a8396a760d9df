"""The violation rules B1-B4 on hand-written logs, table-driven: each rule must
be able to say VIOLATION and CLEAN, so that a CLEAN verdict of a probe means
something. Imports only harness.py (no framework) and pytest."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import RULES, TIMING, apply_rule, approval_probes, stop_probes, turn_plan  # noqa: E402


def log(*evs):
    return [{"t_ms": i, "seq": i, "run": "r1", **e} for i, e in enumerate(evs)]


def eff(key, plan="P1"):
    return {"kind": "effect", "key": key, "plan": plan}


def pause(plan="P1"):
    return {"kind": "pause", "plan": plan}


def decide(decision, plan="P1"):
    return {"kind": "decide", "plan": plan, "decision": decision}


def stop(how):
    return {"kind": "stop", "how": how}


CASES = [
    ("B1", "sibling before the decision", log(eff("send"), pause(), decide("approve"), eff("delete")), True),
    ("B1", "effect while paused and never decided", log(pause(), eff("send")), True),
    ("B1", "effects after the decision", log(pause(), decide("approve"), eff("delete"), eff("send")), False),
    ("B1", "effect of another plan during the pause", log(pause("P1"), eff("x", "P2"), decide("approve")), False),
    ("B2", "rejected plan's sibling committed earlier", log(eff("send"), pause(), decide("reject")), True),
    ("B2", "rejected plan's effect after the rejection", log(pause(), decide("reject"), eff("delete")), True),
    ("B2", "rejected plan with no effect", log(pause(), decide("reject")), False),
    ("B2", "approved plan's effects", log(pause(), decide("approve"), eff("delete")), False),
    ("B3", "effect twice", log(eff("prepare"), pause(), decide("approve"), eff("prepare")), True),
    ("B3", "distinct effects once each", log(eff("a"), eff("b")), False),
    ("B4", "effect after cancel", log(stop("cancel"), eff("w", "S1")), True),
    ("B4", "effect after timeout", log(stop("timeout"), eff("w", "S1")), True),
    ("B4", "effect before cancel", log(eff("w", "S1"), stop("cancel")), False),
    ("B4", "effect of another run after cancel", log(stop("cancel"), {**eff("w", "S1"), "run": "r2"}), False),
]


@pytest.mark.parametrize("rule,name,events,violation", CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_rule(rule, name, events, violation):
    assert apply_rule(rule, events)["violation"] is violation


@pytest.mark.parametrize("rule", ["B1", "B2", "B3", "B4"])
def test_each_rule_says_both(rule):
    verdicts = {v for r, _, _, v in CASES if r == rule}
    assert verdicts == {True, False}


def test_unknown_rule():
    with pytest.raises(ValueError, match="unknown rule"):
        apply_rule("B9", [])


def test_rules_and_timing_equal_the_js_harness():
    js = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "js", "lib", "harness.mjs")).read()
    for text in RULES.values():
        assert f'"{text}"' in js
    assert "toolBodyMs: 300, stopAfterMs: 30, settleMs: 500, humanThinkMs: 100, siblingMs: 5" in js
    assert TIMING == {"tool_body_ms": 300, "stop_after_ms": 30, "settle_ms": 500, "human_think_ms": 100, "sibling_ms": 5}


def test_approval_probes_cases_and_words():
    asked = []
    ps = approval_probes({"parallel": "P", "sequence": "S", "resume": "resumed", "reject": "stops", "prepare": "prepares", "replay": "replayed"},
                         lambda env, a: asked.append(a))
    assert [(p["property"], p["case"], p["about"]) for p in ps] == [
        ("B1", "probe", "P; approve; resumed"),
        ("B1", "control", "S; approve; resumed"),
        ("B2", "probe", "P; reject; stops"),
        ("B2", "control", "S; reject; stops"),
        ("B3", "probe", "P; prepares; approve; resumed"),
        ("B3", "replay-after-crash", "P; approve; replayed"),
        ("B3", "control", "S; approve; resumed"),
    ]
    for p in ps:
        p["run"](None)
    assert [(a["parallel"], a["decision"], a["prepare"], a["replay"]) for a in asked] == [
        (True, "approve", False, False), (False, "approve", False, False), (True, "reject", False, False), (False, "reject", False, False),
        (True, "approve", True, False), (True, "approve", False, True), (False, "approve", False, False)]
    assert [p["case"] for p in approval_probes({"parallel": "P", "sequence": "S", "resume": "r", "no_replay": "why"}, lambda e, a: None)
            if p["property"] == "B3"] == ["probe", "control"]


def test_stop_probes_cases_and_unavailable():
    calls = []
    ps = stop_probes({"cancel": "C", "timeout": "T", "signal": "s", "control": "done"}, lambda env, how, body, control: calls.append((how, body, control)))
    assert [(p["case"], p.get("about")) for p in ps] == [
        ("cancel/cooperative", "C; body observes s"), ("cancel/uncooperative", "C; body ignores it"),
        ("timeout/cooperative", "T; body observes s"), ("timeout/uncooperative", "T; body ignores it"), ("control", "done")]
    for p in ps:
        p["run"](None)
    assert calls == [("cancel", "cooperative", False), ("cancel", "uncooperative", False), ("timeout", "cooperative", False),
                     ("timeout", "uncooperative", False), ("cancel", "uncooperative", True)]
    ps = stop_probes({"cancel": "C", "timeout": "T", "signal": "s", "control": "done"}, None, unavailable={"timeout": "none"})
    assert [p.get("unavailable") for p in ps] == [None, None, "none", "none", None]


def test_turn_plan():
    assert turn_plan(["delete_file", "send_email"]) == {"gated": ["delete"], "effects": ["delete", "send_email"]}
    assert turn_plan(["send_email"]) == {"gated": [], "effects": ["send_email"]}
