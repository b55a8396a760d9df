"""run.py runs the Python probes and writes one JSON result per probe run.

    python run.py [--variant unmodified|mediated|all] [--repeat N] [--only NAME] [--out DIR] [--quiet]

Each probe run prints VERDICT, the rule applied and the timestamped event log;
the verdict comes from the rule in harness.py, never from the probe. Results
go where probes/js/run.mjs writes its own (probes/results/raw), as
py.<id>.<variant>.r<rep>.json, so that probes/table.mjs merges them.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.metadata
import inspect
import json
import os
import sys
import threading
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import RULES, UnmodifiedEnv, apply_rule  # noqa: E402

MODULES = [
    "langgraph_interrupt",
    "langgraph_toolnode",
    "llamaindex_workflows",
    "agent_framework",
    "openai_agents",
    "crewai_review",
    "mcp_host",
    "temporal",
]
PROBE_TIMEOUT_S = 20.0


def run_probe(probe, env) -> None:
    """Runs one probe on a thread of its own with a fresh event loop (a probe
    returns a coroutine, or does its work when called), within PROBE_TIMEOUT_S."""
    box: dict = {}

    def target():
        try:
            r = probe["run"](env)
            if inspect.isawaitable(r):
                asyncio.run(_awaited(r))
        except BaseException as e:  # noqa: BLE001
            box["error"] = e
            box["trace"] = traceback.format_exc()

    th = threading.Thread(target=target, daemon=True, name="probe")
    th.start()
    th.join(PROBE_TIMEOUT_S)
    if th.is_alive():
        raise TimeoutError(f"probe did not finish within {int(PROBE_TIMEOUT_S * 1000)} ms")
    if "error" in box:
        raise RuntimeError(box["trace"])


async def _awaited(r):
    return await r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", default="all", choices=["unmodified", "mediated", "all"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "raw"))
    ap.add_argument("--quiet", action="store_true")
    o = ap.parse_args()
    variants = ["unmodified", "mediated"] if o.variant == "all" else [o.variant]

    gate_problem = None
    mediated = None
    if "mediated" in variants:
        import mediated  # noqa: PLC0415

        gate_problem = mediated.gate_available() or None

    os.makedirs(o.out, exist_ok=True)
    results = []
    errors = 0
    for m in MODULES:
        if o.only and o.only not in m:
            continue
        mod = importlib.import_module(f"frameworks.{m}")
        meta = mod.META
        try:
            version = importlib.metadata.version(meta["package"])
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        for variant in variants:
            for probe in mod.PROBES:
                for rep in range(1, o.repeat + 1):
                    pid = f"py_{m}.{probe['property']}.{probe['case'].replace('/', '-')}"
                    base = {"id": pid, "module": m, "language": "Python", "framework": meta["framework"], "package": meta["package"],
                            "version": version, "primitive": meta["primitive"], "property": probe["property"], "case": probe["case"],
                            "about": probe.get("about", ""), "note": meta.get("note", ""), "variant": variant, "repetition": rep, "rule": RULES[probe["property"]]}
                    if probe.get("unavailable"):
                        rec = {**base, "verdict": "UNAVAILABLE", "reason": probe["unavailable"], "events": []}
                    elif variant == "mediated" and (gate_problem or meta.get("mediated_unavailable")):
                        rec = {**base, "verdict": "UNAVAILABLE", "reason": gate_problem or meta["mediated_unavailable"], "events": []}
                    else:
                        env = mediated.MediatedEnv(probe, pid) if variant == "mediated" else UnmodifiedEnv()
                        try:
                            run_probe(probe, env)
                            events = env.log.snapshot()
                            r = apply_rule(probe["property"], events)
                            committed = [e["key"] for e in events if e["kind"] == "effect"]
                            rec = {**base, "verdict": "VIOLATION" if r["violation"] else "CLEAN", "reason": r["reason"],
                                   "committed": committed, "events": events}
                        except Exception as e:  # noqa: BLE001
                            errors += 1
                            rec = {**base, "verdict": "ERROR", "reason": str(e), "events": env.log.snapshot()}
                        finally:
                            env.close()
                    results.append(rec)
                    with open(os.path.join(o.out, f"py.{pid}.{variant}.r{rep}.json"), "w") as f:
                        f.write(json.dumps(rec, indent=2, default=str) + "\n")
                    print(f"{rec['verdict']:<11} {variant:<10} {pid} (run {rep})", flush=True)
                    if not o.quiet:
                        print(f"  rule {probe['property']}: {rec['rule']}")
                        print(f"  why: {rec['reason']}")
                        for e in rec["events"]:
                            rest = {k: v for k, v in e.items() if k not in ("t_ms", "seq", "kind")}
                            print(f"  {e['t_ms']:>10.3f} ms  #{e['seq']:>2} {e['kind']:<7} {json.dumps(rest, default=str)}")
                        sys.stdout.flush()
    if mediated is not None:
        mediated.stop_gate()
    if gate_problem:
        print(f"mediated variant UNAVAILABLE: {gate_problem}")
    with open(os.path.join(o.out, "py.summary.json"), "w") as f:
        f.write(json.dumps([{k: v for k, v in r.items() if k != "events"} for r in results], indent=2, default=str) + "\n")

    def count(v):
        return sum(1 for r in results if r["verdict"] == v)

    print(f"py probes: {len(results)} runs, {count('VIOLATION')} VIOLATION, {count('CLEAN')} CLEAN, "
          f"{count('UNAVAILABLE')} UNAVAILABLE, {count('ERROR')} ERROR", flush=True)
    return 1 if errors or (gate_problem and os.environ.get("CI") == "true") else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # leftover worker threads of a framework (a blocking tool body) must not hold the exit
    os._exit(code)
