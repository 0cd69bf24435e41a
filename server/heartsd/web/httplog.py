"""What aiohttp's HTTP protocol reports, as the daemon's own structured log lines.

aiohttp logs a malformed request (a header over 8 KiB, a broken request line, bad
chunking) with ``logger.exception``: a multi-line traceback on the standard library's
root logger, outside the daemon's JSON lines, carrying bytes the client chose, as often
as anyone cares to send one. A malformed request is the client's fault and the client
is already answered 400, so it is one ``debug`` line here with aiohttp's reason;
anything else aiohttp reports is the server's and keeps its traceback.

>>> from aiohttp.http_exceptions import LineTooLong
>>> client_error(LineTooLong(b"x", 8190))
{'status': 400, 'reason': "Got more than 8190 bytes when reading: b'x'."}
>>> client_error(KeyError("a bug of ours")) is None
True
"""

from __future__ import annotations

from typing import Any

import structlog
from aiohttp.http_exceptions import HttpProcessingError

log = structlog.get_logger("heartsd.web.http")
REASON_CHARS = 200  # of aiohttp's reason, which quotes the client's bytes


class HttpLog:
    """The ``logger`` aiohttp's request handlers are given (``AppRunner(logger=...)``):
    the three methods they call."""

    def debug(self, message: str, *args: Any, exc_info: Any = None, **_: Any) -> None:
        log.debug(_text(message, args), **(client_error(exc_info) or {}))

    def warning(self, message: str, *args: Any, **_: Any) -> None:
        log.warning(_text(message, args))

    def exception(self, message: str, *args: Any, exc_info: Any = True, **_: Any) -> None:
        fields = client_error(exc_info)
        if fields is not None:
            log.debug("malformed HTTP request", peer=args[0] if args else None, **fields)
            return
        log.error(_text(message, args), exc_info=exc_info)


def client_error(exc: Any) -> dict[str, Any] | None:
    """What to log of a malformed request (the client's fault), or None for anything else."""
    if isinstance(exc, HttpProcessingError):
        return {"status": exc.code, "reason": str(exc.message)[:REASON_CHARS]}
    return None


def _text(message: str, args: tuple[Any, ...]) -> str:
    try:
        return message % args if args else message
    except (TypeError, ValueError):
        return message
