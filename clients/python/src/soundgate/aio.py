"""The asyncio client: calls pipeline on one connection and their answers are matched by id.

A parked admit (``wait_ms``) is answered out of order, after the calls sent behind it:
the other coroutines' calls go on meanwhile (docs/protocol.md, "Pipelining and ordering").
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any, Dict, Mapping, Optional, Tuple

from . import _wire
from ._wire import AdmitAnswer
from .errors import CallTimeoutError, ConnectionClosedError, ProtocolError, SoundgateError

_CHUNK = 65536


async def connect(*, token: str, host: str = "127.0.0.1", port: Optional[int] = None,
                  path: Optional[str] = None, timeout: Optional[float] = 30.0) -> "AsyncClient":
    """Opens a connection (TCP ``host:port`` or the Unix socket ``path``) and presents ``token``.

    ``timeout`` bounds each call's wait for its answer, in seconds, on top of an admit's
    own ``wait_ms`` (None: forever). A call that times out raises CallTimeoutError; its
    answer, if it comes, is dropped, and the connection stays usable.
    """
    hello = _wire.hello_params(token)
    if path is not None and port is not None:
        raise ValueError("soundgate: give a Unix socket path or a TCP port, not both")
    try:
        if path is not None:
            opening = asyncio.open_unix_connection(path)
        elif port is not None:
            opening = asyncio.open_connection(host, port)
        else:
            raise ValueError("soundgate: connect needs a TCP port or a Unix socket path")
        reader, writer = await asyncio.wait_for(opening, timeout)
    except (OSError, asyncio.TimeoutError) as e:
        raise ConnectionClosedError(e) from e
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c = AsyncClient(reader, writer, timeout)
    try:
        r = await c._call("hello", hello)
    except BaseException:
        await c.close()
        raise
    c.role = r.get("role", "")
    c.server = r.get("server", "")
    return c


class AsyncClient:
    """One authenticated connection to the gate, for asyncio. Create it with connect()."""

    role: str
    server: str

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 timeout: Optional[float]) -> None:
        self._reader = reader
        self._writer = writer
        self._timeout = timeout
        self._next_id = 1
        self._inflight: Dict[int, Tuple[str, "asyncio.Future[Tuple[Optional[Dict[str, Any]], Optional[Dict[str, Any]]]]"]] = {}
        self._closed: Optional[ConnectionClosedError] = None
        self._drain = asyncio.Lock()
        self.role = ""
        self.server = ""
        self._task = asyncio.ensure_future(self._read_loop())

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    async def close(self) -> None:
        """Ends the connection; calls in flight and later calls raise ConnectionClosedError."""
        self._fail(ConnectionClosedError(None))
        if not self._task.done():
            self._task.cancel()
        try:
            await self._task
        except (asyncio.CancelledError, Exception):
            pass

    def _fail(self, err: ConnectionClosedError) -> None:
        if self._closed is None:
            self._closed = err
            self._writer.close()
        for _, fut in self._inflight.values():
            if not fut.done():
                fut.set_exception(self._closed)
        self._inflight.clear()

    async def _read_loop(self) -> None:
        # Lines are split here rather than with StreamReader.readline, whose buffer limit
        # would refuse a long answer: an answer of any length is read.
        buf = bytearray()
        try:
            while True:
                chunk = await self._reader.read(_CHUNK)
                if not chunk:
                    raise ConnectionClosedError(None)
                buf += chunk
                start = 0
                while True:
                    nl = buf.find(b"\n", start)
                    if nl < 0:
                        break
                    line = bytes(buf[start:nl])
                    start = nl + 1
                    if line.strip(b" \t\r"):
                        self._on_line(line)
                del buf[:start]
        except asyncio.CancelledError:
            raise
        except ConnectionClosedError as e:
            self._fail(e)
        except SoundgateError as e:
            self._fail(ConnectionClosedError(e))
        except OSError as e:
            self._fail(ConnectionClosedError(e))

    def _on_line(self, line: bytes) -> None:
        aid, result, error = _wire.decode_answer(line)
        if aid is None:
            if error is not None:
                # an error without an id is about the connection itself (shutting_down,
                # overloaded, unauthenticated): every call in flight gets it
                err = _wire.gate_error("connection", error)
                for _, fut in self._inflight.values():
                    if not fut.done():
                        fut.set_exception(err)
                self._inflight.clear()
                if _wire.error_closes(err):
                    self._fail(ConnectionClosedError(err))
            return
        w = self._inflight.pop(aid, None) if isinstance(aid, int) else None
        if w is None:
            return  # the answer of a call that timed out
        if not w[1].done():
            w[1].set_result((result, error))

    async def _call(self, method: str, params: Mapping[str, Any], wait_ms: int = 0) -> Dict[str, Any]:
        if self._closed is not None:
            raise self._closed
        id = self._next_id
        self._next_id += 1
        line = _wire.encode_request(id, method, params)  # refuses before anything is sent
        fut: "asyncio.Future[Tuple[Optional[Dict[str, Any]], Optional[Dict[str, Any]]]]" = \
            asyncio.get_running_loop().create_future()
        self._inflight[id] = (method, fut)
        try:
            self._writer.write(line)
            async with self._drain:
                await self._writer.drain()
        except (OSError, RuntimeError) as e:
            self._fail(ConnectionClosedError(e))
            raise self._closed from e  # type: ignore[misc]
        limit = None if self._timeout is None else self._timeout + wait_ms / 1000
        started = time.monotonic()
        try:
            result, error = await asyncio.wait_for(asyncio.shield(fut), limit)
        except asyncio.TimeoutError:
            self._inflight.pop(id, None)
            raise CallTimeoutError(method, time.monotonic() - started) from None
        except asyncio.CancelledError:
            self._inflight.pop(id, None)
            raise
        if error is not None:
            err = _wire.gate_error(method, error)
            if _wire.error_closes(err):
                self._fail(ConnectionClosedError(err))
            raise err
        assert result is not None
        return result

    async def open(self, run: str, timeout_ms: Optional[int] = None) -> Dict[str, Any]:
        """Creates run ``run`` (idempotent; operator). ``timeout_ms`` sets its deadline on the gate's clock."""
        return await self._call("open", _wire.open_params(run, timeout_ms))

    async def admit(self, run: str, key: str, epoch: int, *, gated: bool = False, wait_ms: int = 0,
                    description: Optional[str] = None, args_digest: Optional[str] = None) -> AdmitAnswer:
        """Asks to perform effect ``key`` of ``run`` now, at ``epoch`` (agent); see Client.admit."""
        params = _wire.admit_params(run, key, epoch, gated, wait_ms, description, args_digest)
        return AdmitAnswer(await self._call("admit", params, wait_ms))

    async def admit_wait(self, run: str, key: str, epoch: int, *, gated: bool = False,
                         wait_ms: int = 1000, total_ms: int = 60000,
                         description: Optional[str] = None, args_digest: Optional[str] = None) -> AdmitAnswer:
        """Asks like admit and, while held, asks again parking ``wait_ms`` each time until
        ``total_ms`` has passed; returns the first answer that is not held, or the last one."""
        _wire.int_in("total_ms", total_ms, 0, 2**53 - 1)
        until = time.monotonic() + total_ms / 1000
        a = await self.admit(run, key, epoch, gated=gated, wait_ms=min(wait_ms, total_ms),
                             description=description, args_digest=args_digest)
        while a.held:
            left = int((until - time.monotonic()) * 1000)
            if left <= 0:
                break
            a = await self.admit(run, key, epoch, wait_ms=max(1, min(wait_ms, left)))
        return a

    async def decide(self, run: str, key: str, decision: str, *, reason: Optional[str] = None) -> Dict[str, Any]:
        """Approves or rejects the pending approval ``key`` of ``run`` (approver); see Client.decide."""
        return await self._call("decide", _wire.decide_params(run, key, decision, reason))

    async def pending(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        """Lists a page of the pending approvals the token may decide (approver, operator); see Client.pending."""
        return await self._call("pending", _wire.pending_params(limit, cursor))

    async def complete(self, run: str, key: str, outcome: str = "ok", result: str = "") -> Dict[str, Any]:
        """Records the outcome ("ok" | "failed") and result of an admitted effect (agent)."""
        return await self._call("complete", _wire.complete_params(run, key, outcome, result))

    async def cancel(self, run: str) -> Dict[str, Any]:
        """Makes ``run`` cancelled (operator)."""
        return await self._call("cancel", _wire.run_params(run))

    async def fence(self, run: str) -> Dict[str, Any]:
        """Moves ``run`` to a new epoch (operator)."""
        return await self._call("fence", _wire.run_params(run))

    async def status(self, run: str, key: Optional[str] = None) -> Dict[str, Any]:
        """Reads run ``run``, and effect ``key`` when given."""
        return await self._call("status", _wire.status_params(run, key))
