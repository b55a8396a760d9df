"""Temporal (Python SDK, temporalio): the paper's contrast, a durable
execution engine whose workflows are replayed from an event history and whose
activities carry cancellation and timeouts as part of the workflow.

Its workflows need a Temporal server. The SDK's test servers
(WorkflowEnvironment.start_time_skipping, and start_local, the dev server)
download a server binary at run time, which this machine cannot do (no network
besides the package registries), and no registry package ships the binary. Each
run tries both servers again and records what they answered as the reason of
every case, n/a in both variants; a server that starts fails the run, so that
the contrast is measured as soon as it can be.
"""

from __future__ import annotations

import json
import subprocess
import sys

META = {
    "framework": "Temporal (contrast)",
    "package": "temporalio",
    "primitive": "durable workflows with activities (the paper's contrast)",
    "note": "not run: its test and dev servers download a binary at run time",
}

_ATTEMPT = """
import asyncio, json
from temporalio.testing import WorkflowEnvironment

async def attempt():
    why = []
    for name in ("start_time_skipping", "start_local"):
        try:
            env = await asyncio.wait_for(getattr(WorkflowEnvironment, name)(), 60)
        except Exception as e:
            first = (str(e).strip().splitlines() or [""])[0][:160]
            why.append(f"WorkflowEnvironment.{name}: {type(e).__name__}: {first}")
            continue
        await env.shutdown()
        return {"started": name}
    return {"why": "; ".join(why)}

print(json.dumps(asyncio.run(attempt())), flush=True)
"""


def _servers_unavailable() -> str:
    """Tries both of the SDK's servers, now, and returns why neither runs. A server that
    starts is an error, not an n/a: the contrast could then be measured, and must be.
    The attempt runs in a child process: temporalio's native runtime crashed the
    interpreter at exit here (SIGSEGV after the answer was printed)."""
    p = subprocess.run([sys.executable, "-c", _ATTEMPT], capture_output=True, text=True, timeout=180)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1][:200]
        raise RuntimeError(f"the Temporal server attempt gave no answer (exit {p.returncode}): {tail}")
    ans = json.loads(lines[-1])
    if "started" in ans:
        raise RuntimeError(f"Temporal's {ans['started']} server started on this machine: the paper's contrast can be "
                           "measured now; write its probes in probes/py/frameworks/temporal.py")
    return str(ans["why"])


_WHY = ("no Temporal server runs here: its test and dev servers download a server binary at run time, and this "
        "machine reaches no network but the package registries; tried at this run: " + _servers_unavailable())

PROBES = [{"property": p, "case": c, "unavailable": _WHY} for p, cs in (
    ("B1", ("probe", "control")),
    ("B2", ("probe", "control")),
    ("B3", ("probe", "replay-after-crash", "control")),
    ("B4", ("cancel/cooperative", "cancel/uncooperative", "timeout/cooperative", "timeout/uncooperative", "control")),
) for c in cs]
