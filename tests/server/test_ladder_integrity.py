"""The ladder's integrity, as an organiser with prize money checks it from outside: the
ratings against the stored matches, and what a bot can do to a result it does not like."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from heartsbot.proto import bot_pb2, game_pb2
from heartsd.matchmaker import LadderSettings, Matchmaker
from heartsd.store import Store

from .harness import Bot, first_legal, ladder_bots, play_rated_match, run, running_daemon

HEARTSD = [sys.executable, "-m", "heartsd.cli"]


def play_rated_set(tmp_path) -> list[str]:  # type: ignore[no-untyped-def]
    """A daemon on ``tmp_path``/heartsd.db plays one rated duplicate set (eight ladder bots
    of eight owners, the matchmaker's first tick, one deal a table) to its end and stops;
    the ids of the set's tables."""

    async def scenario() -> list[str]:
        async with running_daemon(tmp_path) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, [f"s{i}" for i in range(8)])
            maker = Matchmaker(daemon.arena, LadderSettings(deals=1), seed=3)
            maker._refresh()
            tables = await maker.tick()
            for match_id in tables:
                await daemon.wait_finished(match_id)
            for b in bots:
                await b.close()
            return tables

    tables = run(scenario())
    assert len(tables) == 2, "eight bots of eight owners make one set of two tables"
    return tables


def _heartsd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HEARTSD, *args], capture_output=True, text=True, timeout=60)


def _drop_result_row(db: str, match_id: str) -> str:
    """Delete the ladder's row of the last-placed bot of ``match_id`` (a loss erased); its bot."""
    store = Store(db)
    try:
        with store.db.transaction() as tx:
            bot, seat = tx.query("SELECT bot, seat FROM results WHERE match_id = ? ORDER BY rank DESC, seat LIMIT 1",
                                 (match_id,))[0]
            tx.execute("DELETE FROM results WHERE match_id = ? AND seat = ?", (match_id, seat))
        return str(bot)
    finally:
        store.close()


def _ratings(db: str) -> dict[str, tuple[float, float, int]]:
    store = Store(db)
    try:
        return store.ladder.stored_ratings("standard")
    finally:
        store.close()


def _missing_rows_are_named_and_nothing_is_rewritten(db: str, match_id: str) -> None:
    before = _ratings(db)
    for _ in range(2):  # a second run must not find the rewritten ratings "identical"
        out = _heartsd("ladder", "recompute", "--db", db)
        assert out.returncode == 1, out.stdout + out.stderr
        assert "Traceback" not in out.stderr, out.stderr
        assert "no rating was rewritten" in out.stdout and match_id in out.stdout, out.stdout
    assert _ratings(db) == before
    verify = _heartsd("replay", "verify", "--db", db, match_id)
    assert verify.returncode == 1 and f"{match_id}: FAILED" in verify.stdout, verify.stdout + verify.stderr
    assert "seat" in verify.stdout, verify.stdout


def test_a_rated_match_missing_a_result_row_is_refused_not_rated_without_it(tmp_path):
    """Before: with the last-placed bot's row of a rated match deleted, `ladder recompute`
    said DIFFERENT and rewrote every rating from the three rows left (the loss erased, as
    if the match had been played by three), a second run said "identical", and `replay
    verify` said OK. A rated match's rows must cover every seat."""
    match_id = play_rated_match(tmp_path, ["g1", "g2", "g3", "g4"], deals=1)
    db = str(tmp_path / "heartsd.db")
    assert _heartsd("ladder", "recompute", "--db", db).returncode == 0
    _drop_result_row(db, match_id)
    _missing_rows_are_named_and_nothing_is_rewritten(db, match_id)


def test_a_rated_set_missing_a_result_row_is_refused_not_a_traceback(tmp_path):
    """Before: with one row of a rated set's table deleted, the hand that bot held had one
    holder left, and `ladder recompute` (and every replay of the ratings: a daemon's start
    after a model change, a bot's page) ended in openskill's ValueError ("at least 2
    teams"), while `replay verify` said OK."""
    tables = play_rated_set(tmp_path)
    db = str(tmp_path / "heartsd.db")
    assert _heartsd("ladder", "recompute", "--db", db).returncode == 0
    dropped = _drop_result_row(db, tables[0])
    _missing_rows_are_named_and_nothing_is_rewritten(db, tables[0])
    store = Store(db)
    try:  # the replay behind a bot's page and a start's rebuild rates what is left, without a traceback
        assert set(store.ladder.replay_ratings("standard")) == {f"s{i}" for i in range(8)} - {dropped}
    finally:
        store.close()


def test_a_finished_ladder_set_without_its_results_is_refused_not_rated_without_it(tmp_path):
    """Before: with every row of a finished set deleted (its eight bots' results gone),
    `ladder recompute` rewrote the ratings without it and a second run said "identical".
    Outside tournaments every set is the ladder's, rated once its tables all finished, so
    the store says such a set must have its rows."""
    tables = play_rated_set(tmp_path)
    db = str(tmp_path / "heartsd.db")
    store = Store(db)
    try:
        before = store.ladder.stored_ratings("standard")
        with store.db.transaction() as tx:
            for match_id in tables:
                tx.execute("DELETE FROM results WHERE match_id = ?", (match_id,))
    finally:
        store.close()
    for _ in range(2):
        out = _heartsd("ladder", "recompute", "--db", db)
        assert out.returncode == 1 and "no rating was rewritten" in out.stdout, out.stdout + out.stderr
        assert "every table finished" in out.stdout, out.stdout
    assert _ratings(db) == before

def test_ladder_rows_of_a_match_that_did_not_finish_fail_verify_not_a_traceback(tmp_path):
    """Before: rows in the ladder's results for a match that was cancelled (or aborted),
    whose result has no ranks, made `replay verify` end in an IndexError traceback instead
    of naming the match; only a finished match is ever rated."""
    names = ["c1", "c2", "c3", "c4"]

    async def scenario() -> str:
        async with running_daemon(tmp_path) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, names)
            for b in bots:
                b.policy = lambda request, bot: None  # thinking: the match waits for them
            match_id = await daemon.create_match(names, deals=1, rated=True)
            daemon.arena.cancel(match_id, "test: cancelled")
            await daemon.wait_finished(match_id)
            for b in bots:
                await b.close()
            return match_id

    match_id = run(scenario())
    db = str(tmp_path / "heartsd.db")
    store = Store(db)
    try:
        assert store.get(match_id).status == "cancelled" and not store.ladder_results(match_id)
        with store.db.transaction() as tx:  # a win given for it, by hand
            for seat, bot in enumerate(names):
                tx.execute("INSERT INTO results (match_id, ruleset, bot, seat, rank, points, deals, finished_ms, seq) "
                           "VALUES (?, 'standard', ?, ?, ?, 0, 1, 0, 1)", (match_id, bot, seat, seat + 1))
    finally:
        store.close()
    verify = _heartsd("replay", "verify", "--db", db, match_id)
    assert "Traceback" not in verify.stderr, verify.stderr
    assert verify.returncode == 1 and f"{match_id}: FAILED" in verify.stdout and "cancelled" in verify.stdout, \
        verify.stdout
    recompute = _heartsd("ladder", "recompute", "--db", db)
    assert recompute.returncode == 1 and "no rating was rewritten" in recompute.stdout, recompute.stdout


def _counted_match_at_a_shutdown(tmp_path, answers_the_notice: bool,  # type: ignore[no-untyped-def]
                                 tournament: bool = False) -> tuple[str, list[tuple[str, int, int, int]]]:
    """A one-deal match that counts (rated, or a ``tournament``'s table) whose first bot holds
    its last card (its clock is long) when the daemon begins to shut down, and then plays it
    at once (``answers_the_notice``), as a bot ahead would, or thinks on, as a bot behind
    would: the match's stored status and its ladder rows."""
    names = ["h1", "h2", "h3", "h4"]
    tmp_path.mkdir()
    held: list[bot_pb2.DecisionRequest] = []
    holding = asyncio.Event()
    matches: list[str] = []

    def holds_its_last_card(request: bot_pb2.DecisionRequest, bot: Bot) -> bot_pb2.Answer | None:
        if request.kind == game_pb2.DECISION_KIND_PLAY and len(request.hand) == 1:
            held.append(request)
            holding.set()
            return None
        return first_legal(request, bot)

    class Holder(Bot):
        async def _on_update(self, update: bot_pb2.MatchUpdate) -> None:
            matches.append(update.match_id)
            if answers_the_notice and held and any(e.HasField("notice") and e.notice.seat == -1
                                                    for e in update.events):
                answer = first_legal(held.pop(), self)
                answer.match_id = update.match_id
                self.send(bot_pb2.PlayRequest(answer=answer))
            await super()._on_update(update)

    async def scenario() -> None:
        async with running_daemon(tmp_path, decision_ms=60_000) as daemon:
            ladder = daemon.arena.store.ladder
            tokens = {n: ladder.add_bot(n, f"owner-{n}") for n in names}
            await Holder(daemon, names[0], holds_its_last_card, token=tokens[names[0]]).start()
            for n in names[1:]:
                await Bot(daemon, n, first_legal, token=tokens[n]).start()
            if tournament:
                await daemon.arena.tournaments.create("cup", names, "standard", 4, 1, 1, None,
                                                      game_pb2.ClockSettings())
            else:
                await daemon.create_match(names, deals=1, rated=True)
            await asyncio.wait_for(holding.wait(), 30)
            # leaving the block shuts the daemon down

    run(scenario())
    store = Store(str(tmp_path / "heartsd.db"))
    try:
        return store.get(matches[0]).status, store.ladder_results(matches[0])
    finally:
        store.close()


def test_a_bot_cannot_void_its_rated_match_by_thinking_through_a_shutdown(tmp_path):
    """Before: a shutdown let running matches finish within its grace (10 s by default),
    else aborted them, unrated, and told every seat so. A bot behind at the end of a rated
    match had only to think (within its clock, no default counted) for its loss to vanish,
    and with it its whole duplicate set; a bot ahead, answering at once, was rated. Now a
    rated match running at a shutdown ends at once, aborted and unrated, whatever its bots
    do, as a crash would end it."""
    ahead = _counted_match_at_a_shutdown(tmp_path / "ahead", answers_the_notice=True)
    behind = _counted_match_at_a_shutdown(tmp_path / "behind", answers_the_notice=False)
    assert ahead == behind == ("aborted", [])


def test_a_bot_cannot_have_its_tournament_table_dealt_again_by_thinking_through_a_shutdown(tmp_path):
    """The same for a tournament's table: one a shutdown aborts is played again on fresh
    shuffles at the next start, so a bot behind that thought through the grace got its table
    dealt again, while one answering at once had its loss counted. Now such a table ends at
    once too, whatever its bots do, and is played again."""
    ahead = _counted_match_at_a_shutdown(tmp_path / "ahead", answers_the_notice=True, tournament=True)
    behind = _counted_match_at_a_shutdown(tmp_path / "behind", answers_the_notice=False, tournament=True)
    assert ahead == behind == ("aborted", [])


def test_a_bots_points_per_deal_interval_is_a_95_percent_interval_with_few_matches(tmp_path):
    """The leaderboard's points per deal comes with "the half-width of its 95% confidence
    interval" over the bot's rated matches. Before, that was 1.96 standard errors whatever
    the number of matches: the normal's quantile, right for many matches, while with two it
    is Student's t with one degree of freedom, 12.7 (so the interval shown was 6.5 times too
    narrow, and still 1.6 times with four): an organiser recomputing it from the stored
    matches got another number, and two new bots looked separated when nothing says so."""
    from heartsbot.proto import ladder_pb2, ladder_pb2_grpc

    names = ["t1", "t2", "t3", "t4"]
    quantile = {2: 12.706, 3: 4.303}  # Student's t, 97.5%, 1 and 2 degrees of freedom

    async def scenario() -> tuple[dict[str, float], list[list[int]]]:
        async with running_daemon(tmp_path) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, names)
            played = []
            for _ in range(3):
                match_id = await daemon.create_match(names, deals=1, rated=True)
                await bots[0].wait_ended(match_id)
                played.append(list(daemon.stored(match_id).totals))
            async with daemon.channel() as channel:
                board = await ladder_pb2_grpc.LadderServiceStub(channel).GetLeaderboard(
                    ladder_pb2.GetLeaderboardRequest())
            for b in bots:
                await b.close()
            return {e.bot: e.points_per_deal_ci for e in board.entries}, played

    shown, played = run(scenario())
    import statistics

    for seat, bot in enumerate(names):
        points = [totals[seat] for totals in played]  # one deal a match: points per deal
        expected = quantile[len(points)] * statistics.stdev(points) / len(points) ** 0.5
        assert abs(shown[bot] - expected) < 1e-3 * max(1.0, expected), (bot, points, shown[bot], expected)


def test_incomplete_results_are_named_alike_on_sqlite_and_postgresql(store_url):
    """Ladder.incomplete_results on both stores: whole results name nothing; a match rated
    without a seat, a set rated without a table, and one rated order holding two matches
    are each named."""
    from heartsd.store import NewMatch

    store = Store(store_url)
    try:
        ladder = store.ladder
        bots = [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]]
        store.start([NewMatch("p1", "standard", 4, bots[0], 1), NewMatch("p2", "standard", 4, bots[1], 2),
                      NewMatch("t1", "standard", 4, bots[0], 3, set_id="s1"),
                      NewMatch("t2", "standard", 4, bots[1], 3, set_id="s1")])
        with store.db.transaction() as tx:
            for match_id, seated in (("p1", bots[0]), ("p2", bots[1])):
                ladder.record_result(tx, match_id, "standard", seated, [1, 2, 3, 4], [1, 2, 3, 20], 1)
            ladder.record_set(tx, "s1", "standard", [(m, seated, [1, 2, 3, 4], [1, 2, 3, 20], 1, [(13, 0, 0, 0, 0)] * 4)
                                                     for m, seated in (("t1", bots[0]), ("t2", bots[1]))])
        assert ladder.incomplete_results("standard") == []
        with store.db.transaction() as tx:
            tx.execute("DELETE FROM results WHERE match_id = 'p1' AND seat = 3")
            tx.execute("DELETE FROM results WHERE match_id = 't2'")
            tx.execute("UPDATE results SET seq = (SELECT seq FROM results WHERE match_id = 'p1' LIMIT 1) "
                       "WHERE match_id = 'p2'")
        named = " | ".join(ladder.incomplete_results("standard"))
        assert "p1: rated with the results of seat(s) [0, 1, 2] of its 4" in named, named
        assert "set s1: rated without the results of its table(s) t2" in named, named
        assert "holds the results of 2 matches (p1, p2)" in named, named
    finally:
        store.close()


def test_the_leaderboard_counts_exactly_the_matches_the_store_says_were_rated(tmp_path):
    """An organiser's recount from the stored matches alone: every finished plain table,
    and every table of a set whose tables all finished, is rated once (its seats' rows, in
    one rated order); no aborted or cancelled table is, nor the finished table of a set
    whose other table was cancelled; and each bot's matches, decisions and defaults on the
    leaderboard are those of its rated tables' records, a bot that stopped answering included."""
    from collections import Counter

    from heartsbot.proto import ladder_pb2, ladder_pb2_grpc

    names = [f"r{i}" for i in range(9)]

    async def scenario() -> dict[str, ladder_pb2.LeaderboardEntry]:
        async with running_daemon(tmp_path, grace_ms=200, decision_ms=300, bank_ms=300) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, names)
            playing = [b.policy for b in bots]
            hold = {"all": False, "silent": set()}  # bots thinking for ever: all of them, or these

            def held(i: int):  # type: ignore[no-untyped-def]
                def policy(request: bot_pb2.DecisionRequest, bot: Bot) -> bot_pb2.Answer | None:
                    return None if hold["all"] or bot.name in hold["silent"] else playing[i](request, bot)
                return policy

            for i, b in enumerate(bots):
                b.policy = held(i)
            maker = Matchmaker(daemon.arena, LadderSettings(deals=2, set_wait_s=0.0, repeat_wait_s=0.0), seed=7)
            left_seated = False  # r0 played a rated match after it went silent
            for tick in range(30):
                hold["all"] = tick == 1  # its set waits on its bots, so that a table is cancelled while it runs
                if tick == 3:
                    hold["silent"].add("r0")  # a bot that stopped answering: defaulted, and its matches still count
                maker._refresh()
                started = await maker.tick()
                if tick == 1:
                    daemon.arena.cancel(started[0], "test: cancelled")  # its set counts for nobody
                    hold["all"] = False
                left_seated |= tick >= 3 and any("r0" in daemon.stored(m).seats for m in started)
                for match_id in started:
                    await daemon.wait_finished(match_id)
                if tick >= 4 and left_seated:
                    break
            async with daemon.channel() as channel:
                board = await ladder_pb2_grpc.LadderServiceStub(channel).GetLeaderboard(
                    ladder_pb2.GetLeaderboardRequest())
            for b in bots:
                await b.close()
            return {e.bot: e for e in board.entries}

    board = run(scenario())
    store = Store(str(tmp_path / "heartsd.db"))
    try:
        listed = store.list(limit=1000)
        sets: dict[str, list[str]] = {}
        for m in listed:
            sets.setdefault(m.set_id, []).append(m.status)
        rated = [store.get(m.id) for m in listed
                 if m.status == "finished" and (not m.set_id or set(sets[m.set_id]) == {"finished"})]
        assert any(m.status == "cancelled" for m in listed) and any(set(s) == {"cancelled", "finished"}
                                                                     for s in sets.values())
        rows = store.db.query("SELECT match_id, COUNT(*), COUNT(DISTINCT seq) FROM results GROUP BY match_id")
        assert {r[0]: (r[1], r[2]) for r in rows} == {m.id: (4, 1) for m in rated}
        matches: Counter[str] = Counter()
        decisions: Counter[str] = Counter()
        defaults: Counter[str] = Counter()
        for m in rated:
            seats = [s.name for s in m.record.seats]
            matches.update(seats)
            for d in m.record.decisions:
                decisions[seats[d.seat]] += 1
                defaults[seats[d.seat]] += d.provenance not in (game_pb2.PROVENANCE_BOT,)
        assert {b: (e.matches, e.decisions, e.timeouts + e.illegal_defaults + e.disconnect_defaults + e.auto_defaults)
                for b, e in board.items()} == {b: (matches[b], decisions[b], defaults[b]) for b in matches}
        assert defaults["r0"] > 0, "the bot that stopped answering was defaulted in a rated match"
    finally:
        store.close()


def test_bots_of_equal_rating_share_their_rank_on_the_leaderboard_and_their_profiles(tmp_path):
    """Before (a ladder pass), ranks were positions in the leaderboard's order: of two bots
    whose ratings are equal, as the co-winners of their first match are, the one whose name
    sorts first was ranked above the other. Now they share the rank, and the next counts both
    ("1, 1, 3"), on GetLeaderboard and GetBotProfile alike. A rated match draws its own seed,
    so first matches are played on fresh stores until one ties two bots (most one-deal deals
    do: at least two of the four take no point in ~60% of them)."""
    from heartsbot.proto import ladder_pb2, ladder_pb2_grpc

    names = ["zed", "amy", "kim", "bo"]

    async def first_match(folder) -> tuple[list[int], list[tuple[str, int, float]], dict[str, int]]:  # type: ignore[no-untyped-def]
        async with running_daemon(folder) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, names)
            match_id = await daemon.create_match(names, deals=1, rated=True)
            await bots[0].wait_ended(match_id)
            async with daemon.channel() as channel:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)
                board = await stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest())
                profiles = {n: (await stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot=n))).standing.rank
                            for n in names}
            for b in bots:
                await b.close()
            return list(daemon.stored(match_id).result.ranks), [
                (e.bot, e.rank, e.conservative) for e in board.entries], profiles

    for attempt in range(40):
        folder = tmp_path / str(attempt)
        folder.mkdir()
        ranks, entries, profiles = run(first_match(folder))
        if len(set(ranks)) < len(ranks):
            break
    assert len(set(ranks)) < len(ranks), "no first match tied two bots"
    assert len({e[2] for e in entries}) < len(entries), entries  # tied ranks, equal ratings
    for i, (bot, rank, conservative) in enumerate(entries):
        better = [e for e in entries[:i] if e[2] > conservative]
        assert rank == len(better) + 1, entries  # before: i + 1
        assert profiles[bot] == rank, (profiles, entries)


def test_a_revoked_bot_keeps_its_rank_on_the_leaderboard_marked_revoked_until_rotated(tmp_path):
    """Before (a ladder pass), a bot whose token the organiser revoked (put out of the ladder)
    stayed on the leaderboard and its profile as any other, with nothing to say it no longer
    plays. It keeps its rating and rank (`ladder rotate` lets it back with them), marked
    ``revoked``: the leaderboard, kept until a new result, is rebuilt after a revocation
    too (before, it was not until the next result)."""
    from heartsbot.proto import ladder_pb2, ladder_pb2_grpc

    names = ["r1", "r2", "r3", "r4"]

    async def scenario() -> list[tuple[dict[str, bool], bool]]:
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            bots = await ladder_bots(daemon, ladder, names)
            match_id = await daemon.create_match(names, deals=1, rated=True)
            await bots[0].wait_ended(match_id)
            for b in bots:
                await b.close()
            seen = []
            async with daemon.channel() as channel:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)
                for change, revoked in ((lambda: None, False), (lambda: ladder.revoke("r2"), True),
                                        (lambda: ladder.rotate("r2"), False)):
                    change()
                    for _ in range(100):  # rebuilt at most every LADDER_STANDINGS_SPACING of its build time
                        board = await stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest())
                        if {e.bot: e.revoked for e in board.entries}["r2"] == revoked:
                            break
                        await asyncio.sleep(0.05)
                    profile = await stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="r2"))
                    seen.append(({e.bot: e.revoked for e in board.entries}, profile.standing.revoked))
            return seen

    before, revoked, rotated = run(scenario())
    assert before == ({n: False for n in names}, False)
    assert revoked == ({n: n == "r2" for n in names}, True)  # before: r2 as any other
    assert rotated == before


def test_the_ladder_command_ranks_and_marks_as_the_leaderboard_does(tmp_path):
    """`heartsd ladder leaderboard` numbered its rows by position and did not mark a revoked
    bot, where GetLeaderboard and the web share equal ratings' rank and mark it."""
    from heartsd.ladder import places

    play_rated_match(tmp_path, ["c1", "c2", "c3", "c4"], deals=1)
    db = str(tmp_path / "heartsd.db")
    store = Store(db)
    try:
        store.ladder.revoke("c3")
        standings = store.ladder.standings("standard")
    finally:
        store.close()
    out = _heartsd("ladder", "leaderboard", "--db", db)
    rows = {line.split()[1]: line for line in out.stdout.splitlines() if line[:3].strip().isdigit()}
    for place, s in zip(places(standings), standings):
        assert rows[s.bot].split()[0] == str(place), out.stdout
        assert rows[s.bot].endswith("REVOKED") == (s.bot == "c3"), out.stdout
