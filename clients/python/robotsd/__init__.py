"""robotsd: clients for the robotsd robots.txt policy daemon.

Client is the blocking client (thread-safe), AsyncClient the asyncio one;
both keep one pipelined connection to robotsd's Unix socket, reconnect when
robotsd restarts, and raise a RobotsdError subclass per protocol error code.
robotsd.scrapy.RobotsdMiddleware puts robotsd in a Scrapy crawl.
"""
from ._protocol import (BATCH_LIMIT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SOCKET,
                        DEFAULT_TIMEOUT, ERRORS, BadJsonError,
                        BadRequestError, BadUrlError, CallTimeoutError, Cause,
                        CheckResult, ConfigError, ConnectionLostError,
                        DaemonTimeoutError,
                        ForbiddenError, HistoryEntry, InternalError,
                        LineTooLongError, NotCachedError, NotRunningError,
                        OverloadedError, PURPOSES, Preference, ProtocolError,
                        RobotsdError, Rule, TokenVerdict, UnknownCodeError,
                        UnknownOpError, UnsupportedSchemeError,
                        UsageStatement, Evidence, Page, RobotsTag,
                        RobotsTagSource, Tdm, socket_path)
from .aio import AsyncClient
from .client import Client
from .watch import AgentChange, ChangeEvent

__version__ = "0.1.0"

__all__ = [
    "AgentChange", "AsyncClient", "BATCH_LIMIT", "ChangeEvent", "BadJsonError", "BadRequestError",
    "BadUrlError", "CallTimeoutError", "Cause", "CheckResult", "Client",
    "ConfigError",
    "ConnectionLostError", "DEFAULT_CONNECT_TIMEOUT", "DEFAULT_SOCKET",
    "DEFAULT_TIMEOUT", "DaemonTimeoutError", "ERRORS", "ForbiddenError",
    "HistoryEntry", "InternalError", "LineTooLongError", "NotCachedError",
    "NotRunningError",
    "OverloadedError", "PURPOSES", "Preference", "ProtocolError",
    "RobotsdError", "Rule", "TokenVerdict",
    "UnknownCodeError", "UnknownOpError", "UnsupportedSchemeError",
    "UsageStatement", "Evidence", "Page", "RobotsTag", "RobotsTagSource",
    "Tdm", "socket_path",
]
