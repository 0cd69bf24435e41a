"""structlog set-up: JSON lines in production, a console renderer on a terminal.

Context (match, seat, bot) is bound with ``log.bind`` at the start of each handler
and match; one rich line per event rather than many thin ones. The client library
(house bots run it in-process) logs through the standard library
(:mod:`heartsbot.logs`); its records are rendered here by the same renderer, fields
included, so the daemon's output stays one format.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any

import structlog

from heartsbot import logs as client_logs


class _Forgiving:
    """A log stream that drops what it cannot write instead of raising into the daemon's
    work: the terminal it logs to may have closed (a hung-up terminal fails every write
    with EIO), and the first log line after that ended the daemon before its shutdown's
    drain, its matches left running (the review of the SIGHUP change).

    It writes to ``sys.stderr`` as it is at each line: there may be none (``heartsd serve
    2>&-``, where the first line ended the daemon, exit 1, saying nothing), or the one of
    :func:`configure`'s moment may since have been closed (ValueError; a test's captured
    stderr, which another test's daemon then logged to: an attack pass)."""

    def write(self, text: str) -> int:
        stream = sys.stderr
        if stream is None:
            return 0
        try:
            return int(stream.write(text))
        except (OSError, ValueError):
            return 0

    def flush(self) -> None:
        stream = sys.stderr
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()


def printable(text: str) -> str:
    r"""``text`` with its control and format characters written as escapes, so that what a
    caller sent (a bot's version, a web address) is shown on a terminal as text, never obeyed
    as a command of the terminal.

    >>> printable("m-\x1b]0;owned\x07\x1b[2J")
    'm-\\x1b]0;owned\\x07\\x1b[2J'
    """
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _escaped(_: Any, __: str, event_dict: structlog.types.EventDict) -> structlog.types.EventDict:
    """The console's fields as :func:`printable` text. structlog's console renderer quotes a
    value only when it holds a space: an attack pass's web address of terminal escapes
    (/ws/watch/m-ESC]0;owned BEL ESC[2J ...) was logged raw, retitling and clearing the
    operator's terminal. A traceback keeps its line breaks and indentation."""
    for key, value in event_dict.items():
        if isinstance(value, str) and not value.isprintable():
            event_dict[key] = ("\n".join(printable(line.replace("\t", "    ")) for line in value.split("\n"))
                               if key == "exception" else printable(value))
    return event_dict


def configure(log_format: str = "json", level: str = "info", cache: bool = True) -> None:
    """``cache=False`` lets tests swap processors later (structlog.testing.capture_logs)."""
    renderer: structlog.types.Processor
    finish: list[structlog.types.Processor] = [structlog.processors.format_exc_info]
    if log_format == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr is not None and sys.stderr.isatty())  # none in files
        finish.append(_escaped)  # JSON escapes control characters itself
    else:
        renderer = structlog.processors.JSONRenderer()
    shared: list[structlog.types.Processor] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            *shared,
            *finish,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=_Forgiving()),
        cache_logger_on_first_use=cache,
    )
    _route_client_logs(renderer, shared, finish, level)


def _client_fields(_: Any, __: str, event_dict: structlog.types.EventDict) -> structlog.types.EventDict:
    record = event_dict.get("_record")
    if record is not None:
        event_dict.update(client_logs.fields_of(record))
        event_dict.setdefault("logger", record.name)
    return event_dict


def _route_client_logs(renderer: structlog.types.Processor, shared: list[structlog.types.Processor],
                       finish: list[structlog.types.Processor], level: str) -> None:
    handler = logging.StreamHandler(_Forgiving())  # type: ignore[arg-type]
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, _client_fields],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *finish, renderer],
    ))
    logger = logging.getLogger(client_logs.ROOT)
    for old in list(logger.handlers):
        logger.removeHandler(old)
    logger.addHandler(handler)
    logger.setLevel(getattr(logging, level.upper()))
    logger.propagate = False
