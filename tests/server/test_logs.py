"""The daemon's log lines, as an operator's terminal receives them."""

from __future__ import annotations

import logging

import structlog

from heartsbot import logs as client_logs
from heartsd.logs import configure

ESCAPES = "/ws/watch/m-\x1b]0;owned\x07\x1b[2J\x1b[31mFORGED"


def test_console_lines_show_what_callers_sent_as_text_never_as_terminal_commands(capsys):
    """An attack pass: a web address of terminal escapes (retitle the window, clear the
    screen, colour what follows) reached the console log raw through a warning's ``path``:
    structlog's console renderer quotes a value only when it holds a space. Every field of
    the daemon's and of the client library's records is now escaped; a traceback keeps its
    line breaks; JSON lines were already escaped by the JSON encoder."""
    configure("console", "info", cache=False)
    log = structlog.get_logger("heartsd.web")
    log.warning("a web socket's client sent frames before the handshake's answer", path=ESCAPES)
    try:
        raise ValueError(f"bad id {ESCAPES}")
    except ValueError:
        log.exception("web handler failed", path=ESCAPES)
    logging.getLogger(client_logs.ROOT).warning("a house bot's line %s", ESCAPES)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err, repr(err)
    assert err.count("m-\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mFORGED") >= 3, err
    assert "Traceback (most recent call last):\n" in err  # the traceback's lines stay lines

    configure("json", "info", cache=False)
    log.warning("the same in JSON", path=ESCAPES)
    assert "\x1b" not in capsys.readouterr().err
