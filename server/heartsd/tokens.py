"""Who a bot token belongs to, answered from memory: configured and ladder tokens.

Anyone can present a token (every bot stream and admin call does), so a token check
must never wait for the database on the event loop: a writer holding SQLite's lock, or
a slow PostgreSQL, would stall every running match. The registry keeps the tokens'
SHA-256 hashes in memory. A worker thread re-reads the ladder's ``bots`` table every
``interval_s`` (``heartsd ladder add-bot|revoke|rotate`` run in another process) over
a database connection of its own, so a stalled write of this daemon does not hold it
up either, and hands each new view to the event loop.

A session remembers the hash of the token it opened with; :meth:`TokenRegistry.state`
says what became of it. ``REVOKED`` (the bot was revoked or removed) ends the session at
once; ``ROTATED`` (the bot has a new token) is a separate state so that an older
session may be treated differently from a revoked one (see ``Arena.token_rotated``).

>>> registry = TokenRegistry({"alice": "secret-alice"})
>>> registry.lookup("secret-alice") == ("alice", token_hash("secret-alice"))
True
>>> registry.lookup("guess") is None
True
>>> registry.state("alice", token_hash("secret-alice")).name
'ACTIVE'
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import structlog

from .db import Database
from .spelling import spelling_key

log = structlog.get_logger("heartsd.tokens")
REFRESH_S = 1.0  # how stale a revocation may be
MIN_GAP_S = 0.01  # reads asked for (a bot connecting, a match seating bots) are at least this far apart
FAILURE_LOG_EVERY_S = 30.0


def token_hash(token: str) -> str:
    """The hex SHA-256 of a token: how the ladder stores it, and how sessions remember it."""
    return hashlib.sha256(token.encode()).hexdigest()


class TokenState(enum.Enum):
    ACTIVE = "active"
    ROTATED = "rotated"  # the bot has a newer token; this one no longer opens sessions
    REVOKED = "revoked"  # the bot was revoked (or removed) by an organiser
    UNKNOWN = "unknown"  # a hash the registry never saw (a session made in process)


@dataclass(frozen=True)
class LadderView:
    """The ladder's ``bots`` table as last read: active token hash -> bot, and each bot's
    current hash and whether it is revoked."""

    by_hash: Mapping[str, str]
    bots: Mapping[str, tuple[str, bool]]  # bot -> (current token hash, revoked)
    read_at: float  # time.monotonic() when the read began

    @classmethod
    def read(cls, db: Database) -> LadderView:
        began = time.monotonic()
        rows = db.query("SELECT name, token_hash, revoked_ms FROM bots")
        bots = {name: (hashed, revoked is not None) for name, hashed, revoked in rows}
        return cls({h: name for name, (h, revoked) in bots.items() if not revoked}, bots, began)


EMPTY = LadderView({}, {}, float("-inf"))


class TokenRegistry:
    """Configured tokens (fixed for the daemon's life) and the ladder's (refreshed)."""

    def __init__(self, configured: Mapping[str, str], url: str | None = None, shared: Database | None = None,
                 interval_s: float = REFRESH_S) -> None:
        """``url``: the store to read ladder bots from (None: configured tokens only);
        ``shared``: the store's own connection, used only when a second one cannot be
        opened on the same data (an in-memory SQLite database)."""
        self._configured = {token_hash(t): name for name, t in configured.items()}
        self.configured_names = frozenset(configured)
        self._url = url
        self._shared = shared
        self._interval_s = interval_s
        self.view = EMPTY
        self.on_change: Callable[[], None] | None = None  # called on the loop when the view changed
        self.changes = 0  # views read whose tokens differ from the one before (the first: always)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._waiters: list[tuple[float, asyncio.Future[None]]] = []
        self._failed_at = float("-inf")

    # -- answers, from memory ---------------------------------------------------------

    def lookup(self, token: str) -> tuple[str, str] | None:
        """(bot, token hash) for a token that opens sessions now, else None. Configured
        tokens win over ladder ones. Hashing first means no comparison runs over the secret."""
        hashed = token_hash(token)
        bot = self._configured.get(hashed)
        if bot is None:
            bot = self.view.by_hash.get(hashed)
            if bot in self.configured_names:  # shadowed (:meth:`shadowed`): the configured token alone is the bot
                return None
        return (bot, hashed) if bot is not None else None

    def known_bot(self, bot: str) -> bool:
        """Whether a token of this daemon names ``bot`` (configured, or registered and not revoked)."""
        return bot in self.configured_names or bot in self.view.by_hash.values()

    def known_names(self) -> set[str]:
        """Every bot a token of this daemon names (configured, or registered and not revoked)."""
        return {*self.configured_names, *self.view.by_hash.values()}

    def shadowed(self, token: str) -> str | None:
        """The name of a configured bot that ``token``'s ladder registration also bears, if
        so: such a token opens no session. Before (an organiser's pass), `heartsd ladder
        add-bot bob` beside a configured bob was accepted, and its token replaced the real
        bob's stream and made its ladder owner bob's."""
        bot = self.view.by_hash.get(token_hash(token))
        return bot if bot in self.configured_names else None

    def shadowed_registrations(self) -> list[str]:
        """The ladder registrations (not revoked) under a configured bot's name, sorted."""
        return sorted(name for name in self.view.by_hash.values() if name in self.configured_names)

    def case_twins(self) -> list[tuple[str, str]]:
        """(configured bot, ladder registration) pairs whose names differ only in case, sorted:
        on a leaderboard or a roster one passes for the other (``heartsd ladder add-bot``
        refuses such a pair among registrations; a configured name is not its to check)."""
        configured = {spelling_key(name): name for name in self.configured_names}
        return sorted({(configured[spelling_key(name)], name) for name in self.view.by_hash.values()
                       if spelling_key(name) in configured and name not in self.configured_names})

    def is_configured(self, hashed: str) -> bool:
        return hashed in self._configured

    def state(self, bot: str, hashed: str) -> TokenState:
        """What became of the token ``bot`` opened a session with."""
        if self._configured.get(hashed) == bot:
            return TokenState.ACTIVE
        if not hashed or self.view is EMPTY:
            return TokenState.UNKNOWN
        current = self.view.bots.get(bot)
        if current is None:
            return TokenState.REVOKED  # its row is gone
        current_hash, revoked = current
        if revoked:
            return TokenState.REVOKED
        return TokenState.ACTIVE if current_hash == hashed else TokenState.ROTATED

    async def refreshed(self, since: float | None = None, timeout_s: float = 5.0) -> bool:
        """Wait for a view read that began at ``since`` (``time.monotonic()``; default: now)
        or later: a token unknown so far may just have been added, a match about to seat a
        bot wants its revocation seen. Requests that arrive together share one read. False
        if none came within ``timeout_s`` (the store does not answer)."""
        if self._url is None and self._shared is None:
            return True
        if self._stop.is_set():
            return False
        self._ensure_started()
        asked = time.monotonic() if since is None else since
        if self.view.read_at >= asked:
            return True
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((asked, future))
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
            return True
        except asyncio.TimeoutError:
            return False

    # -- the refresh thread ---------------------------------------------------------------

    def _ensure_started(self) -> None:
        if self._thread is None and (self._url is not None or self._shared is not None):
            self._loop = asyncio.get_running_loop()
            self._thread = threading.Thread(target=self._refresh_forever, name="heartsd-tokens", daemon=True)
            self._thread.start()

    def start(self) -> None:
        """Begin refreshing (from a running event loop); lookups also start it."""
        self._ensure_started()

    def stop(self) -> None:
        """Stop refreshing (without waiting: the thread may be inside a slow read; it closes
        its connection when that returns). Lookups keep answering from the last view."""
        self._stop.set()
        self._wake.set()

    def _refresh_forever(self) -> None:
        db = self._shared
        own = None
        try:
            while not self._stop.is_set():
                self._wake.clear()  # before the read: a request arriving during it gets the next one
                try:
                    if db is None:
                        db = own = Database.open(self._url)  # type: ignore[arg-type]
                    view = LadderView.read(db)
                except Exception:
                    view = None
                    self._failed(db)
                    if own is not None:
                        own.close()
                        db = own = None
                if view is not None:
                    self._publish(view)
                self._wake.wait(self._interval_s)
                self._stop.wait(MIN_GAP_S)
        finally:
            if own is not None:
                own.close()

    def _failed(self, db: Database | None) -> None:
        now = time.monotonic()
        if now - self._failed_at >= FAILURE_LOG_EVERY_S:
            self._failed_at = now
            log.warning("cannot read the ladder's tokens; keeping the last view", exc_info=True)

    def _publish(self, view: LadderView) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._install, view)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _install(self, view: LadderView) -> None:
        """On the loop: take the new view, wake who waited for it, report a change."""
        changed = view.bots != self.view.bots
        if changed or self.view is EMPTY:  # the first read counts as a change, whatever it holds
            self.changes += 1
        self.view = view
        still = []
        for asked, future in self._waiters:
            if view.read_at >= asked:
                if not future.done():
                    future.set_result(None)
            else:
                still.append((asked, future))
        self._waiters = still
        if still:
            self._wake.set()
        if changed and self.on_change is not None:
            self.on_change()
