// The leaderboard of a ruleset (the ladder's ratings), and tournament standings when
// there are any.
import { el, getJSON, header, keepCurrent, namedText, namesIn, nameWords, reasonText, showError, showUnknownRuleset } from "./common.js";
import { pageHref, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let ruleset = params.get("ruleset") || "standard";
let board = null;
let tournaments = [];
let unknown = false; // ?ruleset= names no ruleset: the page says so (showUnknownRuleset) and stops

header("leaderboard", () => render());

const fixed = (x, digits = 2) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));

// A bot's name in a table: one line, never broken at its hyphens (nameWords); the whole
// name is its title and what a screen reader says (its words are boxes of their own).
function botLink(href, bot) {
  return el("a", { href, class: "name", title: bot, "aria-label": bot }, nameWords(bot));
}

function row(entry) {
  const href = `/bots/${encodeURIComponent(entry.bot)}?ruleset=${encodeURIComponent(ruleset)}`;
  return el("tr", { dataset: { bot: entry.bot } },
    el("td", {}, entry.rank),
    el("td", {}, botLink(href, entry.bot), entry.unreliable ? el("span", { class: "flag" }, " ", t("unreliable")) : null,
      entry.revoked ? el("span", { class: "flag revoked" }, " ", t("revoked")) : null),
    // an owner's name too: one line (before, "house-" over "heuristic-2" on a phone), read whole
    el("td", {}, el("span", { class: "sr-only" }, entry.owner),
      el("span", { class: "name", title: entry.owner, "aria-hidden": "true" }, nameWords(entry.owner))),
    el("td", { dataset: { rating: entry.rating } }, fixed(entry.rating)),
    el("td", {}, fixed(entry.uncertainty)),
    el("td", {}, fixed(entry.conservative)),
    el("td", {}, entry.matches),
    el("td", {}, fixed(entry.points_per_deal), entry.points_per_deal_ci === null ? "" : ` ±${fixed(entry.points_per_deal_ci)}`),
    el("td", {}, `${fixed(entry.default_share * 100, 1)}%`)); // the server's share: the one that sets the flag
}

// A tournament: its progress, its standings (ranks the data separates; ties shared) and
// its finished matches, each linking to its replay.
function tournamentPanel(tour) {
  const head = el("tr", {}, [t("rank"), t("bot"), t("points_per_deal"), "95%", "p(best)", t("matches")]
    .map((h) => el("th", { scope: "col" }, h)));
  // A bot without a deal yet has no rank nor chance of being best: a dash, not "1=" and 0.00
  // (a newcomer's look at a tournament just started: every bot read "1=", p(best) 0.00).
  const rows = tour.standings.map((s) => el("tr", { dataset: { bot: s.bot } },
    // "2=": a rank the data cannot separate from another's (as `heartsd tournament show`)
    el("td", {}, !s.deals ? "—" : s.tied_with.length ? `${s.rank}=` : String(s.rank)), el("td", {}, botLink(`/bots/${encodeURIComponent(s.bot)}?ruleset=${encodeURIComponent(tour.ruleset)}`, s.bot),
      s.unreliable ? el("span", { class: "flag" }, " ", t("unreliable")) : null),
    el("td", {}, fixed(s.points_per_deal)), el("td", {}, `${fixed(s.ci_low)} – ${fixed(s.ci_high)}`),
    el("td", {}, s.deals ? fixed(s.p_best) : "—"), el("td", {}, s.matches)));
  const played = tour.tables.filter((x) => x.status === "finished" && x.match_id);
  const waiting = tour.tables.filter((x) => x.waiting);
  return el("section", { class: "panel tournament", dataset: { tournament: tour.id } },
    el("h3", {}, tour.name, " ", el("span", { class: "muted" },
      `${tour.ruleset} · ${t(tour.status)} · ${tour.matches_finished}/${tour.matches_total}`)),
    tour.standings.length ? el("div", { class: "scroll" }, el("table", { class: "data" }, el("thead", {}, head), el("tbody", {}, rows)))
      : el("p", { class: "muted" }, t("nothing_yet")),
    played.length ? el("p", {}, t("matches"), ": ", played.map((x, i) => [i ? " · " : "",
      el("a", { href: `/watch/${encodeURIComponent(x.match_id)}`, // "3.1" alone said little to a screen reader
        "aria-label": t("round_table", { round: x.round + 1, table: x.table + 1 }) }, `${x.round + 1}.${x.table + 1}`)]))
      : null,
    // Why a table has not started: the daemon's words (e.g. "bot 'x' is not connected"), or
    // in this language where the reason is one of its fixed set (waiting_key: web/present.py).
    // The bot it names one line, never broken at its hyphens (namesIn; before, on a phone,
    // "bot 'montecarlo-information-" over "set-search-v2' is not connected").
    waiting.map((x) => el("p", { class: "muted waiting", dataset: { table: `${x.round}.${x.table}` } },
      namesIn(`${t("waiting")} ${x.round + 1}.${x.table + 1}: ${waitingText(x)}`, [x.waiting_key?.bot]))),
    // Bots of one owner at one table, where the roster left no other way (web/present.py):
    // they share what they know, which whoever reads the standings should be told.
    (tour.shared ?? []).map((x) => el("p", { class: "muted shared", dataset: { owner: x.owner, round: x.round } },
      namedText("shared_owner", { round: x.round + 1, names: x.bots, owner: x.owner }, ["names", "owner"]))));
}

function waitingText(table) {
  return reasonText("wait_", table.waiting_key, table.waiting);
}

// The ruleset picker is made once and updated in place: drawn anew with each load, it lost
// keyboard focus after one arrow key.
let picker = null;

function drawPicker() {
  if (!picker) {
    picker = { label: el("span"), select: el("select", { id: "ruleset", onchange: (e) => {
      ruleset = e.target.value;
      history.replaceState(null, "", pageHref(`?ruleset=${encodeURIComponent(ruleset)}`)); // ?lang= kept
      loadNow().catch(() => {}); // another ruleset's standings (a failure to load them is said); the next refresh asks again
    } }) };
    $("pick").replaceChildren(el("label", {}, picker.label, " ", picker.select));
  }
  picker.label.textContent = t("ruleset");
  if ([...picker.select.options].map((o) => o.value).join() !== board.rulesets.join()) {
    picker.select.replaceChildren(...board.rulesets.map((r) => el("option", { value: r }, r)));
  }
  picker.select.value = ruleset;
}

function render() {
  if (unknown) return;
  $("heading").textContent = `${t("leaderboard")}: ${ruleset}`;
  $("tournaments-title").textContent = t("tournaments");
  if (board) {
    drawPicker();
    const head = el("tr", {}, [t("rank"), t("bot"), t("owner"), t("rating"), t("uncertainty"), t("conservative"),
      t("matches"), t("points_per_deal"), t("defaults")].map((h) => el("th", { scope: "col" }, h)));
    // What orders it: a bot of a higher rating ranked below another read as a mistake (a newcomer's look)
    $("board").replaceChildren(...(board.entries.length
      ? [el("table", { class: "data", id: "standings" }, el("thead", {}, head), el("tbody", {}, board.entries.map(row))),
         el("p", { class: "muted legend", id: "ranked-by" }, t("ranked_by"))]
      : [el("p", { class: "muted" }, t("no_ratings"))]));
  }
  $("tournaments").replaceChildren(tournaments.length ? el("div", {}, tournaments.map(tournamentPanel))
    : el("p", { class: "muted" }, t("no_tournaments")));
}

// The standings and the tournaments.
const fetchBoard = () => Promise.all([
  getJSON(`/api/leaderboard?ruleset=${encodeURIComponent(ruleset)}`), getJSON("/api/tournaments")]);

// A failure to load them: said unless the page shows them already (a refresh's: before, a
// refused refresh replaced the standings with the error). A ruleset that is none ends the
// asking (false): the leaderboard refuses only that (400, as GetLeaderboard), and the page
// said it inside, answered 200, under "Leaderboard: nope" (a QA pass).
function failed(error, shown) {
  if (!board && [400, 404].includes(error?.status)) {
    unknown = true;
    showUnknownRuleset(error, ruleset, (name) => [`/leaderboard?ruleset=${encodeURIComponent(name)}`, `${t("leaderboard")}: ${name}`]);
    return false;
  }
  if (!shown) showError($("board"), error);
  return true;
}

render();
// Kept current while it is shown: the ladder plays on, tournaments progress and their
// tables say why they wait (before, only a reload showed any of it). Drawn anew every
// POLL_MS whatever came, a selection in the table or a screen reader's place in it was
// lost each time: keepCurrent draws only what changed.
const POLL_MS = 10_000;
const POLL_MAX_MS = 120_000;
const loadNow = keepCurrent(fetchBoard, (fresh) => { [board, { tournaments }] = fresh; render(); }, failed,
  POLL_MS, POLL_MAX_MS);
