// The table view: a live match for spectators (its public feed only: no card is shown
// before it is played), or a finished match as a replay with every hand, step by step.
// Like the Battlesnake board, one page serves both, driven by URL parameters:
//   /watch/<id>?deal=3&trick=5     deal 3 (1-based), after its 5th trick (0: as dealt)
//   &step=12                       or the 12th step of that deal (0: as dealt)
//   &autoplay=1&speed=2            play from there, twice the normal pace
import { HttpError, el, endReason, getJSON, header, namedText, refusalText, sayError, seatName, showPageError, socketURL } from "./common.js";
import { shortName } from "./cards.js";
import { onLanguage, t } from "./i18n.js";
import { dealEndHold, renderHands, renderScores, renderTable } from "./table.js";

const matchId = decodeURIComponent(location.pathname.split("/").pop());
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const STEP_MS = 800;
const HELD_RETRY_MS = 3000; // a held replay (a duplicate set still playing) is asked for again this often
// The refusals (their codes: spectating.py) of a replay that comes later by itself: held while
// its duplicate set plays, or a match still running (here, or on another daemon of the store).
// Any other (a match without a record) is for good: said once, not asked for again.
const HELD = new Set(["set_running", "running", "running_elsewhere"]);
let held = null; // the refusal of a replay that is held, while it is
let mode = null;
let live = null; // the latest live snapshot
const SPEEDS = [0.5, 1, 2, 4, 8]; // the replay's paces (?speed= takes one of them)
let replay = null; // {index, frames: Map(deal -> frames), deal, step, timer, speed}
// A 404 of the feed or the record: no match has this id (said in the page's language).
const NO_MATCH = { message: () => t("no_such_match", { id: matchId }) };

// The tab names the table it shows: its seats, then the match (before, every table's tab
// read "Watch", and a spectator with several open could not tell them apart). House seats
// by their strategy alone: the tab is narrow, and the match id tells two house tables apart.
const retitle = header("watch", () => draw(), tabTitle);

function tabTitle() {
  const seats = mode === "replay" ? replay?.index?.seats : live?.seats;
  const match = t("watch_heading", { id: matchId });
  if (!seats?.length) return match;
  const names = seats.map((s) => (s.house ? s.name.replace(/^house:/, "") : seatName(s)));
  return `${names.join(", ")} · ${match}`;
}

function draw() {
  $("heading").textContent = t("watch_heading", { id: matchId }); // for screen readers: the page's name
  if (mode === "live" && live) drawLive();
  if (mode === "replay" && replay) drawReplay();
  if (mode === "replay" && !replay && held) drawHeld();
}

// Why the replay is held, in this language where the server names the reason.
function drawHeld() { status(refusalText(held), "delayed"); }

const BADGES = { live: "live", delayed: "delayed", offline: "offline", replay: "replay_mode" };

function status(text, badge) {
  $("status").replaceChildren(el("span", { class: `badge ${badge}` }, t(BADGES[badge])), " ", text);
}

// -- live ----------------------------------------------------------------------------

// A deal's last trick stays in view a moment before the next deal (table.js).
const liveView = dealEndHold(() => { if (mode === "live" && live) drawLive(); });

function drawLive() {
  const state = liveView(live);
  retitle();
  // With a spectator delay each deal comes once it is over and the delay has passed,
  // played out card by card with every hand (the server paces it): said so, not "Live".
  // A duplicate set's table likewise: each deal once every table of the set has ended it.
  const delayed = state.delay_s > 0 || state.set_table;
  if (state.delay_s > 0) status(t("delay_status", { n: state.deal + 1, s: state.delay_s }), "delayed");
  else if (state.set_table) status(t("set_status", { n: state.deal + 1 }), "delayed");
  else status(t("deal_n", { n: state.deal + 1 }), "live");
  $("table").dataset.deal = state.deal;
  const faceUp = Boolean(state.hands);
  renderTable($("table"), $("table-info"), state, { bottom: 0, you: -1, faceUpHands: faceUp });
  $("hands").hidden = !faceUp;
  if (faceUp) renderHands($("hands"), state, { bottom: 0 });
  renderScores($("scores"), state, { you: -1, bottom: 0 });
  const note = $("decision");
  note.hidden = false;
  note.replaceChildren(el("span", { class: "muted" },
    state.delay_s > 0 ? t("delayed_note", { s: state.delay_s })
      : state.set_table ? t("set_note") : t("no_live_cards")));
}

function watchLive() {
  mode = "live";
  const socket = new WebSocket(socketURL(`/ws/watch/${encodeURIComponent(matchId)}`));
  socket.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    if (data.error) {
      mode = "error";
      if (data.status === 409) loadReplay(live !== null); // over: at its end if this page saw it live
      else showPageError($("status"), new HttpError(data.status, data.error, data.code ?? null), NO_MATCH);
      return;
    }
    live = data;
    drawLive();
  });
  socket.addEventListener("close", () => {
    if (mode !== "live") return;
    if (live?.result) { setTimeout(() => loadReplay(true), 300); return; } // over: its record, at its end
    status(t("reconnecting"), "offline"); // not "Live" while nothing comes (the daemon may be down)
    setTimeout(watchLive, 2000);
  });
}

// -- replay --------------------------------------------------------------------------

async function frames(deal) {
  if (!replay.frames.has(deal)) {
    const data = await getJSON(`/api/replay/${encodeURIComponent(matchId)}/deals/${deal}`);
    replay.frames.set(deal, data.frames);
  }
  return replay.frames.get(deal);
}

function dealIndex() { return replay.index.deals.findIndex((d) => d.number === replay.deal); }

async function show(deal, step) {
  const list = await frames(deal);
  replay.deal = deal;
  // A step from the URL may be anything (?step=abc): not a number starts the deal.
  replay.step = Math.max(0, Math.min(Number.isFinite(step) ? Math.trunc(step) : 0, list.length - 1));
  drawReplay();
}

function stepFor(list, trick) {
  if (trick <= 0) return 0;
  const found = list.findIndex((f) => f.tricks_done >= trick);
  return found < 0 ? list.length - 1 : found;
}

async function move(delta) {
  const list = await frames(replay.deal);
  const next = replay.step + delta;
  const i = dealIndex();
  if (next >= list.length && i + 1 < replay.index.deals.length) return show(replay.index.deals[i + 1].number, 0);
  if (next < 0 && i > 0) {
    const previous = replay.index.deals[i - 1].number;
    return show(previous, (await frames(previous)).length - 1);
  }
  if (next >= list.length) stop();
  return show(replay.deal, next);
}

function stop() {
  if (replay.timer) clearInterval(replay.timer);
  replay.timer = null;
  drawControls();
}

function play() {
  if (replay.timer) return stop();
  replay.timer = setInterval(stepped(() => move(1)), STEP_MS / replay.speed);
  return drawControls();
}

// A control's step through the replay, whose deal may have to be fetched: a refusal (the
// server's rate, a restart) is said under the controls, in the page's language, and the
// replay stays where it was, its controls saying so too (autoplay stops). Before (a browser
// pass), it was an unhandled rejection: the page said nothing, and its deal picker showed
// the deal asked for over the one still shown.
function stepped(step) {
  return (...args) => step(...args).then(() => sayError(controls.error, null), (error) => {
    if (replay.timer) stop();
    else drawControls();
    sayError(controls.error, error);
  });
}

// What the step did, the seat's name one line, never broken at its hyphens (namedText;
// before, on a phone, "montecarlo-information-set-" over "search-v2 played 6♦").
function decisionText(state) {
  const d = state.decision;
  if (!d) return t("dealt", { n: state.deal + 1 });
  const name = seatName(state.seats[d.seat]);
  const action = d.kind === "play" ? namedText("played_card", { name, card: shortName(d.cards[0]) })
    : d.kind === "pass" ? namedText("passed_cards", { name, cards: d.cards.map(shortName).join(" ") })
    : namedText("chose_moon", { name, option: t(`moon_${d.moon}`, { n: state.ruleset.deal_total }) });
  return action;
}

// The controls are made once and updated in place: drawn anew with every frame, a control
// lost keyboard focus after each use (Enter on "Step forward" worked once), and a click on
// Pause at 2x-8x was lost (the button pressed was gone before the release).
let controls = null;

function makeControls() {
  const button = (id, symbol, onclick) => el("button", { type: "button", id, onclick }, symbol);
  const dealBy = (delta) => stepped(async () => {
    const i = dealIndex() + delta;
    if (i >= 0 && i < replay.index.deals.length) await show(replay.index.deals[i].number, 0);
  });
  controls = {
    prevDeal: button("prev-deal", "«", dealBy(-1)),
    stepBack: button("step-back", "◀", stepped(() => move(-1))),
    play: button("play", "▶", play),
    stepForward: button("step-forward", "▶▶", stepped(() => move(1))),
    nextDeal: button("next-deal", "»", dealBy(1)),
    speedLabel: el("span"),
    speed: el("select", { id: "speed", onchange: (e) => {
      replay.speed = Number(e.target.value);
      if (replay.timer) { stop(); play(); }
    } }),
    dealLabel: el("span"),
    deal: el("select", { id: "jump-deal", onchange: stepped((e) => show(Number(e.target.value), 0)) }),
    trickLabel: el("span"),
    trick: el("select", { id: "jump-trick", onchange: stepped(async (e) => {
      const target = Number(e.target.value);
      await show(replay.deal, stepFor(await frames(replay.deal), target));
    }) }),
    scrub: el("input", { type: "range", id: "scrub", min: 0, oninput: stepped((e) => show(replay.deal, Number(e.target.value))) }),
    frameNo: el("span", { class: "muted", id: "frame-no" }),
    error: el("p", { class: "error", role: "alert", id: "replay-error" }), // a step refused (stepped)
  };
  const c = controls;
  $("controls").replaceChildren(c.prevDeal, c.stepBack, c.play, c.stepForward, c.nextDeal,
    el("label", {}, c.speedLabel, " ", c.speed), el("label", {}, c.dealLabel, " ", c.deal),
    el("label", {}, c.trickLabel, " ", c.trick), c.scrub, c.frameNo, c.error);
}

// A select's options are replaced only when they change (another deal, another language).
function setOptions(select, options, value) {
  const key = JSON.stringify(options);
  if (select.dataset.options !== key) {
    select.replaceChildren(...options.map(([v, text]) => el("option", { value: v }, text)));
    select.dataset.options = key;
  }
  select.value = String(value);
}

function drawControls() {
  if (!controls) makeControls();
  const c = controls;
  const index = replay.index;
  const list = replay.frames.get(replay.deal) ?? [];
  const info = index.deals[dealIndex()] ?? { tricks: 0 };
  const trickNow = list[replay.step]?.tricks_done ?? 0;
  const name = (node, label) => { node.setAttribute("aria-label", label); node.title = label; };
  name(c.prevDeal, t("prev_deal"));
  name(c.stepBack, t("step_back"));
  name(c.play, replay.timer ? t("pause") : t("play"));
  c.play.textContent = replay.timer ? "❙❙" : "▶";
  name(c.stepForward, t("step_forward"));
  name(c.nextDeal, t("next_deal"));
  c.speedLabel.textContent = t("speed");
  c.dealLabel.textContent = t("jump_deal");
  c.trickLabel.textContent = t("jump_trick");
  setOptions(c.speed, SPEEDS.map((s) => [s, `${s}×`]), replay.speed);
  setOptions(c.deal, index.deals.map((d) => [d.number, d.number + 1]), replay.deal);
  setOptions(c.trick, Array.from({ length: info.tricks + 1 }, (_, k) => [k, k === 0 ? t("trick_start") : t("trick_after", { n: k })]),
    trickNow);
  c.scrub.max = Math.max(0, list.length - 1);
  c.scrub.value = replay.step;
  c.scrub.setAttribute("aria-label", t("frame_n", { k: replay.step, n: list.length - 1 }));
  c.frameNo.textContent = t("frame_n", { k: replay.step, n: Math.max(0, list.length - 1) });
  $("controls").hidden = false;
}

function drawReplay() {
  const index = replay.index;
  retitle();
  if (!index.deals.length) { // over before any card (cancelled at once, say): how it ended is all there is
    status(t("no_cards_played"), "replay");
    drawResult();
    return;
  }
  const frame = replay.frames.get(replay.deal)?.[replay.step];
  if (!frame) return;
  const state = { ...frame, ruleset: index.ruleset, seats: index.seats,
                  deal_scores: index.deal_scores.slice(0, frame.deals_scored) };
  status(t("deal_n", { n: frame.deal + 1 }), "replay");
  const table = $("table");
  Object.assign(table.dataset, { deal: frame.deal, step: replay.step, tricksDone: frame.tricks_done });
  renderTable(table, $("table-info"), state, { bottom: 0, you: -1, faceUpHands: true });
  $("hands").hidden = false;
  renderHands($("hands"), state, { bottom: 0 });
  renderScores($("scores"), state, { you: -1, bottom: 0 });
  const note = $("decision");
  note.hidden = false;
  const d = frame.decision;
  const defaulted = d && !["bot", "house", "human"].includes(d.provenance);
  // replaceChildren writes a null as the text "null": only the parts that exist.
  // Separated in the text too (" · "): run together, a page reader read "played 2♦house bot 0 ms".
  note.replaceChildren(...[el("span", { class: "what" }, decisionText(state)),
    d ? " · " : null,
    d ? el("span", { class: `prov${defaulted ? " default" : ""}`, dataset: { provenance: d.provenance } },
      t(`prov_${d.provenance}`)) : null,
    d ? el("span", { class: "muted think", dataset: { thinkMs: d.think_ms } }, " · ", t("think_ms", { ms: d.think_ms })) : null,
    d?.rejected ? el("span", { class: "muted" }, " · ", t("rejected_n", { n: d.rejected })) : null].filter(Boolean));
  drawControls();
  drawResult();
  const query = new URLSearchParams(location.search);
  query.set("deal", frame.deal + 1);
  query.set("step", replay.step);
  query.delete("trick");
  history.replaceState(null, "", `${location.pathname}?${query}`);
}

function drawResult() {
  const result = replay.index.result;
  const box = $("result");
  box.hidden = false;
  const names = result.winners.map((s) => seatName(replay.index.seats[s]));
  // The final totals and ranks, whatever frame the table shows (its panel: the totals so far),
  // best first as standings are (a newcomer's look: in seat order, "rank 3" came before "rank 2").
  const seats = result.totals.map((_, s) => s).sort((a, b) => (result.ranks[a] ?? 0) - (result.ranks[b] ?? 0) || a - b);
  const final = seats.map((s) => {
    const points = result.totals[s];
    const name = seatName(replay.index.seats[s]);
    const rank = result.ranks[s];
    // each name one line, never broken at its hyphens (namedText; before, on a phone,
    // "montecarlo-information-set-" over "search-v2: 52 (rank 4)")
    return el("li", { dataset: { seat: s, points, rank: rank ?? "" } },
      rank ? namedText("final_rank", { name, points, rank }) : namedText("final_points", { name, points }));
  });
  box.replaceChildren(el("h2", {}, t("result_title")),
    result.status === "finished" ? el("p", {}, namedText(result.winners.length > 1 ? "winners" : "winner", { names }, ["names"]))
      : el("p", {}, t("ended_because", { reason: endReason(result) })),
    final.length ? el("p", {}, t("final_totals")) : "", final.length ? el("ul", { class: "final" }, final) : "");
}

// atEnd: the last frame of the last deal (a watched match that just ended: its final totals),
// not the URL's deal and step.
async function loadReplay(atEnd = false) {
  mode = "replay";
  try {
    const index = await getJSON(`/api/replay/${encodeURIComponent(matchId)}`);
    held = null;
    replay = { index, frames: new Map(), deal: 0, step: 0, timer: null, speed: SPEEDS.includes(Number(params.get("speed"))) ? Number(params.get("speed")) : 1 };
    if (!index.deals.length) {
      drawReplay();
      return;
    }
    const wanted = atEnd ? index.deals[index.deals.length - 1].number : Number(params.get("deal") || 1) - 1;
    const deal = (index.deals.find((d) => d.number === wanted) ?? index.deals[0]).number;
    const list = await frames(deal);
    const step = atEnd ? list.length - 1
      : params.has("trick") ? stepFor(list, Number(params.get("trick"))) : Number(params.get("step") || 0);
    await show(deal, step);
    if (params.get("autoplay") === "1" && !atEnd) play();
  } catch (error) {
    if (error?.status === 409 && HELD.has(error.code)) { // e.g. a duplicate set's table: its replay waits for the set's other tables
      held = error;
      drawHeld();
      setTimeout(() => loadReplay(atEnd), HELD_RETRY_MS);
      return;
    }
    held = null;
    showPageError($("status"), error, NO_MATCH);
  }
}

onLanguage(() => draw());
// The live feed first: for a match that is over it answers 409 at once, and the replay
// is loaded instead (a failed fetch would be a console error in every replay).
$("heading").textContent = t("watch_heading", { id: matchId });
watchLive();
