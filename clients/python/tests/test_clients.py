"""The blocking and the asyncio client against the real robotsd and the
local origin server. Each case runs for both clients: the asyncio one
through a proxy that runs its coroutines on an event loop thread."""
import asyncio
import concurrent.futures
import hashlib
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import unittest

from support import RULES, ClientTest, poll

import robotsd
from robotsd import (AsyncClient, BadJsonError, BadRequestError, BadUrlError,
                     CallTimeoutError, Cause, Client, ConnectionLostError,
                     DaemonTimeoutError, HistoryEntry, LineTooLongError,
                     NotCachedError,
                     NotRunningError, OverloadedError, RobotsdError, Rule,
                     UnknownOpError, UnsupportedSchemeError)

N_RULES = 1000
MANY = ("User-agent: *\n" + "".join(
    "%s: /p%d/\n" % ("Allow" if i % 2 == 0 else "Disallow", i)
    for i in range(N_RULES)))


def version_of(text):
    """robotsd's version of a robots.txt body: the first 16 hex digits of
    the SHA-256 of its bytes (docs/protocol.md, "Versions")."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Blocking:
    """Drives a robotsd.Client; callers in flight are threads."""

    def __init__(self, path, **kw):
        self.client = Client(path, **kw)
        self.pool = concurrent.futures.ThreadPoolExecutor(8)

    def __getattr__(self, name):
        return getattr(self.client, name)

    def later(self, name, *args, **kw):
        """Call method name in the background: a concurrent Future."""
        return self.pool.submit(getattr(self.client, name), *args, **kw)

    def concurrently(self, calls):
        """Run (name, args) calls at once, one thread each; the results
        (or exceptions) in order."""
        out = [None] * len(calls)

        def run(i, name, args):
            try:
                out[i] = getattr(self.client, name)(*args)
            except Exception as e:  # noqa: BLE001 - handed to the test
                out[i] = e
        ts = [threading.Thread(target=run, args=(i, n, a))
              for i, (n, a) in enumerate(calls)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        return out

    def shutdown(self):
        self.client.close()
        self.pool.shutdown(wait=False)


class Async:
    """Drives a robotsd.AsyncClient on an event loop in a thread; callers
    in flight are tasks of that loop."""

    def __init__(self, path, **kw):
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.client = self._run(self._make(path, kw))

    async def _make(self, path, kw):
        return AsyncClient(path, **kw)

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(120)

    def __getattr__(self, name):
        method = getattr(self.client, name)
        return lambda *a, **kw: self._run(method(*a, **kw))

    def later(self, name, *args, **kw):
        return asyncio.run_coroutine_threadsafe(
            getattr(self.client, name)(*args, **kw), self.loop)

    def concurrently(self, calls):
        async def all_at_once():
            return await asyncio.gather(
                *(getattr(self.client, n)(*a) for n, a in calls),
                return_exceptions=True)
        return self._run(all_at_once())

    def shutdown(self):
        self._run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)


class Cases:
    """The cases both clients pass; DRIVER is Blocking or Async."""

    DRIVER = None

    def client(self, **kw):
        cl = self.DRIVER(self.d.socket, **kw)
        self.addCleanup(cl.shutdown)
        return cl

    def test_verdicts_carry_the_deciding_rule(self):
        self.start()
        cl = self.client()
        r = cl.check("http://A.test:80/private/x?q#f", "FooBot/2.1 (+x)")
        self.assertEqual(r, robotsd.CheckResult(
            url="http://A.test:80/private/x?q#f", allowed=False,
            origin="http://a.test", source="fetched", reason="rule",
            rule=Rule("disallow", "/private/", 2), crawl_delay=2.0,
            expires_in=86400, http_status=200, version=version_of(RULES)))
        r = cl.check("http://a.test/private/open", "FooBot")
        self.assertIs(r.allowed, True)
        self.assertEqual((r.source, r.reason, r.rule),
                         ("cache", "rule", Rule("allow", "/private/open", 3)))
        r = cl.check("http://a.test/public", "FooBot")
        self.assertEqual((r.allowed, r.reason, r.rule), (True, "no_rule",
                                                         None))
        self.assertEqual(len(self.origin.hits("a.test")), 1)

    def test_batch_over_the_limit_is_split(self):
        self.origin.robots("m.test", MANY)
        self.start()
        cl = self.client()
        before = cl.stats()["requests"]
        urls = ["http://m.test/p%d/x" % (i % N_RULES) for i in range(2500)]
        urls[1500] = "gopher://m.test/"
        res = cl.check_many(urls, "A")
        self.assertEqual(cl.stats()["requests"] - before, 4)  # 3 + stats
        self.assertEqual([r.url for r in res], urls)
        for i, r in enumerate(res):
            if i == 1500:
                self.assertIsInstance(r.error, UnsupportedSchemeError)
                self.assertIsNone(r.allowed)
                continue
            j = i % N_RULES
            self.assertIsNone(r.error)
            self.assertEqual(r.rule.pattern, "/p%d/" % j)
            self.assertEqual(r.rule.line, j + 2)
            self.assertIs(r.allowed, j % 2 == 0)
        self.assertEqual(len(self.origin.hits("m.test")), 1)

    def test_wait_false_answers_pending_then_the_verdict(self):
        self.origin.robots("h.test", RULES, hold=True)
        self.start()
        cl = self.client()
        cl.check("http://a.test/", "A")
        r = cl.check("http://h.test/private/x", "A", wait=False)
        self.assertEqual((r.pending, r.allowed, r.origin),
                         (True, None, "http://h.test"))
        res = cl.check_many(["http://h.test/a", "http://a.test/b"], "A",
                            wait=False)
        self.assertEqual([r.pending for r in res], [True, False])
        self.assertIs(res[1].allowed, True)
        self.origin.release("h.test")
        r = poll(lambda: cl.check("http://h.test/private/x", "A",
                                  wait=False).allowed is False)
        self.assertTrue(r, "verdict never came after the fetch")
        self.assertEqual(len(self.origin.hits("h.test")), 1)

    def test_every_error_code_is_a_typed_exception(self):
        self.start("--max-line", "20000")
        cl = self.client(max_line=0)  # 0: let robotsd judge long lines
        cases = [
            (lambda: cl.call_raw(b"{nope"), BadJsonError),
            (lambda: cl.call_raw(b"[1,2]"), BadRequestError),
            (lambda: cl.call({"op": "check", "agent": "A"}), BadRequestError),
            (lambda: cl.call({"op": "check", "agent": "A",
                      "urls": ["http://a.test/"] * 1001}), BadRequestError),
            (lambda: cl.call({"op": "frobnicate"}), UnknownOpError),
            (lambda: cl.check("http:///x", "A"), BadUrlError),
            (lambda: cl.check("gopher://a.test/", "A"),
             UnsupportedSchemeError),
            (lambda: cl.inspect("wss://a.test"), UnsupportedSchemeError),
            (lambda: cl.check("http://a.test/" + "x" * 30000, "A"),
             LineTooLongError),
            (lambda: cl.inspect("nowhere.test"), NotCachedError),
        ]
        for call, cls in cases:
            with self.assertRaises(cls) as cm:
                call()
            e = cm.exception
            self.assertIsInstance(e, RobotsdError)
            self.assertEqual(e.code, robotsd.ERRORS[e.code].code)
            self.assertIs(type(e), robotsd.ERRORS[e.code])
            self.assertTrue(e.message, "empty message for %s" % e.code)
            self.assertEqual(cl.ping(), "0.1.0")  # connection still good
        self.assertEqual(set(robotsd.ERRORS), {
            "bad_json", "bad_request", "unknown_op", "bad_url",
            "unsupported_scheme", "line_too_long", "overloaded", "timeout",
            "not_cached", "internal", "forbidden", "config"})

    def test_line_over_the_limit_is_refused_before_sending(self):
        self.start()
        cl = self.client()
        before = cl.stats()["requests"]
        with self.assertRaises(LineTooLongError):
            cl.check("http://a.test/" + "x" * 70000, "A")
        self.assertEqual(cl.stats()["requests"] - before, 1)

    def test_overloaded_when_too_many_checks_wait(self):
        self.origin.robots("h1.test", RULES, hold=True)
        self.origin.robots("h2.test", RULES, hold=True)
        self.start("--max-waiting", "1")
        cl = self.client()
        first = cl.later("check", "http://h1.test/x", "A")
        self.assertTrue(poll(lambda: cl.stats()["waiting"] == 1))
        with self.assertRaises(OverloadedError):
            cl.check("http://h2.test/x", "A")
        self.origin.release("h1.test")
        self.assertIs(first.result(20).allowed, True)

    def test_overloaded_when_too_many_connections(self):
        self.start("--max-connections", "1")
        self.c.close()
        # The one slot is free once robotsd saw the start-up probe and
        # self.c go; then holder takes it.
        holder = poll(self._holder)
        self.assertTrue(holder, "no connection accepted")
        cl = self.client(timeout=5)
        with self.assertRaises(OverloadedError):
            cl.ping()
        holder.close()
        self.assertEqual(poll(self._ping_or_none(cl)), "0.1.0")

    def _holder(self):
        """A harness client that robotsd serves, or None."""
        h = self.d.client(timeout=5)
        try:
            if h.call({"op": "ping"}).get("ok") is True:
                return h
        except (OSError, EOFError):
            pass
        h.close()
        return None

    def _ping_or_none(self, cl):
        def ping():
            try:
                return cl.ping()
            except OverloadedError:
                return None
        return ping

    def test_overloaded_even_when_the_refusal_ends_in_a_reset(self):
        # A server that writes "overloaded" and closes with the request
        # unread resets the stream; the line read before the reset still
        # decides the error.
        tmp = tempfile.mkdtemp(prefix="robotsd-client-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "refusing.sock")
        lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lsock.bind(path)
        lsock.listen(1)
        self.addCleanup(lsock.close)

        def refuse():
            s, _ = lsock.accept()
            s.recv(1, socket.MSG_PEEK)  # the request arrived, left unread
            s.sendall(b'{"id":null,"ok":false,"error":{"code":"overloaded",'
                      b'"message":"too many connections"}}\n')
            s.close()
        t = threading.Thread(target=refuse, daemon=True)
        t.start()
        cl = self.DRIVER(path, timeout=5)
        self.addCleanup(cl.shutdown)
        with self.assertRaises(OverloadedError):
            cl.ping()
        t.join(5)

    def test_daemon_timeout_is_a_typed_exception(self):
        # a's fetch times out at 2 s; b's is queued behind it and cannot
        # end before SIGTERM's drain deadline (--stop-timeout 3 s).
        for h in ("a2.test", "b2.test"):
            self.origin.robots(h, RULES, hold=True)
        self.start("--fetch-timeout", "2", "--max-fetches", "1",
                   "--stop-timeout", "3")
        cl = self.client(timeout=20)
        a = cl.later("check", "http://a2.test/", "A")
        b = cl.later("check", "http://b2.test/", "A")
        self.assertTrue(poll(lambda: cl.stats()["waiting"] == 2))
        self.d.proc.send_signal(signal.SIGTERM)
        self.assertEqual(a.result(20).reason, "unreachable")
        with self.assertRaises(DaemonTimeoutError) as cm:
            b.result(20)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertEqual(self.d.wait_exit(), 0)

    def test_call_timeout_leaves_the_connection_usable(self):
        self.origin.robots("h.test", RULES, hold=True)
        self.start()
        cl = self.client()
        t0 = time.monotonic()
        with self.assertRaises(CallTimeoutError) as cm:
            cl.check("http://h.test/x", "A", timeout=0.5)
        self.assertLess(time.monotonic() - t0, 3.0)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertEqual(cl.ping(timeout=5), "0.1.0")
        self.origin.release("h.test")
        self.assertIs(cl.check("http://h.test/x", "A").allowed, True)

    def test_restart_is_survived_by_reconnecting(self):
        self.start()
        cl = self.client(timeout=20)
        self.assertIs(cl.check("http://a.test/private/x", "A").allowed, False)
        self.restart()
        r = cl.check("http://a.test/private/x", "A")
        self.assertEqual((r.allowed, r.source), (False, "fetched"))
        # A call made while robotsd is down waits for it to come back.
        self.d.stop()
        ping = cl.later("ping")
        time.sleep(0.3)  # the call retries meanwhile
        self.assertFalse(ping.done())
        self.restart()
        self.assertEqual(ping.result(20), "0.1.0")
        # The harness's start-up probe may still wait in the listen queue
        # when our ping is answered: wait until robotsd has accepted it,
        # then ask that it be the only other connection (probe + us).
        def accepted():
            n = cl.stats()["connections_total"]
            return n if n >= 2 else None
        self.assertEqual(poll(accepted), 2)

    def test_call_in_flight_when_robotsd_dies_is_sent_again(self):
        self.origin.robots("h.test", RULES, hold=True)
        self.start()
        cl = self.client(timeout=20)
        r = cl.later("check", "http://h.test/private/x", "A")
        self.assertTrue(poll(lambda: self.origin.hits("h.test")))
        self.restart(kill=True)
        self.assertTrue(poll(lambda: len(self.origin.hits("h.test")) == 2),
                        "the check was not sent to the new robotsd")
        self.origin.release("h.test")
        r = r.result(20)
        self.assertEqual((r.allowed, r.source), (False, "fetched"))

    def test_no_daemon_is_connection_lost_after_the_timeout(self):
        self.start()
        self.d.stop()
        cl = self.client(timeout=0.5)
        t0 = time.monotonic()
        with self.assertRaises(ConnectionLostError):
            cl.ping()
        self.assertBetween(time.monotonic() - t0, 0.3, 3.0, "gave up after")

    def test_not_running_is_typed_names_the_socket_after_connect_timeout(
            self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        absent = os.path.join(d, "absent.sock")
        dead = os.path.join(d, "dead.sock")  # a socket file, not listening
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(dead)
        s.close()
        for path in (absent, dead):
            with self.subTest(path=path):
                cl = self.DRIVER(path, timeout=60, connect_timeout=0.6)
                self.addCleanup(cl.shutdown)
                t0 = time.monotonic()
                with self.assertRaises(NotRunningError) as cm:
                    cl.ping()
                # connect_timeout, not the call's 60 s
                self.assertBetween(time.monotonic() - t0, 0.3, 5.0,
                                   "gave up after")
                self.assertIsInstance(cm.exception, ConnectionLostError)
                self.assertEqual(cm.exception.socket, path)
                self.assertIn(path, str(cm.exception))
        self.assertEqual(robotsd.DEFAULT_CONNECT_TIMEOUT, 5.0)
        self.assertEqual(Client(absent).connect_timeout, 5.0)
        self.assertEqual(AsyncClient(absent).connect_timeout, 5.0)

    def test_purge_none_is_refused_and_purge_all_drops_every_origin(self):
        self.start()
        cl = self.client()
        cl.check("http://a.test/x", "A")
        for bad in (None, 3):
            with self.assertRaises(TypeError):
                cl.purge(bad)
        self.assertEqual(self._stats()["cache_entries"], 1)  # none dropped
        self.assertEqual(cl.purge_all(), 1)
        self.assertEqual(self._stats()["cache_entries"], 0)

    def test_unreachable_cause_is_typed(self):
        self.origin.set("down.test", status=503)
        self.start()
        cl = self.client()
        r = cl.check("http://down.test/x", "A")
        self.assertEqual((r.allowed, r.reason), (False, "unreachable"))
        self.assertEqual(r.cause, Cause("http_503", "HTTP status 503"))
        [r] = cl.check_many(["http://down.test/y"], "A")
        self.assertEqual(r.cause, Cause("http_503", "HTTP status 503"))
        self.assertIsNone(cl.check("http://a.test/x", "A").cause)

    def test_versions_name_the_body_and_history_lists_them(self):
        body2 = RULES.replace("Disallow: /private/", "Disallow: /secret/")
        self.start(test_clock=True)
        cl = self.client()
        v1, v2 = version_of(RULES), version_of(body2)
        self.assertEqual(cl.check("http://a.test/x", "A").version, v1)
        self.assertIsNone(cl.check("http://a.test/robots.txt", "A").version)
        res = cl.check_many(["http://a.test/y", "http://a.test/robots.txt",
                             "gopher://a.test/"], "A")
        self.assertEqual([r.version for r in res], [v1, None, None])
        self.assertIsInstance(res[2].error, UnsupportedSchemeError)
        self.assertEqual([e.version for e in cl.history("http://a.test")],
                         [v1])

        self.origin.robots("a.test", body2)
        self.advance(86400 + 1)
        cl.check("http://a.test/x", "A")  # refreshes in the background
        self.origin.wait_hits("a.test", 2)
        fetched = self.wait_fetched("http://a.test")
        self.assertEqual(cl.check("http://a.test/x", "A").version, v2)
        self.assertEqual([r.version for r in cl.check_many(
            ["http://a.test/z"], "A")], [v2])
        h = cl.history("HTTP://a.test:80")
        self.assertEqual([e.version for e in h], [v2, v1])
        for e in h:
            self.assertIsInstance(e, HistoryEntry)
            self.assertEqual((e.http_status, e.state), (200, "rules"))
            self.assertLessEqual(e.first_seen, e.last_seen)
        self.assertEqual(h[0].first_seen, int(fetched["fetched_at"]))
        self.assertLess(h[1].last_seen, h[0].first_seen)
        with self.assertRaises(NotCachedError):
            cl.history("http://nothere.test")
        with self.assertRaises(TypeError):
            cl.history(None)

    def test_1000_checks_in_flight_each_get_their_own_answer(self):
        self.origin.robots("m.test", MANY, hold=True)
        self.start()
        cl = self.client()
        urls = ["http://m.test/p%d/x" % i for i in range(N_RULES)]
        done = []
        t = threading.Thread(target=lambda: done.append(cl.concurrently(
            [("check", (u, "A")) for u in urls])))
        t.start()
        self.assertTrue(poll(lambda: self._stats()["waiting"] == N_RULES),
                        "not all %d checks in flight" % N_RULES)
        self.assertEqual(self._stats()["connections"], 2)  # cl + stats
        self.origin.release("m.test")
        t.join(60)
        res = done[0]
        for i, r in enumerate(res):
            self.assertNotIsInstance(r, Exception)
            self.assertEqual(r.rule, Rule("allow" if i % 2 == 0 else
                                          "disallow", "/p%d/" % i, i + 2))
            self.assertIs(r.allowed, i % 2 == 0)
        self.assertEqual(len(self.origin.hits("m.test")), 1)

    def _stats(self):
        return self.c.call({"op": "stats"})["stats"]


class BlockingClientTest(Cases, ClientTest):
    DRIVER = Blocking


class AsyncClientTest(Cases, ClientTest):
    DRIVER = Async


class SocketPath(unittest.TestCase):

    def test_argument_then_environment_then_default(self):
        import os
        old = os.environ.pop("ROBOTSD_SOCKET", None)
        try:
            self.assertEqual(Client().path, "/run/robotsd/robotsd.sock")
            os.environ["ROBOTSD_SOCKET"] = "/tmp/env.sock"
            self.assertEqual(Client().path, "/tmp/env.sock")
            self.assertEqual(AsyncClient().path, "/tmp/env.sock")
            self.assertEqual(Client("/tmp/arg.sock").path, "/tmp/arg.sock")
        finally:
            os.environ.pop("ROBOTSD_SOCKET", None)
            if old is not None:
                os.environ["ROBOTSD_SOCKET"] = old


if __name__ == "__main__":
    unittest.main()
