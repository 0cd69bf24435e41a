"""A client written from proto/hearts/v1/*.proto, docs/protocol.md and RULES.md alone.

It uses only the generated messages and grpcio (no heartsbot client logic, no engine
call): from the events each seat is sent it keeps its own model of the match, and checks
every event and every field of every DecisionRequest against that model and against the
rules as RULES.md words them: legal cards (first lead, following suit, the first-trick
and hearts-lead restrictions, Q♠ when only hearts and Q♠ are left), hearts broken,
trick winners and points, moons and their scoring, the classic moon default, totals,
phases, when a game ends, ranks and winners, and the request's bookkeeping (hand,
passed/received, current_trick, tricks, points_taken, hand_sizes, totals, deal_scores,
last_sequence, scoring_phase, clock).

An adversarial pass ran it over every preset and player count, fixed deals and games,
~150,000 requests (2026-12-08): the daemon kept every promise. It found the docs'
FAILED_PRECONDITION row narrower than the daemon and the proto (a tournament's frozen
version is guarded between its matches too) and the proto's "auto-played without
waiting" where a connected bot is waited for 20 ms; both wordings were fixed. These
tests keep the model running on every preset, so that a change of either side shows.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

import grpc

from heartsbot.proto import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc, cards_pb2, game_pb2

from .harness import ADMIN, BOTS, auth, run, running_daemon

P = game_pb2
C, D, H, S = 1, 2, 3, 4
QS = (S, 12)
OFFSET = {P.PASS_DIRECTION_LEFT: 1, P.PASS_DIRECTION_RIGHT: -1, P.PASS_DIRECTION_ACROSS: 2}
ADD, SUBTRACT = P.MOON_OPTION_ADD_TO_OTHERS, P.MOON_OPTION_SUBTRACT_FROM_SELF

Card = tuple[int, int]  # (suit, rank), which sorts in card order


def key(card: cards_pb2.Card) -> Card:
    return (card.suit, card.rank)


def card_points(rules: game_pb2.Ruleset) -> dict[Card, int]:
    points = {(H, r): rules.heart_points for r in range(2, 15)}
    points.update({key(v.card): v.points for v in rules.card_values})
    return points


def deck(rules: game_pb2.Ruleset) -> list[Card]:
    removed = {key(c) for c in rules.removed_cards}
    return [(s, r) for s in (C, D, H, S) for r in range(2, 15) if (s, r) not in removed]


@dataclass
class Seat:
    """One seat of one match as its events told it."""

    match_id: str
    seat: int
    problems: list[str]
    last_seq: int = 0
    rules: Any = None
    fmt: Any = None
    clock: Any = None
    deal: int = -1
    hand: list[Card] = field(default_factory=list)
    dealt: list[Card] = field(default_factory=list)
    direction: int = 0
    passed: list[Card] = field(default_factory=list)
    received: list[Card] = field(default_factory=list)
    pass_done: bool = False
    tricks: list[Any] = field(default_factory=list)
    trick: list[tuple[int, Card]] = field(default_factory=list)
    broken: int = -1
    taken: list[int] = field(default_factory=list)
    played: list[int] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    scores: list[Any] = field(default_factory=list)
    phase: int = 1
    phase2_deals: int = 0
    end_due: bool = False
    ended: Any = None
    moons: list[tuple[Any, int]] = field(default_factory=list)  # (MOON request, the default RULES.md gives)

    @property
    def n(self) -> int:
        return int(self.rules.players)

    def bad(self, what: str) -> None:
        self.problems.append(f"[{self.match_id} seat {self.seat} deal {self.deal}] {what}")

    # -- events ---------------------------------------------------------------------------
    def event(self, e: game_pb2.Event) -> None:
        if e.sequence <= self.last_seq:
            return  # sent again after a reconnect: dropped, as the docs say
        if e.sequence != self.last_seq + 1:
            self.bad(f"sequence {self.last_seq} -> {e.sequence}")
        self.last_seq = e.sequence
        kind = e.WhichOneof("kind")
        getattr(self, "on_" + kind)(getattr(e, kind))

    def on_match_started(self, m: Any) -> None:
        if m.your_seat != self.seat or m.match_id != self.match_id:
            self.bad(f"match_started for seat {m.your_seat} of {m.match_id}")
        self.rules, self.fmt, self.clock = m.ruleset, m.format, m.clock
        self.totals = [0] * m.ruleset.players

    def on_deal_started(self, d: Any) -> None:
        if self.end_due:
            self.bad(f"deal {d.deal_number} started after the match's end condition (totals {self.totals})")
        if d.deal_number != self.deal + 1:
            self.bad(f"deal {d.deal_number} after deal {self.deal}")
        self.deal = d.deal_number
        self.hand = [key(c) for c in d.hand]
        if self.hand != sorted(self.hand) or len(self.hand) != self.rules.hand_size or d.hands:
            self.bad(f"deal_started hand {self.hand} (hand_size {self.rules.hand_size}, {len(d.hands)} hands)")
        self.dealt = list(self.hand)
        schedule = list(self.rules.pass_schedule)
        if d.pass_direction != schedule[self.deal % len(schedule)]:
            self.bad(f"pass direction {d.pass_direction}, the schedule says {schedule[self.deal % len(schedule)]}")
        self.direction = d.pass_direction
        self.passed, self.received = [], []
        self.pass_done = d.pass_direction == P.PASS_DIRECTION_HOLD
        self.tricks, self.trick, self.broken = [], [], -1
        self.taken, self.played = [0] * self.n, [0] * self.n

    def on_cards_passed(self, p: Any) -> None:
        self.passed, self.received = [key(c) for c in p.passed], [key(c) for c in p.received]
        count = self.rules.pass_count
        if len(self.passed) != count or len(self.received) != count or not set(self.passed) <= set(self.hand):
            self.bad(f"cards_passed {self.passed} / {self.received} from a hand {self.hand}")
        if p.received_from != (self.seat - OFFSET[self.direction]) % self.n or p.hands:
            self.bad(f"cards_passed received_from {p.received_from}, {len(p.hands)} hands")
        self.hand = sorted(set(self.hand) - set(self.passed) | set(self.received))
        self.pass_done = True

    def on_card_played(self, p: Any) -> None:
        card = key(p.card)
        if p.deal_number != self.deal or p.trick_number != len(self.tricks) or not p.provenance:
            self.bad(f"card_played deal {p.deal_number} trick {p.trick_number} provenance {p.provenance}")
        if self.trick:
            expected = (self.trick[-1][0] + 1) % self.n
        elif self.tricks:
            expected = self.tricks[-1].winner
        else:
            expected = p.seat
            if card != key(self.rules.first_lead):
                self.bad(f"the deal opened with {card}, not first_lead {key(self.rules.first_lead)}")
        if p.seat != expected:
            self.bad(f"seat {p.seat} played, seat {expected} was to")
        if p.seat == self.seat:
            if card not in self.hand:
                self.bad(f"own card {card} is not in the hand {self.hand}")
            else:
                self.hand.remove(card)
        self.trick.append((p.seat, card))
        self.played[p.seat] += 1

    def breaks(self, cards: list[tuple[int, Card]]) -> bool:
        """RULES.md: 'discard' is a heart played by a seat that cannot follow; 'any_heart'
        any heart; Q♠ too where queen_breaks_hearts."""
        led = cards[0][1][0]
        return any((c[0] == H and (self.rules.hearts_break == "any_heart" or led != H))
                   or (c == QS and self.rules.queen_breaks_hearts) for _, c in cards)

    def on_hearts_broken(self, b: Any) -> None:
        if self.broken != -1 or b.trick_number != len(self.tricks) or not self.breaks(self.trick):
            self.bad(f"hearts_broken in trick {b.trick_number} after {self.trick} (broken {self.broken})")
        self.broken = b.trick_number

    def on_trick_won(self, t: Any) -> None:
        trick = [(c.seat, key(c.card)) for c in t.trick.cards]
        led = self.trick[0][1][0] if self.trick else 0
        winner = max((c[1], s) for s, c in self.trick if c[0] == led)[1] if self.trick else -1
        points = sum(card_points(self.rules).get(c, 0) for _, c in self.trick)
        if (trick != self.trick or len(trick) != self.n or t.trick.number != len(self.tricks)
                or t.trick.leader != self.trick[0][0] or t.trick.winner != winner or t.points != points):
            self.bad(f"trick_won {t} after {self.trick}: winner {winner}, points {points}")
        if self.broken == -1 and self.breaks(self.trick):
            self.bad(f"trick {self.trick} broke hearts without a hearts_broken event")
        self.taken[winner] += points
        self.tricks.append(t.trick)
        self.trick = []

    def shooter(self) -> int:
        """RULES.md: one seat took every penalty card in play (and the bonus card where the
        ruleset says so)."""
        points = card_points(self.rules)
        need = {c for c in deck(self.rules) if points.get(c, 0) > 0 or (self.rules.moon_requires_bonus and points.get(c, 0) < 0)}
        for s in range(self.n):
            won = {key(c.card) for t in self.tricks if t.winner == s for c in t.cards}
            if need <= won:
                return s
        return -1

    def bonus(self) -> list[int]:
        points = card_points(self.rules)
        bonus = [0] * self.n
        for t in self.tricks:
            bonus[t.winner] += sum(min(points.get(key(c.card), 0), 0) for c in t.cards)
        return bonus

    def score(self, option: int) -> list[int]:
        """What the deal adds to each total, by RULES.md."""
        shooter = self.shooter()
        if shooter == -1 or self.phase == 2:  # phase 2: every seat subtracts what it took
            return [x * (-1 if self.phase == 2 else 1) for x in self.taken]
        total, bonus = self.rules.deal_total, self.bonus()  # a bonus card stays with its taker
        if option == SUBTRACT:
            return [bonus[s] - (total if s == shooter else 0) for s in range(self.n)]
        return [bonus[s] + (0 if s == shooter else total) for s in range(self.n)]

    def ends(self, totals: list[int], deals: int, phase: int, phase2_deals: int) -> bool:
        """RULES.md: fixed deals; else the target, or Hartenjagen's phase 2."""
        if self.fmt.fixed_deals:
            return deals >= self.fmt.fixed_deals
        if self.rules.phase1_target:
            low = min(totals)
            return phase == 2 and ((low <= 0 and totals.count(low) == 1) or phase2_deals >= self.rules.phase2_cap)
        return max(totals) >= self.rules.target

    def default_moon(self, shooter: int) -> int:
        """RULES.md: +26 to the others, unless that ends the match without the shooter as
        sole winner by (total, last-deal score)."""
        add = self.score(ADD)
        totals = [a + b for a, b in zip(self.totals, add)]
        if not self.ends(totals, len(self.scores) + 1, 1, self.phase2_deals):
            return ADD
        ranked = [(t, last) for t, last in zip(totals, add)]
        return ADD if all(ranked[shooter] < ranked[s] for s in range(self.n) if s != shooter) else SUBTRACT

    def on_deal_scored(self, d: Any) -> None:
        sc = d.score
        shooter = self.shooter()
        option = (sc.moon_option if self.rules.moon == "shooter_choice" else ADD) if shooter != -1 and self.phase == 1 else 0
        points = self.score(option)
        if (sc.deal_number != self.deal or list(sc.points_taken) != self.taken or sc.shooter != shooter
                or sc.phase != self.phase or sc.moon_option != option or list(sc.points) != points):
            self.bad(f"deal_scored {sc}: RULES.md gives points {points}, taken {self.taken}, shooter {shooter}, "
                     f"phase {self.phase}, option {option}")
        self.totals = [a + b for a, b in zip(self.totals, points)]
        if list(d.totals) != self.totals:
            self.bad(f"deal_scored totals {list(d.totals)} != {self.totals}")
        self.scores.append(sc)
        self.phase2_deals += sc.phase == 2
        self.end_due = self.ends(self.totals, len(self.scores), sc.phase, self.phase2_deals)
        if self.rules.phase1_target and not self.fmt.fixed_deals and max(self.totals) >= self.rules.phase1_target:
            self.phase = 2  # phase 1 ends after the deal in which a total reaches its target

    def on_match_ended(self, m: Any) -> None:
        self.ended = r = m.result
        if r.status != P.MATCH_STATUS_FINISHED:
            if r.ranks or r.winners:
                self.bad(f"ranks or winners for status {r.status}")
            return
        if not self.end_due or list(r.totals) != self.totals or r.deals != len(self.scores):
            self.bad(f"match_ended {r} with totals {self.totals} after {len(self.scores)} deals (end due {self.end_due})")
        last = list(self.scores[-1].points)
        by = [(t,) if self.rules.phase1_target else (t, x) for t, x in zip(self.totals, last)]
        ranks = [1 + sum(o < k for o in by) for k in by]
        if list(r.ranks) != ranks or sorted(r.winners) != [s for s in range(self.n) if ranks[s] == 1]:
            self.bad(f"ranks {list(r.ranks)} winners {list(r.winners)}; RULES.md gives ranks {ranks}")

    def on_notice(self, n: Any) -> None:
        pass

    # -- requests -------------------------------------------------------------------------
    def legal(self) -> list[Card]:
        """RULES.md's legal plays, from the model alone."""
        rules, hand = self.rules, self.hand
        if not self.trick:
            if not self.tricks:
                return [key(rules.first_lead)]
            if rules.hearts_lead_restricted and self.broken == -1:
                others = [c for c in hand if c[0] != H]
                if [c for c in others if c != QS]:
                    return others
                if QS in hand and not rules.lead_heart_instead_of_queen:
                    return [QS]  # only hearts and Q♠: Q♠ leads
            return hand
        follow = [c for c in hand if c[0] == self.trick[0][1][0]] or hand
        if not self.tricks and rules.first_trick_no_points:
            clean = [c for c in follow if c[0] != H and c != QS]
            if clean:
                return clean
            if rules.first_trick_fallback == "queen_last":
                return [c for c in follow if c != QS] or follow
        return follow

    def check(self, q: bot_pb2.DecisionRequest) -> None:
        rules = self.rules
        hand, legal = [key(c) for c in q.hand], [key(c) for c in q.legal_cards]
        to = -1 if self.direction == P.PASS_DIRECTION_HOLD else (self.seat + OFFSET[self.direction]) % self.n
        expect = {
            "your_seat": (q.your_seat, self.seat), "deal_number": (q.deal_number, self.deal),
            "ruleset": (q.ruleset, rules), "pass_count": (q.pass_count, rules.pass_count),
            "pass_direction": (q.pass_direction, self.direction), "pass_to": (q.pass_to, to),
            "last_sequence": (q.last_sequence, self.last_seq), "scoring_phase": (q.scoring_phase, self.phase),
            "totals": (list(q.totals), self.totals), "deal_scores": (list(q.deal_scores), self.scores),
            "hearts_broken": ((q.hearts_broken, q.hearts_broken_trick), (self.broken != -1, self.broken)),
            "points_taken": (list(q.points_taken), self.taken), "tricks": (list(q.tricks), self.tricks),
            "passed/received": (([key(c) for c in q.passed], [key(c) for c in q.received]),
                                (self.passed, self.received) if self.pass_done else ([], [])),
            "hand_sizes": (list(q.hand_sizes), [rules.hand_size - x for x in self.played]),
            "hand order": (hand, sorted(hand)), "legal order": (legal, sorted(legal)),
        }
        if not 0 < q.clock.decision_ms <= self.clock.decision_ms or not 0 <= q.clock.bank_ms <= self.clock.bank_ms:
            self.bad(f"clock {q.clock} beyond the match's {self.clock}")
        ct = q.current_trick
        if q.kind == P.DECISION_KIND_PASS:
            expect.update({"PASS on a passing deal": (not self.pass_done, True), "PASS hand": (hand, self.dealt),
                           "PASS legal": (legal, hand), "PASS current_trick": ((ct.number, ct.leader, len(ct.cards)), (0, -1, 0)),
                           "PASS moon": ((list(q.moon_options), q.default_moon_option), ([], 0))})
        elif q.kind == P.DECISION_KIND_PLAY:
            turn = (self.trick[-1][0] + 1) % self.n if self.trick else self.tricks[-1].winner if self.tricks else self.seat
            expect.update({"PLAY after the pass": (self.pass_done, True), "PLAY hand": (hand, self.hand),
                           "PLAY legal (RULES.md)": (legal, self.legal()), "PLAY turn": (turn, self.seat),
                           "PLAY current_trick": ((ct.number, ct.leader, [(c.seat, key(c.card)) for c in ct.cards], ct.winner),
                                                  (len(self.tricks), self.trick[0][0] if self.trick else self.seat, self.trick, -1)),
                           "PLAY moon": ((list(q.moon_options), q.default_moon_option), ([], 0))})
        elif q.kind == P.DECISION_KIND_MOON:
            shooter = self.shooter()
            self.moons.append((q, self.default_moon(shooter)))
            expect.update({"MOON ruleset": (rules.moon, "shooter_choice"), "MOON hand/legal": ((hand, legal), ([], [])),
                           "MOON after the last trick": (len(self.tricks), rules.hand_size), "MOON shooter": (shooter, self.seat),
                           "MOON current_trick": ((ct.number, ct.leader, len(ct.cards)), (len(self.tricks), -1, 0)),
                           "MOON options": (sorted(q.moon_options), [ADD, SUBTRACT]),
                           "MOON default (RULES.md)": (q.default_moon_option, self.default_moon(shooter))})
        else:
            self.bad(f"request kind {q.kind}")
        for what, (got, want) in expect.items():
            if got != want:
                self.bad(f"{game_pb2.DecisionKind.Name(q.kind)} request {q.request_id}: {what} {got!r} != {want!r}")


class Client:
    """One bot stream, answering with ``policy(request, seat model)``."""

    def __init__(self, target: str, name: str, policy: Any, max_matches: int = 64) -> None:
        self.target, self.name, self.policy, self.max_matches = target, name, policy, max_matches
        self.problems: list[str] = []
        self.seats: dict[tuple[str, int], Seat] = {}
        self.welcomed = asyncio.Event()
        self.lock = asyncio.Lock()  # grpc.aio takes one write at a time

    async def start(self) -> Client:
        self.channel = grpc.aio.insecure_channel(self.target)
        self.call = bot_pb2_grpc.BotServiceStub(self.channel).Play(metadata=auth(BOTS[self.name]))
        await self.call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
            name=self.name, version="contract/1", max_concurrent_matches=self.max_matches)))
        self.task = asyncio.get_running_loop().create_task(self._read())
        await asyncio.wait_for(self.welcomed.wait(), 10)
        return self

    async def _read(self) -> None:
        async for message in self.call:
            if message.HasField("welcome"):
                self.welcomed.set()
            elif message.HasField("rejected"):
                self.problems.append(f"rejected: {message.rejected}")
            elif message.HasField("update"):
                u = message.update
                seat = self.seats.setdefault((u.match_id, u.seat), Seat(u.match_id, u.seat, self.problems))
                for e in u.events:
                    seat.event(e)
                if u.HasField("request"):
                    seat.check(u.request)
                    answer = self.policy(u.request, seat)
                    if answer is not None:
                        answer.match_id = u.match_id
                        async with self.lock:
                            await self.call.write(bot_pb2.PlayRequest(answer=answer))

    async def ended(self, match_id: str, seats: int) -> None:
        while sum(1 for (m, _), s in self.seats.items() if m == match_id and s.ended is not None) < seats:
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        self.call.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.channel.close()


def random_policy(seed: int) -> Any:
    rng = random.Random(seed)

    def policy(q: bot_pb2.DecisionRequest, seat: Seat) -> bot_pb2.Answer:
        answer = bot_pb2.Answer(request_id=q.request_id)
        if q.kind == P.DECISION_KIND_PASS:
            answer.pass_cards.cards.extend(rng.sample(list(q.legal_cards), q.pass_count))
        elif q.kind == P.DECISION_KIND_PLAY:
            answer.play.CopyFrom(rng.choice(list(q.legal_cards)))
        else:
            answer.moon = rng.choice(list(q.moon_options))
        return answer

    return policy


async def create(address: str, ruleset: str, players: int, deals: int, seed: int, bot: str = "alice",
                 **options: Any) -> str:
    request = admin_pb2.CreateMatchRequest(ruleset=ruleset, seed=seed)
    for _ in range(players):
        request.seats.add(bot=bot)  # an unrated match may name one bot in every seat
    request.format.fixed_deals = deals
    for name, value in options.items():
        setattr(request.options, name, value)
    async with grpc.aio.insecure_channel(address) as channel:
        return (await admin_pb2_grpc.AdminServiceStub(channel).CreateMatch(request, metadata=auth(ADMIN))).match_id


VARIANTS = [("standard", 4, {}), ("omnibus", 4, {}), ("omnibus", 4, {"moon_requires_bonus": True}),
            ("classic", 3, {}), ("classic", 4, {}), ("classic", 5, {}), ("classic", 6, {}), ("classic", 7, {}),
            ("hartenjagen", 3, {}), ("hartenjagen", 4, {}), ("hartenjagen", 3, {"hartenjagen_passing": True}),
            ("hartenjagen", 4, {"hartenjagen_passing": True}), ("hartenjagen-quick", 3, {}), ("hartenjagen-quick", 4, {})]


def test_every_event_and_request_agrees_with_a_model_kept_from_the_contract(tmp_path):
    """Every preset and player count, in fixed deals and as a game (Hartenjagen's quick
    game reaches its subtracting phase; classic to 50 ends by its target): one bot holds
    every seat and plays random legal cards, and its model of each seat checks everything
    it is sent."""

    async def scenario() -> tuple[Client, list[tuple[str, int]]]:
        async with running_daemon(tmp_path, decision_ms=10_000, bank_ms=10_000) as daemon:
            client = await Client(daemon.target, "alice", random_policy(7)).start()
            matches = [(await create(daemon.target, r, n, 3, seed=100 + i, **o), n) for i, (r, n, o) in enumerate(VARIANTS)]
            matches += [(await create(daemon.target, "hartenjagen-quick", 3, 0, seed=1), 3),
                        (await create(daemon.target, "classic", 4, 0, seed=2, target=50), 4),
                        (await create(daemon.target, "standard", 4, 0, seed=3), 4)]
            for match_id, players in matches:
                await asyncio.wait_for(client.ended(match_id, players), 120)
            await client.close()
            return client, matches

    client, matches = run(scenario())
    assert client.problems == []
    seats = list(client.seats.values())
    assert all(s.ended is not None and s.ended.status == P.MATCH_STATUS_FINISHED for s in seats)
    assert len(seats) == sum(n for _, n in matches)
    assert any(s.phase == 2 for s in seats)  # a game reached Hartenjagen's phase 2


def test_a_moon_request_and_its_default_follow_the_rules(tmp_path):
    """Classic deals arranged to end in a shot moon (one seat keeps its high cards and
    plays its highest, the others duck and feed it): the MOON request's fields and its
    default_moon_option are what RULES.md gives, answered (-26 to self) or not (the
    default is applied)."""

    def by_rank(c: Card) -> tuple[int, int]:
        return c[1], c[0]

    def shoot(answer: bool) -> Any:
        def policy(q: bot_pb2.DecisionRequest, seat: Seat) -> bot_pb2.Answer | None:
            legal = [key(c) for c in q.legal_cards]
            a = bot_pb2.Answer(request_id=q.request_id)
            if q.kind == P.DECISION_KIND_MOON:
                if not answer:
                    return None
                a.moon = SUBTRACT
                return a
            if q.kind == P.DECISION_KIND_PASS:
                ranked = sorted(legal, key=by_rank)
                chosen = ranked[:q.pass_count] if seat.seat == 0 else ranked[-q.pass_count:]
                a.pass_cards.cards.extend(cards_pb2.Card(suit=s, rank=r) for s, r in chosen)
                return a
            trick = [key(c.card) for c in q.current_trick.cards]
            if seat.seat == 0:
                card = max(legal, key=by_rank)
            elif trick and all(c[0] != trick[0][0] for c in legal):  # void: feed the shooter
                hearts = [c for c in legal if c[0] == H]
                card = QS if QS in legal else max(hearts or legal, key=by_rank)
            else:
                card = min(legal, key=by_rank)
            a.play.CopyFrom(cards_pb2.Card(suit=card[0], rank=card[1]))
            return a
        return policy

    from heartsd.conformance import moon_seed  # a seed where that play shoots the moon (the engine finds it)

    async def scenario() -> list[Client]:
        async with running_daemon(tmp_path, decision_ms=300, bank_ms=0) as daemon:
            clients = []
            for name, answer in (("bob", True), ("carol", False)):
                client = await Client(daemon.target, name, shoot(answer)).start()
                match_id = await create(daemon.target, "classic", 4, 1, seed=moon_seed("classic"), bot=name)
                await asyncio.wait_for(client.ended(match_id, 4), 60)
                await client.close()
                clients.append(client)
            return clients

    for client, answered in zip(run(scenario()), (True, False)):
        assert client.problems == []
        shooter = next(s for s in client.seats.values() if s.seat == 0)
        (request, default), = shooter.moons
        assert request.default_moon_option == default == ADD  # one deal: the shooter alone wins either way
        assert shooter.scores[-1].moon_option == (SUBTRACT if answered else default)
