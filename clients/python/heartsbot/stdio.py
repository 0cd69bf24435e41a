"""``heartsbot stdio``: a bot in any language plays through lines on its stdin and stdout.

    heartsbot stdio --server HOST:PORT --token TOKEN --name NAME -- ./mybot ARGS

The bridge runs the executable, writes ``hearts 1`` to its stdin and waits for ``ok``,
connects, then writes one request line per decision and reads one answer line per
request from its stdout; the bot's stderr is ours. docs/stdio.md is the protocol for
bot authors. Everything else
(the stream, reconnect and resume, the clock) is :class:`BotClient`'s: the bridge is
a :class:`Strategy` whose choices are the child's answers.

A missing, unparseable, illegal or late answer never reaches the server: the bridge
logs the reason to stderr and answers the default itself (the server's own default:
the first legal card, the last ``count`` cards of ``legal=``, the ``default=`` moon
option). Answers are matched to requests by counting (one line per request, in order),
so a late line is dropped when it arrives and an extra line is reported and dropped.

>>> parse_answer("play qs", "play", legal=[parse_card("QS")])
49
>>> parse_answer("play 9Z", "play", legal=[parse_card("QS")])
Traceback (most recent call last):
...
heartsbot.stdio.AnswerError: not a card: '9Z'
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import grpc

from hearts_engine import MoonOption, Phase, SeatView
from hearts_engine.cards import Card, card_name, parse_card

from . import __version__, convert
from .exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE
from .proto import bot_pb2, game_pb2
from .client import BotClient, current_decision, sent_away_message
from .strategies import Strategy
from .tls import Tls
from .strategies.base import best_moon_option

PROTOCOL_VERSION = 1
VERSION_PREFIX = "heartsbot-stdio/"  # the bridge's hello.version: how a server (the conformance kit) knows it
GREETING = f"hearts {PROTOCOL_VERSION}"
READY = "ok"
READY_TIMEOUT_S = 30.0
# The longest line read from a bot, in characters: an answer is one short line (a pass is
# ~15 characters). The rest of a longer line is skipped unread up to its newline, and the
# line counts as one bad answer.
MAX_LINE = 65536
HINT_AFTER_S = 5.0  # a bot still silent at the handshake after this long is told why it may be
# What a bot that is running but answers nothing most likely does wrong, and the fixes.
BUFFERING = ("its output (or its input) is most likely buffered on the pipe, so 'ok' never leaves it: "
             "flush every line you write. Python: print(..., flush=True), or run python -u; "
             "awk: fflush() after each print, and mawk (Debian's awk) also reads a pipe in blocks unless run "
             "as mawk -W interactive -f bot.awk; C: fflush(stdout) or setvbuf(stdout, NULL, _IOLBF, 0) "
             "(docs/stdio.md, 'The conversation')")
KINDS = {Phase.PASSING: "pass", Phase.PLAYING: "play", Phase.MOON_CHOICE: "moon"}
MOON_WORDS = {o.value: o for o in MoonOption} | {"add": MoonOption.ADD_TO_OTHERS,
                                                  "subtract": MoonOption.SUBTRACT_FROM_SELF}
MOON_CHOICES = tuple(MoonOption)

Decision: TypeAlias = "list[Card] | Card | MoonOption"



class AnswerError(ValueError):
    """The child's answer cannot be played; ``str()`` is the reason shown to its author."""


class ChildGone(RuntimeError):
    """The child exited or closed its stdout."""


class OverlongLine(str):
    """A line longer than MAX_LINE characters: its start only (for reports), never an answer."""

    def __repr__(self) -> str:
        return f"OverlongLine({str.__repr__(self)})"


class BoundedLines:
    """Splits what a bot writes into stripped lines as it arrives, keeping at most ``limit``
    characters of the line in progress. Before (an attack pass), a bot writing several MB
    without a newline made the reader re-join and re-split its whole partial line at every
    64 KB read: quadratic, so the bridge fell behind and its answers went stale, and the
    line's memory had no bound.

    >>> lines = BoundedLines(limit=8)
    >>> lines.feed("play QS\\npl"), lines.feed("ay 2C\\n" + "x" * 100), lines.feed("x" * 100), lines.feed("\\n ok \\n")
    (['play QS'], ['play 2C'], [], [OverlongLine('xxxxxxxx'), 'ok'])
    """

    def __init__(self, limit: int = MAX_LINE) -> None:
        self.limit = limit
        self._pieces: list[str] = []  # the line in progress, up to limit characters
        self._kept = 0
        self._over = False  # the line in progress passed the limit: the rest is skipped

    def feed(self, text: str) -> list[str]:
        """The lines that ``text`` completes."""
        *ends, rest = text.split("\n")
        lines = []
        for piece in ends:
            self._add(piece)
            lines.append(self._take())
        self._add(rest)
        return lines

    @property
    def pending(self) -> bool:
        """Whether a line is in progress (some of it read, not its newline)."""
        return bool(self._pieces) or self._over

    def end(self) -> list[str]:
        """The stream ended: a last line without its newline, if it has any text."""
        line = self._take()
        return [line] if line else []

    def _add(self, piece: str) -> None:
        if self._over or not piece:
            return
        room = self.limit - self._kept
        if len(piece) > room:
            piece, self._over = piece[:room], True
        self._pieces.append(piece)
        self._kept += len(piece)

    def _take(self) -> str:
        text = "".join(self._pieces)
        line = OverlongLine(text[:200]) if self._over else text.strip()
        self._pieces, self._kept, self._over = [], 0, False
        return line


# --- the line format -------------------------------------------------------------------

def _cards(cards: Sequence[Card]) -> str:
    return ",".join(card_name(c) for c in cards)


def _ints(values: Sequence[int]) -> str:
    return ",".join(str(v) for v in values)


def format_request(match_id: str, view: SeatView, ms: int, default_moon: MoonOption | None = None) -> str:
    """The request line for ``view``'s decision (pass, play or moon); see docs/stdio.md."""
    kind = KINDS[view.phase]
    rules = view.rules
    words = [kind, match_id, f"seat={view.seat}", f"players={rules.players}", f"ruleset={rules.name}",
             f"deal={view.deal_number}", f"ms={ms}", f"hand={_cards(view.hand)}", f"legal={_cards(view.legal)}",
             f"points={_ints(view.points_taken)}", f"totals={_ints(view.totals)}"]
    if kind == "pass":
        to = (view.seat + view.pass_direction.offset(rules.players)) % rules.players
        words += [f"count={rules.pass_count}", f"dir={view.pass_direction.value}", f"to={to}"]
    elif kind == "play":
        played = [c for t in view.tricks for c in t.cards]
        words += [f"trick={_cards(view.trick)}", f"lead={view.trick_leader if view.trick else -1}",
                  f"broken={int(view.hearts_broken)}", f"played={_cards(played)}",
                  f"passed={_cards(view.passed or ())}", f"received={_cards(view.received or ())}"]
    else:
        default = default_moon or best_moon_option(view)
        words += [f"options={','.join(o.value for o in MOON_CHOICES)}", f"default={default.value}"]
    return " ".join(words)


def format_end(match_id: str, seat: int, result: game_pb2.MatchResult) -> str:
    """The information line sent when a match ends (the bot must not answer it)."""
    status = game_pb2.MatchStatus.Name(result.status).removeprefix("MATCH_STATUS_").lower()
    if result.status == game_pb2.MATCH_STATUS_UNSPECIFIED:
        status = "unknown"  # it ended while the bridge was away, and its result never came
    return (f"end {match_id} seat={seat} status={status} deals={result.deals} totals={_ints(result.totals)} "
            f"ranks={_ints(result.ranks)} winners={_ints(result.winners)}")


def parse_answer(line: str, kind: str, legal: Sequence[Card], count: int = 1,
                 options: Sequence[MoonOption] = MOON_CHOICES) -> Decision:
    """The decision in an answer line, checked against the request; :class:`AnswerError` says why not.

    ``pass C1 C2 C3`` (commas also separate), ``play C`` or ``moon add_to_others`` /
    ``moon subtract_from_self`` (``add`` / ``subtract`` for short); cards as in
    :func:`hearts_engine.cards.parse_card` (``QS``, ``TD``, ``10d``).
    """
    if isinstance(line, OverlongLine):
        raise AnswerError(f"a line of more than {MAX_LINE:,} characters; an answer is one short line")
    words = line.replace(",", " ").split()
    if not words:
        raise AnswerError(f"an empty line; expected a {kind} answer")
    verb, rest = words[0].lower(), words[1:]
    if verb != kind:
        raise AnswerError(f"expected a {kind} answer, got {words[0]!r}")
    if kind == "moon":
        if len(rest) != 1 or rest[0].lower() not in MOON_WORDS:
            raise AnswerError(f"moon takes one of {', '.join(o.value for o in options)}")
        option = MOON_WORDS[rest[0].lower()]
        if option not in options:
            raise AnswerError(f"{option.value} is not an option now")
        return option
    want = count if kind == "pass" else 1
    if len(rest) != want:
        raise AnswerError(f"{kind} takes {want} card{'s' if want > 1 else ''}, got {len(rest)}")
    cards = []
    for word in rest:
        try:
            cards.append(parse_card(word))
        except ValueError:
            raise AnswerError(f"not a card: {word!r}") from None
    if len(set(cards)) != len(cards):
        raise AnswerError("the same card twice")
    for c in cards:
        if c not in legal:
            raise AnswerError(f"{card_name(c)} is not in your hand" if kind == "pass"
                              else f"{card_name(c)} is not legal now (legal: {_cards(legal)})")
    return cards if kind == "pass" else cards[0]


def default_decision(kind: str, legal: Sequence[Card], count: int, default_moon: MoonOption) -> Decision:
    """What the bridge answers for a bad or missing answer: the server's own default."""
    if kind == "pass":
        return sorted(legal)[-count:]
    if kind == "play":
        return min(legal)
    return default_moon


def describe(decision: Decision) -> str:
    """The answer line of a decision: ``pass 2C 3C 4C``, ``play QS``, ``moon add_to_others``."""
    if isinstance(decision, list):
        return "pass " + " ".join(card_name(c) for c in decision)
    if isinstance(decision, MoonOption):
        return "moon " + decision.value
    return "play " + card_name(decision)


# --- the child process -----------------------------------------------------------------

class Child:
    """The bot's process: one request line out, one answer line back, never two at once."""

    def __init__(self, command: Sequence[str], on_gone: Callable[[], object] = lambda: None,
                 trace: Callable[[str], None] | None = None,
                 report: Callable[[str], None] = lambda text: None) -> None:
        self.command = list(command)
        self.trace = trace
        self.report = report
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     bufsize=1, encoding="utf-8", errors="replace",
                                     process_group=0)  # Ctrl-C stops the bridge, which then closes stdin
        self.gone = False
        self._on_gone = on_gone
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._state = threading.Lock()  # guards _waiting and _owed between askers and the reader
        self._waiting = False  # a request is out and its answer not yet read
        self._greeting = False  # waiting for "ok": every line is read
        self.heard = 0  # lines the bot wrote before "ok" (it writes, so it is not stuck in a buffer)
        self._owed = 0  # answers to requests that timed out: dropped when they arrive
        self._requests = 0  # requests written so far: when the line in progress began
        self._ask = threading.Lock()  # one request at a time
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="stdio-reader", daemon=True)
        self._reader.start()
        threading.Thread(target=self._reap, name="stdio-reaper", daemon=True).start()

    def _reap(self) -> None:
        """When the bot's process exits, end what it started too (its process group). A
        helper it left running held its stdout open, so its exit went unseen (the bridge
        answered every later request itself and exited 0), and outlived the bridge (an
        attack pass)."""
        self.proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def handshake(self, deadline: float) -> bool:
        """Send ``hearts 1`` and wait for ``ok``; lines before it are reported and dropped.

        False if it does not come in time; :class:`ChildGone` if the bot exits first."""
        with self._ask:
            self._greeting = True
            try:
                line = self._exchange(GREETING, deadline)
                while line is not None and line != READY:
                    self.heard += 1
                    self.report(f"the bot wrote a line before {READY!r} (dropped): {line[:200]!r}")
                    line = self._exchange(None, deadline)
            finally:
                with self._state:
                    self._greeting = False
                    while not self._lines.empty():  # written right after "ok": answers nothing
                        extra = self._lines.get_nowait()
                        if extra is None:
                            self._lines.put(None)
                            break
                        self.report(f"the bot wrote a line that answers no request (dropped): {extra[:200]!r}")
            return line is not None

    def ask(self, line: str, deadline: float) -> str | None:
        """Send a request and read its answer until ``deadline`` (monotonic); None if late."""
        if not self._ask.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return None  # another match's request held the child until our time ran out
        try:
            return self._exchange(line, deadline)
        finally:
            self._ask.release()

    def send(self, line: str) -> None:
        """Write one line; :class:`ChildGone` if the child no longer reads."""
        assert self.proc.stdin is not None
        with self._write_lock:
            if self.gone:
                raise ChildGone("the bot has exited")
            if self.trace:
                self.trace("> " + line)
            try:
                self.proc.stdin.write(line + "\n")
                self.proc.stdin.flush()
            except (OSError, ValueError):
                raise ChildGone("the bot closed its stdin") from None

    def _exchange(self, line: str | None, deadline: float) -> str | None:
        with self._state:
            self._waiting = True
            self._requests += line is not None
        if line is not None:
            self.send(line)
        try:
            got = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            with self._state:
                try:
                    got = self._lines.get_nowait()  # it arrived just now
                except queue.Empty:
                    self._waiting = False
                    self._owed += 1
                    return None
        if got is None:
            self._lines.put(None)  # stays visible to every later ask
            raise ChildGone("the bot has exited")
        return got

    def _read(self) -> None:
        """Match the child's lines to requests. The lines of one read from the pipe are
        matched together, under one hold of the state lock: a line written together with an
        answer, after it ("play 2C\\nmore"), was written before the next request could go
        out, so it answers nothing, however late this thread gets to it (under load, the
        next request was sometimes out first, and took it as its answer). So does a line
        whose first characters were read before the request went out, though its newline
        came after: Python's ``print("play 2C\\nmore")`` is two writes, ``play 2C\\nmore``
        then ``\\n``, and on a loaded machine the next request fell between them."""
        stdout = self.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        lines = BoundedLines()
        begun: int | None = None  # requests written when the line in progress began
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            got = lines.feed(decode(chunk, final=not chunk))
            if not chunk:
                got += lines.end()
            begun = self._match(got, begun, lines.pending)
            if not chunk:
                break
        self.gone = True
        self._lines.put(None)
        self._on_gone()

    def _match(self, lines: list[str], begun: int | None, pending: bool) -> int | None:
        """Match the lines of one read; ``begun`` is when the first of them began, if in an
        earlier read. Returns when the line still in progress (``pending``) began."""
        notes = []
        with self._state:
            for i, line in enumerate(lines):
                before_its_request = i == 0 and begun is not None and begun < self._requests
                if self._owed:
                    self._owed -= 1
                    notes.append((line, "late, dropped"))
                elif self._greeting or (self._waiting and not before_its_request):
                    self._waiting = False
                    self._lines.put(line)
                    notes.append((line, ""))
                else:
                    notes.append((line, "answers no request, dropped"))
            if not pending:
                begun = None
            elif lines or begun is None:
                begun = self._requests
        for line, note in notes:
            if self.trace:
                self.trace("< " + line + (f"   ({note})" if note else ""))
            elif note.startswith("answers"):
                self.report(f"the bot wrote a line that answers no request (dropped): {line[:200]!r}")
        return begun

    def status(self, timeout: float = 1.0) -> str:
        """How the child ended, in words (waits up to ``timeout`` for it to exit)."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return "closed its stdout"
        return f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"

    def close(self, timeout: float = 3.0) -> int:
        """Close its stdin (end of the session), wait for it, kill it if it lingers. A
        write stuck on a bot that stopped reading holds the write lock: the bot is then killed
        at once, which ends that write (before, an attack pass, the bridge waited for the lock
        forever after its last match, deaf to Ctrl-C and SIGTERM)."""
        writable = self._write_lock.acquire(timeout=timeout)
        self.gone = True
        if writable:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            finally:
                self._write_lock.release()
        try:
            return self.proc.wait(timeout if writable else 0)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # its own group: the bot and anything it started
            except ProcessLookupError:
                pass
            return self.proc.wait()


# --- the strategy and the client ---------------------------------------------------------

class StdioStrategy(Strategy):
    """Asks the child for every decision; a bad or missing answer becomes the default."""

    name = "stdio"

    def __init__(self, child: Child, report: Callable[[str], None]) -> None:
        super().__init__()
        self.child = child
        self.report = report
        # The requests the bridge answered for the bot (a bad, late or missing answer, or
        # a bot that is gone), by (match id, request id); `BridgeClient` counts those of
        # them whose answer reached the server. Before, they were counted when made, and a
        # default made as the bridge stopped ("0 decisions, 1 answered by the bridge") was
        # never sent.
        self.made: set[tuple[str, str]] = set()

    def choose_pass(self, view: SeatView) -> Sequence[Card]:
        return self._decide(view)  # type: ignore[return-value]

    def choose_play(self, view: SeatView) -> Card:
        return self._decide(view)  # type: ignore[return-value]

    def choose_moon(self, view: SeatView) -> MoonOption:
        return self._decide(view)  # type: ignore[return-value]

    def _decide(self, view: SeatView) -> Decision:
        decision = current_decision.get()
        match_id, request = decision.match_id, decision.request
        limit_s = self.time_limit_s if request is None else decision.time_limit_s  # None: called outside a client
        deadline = time.monotonic() + limit_s
        kind = KINDS[view.phase]
        default_moon = best_moon_option(view)
        if request is not None and request.default_moon_option in convert.MOON_FROM_WIRE:
            default_moon = convert.MOON_FROM_WIRE[request.default_moon_option]  # the server's own default
        line = format_request(match_id, view, int(limit_s * 1000), default_moon)
        try:
            answer = self.child.ask(line, deadline)
        except ChildGone:  # the bridge is stopping; answer this one anyway
            self.made.add((match_id, request.request_id if request is not None else ""))
            return default_decision(kind, view.legal, view.rules.pass_count, default_moon)
        try:
            if answer is None:
                raise AnswerError(f"no {kind} answer within {int(limit_s * 1000)} ms")
            return parse_answer(answer, kind, view.legal, view.rules.pass_count)
        except AnswerError as exc:
            self.made.add((match_id, request.request_id if request is not None else ""))
            decision = default_decision(kind, view.legal, view.rules.pass_count, default_moon)
            why = str(exc) if answer is None else f"bad {kind} answer {answer[:200]!r}: {exc}"
            self.report(f"{match_id} deal {view.deal_number}: {why}; the bridge answered {describe(decision)}")
            return decision


class BridgeClient(BotClient):
    """The reference client, counting the answers the bridge made for its bot that were
    sent (each request once, however often it was sent again after a reconnect: a request
    leaves ``made`` when its answer is first sent, so neither set grows with a long run)."""

    def __init__(self, target: str, token: str, strategy: StdioStrategy, name: str, **kwargs: Any) -> None:
        super().__init__(target, token, strategy, name, **kwargs)
        self._bridge = strategy
        self.bridge_sent = 0

    async def _send(self, answer: bot_pb2.Answer, call: grpc.aio.StreamStreamCall, lock: asyncio.Lock) -> bool:
        sent = await super()._send(answer, call, lock)
        key = (answer.match_id, answer.request_id)
        if sent and key in self._bridge.made:
            self._bridge.made.discard(key)
            self.bridge_sent += 1
        return sent


# --- the command -----------------------------------------------------------------------

def _say(text: str) -> None:
    print(f"heartsbot stdio: {text}", file=sys.stderr, flush=True)


def _trace(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def run_bridge(command: Sequence[str], server: str, token: str, name: str, rulesets: Sequence[str] = (),
                     max_matches: int = 1, matches: int = 0, trace: bool = False,
                     ready_timeout_s: float = READY_TIMEOUT_S, tls: Tls | None = None) -> int:
    """Play until Ctrl-C, or ``matches`` matches (0: no limit): the bridge drains once the
    last of them has started and exits 0 when they have ended. A first Ctrl-C drains too, a
    second leaves at once (130). 1 if the bot exits (except with status 0 once the
    ``matches`` have ended) or never says ``ok``, 2 if it cannot be started, 3 if the server refuses the token, 4 if the server cannot be reached."""
    from .client import FatalError, UnreachableError

    loop = asyncio.get_running_loop()
    gone = asyncio.Event()

    def child_gone() -> None:  # called from the child's reader thread
        with contextlib.suppress(RuntimeError):  # the loop already closed: nobody waits any more
            loop.call_soon_threadsafe(gone.set)

    try:
        child = Child(command, on_gone=child_gone,
                      trace=_trace if trace else None, report=_say)
    except OSError as exc:
        _say(f"cannot run {command[0]!r}: {exc.strerror or exc}")
        return EXIT_USAGE
    try:
        ready = await _handshake(child, ready_timeout_s)
    except ChildGone:
        _say(f"the bot {await asyncio.to_thread(child.status)} before answering {GREETING!r} with {READY!r}")
        child.close()
        return EXIT_FAILED
    except asyncio.CancelledError:  # Ctrl-C while it starts
        child.close(0.5)
        raise
    if not ready:
        running = child.proc.poll() is None and not child.heard
        _say(f"the bot did not answer {GREETING!r} with {READY!r} within {ready_timeout_s:g} s"
             + (f" although it is running: {buffering_hint(command)}" if running else "") + "; stopping it")
        await asyncio.to_thread(child.close, 0.5)
        return EXIT_FAILED

    strategy = StdioStrategy(child, _say)
    informing: set[asyncio.Future[None]] = set()

    def on_end(match_id: str, seat: int, result: game_pb2.MatchResult) -> None:
        line = format_end(match_id, seat, result)

        def send() -> None:
            try:
                child.send(line)
            except ChildGone:
                pass

        future = loop.run_in_executor(None, send)  # a stuck child must not block the event loop
        informing.add(future)
        future.add_done_callback(informing.discard)

    # With --matches N the bridge drains once its Nth match has started: it is seated in no
    # new match, finishes the running ones, and leaves when the server ends the stream.
    client = BridgeClient(server, token, strategy, name, version=VERSION_PREFIX + __version__,
                       rulesets=rulesets, max_matches=max_matches, on_match_end=on_end, drain_after=matches, tls=tls)
    from .client import leave_on_signals

    left_at_once = leave_on_signals(client, _say)
    playing = loop.create_task(client.run())
    stopping = loop.create_task(gone.wait())
    announce = loop.create_task(_announce(client, child))
    code = EXIT_OK
    try:
        await asyncio.wait([playing, stopping], return_when=asyncio.FIRST_COMPLETED)
        if playing.done():
            try:
                playing.result()
            except FatalError as exc:
                _say(f"the server refused the bot: {exc}")
                code = EXIT_REFUSED
            except UnreachableError as exc:
                _say(str(exc))
                code = EXIT_UNREACHABLE
            if left_at_once():
                code = EXIT_INTERRUPTED
            if client.sent_away:
                _say(sent_away_message(client.sent_away, client.sent_away_cause))
        elif gone.is_set():
            client.stop()
            status = await asyncio.to_thread(child.status)
            if not (matches and client.stats.matches_ended >= matches and child.proc.returncode == 0):
                _say(f"the bot {status} after {client.stats.decisions} decisions; stopping")
                code = EXIT_FAILED
            # else: its --matches were all played and it exited cleanly on the last `end`
    finally:
        client.stop()
        for task in (playing, stopping, announce):
            task.cancel()
        await asyncio.gather(playing, stopping, announce, return_exceptions=True)
        if informing:
            await asyncio.wait(informing, timeout=2)
        await asyncio.to_thread(child.close)
        stats = client.stats
        results = stats.how_they_went()  # as `heartsbot play` ends (before, a newcomer's pass: counts only)
        earlier = f" (and {stats.earlier_ended} an earlier run played)" if stats.earlier_ended else ""
        _say(f"{stats.matches_ended} matches{earlier}, {stats.decisions} decisions, "
             f"{client.bridge_sent + stats.fallbacks} answered by the bridge" + (f"; {results}" if results else ""))
    return code


async def _handshake(child: Child, timeout_s: float) -> bool:
    """:meth:`Child.handshake`; a bot still running and silent after HINT_AFTER_S (or half
    the timeout) is told then what it most likely does wrong, not only at the timeout."""
    handshake = asyncio.ensure_future(asyncio.to_thread(child.handshake, time.monotonic() + timeout_s))
    hint_after = min(HINT_AFTER_S, timeout_s / 2)
    done, _ = await asyncio.wait({handshake}, timeout=hint_after)
    if not done and child.proc.poll() is None and not child.heard:
        _say(f"the bot has not answered {GREETING!r} with {READY!r} after {hint_after:g} s and is still "
             f"running: {buffering_hint(child.command)}")
    return await handshake


def buffering_hint(command: Sequence[str]) -> str:
    """Why a running bot says nothing, most likely: buffering. The fix for the program's
    own interpreter first when the command names one (mawk, python), then the rest.

    >>> buffering_hint(["python3", "bot.py"]).startswith("python3 buffers its output on a pipe")
    True
    >>> buffering_hint(["mawk", "-W", "interactive", "-f", "bot.awk"]).startswith("its output")
    True
    """
    program, words = _interpreter(command)
    specific = ""
    if program == "mawk" and "interactive" not in " ".join(words):
        specific = ("mawk reads a pipe in blocks and buffers its output: run it as "
                    "mawk -W interactive -f bot.awk (and fflush() after each print). ")
    elif program.startswith("python") and "-u" not in words[1:]:
        specific = f"{program} buffers its output on a pipe: run it with -u, or print(..., flush=True). "
    return specific + BUFFERING


def _interpreter(command: Sequence[str]) -> tuple[str, list[str]]:
    """The program that will read the bot's lines and its arguments: the command itself
    (``awk`` followed through its links: Debian's is mawk), or a script's ``#!`` line."""
    import shutil

    words = list(command[1:] if os.path.basename(command[0]) == "env" and len(command) > 1 else command)
    name = os.path.basename(words[0])
    if name not in ("awk", "mawk", "gawk") and not name.startswith("python"):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(shutil.which(words[0]) or words[0], encoding="utf-8") as script:
                first = script.readline(200)
            if first.startswith("#!") and first[2:].split():
                line = first[2:].split()
                line = line[1:] if os.path.basename(line[0]) == "env" and len(line) > 1 else line
                words, name = line + words[1:], os.path.basename(line[0])
    if name == "awk":
        name = os.path.basename(os.path.realpath(shutil.which("awk") or "awk"))
    return name, words


async def _announce(client: BotClient, child: Child) -> None:
    await client.connected.wait()
    _say(f"connected to {client.target} as {client.name}; bot: {' '.join(child.command)} (pid {child.proc.pid})")
