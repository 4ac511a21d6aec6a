"""The change feed: watch(...) in Client and AsyncClient.

A watch takes a connection of its own (robotsd answers nothing else on a
watching connection): it sends {"op":"watch",...}, checks the
{"ok":true,"watching":N} answer, then turns every "changed" line into a
ChangeEvent. When the connection breaks (robotsd restarted) or robotsd
drops a watcher that read too slowly, the watch connects again, with a
growing pause, and subscribes again: changes made while it was away are
not replayed (compare versions with check or inspect to catch up)."""
import asyncio
import json
import socket
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

from ._protocol import RobotsdError, encode, error_from

_PAUSE = 0.05  # first pause before connecting again (doubles)
_PAUSE_MAX = 2.0
_MAX_LINE = 64 << 20  # an event line, at most (robotsd's --max-output)


@dataclass(frozen=True)
class AgentChange:
    """What changed for one agent: patterns newly disallowed and newly
    allowed (see docs/protocol.md, "watch"); usage_changed when robotsd
    reports it (None: not reported)."""
    newly_disallowed: List[str]
    newly_allowed: List[str]
    usage_changed: Optional[bool] = None


@dataclass(frozen=True)
class ChangeEvent:
    """One version change of an origin. old is None for the first version
    robotsd knows; an agent maps to None when robotsd could not tell (a
    change relayed from another instance too large to carry)."""
    origin: str
    old: Optional[str]
    new: str
    at: float
    state: str
    agents: Dict[str, Optional[AgentChange]]

    @classmethod
    def from_line(cls, a: Dict[str, Any]) -> "ChangeEvent":
        agents: Dict[str, Optional[AgentChange]] = {}
        for name, d in (a.get("agents") or {}).items():
            agents[name] = None if not isinstance(d, dict) else AgentChange(
                list(d.get("newly_disallowed") or []),
                list(d.get("newly_allowed") or []),
                d.get("usage_changed"))
        return cls(origin=a["origin"], old=a.get("old"), new=a["new"],
                   at=float(a["at"]), state=a.get("state", ""),
                   agents=agents)


def watch_request(origins: Optional[List[str]],
                  agents: Optional[List[str]]) -> bytes:
    """The watch request line: origins (None or empty: all) and agents."""
    req: Dict[str, Any] = {"op": "watch", "id": 1}
    if origins:
        req["origins"] = list(origins)
    else:
        req["all"] = True
    if agents:
        req["agents"] = list(agents)
    return encode(req, _MAX_LINE)


def _answer(line: bytes) -> None:
    """Check the watch answer; raises the protocol error it carries (a
    request robotsd refuses is not retried)."""
    a = json.loads(line)
    if not isinstance(a, dict) or a.get("ok") is not True:
        raise error_from(a.get("error") if isinstance(a, dict) else None)


def _event(line: bytes) -> Optional[ChangeEvent]:
    """A ChangeEvent, None for a line to skip; raises ConnectionError when
    robotsd dropped the watcher (the caller subscribes again)."""
    try:
        a = json.loads(line)
    except ValueError:
        return None
    if not isinstance(a, dict):
        return None
    if a.get("event") == "dropped":
        raise ConnectionError("dropped by robotsd: %s" % a.get("reason"))
    if a.get("event") != "changed":
        return None
    return ChangeEvent.from_line(a)


def watch_blocking(path: str, origins: Optional[List[str]],
                   agents: Optional[List[str]],
                   timeout: float) -> Iterator[ChangeEvent]:
    """Client.watch: see there."""
    req = watch_request(origins, agents)
    pause = _PAUSE
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(timeout)
                s.connect(path)
                s.sendall(req)
                f = s.makefile("rb")
                line = f.readline(_MAX_LINE)
                if not line:
                    raise ConnectionError("robotsd closed the connection")
                _answer(line)
                s.settimeout(None)
                pause = _PAUSE
                while True:
                    line = f.readline(_MAX_LINE)
                    if not line:
                        raise ConnectionError("robotsd closed the watch")
                    ev = _event(line)
                    if ev is not None:
                        yield ev
        except RobotsdError:
            raise
        except (OSError, ValueError):
            time.sleep(pause)
            pause = min(pause * 2, _PAUSE_MAX)


async def watch_async(path: str, origins: Optional[List[str]],
                      agents: Optional[List[str]],
                      timeout: float) -> AsyncIterator[ChangeEvent]:
    """AsyncClient.watch: see there."""
    req = watch_request(origins, agents)
    pause = _PAUSE
    while True:
        w = None
        try:
            r, w = await asyncio.wait_for(
                asyncio.open_unix_connection(path, limit=_MAX_LINE), timeout)
            w.write(req)
            await w.drain()
            line = await asyncio.wait_for(r.readline(), timeout)
            if not line:
                raise ConnectionError("robotsd closed the connection")
            _answer(line)
            pause = _PAUSE
            while True:
                line = await r.readline()
                if not line:
                    raise ConnectionError("robotsd closed the watch")
                ev = _event(line)
                if ev is not None:
                    yield ev
        except RobotsdError:
            raise
        except (OSError, ValueError, asyncio.TimeoutError):
            await asyncio.sleep(pause)
            pause = min(pause * 2, _PAUSE_MAX)
        finally:
            if w is not None:
                w.close()
