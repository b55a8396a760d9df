"""Property tests of the encoder and decoder (hypothesis), alone and against the gate's own decoder."""

from __future__ import annotations

import itertools
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import soundgate
from soundgate import _wire
from gateproc import TOKENS

# Any Unicode text with no lone surrogate: what a str may hold and UTF-8 can carry.
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)
# Text with at least one lone surrogate somewhere.
SURROGATE = st.tuples(TEXT, st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), TEXT).map("".join)


def fits(lo, hi):
    return TEXT.filter(lambda s: lo <= len(s.encode()) <= hi)


RUN, KEY, RESULT = fits(1, 128), fits(1, 256), fits(0, 16384)
PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(run=RUN, key=KEY, result=RESULT, id=st.integers(1, 2**53 - 1))
def test_a_request_line_decodes_to_its_params(run, key, result, id):
    params = _wire.complete_params(run, key, "ok", result)
    try:
        line = _wire.encode_request(id, "complete", params)
    except soundgate.RequestTooLargeError as e:
        assert e.size > _wire.LINE_BYTES_MAX
        return
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # one line, whatever the text holds
    assert len(line) - 1 <= _wire.LINE_BYTES_MAX
    msg = json.loads(line.decode("utf-8"))
    assert msg == {"jsonrpc": "2.0", "id": id, "method": "complete", "params": params}
    assert msg["params"]["run"] == run and msg["params"].get("result", "") == result


@PROPS
@given(bad=SURROGATE, field=st.sampled_from(["run", "key", "result", "token"]))
def test_a_lone_surrogate_is_refused_in_every_field(bad, field):
    args = {"run": "r", "key": "k", "result": "", "token": "t"}
    args[field] = bad
    with pytest.raises(soundgate.ArgumentError) as e:
        if field == "token":
            _wire.hello_params(args["token"])
        else:
            _wire.complete_params(args["run"], args["key"], "ok", args["result"])
    assert e.value.field == field


@PROPS
@given(n=st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3), st.none()))
def test_epochs_are_exact_ints_in_range(n):
    ok = isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 2**53 - 1
    if ok:
        assert _wire.admit_params("r", "k", n, False, 0)["epoch"] == n
    else:
        with pytest.raises(soundgate.ArgumentError):
            _wire.admit_params("r", "k", n, False, 0)


@PROPS
@given(raw=st.binary(max_size=200))
def test_any_answer_bytes_decode_or_raise_a_protocol_error(raw):
    try:
        id, result, error = _wire.decode_answer(raw)
    except soundgate.ProtocolError:
        return
    assert (result is None) != (error is None)


@pytest.mark.parametrize("raw", [
    {"answer": "maybe", "epoch": 1},
    {"answer": "denied", "reason": "because", "epoch": 1},
    {"answer": "admit"},
    {"answer": "admit", "epoch": True},
    {"answer": "duplicate", "outcome": "sort-of", "epoch": 1},
])
def test_an_admit_answer_outside_the_protocol_is_a_protocol_error(raw):
    with pytest.raises(soundgate.ProtocolError):
        soundgate.AdmitAnswer(raw)


# --- the gate's own decoder agrees ------------------------------------------------------

_runs = itertools.count(1)


@pytest.fixture(scope="module")
def clients(gate):
    op = soundgate.connect(token=TOKENS["operator"], port=gate.port)
    ag = soundgate.connect(token=TOKENS["agent"], path=gate.path)
    yield op, ag
    op.close()
    ag.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=fits(1, 100), key=KEY, result=RESULT)
def test_the_gate_reads_back_every_string_byte_for_byte(clients, run, key, result):
    op, ag = clients
    run = f"{os.getpid()}-{next(_runs)}-{run}"[:100]
    while len(run.encode()) > 128:
        run = run[:-1]
    assert op.open(run)["run"] == run
    assert ag.admit(run, key, 1).admitted
    assert ag.status(run, key)["effect"]["key"] == key
    try:
        ag.complete(run, key, "ok", result)
    except soundgate.RequestTooLargeError:
        return  # refused before sending: nothing to compare
    d = ag.admit(run, key, 1)
    assert d.duplicate and d.result == result
