// Typed errors: one class per robotsd error code, all RobotsdError.

/** Every error code robotsd answers, and the ones the client adds. */
export const Codes = Object.freeze({
  BAD_JSON: "bad_json",
  BAD_REQUEST: "bad_request",
  UNKNOWN_OP: "unknown_op",
  BAD_URL: "bad_url",
  UNSUPPORTED_SCHEME: "unsupported_scheme",
  LINE_TOO_LONG: "line_too_long",
  OVERLOADED: "overloaded",
  TIMEOUT: "timeout",
  NOT_CACHED: "not_cached",
  INTERNAL: "internal",
  FORBIDDEN: "forbidden",
  // robotsd's config file does not load (answered to every request)
  CONFIG: "config",
  // client side: robotsd could not be reached, or closed mid-call too often
  CONNECTION: "connection",
  // client side: an answer of the wrong shape (a field of the wrong type)
  PROTOCOL: "protocol",
});

/** An error answered by robotsd (or met on the way to it); act on .code. */
export class RobotsdError extends Error {
  constructor(code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RobotsdError";
    this.code = code;
    if (options.url !== undefined) this.url = options.url;
  }
}

function subclass(name, code) {
  const cls = class extends RobotsdError {
    constructor(message, options) {
      super(code, message, options);
      this.name = name;
    }
  };
  Object.defineProperty(cls, "name", { value: name });
  return cls;
}

export const BadJsonError = subclass("BadJsonError", Codes.BAD_JSON);
export const BadRequestError = subclass("BadRequestError", Codes.BAD_REQUEST);
export const UnknownOpError = subclass("UnknownOpError", Codes.UNKNOWN_OP);
export const BadUrlError = subclass("BadUrlError", Codes.BAD_URL);
export const UnsupportedSchemeError = subclass("UnsupportedSchemeError", Codes.UNSUPPORTED_SCHEME);
export const LineTooLongError = subclass("LineTooLongError", Codes.LINE_TOO_LONG);
export const OverloadedError = subclass("OverloadedError", Codes.OVERLOADED);
export const TimeoutError = subclass("TimeoutError", Codes.TIMEOUT);
export const NotCachedError = subclass("NotCachedError", Codes.NOT_CACHED);
export const InternalError = subclass("InternalError", Codes.INTERNAL);
export const ConnectionError = subclass("ConnectionError", Codes.CONNECTION);
export const ForbiddenError = subclass("ForbiddenError", Codes.FORBIDDEN);
export const ConfigError = subclass("ConfigError", Codes.CONFIG);

/**
 * robotsd is not running: no socket file at `socket`, or nobody listening
 * on it, for the whole connectTimeout (a ConnectionError too).
 */
export class NotRunningError extends ConnectionError {
  constructor(socket, message, options) {
    super(`robotsd is not running: cannot connect to ${socket}: ${message}`, options);
    this.name = "NotRunningError";
    this.socket = socket;
  }
}

/**
 * robotsd broke the protocol (code "protocol"): an answer line over
 * MAX_ANSWER (the connection is closed, the calls on it fail, none is sent
 * again), an answer field of the wrong type (an "allowed" that is not a
 * boolean), or one asked for and missing. A ConnectionError too.
 */
export class ProtocolError extends ConnectionError {
  constructor(message, options) {
    super(message, options);
    this.name = "ProtocolError";
    this.code = Codes.PROTOCOL;
  }
}

/** The call's own timeout ran out before robotsd answered (code "timeout"). */

export class ClientTimeoutError extends TimeoutError {
  constructor(message, options) {
    super(message, options);
    this.name = "ClientTimeoutError";
  }
}

const byCode = new Map([
  [Codes.BAD_JSON, BadJsonError],
  [Codes.BAD_REQUEST, BadRequestError],
  [Codes.UNKNOWN_OP, UnknownOpError],
  [Codes.BAD_URL, BadUrlError],
  [Codes.UNSUPPORTED_SCHEME, UnsupportedSchemeError],
  [Codes.LINE_TOO_LONG, LineTooLongError],
  [Codes.OVERLOADED, OverloadedError],
  [Codes.TIMEOUT, TimeoutError],
  [Codes.NOT_CACHED, NotCachedError],
  [Codes.INTERNAL, InternalError],
  [Codes.CONNECTION, ConnectionError],
  [Codes.PROTOCOL, ProtocolError],
  [Codes.FORBIDDEN, ForbiddenError],
  [Codes.CONFIG, ConfigError],
]);

/**
 * The typed error for an answer's {code, message}; an unknown code (a newer
 * robotsd) gives a plain RobotsdError with that code.
 */
export function errorFromAnswer(error, url) {
  const code = error && typeof error.code === "string" ? error.code : "internal";
  const message = error && typeof error.message === "string" ? error.message : code;
  const cls = byCode.get(code);
  const opts = url === undefined ? {} : { url };
  return cls ? new cls(message, opts) : new RobotsdError(code, message, opts);
}
