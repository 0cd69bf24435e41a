// A bot's page: its standing, its rating with the uncertainty over time (an SVG drawn
// here), its reliability, and its latest rated matches with links to their replays.
import { el, getJSON, header, keepCurrent, namedText, namesIn, nameWords, showPageError, showUnknownRuleset, svg } from "./common.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const bot = decodeURIComponent(location.pathname.split("/").pop());
const ruleset = new URLSearchParams(location.search).get("ruleset") || "standard";
let profile = null;

header("leaderboard", () => render(), () => bot);

const fixed = (x, digits = 2) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));

// Rating (mu) as a line over the bot's rated matches, mu ± sigma as a band, and the
// conservative rating (mu - 3 sigma, what the leaderboard ranks by) dashed. The server
// sends a long history thinned (at most a few hundred points, heartsd/web/present.py):
// each point's `n` is its match's number, which places it and ends the axis.
function chart(history) {
  const W = 640, H = 240, L = 44, R = 10, T = 10, B = 28;
  if (!history.length) return el("p", { class: "muted" }, t("no_ratings"));
  const lows = history.map((p) => p.rating - 3 * p.uncertainty);
  const highs = history.map((p) => p.rating + p.uncertainty);
  let lo = Math.min(...lows), hi = Math.max(...highs);
  if (hi - lo < 1) { lo -= 0.5; hi += 0.5; }
  const last = history[history.length - 1];
  const first = history[0].n, span = last.n - first;
  const at = history.map((p) => L + (span ? ((p.n - first) * (W - L - R)) / span : (W - L - R) / 2));
  const y = (v) => T + ((hi - v) * (H - T - B)) / (hi - lo);
  const line = (values) => values.map((v, i) => `${i ? "L" : "M"}${at[i].toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const upper = history.map((p, i) => `${i ? "L" : "M"}${at[i].toFixed(1)},${y(p.rating + p.uncertainty).toFixed(1)}`);
  const lower = history.map((p, i) => `L${at[i].toFixed(1)},${y(p.rating - p.uncertainty).toFixed(1)}`).reverse();
  const ticks = [lo, (lo + hi) / 2, hi];
  return svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", id: "rating-chart",
                      "aria-label": `${t("rating")} ${fixed(last.rating)} ± ${fixed(last.uncertainty)}, ${t("matches_n", { n: last.n })}` },
    svg("path", { class: "band", d: `${upper.join(" ")} ${lower.join(" ")} Z` }),
    // one point: its band a bar across it (a band one point wide is not drawn at all)
    span ? null : svg("line", { class: "spread", x1: at[0], x2: at[0], y1: y(last.rating + last.uncertainty),
                                y2: y(last.rating - last.uncertainty) }),
    svg("path", { class: "line", d: line(history.map((p) => p.rating)) }),
    svg("path", { class: "cons", d: line(lows) }),
    svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }),
    svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }),
    ticks.map((v) => svg("text", { x: 4, y: y(v) + 4 }, fixed(v, 1))),
    // The axis's ends, by match number; a history of one match has one, under its point
    // (before: "1" at each end of an axis one point long).
    span ? [svg("text", { x: L, y: H - 8 }, String(first)), svg("text", { x: W - R - 30, y: H - 8 }, String(last.n))]
      : svg("text", { x: at[0], y: H - 8, "text-anchor": "middle" }, t("match_n", { n: last.n })),
    history.map((p, i) => svg("circle", { cx: at[i], cy: y(p.rating), r: 2.2, class: "line", "data-rating": p.rating })));
}

function render() {
  if (!$("standing-title")) return; // no such bot: the page reads "Not found" (showNotFound)
  // The bot's name one line, never broken at its hyphens (nameWords; before, "montecarlo-"
  // over "information-" on a phone); its whole name the heading's title and accessible name.
  const heading = $("heading");
  if (heading.title !== bot) {
    Object.assign(heading, { className: "name", title: bot });
    heading.setAttribute("aria-label", bot);
    heading.replaceChildren(...nameWords(bot).flat().filter(Boolean));
  }
  $("standing-title").textContent = t("rating");
  $("reliability-title").textContent = t("reliability");
  $("chart-title").textContent = t("rating_over_time");
  $("matches-title").textContent = t("latest_matches");
  $("pick").replaceChildren(el("a", { href: `/leaderboard?ruleset=${encodeURIComponent(ruleset)}` }, `← ${t("leaderboard")}: ${ruleset}`));
  if (!profile) return;
  if (profile.ladder === false) { // a configured bot that plays only in tournaments
    $("standing").replaceChildren(el("p", { class: "muted" }, t("not_on_ladder")));
    for (const id of ["reliability", "chart", "matches"]) $(id).replaceChildren("—");
    return;
  }
  const s = profile.standing;
  const figure = (label, value, id) => [el("dt", {}, label), el("dd", { id: `fig-${id}` }, value)];
  $("standing").replaceChildren(s ? el("dl", { class: "figures" },
    figure(t("rank_word"), s.rank, "rank"), figure(t("owner"), profile.owner, "owner"),
    figure(t("rating"), `${fixed(s.rating)} ± ${fixed(s.uncertainty)}`, "rating"),
    figure(t("conservative"), fixed(s.conservative), "conservative"), figure(t("matches"), s.matches, "matches"),
    figure(t("points_per_deal"), `${fixed(s.points_per_deal)}${s.points_per_deal_ci === null ? "" : ` ±${fixed(s.points_per_deal_ci)}`}`, "ppd"),
    // put out of the ladder by the organiser: it keeps its rating and rank, and plays no match
    s.revoked ? el("dd", { class: "flag revoked" }, t("revoked")) : null)
    : el("p", { class: "muted" }, t("no_ratings")));
  const pct = (n) => (s && s.decisions ? ` (${((n / s.decisions) * 100).toFixed(1)}%)` : "");
  $("reliability").replaceChildren(s ? el("dl", { class: "figures" },
    figure(t("decisions"), s.decisions, "decisions"), figure(t("timeouts"), `${s.timeouts}${pct(s.timeouts)}`, "timeouts"),
    figure(t("illegal_defaults"), `${s.illegal_defaults}${pct(s.illegal_defaults)}`, "illegal"),
    figure(t("disconnect_defaults"), `${s.disconnect_defaults}${pct(s.disconnect_defaults)}`, "disconnects"),
    figure(t("auto_defaults"), `${s.auto_defaults}${pct(s.auto_defaults)}`, "auto"),
    figure(t("defaults"), `${fixed(s.default_share * 100, 1)}%`, "defaults"), // every kind: what sets the flag
    s.unreliable ? el("dd", { class: "flag" }, t("unreliable")) : null) : "");
  // What the chart's lines are: a newcomer could not tell the dashed one, by which the bot is ranked.
  $("chart").replaceChildren(chart(profile.history),
    profile.history.length ? el("p", { class: "muted legend", id: "chart-legend" }, t("chart_legend")) : null);
  // "Deals": how many the match had ("Deal" over "4" read as its fourth deal); "Rank", the bot's
  // place in the match, and its place on the ladder above ("#" read as the row's number)
  const head = el("tr", {}, [t("match"), t("ruleset"), t("seat"), t("rank_word"), t("points"), t("deals")].map((h) => el("th", { scope: "col" }, h)));
  $("matches").replaceChildren(el("table", { class: "data", id: "bot-matches" }, el("thead", {}, head),
    el("tbody", {}, profile.matches.map((m) => el("tr", { dataset: { match: m.match_id } },
      el("td", {}, el("a", { href: `/watch/${encodeURIComponent(m.match_id)}` }, m.match_id)),
      // seats counted from 1, as the table pages name them ("heuristic (house, seat 3)"); the wire's are from 0
      el("td", {}, m.ruleset), el("td", { dataset: { seat: m.seat } }, m.seat + 1), el("td", {}, m.rank), el("td", {}, m.points), el("td", {}, m.deals))))));
}

const profileURL = `/api/bots/${encodeURIComponent(bot)}?ruleset=${encodeURIComponent(ruleset)}`;

// A failure to load the profile: said unless the page shows one already (a refresh's). A bot
// or a ruleset that is none ends the asking (false), the page saying so instead.
function failed(error, shown) {
  if (error?.status === 400) { // ?ruleset= names no ruleset (GetBotProfile checks it first): the bot's pages there are
    // each link's bot name one line, never broken at its hyphens (namesIn; the link's name is its .sr-only text)
    showUnknownRuleset(error, ruleset, (name) => [`/bots/${encodeURIComponent(bot)}?ruleset=${encodeURIComponent(name)}`,
      namesIn(`${bot} · ${name}`, [bot])]);
    return false;
  }
  if (!shown || error?.status === 404) {
    render();
    // the name asked for one line, never broken at its hyphens (namedText)
    showPageError($("standing"), error, { message: () => namedText("no_such_bot", { name: bot }) });
  }
  return error?.status !== 404;
}

// Kept current while it is shown, as the leaderboard is (a spectator's pass: a rated match
// the bot finished while its page was open showed only after a reload): keepCurrent.
const POLL_MS = 15_000;
const POLL_MAX_MS = 120_000;

render();
keepCurrent(() => getJSON(profileURL), (fresh) => { profile = fresh; render(); }, failed, POLL_MS, POLL_MAX_MS);
