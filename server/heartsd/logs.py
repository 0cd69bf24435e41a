"""structlog set-up: JSON lines in production, a console renderer on a terminal.

Context (match, seat, bot) is bound with ``log.bind`` at the start of each handler
and match; one rich line per event rather than many thin ones.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure(log_format: str = "json", level: str = "info", cache: bool = True) -> None:
    """``cache=False`` lets tests swap processors later (structlog.testing.capture_logs)."""
    renderer: structlog.types.Processor
    if log_format == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())  # no escape codes in files
    else:
        renderer = structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=cache,
    )
