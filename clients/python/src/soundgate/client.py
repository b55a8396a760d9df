"""The synchronous client: one blocking connection, one call at a time.

A Client may be shared by threads (a lock serializes their calls), but a parked admit
(``wait_ms``) then blocks the others for its wait: give each thread its own Client, or
use soundgate.aio, whose calls pipeline on one connection.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Dict, Mapping, Optional

from . import _wire
from ._wire import AdmitAnswer
from .errors import CallTimeoutError, ConnectionClosedError, ProtocolError

_CHUNK = 65536


def _dial(host: str, port: Optional[int], path: Optional[str], timeout: Optional[float]) -> socket.socket:
    if path is not None and port is not None:
        raise ValueError("soundgate: give a Unix socket path or a TCP port, not both")
    try:
        if path is not None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.settimeout(timeout)
                s.connect(path)
            except BaseException:
                s.close()
                raise
        elif port is not None:
            s = socket.create_connection((host, port), timeout=timeout)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        else:
            raise ValueError("soundgate: connect needs a TCP port or a Unix socket path")
    except OSError as e:
        raise ConnectionClosedError(e) from e
    return s


def connect(*, token: str, host: str = "127.0.0.1", port: Optional[int] = None,
            path: Optional[str] = None, timeout: Optional[float] = 30.0) -> "Client":
    """Opens a connection (TCP ``host:port`` or the Unix socket ``path``) and presents ``token``.

    ``timeout`` bounds each call's wait for its answer, in seconds, on top of an admit's
    own ``wait_ms``; None waits forever. The returned Client's ``role`` is what the gate
    granted. An unknown token raises soundgate.Unauthenticated.
    """
    hello = _wire.hello_params(token)
    c = Client(_dial(host, port, path, timeout), timeout)
    try:
        r = c._call("hello", hello)
    except BaseException:
        c.close()
        raise
    c.role = r.get("role", "")
    c.server = r.get("server", "")
    return c


class Client:
    """One authenticated connection to the gate. Create it with connect()."""

    role: str
    server: str

    def __init__(self, sock: socket.socket, timeout: Optional[float]) -> None:
        self._sock = sock
        self._timeout = timeout
        self._lock = threading.Lock()
        self._next_id = 1
        self._buf = bytearray()
        self._closed: Optional[ConnectionClosedError] = None
        self.role = ""
        self.server = ""

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def close(self) -> None:
        """Ends the connection; later calls raise ConnectionClosedError."""
        with self._lock:
            self._break(None)

    def _break(self, cause: Optional[BaseException]) -> ConnectionClosedError:
        if self._closed is None:
            self._closed = ConnectionClosedError(cause)
            try:
                self._sock.close()
            except OSError:
                pass
        return self._closed

    def _read_line(self, deadline: Optional[float], method: str) -> bytes:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                return line
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CallTimeoutError(method, self._timeout or 0)
                self._sock.settimeout(left)
            else:
                self._sock.settimeout(None)
            try:
                chunk = self._sock.recv(_CHUNK)
            except socket.timeout:
                raise CallTimeoutError(method, self._timeout or 0) from None
            if not chunk:
                raise ConnectionClosedError(None)
            self._buf += chunk

    def _call(self, method: str, params: Mapping[str, Any], wait_ms: int = 0) -> Dict[str, Any]:
        with self._lock:
            if self._closed is not None:
                raise self._closed
            id = self._next_id
            self._next_id += 1
            line = _wire.encode_request(id, method, params)  # refuses before anything is sent
            deadline = None if self._timeout is None else time.monotonic() + self._timeout + wait_ms / 1000
            try:
                self._sock.settimeout(self._timeout)
                self._sock.sendall(line)
                while True:
                    raw = self._read_line(deadline, method)
                    if not raw.strip(b" \t\r"):
                        continue
                    aid, result, error = _wire.decode_answer(raw)
                    if aid == id or (aid is None and error is not None):
                        break
                    # an answer to no call of ours: this connection has one call in flight
                    raise ProtocolError(f"answer to id {aid!r} while waiting for {id}")
            except (CallTimeoutError, ProtocolError) as e:
                # the answer may still come: nothing later on this connection could be matched
                self._break(e)
                raise
            except ConnectionClosedError as e:
                raise self._break(e.cause) from None
            except OSError as e:
                raise self._break(e) from e
            if error is not None:
                err = _wire.gate_error(method, error)
                if aid is None or _wire.error_closes(err):
                    self._break(err)
                raise err
            assert result is not None
            return result

    def open(self, run: str, timeout_ms: Optional[int] = None) -> Dict[str, Any]:
        """Creates run ``run`` (idempotent; operator). ``timeout_ms`` sets its deadline on the gate's clock."""
        return self._call("open", _wire.open_params(run, timeout_ms))

    def admit(self, run: str, key: str, epoch: int, *, gated: bool = False, wait_ms: int = 0,
              description: Optional[str] = None, args_digest: Optional[str] = None) -> AdmitAnswer:
        """Asks to perform effect ``key`` of ``run`` now, at ``epoch`` (agent).

        ``gated``: the effect needs its own approval. ``wait_ms``: park on the gate up to
        this long instead of answering held at once. ``description`` (what the effect
        would do, at most 512 bytes, no control character but tab and line feed) and
        ``args_digest`` ("sha256:" and 64 lower-case hex digits, see soundgate.args_digest)
        are kept with the approval a gated admit opens, for the approver; they change no
        answer.
        """
        params = _wire.admit_params(run, key, epoch, gated, wait_ms, description, args_digest)
        return AdmitAnswer(self._call("admit", params, wait_ms))

    def admit_wait(self, run: str, key: str, epoch: int, *, gated: bool = False,
                   wait_ms: int = 1000, total_ms: int = 60000,
                   description: Optional[str] = None, args_digest: Optional[str] = None) -> AdmitAnswer:
        """Asks like admit and, while the answer is held, asks again parking ``wait_ms`` each
        time until ``total_ms`` has passed; returns the first answer that is not held, or the
        last held one."""
        _wire.int_in("total_ms", total_ms, 0, 2**53 - 1)
        until = time.monotonic() + total_ms / 1000
        a = self.admit(run, key, epoch, gated=gated, wait_ms=min(wait_ms, total_ms),
                       description=description, args_digest=args_digest)
        while a.held:
            left = int((until - time.monotonic()) * 1000)
            if left <= 0:
                break
            a = self.admit(run, key, epoch, wait_ms=max(1, min(wait_ms, left)))
        return a

    def decide(self, run: str, key: str, decision: str, *, reason: Optional[str] = None) -> Dict[str, Any]:
        """Approves or rejects the pending approval ``key`` of ``run`` (approver).

        ``reason`` (the rule of a description) is kept with the effect; status shows it.
        """
        return self._call("decide", _wire.decide_params(run, key, decision, reason))

    def pending(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        """Lists a page of the pending approvals the token may decide, oldest first
        (approver, operator): ``{"approvals": [...], "more": bool, "cursor"?: str}``.
        With ``more``, the next page is ``pending(cursor=page["cursor"])``."""
        return self._call("pending", _wire.pending_params(limit, cursor))

    def complete(self, run: str, key: str, outcome: str = "ok", result: str = "") -> Dict[str, Any]:
        """Records the outcome ("ok" | "failed") and result of an admitted effect (agent)."""
        return self._call("complete", _wire.complete_params(run, key, outcome, result))

    def cancel(self, run: str) -> Dict[str, Any]:
        """Makes ``run`` cancelled (operator)."""
        return self._call("cancel", _wire.run_params(run))

    def fence(self, run: str) -> Dict[str, Any]:
        """Moves ``run`` to a new epoch (operator)."""
        return self._call("fence", _wire.run_params(run))

    def status(self, run: str, key: Optional[str] = None) -> Dict[str, Any]:
        """Reads run ``run``, and effect ``key`` when given."""
        return self._call("status", _wire.status_params(run, key))

