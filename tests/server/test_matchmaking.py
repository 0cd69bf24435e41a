"""Continuous matchmaking: rated duplicate matches among connected ladder bots."""

from __future__ import annotations

import asyncio

from heartsd.matchmaker import LadderSettings, Matchmaker

from .harness import Bot, random_legal, run, running_daemon


def test_matchmaking_seats_connected_bots_never_two_of_one_owner_and_respects_limits(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            owners = {"m1": "ann", "m2": "ann", "m3": "bob", "m4": "cy", "m5": "dee", "m6": "eve"}
            tokens = {b: ladder.add_bot(b, o) for b, o in owners.items()}
            bots = [await Bot(daemon, b, random_legal(i), token=tokens[b], max_matches=1).start()
                    for i, b in enumerate(owners)]
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, interval_s=0.05), seed=1)
            task = asyncio.get_running_loop().create_task(maker.run())
            seen: set[str] = set()  # the matches checked while they run
            for _ in range(200):
                for runner in list(daemon.arena.runners.values()):
                    table = tuple(s.name for s in runner.seats)
                    if runner.id not in seen:
                        seen.add(runner.id)
                        per_bot = [sum(1 for r in daemon.arena.runners.values() if b in [s.name for s in r.seats])
                                   for b in table]
                        assert max(per_bot) <= 1, "a bot declared one match at a time"
                if maker.created >= 4 and not daemon.arena.runners:
                    break
                await asyncio.sleep(0.05)
            task.cancel()
            for runner in list(daemon.arena.runners.values()):
                await daemon.wait_finished(runner.id)
            standings = ladder.standings("standard")
            for b in bots:
                await b.close()
            # Every table from the store: a 4-deal match can start and end between two polls.
            return [tuple(m.seats) for m in daemon.arena.store.list()], owners, standings

    tables, owners, standings = run(scenario())
    assert len(tables) >= 4
    for table in tables:
        assert len({owners[b] for b in table}) == 4, f"two bots of one owner at {table}"
    assert sum(s.matches for s in standings) >= 4 * 4
    assert {s.bot for s in standings} <= set(owners)


def test_with_fill_only_house_bots_just_complete_tables_guests_cannot_fill(tmp_path):
    """Five guests and three house bots, four seats a table: one table of guests alone,
    the fifth guest's table completed by house bots; house bots never play by themselves."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            guests = [f"g{i}" for i in range(5)]
            house = [f"house-h{i}" for i in range(3)]
            tokens = {b: ladder.add_bot(b, b) for b in guests + house}
            bots = [await Bot(daemon, b, random_legal(i), token=tokens[b], max_matches=1).start()
                    for i, b in enumerate(guests + house)]
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, house=frozenset(house), fill_only=True), seed=3)
            maker._refresh()
            first = await maker.tick()
            # From the store: a 4-deal match of instant bots can end before this line runs.
            tables = [list(daemon.arena.store.get(m).seats) for m in first]
            for runner in list(daemon.arena.runners.values()):
                runner.stop(2, "test over")
                await daemon.wait_finished(runner.id)
            for b in bots[:5]:
                await b.close()
            while any(daemon.arena.sessions.get(g) for g in guests):
                await asyncio.sleep(0.01)  # the server notices the closed streams
            maker._refresh()
            alone = await maker.tick()  # only house bots are connected now
            for b in bots[5:]:
                await b.close()
            return tables, alone

    tables, alone = run(scenario())
    assert len(tables) == 2 and alone == []
    house_counts = sorted(sum(b.startswith("house-") for b in t) for t in tables)
    assert house_counts == [0, 3]
    assert sorted(b for t in tables for b in t if not b.startswith("house-")) == [f"g{i}" for i in range(5)]


def test_without_fill_only_house_bots_play_like_everyone(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            house = [f"house-h{i}" for i in range(4)]
            tokens = {b: ladder.add_bot(b, b) for b in house}
            bots = [await Bot(daemon, b, random_legal(i), token=tokens[b], max_matches=1).start()
                    for i, b in enumerate(house)]
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, house=frozenset(house)), seed=3)
            maker._refresh()
            created = await maker.tick()
            for runner in list(daemon.arena.runners.values()):
                runner.stop(2, "test over")
                await daemon.wait_finished(runner.id)
            for b in bots:
                await b.close()
            return created

    assert len(run(scenario())) == 1


def test_a_table_that_just_played_waits_for_other_bots_before_meeting_again(tmp_path):
    """Eight bots, two tables. When one table ends while the other still plays, its four
    bots are not seated together again at once; once everyone is free they are, and a
    held table is seated anyway after repeat_wait_s."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = [f"t{i}" for i in range(8)]
            tokens = {b: ladder.add_bot(b, b) for b in names}
            # Bots that think a while (they never answer): matches end only when the test says.
            bots = [await Bot(daemon, b, lambda request, bot: None, token=tokens[b], max_matches=1).start()
                    for b in names]
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, repeat_wait_s=0.3, set_tables=1), seed=5)

            async def tick():
                maker._refresh()
                return [frozenset(s.name for s in daemon.arena.runners[m].seats) for m in await maker.tick()]

            async def end(table):
                runner = next(r for r in daemon.arena.runners.values() if {s.name for s in r.seats} == table)
                runner.stop(2, "test: this table is over")
                await daemon.wait_finished(runner.id)

            first = await tick()
            await end(first[0])
            held = await tick()  # the other table still plays: first[0] waits
            await asyncio.sleep(0.35)
            after_wait = await tick()  # waited long enough: seated again
            await end(after_wait[0])
            await end(first[1])
            everyone_free = await tick()
            for runner in list(daemon.arena.runners.values()):
                runner.stop(2, "test over")
                await daemon.wait_finished(runner.id)
            for b in bots:
                await b.close()
            return first, held, after_wait, everyone_free

    first, held, after_wait, everyone_free = run(scenario())
    assert len(first) == 2 and held == []
    assert after_wait == [first[0]]
    assert len(everyone_free) == 2


def test_rated_matches_default_to_every_pass_direction_equally_often():
    """Deals pass by the schedule in turn, so by default every rated match passes every way
    the same number of times (standard: 16 deals, four each way)."""
    from hearts_engine import preset

    for ruleset in ("standard", "classic", "hartenjagen"):
        rules = preset(ruleset)
        maker = Matchmaker(None, LadderSettings(ruleset=ruleset))  # type: ignore[arg-type]
        assert maker.deals == rules.players * len(rules.pass_schedule)
        counts = {}
        for d in range(maker.deals):
            counts[rules.pass_direction(d)] = counts.get(rules.pass_direction(d), 0) + 1
        assert set(counts) == set(rules.pass_schedule) and len(set(counts.values())) == 1
    assert Matchmaker(None, LadderSettings(deals=4)).deals == 4  # type: ignore[arg-type]


def test_a_tables_repeat_wait_starts_afresh_each_time_it_plays_and_forgets_tables_that_moved_on():
    """Found by an attack pass: the wait before four bots who just played together meet
    again was kept per table from the first time it held them, and forgotten only when that
    table was created as a plain table. A table that then played as part of a duplicate set
    kept its old start, so its next plain meeting did not wait at all; and the wait of a
    table whose bots went on to other tables was kept for ever (a slow growth over weeks).
    Now every table that plays, plain or in a set, starts its next wait afresh, and a wait
    is kept only while its table is still every one of its bots' last."""
    from heartsd.matchmaker import RepeatWaits

    table, other = frozenset("abcd"), frozenset("abef")
    busy, idle = (lambda: True), (lambda: False)
    waits = RepeatWaits(wait_s=30.0)
    waits.played(table)
    assert waits.held(table, 0.0, busy)  # they just played: held, from now
    assert not waits.held(table, 31.0, busy)  # waited long enough
    waits.played(table)  # played together again (a duplicate set's table, say)
    assert waits.held(table, 40.0, busy)  # before: not held, its wait dated from 0
    assert not waits.held(table, 40.0, idle)  # nobody else to mix with
    waits.played(other)  # a and b went on to another table
    assert not waits.held(table, 41.0, busy)
    assert len(waits) == 0, "the wait of a table whose bots moved on is forgotten"


def test_the_bots_closest_in_rating_come_in_the_order_a_full_sort_gave():
    """A table's bots were found by sorting every free bot by its distance in rating from
    the anchor (ties in the free list's order), once per table: quadratic in the free bots
    (a tick seating 4,000 took 12 s). ClosestFirst reads only the nearest ratings, and must
    give exactly that order, through the removals and re-appends a tick makes, so that a
    seed seats the same tables as before. Many ties: most bots of a new ladder share 25.0."""
    import random

    from heartsd.closest import ClosestFirst

    rng = random.Random(7)
    for _ in range(300):
        ratings = [25.0, 24.0, 26.0, 23.5, 26.5, rng.uniform(15, 35)]
        mu = {f"b{i}": rng.choice(ratings) for i in range(rng.randint(1, 40))}
        free = list(mu)
        rng.shuffle(free)
        pool = ClosestFirst(free, mu.__getitem__)
        for _ in range(20):
            if not free:
                break
            anchor = rng.choice(free)
            free.remove(anchor)
            pool.remove(anchor)
            expected = sorted(free, key=lambda b: abs(mu[b] - mu[anchor]))
            assert list(pool.closest_to(mu[anchor])) == expected
            if free:
                assert list(pool.closest_to(mu[free[0]], but=free[0])) == sorted(
                    free[1:], key=lambda b: abs(mu[b] - mu[free[0]]))  # a set's anchor is the first
            assert pool.first() == (free[0] if free else None)
            taken = rng.sample(free, min(len(free), rng.randint(0, 3)))
            for bot in taken:
                free.remove(bot)
                pool.remove(bot)
            if rng.random() < 0.6:  # the anchor waits: back at the end
                free.append(anchor)
                pool.append(anchor)
            assert pool.bots() == free and len(pool) == len(free)
            assert all(b in pool for b in free) and anchor in pool or anchor not in free


def test_a_bots_count_of_matches_follows_every_match_started_ended_or_refused(tmp_path):
    """The arena counts each bot's matches from an index kept as matches start and end
    (seated.py), no longer by asking every match: a matchmaking tick asked it of every
    connected ladder bot (450-700 ms of the event loop a tick with 4,000 bots in 1,000
    matches, bench/matchmaking.py). Whatever becomes of a match, refused at its start
    included, the count must be what a scan of the matches says, or a bot's slots leak."""
    import sqlite3

    import grpc

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            arena = daemon.arena
            names = ["c0", "c1", "c2", "c3"]
            tokens = {b: arena.store.ladder.add_bot(b, b) for b in names}
            bots = [await Bot(daemon, b, lambda request, bot: None, token=tokens[b], max_matches=3).start()
                    for b in names]

            def counts():
                scanned = {b: [r.id for r in arena.runners.values() if r.seats_of(b)] for b in names}
                assert {b: [m for m, _ in arena.matches_of(b)] for b in names} == scanned
                assert {b: arena.active_matches(b) for b in names} == {b: len(m) for b, m in scanned.items()}
                assert set(arena.busy_bots()) == {b for b, m in scanned.items() if m}
                return [arena.active_matches(b) for b in names]

            seen = [counts()]
            first = await daemon.create_match(names, deals=4)
            await daemon.create_match(names[::-1], deals=4)
            seen.append(counts())
            real_start = arena.store.start

            def full_disk(*args):  # the store is the external boundary here
                arena.store.start = real_start
                raise sqlite3.OperationalError("disk I/O error")

            arena.store.start = full_disk
            try:
                await daemon.create_match(names, deals=4)
                refused = None
            except grpc.aio.AioRpcError as exc:
                refused = exc.code()
            seen.append(counts())
            arena.runners[first].stop(2, "test: over")
            await daemon.wait_finished(first)
            seen.append(counts())
            for b in bots:
                await b.close()
            return seen, refused

    seen, refused = run(scenario())
    assert refused is not None, "the store's failure refused the third match"
    assert seen == [[0] * 4, [2] * 4, [2] * 4, [1] * 4]


def test_a_duplicate_set_reads_the_registrations_of_its_own_bots_only(tmp_path):
    """Each duplicate set a tick starts checks that no two of its bots share an owner. It
    read every registered bot's row to do so: at 4,000 bots ~10 ms per set in a thread
    holding the GIL, 5 of the 7 s a tick took to seat 1,000 tables (bench/matchmaking.py).
    Now each read names its bots; the sets formed and the owners kept apart are the same."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            arena = daemon.arena
            names = [f"d{i}" for i in range(24)]
            tokens = {b: arena.store.ladder.add_bot(b, f"owner-{b}") for b in names}
            bots = [await Bot(daemon, b, lambda request, bot: None, token=tokens[b], max_matches=1).start()
                    for b in names[:16]]  # 8 registered bots stay away
            reads: list[tuple[str, ...] | None] = []
            real_owners = arena.store.ladder.owners
            arena.store.ladder.owners = lambda include_revoked=False, names=None: (
                reads.append(None if names is None else tuple(names)) or real_owners(include_revoked, names))
            maker = Matchmaker(arena, LadderSettings(deals=4, set_tables=2), seed=3)
            maker._refresh()
            reads.clear()  # the tick's own reads
            created = await maker.tick()
            sets = {arena.runners[m].set_id for m in created}
            tables = [[s.name for s in arena.runners[m].seats] for m in created]
            for b in bots:
                await b.close()
            return created, sets, tables, reads

    created, sets, tables, reads = run(scenario())
    assert len(created) == 4 and len(sets) == 2, "16 bots: two sets of two tables"
    assert None not in reads, "no read of every registration during a tick"
    seated = {b for table in tables for b in table}
    assert all(set(read) <= seated for read in reads), reads
    assert len(seated) == 16


def test_a_matchmaking_tick_reads_each_sessions_token_once_however_many_tables_it_starts(tmp_path):
    """Every match that seats a ladder bot checks the tokens of the sessions (a revoked
    one must not be seated), and each check read every session's token: a tick starting
    1,000 tables for 4,000 bots read 4 million token states on the event loop. With the
    same view of the ladder's tokens and no session opened since, the check has nothing
    new to find; a session opened since, or a new view, is checked again."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            arena = daemon.arena
            names = [f"k{i}" for i in range(12)]
            tokens = {b: arena.store.ladder.add_bot(b, b) for b in names}
            bots = [await Bot(daemon, b, lambda request, bot: None, token=tokens[b], max_matches=1).start()
                    for b in names[:8]]
            reads = []
            real_state = arena.tokens.state
            arena.tokens.state = lambda bot, hashed: reads.append(bot) or real_state(bot, hashed)
            maker = Matchmaker(arena, LadderSettings(deals=4, set_tables=1), seed=2)
            maker._refresh()
            tables = await maker.tick()
            per_tick = len(reads)
            late = [await Bot(daemon, b, lambda request, bot: None, token=tokens[b], max_matches=1).start()
                    for b in names[8:]]
            reads.clear()
            arena.check_tokens()  # a session opened since the last check: checked
            after_connect = len(reads)
            reads.clear()
            arena.check_tokens()
            again = len(reads)
            arena.store.ladder.revoke(names[8])
            await arena.tokens.refreshed()
            for _ in range(100):
                if arena.sessions.get(names[8]) is None:
                    break
                await asyncio.sleep(0.02)
            revoked_gone = arena.sessions.get(names[8]) is None
            for b in bots + late:
                await b.close()
            return len(tables), per_tick, after_connect, again, revoked_gone

    tables, per_tick, after_connect, again, revoked_gone = run(scenario())
    assert tables == 2
    # One scan of the 8 sessions, and each seated bot's own token as its table is checked;
    # before, a scan per table as well: 8 + 2 x 8 + 8.
    assert per_tick == 8 + 8, f"{per_tick} token reads for 8 sessions at 2 tables"
    assert after_connect == 12 and again == 0
    assert revoked_gone, "a revoked token still ends its session"
