// Every protocol error code maps to its own RobotsdError subclass.

import assert from "node:assert/strict";
import { test } from "node:test";

import * as robotsd from "../index.js";

const classes = {
  bad_json: "BadJsonError",
  bad_request: "BadRequestError",
  unknown_op: "UnknownOpError",
  bad_url: "BadUrlError",
  unsupported_scheme: "UnsupportedSchemeError",
  line_too_long: "LineTooLongError",
  overloaded: "OverloadedError",
  timeout: "TimeoutError",
  not_cached: "NotCachedError",
  internal: "InternalError",
  connection: "ConnectionError",
  protocol: "ProtocolError",
  forbidden: "ForbiddenError",
  config: "ConfigError",
};

test("errorFromAnswer gives each code its class, message and url", () => {
  assert.deepEqual(Object.values(robotsd.Codes).sort(), Object.keys(classes).sort());
  for (const [code, name] of Object.entries(classes)) {
    const err = robotsd.errorFromAnswer({ code, message: `text of ${code}` }, "http://u.test/");
    assert.ok(err instanceof robotsd[name], code);
    assert.ok(err instanceof robotsd.RobotsdError, code);
    assert.ok(err instanceof Error, code);
    assert.equal(err.name, name);
    assert.equal(err.code, code);
    assert.equal(err.message, `text of ${code}`);
    assert.equal(err.url, "http://u.test/");
  }
});

test("an unknown code is a plain RobotsdError keeping the code", () => {
  const err = robotsd.errorFromAnswer({ code: "brand_new", message: "m" });
  assert.equal(err.constructor, robotsd.RobotsdError);
  assert.equal(err.code, "brand_new");
  assert.equal(err.url, undefined);
});

test("a client-side timeout is a TimeoutError with code timeout", () => {
  const err = new robotsd.ClientTimeoutError("late");
  assert.ok(err instanceof robotsd.TimeoutError);
  assert.equal(err.code, "timeout");
  assert.equal(err.name, "ClientTimeoutError");
});
