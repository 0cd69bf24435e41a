"""A live match in the terminal: the state a spectator's events build, drawn with rich.

``heartsd admin watch`` feeds :class:`TableView` the public events of
``SpectatorService.WatchMatch`` (the same stream any spectator gets) and redraws it:
the seats, the trick being played, this deal's tricks, the score sheet and the result.
It draws only cards that have been *played*: even where a spectator stream reveals
hands (a configured delay), no card a seat may still hold is ever drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from hearts_engine import card_symbol
from heartsbot import convert
from heartsbot.proto import game_pb2

P = game_pb2
PROVENANCE = {v: k.removeprefix("PROVENANCE_").lower() for k, v in P.Provenance.items()}
STATUS = {v: k.removeprefix("MATCH_STATUS_").lower() for k, v in P.MatchStatus.items()}
DIRECTION = {v: k.removeprefix("PASS_DIRECTION_").lower() for k, v in P.PassDirection.items()}


@dataclass
class TableView:
    """What a spectator knows of a match, built event by event (no hidden cards)."""

    match_id: str = ""
    ruleset: str = ""
    seats: list[str] = field(default_factory=list)
    deal: int = -1
    pass_direction: str = ""
    trick: list[tuple[int, int, int]] = field(default_factory=list)  # (seat, card, provenance) of the open trick
    tricks: list[tuple[int, list[tuple[int, int]], int, int]] = field(default_factory=list)  # (leader, plays, winner, points)
    hearts_broken: bool = False
    deal_scores: list[tuple[int, list[int], int]] = field(default_factory=list)  # (deal, points, shooter)
    totals: list[int] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    played: set[int] = field(default_factory=set)  # every card played so far (all that may be drawn)
    result: game_pb2.MatchResult | None = None
    events: int = 0

    def apply(self, event: game_pb2.Event) -> None:
        self.events += 1
        kind = event.WhichOneof("kind")
        if kind == "match_started":
            started = event.match_started
            self.match_id, self.ruleset = started.match_id, started.ruleset.name
            self.seats = [s.name for s in started.seats]
            self.totals = [0] * len(self.seats)
        elif kind == "deal_started":
            self.deal = event.deal_started.deal_number
            self.pass_direction = DIRECTION.get(event.deal_started.pass_direction, "")
            self.trick, self.tricks, self.hearts_broken = [], [], False
        elif kind == "card_played":
            played = event.card_played
            card = convert.card_from_wire(played.card)
            self.played.add(card)
            self.trick.append((played.seat, card, played.provenance))
        elif kind == "trick_won":
            won = event.trick_won
            plays = [(c.seat, convert.card_from_wire(c.card)) for c in won.trick.cards]
            self.tricks.append((won.trick.leader, plays, won.trick.winner, won.points))
            self.trick = []
        elif kind == "hearts_broken":
            self.hearts_broken = True
        elif kind == "deal_scored":
            score = event.deal_scored.score
            self.deal_scores.append((score.deal_number, list(score.points), score.shooter))
            self.totals = list(event.deal_scored.totals)
        elif kind == "notice":
            self.notices = (self.notices + [event.notice.text])[-3:]
        elif kind == "match_ended":
            self.result = event.match_ended.result
            self.totals = list(self.result.totals) or self.totals

    # -- drawing ----------------------------------------------------------------------

    def _name(self, seat: int) -> str:
        return self.seats[seat] if 0 <= seat < len(self.seats) else f"seat {seat}"

    def _label(self, seat: int) -> Text:
        """A seat's name as a table cell: literal text, since rich would read markup in it."""
        return Text(self._name(seat))

    def _card(self, card: int, provenance: int = P.PROVENANCE_BOT) -> Text:
        assert card in self.played, "only played cards are ever drawn"
        text = Text(card_symbol(card), style="red" if card // 13 in (1, 2) else "")
        if provenance not in (P.PROVENANCE_BOT, P.PROVENANCE_HOUSE, P.PROVENANCE_UNSPECIFIED):
            text.append(f" [{PROVENANCE[provenance]}]", style="yellow")
        return text

    def render(self) -> RenderableType:
        head = Text(f"{self.match_id}  {self.ruleset}", style="bold")
        if self.deal >= 0:
            head.append(f"   deal {self.deal}, pass {self.pass_direction or '-'}, trick {len(self.tricks) + 1}")
            head.append("   hearts broken" if self.hearts_broken else "")
        parts: list[RenderableType] = [head]
        current = Table(title="trick in play", show_header=True, expand=False)
        for seat, _ in enumerate(self.seats):
            current.add_column(self._label(seat), justify="center")
        row: list[Text | str] = [""] * len(self.seats)
        for seat, card, provenance in self.trick:
            row[seat] = self._card(card, provenance)
        current.add_row(*row)
        parts.append(current)
        if self.tricks:
            done = Table(title=f"deal {self.deal}: tricks", show_header=True)
            done.add_column("#", justify="right")
            for seat, _ in enumerate(self.seats):
                done.add_column(self._label(seat), justify="center")
            done.add_column("won by")
            done.add_column("points", justify="right")
            for number, (_, plays, winner, points) in enumerate(self.tricks, 1):
                cells: list[Text | str] = [""] * len(self.seats)
                for seat, card in plays:
                    cells[seat] = self._card(card)
                done.add_row(str(number), *cells, self._label(winner), str(points))
            parts.append(done)
        parts.append(self.score_sheet())
        if self.notices:
            parts.append(Text("\n".join(self.notices), style="yellow"))
        if self.result is not None:
            parts.append(Text(self.result_line(), style="bold green"))
        return Group(*parts)

    def score_sheet(self) -> Table:
        sheet = Table(title="score sheet", show_footer=True)
        sheet.add_column("deal", footer="total")
        for seat, _ in enumerate(self.seats):
            total = self.totals[seat] if seat < len(self.totals) else 0
            sheet.add_column(self._label(seat), justify="right", footer=str(total))
        for deal, points, shooter in self.deal_scores:
            marks = [f"{p:+d}" + (" moon" if s == shooter else "") for s, p in enumerate(points)]
            sheet.add_row(str(deal), *marks)
        return sheet

    def result_line(self) -> str:
        assert self.result is not None
        result = self.result
        status = STATUS.get(result.status, "?")
        if result.status != P.MATCH_STATUS_FINISHED:
            return f"match {status}: {result.reason}"
        winners = ", ".join(self._name(w) for w in result.winners)
        return f"match finished after {result.deals} deals; winner: {winners}"
