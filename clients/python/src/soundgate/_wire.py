"""The wire of protocol version 1 (docs/protocol.md): limits, request encoding, answer decoding.

Everything here is pure (no I/O), so that the sync and the asyncio clients share one
encoder and one decoder, and the property tests exercise exactly what is sent.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from .errors import ArgumentError, GateError, ProtocolError, RequestTooLargeError

PROTOCOL_VERSION = 1
LINE_BYTES_MAX = 65536
"""The longest request line the gate reads, without its LF."""
RUN_BYTES_MAX = 128
KEY_BYTES_MAX = 256
RESULT_BYTES_MAX = 16384
TOKEN_BYTES_MAX = 512
WAIT_MS_MAX = 300_000
TIMEOUT_MS_MAX = 2_592_000_000
EPOCH_MAX = 2**53 - 1
DESCRIPTION_BYTES_MAX = 512
REASON_BYTES_MAX = 512
PENDING_LIMIT_MAX = 1000
CURSOR_BYTES_MAX = 1024
_ARGS_DIGEST = re.compile(r"(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})\Z")

ANSWERS = ("admit", "held", "duplicate", "denied")
REASONS = ("cancelled", "timed_out", "stale_epoch", "rejected", "retired")
DECISIONS = ("approve", "reject")
OUTCOMES = ("ok", "failed")

Id = int


def utf8_len(field: str, value: Any, lo: int, hi: int) -> int:
    """Checks that value is a str of lo..hi UTF-8 bytes and returns its length.

    A lone surrogate has no UTF-8 form; json.dumps would send it as a \\u escape that
    the gate refuses, so it is refused here, before anything is sent.
    """
    if not isinstance(value, str):
        raise ArgumentError(field, f"must be a str, not {type(value).__name__}")
    try:
        n = len(value.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise ArgumentError(field, f"holds a lone surrogate at index {e.start}: not encodable as UTF-8") from None
    if n < lo or n > hi:
        raise ArgumentError(field, f"must be {lo}..{hi} bytes of UTF-8, not {n}")
    return n


def int_in(field: str, value: Any, lo: int, hi: int) -> int:
    """Checks that value is an int in [lo, hi]; a bool is not an int here (True is not 1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(field, f"must be an int, not {type(value).__name__}")
    if value < lo or value > hi:
        raise ArgumentError(field, f"must be in [{lo}, {hi}], not {value}")
    return int(value)


def one_of(field: str, value: Any, names: Tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in names:
        raise ArgumentError(field, f"must be one of {', '.join(names)}, not {value!r}")
    return value


def _run(run: Any) -> str:
    utf8_len("run", run, 1, RUN_BYTES_MAX)
    return str(run)


def _key(key: Any) -> str:
    utf8_len("key", key, 1, KEY_BYTES_MAX)
    return str(key)


def hello_params(token: Any) -> Dict[str, Any]:
    utf8_len("token", token, 1, TOKEN_BYTES_MAX)
    return {"version": PROTOCOL_VERSION, "token": token}


def open_params(run: Any, timeout_ms: Optional[int]) -> Dict[str, Any]:
    p: Dict[str, Any] = {"run": _run(run)}
    if timeout_ms is not None:
        p["timeout_ms"] = int_in("timeout_ms", timeout_ms, 1, TIMEOUT_MS_MAX)
    return p


def note_text(field: str, value: Any, hi: int) -> str:
    """Checks a description or a reason: 0..hi bytes of UTF-8 with no control character
    (Unicode's Cc) but tab and line feed, the gate's rule (docs/contract.md)."""
    utf8_len(field, value, 0, hi)
    for i, ch in enumerate(value):
        if ch not in "\t\n" and unicodedata.category(ch) == "Cc":
            raise ArgumentError(field, f"holds the control character U+{ord(ch):04X} at index {i}")
    return str(value)


def args_digest(data: bytes) -> str:
    """The args digest of ``data``: "sha256:" and its SHA-256 in lower-case hex. Hash the
    effect's arguments in a canonical encoding (the JSON of a tool call, say)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _args_digest(field: str, value: Any) -> str:
    if not isinstance(value, str) or not _ARGS_DIGEST.match(value):
        raise ArgumentError(field, 'must be "sha256:" and 64 lower-case hex digits, or "sha512:" and 128')
    return value


def admit_params(run: Any, key: Any, epoch: Any, gated: Any, wait_ms: Any,
                 description: Optional[str] = None, digest: Optional[str] = None) -> Dict[str, Any]:
    p: Dict[str, Any] = {"run": _run(run), "key": _key(key), "epoch": int_in("epoch", epoch, 1, EPOCH_MAX)}
    if not isinstance(gated, bool):
        raise ArgumentError("gated", f"must be a bool, not {type(gated).__name__}")
    if gated:
        p["gated"] = True
    if int_in("wait_ms", wait_ms, 0, WAIT_MS_MAX):
        p["wait_ms"] = wait_ms
    if description is not None and note_text("description", description, DESCRIPTION_BYTES_MAX):
        p["description"] = description
    if digest is not None:
        p["args_digest"] = _args_digest("args_digest", digest)
    return p


def decide_params(run: Any, key: Any, decision: Any, reason: Optional[str] = None) -> Dict[str, Any]:
    p: Dict[str, Any] = {"run": _run(run), "key": _key(key), "decision": one_of("decision", decision, DECISIONS)}
    if reason is not None and note_text("reason", reason, REASON_BYTES_MAX):
        p["reason"] = reason
    return p


def pending_params(limit: Optional[int], cursor: Optional[str]) -> Dict[str, Any]:
    p: Dict[str, Any] = {}
    if limit is not None:
        p["limit"] = int_in("limit", limit, 1, PENDING_LIMIT_MAX)
    if cursor is not None:
        utf8_len("cursor", cursor, 1, CURSOR_BYTES_MAX)
        p["cursor"] = cursor
    return p


def complete_params(run: Any, key: Any, outcome: Any, result: Any) -> Dict[str, Any]:
    p: Dict[str, Any] = {"run": _run(run), "key": _key(key), "outcome": one_of("outcome", outcome, OUTCOMES)}
    if utf8_len("result", result, 0, RESULT_BYTES_MAX):
        p["result"] = result
    return p


def run_params(run: Any) -> Dict[str, Any]:
    return {"run": _run(run)}


def status_params(run: Any, key: Optional[str]) -> Dict[str, Any]:
    p: Dict[str, Any] = {"run": _run(run)}
    if key is not None:
        p["key"] = _key(key)
    return p


def encode_request(id: Id, method: str, params: Mapping[str, Any]) -> bytes:
    """One request line, LF included. Raises RequestTooLargeError past the line limit.

    ensure_ascii=False keeps a result of non-ASCII text at its UTF-8 size (an escape
    costs up to six bytes per character); control characters are still escaped.
    """
    line = json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params},
                      ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(line) > LINE_BYTES_MAX:
        raise RequestTooLargeError(method, len(line), LINE_BYTES_MAX)
    return line + b"\n"


Answer = Tuple[Optional[Union[int, str]], Optional[Dict[str, Any]], Optional[Dict[str, Any]]]


def decode_answer(line: bytes) -> Answer:
    """Splits one answer line into (id, result, error). Exactly one of result and error is set."""
    try:
        msg = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ProtocolError(f"answer is not JSON ({e}): {line[:80]!r}") from None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        raise ProtocolError(f"answer is not a JSON-RPC 2.0 object: {line[:80]!r}")
    id = msg.get("id")
    if id is not None and (isinstance(id, bool) or not isinstance(id, (int, str))):
        raise ProtocolError(f"answer id is not an int or a str: {id!r}")
    result, error = msg.get("result"), msg.get("error")
    if (result is None) == (error is None):
        raise ProtocolError(f"answer has {'both' if result is not None else 'neither'} result and error")
    if result is not None and not isinstance(result, dict):
        raise ProtocolError(f"result is not an object: {result!r}")
    if error is not None and (not isinstance(error, dict) or not isinstance(error.get("code"), int)):
        raise ProtocolError(f"error is not a JSON-RPC error object: {error!r}")
    return id, result, error


# The types whose answer closes the connection (docs/protocol.md, "Errors").
CLOSING_TYPES = frozenset({"unauthenticated", "unsupported_version", "shutting_down"})


def error_closes(err: GateError) -> bool:
    """Whether the gate closes the connection after this error (overloaded only when id is null)."""
    return err.type in CLOSING_TYPES


class AdmitAnswer:
    """The gate's answer to admit.

    answer is one of ANSWERS; reason is set when denied; epoch is the run's epoch;
    outcome and result are set for a duplicate of a completed effect.
    """

    __slots__ = ("answer", "reason", "epoch", "outcome", "result")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        answer = raw.get("answer")
        if answer not in ANSWERS:
            raise ProtocolError(f"unknown admit answer {answer!r}")
        reason = raw.get("reason")
        if answer == "denied" and reason not in REASONS:
            raise ProtocolError(f"unknown denial reason {reason!r}")
        epoch = raw.get("epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise ProtocolError(f"admit answer without an integer epoch: {epoch!r}")
        outcome = raw.get("outcome")
        if outcome is not None and outcome not in OUTCOMES:
            raise ProtocolError(f"unknown outcome {outcome!r}")
        self.answer: str = answer
        self.reason: Optional[str] = reason
        self.epoch: int = epoch
        self.outcome: Optional[str] = outcome
        self.result: Optional[str] = raw.get("result", "" if outcome is not None else None)

    @property
    def admitted(self) -> bool:
        """Whether the caller may perform the effect now."""
        return self.answer == "admit"

    @property
    def held(self) -> bool:
        return self.answer == "held"

    @property
    def duplicate(self) -> bool:
        return self.answer == "duplicate"

    @property
    def denied(self) -> bool:
        return self.answer == "denied"

    def __str__(self) -> str:
        return f"denied({self.reason})" if self.denied else self.answer

    def __repr__(self) -> str:
        return (f"AdmitAnswer(answer={self.answer!r}, reason={self.reason!r}, epoch={self.epoch!r}, "
                f"outcome={self.outcome!r}, result={self.result!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AdmitAnswer):
            return NotImplemented
        return all(getattr(self, s) == getattr(other, s) for s in self.__slots__)


def gate_error(method: str, error: Mapping[str, Any]) -> GateError:
    from .errors import error_class

    raw = error.get("data")
    data: Dict[str, Any] = raw if isinstance(raw, dict) else {}
    t = data.get("type")
    typ = t if isinstance(t, str) else "unknown"
    return error_class(typ)(method, error.get("code"), typ, str(error.get("message", "")), data.get("field"), data)
