"""soundgate: the client of the soundgate effect gate, standard library only.

Sync::

    import soundgate
    with soundgate.connect(token=soundgate.token(), port=7433) as agent:
        a = agent.admit("run-1", "send-email", 1)
        if a.admitted:
            ...  # perform the effect, then:
            agent.complete("run-1", "send-email", "ok", "250 OK")

Asyncio: ``soundgate.aio.connect`` gives an AsyncClient with the same methods, pipelined.
The commit-point pattern for frameworks is soundgate.gatedrun. The protocol is
docs/protocol.md of the soundgate repository; refusals raise a GateError subclass named
after the protocol's ``data.type`` (Forbidden, UnknownRun, ...).
"""

from ._wire import (
    ANSWERS,
    DESCRIPTION_BYTES_MAX,
    EPOCH_MAX,
    KEY_BYTES_MAX,
    LINE_BYTES_MAX,
    PENDING_LIMIT_MAX,
    PROTOCOL_VERSION,
    REASON_BYTES_MAX,
    REASONS,
    RESULT_BYTES_MAX,
    RUN_BYTES_MAX,
    TIMEOUT_MS_MAX,
    TOKEN_BYTES_MAX,
    WAIT_MS_MAX,
    AdmitAnswer,
    args_digest,
)
from .client import Client, connect
from .errors import (
    ArgumentError,
    BadEpoch,
    CallTimeoutError,
    Conflict,
    ConnectionClosedError,
    DuplicateKey,
    ERROR_CLASSES,
    Forbidden,
    GateError,
    HelloRepeated,
    HelloRequired,
    Internal,
    InvalidArgument,
    InvalidRequest,
    InvalidUtf8,
    KeyTooLong,
    LineTooLong,
    MissingField,
    NotAdmitted,
    NotFinished,
    NotPending,
    OutOfRange,
    Overloaded,
    ParseError,
    ProtocolError,
    Quota,
    RequestTooLargeError,
    ResultTooLong,
    RunFinal,
    RunRetired,
    RunTooLong,
    ShuttingDown,
    SoundgateError,
    StateFull,
    TooManyKeys,
    TooManyPending,
    TooManyRetired,
    TooManyRuns,
    Unauthenticated,
    Unavailable,
    UnknownField,
    UnknownMethod,
    UnknownRun,
    UnsupportedVersion,
    WatchRepeated,
    NotWatching,
    WrongType,
    error_class,
)
from .token import TOKEN_ENV, token

__version__ = "0.1.0"


__all__ = [
    "ANSWERS", "EPOCH_MAX", "KEY_BYTES_MAX", "LINE_BYTES_MAX", "PROTOCOL_VERSION", "REASONS",
    "RESULT_BYTES_MAX", "RUN_BYTES_MAX", "TIMEOUT_MS_MAX", "TOKEN_BYTES_MAX", "WAIT_MS_MAX",
    "DESCRIPTION_BYTES_MAX", "REASON_BYTES_MAX", "PENDING_LIMIT_MAX",
    "AdmitAnswer", "Client", "connect", "TOKEN_ENV", "token", "args_digest",
    "ArgumentError",
    "BadEpoch",
    "CallTimeoutError",
    "Conflict",
    "ConnectionClosedError",
    "DuplicateKey",
    "ERROR_CLASSES",
    "Forbidden",
    "GateError",
    "HelloRepeated",
    "HelloRequired",
    "Internal",
    "InvalidArgument",
    "InvalidRequest",
    "InvalidUtf8",
    "KeyTooLong",
    "LineTooLong",
    "MissingField",
    "NotAdmitted",
    "NotFinished",
    "NotPending",
    "OutOfRange",
    "Overloaded",
    "ParseError",
    "ProtocolError",
    "Quota",
    "RequestTooLargeError",
    "ResultTooLong",
    "RunFinal",
    "RunRetired",
    "RunTooLong",
    "ShuttingDown",
    "SoundgateError",
    "StateFull",
    "TooManyKeys",
    "TooManyPending",
    "TooManyRetired",
    "TooManyRuns",
    "Unauthenticated",
    "Unavailable",
    "UnknownField",
    "UnknownMethod",
    "UnknownRun",
    "UnsupportedVersion",
    "WatchRepeated",
    "NotWatching",
    "WrongType",
    "error_class",
]
