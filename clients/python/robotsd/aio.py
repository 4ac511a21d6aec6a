"""The asyncio client: one pipelined connection shared by any number of
tasks of one event loop.

A reader task hands each answer to the task waiting for its id. When the
connection breaks (robotsd restarted), a call in flight is sent again on a
new connection while its timeout allows."""
import asyncio
import itertools
import time
from typing import Any, AsyncIterator, Dict, List, Optional, Sequence

from ._protocol import (BATCH_LIMIT, DEFAULT_CONNECT_TIMEOUT,
                        DEFAULT_MAX_LINE, DEFAULT_TIMEOUT, AnswerLines,
                        CallTimeoutError, CheckResult, ConnectionLostError,
                        HistoryEntry, PageLike, ProtocolError,
                        RobotsdError, batch_requests, batch_results,
                        check_head, check_request, connect_error,
                        error_from, history_request, parse_answer,
                        parse_history, purge_request, refuses_connection,
                        request_head, result, socket_path, with_id, Pending)
from .watch import ChangeEvent, watch_async

_RETRY_PAUSE = 0.05
_RETRY_PAUSE_MAX = 1.0
_MAX_SENDS = 3  # times one request is sent at most (see client.py)
_HIGH_WATER = 1 << 20  # bytes queued for robotsd before writers wait


class _Connection:
    """One stream with its reader task."""

    def __init__(self, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.pending = Pending()
        self.alive = True
        self.closed_by: Optional[RobotsdError] = None
        self.drain_lock = asyncio.Lock()  # Python < 3.10: one drain at once
        self.out: List[bytes] = []  # lines to write at the next flush
        self.task = asyncio.ensure_future(self._read_loop())

    async def send(self, rid: int, data: bytes,
                   raw: bool) -> "asyncio.Future[Dict[str, Any]]":
        if not self.alive:
            raise self.closed_by or ConnectionLostError(
                "connection to robotsd closed")
        fut: "asyncio.Future[Dict[str, Any]]" = \
            asyncio.get_running_loop().create_future()
        self.pending.add(rid, fut, len(data), raw)
        if not self.out:  # one write per loop iteration, not per request
            asyncio.get_running_loop().call_soon(self._flush)
        self.out.append(data)
        try:
            # Wait only while robotsd reads slower than we write.
            if self.writer.transport.get_write_buffer_size() > _HIGH_WATER:
                async with self.drain_lock:
                    await self.writer.drain()
        except (OSError, RuntimeError) as e:
            self._fail(self.closed_by or ConnectionLostError(
                    "send to robotsd: %s" % e))
        return fut

    def _flush(self) -> None:
        data, self.out = b"".join(self.out), []
        if self.alive:
            try:
                self.writer.write(data)
            except (OSError, RuntimeError) as e:
                self._fail(self.closed_by or ConnectionLostError(
                    "send to robotsd: %s" % e))

    def expire(self, rid: int) -> None:
        """The call rid ran out of time: fail it with CallTimeoutError."""
        fut = self.pending.pop(rid)
        if fut is not None and not fut.done():
            fut.set_exception(CallTimeoutError("no answer from robotsd in "
                                               "time"))

    def forget(self, rid: int) -> None:
        self.pending.pop(rid)

    async def _read_loop(self) -> None:
        rd = AnswerLines()
        try:
            while True:
                chunk = await self.reader.read(1 << 16)
                if not chunk:
                    break
                for line in rd.feed(chunk):
                    self._dispatch(line)
                overflow = rd.overflow()
                if overflow is not None:
                    self._fail(overflow)
                    return
        except OSError as e:
            # A reset after "overloaded" still means overloaded.
            self._fail(self.closed_by or ConnectionLostError(
                "read from robotsd: %s" % e))
            return
        self._fail(self.closed_by or ConnectionLostError(
            "robotsd closed the connection"))

    def _dispatch(self, line: bytes) -> None:
        try:
            a = parse_answer(line)
        except ValueError:
            return
        if not isinstance(a, dict):
            return
        if refuses_connection(a) and not self.pending.raw:
            self.closed_by = error_from(a["error"])  # robotsd closes it
            return
        try:
            fut = self.pending.pop(self.pending.owner(a))
        except ProtocolError as e:  # an answer nobody asked for
            self._fail(e)
            return
        if fut is not None and not fut.done():
            fut.set_result(a)

    def _fail(self, exc: RobotsdError) -> None:
        if not self.alive:
            return
        self.alive = False
        self.writer.close()
        for fut in self.pending.drain():
            if not fut.done():
                fut.set_exception(exc)


class AsyncClient:
    """An asyncio robotsd client, for concurrent use by many tasks of one
    event loop.

    >>> async with AsyncClient() as c:
    ...     r = await c.check("https://example.com/a", "FooBot/2.1")

    The arguments are those of robotsd.Client: path (else $ROBOTSD_SOCKET,
    else /run/robotsd/robotsd.sock), timeout (seconds per call, reconnecting
    included), max_line and connect_timeout.
    """

    def __init__(self, path: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT,
                 max_line: int = DEFAULT_MAX_LINE,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT):
        self.path = socket_path(path)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_line = max_line
        self._ids = itertools.count(1)
        self._conn: Optional[_Connection] = None
        self._connecting: Optional[asyncio.Lock] = None
        self._closed = False

    def watch(self, origins: Optional[List[str]] = None,
              agents: Optional[List[str]] = None) \
            -> "AsyncIterator[ChangeEvent]":
        """The change feed as an async iterator: see robotsd.Client.watch.
        """
        return watch_async(self.path, origins, agents, self.timeout)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection; calls in flight fail."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            conn._fail(ConnectionLostError("client closed"))
            try:
                await conn.task
            except asyncio.CancelledError:
                pass

    # --- operations ------------------------------------------------------
    async def check(self, url: str, agent: str, wait: bool = True,
                    timeout: Optional[float] = None, usage: bool = False,
                    tokens: Optional[Sequence[str]] = None,
                    page: Optional[PageLike] = None,
                    tdm: bool = False) -> CheckResult:
        """May agent fetch url? See robotsd.Client.check (usage, tokens,
        page and tdm too)."""
        if wait and not (usage or tokens is not None or page is not None or
                         tdm):
            head = check_head(url, agent)  # the common line, built fast
        else:
            head = request_head(check_request(url, agent, wait, usage,
                                              tokens, page, tdm))
        a = await self._call(head, timeout)
        return CheckResult.from_answer(url, a, usage, tokens is not None,
                                       page is not None, tdm)

    async def check_many(self, urls: List[str], agent: str,
                         wait: bool = True,
                         timeout: Optional[float] = None,
                         usage: bool = False,
                         tokens: Optional[Sequence[str]] = None,
                         tdm: bool = False) -> List[CheckResult]:
        """Check many URLs in batches of 1000, one batch after another
        (see robotsd.Client.check_many); one result per URL in order, a
        URL's own error in .error."""
        urls = list(urls)
        deadline = time.monotonic() + (self.timeout if timeout is None
                                       else timeout)
        out: List[CheckResult] = []
        reqs = batch_requests(urls, agent, wait, usage, tokens, tdm)
        for i, req in enumerate(reqs):
            a = await self._call(request_head(req),
                                 max(0.0, deadline - time.monotonic()))
            out += batch_results(urls[i * BATCH_LIMIT:(i + 1) * BATCH_LIMIT],
                                 a, usage, tokens is not None, tdm)
        return out

    async def inspect(self, origin: str,
                      timeout: Optional[float] = None) -> Dict[str, Any]:
        """What the cache holds for origin; NotCachedError if nothing."""
        return await self.call({"op": "inspect", "origin": origin}, timeout)

    async def history(self, origin: str, timeout: Optional[float] = None) \
            -> List[HistoryEntry]:
        """The last distinct robots.txt versions of a cached origin,
        newest first; NotCachedError if nothing."""
        return parse_history(await self.call(history_request(origin),
                                             timeout))

    async def purge(self, origin: str,
                    timeout: Optional[float] = None) -> int:
        """Drop origin; returns the count dropped. TypeError for anything
        but a string: purge_all() drops every origin."""
        return int((await self.call(purge_request(origin),
                                    timeout))["purged"])

    async def purge_all(self, timeout: Optional[float] = None) -> int:
        """Drop every origin; returns the count dropped."""
        return int((await self.call({"op": "purge", "all": True},
                                    timeout))["purged"])

    async def stats(self, timeout: Optional[float] = None) -> Dict[str, int]:
        """robotsd's counters."""
        return dict((await self.call({"op": "stats"}, timeout))["stats"])

    async def ping(self, timeout: Optional[float] = None) -> str:
        """robotsd's version."""
        return str((await self.call({"op": "ping"}, timeout))["version"])

    # --- lower level -----------------------------------------------------
    async def call(self, req: Dict[str, Any],
                   timeout: Optional[float] = None) -> Dict[str, Any]:
        """Send one request (its id is set here); the ok answer as a dict,
        or its typed error raised."""
        return await self._call(request_head(req), timeout)

    async def _call(self, head: bytes,
                    timeout: Optional[float] = None) -> Dict[str, Any]:
        """call() of the request line head (request_head())."""
        deadline = time.monotonic() + (self.timeout if timeout is None
                                       else timeout)
        pause = _RETRY_PAUSE
        sends: List[int] = []  # one entry per time the request was sent
        give_up = None  # connecting is given up after connect_timeout
        while True:
            n = len(sends)
            try:
                return await self._attempt(head, None, deadline, sends)
            except ConnectionLostError as e:
                if n != len(sends) or give_up is None:  # sent, or first
                    give_up = min(deadline,
                                  time.monotonic() + self.connect_timeout)
                if self._closed or len(sends) >= _MAX_SENDS or \
                        isinstance(e, ProtocolError) or \
                        time.monotonic() + pause >= give_up:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, _RETRY_PAUSE_MAX)

    async def call_raw(self, line: bytes,
                       timeout: Optional[float] = None) -> Dict[str, Any]:
        """Send one raw line that robotsd answers with id null; see
        robotsd.Client.call_raw. For tests and debugging."""
        deadline = time.monotonic() + (self.timeout if timeout is None
                                       else timeout)
        return await self._attempt(None, line + b"\n", deadline, [])

    async def _attempt(self, head: Optional[bytes],
                       raw: Optional[bytes], deadline: float,
                       sends: List[int]) -> Dict[str, Any]:
        """Send the request line head (request_head()) with a new id, or
        the line raw, once, and wait for its answer."""
        rid = next(self._ids)
        data = raw if raw is not None else \
            with_id(head or b"{", rid, self.max_line)
        try:
            conn = self._conn
            if conn is None or not conn.alive:
                conn = await asyncio.wait_for(
                    self._connection(), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            raise CallTimeoutError("could not connect to robotsd in "
                                   "time") from None
        fut = await conn.send(rid, data, raw is not None)
        sends.append(rid)
        timer = asyncio.get_running_loop().call_later(
            max(0.0, deadline - time.monotonic()), conn.expire, rid)
        try:
            a = await fut
        finally:
            timer.cancel()
            if not fut.done():  # the caller was cancelled
                conn.forget(rid)
        return result(a)

    async def _connection(self) -> _Connection:
        if self._closed:
            raise ConnectionLostError("client closed")
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            conn = self._conn
            if conn is None or not conn.alive:
                try:
                    r, w = await asyncio.wait_for(
                        asyncio.open_unix_connection(self.path),
                        self.connect_timeout)
                except asyncio.TimeoutError:
                    raise ConnectionLostError(
                        "cannot connect to %s: no accept in %g s"
                        % (self.path, self.connect_timeout)) from None
                except OSError as e:
                    raise connect_error(self.path, e) from None
                conn = self._conn = _Connection(r, w)
            return conn
