// The lobby: take a seat against the house, and the live and recent matches.
import { el, getJSON, header, keepCurrent, mySeats, nameWords, postJSON, rememberSeat, sayError, seatName, showError } from "./common.js";
import { pageHref, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
let options = null;
let matches = null;
let choice = { ruleset: "standard", players: 4, opponents: [] };
let refused = null; // why Play was refused: said under the form (in each language) until a choice changes or Play is tried again

header("lobby", () => { drawForm(); render(); });

function playForm() {
  const rules = options.rulesets.find((r) => r.name === choice.ruleset) ?? options.rulesets[0];
  if (!rules.players.includes(choice.players)) choice.players = rules.default_players;
  const opponents = Array.from({ length: choice.players - 1 }, (_, i) => choice.opponents[i] ?? options.opponents[0]);
  choice.opponents = opponents;
  const select = (id, label, values, current, onchange, text = (v) => v) => [
    el("label", { for: id }, label),
    el("select", { id, onchange: (e) => { onchange(e.target.value); refused = null; drawForm(); } },
      values.map((v) => el("option", { value: v, selected: String(v) === String(current) }, text(v)))),
  ];
  // Drawn again with the form (a choice, the language), the refusal stays said (before, a
  // language change drew the form anew without it).
  const error = sayError(el("p", { class: "error", role: "alert", id: "play-error" }), refused);
  return el("form", { class: "play-form", onsubmit: async (event) => {
    event.preventDefault();
    refused = null;
    sayError(error, null);
    try {
      const seat = await postJSON("/api/play", choice);
      rememberSeat(seat.match_id);
      location.assign(pageHref(seat.play_url)); // in the language of the address, as a link
    } catch (failure) {
      refused = failure;
      sayError(error, failure);
    }
  } },
  select("ruleset", t("ruleset"), options.rulesets.map((r) => r.name), choice.ruleset, (v) => { choice.ruleset = v; }),
  select("players", t("players"), rules.players, choice.players, (v) => { choice.players = Number(v); }),
  opponents.map((o, i) => select(`opponent-${i + 1}`, t("opponent", { n: i + 1 }), options.opponents, o,
    (v) => { choice.opponents[i] = v; })),
  el("button", { type: "submit", class: "primary", id: "play-button" }, t("play_button")),
  el("p", { class: "muted" }, t(options.human_bank_ms ? "decision_time" : "decision_time_no_bank",
    { s: Math.round(options.human_decision_ms / 1000), bank: Math.round(options.human_bank_ms / 1000) })),
  error);
}

function matchItem(match, live, mine) {
  const id = encodeURIComponent(match.match_id);
  const resume = live && mine.has(match.match_id); // a seat this browser took: back to it
  return el("li", { dataset: { match: match.match_id } },
    resume ? el("a", { href: `/play/${id}`, class: "resume" }, t("resume"))
      : el("a", { href: `/watch/${id}` }, live ? t("watch") : t("replay")),
    el("span", {}, match.ruleset),
    // a running match's count is of the deals played so far ("6 deals" read as a match of six)
    el("span", { class: "muted" }, match.withheld ? t("withheld") : t(live ? "deals_played_n" : "deals_n", { n: match.deals }), " · ",
      t(match.status)),
    // Each seat's name a line of its own words, never broken at its hyphens (nameWords, as
    // the seat labels and the leaderboard): before, "house-" over "heuristic-2" on a phone.
    // A screen reader is given the whole line as text (the names' words are boxes of their own).
    el("span", { class: "seats" }, el("span", { class: "sr-only" }, seatsText(match)),
      el("span", { "aria-hidden": "true" }, match.seats.map((s, i) => [i ? ", " : null,
        el("span", { class: "name", title: seatName(s) }, nameWords(seatName(s)))]),
      match.totals.length ? ` — ${match.totals.join(" / ")}` : "")));
}

function seatsText(match) {
  return `${match.seats.map((s) => seatName(s)).join(", ")}${match.totals.length ? ` — ${match.totals.join(" / ")}` : ""}`;
}

function list(items, live) {
  const mine = mySeats();
  return items.length ? el("ul", { class: "match-list" }, items.map((m) => matchItem(m, live, mine)))
    : el("p", { class: "muted" }, t("nothing_yet"));
}

// The form is drawn again when a choice changes (the opponents follow the player
// count); focus stays on the control that had it.
function drawForm() {
  if (!options) return;
  const focused = document.activeElement?.id;
  $("play").replaceChildren(playForm());
  if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
}

function render() {
  $("heading").textContent = t("title");
  $("play-title").textContent = t("play_title");
  $("live-title").textContent = t("live_matches");
  $("recent-title").textContent = t("recent_matches");
  if (matches) {
    // A keyboard user on a match's link stays on it when the lists are drawn again.
    const focused = document.activeElement?.closest?.("#live li, #recent li");
    const place = focused ? [focused.closest("#live, #recent").id, focused.dataset.match] : null;
    $("live").replaceChildren(list(matches.live, true));
    $("recent").replaceChildren(list(matches.recent, false));
    if (place) document.querySelector(`#${place[0]} li[data-match="${CSS.escape(place[1])}"] a`)?.focus();
  }
}

// The match lists, kept current. Drawn anew every 5 s whatever came, the lists took a
// keyboard user's place away each time, and a hidden tab asked as often as a shown one:
// keepCurrent. A refused refresh keeps what the page shows (before, it replaced the live
// list with the error); a failure before anything was drawn is said.
const POLL_MS = 5_000;
const POLL_MAX_MS = 60_000;

async function start() {
  try {
    options = await getJSON("/api/options");
  } catch (error) {
    showError($("play"), error);
  }
  drawForm();
  render();
  keepCurrent(() => getJSON("/api/matches"), (fresh) => { matches = fresh; render(); },
    (error, shown) => { if (!shown) showError($("live"), error); }, POLL_MS, POLL_MAX_MS);
}

start();
