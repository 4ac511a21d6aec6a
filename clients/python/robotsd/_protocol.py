"""What the blocking and the asyncio client share: the socket path, request
encoding, the typed errors of the protocol's error codes, and the typed
results. No I/O here."""
import errno
import json
import os
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

DEFAULT_SOCKET = "/run/robotsd/robotsd.sock"
# A check may wait on a robots.txt fetch for up to twice --fetch-timeout
# plus 5 s (65 s by default); calls allow a little more.
DEFAULT_TIMEOUT = 70.0
# robotsd's limit on the URLs of one batch check.
BATCH_LIMIT = 1000
# robotsd's default request line limit (--max-line); longer lines are
# refused here, before they are sent.
DEFAULT_MAX_LINE = 65536
# The longest answer line read (a batch of 1000 answers is far below it);
# robotsd sending a longer one breaks the connection (ProtocolError).
MAX_ANSWER = 64 << 20
# Seconds a call keeps trying to connect (no socket file, nobody listening:
# robotsd restarting) before it fails with NotRunningError; the same in the
# Node and Go clients.
DEFAULT_CONNECT_TIMEOUT = 5.0


def socket_path(path: Optional[str] = None) -> str:
    """The socket to use: path if given, else $ROBOTSD_SOCKET, else the
    default /run/robotsd/robotsd.sock."""
    return path or os.environ.get("ROBOTSD_SOCKET") or DEFAULT_SOCKET


class RobotsdError(Exception):
    """Base of every error of this package. `code` is the protocol's error
    code (None for errors found by the client itself), `message` robotsd's
    text."""

    code: Optional[str] = None

    def __init__(self, message: str = "", code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        if self.code:
            return "%s: %s" % (self.code, self.message)
        return self.message


class BadJsonError(RobotsdError):
    """The request line was not valid JSON (or not UTF-8)."""
    code = "bad_json"


class BadRequestError(RobotsdError):
    """A field is missing or of the wrong type, or a batch is too big."""
    code = "bad_request"


class UnknownOpError(RobotsdError):
    """The op names no operation."""
    code = "unknown_op"


class BadUrlError(RobotsdError):
    """A URL or origin cannot be parsed or has no host."""
    code = "bad_url"


class UnsupportedSchemeError(RobotsdError):
    """A URL's scheme is not http, https or ftp."""
    code = "unsupported_scheme"


class LineTooLongError(RobotsdError):
    """The request line is over robotsd's limit (64 KiB by default)."""
    code = "line_too_long"


class OverloadedError(RobotsdError):
    """Too many connections, or too many checks waiting on fetches."""
    code = "overloaded"


class DaemonTimeoutError(RobotsdError, TimeoutError):
    """robotsd gave up on a check that waited too long for its fetch."""
    code = "timeout"


class NotCachedError(RobotsdError):
    """inspect of an origin that is not in the cache."""
    code = "not_cached"


class InternalError(RobotsdError):
    """robotsd ran out of memory or hit a bug; the request may be retried."""
    code = "internal"


class ForbiddenError(RobotsdError):
    """An admin operation (purge) from a user without the right: run it as
    root, as robotsd's user or as a member of its admin-group."""
    code = "forbidden"


class ConfigError(RobotsdError):
    """robotsd's config file does not load: it answers every request with
    this until the file is fixed and robotsd restarted or reloaded; the
    message names the file, line and cause."""
    code = "config"


class UnknownCodeError(RobotsdError):
    """An error code this client does not know (a newer robotsd)."""


class CallTimeoutError(RobotsdError, TimeoutError):
    """No answer within the call's timeout (raised by the client)."""


class ConnectionLostError(RobotsdError, ConnectionError):
    """robotsd cannot be reached, or the connection broke and the call
    could not be completed on a new one before its timeout."""


class ProtocolError(ConnectionLostError):
    """What robotsd sent is not the protocol: an answer line longer than
    MAX_ANSWER (the connection is closed), a field of the wrong type (an
    "allowed" that is not a boolean, a usage field), a required field
    missing, a field asked for and missing (a robotsd without the
    feature), or an answer to no request sent (the connection is
    closed). Never passed through as a value, and the call is never sent
    again."""


class NotRunningError(ConnectionLostError):
    """robotsd is not running: no socket file at `socket`, or nobody
    listening on it, for the whole connect timeout."""

    def __init__(self, socket: str, reason: str):
        super().__init__("robotsd is not running: cannot connect to %s: %s"
                         % (socket, reason))
        self.socket = socket


def connect_error(path: str, e: OSError) -> ConnectionLostError:
    """The error of a failed connect to path: NotRunningError when there is
    no socket file or nobody listens on it, else ConnectionLostError
    (permission denied, backlog full, ...)."""
    if e.errno in (errno.ENOENT, errno.ECONNREFUSED):
        return NotRunningError(path, e.strerror or str(e))
    return ConnectionLostError("cannot connect to %s: %s" % (path, e))


ERRORS = {cls.code: cls for cls in (
    BadJsonError, BadRequestError, UnknownOpError, BadUrlError,
    UnsupportedSchemeError, LineTooLongError, OverloadedError,
    DaemonTimeoutError, NotCachedError, InternalError, ForbiddenError,
    ConfigError)}


def error_from(err: Any) -> RobotsdError:
    """The typed exception for an answer's "error" object."""
    if not isinstance(err, dict):
        return UnknownCodeError("malformed error: %r" % (err,))
    code = err.get("code")
    msg = str(err.get("message", ""))
    cls = ERRORS.get(code)
    if cls is None:
        return UnknownCodeError(msg, code=str(code))
    return cls(msg)


@dataclass(frozen=True)
class Rule:
    """The robots.txt rule that decided: directive ("allow"/"disallow"),
    the pattern as written and its 1-based line in the file."""
    directive: str
    pattern: str
    line: int


class Preference(str, Enum):
    """A site's preference for one purpose (a str, so it compares equal to
    and serializes as the protocol's word)."""
    ALLOWED = "allowed"
    DISALLOWED = "disallowed"
    UNKNOWN = "unknown"


# The purposes robotsd answers (docs/usage-preferences.md).
PURPOSES = ("train-ai", "search", "ai-input", "ai-use")


@dataclass(frozen=True)
class UsageStatement:
    """One Content-Usage or Content-Signal statement that decided a URL's
    usage preferences: directive ("content-usage" or "content-signal"),
    its path pattern ("/" when the line has none), its 1-based line, the
    value as written, and scope: "group" (inside the agent's group) or
    "file" (a Content-Signal line before the first group); None when
    robotsd does not say. source: "robots.txt" or "header" (a header of
    the page sent with check(page=...)), None when robotsd does not say;
    a header's statement has pattern and line None."""
    directive: str
    pattern: Optional[str]
    line: Optional[int]
    value: str
    scope: Optional[str] = None
    source: Optional[str] = None


@dataclass(frozen=True)
class Page:
    """What a worker received with the page it fetched, sent with
    check(page=...): headers, the response header lines as (name, value)
    pairs, and meta, the (name, content) of the <meta> elements of the
    page's <head> (robotsd parses no HTML)."""
    headers: Sequence[Tuple[str, str]] = ()
    meta: Sequence[Tuple[str, str]] = ()


@dataclass(frozen=True)
class RobotsTagSource:
    """One page field that gave robots rules: source ("header" or
    "meta"), field (lowercased header or meta name) and its value."""
    source: str
    field: str
    value: str


@dataclass(frozen=True)
class RobotsTag:
    """The page's robots rules for the check's agent (Robots-Tag,
    X-Robots-Tag, <meta>), their union: rules (e.g. ["noindex",
    "noai"]), values of the valued rules ("max-snippet" -> "0", ...) and
    the fields they came from. Reported, not mapped onto purposes."""
    rules: List[str]
    values: Dict[str, str]
    sources: List[RobotsTagSource]


@dataclass(frozen=True)
class Evidence:
    """The inputs an answer with page came from: robots (the robots.txt
    version), tdmrep (the tdmrep.json version, None when none was used)
    and page (16 hex digits of the SHA-256 of the page input read)."""
    robots: Optional[str]
    tdmrep: Optional[str]
    page: str


@dataclass(frozen=True)
class Tdm:
    """The TDMRep answer (check(tdm=True)): state ("rules", "invalid",
    "none", "unreachable", or "pending": tdmrep.json not fetched yet, the
    page's own statements only), reservation (0, 1 or None), policy (a
    URL or None), location (the deciding tdmrep.json member's or None), version
    of tdmrep.json, and from_ ("tdmrep.json", "header", "meta"; None
    when no source gave a reservation or policy)."""
    state: str
    reservation: Optional[int] = None
    policy: Optional[str] = None
    location: Optional[str] = None
    version: Optional[str] = None
    from_: Optional[str] = None


@dataclass(frozen=True)
class TokenVerdict:
    """The URL's verdict for one control token (Google-Extended, ...)
    evaluated alone: allowed, and the deciding rule or None."""
    allowed: bool
    rule: Optional[Rule] = None


class AnswerLines:
    """The answer lines in the bytes read from robotsd, one chunk at a
    time; an unfinished line longer than MAX_ANSWER is an error."""

    def __init__(self) -> None:
        self._buf = bytearray()  # appends in place: a long line costs O(n)

    def feed(self, chunk: bytes) -> List[bytes]:
        """The lines chunk completes, blank ones left out."""
        if not self._buf and chunk.find(b"\n") == len(chunk) - 1:
            # one whole line: an answer ({...}) or blank
            return [chunk[:-1]] if chunk[:1] == b"{" or chunk.strip() else []
        self._buf += chunk
        if b"\n" not in chunk:
            return []
        *lines, self._buf = self._buf.split(b"\n")
        return [line for line in lines if line.strip()]

    def overflow(self) -> Optional[ProtocolError]:
        """The error to break the connection with once the unfinished line
        is over MAX_ANSWER bytes, else None."""
        if len(self._buf) <= MAX_ANSWER:
            return None
        return ProtocolError("robotsd sent an answer line longer than %d "
                             "bytes" % MAX_ANSWER)


# The C scanner json.loads ends in, called without its detours (the
# encoding sniffed, whitespace matched twice): one answer line costs it
# about half.
_scan = json.JSONDecoder().scan_once


def parse_answer(line: bytes) -> Any:
    """json.loads(line) of one answer line: the same value, or the same
    ValueError for a line that is not JSON."""
    try:
        text = line.decode("utf-8")
        a, end = _scan(text, 0)
    except (ValueError, StopIteration):  # leading blanks, not UTF-8, ...
        return json.loads(line)
    if end != len(text) and text[end:].strip(" \t\n\r"):
        return json.loads(line)  # raises "Extra data"
    return a


def _bad(what: str, v: Any) -> ProtocolError:
    return ProtocolError("malformed answer: %s is %r" % (what, v))


def _typed(what: str, v: Any, kind: Any) -> Any:
    """v if it is of type kind (bool is not an int here), else raise."""
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise _bad(what, v)
    return v


def _optional(what: str, v: Any, kind: Any) -> Any:
    """v if it is None or of type kind, else raise."""
    return None if v is None else _typed(what, v, kind)


def _records(what: str, v: Any) -> List[Any]:
    """The list v as (name, element) pairs, each element a dict; raises
    ProtocolError on a wrong type."""
    out = []
    for i, e in enumerate(_typed(what, v, list)):
        w = "%s[%d]" % (what, i)
        out.append((w, _typed(w, e, dict)))
    return out


def _rule(what: str, r: Any) -> Optional[Rule]:
    if r is None:
        return None
    _typed(what, r, dict)
    return Rule(_typed(what + ".directive", r.get("directive"), str),
                _typed(what + ".pattern", r.get("pattern"), str),
                _typed(what + ".line", r.get("line"), int))


def parse_usage(v: Any) -> Optional[Dict[str, Preference]]:
    """An answer's "usage": None (a disallowed URL) or purpose ->
    Preference; anything else raises ProtocolError."""
    if v is None:
        return None
    _typed("usage", v, dict)
    out = {}
    for k, p in v.items():
        try:
            out[k] = Preference(p)
        except ValueError:
            raise _bad("usage[%r]" % k, p) from None
    return out


def parse_usage_from(v: Any) -> List[UsageStatement]:
    """An answer's "usage_from" as UsageStatements; raises
    ProtocolError on a wrong type. Only a header's statement has no
    pattern and no line (null); a robots.txt line has both."""
    out = []
    for w, st in _records("usage_from", v):
        scope = _optional(w + ".scope", st.get("scope"), str)
        source = _optional(w + ".source", st.get("source"), str)
        where = _optional if source == "header" else _typed
        out.append(UsageStatement(
            _typed(w + ".directive", st.get("directive"), str),
            where(w + ".pattern", st.get("pattern"), str),
            where(w + ".line", st.get("line"), int),
            _typed(w + ".value", st.get("value"), str), scope, source))
    return out


def parse_robots_tag(v: Any) -> Optional[RobotsTag]:
    """An answer's "robots_tag": None (a disallowed URL) or a RobotsTag;
    raises ProtocolError on a wrong type."""
    if v is None:
        return None
    _typed("robots_tag", v, dict)
    rules = [_typed("robots_tag.rules[]", r, str)
             for r in _typed("robots_tag.rules", v.get("rules"), list)]
    values = {k: _typed("robots_tag.values[%r]" % k, x, str) for k, x in
              _typed("robots_tag.values", v.get("values"), dict).items()}
    sources = [RobotsTagSource(_typed(w + ".source", f.get("source"), str),
                               _typed(w + ".field", f.get("field"), str),
                               _typed(w + ".value", f.get("value"), str))
               for w, f in _records("robots_tag.from", v.get("from"))]
    return RobotsTag(rules, values, sources)


def parse_evidence(v: Any) -> Evidence:
    """An answer's "evidence"; raises ProtocolError on a wrong type."""
    _typed("evidence", v, dict)
    return Evidence(_optional("evidence.robots", v.get("robots"), str),
                    _optional("evidence.tdmrep", v.get("tdmrep"), str),
                    _typed("evidence.page", v.get("page"), str))


def parse_tdm(v: Any) -> Optional[Tdm]:
    """An answer's "tdm": None (a disallowed URL, or a robotsd that does
    not answer it) or a Tdm; raises ProtocolError on a wrong type."""
    if v is None:
        return None
    _typed("tdm", v, dict)
    res = _optional("tdm.reservation", v.get("reservation"), int)
    if res not in (None, 0, 1):
        raise _bad("tdm.reservation", res)
    return Tdm(_typed("tdm.state", v.get("state"), str), res,
               _optional("tdm.policy", v.get("policy"), str),
               _optional("tdm.location", v.get("location"), str),
               _optional("tdm.version", v.get("version"), str),
               _optional("tdm.from", v.get("from"), str))


def parse_tokens(v: Any) -> Dict[str, TokenVerdict]:
    """An answer's "tokens" (token in lowercase -> TokenVerdict); raises
    ProtocolError on a wrong type."""
    out = {}
    for k, t in _typed("tokens", v, dict).items():
        w = "tokens[%r]" % k
        _typed(w, t, dict)
        out[k] = TokenVerdict(_typed(w + ".allowed", t.get("allowed"), bool),
                              _rule(w + ".rule", t.get("rule")))
    return out


@dataclass(frozen=True)
class Cause:
    """Why an origin is unreachable: a stable code ("dns", "connect",
    "tls", "timeout", "private_address", "http_5xx", "http_503",
    "http_429", "bad_response", "other"; treat an unknown one as "other")
    and the failure's text (docs/protocol.md)."""
    code: str
    message: str


@dataclass(frozen=True)
class CheckResult:
    """The answer for one URL.

    allowed is True/False, or None when pending (wait=False and the origin
    was not cached yet) or when error is set (a URL of a batch that failed
    on its own; single checks raise instead)."""
    url: str
    allowed: Optional[bool]
    origin: Optional[str] = None
    source: Optional[str] = None      # cache, fetched, stale
    reason: Optional[str] = None      # rule, no_rule, robots_txt, ...
    rule: Optional[Rule] = None
    crawl_delay: Optional[float] = None
    expires_in: Optional[int] = None
    http_status: Optional[int] = None
    pending: bool = False
    error: Optional[RobotsdError] = None
    # With usage=True: purpose ("train-ai", "search", "ai-input",
    # "ai-use") ->
    # Preference for an allowed URL, None for a disallowed one (and when
    # not asked); usage_from the lines that decided ([] when disallowed,
    # None when not asked).
    usage: Optional[Dict[str, Preference]] = None
    usage_from: Optional[List[UsageStatement]] = None
    # With tokens=[...]: each token, in lowercase, -> its own verdict.
    tokens: Optional[Dict[str, TokenVerdict]] = None
    cause: Optional[Cause] = None     # set when reason is "unreachable"
    # The robots.txt version the answer came from: 16 lowercase hex
    # digits, None for the URL /robots.txt itself, an entry restored from
    # an old state file, a pending answer, an error, or an older robotsd.
    version: Optional[str] = None
    # With page=...: the page's robots rules (None for a disallowed URL)
    # and the inputs the answer came from.
    robots_tag: Optional[RobotsTag] = None
    evidence: Optional[Evidence] = None
    # With tdm=True: the TDMRep answer; None for a disallowed URL, and
    # from a robotsd that does not answer tdm yet.
    tdm: Optional[Tdm] = None

    @classmethod
    def from_answer(cls, url: str, a: Dict[str, Any], usage: bool = False,
                    tokens: bool = False, page: bool = False,
                    tdm: bool = False) -> "CheckResult":
        """Build from one check answer (or one entry of a batch). usage,
        tokens, page and tdm: whether the request asked for them; an
        answer with a verdict that lacks usage, tokens, or page's
        robots_tag and evidence, or has any of them of the wrong type,
        raises ProtocolError."""
        get = a.get
        if get("ok") is not True:
            return cls(url=url, allowed=None, error=error_from(get("error")))
        allowed, pending = get("allowed"), get("pending") is True
        if allowed is not True and allowed is not False and \
                not (allowed is None and pending):
            raise ProtocolError("robotsd answered allowed=%r, not a boolean"
                                % (allowed,))
        origin, source, reason = get("origin"), get("source"), get("reason")
        if type(origin) is not str or not pending and (
                type(source) is not str or type(reason) is not str):
            for f in ("origin",) if pending else ("origin", "source",
                                                  "reason"):
                _typed(f, get(f), str)  # required: missing is an error
        r = get("rule")
        cd = get("crawl_delay")
        version = get("version")
        if version is not None and type(version) is not str:
            _typed("version", version, str)
        c = get("cause")
        # Built without __init__ (a frozen dataclass sets each field through
        # object.__setattr__): the same object, at a fraction of the cost.
        out = object.__new__(cls)
        out.__dict__.update(_RESULT_DEFAULTS, url=url, allowed=allowed,
                            origin=origin, source=source, reason=reason,
                            rule=_answer_rule(r)
                            if isinstance(r, dict) else None,
                            crawl_delay=float(cd) if cd is not None else None,
                            expires_in=get("expires_in"),
                            http_status=get("http_status"),
                            pending=pending, version=version,
                            cause=Cause(str(c.get("code", "other")),
                                        str(c.get("message", "")))
                            if isinstance(c, dict) else None)
        if (usage or tokens or page or tdm) and not pending:
            out.__dict__.update(_asked(a, usage, tokens, page, tdm))
        return out


def _answer_rule(r: Dict[str, Any]) -> Rule:
    """The Rule of an answer's "rule", built as from_answer builds its
    result (KeyError for a rule without its fields)."""
    out = object.__new__(Rule)
    out.__dict__.update(directive=r["directive"], pattern=r["pattern"],
                        line=r["line"])
    return out


# Every CheckResult field at its default (from_answer starts from it).
_RESULT_DEFAULTS = {f.name: f.default for f in fields(CheckResult)}


def _asked(a: Dict[str, Any], usage: bool, tokens: bool, page: bool,
           tdm: bool) -> Dict[str, Any]:
    """The CheckResult fields a check asked for (usage, tokens, page,
    tdm) from answer a with a verdict; raises ProtocolError when one is
    missing or of the wrong type."""
    extra: Dict[str, Any] = {}
    if usage:
        if "usage" not in a or "usage_from" not in a:
            raise ProtocolError("usage asked for and not answered (a "
                                "robotsd without usage preferences?)")
        extra["usage"] = parse_usage(a["usage"])
        extra["usage_from"] = parse_usage_from(a["usage_from"])
    if tokens:
        if "tokens" not in a:
            raise ProtocolError("tokens asked for and not answered (a "
                                "robotsd without control tokens?)")
        extra["tokens"] = parse_tokens(a["tokens"])
    if page or tdm:
        extra.update(_signals(a, page, tdm))
    return extra


def _signals(a: Dict[str, Any], page: bool, tdm: bool) -> Dict[str, Any]:
    """The CheckResult fields of the page's signals and of TDMRep in
    answer a, as asked; raises ProtocolError when page was asked and
    robots_tag or evidence is missing."""
    out: Dict[str, Any] = {}
    if page:
        if "robots_tag" not in a or "evidence" not in a:
            raise ProtocolError("page sent and not answered (a robotsd "
                                "without the page's signals?)")
        out["robots_tag"] = parse_robots_tag(a["robots_tag"])
        out["evidence"] = parse_evidence(a["evidence"])
    if tdm:
        out["tdm"] = parse_tdm(a.get("tdm"))
    return out


@dataclass(frozen=True)
class HistoryEntry:
    """One distinct robots.txt version of a cached origin (the history
    op): version (16 hex digits), first_seen and last_seen (unix
    seconds), http_status (None without an HTTP answer) and state
    ("rules", "allow_all" or "disallow_all", as in inspect)."""
    version: str
    first_seen: int
    last_seen: int
    http_status: Optional[int]
    state: str


def parse_history(answer: Dict[str, Any]) -> List[HistoryEntry]:
    """The entries of a history answer, newest first; raises
    ProtocolError on a missing or wrong-typed field."""
    out = []
    for w, v in _records("versions", answer.get("versions")):
        st = _optional(w + ".http_status", v.get("http_status"), int)
        out.append(HistoryEntry(
            _typed(w + ".version", v.get("version"), str),
            _typed(w + ".first_seen", v.get("first_seen"), int),
            _typed(w + ".last_seen", v.get("last_seen"), int),
            st, _typed(w + ".state", v.get("state"), str)))
    return out


def history_request(origin: Any) -> Dict[str, Any]:
    if not isinstance(origin, str):
        raise TypeError("history needs an origin string (got %r)"
                        % (origin,))
    return {"op": "history", "origin": origin}


def encode(req: Dict[str, Any], max_line: int) -> bytes:
    """One request as a compact UTF-8 JSON line. Raises ValueError for a
    string that is not valid Unicode (a lone surrogate) and
    LineTooLongError, without sending, for a line over max_line."""
    line = json.dumps(req, separators=(",", ":"), ensure_ascii=False)
    data = _utf8(line) + b"\n"
    if max_line and len(data) - 1 > max_line:
        raise LineTooLongError("request line of %d bytes is over %d; not "
                               "sent" % (len(data) - 1, max_line))
    return data


# What json.dumps(ensure_ascii=False) writes for a string, quotes included
# (the C encoder when there is one): encode() and check_head() agree.
_json_string = json.encoder.encode_basestring
# The ',"agent":"...",' fragment of the check lines, by agent: a crawler
# uses a handful of agents; the table stops growing at _AGENT_CACHE.
_agent_parts: Dict[str, bytes] = {}
_AGENT_CACHE = 256


def _utf8(line: str) -> bytes:
    """line as UTF-8; ValueError for a lone surrogate (not Unicode)."""
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("request is not valid Unicode: %s" % e) from None


def request_head(req: Dict[str, Any]) -> bytes:
    """The line of req up to its id: the compact UTF-8 JSON object of
    encode() without its closing brace, so that with_id() appends the id
    of each send as its last member. An "id" of req is replaced. Raises
    ValueError for a string that is not valid Unicode."""
    if "id" in req:
        req = {k: v for k, v in req.items() if k != "id"}
    line = json.dumps(req, separators=(",", ":"), ensure_ascii=False)
    return _utf8(line[:-1] + ("," if len(line) > 2 else ""))


def check_head(url: str, agent: str) -> bytes:
    """request_head() of a plain check of url for agent, byte for byte,
    without building the request: the line every crawler sends."""
    if type(url) is not str or type(agent) is not str:  # as json.dumps
        return request_head(check_request(url, agent, True))
    part = _agent_parts.get(agent)
    if part is None:
        part = _utf8(',"agent":%s,' % _json_string(agent))
        if len(_agent_parts) < _AGENT_CACHE:
            _agent_parts[agent] = part
    return b'{"op":"check","url":' + _utf8(_json_string(url)) + part


def with_id(head: bytes, rid: int, max_line: int) -> bytes:
    """The request line of head (request_head()) sent as id rid, newline
    included; LineTooLongError, without sending, for a line over
    max_line."""
    data = b'%s"id":%d}\n' % (head, rid)
    if max_line and len(data) - 1 > max_line:
        raise LineTooLongError("request line of %d bytes is over %d; not "
                               "sent" % (len(data) - 1, max_line))
    return data


def _extras(req: Dict[str, Any], wait: bool, usage: bool,
            tokens: Optional[Sequence[str]]) -> Dict[str, Any]:
    if not wait:
        req["wait"] = False
    if usage:
        req["usage"] = True
    if tokens is not None:
        if isinstance(tokens, str) or \
                not all(isinstance(t, str) for t in tokens):
            raise TypeError("tokens must be a list of strings")
        req["tokens"] = list(tokens)
    return req


PageLike = Union[Page, Mapping[str, Sequence[Tuple[str, str]]]]


def _pairs(what: str, v: Any) -> List[List[str]]:
    """v, a sequence of (str, str) pairs, as the protocol's lists; raises
    TypeError for anything else."""
    if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
        raise TypeError("page %s must be a list of (name, value) pairs"
                        % what)
    out = []
    for p in v:
        if isinstance(p, (str, bytes)) or not isinstance(p, Sequence) or \
                len(p) != 2 or not all(isinstance(x, str) for x in p):
            raise TypeError("page %s must be a list of (name, value) string "
                            "pairs (got %r)" % (what, p))
        out.append([p[0], p[1]])
    return out


def page_object(page: PageLike) -> Dict[str, Any]:
    """The request's "page" from a Page or a mapping with "headers" and
    "meta"; TypeError for a wrong shape."""
    if isinstance(page, Page):
        headers, meta = page.headers, page.meta
    elif isinstance(page, Mapping):
        extra = set(page) - {"headers", "meta"}
        if extra:
            raise TypeError("page has unknown keys %s" % sorted(extra))
        headers, meta = page.get("headers", ()), page.get("meta", ())
    else:
        raise TypeError("page must be a Page or a mapping (got %r)"
                        % (page,))
    return {"headers": _pairs("headers", headers),
            "meta": _pairs("meta", meta)}


def check_request(url: str, agent: str, wait: bool, usage: bool = False,
                  tokens: Optional[Sequence[str]] = None,
                  page: Optional[PageLike] = None,
                  tdm: bool = False) -> Dict[str, Any]:
    req = _extras({"op": "check", "url": url, "agent": agent}, wait, usage,
                  tokens)
    if tdm:
        req["tdm"] = True
    if page is not None:
        req["page"] = page_object(page)
    return req


def purge_request(origin: Any) -> Dict[str, Any]:
    """The purge of one origin; TypeError for None or a non-string (purging
    every origin is purge_all(), never a default)."""
    if not isinstance(origin, str):
        raise TypeError("purge needs an origin string (got %r); purge_all() "
                        "drops every origin" % (origin,))
    return {"op": "purge", "origin": origin}


def batch_requests(urls: List[str], agent: str, wait: bool,
                   usage: bool = False,
                   tokens: Optional[Sequence[str]] = None,
                   tdm: bool = False) -> List[Dict[str, Any]]:
    """check requests for urls, BATCH_LIMIT URLs each."""
    reqs = [_extras({"op": "check", "agent": agent,
                     "urls": urls[i:i + BATCH_LIMIT]}, wait, usage, tokens)
            for i in range(0, len(urls), BATCH_LIMIT)]
    for req in reqs if tdm else ():
        req["tdm"] = True
    return reqs


def batch_results(urls: List[str], answer: Dict[str, Any],
                  usage: bool = False, tokens: bool = False,
                  tdm: bool = False) -> List[CheckResult]:
    """The CheckResults of one batch answer (already known to be ok)."""
    res = answer.get("results")
    if not isinstance(res, list) or len(res) != len(urls):
        raise UnknownCodeError("malformed batch answer")
    return [CheckResult.from_answer(u, r, usage, tokens, tdm=tdm)
            for u, r in zip(urls, res)]


def result(answer: Dict[str, Any]) -> Dict[str, Any]:
    """answer itself if ok, else raise its typed error."""
    if answer.get("ok") is True:
        return answer
    raise error_from(answer.get("error"))


def refuses_connection(a: Dict[str, Any]) -> bool:
    """Whether answer a is robotsd refusing the connection: id null, the
    error overloaded (too many connections; robotsd closes it)."""
    err = a.get("error")
    return "id" in a and a["id"] is None and a.get("ok") is False and \
        isinstance(err, dict) and err.get("code") == OverloadedError.code


class Pending:
    """Requests in flight on one connection, by id, plus the bookkeeping
    that attributes an answer whose id is null (line_too_long, bad_json,
    some bad_request, overloaded) to the request it belongs to."""

    def __init__(self) -> None:
        self.calls: Dict[int, Any] = {}   # id -> caller's slot
        self.lines: Dict[int, int] = {}   # id -> request line length
        self.raw: List[int] = []          # ids sent as raw lines, oldest first
        self.first = 0  # the ids sent on it span first..last (0: none)
        self.last = 0

    def add(self, rid: int, slot: Any, length: int, raw: bool) -> None:
        self.calls[rid] = slot
        self.lines[rid] = length
        if raw:
            self.raw.append(rid)
        elif not self.first:
            self.first = self.last = rid
        elif rid > self.last:  # threads may add their ids out of order
            self.last = rid
        elif rid < self.first:
            self.first = rid

    def owner(self, a: Dict[str, Any]) -> Optional[int]:
        """The id of the call answer a is for, or None to drop it (a call
        given up on or answered already, an error of id null for no line
        in flight). Raises ProtocolError for an answer nobody asked for:
        no "id", an id this connection never sent or not as sent (1.0,
        "1", true for 1), an ok answer of id null to no raw line."""
        if "id" not in a:
            raise ProtocolError("robotsd sent an answer without an id")
        rid = a["id"]
        if rid is None:
            if self.raw:
                return self.raw[0]
            if a.get("ok") is not False:
                raise ProtocolError("robotsd sent an ok answer of id null, "
                                    "and no request went without an id")
            return self.owner_of_null()
        if not isinstance(rid, int) or isinstance(rid, bool) or \
                not self.first or not self.first <= rid <= self.last:
            raise ProtocolError("robotsd answered id %s, which this "
                                "connection did not send"
                                % json.dumps(rid))
        return rid

    def pop(self, rid: Any) -> Any:
        """The slot of id rid, removed; None if unknown."""
        if not isinstance(rid, int) or isinstance(rid, bool):
            return None
        self.lines.pop(rid, None)
        if rid in self.raw:
            self.raw.remove(rid)
        return self.calls.pop(rid, None)

    def owner_of_null(self) -> Optional[int]:
        """The id an answer with id null belongs to: the oldest raw line in
        flight, else the longest line in flight (a line_too_long answer is
        for a line longer than every line robotsd accepted), else None."""
        if self.raw:
            return self.raw[0]
        if not self.lines:
            return None
        return max(self.lines, key=lambda k: (self.lines[k], -k))

    def drain(self) -> List[Any]:
        """Every slot, removed (the connection is gone)."""
        slots = list(self.calls.values())
        self.calls.clear()
        self.lines.clear()
        self.raw.clear()
        return slots
