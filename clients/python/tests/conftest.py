"""Fixtures: one real gate per test session, clients of each role, fresh run ids."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import soundgate  # noqa: E402
from gateproc import TOKENS, Gate, start_gate  # noqa: E402

_runs = itertools.count(1)


@pytest.fixture(scope="session")
def gate() -> Iterator[Gate]:
    g = start_gate()
    yield g
    g.stop()


@pytest.fixture
def run_id() -> str:
    return f"py-{os.getpid()}-{next(_runs)}"


@pytest.fixture
def operator(gate: Gate) -> Iterator[soundgate.Client]:
    with soundgate.connect(token=TOKENS["operator"], port=gate.port) as c:
        yield c


@pytest.fixture
def agent(gate: Gate) -> Iterator[soundgate.Client]:
    with soundgate.connect(token=TOKENS["agent"], port=gate.port) as c:
        yield c


@pytest.fixture
def approver(gate: Gate) -> Iterator[soundgate.Client]:
    with soundgate.connect(token=TOKENS["approver"], path=gate.path) as c:
        yield c


@pytest.fixture
def run(operator: soundgate.Client, run_id: str) -> str:
    operator.open(run_id)
    return run_id
