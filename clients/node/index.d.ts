// Type declarations for the robotsd client.

export declare const DEFAULT_SOCKET: string;
export declare const BATCH_LIMIT: number;
export declare const DEFAULT_TIMEOUT: number;
export declare const DEFAULT_MAX_LINE: number;
export declare const MAX_ANSWER: number;
export declare const DEFAULT_CONNECT_TIMEOUT: number;

/** The socket path: the argument, else $ROBOTSD_SOCKET, else DEFAULT_SOCKET. */
export declare function resolveSocket(path?: string): string;

export declare const Codes: Readonly<{
  BAD_JSON: "bad_json";
  BAD_REQUEST: "bad_request";
  UNKNOWN_OP: "unknown_op";
  BAD_URL: "bad_url";
  UNSUPPORTED_SCHEME: "unsupported_scheme";
  LINE_TOO_LONG: "line_too_long";
  OVERLOADED: "overloaded";
  TIMEOUT: "timeout";
  NOT_CACHED: "not_cached";
  INTERNAL: "internal";
  FORBIDDEN: "forbidden";
  CONFIG: "config";
  CONNECTION: "connection";
  PROTOCOL: "protocol";
}>;

export type ErrorCode = (typeof Codes)[keyof typeof Codes];

export interface ErrorOptions {
  url?: string;
  cause?: unknown;
}

/** An error answered by robotsd, or met on the way to it; act on `code`. */
export declare class RobotsdError extends Error {
  constructor(code: string, message: string, options?: ErrorOptions);
  /** One of Codes, or a code a newer robotsd added. */
  readonly code: ErrorCode | string;
  /** In a batch: the URL the error is about. */
  readonly url?: string;
}
/** The base of the classes below: one per code (not exported at run time). */
declare class CodedError<C extends ErrorCode> extends RobotsdError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: C;
}
export declare class BadJsonError extends CodedError<"bad_json"> {}
export declare class BadRequestError extends CodedError<"bad_request"> {}
export declare class UnknownOpError extends CodedError<"unknown_op"> {}
export declare class BadUrlError extends CodedError<"bad_url"> {}
export declare class UnsupportedSchemeError extends CodedError<"unsupported_scheme"> {}
export declare class LineTooLongError extends CodedError<"line_too_long"> {}
export declare class OverloadedError extends CodedError<"overloaded"> {}
export declare class TimeoutError extends CodedError<"timeout"> {}
/** The call's own timeout ran out (a TimeoutError too). */
export declare class ClientTimeoutError extends TimeoutError {}
export declare class NotCachedError extends CodedError<"not_cached"> {}
export declare class InternalError extends CodedError<"internal"> {}
/** An admin op (purge) without the right (root, robotsd's user, admin-group). */
export declare class ForbiddenError extends CodedError<"forbidden"> {}
/**
 * robotsd's config file does not load: every request gets this until the
 * file is fixed and robotsd restarted or reloaded (the message names the
 * file and line).
 */
export declare class ConfigError extends CodedError<"config"> {}
/** robotsd could not be reached, or the client was closed. */
export declare class ConnectionError extends CodedError<"connection"> {}
/**
 * robotsd broke the protocol: an answer field of the wrong type (an
 * `allowed` that is not a boolean), one asked for and missing, or an answer
 * line over MAX_ANSWER. At run time also an instance of ConnectionError.
 */
export declare class ProtocolError extends CodedError<"protocol"> {}
/** robotsd is not running: nothing listens at `socket` (after connectTimeout). */
export declare class NotRunningError extends ConnectionError {
  readonly socket: string;
}

/** The typed error for an answer's `error` object. */
export declare function errorFromAnswer(
  error: { code?: string; message?: string } | undefined,
  url?: string,
): RobotsdError;

export interface Rule {
  directive: "allow" | "disallow";
  pattern: string;
  /** 1-based line in robots.txt. */
  line: number;
}

/** A site's preference for one purpose. */
export type Preference = "allowed" | "disallowed" | "unknown";

/** The purposes robotsd answers. */
export type Purpose = "train-ai" | "search" | "ai-input" | "ai-use";
export declare const PURPOSES: readonly Purpose[];

/** Purpose -> preference: every Purpose, "tdm" with `tdm: true`, and any a newer robotsd adds. */
export type Usage = { readonly [P in Purpose]: Preference } & { readonly [purpose: string]: Preference };

/** A Content-Usage or Content-Signal statement that decided the usage. */
export interface UsageFrom {
  directive: "content-usage" | "content-signal";
  /** The line's path pattern; "/" when it has none; null for a page's header. */
  pattern: string | null;
  /** 1-based line in robots.txt; null for a page's header. */
  line: number | null;
  /** The preferences as written. */
  value: string;
  /** "file": a Content-Signal line before the first group; absent when robotsd does not say. */
  scope?: "group" | "file";
  /** "header": a header of the page sent with `page`; absent when robotsd does not say. */
  source?: "robots.txt" | "header";
}

/** What came with the fetched page, sent with `check(..., {page})`. */
export interface Page {
  /** The response header lines, as [name, value]. */
  headers?: [string, string][];
  /** The name and content of the `<meta>` elements of the page's `<head>`. */
  meta?: [string, string][];
}

/** The page's robots rules for the agent (Robots-Tag, X-Robots-Tag, robots meta), their union. */
export interface RobotsTag {
  /** e.g. "noindex", "noai"; reported, not mapped onto purposes. */
  rules: string[];
  /** The valued rules: "max-snippet" -> "0", ... */
  values: Record<string, string>;
  /** The fields the rules came from (lowercased names). */
  from: { source: "header" | "meta" | string; field: string; value: string }[];
}

/** The inputs of an answer to a check with a page. */
export interface Evidence {
  /** The robots.txt version used. */
  robots: string | null;
  /** The tdmrep.json version used; null when none. */
  tdmrep: string | null;
  /** The first 16 hex digits of the SHA-256 of the page input robotsd read. */
  page: string;
}

/** The TDMRep answer for the URL. */
export interface Tdm {
  /** "pending": tdmrep.json not fetched yet, only the page's say (a check with page). */
  state: "rules" | "invalid" | "none" | "unreachable" | "pending" | string;
  /** null when no tdmrep.json member matches or the state is not "rules". */
  reservation: 0 | 1 | null;
  policy: string | null;
  location: string | null;
  version: string | null;
  /** The source of reservation (else of policy); absent when neither was given. */
  from?: "tdmrep.json" | "header" | "meta";
}

/** A control token's own verdict for the URL. */
export interface TokenVerdict {
  allowed: boolean;
  rule: Rule | null;
}

/** The stable codes of docs/protocol.md; treat an unknown one as "other". */
export type CauseCode =
  | "dns"
  | "connect"
  | "tls"
  | "timeout"
  | "private_address"
  | "http_5xx"
  | "http_503"
  | "http_429"
  | "bad_response"
  | "other";

/** Why an origin is unreachable: a stable code and the failure's text. */
export interface Cause {
  code: CauseCode | string;
  message: string;
}

/** One URL's verdict; in a batch, possibly its error instead. */
export declare class CheckResult {
  readonly url: string;
  /** true under `wait: false` while the origin is fetched; `allowed` is null then. */
  readonly pending: boolean;
  readonly allowed: boolean | null;
  readonly origin: string | null;
  readonly source: "cache" | "fetched" | "stale" | null;
  readonly reason: "rule" | "no_rule" | "robots_txt" | "unavailable" | "unreachable" | null;
  readonly rule: Rule | null;
  /** Seconds, from the Crawl-delay of the group that applies. */
  readonly crawlDelay: number | null;
  /** Seconds until the entry is refreshed. */
  readonly expiresIn: number | null;
  readonly httpStatus: number | null;
  /** Why, when reason is "unreachable"; null otherwise. */
  readonly cause: Cause | null;
  /**
   * The robots.txt version the verdict came from: 16 lowercase hex digits (a
   * SHA-256 prefix of the body used); null for the URL /robots.txt itself, an
   * entry restored from an old state file, a pending answer or an error.
   */
  readonly version: string | null;
  /** Set only in a batch, for a URL robotsd could not check. */
  readonly error: RobotsdError | null;
  /** With `usage: true`: the preferences of an allowed URL; null for a disallowed one or when not asked. */
  readonly usage: Usage | null;
  /** With `usage: true`: the lines that decided, in file order ([] when disallowed); null when not asked. */
  readonly usageFrom: UsageFrom[] | null;
  /** With `tokens`: each token, in lowercase, -> its verdict; null when not asked. */
  readonly tokens: Readonly<Record<string, TokenVerdict>> | null;
  /** With `page`: the page's robots rules; null for a disallowed URL or when no page was sent. */
  readonly robotsTag: RobotsTag | null;
  /** With `page`: the inputs the answer came from; null when no page was sent. */
  readonly evidence: Evidence | null;
  /** With `tdm: true`: the TDMRep answer; null for a disallowed URL and from a robotsd that does not answer it. */
  readonly tdm: Tdm | null;
}

export interface Group {
  agents: string[];
  rules: number;
  crawlDelay: number | null;
}

/** What the cache holds for an origin (the protocol's inspect answer, camelCase). */
export interface Entry {
  origin: string;
  state: "rules" | "allow_all" | "disallow_all" | "pending";
  httpStatus: number | null;
  fetchedAt: number | null;
  /** Unix seconds of the last fetch or 304 that confirmed this version. */
  validatedAt: number | null;
  /** Unix seconds of the last fetch's end, whatever it brought. */
  lastFetchAt: number | null;
  /** The entry's robots.txt version, null when unknown. */
  version: string | null;
  expiresAt: number | null;
  expiresIn: number | null;
  bodyBytes: number;
  truncated: boolean;
  finalUrl: string | null;
  groups: Group[];
  sitemaps: string[];
  retry: {
    failStreak: number;
    failingSince: number | null;
    nextRetry: number | null;
    lastError: string | null;
  };
  fetching: boolean;
  stale: boolean;
  [field: string]: unknown;
}

/** One distinct robots.txt version of a cached origin (the history op). */
export interface HistoryEntry {
  version: string;
  /** Unix seconds: when this robotsd first got it. */
  firstSeen: number;
  /** Unix seconds: when a fetch or 304 last confirmed it. */
  lastSeen: number;
  /** null without an HTTP answer. */
  httpStatus: number | null;
  state: "rules" | "allow_all" | "disallow_all";
}

/** robotsd's counters under the protocol's names. */
export interface Stats {
  cache_entries: number;
  cache_bytes: number;
  hits: number;
  misses: number;
  fetches: number;
  fetch_errors: number;
  coalesced: number;
  connections: number;
  requests: number;
  uptime_s: number;
  [counter: string]: number;
}

export interface ClientOptions {
  /** Socket path; else $ROBOTSD_SOCKET, else DEFAULT_SOCKET. */
  socket?: string;
  /** Per-call timeout in ms (default 70000). */
  timeout?: number;
  /** How long to keep trying to (re)connect, in ms (default 5000). */
  connectTimeout?: number;
  /** robotsd's max-line: longer requests fail locally with LineTooLongError. */
  maxLine?: number;
}

export interface CallOptions {
  /** This call's timeout in ms. */
  timeout?: number;
}

export interface CheckOptions extends CallOptions {
  /** false: answer `pending` at once when the origin is not cached. */
  wait?: boolean;
  /** true: answer the site's usage preferences (`usage`, `usageFrom`). */
  usage?: boolean;
  /** Control tokens (e.g. "Google-Extended", at most 16) to evaluate the URL for (`tokens`). */
  tokens?: string[];
  /** What came with the fetched page (`robotsTag`, `evidence`); `check` only. */
  page?: Page | null;
  /** true: answer the TDMRep answer (`tdm`). */
  tdm?: boolean;
}

export declare class Client {
  constructor(options?: ClientOptions);
  readonly socketPath: string;
  timeout: number;
  connectTimeout: number;
  maxLine: number;
  check(url: string, agent: string, opts?: CheckOptions): Promise<CheckResult>;
  checkMany(urls: string[], agent: string, opts?: CheckOptions): Promise<CheckResult[]>;
  warm(urls: string | string[], agent: string, opts?: CallOptions): Promise<CheckResult[]>;
  inspect(origin: string, opts?: CallOptions): Promise<Entry>;
  /** Newest (the current version) first; NotCachedError for an origin not cached. */
  history(origin: string, opts?: CallOptions): Promise<HistoryEntry[]>;
  purge(origin: string, opts?: CallOptions): Promise<number>;
  purgeAll(opts?: CallOptions): Promise<number>;
  stats(opts?: CallOptions): Promise<Stats>;
  ping(opts?: CallOptions): Promise<string>;
  /** Any request object; resolves to the whole ok:true answer. */
  request(req: Record<string, unknown>, opts?: CallOptions): Promise<Record<string, unknown>>;
  /** One raw line without id, for answers with "id":null (bad_json). */
  sendRaw(line: string, opts?: CallOptions): Promise<Record<string, unknown>>;
  close(): Promise<void>;
  /** The change feed, on a connection of its own; `signal` ends it. */
  watch(opts?: WatchOptions): AsyncGenerator<ChangeEvent, void, undefined>;
}

export interface WatchOptions {
  /** Origins to watch; none: all. */
  origins?: string[];
  /** Product tokens or User-Agent strings; none: "*". */
  agents?: string[];
  signal?: AbortSignal;
  /** ms for each subscription's answer. */
  timeout?: number;
}

export declare class AgentChange {
  newlyDisallowed: string[];
  newlyAllowed: string[];
  /** null: not reported. */
  usageChanged: boolean | null;
}

export declare class ChangeEvent {
  origin: string;
  /** null: the first version robotsd knows. */
  old: string | null;
  new: string;
  at: number;
  state: string;
  /** null for an agent robotsd could not tell. */
  agents: Record<string, AgentChange | null>;
}

export declare function watch(
  path: string,
  opts?: WatchOptions,
): AsyncGenerator<ChangeEvent, void, undefined>;

export declare function connect(options?: ClientOptions): Client;
export {};
