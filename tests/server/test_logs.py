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


def test_a_log_line_to_a_closed_or_missing_stderr_is_dropped_never_raised(monkeypatch):
    """Before (an attack pass): the log stream was the stderr of configure()'s moment, and
    only an OSError was forgiven: a log line after that stream closed (a test's captured
    stderr, a later test's daemon) raised ValueError into the daemon's work, and with no
    stderr at all (`heartsd serve 2>&-`: sys.stderr is None) the first line ended the daemon,
    exit 1, saying nothing. The lines now go to stderr as it is when written, or nowhere."""
    import io
    import sys

    configure("json", "info")
    gone = io.StringIO()
    gone.close()
    monkeypatch.setattr(sys, "stderr", gone)
    structlog.get_logger("heartsd").info("a line to a closed stream")
    monkeypatch.setattr(sys, "stderr", None)
    structlog.get_logger("heartsd").info("a line to no stream")
    now = io.StringIO()
    monkeypatch.setattr(sys, "stderr", now)
    structlog.get_logger("heartsd").info("a line to the stream of the moment")
    assert "a line to the stream of the moment" in now.getvalue()


def test_the_daemon_serves_with_its_stderr_closed(tmp_path):
    import subprocess
    import sys

    daemon = subprocess.Popen(["bash", "-c", f'exec "{sys.executable}" -m heartsd.cli serve --port 0 '
                               f'--db "{tmp_path / "h.db"}" 2>&-'], stdout=subprocess.PIPE, text=True)
    try:
        lines = [daemon.stdout.readline() for _ in range(2)]  # type: ignore[union-attr]
        assert any("listening on" in line for line in lines), (lines, daemon.poll())  # before: exit 1, no line
    finally:
        daemon.terminate()
        daemon.wait(30)
