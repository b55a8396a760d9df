"""The client's exceptions.

A request the gate refused raises a GateError whose class is the protocol's
``data.type`` (``Forbidden`` for "forbidden", ``UnknownRun`` for "unknown_run", ...),
so that callers can ``except soundgate.Forbidden``; an unknown type raises GateError
itself, with ``type`` and ``code`` set (docs/protocol.md: treat it by its code).
Arguments the client refuses before sending raise ArgumentError (a ValueError).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type

__all__ = [
    "SoundgateError",
    "ArgumentError",
    "RequestTooLargeError",
    "ConnectionClosedError",
    "CallTimeoutError",
    "ProtocolError",
    "GateError",
    "ParseError",
    "InvalidUtf8",
    "LineTooLong",
    "DuplicateKey",
    "InvalidRequest",
    "UnknownMethod",
    "UnknownField",
    "WrongType",
    "OutOfRange",
    "MissingField",
    "Internal",
    "Unauthenticated",
    "Forbidden",
    "Unavailable",
    "ShuttingDown",
    "Overloaded",
    "UnsupportedVersion",
    "HelloRequired",
    "HelloRepeated",
    "Quota",
    "UnknownRun",
    "BadEpoch",
    "NotPending",
    "NotAdmitted",
    "Conflict",
    "RunFinal",
    "InvalidArgument",
    "TooManyRuns",
    "TooManyKeys",
    "TooManyPending",
    "RunTooLong",
    "KeyTooLong",
    "ResultTooLong",
    "RunRetired",
    "NotFinished",
    "TooManyRetired",
    "StateFull",
    "WatchRepeated",
    "NotWatching",
    "ERROR_CLASSES",
    "error_class",
]


class SoundgateError(Exception):
    """Base of every exception of this package."""


class ArgumentError(SoundgateError, ValueError):
    """An argument the client refuses before sending anything (the connection stays usable)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"soundgate: {field} {problem}")
        self.field = field


class RequestTooLargeError(ArgumentError):
    """A request whose line would pass the gate's line limit; nothing was sent."""

    def __init__(self, method: str, size: int, limit: int) -> None:
        super().__init__("request", f"of {method} would be a line of {size} bytes, over the limit of {limit}")
        self.size = size
        self.limit = limit


class ConnectionClosedError(SoundgateError, ConnectionError):
    """The connection is closed or broke; every call in flight and every later call raises it."""

    def __init__(self, cause: Optional[BaseException] = None) -> None:
        super().__init__("soundgate: connection closed" + (f": {cause}" if cause else ""))
        self.cause = cause


class CallTimeoutError(SoundgateError, TimeoutError):
    """The answer did not come in time. The request may still take effect: its outcome is
    unknown, so ask again with the same key (admit is idempotent per key)."""

    def __init__(self, method: str, seconds: float) -> None:
        super().__init__(f"soundgate: {method}: no answer within {seconds:g}s (the request's outcome is unknown)")
        self.method = method
        self.seconds = seconds


class ProtocolError(SoundgateError):
    """An answer this client cannot read (a fault of the server or the transport); the connection is closed."""

    def __init__(self, msg: str) -> None:
        super().__init__(f"soundgate: protocol: {msg}")


class GateError(SoundgateError):
    """A request the gate refused. Switch on ``type`` (or the subclass), never on ``message``."""

    TYPE = ""

    def __init__(self, method: str, code: Any, type: str, message: str,
                 field: Optional[str] = None, data: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(f"soundgate: {method}: {message}")
        self.method = method
        self.code = code
        self.type = type
        self.message = message
        self.field = field
        self.data: Dict[str, Any] = dict(data or {})


# One class per error type of protocol version 1, in the order of docs/protocol.md's table;
# written out (not generated at import) so that type checkers see them.
class ParseError(GateError):
    TYPE = 'parse_error'


class InvalidUtf8(GateError):
    TYPE = 'invalid_utf8'


class LineTooLong(GateError):
    TYPE = 'line_too_long'


class DuplicateKey(GateError):
    TYPE = 'duplicate_key'


class InvalidRequest(GateError):
    TYPE = 'invalid_request'


class UnknownMethod(GateError):
    TYPE = 'unknown_method'


class UnknownField(GateError):
    TYPE = 'unknown_field'


class WrongType(GateError):
    TYPE = 'wrong_type'


class OutOfRange(GateError):
    TYPE = 'out_of_range'


class MissingField(GateError):
    TYPE = 'missing_field'


class Internal(GateError):
    TYPE = 'internal'


class Unauthenticated(GateError):
    TYPE = 'unauthenticated'


class Forbidden(GateError):
    TYPE = 'forbidden'


class Unavailable(GateError):
    TYPE = 'unavailable'


class ShuttingDown(GateError):
    TYPE = 'shutting_down'


class Overloaded(GateError):
    TYPE = 'overloaded'


class UnsupportedVersion(GateError):
    TYPE = 'unsupported_version'


class HelloRequired(GateError):
    TYPE = 'hello_required'


class HelloRepeated(GateError):
    TYPE = 'hello_repeated'


class Quota(GateError):
    TYPE = 'quota'


class UnknownRun(GateError):
    TYPE = 'unknown_run'


class BadEpoch(GateError):
    TYPE = 'bad_epoch'


class NotPending(GateError):
    TYPE = 'not_pending'


class NotAdmitted(GateError):
    TYPE = 'not_admitted'


class Conflict(GateError):
    TYPE = 'conflict'


class RunFinal(GateError):
    TYPE = 'run_final'


class InvalidArgument(GateError):
    TYPE = 'invalid_argument'


class TooManyRuns(GateError):
    TYPE = 'too_many_runs'


class TooManyKeys(GateError):
    TYPE = 'too_many_keys'


class TooManyPending(GateError):
    TYPE = 'too_many_pending'


class RunTooLong(GateError):
    TYPE = 'run_too_long'


class KeyTooLong(GateError):
    TYPE = 'key_too_long'


class ResultTooLong(GateError):
    TYPE = 'result_too_long'


class RunRetired(GateError):
    TYPE = 'run_retired'


class NotFinished(GateError):
    TYPE = 'not_finished'


class TooManyRetired(GateError):
    TYPE = 'too_many_retired'


class StateFull(GateError):
    TYPE = 'state_full'


class WatchRepeated(GateError):
    TYPE = 'watch_repeated'


class NotWatching(GateError):
    TYPE = 'not_watching'


ERROR_CLASSES: Dict[str, Type[GateError]] = {c.TYPE: c for c in (
    ParseError, InvalidUtf8, LineTooLong, DuplicateKey, InvalidRequest, UnknownMethod,
    UnknownField, WrongType, OutOfRange, MissingField, Internal, Unauthenticated,
    Forbidden, Unavailable, ShuttingDown, Overloaded, UnsupportedVersion, HelloRequired,
    HelloRepeated, Quota, UnknownRun, BadEpoch, NotPending, NotAdmitted,
    Conflict, RunFinal, InvalidArgument, TooManyRuns, TooManyKeys, TooManyPending,
    RunTooLong, KeyTooLong, ResultTooLong, RunRetired, NotFinished, TooManyRetired,
    StateFull, WatchRepeated, NotWatching,
)}


def error_class(type: str) -> Type[GateError]:
    """The exception class of a data.type: its own class, or GateError for a type this version does not know."""
    return ERROR_CLASSES.get(type, GateError)
