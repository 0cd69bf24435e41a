"""The client's logging: one ``event key=value ...`` line per event, standard library only.

The client installs with grpcio, protobuf and the engine alone, so it logs through
:mod:`logging` rather than structlog, with the same call shape the daemon uses::

    log = get_logger("heartsbot")
    log.warning("connection lost", bot="mybot", code="UNAVAILABLE")

prints ``... warning connection lost bot=mybot code=UNAVAILABLE`` once :func:`configure`
ran (the ``heartsbot`` CLI does). Inside the daemon, where house bots use the same
client, ``heartsd.logs.configure`` renders the ``heartsbot`` logger's records with its
structlog renderer instead (JSON lines in production), fields included.

>>> import io, logging
>>> stream = io.StringIO()
>>> configure("info", stream=stream, timestamps=False)
>>> get_logger("heartsbot.demo").info("connected", bot="b1", resuming=0)
>>> stream.getvalue()
'info     connected bot=b1 resuming=0\\n'
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

ROOT = "heartsbot"
FIELDS = "heartsbot_fields"  # the LogRecord attribute holding an event's key=value fields


class KeyValueLogger:
    """A stdlib logger taking an event name and fields, as structlog's loggers do."""

    __slots__ = ("_logger",)

    def __init__(self, name: str) -> None:
        self._logger = logging.getLogger(name)

    def _log(self, level: int, event: str, fields: dict[str, Any], exc_info: bool = False) -> None:
        if self._logger.isEnabledFor(level):
            self._logger.log(level, event, extra={FIELDS: fields}, exc_info=exc_info, stacklevel=3)

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields, exc_info=True)


def get_logger(name: str = ROOT) -> KeyValueLogger:
    return KeyValueLogger(name)


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The key=value fields a :class:`KeyValueLogger` attached to ``record``."""
    return dict(getattr(record, FIELDS, None) or {})


class KeyValueFormatter(logging.Formatter):
    """``[time ]level event key=value ...``, values quoted only when they hold spaces."""

    def __init__(self, timestamps: bool = True) -> None:
        super().__init__()
        self.timestamps = timestamps

    def format(self, record: logging.LogRecord) -> str:
        parts = [f"{record.levelname.lower():<8} {record.getMessage()}"]
        for key, value in fields_of(record).items():
            text = str(value)
            parts.append(f"{key}={text!r}" if (" " in text or not text) else f"{key}={text}")
        line = " ".join(parts)
        if self.timestamps:
            line = f"{self.formatTime(record, '%Y-%m-%dT%H:%M:%S')} {line}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure(level: str = "info", stream: TextIO | None = None, timestamps: bool = True) -> None:
    """Send the ``heartsbot`` loggers' records at ``level`` and above to ``stream``
    (stderr by default), one line each. Safe to call again (it replaces its handler)."""
    logger = logging.getLogger(ROOT)
    for handler in list(logger.handlers):
        if getattr(handler, "_heartsbot", False):
            logger.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(KeyValueFormatter(timestamps))
    handler._heartsbot = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(getattr(logging, level.upper()))
    logger.propagate = False
