"""The blocking client: one pipelined connection shared by any number of
threads.

A caller sends its line itself when it goes out at once (MSG_DONTWAIT),
else a writer thread sends what is queued, so a caller never blocks longer
than its timeout, even when robotsd is slow to read. A caller waiting for
its answer reads the socket itself when no one else does, and hands every
answer it reads to the call waiting for its id; a background reader reads
only for calls no caller waits on (submit()). So one call at a time costs
no thread switch. When the connection breaks (robotsd restarted), the
calls in flight are sent again on a new connection while their timeouts
allow."""
import concurrent.futures
import itertools
import queue
import select
import socket
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence

from ._protocol import (BATCH_LIMIT, DEFAULT_CONNECT_TIMEOUT,
                        DEFAULT_MAX_LINE, DEFAULT_TIMEOUT, AnswerLines,
                        CallTimeoutError, CheckResult, ConnectionLostError,
                        HistoryEntry, PageLike, Pending,
                        ProtocolError, RobotsdError, batch_requests,
                        batch_results, check_head, check_request,
                        connect_error, error_from, history_request,
                        parse_answer, parse_history, purge_request,
                        refuses_connection, request_head, result,
                        socket_path, with_id)
from .watch import ChangeEvent, watch_blocking

_RETRY_PAUSE = 0.05  # first pause between reconnect attempts (doubles)
_RETRY_PAUSE_MAX = 1.0
# Times one request is sent at most: a request that robotsd never answers
# because its connection keeps breaking is not resent forever.
_MAX_SENDS = 3


class _Call:
    """The slot of a call whose caller reads its answer itself (wait()):
    lighter than a Future, as it is only ever set under its connection's
    lock, before the connection's waiters are woken."""

    __slots__ = ("answer", "error", "robotsd_id", "robotsd_conn")

    def __init__(self) -> None:
        self.answer: Optional[Dict[str, Any]] = None
        self.error: Optional[BaseException] = None

    def done(self) -> bool:
        return self.answer is not None or self.error is not None

    def set_result(self, a: Dict[str, Any]) -> None:
        self.answer = a

    def set_exception(self, e: BaseException) -> None:
        self.error = e

    def result(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The answer, or raise its error; TimeoutError while neither."""
        if self.error is not None:
            raise self.error
        if self.answer is None:
            raise concurrent.futures.TimeoutError()
        return self.answer


class _Connection:
    """One socket, read by the callers waiting on it (or its background
    reader), written by its callers (or its writer thread)."""

    def __init__(self, path: str, connect_timeout: float):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(max(connect_timeout, 0.001))
            self.sock.connect(path)
            self.sock.settimeout(None)
        except OSError:
            self.sock.close()
            raise
        self.lock = threading.Lock()
        self.answered = threading.Condition(self.lock)  # callers wait here
        self.unwaited = threading.Condition(self.lock)  # the background
        self.reading = False  # someone is in _read_once
        self.waiting = 0  # callers waiting in answered
        self.background: set = set()  # ids of calls no caller waits on
        self.pending = Pending()
        self.alive = True
        self.closed_by: Optional[RobotsdError] = None
        self.rd = AnswerLines()
        self.poll = select.poll()
        self.poll.register(self.sock.fileno(), select.POLLIN)
        self.send_lock = threading.Lock()
        self.backlog = False  # lines wait in self.out: send after them
        self.out: "queue.Queue[Optional[bytes]]" = queue.Queue()
        for target in (self._background_loop, self._write_loop):
            threading.Thread(target=target, daemon=True,
                             name="robotsd-" + target.__name__).start()

    def submit(self, rid: int, data: bytes, raw: bool,
               background: bool = False, fut: Any = None) -> Any:
        """Send data as call rid, its answer to fut (a Future, or the
        _Call of a caller that waits for it in wait(); None: a new
        Future); background: no caller will wait for its answer in wait()
        (the background reader reads it)."""
        if fut is None:
            fut = concurrent.futures.Future()
        with self.lock:
            if not self.alive:
                # closed_by: robotsd refused the connection (overloaded)
                raise self.closed_by or ConnectionLostError(
                    "connection to robotsd closed")
            self.pending.add(rid, fut, len(data), raw)
            if background:
                self.background.add(rid)
                self.unwaited.notify()
        self._send(data)
        return fut

    def _send(self, data: bytes) -> None:
        """Send data now if it goes out without blocking, else queue the
        rest for the writer thread (lines keep their order)."""
        with self.send_lock:
            if not self.backlog:
                try:
                    n = self.sock.send(data, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    n = 0
                except OSError as e:
                    self._send_failed(e)
                    return
                if n == len(data):
                    return
                data, self.backlog = data[n:], True
            self.out.put(data)

    def _send_failed(self, e: OSError) -> None:
        """Fail the connection after a send error, with what robotsd said
        before closing it when it refused it (overloaded): the answers
        already in the socket are read first, unless someone reads."""
        with self.lock:
            mine = not self.reading
            self.reading = True
        try:
            while mine:
                chunk = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
                if not chunk:
                    break
                for line in self.rd.feed(chunk):
                    self._dispatch(line)
        except OSError:
            pass
        finally:
            if mine:
                with self.lock:
                    self.reading = False
        self._fail(self.closed_by or ConnectionLostError(
            "send to robotsd: %s" % e))

    def forget(self, rid: int) -> None:
        with self.lock:
            self.pending.pop(rid)
            self.background.discard(rid)

    def wait(self, fut: "concurrent.futures.Future[Any]",
             deadline: float) -> None:
        """Return once fut is done, the connection is dead or deadline
        has passed, reading the answers meanwhile when no one else does."""
        with self.lock:
            while not fut.done() and self.alive:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                if self.reading:
                    self.waiting += 1
                    try:
                        self.answered.wait(left)
                    finally:
                        self.waiting -= 1
                    continue
                self.reading = True
                self.lock.release()
                try:
                    self._read_once(left)
                finally:
                    self.lock.acquire()
                    self.reading = False
                    if self.waiting:
                        self.answered.notify_all()
                    if self.background:
                        self.unwaited.notify()

    def close(self) -> None:
        self._fail(ConnectionLostError("client closed"))

    def _write_loop(self) -> None:
        while True:
            data = self.out.get()
            if data is None:
                return
            parts = [data]  # send what queued meanwhile in one go
            while len(parts) < 4096:
                try:
                    more = self.out.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    return
                parts.append(more)
            try:
                self.sock.sendall(b"".join(parts))
            except OSError as e:
                self._fail(self.closed_by or ConnectionLostError(
                    "send to robotsd: %s" % e))
                return
            with self.send_lock:
                if self.out.empty():
                    self.backlog = False  # callers send themselves again

    def _background_loop(self) -> None:
        """Read for the calls no caller waits on, while no caller reads."""
        while True:
            with self.lock:
                while self.alive and (self.reading or not self.background):
                    self.unwaited.wait()
                if not self.alive:
                    return
                self.reading = True
            try:
                self._read_once(None)
            finally:
                with self.lock:
                    self.reading = False
                    self.answered.notify_all()

    def _read_once(self, timeout: Optional[float]) -> None:
        """Read what robotsd sent within timeout seconds (None: until it
        sends something) and hand out the answers it completes."""
        try:
            if not self.poll.poll(None if timeout is None else
                                  max(1, int(timeout * 1000 + 0.999))):
                return
            chunk = self.sock.recv(1 << 16)
        except (ValueError, OSError) as e:  # ValueError: closed meanwhile
            # A reset after "overloaded" still means overloaded.
            self._fail(self.closed_by or ConnectionLostError(
                "read from robotsd: %s" % e))
            return
        if not chunk:
            self._fail(self.closed_by or ConnectionLostError(
                "robotsd closed the connection"))
            return
        for line in self.rd.feed(chunk):
            self._dispatch(line)
        overflow = self.rd.overflow()
        if overflow is not None:
            self._fail(overflow)

    def _dispatch(self, line: bytes) -> None:
        try:
            a = parse_answer(line)
        except ValueError:
            return
        if not isinstance(a, dict):
            return
        with self.lock:
            if a.get("id", 0) is None and refuses_connection(a) and \
                    not self.pending.raw:
                # Too many connections: robotsd closes this one.
                self.closed_by = error_from(a["error"])
                return
            try:
                rid = self.pending.owner(a)
                fut = self.pending.pop(rid)
                self.background.discard(rid)
            except ProtocolError as e:
                fut, bad = None, e
            else:
                bad = None
                if type(fut) is _Call:  # set before its caller wakes
                    fut.set_result(a)
                    return
        if bad is not None:  # an answer nobody asked for: not robotsd
            self._fail(bad)
        elif fut is not None and not fut.done():
            fut.set_result(a)

    def _fail(self, exc: RobotsdError) -> None:
        with self.lock:
            if not self.alive:
                return
            self.alive = False
            slots = self.pending.drain()
            for fut in slots:
                if type(fut) is _Call:  # set before its caller wakes
                    fut.set_exception(exc)
            self.background.clear()
            self.answered.notify_all()
            self.unwaited.notify_all()
        self.out.put(None)
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for fut in slots:
            if not fut.done():
                fut.set_exception(exc)


class Client:
    """A blocking robotsd client, safe for concurrent use by many threads.

    >>> c = Client()                      # $ROBOTSD_SOCKET or the default
    >>> r = c.check("https://example.com/a", "FooBot/2.1")
    >>> r.allowed, r.rule

    path: the socket (else $ROBOTSD_SOCKET, else /run/robotsd/robotsd.sock).
    timeout: seconds every call may take unless it says otherwise
    (reconnecting included). max_line: request lines longer than this are
    refused with LineTooLongError before being sent (robotsd's --max-line).
    connect_timeout: seconds a call keeps trying to connect before it fails
    (NotRunningError when nothing listens on the socket; 5 s as in the Node
    and Go clients).
    The connection is opened on first use and reused; close() ends it.
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
        self._lock = threading.Lock()
        self._conn: Optional[_Connection] = None
        self._closed = False

    def watch(self, origins: Optional[List[str]] = None,
              agents: Optional[List[str]] = None) -> "Iterator[ChangeEvent]":
        """The change feed (robotsd.watch): an endless iterator of
        ChangeEvent for origins (None: all) and agents (None: "*"), on a
        connection of its own that reconnects and subscribes again after
        robotsd restarts. Raises the protocol error of a refused watch."""
        return watch_blocking(self.path, origins, agents, self.timeout)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; calls in flight fail."""
        with self._lock:
            conn, self._conn, self._closed = self._conn, None, True
        if conn is not None:
            conn.close()

    # --- operations ------------------------------------------------------
    def check(self, url: str, agent: str, wait: bool = True,
              timeout: Optional[float] = None, usage: bool = False,
              tokens: Optional[Sequence[str]] = None,
              page: Optional[PageLike] = None,
              tdm: bool = False) -> CheckResult:
        """May agent fetch url? With wait=False an origin not cached yet
        answers at once with pending=True (allowed None) and robotsd fetches
        its robots.txt in the background. usage=True adds the site's usage
        preferences (.usage, .usage_from), tokens=["Google-Extended", ...]
        the verdicts for those control tokens (.tokens). page=Page(headers,
        meta), what came with the fetched page, adds its robots rules
        (.robots_tag) and .evidence; tdm=True the TDMRep answer (.tdm).
        Raises a RobotsdError subclass (TypeError for a malformed page)."""
        if wait and not (usage or tokens is not None or page is not None or
                         tdm):
            head = check_head(url, agent)  # the common line, built fast
        else:
            head = request_head(check_request(url, agent, wait, usage,
                                              tokens, page, tdm))
        a = self._call(head, timeout)
        return CheckResult.from_answer(url, a, usage, tokens is not None,
                                       page is not None, tdm)

    def check_many(self, urls: List[str], agent: str, wait: bool = True,
                   timeout: Optional[float] = None, usage: bool = False,
                   tokens: Optional[Sequence[str]] = None,
                   tdm: bool = False) -> List[CheckResult]:
        """Check many URLs for one agent, in batches of robotsd's limit
        (1000). One result per URL, in order; a URL that fails alone has
        its error in .error instead of raising. The batches go one after
        another: a batch waiting on fetches may hold up to 1000 of the
        1024 waiting checks robotsd allows one connection, and once it is
        answered its origins are cached for the next. usage, tokens and
        tdm as for check() (page is for a single check)."""
        urls = list(urls)
        deadline = self._deadline(timeout)
        out: List[CheckResult] = []
        reqs = batch_requests(urls, agent, wait, usage, tokens, tdm)
        for i, req in enumerate(reqs):
            a = self._await(self._submit_retrying(request_head(req),
                                                  deadline), deadline)
            out += batch_results(urls[i * BATCH_LIMIT:(i + 1) * BATCH_LIMIT],
                                 a, usage, tokens is not None, tdm)
        return out

    def inspect(self, origin: str,
                timeout: Optional[float] = None) -> Dict[str, Any]:
        """What the cache holds for origin (the answer's fields as a dict);
        NotCachedError if nothing."""
        return self.call({"op": "inspect", "origin": origin}, timeout)

    def history(self, origin: str,
                timeout: Optional[float] = None) -> List[HistoryEntry]:
        """The last distinct robots.txt versions of a cached origin,
        newest (the current one) first; NotCachedError if nothing."""
        return parse_history(self.call(history_request(origin), timeout))

    def purge(self, origin: str, timeout: Optional[float] = None) -> int:
        """Drop origin from the cache; returns how many entries were
        dropped (0 or 1). TypeError for anything but a string: purge_all()
        drops every origin."""
        return int(self.call(purge_request(origin), timeout)["purged"])

    def purge_all(self, timeout: Optional[float] = None) -> int:
        """Drop every origin from the cache; returns how many."""
        return int(self.call({"op": "purge", "all": True},
                             timeout)["purged"])

    def stats(self, timeout: Optional[float] = None) -> Dict[str, int]:
        """robotsd's counters."""
        return dict(self.call({"op": "stats"}, timeout)["stats"])

    def ping(self, timeout: Optional[float] = None) -> str:
        """robotsd's version."""
        return str(self.call({"op": "ping"}, timeout)["version"])

    # --- lower level -----------------------------------------------------
    def call(self, req: Dict[str, Any],
             timeout: Optional[float] = None) -> Dict[str, Any]:
        """Send one request (a dict with "op"; its id is set here) and
        return the ok answer as a dict, or raise its typed error."""
        return self._call(request_head(req), timeout)

    def _call(self, head: bytes,
              timeout: Optional[float] = None) -> Dict[str, Any]:
        """call() of the request line head (request_head())."""
        deadline = self._deadline(timeout)
        try:  # the common case, without the resending machinery
            fut = self._submit(head, deadline, None, call=_Call())
        except ConnectionLostError:
            fut = None  # not connected: connect with pauses, below
        if fut is not None:
            try:
                return self._await(fut, deadline)
            except ConnectionLostError as e:  # sent again, below
                if isinstance(e, ProtocolError) or self._closed or \
                        time.monotonic() >= deadline:
                    raise
        return self._await(self._submit_retrying(
            head, deadline, 0 if fut is None else 1), deadline)

    def call_raw(self, line: bytes,
                 timeout: Optional[float] = None) -> Dict[str, Any]:
        """Send one raw line (no newline) that robotsd answers with id null
        (not JSON, not an object, too long) and return that answer or raise
        its typed error. For tests and debugging."""
        deadline = self._deadline(timeout)
        fut = self._submit(b"", deadline, raw=line + b"\n")
        return self._await(fut, deadline)

    def submit(self, req: Dict[str, Any], timeout: Optional[float] = None) \
            -> "concurrent.futures.Future[Dict[str, Any]]":
        """Send req without waiting: a Future of its raw answer dict. It
        connects (one attempt, no waiting) if needed and does not resend
        after a lost connection; the Future fails with
        ConnectionLostError then. Used by the Scrapy middleware."""
        return self._submit(request_head(req), self._deadline(timeout),
                            raw=None, background=True)

    def forget(self, fut: "concurrent.futures.Future[Any]") -> None:
        """Stop waiting for a submitted request (its answer is dropped)."""
        rid = getattr(fut, "robotsd_id", None)
        conn = getattr(fut, "robotsd_conn", None)
        if rid is not None and conn is not None:
            conn.forget(rid)

    # --- internals -------------------------------------------------------
    def _deadline(self, timeout: Optional[float]) -> float:
        return time.monotonic() + (self.timeout if timeout is None
                                   else timeout)

    def _connection(self, deadline: float) -> _Connection:
        with self._lock:
            if self._closed:
                raise ConnectionLostError("client closed")
            conn = self._conn
            if conn is None or not conn.alive:
                try:
                    conn = _Connection(self.path, min(
                        deadline - time.monotonic(), self.connect_timeout))
                except OSError as e:
                    raise connect_error(self.path, e) from None
                self._conn = conn
            return conn

    def _submit(self, head: bytes, deadline: float, raw: Optional[bytes],
                background: bool = False, call: Optional[_Call] = None) \
            -> Any:
        """Send the request line head (request_head()) with a new id, or
        the line raw: its Future, or call when given (the caller waits for
        it in wait())."""
        rid = next(self._ids)
        data = raw if raw is not None else \
            with_id(head, rid, self.max_line)
        conn = self._conn  # connected: no lock (a dead one refuses submit)
        if conn is None or not conn.alive or self._closed:
            conn = self._connection(deadline)
        fut = conn.submit(rid, data, raw is not None, background, call)
        fut.robotsd_id = rid  # type: ignore[attr-defined]
        fut.robotsd_conn = conn  # type: ignore[attr-defined]
        return fut

    def _submit_retrying(self, head: bytes, deadline: float,
                         sends: int = 0) \
            -> "concurrent.futures.Future[Dict[str, Any]]":
        """Submit, resending on a new connection whenever the connection
        breaks before the answer, until deadline (at most _MAX_SENDS
        times, sends of them made already)."""
        outer: "concurrent.futures.Future[Dict[str, Any]]" = \
            concurrent.futures.Future()
        pause = _RETRY_PAUSE

        def attempt() -> None:
            nonlocal pause, sends
            # connecting is given up after connect_timeout
            give_up = min(deadline, time.monotonic() + self.connect_timeout)
            while True:
                try:
                    inner = self._submit(head, deadline, None)
                    break
                except ConnectionLostError as e:
                    if self._closed or time.monotonic() + pause > give_up:
                        outer.set_exception(e)
                        return
                    time.sleep(pause)
                    pause = min(pause * 2, _RETRY_PAUSE_MAX)
                except RobotsdError as e:  # refused before sending
                    outer.set_exception(e)
                    return
            sends += 1
            outer.robotsd_id = inner.robotsd_id  # type: ignore
            outer.robotsd_conn = inner.robotsd_conn  # type: ignore
            inner.add_done_callback(done)

        def done(inner: "concurrent.futures.Future[Dict[str, Any]]") -> None:
            exc = inner.exception()
            if isinstance(exc, ConnectionLostError) and not self._closed \
                    and not isinstance(exc, ProtocolError) \
                    and time.monotonic() < deadline and sends < _MAX_SENDS:
                threading.Thread(target=attempt, daemon=True).start()
            elif exc is not None:
                outer.set_exception(exc)
            elif not outer.done():
                outer.set_result(inner.result())

        attempt()
        return outer

    def _await(self, fut: "concurrent.futures.Future[Dict[str, Any]]",
               deadline: float) -> Dict[str, Any]:
        if type(fut) is _Call:  # the common case: read, answered
            fut.robotsd_conn.wait(fut, deadline)
            if fut.answer is not None:
                return result(fut.answer)
        while not fut.done():
            left = deadline - time.monotonic()
            conn = getattr(fut, "robotsd_conn", None)
            if left <= 0:
                break
            if conn is not None and conn.alive:
                conn.wait(fut, deadline)  # reads the answer itself
            elif type(fut) is _Call:  # set when its connection failed
                break
            else:  # sent again on a new connection soon: wait for it
                concurrent.futures.wait([fut], min(left, _RETRY_PAUSE))
        try:
            a = fut.result(max(0.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            self.forget(fut)
            raise CallTimeoutError("no answer from robotsd in time") from None
        return result(a)
