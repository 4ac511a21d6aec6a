"""RobotsdMiddleware: Scrapy's robots.txt middleware, with robotsd deciding.

A drop-in replacement for scrapy.downloadermiddlewares.robotstxt.
RobotsTxtMiddleware. Enable it in place of that one and let robotsd, not
Scrapy, fetch robots.txt::

    ROBOTSTXT_OBEY = False
    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "robotsd.scrapy.RobotsdMiddleware": 100,
    }

Settings:

- ROBOTSD_ENABLED (default True): False disables the middleware.
- ROBOTSD_SOCKET: robotsd's socket (else $ROBOTSD_SOCKET, else
  /run/robotsd/robotsd.sock).
- ROBOTSD_TIMEOUT (default 70): seconds a check may take.
- ROBOTSD_FAIL_OPEN (default False): what to do when robotsd cannot answer
  (not running, overloaded, timeout, internal error). False drops the
  request (IgnoreRequest, stats robotsd/error_count/CODE): a crawler that
  cannot ask must not fetch, as RFC 9309 treats an unreachable robots.txt
  as "disallow all" and robotsd does the same for unreachable origins.
  True lets the request through, as Scrapy's own middleware does when
  robots.txt cannot be downloaded.
- The agent: ROBOTSTXT_USER_AGENT, else the request's User-Agent header,
  else USER_AGENT (as Scrapy's middleware picks it).
- ROBOTSD_USAGE_PURPOSES (default []): the purposes the crawl's content is
  for, among "train-ai", "search", "ai-input", "ai-use" and "tdm" (TDMRep;
  it implies ROBOTSD_TDM) (another name
  stops the crawl at start: a typo must not silently allow everything); a
  list, or a comma-separated string whose empty names are left out, so
  that `-s ROBOTSD_USAGE_PURPOSES=` lists none. When it is
  not empty the middleware asks robotsd for the site's usage preferences
  (Content-Usage, Content-Signal), and a request whose URL has any listed
  purpose "disallowed" is dropped like a disallowed one: IgnoreRequest,
  stats robotsd/usage_forbidden and robotsd/usage_forbidden/PURPOSE, a
  debug log line naming the deciding robots.txt lines.
- ROBOTSD_USAGE_UNKNOWN (default "allow"): "deny" drops a request whose
  listed purpose is "unknown" too (the site said nothing about it).
- ROBOTSD_USAGE (default False): ask for the usage preferences even with
  no purposes listed, to record them with the items (see below).
- ROBOTSD_TDM (default False; implied by "tdm" among the purposes): ask
  for the origin's TDMRep answer (robotsd fetches /.well-known/tdmrep.json)
  and record it as meta["robotsd"]["tdm"].
- ROBOTSD_USAGE_MODE (default "refuse"): "refuse" judges the purposes
  before the fetch, by robots.txt's lines only, as described above (the
  default: a page its owner marked costs them no download, and crawls
  behave as in earlier versions). "discover" fetches every page robots.txt
  allows and follows its links; RobotsdUsagePipeline (it must be in
  ITEM_PIPELINES, or the crawl stops at start) drops the items whose
  page answer, after the download, rules a purpose out.
- ROBOTSD_PAGE (default False; implied by "discover"): after the download
  of a text/html response robotsd judged, ask robotsd again with its
  header lines and the (name, content) of its <head>'s <meta> elements,
  and put that answer in meta["robotsd"]. Off by default: it is a second
  check per page, and a crawl asking for nothing of the page pays nothing.
  A page check robotsd cannot answer is handled as ROBOTSD_FAIL_OPEN says
  (dropped, or kept with the answer of before the fetch). A page check
  answered disallowed (robots.txt changed, or became unreachable, between
  the check before the fetch and the one after) drops the response: its
  items and links are not used (IgnoreRequest, stat
  robotsd/page_forbidden).
- ROBOTSD_UNREACHABLE (default "defer"): what to do with a request whose
  origin robotsd answers "unreachable" (its robots.txt answered 5xx or 429,
  or could not be fetched: RFC 9309 says "do not crawl now", not "never").
  "defer" schedules the request again after the answer's expires_in (the
  time to robotsd's next try; at least 1 s), at most ROBOTSD_DEFER_MAX
  times (default 5) before dropping it (stat robotsd/gave_up); the crawl
  stays open while requests are deferred. robotsd/deferred counts the
  requests deferred, each once however often; a debug line tells each
  deferral. One INFO line per origin says
  it is deferred and why (the answer's cause). "drop" drops it at once
  (stat robotsd/unreachable), as earlier versions did.
- ROBOTSD_REQUIRED (default False): True checks at spider start that
  robotsd answers within ROBOTSD_CONNECT_TIMEOUT and otherwise stops the
  crawl (close reason "robotsd_unavailable") with one ERROR line naming
  the socket.
- ROBOTSD_CONNECT_TIMEOUT (default 5): seconds a check keeps trying to
  connect while robotsd cannot be reached (not running yet, restarting),
  as the clients' calls do, with pauses doubling from 0.05 s to 1 s; then
  it fails as robotsd not running (see ROBOTSD_FAIL_OPEN).

Every response of a request robotsd judged carries response.meta["robotsd"]
= {"version": the robots.txt version robotsd answered with (None if it
gives none), "usage": {purpose: "allowed"|"disallowed"|"unknown"} or None
when not asked, "usage_from": [{"directive", "pattern", "line", "value",
"scope", "source"}, ...] or None when not asked}, and after a page check
also "robots_tag": {"rules", "values", "sources"} and "evidence":
{"robots", "tdmrep", "page"}: plain JSON values, so a spider can
copy them into its items and an item pipeline store them. A request the
middleware did not judge (see below) has meta["robotsd"] None.

Like Scrapy's middleware it leaves alone requests with meta
dont_obey_robotstxt and data: and file: URLs. A URL robotsd cannot judge
(a scheme other than http, https and ftp, or a URL with no host) passes
through too: no robots.txt applies to it, and Scrapy reports its own error
if it cannot download it. /robots.txt itself is always allowed by robotsd.

A request a rule disallows raises IgnoreRequest and counts
robotstxt/forbidden and robotsd/forbidden; a deferred one counts
robotsd/deferred (once), never robotstxt/forbidden.
The Crawl-delay robotsd reports for the agent raises the download slot's
delay (slot.delay = max(slot.delay, crawl_delay)); it never lowers a delay
set by DOWNLOAD_DELAY or AutoThrottle.

Nothing blocks the reactor, whichever reactor runs (the default one or
the asyncio one): checks are sent over one pipelined connection of the
blocking robotsd.Client, whose reader thread hands each answer back to the
reactor (reactor.callFromThread); connecting again while robotsd is down
is scheduled on the reactor. No thread-pool thread is held while a
check waits on a robots.txt fetch. The crawl keeps that one connection;
after robotsd restarts, the next check opens one new connection (a check
the restart cut off is sent once more on it).
"""
import logging
import time
from dataclasses import asdict
from typing import Any, Dict, List, Optional, Tuple

from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import defer

from ._protocol import (DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, PURPOSES,
                        BadUrlError, CallTimeoutError, CheckResult,
                        ConnectionLostError, NotRunningError, Preference,
                        Page, ProtocolError, RobotsdError,
                        UnsupportedSchemeError, check_request, result)
from .client import _RETRY_PAUSE, _RETRY_PAUSE_MAX, Client

logger = logging.getLogger(__name__)

_NOT_JUDGED = (BadUrlError, UnsupportedSchemeError)
PIPELINE = "robotsd.scrapy.RobotsdUsagePipeline"


def _purposes(settings: Any) -> Tuple[List[str], bool]:
    """ROBOTSD_USAGE_PURPOSES and whether ROBOTSD_USAGE_UNKNOWN is "deny";
    ValueError for a purpose robotsd does not answer or another value."""
    # "-s ROBOTSD_USAGE_PURPOSES=" (an empty string) lists none
    purposes: List[str] = [p.strip() for p in settings.getlist(
        "ROBOTSD_USAGE_PURPOSES", []) if p.strip()]
    known = PURPOSES + ("tdm",)
    bad = [p for p in purposes if p not in known]
    if bad:
        raise ValueError("ROBOTSD_USAGE_PURPOSES: unknown purpose(s) %s "
                         "(robotsd answers %s)" % (", ".join(bad),
                                                  ", ".join(known)))
    unknown = settings.get("ROBOTSD_USAGE_UNKNOWN", "allow")
    if unknown not in ("allow", "deny"):
        raise ValueError("ROBOTSD_USAGE_UNKNOWN must be \"allow\" or "
                         "\"deny\", not %r" % (unknown,))
    return purposes, unknown == "deny"


def _pipeline_enabled(settings: Any) -> bool:
    """Whether ITEM_PIPELINES runs RobotsdUsagePipeline."""
    for k, v in settings.getwithbase("ITEM_PIPELINES").items():
        name = k if isinstance(k, str) else "%s.%s" % (
            k.__module__, k.__qualname__)
        if name == PIPELINE and v is not None:
            return True
    return False


def _refused(purposes: List[str], usage: Dict[str, str],
             deny_unknown: bool) -> List[str]:
    """The purposes usage (purpose -> "allowed", "disallowed", "unknown")
    rules out: disallowed ones, and unknown ones when deny_unknown."""
    return [p for p in purposes if usage.get(p, "unknown") == "disallowed"
            or (usage.get(p, "unknown") == "unknown" and deny_unknown)]


class RobotsdMiddleware:
    """Downloader middleware asking robotsd about every request."""

    def __init__(self, crawler: Any):
        settings = crawler.settings
        if not settings.getbool("ROBOTSD_ENABLED", True):
            raise NotConfigured
        self.crawler = crawler
        self.fail_open = settings.getbool("ROBOTSD_FAIL_OPEN", False)
        self.timeout = settings.getfloat("ROBOTSD_TIMEOUT", DEFAULT_TIMEOUT)
        self._default_useragent = settings.get("USER_AGENT", "Scrapy")
        self._robotstxt_useragent = settings.get("ROBOTSTXT_USER_AGENT")
        self.purposes, self.deny_unknown = _purposes(settings)
        self.usage = bool(self.purposes) or \
            settings.getbool("ROBOTSD_USAGE", False)
        self.tdm = "tdm" in self.purposes or \
            settings.getbool("ROBOTSD_TDM", False)
        self.mode = settings.get("ROBOTSD_USAGE_MODE", "refuse")
        if self.mode not in ("refuse", "discover"):
            raise ValueError("ROBOTSD_USAGE_MODE must be \"refuse\" or "
                             "\"discover\", not %r" % (self.mode,))
        if self.mode == "discover" and not _pipeline_enabled(settings):
            raise ValueError("ROBOTSD_USAGE_MODE \"discover\" keeps the "
                             "items out with %s: add it to ITEM_PIPELINES"
                             % PIPELINE)
        # The check after the download: a second round trip per page, so
        # only when something asks for it.
        self.page_check = self.mode == "discover" or \
            settings.getbool("ROBOTSD_PAGE", False)
        self.connect_timeout = settings.getfloat("ROBOTSD_CONNECT_TIMEOUT",
                                                 DEFAULT_CONNECT_TIMEOUT)
        self.client = Client(settings.get("ROBOTSD_SOCKET"),
                             timeout=self.timeout,
                             connect_timeout=self.connect_timeout)
        from scrapy import signals
        crawler.signals.connect(self.client.close, signals.engine_stopped)
        self._init_unreachable(crawler)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RobotsdMiddleware":
        return cls(crawler)

    def process_request(self, request: Any, spider: Any) -> Any:
        request.meta["robotsd"] = None  # until robotsd judged it
        if request.meta.get("dont_obey_robotstxt"):
            return None
        if request.url.startswith("data:") or request.url.startswith("file:"):
            return None
        d = self._check(request.url, self._agent(request))
        d.addCallbacks(self._verdict, self._error,
                       callbackArgs=(request, spider),
                       errbackArgs=(request, spider))
        return d

    def _agent(self, request: Any) -> str:
        ua = self._robotstxt_useragent
        if not ua:
            ua = request.headers.get(b"User-Agent", self._default_useragent)
        if isinstance(ua, bytes):
            ua = ua.decode("utf-8", "replace")
        return str(ua)

    def _check(self, url: str, agent: str, resend: bool = True,
               page: Optional[Page] = None) \
            -> "defer.Deferred[CheckResult]":
        """A Deferred of the CheckResult (with page: of the check with the
        page's signals), fired on the reactor thread; sent once more on a
        new connection if the connection breaks."""
        from twisted.internet import reactor
        d: "defer.Deferred[CheckResult]" = defer.Deferred()
        sent: Dict[str, Any] = {}  # "fut": the request's Future once sent
        self._send(d, sent, url, check_request(url, agent, True, self.usage,
                                               page=page, tdm=self.tdm),
                   time.monotonic() + self.connect_timeout, _RETRY_PAUSE)
        d.addTimeout(self.timeout, reactor,
                     onTimeoutCancel=lambda r, t: self._timed_out(
                         sent.get("fut")))
        if resend:
            d.addErrback(self._resend, url, agent, page)
        return d

    def _send(self, d: "defer.Deferred[CheckResult]", sent: Dict[str, Any],
              url: str, req: Dict[str, Any], give_up: float,
              pause: float) -> None:
        """Submit req for d; while robotsd cannot be reached, try again on
        the reactor (pauses doubling up to 1 s) until give_up, the connect
        timeout, as the blocking client does."""
        from twisted.internet import reactor
        if d.called:  # timed out meanwhile
            return
        try:
            fut = self.client.submit(req)
        except ConnectionLostError as e:
            if isinstance(e, ProtocolError) or \
                    time.monotonic() + pause > give_up:
                d.errback(e)
                return
            if pause == _RETRY_PAUSE:
                logger.debug("robotsd cannot be reached at %(socket)s "
                             "(%(err)s): trying again for %(left).1f s",
                             {"socket": self.client.path, "err": e,
                              "left": give_up - time.monotonic()})
            reactor.callLater(pause, self._send, d, sent, url, req, give_up,
                              min(pause * 2, _RETRY_PAUSE_MAX))
            return
        except RobotsdError as e:
            d.errback(e)
            return
        sent["fut"] = fut
        usage, page = self.usage, "page" in req

        def done(f: Any) -> None:
            exc = f.exception()
            if exc is not None:
                reactor.callFromThread(d.errback, exc)
                return
            try:
                a = result(f.result())
                res = CheckResult.from_answer(url, a, usage, page=page,
                                              tdm=self.tdm)
            except RobotsdError as e:
                reactor.callFromThread(d.errback, e)
                return
            reactor.callFromThread(d.callback, res)

        fut.add_done_callback(done)

    def _timed_out(self, fut: Any) -> None:
        if fut is not None:
            self.client.forget(fut)
        raise CallTimeoutError("no answer from robotsd within %ss"
                               % self.timeout)

    def _resend(self, failure: Any, url: str, agent: str,
                page: Optional[Page]) -> Any:
        # Only a connection that broke: robotsd not running stayed so for
        # the whole connect timeout, and a ProtocolError answer would come
        # back the same.
        if failure.check(ConnectionLostError) and \
                not failure.check(ProtocolError, NotRunningError):
            return self._check(url, agent, resend=False, page=page)
        return failure

    def _verdict(self, res: CheckResult, request: Any, spider: Any) -> None:
        if res.crawl_delay is not None:
            self._apply_delay(request, spider, res.crawl_delay)
        if not res.allowed:
            if res.reason == "unreachable":
                return self._unreachable(res, request, spider)
            self.crawler.stats.inc_value("robotsd/forbidden")
            logger.debug("Forbidden by robots.txt: %(request)s (%(rule)s)",
                         {"request": request, "rule": res.rule or res.reason},
                         extra={"spider": spider})
            self.crawler.stats.inc_value("robotstxt/forbidden")
            raise IgnoreRequest("Forbidden by robots.txt")
        request.meta["robotsd"] = meta_of(res)
        # "discover": fetched whatever the purposes; RobotsdUsagePipeline
        # judges the items by the page's answer
        refused = self._refused_purposes(res) if self.mode == "refuse" \
            else []
        if not refused:
            return None
        logger.debug("Forbidden by usage preferences: %(request)s "
                     "(%(purposes)s; %(lines)s)",
                     {"request": request, "purposes": ", ".join(
                         "%s %s" % (p, (res.usage or {}).get(
                             p, Preference.UNKNOWN).value)
                         for p in refused),
                      "lines": "; ".join(
                          "%s: %s %s %s" % (
                              "header" if st.line is None
                              else "line %d" % st.line,
                              st.directive, st.pattern, st.value)
                          for st in res.usage_from or []) or "no line"},
                     extra={"spider": spider})
        stats = self.crawler.stats
        stats.inc_value("robotsd/usage_forbidden")
        for p in refused:
            stats.inc_value("robotsd/usage_forbidden/%s" % p)
        raise IgnoreRequest("Forbidden by usage preferences: %s"
                            % ", ".join(refused))

    def _refused_purposes(self, res: CheckResult) -> List[str]:
        """The listed purposes the site's preferences rule out for the
        URL: disallowed ones, and unknown ones under "deny"."""
        return _refused(self.purposes, {p: pref.value for p, pref in
                                        (res.usage or {}).items()},
                        self.deny_unknown)

    # --- after the download: the page's own signals ------------------------
    def process_response(self, request: Any, response: Any,
                         spider: Any) -> Any:
        """With the page check on (ROBOTSD_PAGE, or ROBOTSD_USAGE_MODE
        "discover"), ask robotsd again about a text/html response robotsd
        judged, with its headers and the <meta> of its <head>, and put
        that answer in meta["robotsd"]; otherwise the response as is."""
        if not self.page_check or request.meta.get("robotsd") is None or \
                not _is_html(response):
            return response
        d = self._check(request.url, self._agent(request),
                        page=page_of(response))
        d.addCallbacks(self._page_verdict, self._page_error,
                       callbackArgs=(request, response),
                       errbackArgs=(request, response, spider))
        return d

    def _page_verdict(self, res: CheckResult, request: Any,
                      response: Any) -> Any:
        self.crawler.stats.inc_value("robotsd/page_checked")
        if not res.allowed:
            # robots.txt now says no (changed, or unreachable, since the
            # check before the download): nothing of the page is used
            self.crawler.stats.inc_value("robotsd/page_forbidden")
            logger.debug("Forbidden by robots.txt after the download: "
                         "%(request)s (%(rule)s)",
                         {"request": request,
                          "rule": res.rule or res.reason})
            raise IgnoreRequest("Forbidden by robots.txt after the "
                                "download")
        request.meta["robotsd"] = meta_of(res)
        return response

    def _page_error(self, failure: Any, request: Any, response: Any,
                    spider: Any) -> Any:
        """A page check robotsd could not answer: as a request's check
        (ROBOTSD_FAIL_OPEN), keeping the answer of before the fetch."""
        self._error(failure, request, spider)
        return response

    def _error(self, failure: Any, request: Any, spider: Any) -> None:
        exc = failure.value
        if isinstance(exc, _NOT_JUDGED):
            return None
        code = getattr(exc, "code", None) or (
            # NotRunningError too: the stat keeps its name (ProtocolError,
            # robotsd answering nonsense, keeps its own)
            "ConnectionLostError" if isinstance(exc, NotRunningError)
            else type(exc).__name__)
        self.crawler.stats.inc_value("robotsd/error_count/%s" % code)
        if self.fail_open:
            logger.warning("robotsd could not check %(request)s (%(err)s); "
                           "fetching anyway (ROBOTSD_FAIL_OPEN)",
                           {"request": request, "err": exc},
                           extra={"spider": spider})
            return None
        logger.warning("robotsd could not check %(request)s (%(err)s); "
                       "dropped (set ROBOTSD_FAIL_OPEN to fetch anyway)",
                       {"request": request, "err": exc},
                       extra={"spider": spider})
        raise IgnoreRequest("robotsd could not check the request: %s" % exc)

    # --- unreachable origins: defer (or drop), ROBOTSD_REQUIRED ------------
    def _init_unreachable(self, crawler: Any) -> None:
        from scrapy import signals
        settings = crawler.settings
        self.unreachable = settings.get("ROBOTSD_UNREACHABLE", "defer")
        if self.unreachable not in ("defer", "drop"):
            raise ValueError("ROBOTSD_UNREACHABLE must be \"defer\" or "
                             "\"drop\", not %r" % (self.unreachable,))
        self.defer_max = settings.getint("ROBOTSD_DEFER_MAX", 5)
        self.required = settings.getbool("ROBOTSD_REQUIRED", False)
        self._deferring = 0           # requests waiting to be scheduled
        self._deferred_origins: set = set()  # those told of at INFO
        crawler.signals.connect(self._keep_open, signals.spider_idle)
        if self.required:
            crawler.signals.connect(self._require, signals.spider_opened)

    def _unreachable(self, res: CheckResult, request: Any,
                     spider: Any) -> None:
        """Defer request (schedule it again after expires_in), or drop it
        (ROBOTSD_UNREACHABLE "drop", or deferred ROBOTSD_DEFER_MAX times
        already)."""
        stats = self.crawler.stats
        why = "%s: %s" % (res.cause.code, res.cause.message) \
            if res.cause is not None else "unreachable"
        if self.unreachable == "drop":
            stats.inc_value("robotsd/unreachable")
            logger.debug("robots.txt of %(origin)s unreachable (%(why)s): "
                         "dropped %(request)s", {"origin": res.origin,
                                                 "why": why,
                                                 "request": request},
                         extra={"spider": spider})
            raise IgnoreRequest("robots.txt unreachable (%s)" % why)
        tries = int(request.meta.get("robotsd_deferred", 0))
        if tries >= self.defer_max:
            stats.inc_value("robotsd/gave_up")
            logger.warning("robots.txt of %(origin)s still unreachable "
                           "(%(why)s) after %(n)d deferrals: dropped "
                           "%(request)s", {"origin": res.origin, "why": why,
                                           "n": tries, "request": request},
                           extra={"spider": spider})
            raise IgnoreRequest("robots.txt unreachable (%s)" % why)
        delay = max(float(res.expires_in or 0), 1.0)
        if tries == 0:  # a request deferred again is still one request
            stats.inc_value("robotsd/deferred")
        logger.debug("deferred %(request)s by %(delay)g s (deferral %(n)d "
                     "of at most %(max)d)", {"request": request,
                                             "delay": delay, "n": tries + 1,
                                             "max": self.defer_max},
                     extra={"spider": spider})
        if res.origin not in self._deferred_origins:
            self._deferred_origins.add(res.origin)
            logger.info("robots.txt of %(origin)s is unreachable (%(why)s): "
                        "deferring its requests (%(delay)g s, at most "
                        "%(max)d times each)",
                        {"origin": res.origin, "why": why, "delay": delay,
                         "max": self.defer_max}, extra={"spider": spider})
        again = request.replace(dont_filter=True, meta=dict(
            request.meta, robotsd_deferred=tries + 1))
        from twisted.internet import reactor
        self._deferring += 1
        reactor.callLater(delay, self._schedule_again, again)
        raise IgnoreRequest("robots.txt unreachable (%s): deferred %g s"
                            % (why, delay))

    def _schedule_again(self, request: Any) -> None:
        self._deferring -= 1
        engine = self.crawler.engine
        if engine is not None and engine.running:
            engine.crawl(request)

    def _keep_open(self, spider: Any) -> None:
        """spider_idle: the crawl is not over while requests are deferred."""
        if self._deferring > 0:
            from scrapy.exceptions import DontCloseSpider
            raise DontCloseSpider

    def _require(self, spider: Any) -> "defer.Deferred[None]":
        """spider_opened under ROBOTSD_REQUIRED: stop unless robotsd
        answers within the connect timeout (asked from a thread: the
        reactor goes on meanwhile)."""
        from twisted.internet import threads
        d = threads.deferToThread(self.client.ping)
        d.addCallbacks(lambda _: None, self._unavailable,
                       errbackArgs=(spider,))
        return d

    def _unavailable(self, failure: Any, spider: Any) -> None:
        failure.trap(RobotsdError)
        logger.error("robotsd cannot be reached at %(socket)s (%(err)s) "
                     "and ROBOTSD_REQUIRED is set: stopping the crawl",
                     {"socket": self.client.path, "err": failure.value},
                     extra={"spider": spider})
        self._close_when_running(spider)

    def _close_when_running(self, spider: Any) -> None:
        """Close the spider once the engine runs: spider_opened comes
        before the engine starts, and a spider closed then makes Scrapy
        stop an engine that is not running (a traceback after the clean
        line)."""
        from twisted.internet import reactor
        engine = self.crawler.engine
        if engine.running:
            engine.close_spider(spider, "robotsd_unavailable")
        else:
            reactor.callLater(0, self._close_when_running, spider)

    def _apply_delay(self, request: Any, spider: Any, delay: float) -> None:
        downloader = self.crawler.engine.downloader
        slot = _slot(downloader, request, spider)
        if slot is not None and delay > slot.delay:
            slot.delay = delay
            host = urlparse_cached(request).hostname
            logger.debug("Crawl-delay %(delay)s for the download slot of "
                         "%(host)s", {"delay": delay, "host": host},
                         extra={"spider": spider})


def meta_of(res: CheckResult) -> Dict[str, Any]:
    """meta["robotsd"] of an allowed request: plain JSON values; with
    tdm asked for also tdm (as robotsd writes it), with the page's answer
    also robots_tag and evidence."""
    out = {
        "version": res.version,
        "usage": None if res.usage is None else
        {p: pref.value for p, pref in res.usage.items()},
        "usage_from": None if res.usage_from is None else
        [asdict(st) for st in res.usage_from],
    }
    if res.tdm is not None:
        t = res.tdm
        out["tdm"] = {"state": t.state, "reservation": t.reservation,
                      "policy": t.policy, "location": t.location,
                      "version": t.version}
        if t.from_ is not None:
            out["tdm"]["from"] = t.from_
    if res.evidence is not None:
        out["robots_tag"] = None if res.robots_tag is None else \
            asdict(res.robots_tag)
        out["evidence"] = asdict(res.evidence)
    return out


def _is_html(response: Any) -> bool:
    """Whether response is a text response whose Content-Type is
    text/html (only a TextResponse has selectors)."""
    from scrapy.http import TextResponse
    if not isinstance(response, TextResponse):
        return False
    ctype = response.headers.get(b"Content-Type") or b""
    return ctype.split(b";")[0].strip().lower() == b"text/html"


# The response header fields robotsd reads (the contract's list); the
# others (cookies, CSP, ...) would only lengthen the request line, and
# the evidence id covers only these.
PAGE_HEADERS = frozenset(
    (b"robots-tag", b"x-robots-tag", b"content-usage", b"content-signal",
     b"tdm-reservation", b"tdm-policy", b"link"))


def page_of(response: Any) -> Page:
    """The Page of a response: the header lines robotsd reads, and the
    (name, content) of each <meta> with a name that is not blank in its
    <head> (parsel; the body is not read further). robotsd refuses a
    pair with an empty name, so such a <meta> is left out."""
    headers = [(k.decode("latin-1"), v.decode("latin-1"))
               for k, vs in response.headers.items()
               if k.lower() in PAGE_HEADERS for v in vs]
    meta = [(name, m.attrib.get("content", ""))
            for m in response.xpath("//head/meta[@name]")
            for name in (m.attrib.get("name", ""),) if name.strip()]
    return Page(headers=headers, meta=meta)


class RobotsdUsagePipeline:
    """Item pipeline keeping out the items of pages whose answer rules out
    a purpose of ROBOTSD_USAGE_PURPOSES (ROBOTSD_USAGE_UNKNOWN as for the
    middleware). It reads the item's "robotsd" field, the spider's copy of
    response.meta["robotsd"]: with ROBOTSD_USAGE_MODE "discover" that is
    the page's answer (headers, <meta> and robots.txt combined). An item
    without that field is dropped (robotsd/item_unjudged): its page cannot
    be told; one whose field is None (a request the middleware did not
    judge, e.g. dont_obey_robotstxt) is kept."""

    def __init__(self, crawler: Any):
        self.stats = crawler.stats
        self.purposes, self.deny_unknown = _purposes(crawler.settings)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RobotsdUsagePipeline":
        return cls(crawler)

    def process_item(self, item: Any, spider: Any) -> Any:
        from itemadapter import ItemAdapter
        from scrapy.exceptions import DropItem
        fields = ItemAdapter(item)
        if "robotsd" not in fields:
            self.stats.inc_value("robotsd/item_unjudged")
            raise DropItem("no \"robotsd\" field (copy response.meta"
                           "[\"robotsd\"] into the item): cannot tell its "
                           "page's usage preferences")
        answer = fields["robotsd"]
        if answer is None:
            return item
        refused = _refused(self.purposes, answer.get("usage") or {},
                           self.deny_unknown)
        if not refused:
            return item
        self.stats.inc_value("robotsd/item_dropped")
        for p in refused:
            self.stats.inc_value("robotsd/item_dropped/%s" % p)
        raise DropItem("Forbidden by usage preferences: %s"
                       % ", ".join(refused))


def _slot(downloader: Any, request: Any, spider: Any) -> Optional[Any]:
    """The download slot request will use, created if it does not exist
    yet (the downloader makes it only after the middlewares ran)."""
    get = getattr(downloader, "_get_slot", None)
    if get is not None:
        try:
            return get(request, spider)[1]
        except TypeError:
            pass
    key_of = getattr(downloader, "get_slot_key", None) or \
        getattr(downloader, "_get_slot_key")
    try:
        key = key_of(request, spider)
    except TypeError:
        key = key_of(request)
    return downloader.slots.get(key)
