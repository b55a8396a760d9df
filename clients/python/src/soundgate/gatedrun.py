"""GatedRun: the integration pattern every framework adapter shares, importing no framework.

It holds an agent's view of one gate run and gives the two hooks a framework needs:
``plan`` (register a plan's approvals and effects before any of its tools runs) and
``effect`` (the commit point: admit, run the effect only if admitted, complete). The rest
is one client call each: the human decides with an approver's client, and the operator
cancels the run when the framework cancels and fences it when the framework times out.

An effect's value is recorded as JSON, so a replay gets back what the first run returned
(``EffectOutcome.value`` of a duplicate), any JSON value up to the protocol's result limit.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Awaitable, Callable, Dict, Generator, Iterable, List, Optional, Set, Tuple, TypeVar, Union, cast

from ._wire import RESULT_BYTES_MAX, AdmitAnswer
from .aio import AsyncClient
from .client import Client
from .errors import SoundgateError

Observer = Callable[[Dict[str, Any]], None]
_T = TypeVar("_T")

CUT_MARK = "…[cut]"


class ResultNotStorableError(SoundgateError):
    """The effect ran but its value cannot be recorded (not JSON, or over the limit).

    The effect stays admitted and not completed at the gate, so that a replay gets
    ``duplicate`` with no outcome (it ran; its result was not stored), never a made-up one.
    """

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"soundgate: effect {key!r} ran but its value cannot be recorded: {problem}")
        self.key = key


class ResultDecodeError(SoundgateError):
    """A duplicate's recorded result is not JSON (written by another tool than GatedRun)."""

    def __init__(self, key: str, result: str) -> None:
        super().__init__(f"soundgate: effect {key!r}: recorded result is not JSON: {result[:80]!r}")
        self.key = key
        self.result = result


def approval_key(key: str) -> str:
    """The gate key of the approval that guards effect ``key``."""
    return f"approval/{key}"


def encode_value(key: str, value: Any) -> str:
    """The JSON text recorded for an effect's value, or ResultNotStorableError."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise ResultNotStorableError(key, f"not JSON: {e}") from None
    try:
        n = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ResultNotStorableError(key, "it holds a lone surrogate") from None
    if n > RESULT_BYTES_MAX:
        raise ResultNotStorableError(key, f"{n} bytes of JSON, over the limit of {RESULT_BYTES_MAX}")
    return text


def decode_value(key: str, answer: AdmitAnswer) -> Any:
    """The value a duplicate hands back: the decoded JSON of an ok outcome, else None."""
    if answer.outcome != "ok":
        return None
    try:
        return json.loads(answer.result or "")
    except ValueError:
        raise ResultDecodeError(key, answer.result or "") from None


def failure_message(err: BaseException) -> str:
    """An error's message as a failed outcome's result: cut to the limit on a character
    boundary, and marked as cut, because it is for people and a lost tail must show."""
    msg = str(err) or type(err).__name__
    b = msg.encode("utf-8", "replace")
    if len(b) <= RESULT_BYTES_MAX:
        return b.decode("utf-8")
    room = RESULT_BYTES_MAX - len(CUT_MARK.encode("utf-8"))
    return b[:room].decode("utf-8", "ignore") + CUT_MARK


class EffectOutcome:
    """What GatedRun.effect did: ``status`` is committed, duplicate, denied or held.

    ``value`` is the effect's value when committed, or a duplicate's recorded value;
    ``error`` is the recorded message of a duplicate of an effect that failed.
    """

    __slots__ = ("status", "answer", "value", "error")

    def __init__(self, status: str, answer: AdmitAnswer, value: Any = None, error: Optional[str] = None) -> None:
        self.status = status
        self.answer = answer
        self.value = value
        self.error = error

    @property
    def committed(self) -> bool:
        return self.status == "committed"

    @property
    def failed(self) -> bool:
        """A duplicate of an effect whose recorded outcome is failed."""
        return self.answer.outcome == "failed"

    def __repr__(self) -> str:
        return f"EffectOutcome(status={self.status!r}, answer={self.answer!r}, value={self.value!r})"


def _not_admitted(key: str, a: AdmitAnswer) -> EffectOutcome:
    if not a.duplicate:
        return EffectOutcome("denied" if a.denied else "held", a)
    if a.outcome == "failed":
        return EffectOutcome("duplicate", a, None, a.result or "")
    return EffectOutcome("duplicate", a, decode_value(key, a))


# A step of a GatedRun sequence: the name of a client method with its arguments, or
# RUN_FN, where the driver runs the effect's function. The sequences below are written
# once, without I/O; GatedRun drives them with a Client and AsyncGatedRun with an
# AsyncClient, so the two cannot drift apart.
Step = Tuple[str, Tuple[Any, ...], Dict[str, Any]]
RUN_FN: Step = ("", (), {})
Sequence = Generator[Step, Any, _T]


class _Base:
    def __init__(self, agent: Any, run: str, epoch: int = 1, wait_ms: int = 1000,
                 total_wait_ms: int = 60000, observe: Optional[Observer] = None) -> None:
        if agent is None:
            raise TypeError("soundgate: GatedRun needs an agent client")
        self.agent = agent
        self.run = run
        self.epoch = epoch
        self.wait_ms = wait_ms
        self.total_wait_ms = total_wait_ms
        self.observe: Observer = observe or (lambda _o: None)
        self.pre_admitted: Set[str] = set()

    def _plan(self, gated: Iterable[str], effects: Iterable[str]) -> "Sequence[List[str]]":
        approvals = [approval_key(k) for k in gated]
        if not approvals:
            return approvals
        for ak in approvals:
            st = yield ("status", (self.run, ak), {})
            if st.get("effect", {}).get("status") != "absent":
                continue
            a = yield ("admit", (self.run, ak, self.epoch), {"gated": True})
            self.observe({"key": ak, "answer": str(a), "why": "plan: approval requested"})
        for k in effects:
            st = yield ("status", (self.run, k), {})
            if st.get("effect", {}).get("status") != "absent":
                continue
            a = yield ("admit", (self.run, k, self.epoch), {})
            self.observe({"key": k, "answer": str(a), "why": "plan: effect registered"})
            if a.admitted:  # every approval was already decided: kept for this commit point
                self.pre_admitted.add(k)
        return approvals

    def _effect(self, key: str) -> "Sequence[EffectOutcome]":
        if key in self.pre_admitted:
            self.pre_admitted.discard(key)
            a = AdmitAnswer({"answer": "admit", "epoch": self.epoch})
            self.observe({"key": key, "answer": "admit", "why": "admitted when the plan was registered"})
        else:
            a = yield ("admit", (self.run, key, self.epoch), {})
            self.observe({"key": key, "answer": str(a)})
        if a.held:
            a = yield ("admit_wait", (self.run, key, self.epoch), {"wait_ms": self.wait_ms, "total_ms": self.total_wait_ms})
            self.observe({"key": key, "answer": str(a), "why": "after waiting"})
        if not a.admitted:
            return _not_admitted(key, a)
        try:
            value = yield RUN_FN
        except Exception as e:
            yield ("complete", (self.run, key, "failed", failure_message(e)), {})
            raise
        yield ("complete", (self.run, key, "ok", encode_value(key, value)), {})
        return EffectOutcome("committed", a, value)


class GatedRun(_Base):
    """Binds a sync agent Client to run ``run`` at ``epoch``; ``observe`` sees every gate answer."""

    agent: Client

    def _drive(self, seq: "Sequence[_T]", fn: Optional[Callable[[], Any]] = None) -> _T:
        try:
            step = next(seq)
            while True:
                if step is RUN_FN:
                    assert fn is not None
                    try:
                        res = fn()
                    except Exception as e:
                        step = seq.throw(e)
                        continue
                else:
                    res = getattr(self.agent, step[0])(*step[1], **step[2])
                step = seq.send(res)
        except StopIteration as done:
            return cast(_T, done.value)

    def plan(self, gated: Iterable[str] = (), effects: Iterable[str] = ()) -> List[str]:
        """Registers a plan before any of its effects runs: each key in ``gated`` opens its
        approval (approval_key, gated), then each key in ``effects`` is asked once without
        waiting so the gate holds it under them (and a rejection rejects it). Keys the gate
        knows are left alone, so planning again on resume or replay changes nothing.
        Returns the approval keys a human must decide."""
        return self._drive(self._plan(gated, effects))

    def effect(self, key: str, fn: Callable[[], Any]) -> EffectOutcome:
        """The commit point of effect ``key``: asks the gate (waiting while held), runs ``fn``
        only on admit, and records its value (as JSON) with complete. A duplicate hands back
        the recorded value; a denial or a wait that ran out does not run ``fn``. An exception
        of ``fn`` is recorded as a failed outcome; an interruption (KeyboardInterrupt, a
        cancelled task) records nothing, since whether the effect happened is unknown."""
        return self._drive(self._effect(key), fn)


class AsyncGatedRun(_Base):
    """GatedRun for an AsyncClient: ``await plan(...)``, ``await effect(key, async_fn)``."""

    agent: AsyncClient

    async def _drive(self, seq: "Sequence[_T]", fn: Optional[Callable[[], Any]] = None) -> _T:
        try:
            step = next(seq)
            while True:
                if step is RUN_FN:
                    assert fn is not None
                    try:
                        res = fn()
                        if inspect.isawaitable(res):
                            res = await res
                    except Exception as e:
                        step = seq.throw(e)
                        continue
                else:
                    res = await getattr(self.agent, step[0])(*step[1], **step[2])
                step = seq.send(res)
        except StopIteration as done:
            return cast(_T, done.value)

    async def plan(self, gated: Iterable[str] = (), effects: Iterable[str] = ()) -> List[str]:
        """See GatedRun.plan."""
        return await self._drive(self._plan(gated, effects))

    async def effect(self, key: str, fn: Callable[[], Union[Awaitable[Any], Any]]) -> EffectOutcome:
        """See GatedRun.effect; ``fn`` may be a coroutine function or a plain one."""
        return await self._drive(self._effect(key), fn)
