"""Every schema change of the daemon's database, numbered, in one list (see db.py)."""

from __future__ import annotations

from .db import Migration

MIGRATIONS: list[Migration] = [
    (1, [
        """CREATE TABLE IF NOT EXISTS matches (
            id {text} PRIMARY KEY,
            created_ms {bigint} NOT NULL,
            finished_ms {bigint},
            status {text} NOT NULL CHECK (status IN ('running', 'finished', 'aborted', 'cancelled')),
            reason {text} NOT NULL DEFAULT '',
            ruleset {text} NOT NULL,
            players {bigint} NOT NULL,
            seats {text} NOT NULL,
            seed {text} NOT NULL,
            deals_played {bigint} NOT NULL DEFAULT 0,
            totals {text} NOT NULL DEFAULT '[]',
            record {blob}
        )""",
        "CREATE INDEX IF NOT EXISTS matches_by_time ON matches (created_ms DESC)",
    ]),
    (2, [
        """CREATE TABLE IF NOT EXISTS bots (
            name {text} PRIMARY KEY,
            owner {text} NOT NULL,
            token_hash {text} NOT NULL UNIQUE,
            created_ms {bigint} NOT NULL,
            revoked_ms {bigint}
        )""",
        """CREATE TABLE IF NOT EXISTS results (
            match_id {text} NOT NULL,
            ruleset {text} NOT NULL,
            bot {text} NOT NULL,
            seat {bigint} NOT NULL,
            rank {bigint} NOT NULL,
            points {bigint} NOT NULL,
            deals {bigint} NOT NULL,
            finished_ms {bigint} NOT NULL,
            PRIMARY KEY (match_id, seat)
        )""",
        "CREATE INDEX IF NOT EXISTS results_in_order ON results (ruleset, finished_ms, match_id)",
    ]),
    (3, [
        # Provenance counts per bot and match, so the leaderboard can flag unreliable bots.
        "ALTER TABLE results ADD COLUMN decisions {bigint} NOT NULL DEFAULT 0",
        "ALTER TABLE results ADD COLUMN timeouts {bigint} NOT NULL DEFAULT 0",
        "ALTER TABLE results ADD COLUMN illegal {bigint} NOT NULL DEFAULT 0",
        "ALTER TABLE results ADD COLUMN disconnects {bigint} NOT NULL DEFAULT 0",
    ]),
    (4, [
        # Ratings kept up to date with each rated result (same transaction); `seq` orders
        # results exactly as they were rated, so a recompute replays them identically.
        "ALTER TABLE results ADD COLUMN seq {bigint} NOT NULL DEFAULT 0",
        """CREATE TABLE IF NOT EXISTS ratings (
            ruleset {text} NOT NULL,
            bot {text} NOT NULL,
            mu {real} NOT NULL,
            sigma {real} NOT NULL,
            matches {bigint} NOT NULL,
            PRIMARY KEY (ruleset, bot)
        )""",
    ]),
    (5, [
        "CREATE INDEX IF NOT EXISTS results_by_seq ON results (seq)",
        "CREATE INDEX IF NOT EXISTS results_by_bot ON results (bot, finished_ms)",
    ]),
    (6, [
        # The daemon that runs the match: a restart aborts only its own interrupted
        # matches, not those of another daemon sharing the store.
        "ALTER TABLE matches ADD COLUMN instance {text} NOT NULL DEFAULT 'heartsd'",
        "CREATE INDEX IF NOT EXISTS matches_running ON matches (status, instance)",
    ]),
    (7, [
        # Facts about the stored ladder data, e.g. which rating model made the ratings.
        """CREATE TABLE IF NOT EXISTS ladder_meta (
            name {text} PRIMARY KEY,
            value {text} NOT NULL
        )""",
    ]),
    (8, [
        # The shuffle ledger: who was dealt which shuffle (shuffles.py), written with the
        # running match, before any card is dealt. UNIQUE: a bot is dealt a shuffle at most
        # once, on every daemon sharing the store; `bot` is a seat's occupant (a bot's name,
        # or house:<strategy> for a house seat, whose rows only mark the shuffle as used).
        """CREATE TABLE IF NOT EXISTS dealt_shuffles (
            bot {text} NOT NULL,
            fingerprint {text} NOT NULL,
            match_id {text} NOT NULL,
            deal {bigint} NOT NULL,
            created_ms {bigint} NOT NULL,
            UNIQUE (bot, fingerprint)
        )""",
        "CREATE INDEX IF NOT EXISTS dealt_by_fingerprint ON dealt_shuffles (fingerprint)",
        "CREATE INDEX IF NOT EXISTS dealt_by_match ON dealt_shuffles (match_id)",
    ]),
    (9, [
        # Duplicate sets (duplicate.py): the tables of one set share its id; a set's
        # results are rated together, once every table of it is over.
        "ALTER TABLE matches ADD COLUMN set_id {text} NOT NULL DEFAULT ''",
        "CREATE INDEX IF NOT EXISTS matches_by_set ON matches (set_id)",
        "ALTER TABLE results ADD COLUMN set_id {text} NOT NULL DEFAULT ''",
    ]),
    (10, [
        # Tournaments (tournaments.py): the frozen roster and settings, and one row per
        # scheduled match; a row names the match that counts, so none counts twice.
        """CREATE TABLE IF NOT EXISTS tournaments (
            id {text} PRIMARY KEY,
            name {text} NOT NULL,
            created_ms {bigint} NOT NULL,
            finished_ms {bigint},
            status {text} NOT NULL CHECK (status IN ('running', 'paused', 'finished', 'cancelled')),
            reason {text} NOT NULL DEFAULT '',
            ruleset {text} NOT NULL,
            players {bigint} NOT NULL,
            rounds {bigint} NOT NULL,
            deals {bigint} NOT NULL,
            seed {text} NOT NULL,
            clock {text} NOT NULL,
            roster {text} NOT NULL,
            instance {text} NOT NULL,
            standings {text}
        )""",
        """CREATE TABLE IF NOT EXISTS tournament_tables (
            tournament_id {text} NOT NULL,
            round {bigint} NOT NULL,
            table_no {bigint} NOT NULL,
            seats {text} NOT NULL,
            status {text} NOT NULL CHECK (status IN ('pending', 'starting', 'running', 'finished')),
            match_id {text} NOT NULL DEFAULT '',
            attempts {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (tournament_id, round, table_no)
        )""",
    ]),
    (11, [
        # One live daemon per instance: the holder of each instance's lease and its last
        # heartbeat (PostgreSQL; on SQLite a lock file beside the database does it). See lease.py.
        """CREATE TABLE IF NOT EXISTS leases (
            instance {text} PRIMARY KEY,
            holder {text} NOT NULL,
            heartbeat_ms {bigint} NOT NULL
        )""",
    ]),
    (12, [
        # Auto-played decisions count against a bot's reliability like every other default.
        # -1: a result stored before this column, counted from its match record at start
        # (Ladder.count_auto_defaults).
        "ALTER TABLE results ADD COLUMN auto {bigint} NOT NULL DEFAULT -1",
    ]),
    (13, [
        # A match's events as a spectator may see them once it is over (every hand shown),
        # written with its result: WatchMatch streams a finished match from here in small
        # windows instead of parsing its whole record (stored_events.py).
        "ALTER TABLE matches ADD COLUMN events {blob}",
    ]),
    (14, [
        # A match's MatchResult alone (serialized), written with its record: the match list
        # reads it instead of loading and parsing each whole record (~30 KB a match; 16
        # listings of 1,000 at once took 1.9 GB and stalled the loop). Filled from the
        # records of the rows stored before it as the store is migrated (Store.fill_results).
        "ALTER TABLE matches ADD COLUMN result {blob}",
    ]),
    (15, [
        # A tournament's shuffle key (hex; tournaments.table_seed): its first-attempt shuffle
        # seeds are HMAC-SHA256 of (seed, round, table) keyed with it, so that an organiser's
        # guessable seed gives no hand away. NULL for a tournament created before: its shuffles
        # derive from its seed alone, as they did when it started.
        "ALTER TABLE tournaments ADD COLUMN shuffle_key {text}",
    ]),
    (16, [
        # The matches over but without a result (Store.fill_results), normally none: the fill
        # runs at every start through this index. Before, it ran only as the column arrived,
        # and a daemon killed during that fill left the rest without a result for good.
        "CREATE INDEX IF NOT EXISTS matches_without_result ON matches (id) "
        "WHERE result IS NULL AND status <> 'running'",
    ]),
    (17, [
        # The match lists in their order (Store.list: newest first, by time then id), with
        # a status or without. Before, the lobby's recent matches sorted every finished
        # match of the store on each poll (~20 ms at 511 matches, growing with the history).
        "CREATE INDEX IF NOT EXISTS matches_listed ON matches (status, created_ms DESC, id DESC)",
        "CREATE INDEX IF NOT EXISTS matches_in_order ON matches (created_ms DESC, id DESC)",
        "DROP INDEX IF EXISTS matches_by_time",
    ]),
    (18, [
        # A ruleset's results in rated order: a bot page's rating history goes on from the
        # last one built with the results rated since (Ladder.extend_history), and asks for
        # the newest seq first. Before, both scanned every result of the ruleset.
        "CREATE INDEX IF NOT EXISTS results_by_ruleset_seq ON results (ruleset, seq)",
    ]),
    (19, [
        # One bot's latest results in a ruleset (Ladder.history: GetBotProfile, a bot page),
        # in their order. Without it SQLite walked the ruleset's results newest first through
        # results_by_ruleset_seq until it had the page: every result of the ruleset for a bot
        # with fewer (a new one), 27 ms a public call at 80,000 results (an audit).
        "CREATE INDEX IF NOT EXISTS results_by_bot_ruleset_seq ON results (bot, ruleset, seq, match_id)",
    ]),
    (20, [
        # The tournament table a match belongs to (TournamentStore._in_play: which tournaments
        # have a match running, from the running matches).
        "CREATE INDEX IF NOT EXISTS tournament_tables_by_match ON tournament_tables (match_id)",
    ]),
    (21, [
        # The tournament a match is played for, written with its row in the transaction that
        # checks the tournament still runs (Store.start): its seed stays hidden while the
        # match deals (TournamentStore._in_play), whenever a cancel from another daemon lands.
        "ALTER TABLE matches ADD COLUMN tournament_id {text} NOT NULL DEFAULT ''",
    ]),
]
