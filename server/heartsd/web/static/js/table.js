// The table: seats around it (3 to 7), the trick in the middle, the score panel. Used
// by the Playboard, the live table and replays alike; it draws the state it is given
// (from the server) and decides nothing about the rules.
import { el, namedText, nameWords, seatName, seatShortName } from "./common.js";
import { faceDown, faceUp, shortName } from "./cards.js";
import { cardLabel, positionName, positionShort, t } from "./i18n.js";

const COMPASS = [[0, "east"], [45, "south_east"], [90, "south"], [135, "south_west"], [180, "west"],
                 [225, "north_west"], [270, "north"], [315, "north_east"], [360, "east"]];

// Where seat `seat` sits for a viewer whose own seat (at the bottom) is `bottom`:
// clockwise from the bottom, evenly around the table. Returns {angle, position}.
export function placement(seat, bottom, players) {
  const r = (((seat - bottom) % players) + players) % players;
  const angle = 90 + (r * 360) / players;
  const a = ((angle % 360) + 360) % 360;
  let best = COMPASS[0];
  for (const entry of COMPASS) if (Math.abs(entry[0] - a) < Math.abs(best[0] - a)) best = entry;
  return { angle, position: best[1], relative: r };
}

export function positionOf(seat, bottom, players) { return positionName(placement(seat, bottom, players).position); }

function at(node, angle, rx, ry) {
  const rad = (angle * Math.PI) / 180;
  node.style.setProperty("--x", `${(50 + rx * Math.cos(rad)).toFixed(2)}%`);
  node.style.setProperty("--y", `${(50 + ry * Math.sin(rad)).toFixed(2)}%`);
  return node;
}

// Who is to play next in the open trick, for display ("Waiting for West").
export function nextToPlay(state) {
  const trick = state.trick;
  if (!trick || trick.leader < 0) return -1;
  return (trick.leader + trick.cards.length) % state.ruleset.players;
}

// Each seat's name as its label shows it, and whole (the label's title; the seat's
// aria-label has it too). A label is the seat's short name (seatShortName), wrapped over at
// most two lines of the narrowest seat box: one longer than LABEL_CHARS shows its start and
// its end about an ellipsis, the end being what tells seats apart ("-2"). Two labels that
// would read alike are not cut. Before (a spectator's pass), a name was cut to one line of
// its box: "heuristic (ho…" for both of a table's heuristic seats, "house-heu…" for
// house-heuristic and house-heuristic-2.
export const LABEL_CHARS = 18;
const LABEL_TAIL = 9;

export function seatLabels(seats, you = -1) {
  const shorts = seats.map((seat) => seatShortName(seat, you));
  const cut = (name) => (name.length <= LABEL_CHARS ? name
    : `${name.slice(0, LABEL_CHARS - LABEL_TAIL - 1)}…${name.slice(-LABEL_TAIL)}`);
  const labels = shorts.map(cut);
  return seats.map((seat, i) => ({
    name: seatName(seat, you),
    label: labels.some((other, j) => other === labels[i] && shorts[j] !== shorts[i]) ? shorts[i] : labels[i],
  }));
}

// Draw the table into `root` and its caption (who leads, who won, hearts) into `info`.
// options: bottom (seat drawn at the bottom), you (the viewer's own seat or -1),
// faceUpHands (every hand is drawn elsewhere, face up: replays).
export function renderTable(root, info, state, { bottom = 0, you = -1, faceUpHands = false } = {}) {
  const n = state.ruleset.players;
  root.className = "table";
  root.dataset.players = n;
  const seats = [];
  const toPlay = state.phase === "playing" ? nextToPlay(state) : -1;
  const labels = seatLabels(Array.from({ length: n }, (_, s) => state.seats[s]), you);
  for (let s = 0; s < n; s += 1) {
    const place = placement(s, bottom, n);
    const { name, label } = labels[s];
    const count = state.hand_sizes?.[s] ?? 0;
    const points = state.points_taken?.[s] ?? 0;
    const box = el("section", {
      class: `seat pos-${place.position}${place.position.includes("_") ? " diagonal" : ""}${s === toPlay ? " to-play" : ""}${s === you ? " mine" : ""}`,
      dataset: { seat: s, position: place.position },
      // a named group, as the trick is: a landmark a seat (7 of them at a table of 7) crowded out the page's own
      role: "group",
      "aria-label": t("seat_label", { name, position: positionName(place.position), cards: t("cards_n", { n: count }),
                                       points: t("points_said_n", { n: points }) }), // "1 card", not "1 cards"
    },
    el("span", { class: "who name", title: name }, nameWords(label)), // a line a word (common.js)
    el("div", { class: "line" }, el("span", { class: "where", title: positionName(place.position) },
      el("span", { class: "long" }, positionName(place.position)), el("span", { class: "short" }, positionShort(place.position))),
      // no count for an empty hand: "North 0" read as the seat's score (its label still says "0 cards")
      s === you || faceUpHands || count === 0 ? null : el("span", { class: "stack", "aria-hidden": "true" },
        faceDown({ small: true }), el("span", { class: "count" }, count))),
    el("div", { class: "seat-stats" }, t("points_n", { n: points }),
      el("span", { class: "tricks" }, " · ", t("tricks_n", { n: state.tricks_won?.[s] ?? 0 }))));
    seats.push(at(box, place.angle, 38, 38));
  }
  const showing = state.trick?.cards?.length ? state.trick : state.last_trick;
  const complete = showing && showing.winner !== undefined && showing === state.last_trick;
  const trickBox = el("div", { class: `trick${complete ? " complete" : ""}`, role: "group",
                               "aria-label": showing ? t("trick", { n: showing.number + 1 }) : t("the_trick") });
  for (const played of showing?.cards ?? []) {
    const place = placement(played.seat, bottom, n);
    const card = faceUp(played.card, { small: true });
    // Said with who played it ("You played Queen of clubs"): the card's place on the table
    // says it to the eye only, and a screen reader read the trick as bare cards, so who was
    // winning it was heard once, as each card landed (the Playboard's announcement), and lost.
    card.setAttribute("aria-label", t("played_card", { name: seatName(state.seats[played.seat], you), card: cardLabel(played.card) }));
    card.classList.add("in-trick");
    if (played.seat === showing.leader) card.classList.add("leader");
    if (complete && played.seat === showing.winner) card.classList.add("winner");
    card.dataset.seat = played.seat;
    trickBox.append(at(card, place.angle, 19, 21));
  }
  root.replaceChildren(...seats, trickBox);
  // Who led and who won, each seat's name one line, never broken at its hyphens (namedText;
  // before, "montecarlo-information-" over "set-search-v2 wins the trick" on a phone).
  const caption = el("span", { class: "trick-caption" });
  if (showing && showing.leader >= 0) {
    caption.append(el("span", { class: "leader-text" }, showing.leader === you ? t("you_lead")
      : namedText("leads", { name: seatName(state.seats[showing.leader], you) })));
    if (complete) {
      const points = showing.points ?? 0;
      caption.append(" · ", el("strong", { class: "winner-text" }, showing.winner === you ? t("you_win_trick", { points, n: points })
        : namedText("wins_trick", { name: seatName(state.seats[showing.winner], you), points, n: points })));
    }
  }
  const hearts = el("span", { class: `hearts-state${state.hearts_broken ? " broken" : ""}`,
                              dataset: { broken: state.hearts_broken ? "1" : "0" } },
    el("span", { "aria-hidden": "true" }, "♥ "), state.hearts_broken ? t("hearts_broken") : t("hearts_not_broken"));
  info.className = "table-info";
  info.replaceChildren(hearts, caption);
}

// Every seat's hand face up, one row per seat (replays).
export function renderHands(root, state, { bottom = 0 } = {}) {
  const n = state.ruleset.players;
  root.replaceChildren(...Array.from({ length: n }, (_, i) => {
    const s = (bottom + i) % n;
    const name = seatName(state.seats[s]), where = positionOf(s, bottom, n);
    const row = el("div", { class: "hand-row", dataset: { seat: s } },
      // the seat's name one line, never broken at its hyphens (nameWords, as its label on the
      // table); a screen reader is given it whole as text (its words are boxes of their own)
      el("span", { class: "hand-owner" }, el("span", { class: "sr-only" }, `${name} · ${where}`),
        el("span", { "aria-hidden": "true" }, el("span", { class: "name", title: name }, nameWords(name)), " · ", where)));
    const cards = el("div", { class: "mini-hand" }, (state.hands?.[s] ?? []).map((c) => faceUp(c, { small: true })));
    row.append(cards);
    if (state.passes?.[s]) {
      row.append(el("span", { class: "passed-note" }, "→ ", state.passes[s].map(shortName).join(" ")));
    }
    return row;
  }));
}

// The score panel: a row per deal (moons marked), then the totals.
// Columns are named by table position (short, and the same words as around the table).
export function renderScores(root, state, { you = -1, bottom = you < 0 ? 0 : you } = {}) {
  const n = state.ruleset.players;
  const head = el("tr", {}, el("th", { scope: "col" }, t("deal")),
    Array.from({ length: n }, (_, s) => {
      const position = placement(s, bottom, n).position;
      const full = `${seatName(state.seats[s], you)}, ${positionName(position)}`;
      return el("th", { scope: "col", dataset: { seat: s }, title: full, "aria-label": full },
        s === you ? t("you") : n > 4 ? positionShort(position) : positionName(position));
    }));
  const rows = (state.deal_scores ?? []).map((score) => el("tr", { dataset: { deal: score.deal } },
    el("th", { scope: "row" }, score.deal + 1),
    score.points.map((p, s) => el("td", {
      class: score.shooter === s ? "moon" : null, dataset: { points: p, seat: s },
      title: score.shooter === s ? t("moon_mark") : null,
    }, score.shooter === s ? el("span", { class: "moon-mark", "aria-label": t("moon_mark") }, "☾ ") : null, p))));
  const totals = el("tr", { class: "totals" }, el("th", { scope: "row" }, t("total")),
    (state.totals ?? []).map((p, s) => el("td", { dataset: { points: p, seat: s } }, p)));
  root.replaceChildren(el("table", { class: "scores" }, el("caption", {}, t("score")),
    el("thead", {}, head), el("tbody", {}, rows), el("tfoot", {}, totals)));
}

export function cardsText(codes) { return codes.map(cardLabel).join(", "); }

// A deal's last trick, held in view a moment. Its TrickWon comes with the next deal's start
// (and, at a seat, the next pass request), so the pages drew the next deal at once and the
// last trick was never seen taken (a QA pass); other tricks stay in view until the next card.
// `view(state)` is the state to draw: while the hold lasts, the ended deal as it ended (its
// last trick complete, every hand played out, nothing asked) from the server's `deal_end`;
// `redraw` runs when the hold ends. Only a deal this page was showing is held, and only for
// what is left of `ms` if its last trick was drawn taken already (a snapshot came between).
export const DEAL_END_MS = 1500;

export function dealEndHold(redraw, ms = DEAL_END_MS) {
  let drawn = null; // {deal, since}: the deal last drawn, and since when its last trick was drawn taken
  let held = null; // the ended deal (state.deal_end) while it is held
  const view = (state) => {
    const end = state.deal_end;
    if (!held && drawn && end && end.deal === drawn.deal && state.deal > end.deal) {
      const left = drawn.since === null ? ms : ms - (performance.now() - drawn.since);
      drawn.since = -Infinity; // held once
      if (left > 50) {
        held = end;
        setTimeout(() => { held = null; redraw(); }, left);
      }
    }
    if (held && state.deal > held.deal && !state.result) {
      const n = state.ruleset.players;
      return { ...state, deal: held.deal, phase: "deal_end", request: null, received: null, passed: null, hand: [],
               hands: state.hands ? state.hands.map(() => []) : null, hand_sizes: Array(n).fill(0),
               trick: { number: held.last_trick.number + 1, leader: held.last_trick.winner, cards: [] },
               last_trick: held.last_trick, points_taken: held.points_taken, tricks_won: held.tricks_won,
               hearts_broken: held.hearts_broken };
    }
    held = null;
    const final = Boolean(state.last_trick && !state.trick?.cards?.length && (state.hand_sizes ?? []).every((k) => k === 0));
    if (drawn?.deal !== state.deal) drawn = { deal: state.deal, since: null };
    if (!final) drawn.since = null;
    else if (drawn.since === null) drawn.since = performance.now();
    return state;
  };
  view.holding = () => held !== null;
  return view;
}
