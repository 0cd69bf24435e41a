// The Playboard: a person's seat. The server sends snapshots of exactly what this seat
// knows (its hand, the legal cards of its request, the public table); the page draws
// them and sends answers. It never decides what is legal: unmarked cards cannot be
// played from the page, and any answer, however sent, is checked by the server.
import { HttpError, el, endReason, getJSON, header, namedText, postJSON, rememberSeat, sayError, seatName, showError, showNotFound,
  socketURL } from "./common.js";
import { faceUp, syncCards } from "./cards.js";
import { cardLabel, language, onLanguage, saidAs, suitName, t } from "./i18n.js";
import { dealEndHold, nextToPlay, positionOf, renderScores, renderTable } from "./table.js";

const matchId = decodeURIComponent(location.pathname.split("/").pop());
const $ = (id) => document.getElementById(id);
let state = null;
let receivedAt = 0;
let lifted = new Set();
let liftedFor = null; // the request the lifted cards belong to
let sentFor = null; // the request an answer was sent for (until the server's next snapshot)
let socket = null;
let retry = 500;
let hint = ""; // why the last clicked card was not played (cleared by the next snapshot)
let passFull = null; // the pass request a card too many was clicked in (until one is lowered)
let left = false; // the person left the table from this page ("Leave table")
let elsewhere = false; // another tab or window has the seat (the socket closed with 4000)
let announced = "";
let offline = false; // the socket is down and the page is reconnecting (said on the status line)
// An answer chosen while the socket was down ({id: its request's, answer}): sent once the
// connection is back, if the server's snapshot then shows that request still open; else
// dropped, and said. Before, a click while reconnecting did nothing and said nothing (the
// status line, drawn over by the next render, was all). A kept answer is sent once: the
// server's snapshot decides, never the page's guess, so no answer goes twice nor to a
// request that is over.
let pending = null;
let pendingNote = null; // what the note under the hand says: {kind: "kept" | "unsent", answer}
let sayFirst = ""; // said before the next announcement (an answer dropped on reconnecting)
// The person plays by keyboard (a key pressed in the hand or the pass bar, no pointer
// since): when the hand empties at a deal's end, or the Pass button goes, the focus falls to
// the page, and the next cards take it back. Before, Enter and the arrows did nothing at
// each new deal until the person found the hand again with Tab (a newcomer's pass).
let byKeyboard = false;

// The tab names the page "Your seat": t("play") is the replay's Play button ("Putar", "Phát": play a recording).
header("play", () => render(), () => t("play_page"));

function send(answer) {
  if (!state?.request) return false;
  // Kept until the connection is back and has brought the seat's snapshot (till then the
  // request shown may be over: an answer to it would be stale).
  if (!socket || socket.readyState !== WebSocket.OPEN || offline) {
    pending = { id: state.request.id, answer };
    pendingNote = { kind: "kept", answer };
    render();
    say(pendingText());
    return false;
  }
  const message = { type: "answer", request_id: state.request.id, ...answer };
  socket.send(JSON.stringify(message));
  sentFor = state.request.id;
  pending = null;
  pendingNote = null;
  render(); // at once: the cards of an answered request are no longer playable
  return true;
}

// The answer kept while the connection is down (sent when it is back), or the one dropped
// because its request was over by then, said in the page's language.
function pendingText() {
  if (!pendingNote) return "";
  const { kind, answer } = pendingNote;
  const what = answer.play ? cardLabel(answer.play) : answer.pass ? answer.pass.map(cardLabel).join(", ")
    : t(`moon_${answer.moon}`, { n: state?.ruleset?.deal_total ?? 26 });
  const how = answer.play ? "play" : answer.pass ? "pass" : "moon";
  return t(`${kind}_${how}`, { what });
}

function renderPending() {
  const box = $("pending");
  const text = state?.result ? "" : pendingText();
  if (box.textContent !== text) box.replaceChildren(text ? el("p", {}, text) : "");
  box.hidden = !text;
}

// The connection is back and the server's snapshot says where the seat is: the kept answer
// goes if its request is still open (and is the person's to answer), else it is dropped.
function settlePending() {
  if (!pending) return;
  const { id, answer } = pending;
  pending = null;
  const request = state.request;
  if (request && request.id === id && !request.answered && !state.auto && !state.result) {
    send(answer);
    return;
  }
  pendingNote = { kind: "unsent", answer };
  sayFirst = pendingText(); // said before what this snapshot asks (announce)
}

// For scripts and tests: send any answer, bypassing what the page allows. The server
// still checks it and the page shows its reason when it refuses.
window.arena = {
  play: (card) => send({ play: card }),
  pass: (cards) => send({ pass: cards }),
  moon: (option) => send({ moon: option }),
  state: () => state,
};

// The open request of `kind` this page may answer, if any. None while another tab has the
// seat: this page's socket is closed, and an answer made here would go nowhere (before, a
// replaced tab lifted cards and enabled "Pass" while its clock ran, and the pass was lost).
function myRequest(kind) {
  if (state?.auto) return null; // the server plays the seat until the person takes it back
  if (elsewhere) return null;
  const request = state?.request;
  return request && request.kind === kind && !request.answered && sentFor !== request.id ? request : null;
}

function directionText() {
  const n = state.ruleset.players;
  const to = state.request?.pass_to ?? state.pass_to;
  if (to === undefined || to < 0) return "";
  return t("to_position", { position: positionOf(to, state.you, n) });
}

function onCard(code) {
  const passing = myRequest("pass");
  if (passing) {
    // A card beyond the pass count is refused, and said: the oldest lifted card is not
    // lowered in its place. The person chose the cards up; one lowered behind their back
    // (off the screen on a phone) would be kept when they meant to pass it. Before, a
    // fourth card went up, "4 of 3 lifted", and the Pass button went off unexplained.
    if (!lifted.has(code) && lifted.size >= passing.pass_count) {
      passFull = passing.id;
      renderPassBar();
      $("announce").textContent = t("pass_full", { n: passing.pass_count });
      return;
    }
    if (lifted.has(code)) lifted.delete(code); else lifted.add(code);
    passFull = null;
    render();
    return;
  }
  const playing = myRequest("play");
  if (playing && playing.legal.includes(code)) send({ play: code });
  else if (playing) { // said here: the page never sends what it knows the rules refuse
    hint = t("not_playable", { card: cardLabel(code), reason: unplayableReason(playing, code) });
    renderRejection();
    $("announce").textContent = hint;
  }
}

// Why a card of the hand may not be played now: the server's reason, sent with the request
// (the engine's, from the seat's own hand and the table: tables.py), translated here.
function unplayableReason(request, code) {
  const why = request.unplayable?.[code];
  return why ? whyText(why) : t("play_marked");
}

// The engine's reason a card may not be played ({reason, card, suit, text}), with the card
// or suit named as the page names them: the server's English where this page has no words for it.
function whyText(why) {
  const key = `why_${why.reason}`;
  const text = t(key, { card: why.card ? cardLabel(why.card) : "", suit: why.suit ? suitName(why.suit) : "" });
  return text === key ? why.text : text;
}

// Why the server refused an answer: its words in English (the most precise: "... may not be
// played on the first trick"), and in another language, where it is one of a fixed set, the
// engine's rule for a card the rules refuse or the refusal's code (too late...); else its words.
function rejectionText(rejection) {
  if (language() === "en") return rejection.reason;
  return rejection.why ? whyText(rejection.why) : saidAs(`rejected_${rejection.code}`, {}, rejection.reason);
}

function onHandKey(event) {
  const cards = [...$("hand").querySelectorAll("[data-card]")];
  const index = cards.indexOf(document.activeElement);
  if (index < 0) return;
  const moves = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1, Home: -Infinity, End: Infinity };
  if (!(event.key in moves)) return;
  event.preventDefault();
  const step = moves[event.key];
  const next = step === -Infinity ? 0 : step === Infinity ? cards.length - 1
    : (index + step + cards.length) % cards.length;
  focusCard(cards, next);
}

function focusCard(cards, index) {
  cards.forEach((card, i) => { card.tabIndex = i === index ? 0 : -1; });
  cards[index]?.focus();
}

function renderHand() {
  const hand = $("hand");
  hand.setAttribute("aria-label", t("your_hand"));
  const hadFocus = hand.contains(document.activeElement);
  const focused = hadFocus ? document.activeElement.dataset.card : null;
  const passing = myRequest("pass");
  const playing = myRequest("play");
  const legal = new Set(playing?.legal ?? []);
  const codes = state.hand ?? [];
  const cards = syncCards(hand, codes, (code) => {
    const card = faceUp(code, { button: true });
    card.addEventListener("click", () => onCard(code));
    return card;
  });
  // The focused card keeps the tab stop only while it can be used (a new trick may make
  // it unplayable: Enter would then do nothing).
  let tabStop = focused && (passing || legal.has(focused)) ? codes.indexOf(focused) : -1;
  for (const [i, card] of cards.entries()) {
    const code = codes[i];
    const usable = passing ? true : legal.has(code);
    card.classList.toggle("legal", Boolean(playing) && legal.has(code));
    card.classList.toggle("not-legal", Boolean(playing) && !legal.has(code));
    card.classList.toggle("lifted", Boolean(passing || state.request?.kind === "pass") && lifted.has(code));
    card.classList.toggle("chosen", Boolean(playing) && pending?.id === playing.id && pending.answer.play === code);
    card.setAttribute("aria-disabled", usable ? "false" : "true");
    if (passing) card.setAttribute("aria-pressed", lifted.has(code) ? "true" : "false");
    else card.removeAttribute("aria-pressed");
    card.setAttribute("aria-label", cardLabel(code));
    if (tabStop < 0 && usable) tabStop = i;
  }
  // With no card to use (the others' turn), the focused card keeps the focus: before, every
  // card the others played sent it back to the first card, and a person reading through
  // their hand with the arrow keys (a screen reader saying each card) could not while waiting.
  if (tabStop < 0 && focused) tabStop = codes.indexOf(focused);
  cards.forEach((card, i) => { card.tabIndex = i === Math.max(0, tabStop) ? 0 : -1; });
  const stillUsable = hand.contains(document.activeElement) && codes.indexOf(focused) === tabStop;
  const lostFocus = byKeyboard && (document.activeElement === document.body || !document.activeElement);
  // Focused once the board is laid out (draw: fitTable), or the focus would scroll the page
  // to where the card was before the table gave way.
  if ((hadFocus || lostFocus) && !stillUsable && cards.length) focusLater = () => focusCard(cards, Math.max(0, tabStop));
}

function renderPassBar() {
  const bar = $("pass-bar");
  const request = state.request?.kind === "pass" ? state.request : null;
  if (state.phase !== "passing") {
    // Until the first trick is won, the cards just received are named.
    const fresh = state.phase === "playing" && state.received && (state.tricks_won ?? []).every((w) => w === 0);
    bar.replaceChildren(fresh ? el("p", { class: "received" },
      t("received", { cards: state.received.map(cardLabel).join(", ") })) : "");
    bar.hidden = !fresh;
    return;
  }
  if (elsewhere) { // nothing to pass from here (myRequest), nor passed: the seat note says where the seat is
    bar.replaceChildren();
    bar.hidden = true;
    return;
  }
  bar.hidden = false;
  if (!request || request.answered || sentFor === request.id) {
    bar.replaceChildren(el("p", {}, t("pass_waiting")));
    return;
  }
  const n = request.pass_count;
  const direction = directionText();
  const button = el("button", { id: "pass-button", type: "button", class: "primary",
                                disabled: lifted.size !== n, onclick: () => {
    if (lifted.size === n) send({ pass: [...lifted] });
  } }, t("pass_button", { direction }));
  // The hint is the status line's (a phone shows it there only, arena.css: a line less under the table).
  bar.replaceChildren(el("p", { class: "hint" }, el("span", { class: "pass-what" }, t("pass_hint", { n, direction })), " ",
    el("span", { class: "lifted-count" }, t("pass_lifted", { k: lifted.size, n }))), button,
    passFull === request.id ? el("p", { class: "pass-full" }, t("pass_full", { n })) : "");
}

function renderStatus() {
  const status = $("status");
  const request = state.request;
  let text = "";
  if (state.result) text = t("result_title");
  else if (elsewhere) text = t("elsewhere");
  else if (offline) text = t("reconnecting"); // kept as the page draws again (a card clicked meanwhile)
  else if (state.auto) text = t("auto_playing");
  else if (request?.kind === "play" && !request.answered) text = state.trick.cards.length ? t("your_turn") : t("your_lead");
  else if (request?.kind === "moon") text = t("moon_title");
  else if (state.phase === "passing") {
    // As the pass bar says: once passed (sent or answered), the others are waited for.
    text = state.pass_direction === "hold" ? t("hold_deal") : !myRequest("pass") ? t("pass_waiting")
      : t("pass_hint", { n: state.ruleset.pass_count, direction: directionText() });
  }
  else if (state.phase === "playing") {
    const seat = nextToPlay(state);
    // the seat's name one line, never broken at its hyphens (namedText, as the trick caption)
    if (seat >= 0 && seat !== state.you) text = namedText("waiting_for", { name: seatName(state.seats[seat], state.you) });
  }
  status.replaceChildren(el("span", { class: "deal-no" }, t("deal_n", { n: state.deal + 1 })), " ", el("span", {}, text));
}

// The clock runs low when the time before the server decides for the person (what is left
// of the decision's time and of the bank) is LOW_CLOCK_MS (10 s) or less, or a third of the
// request's whole time where that is less (a 6 s clock is low at 2 s, not as it opens). It
// is drawn red then, and said once per request (warnLowClock): before, it was only drawn
// (the decision's seconds red under 5 s), and a person who could not see the clock lost
// decisions to it unwarned.
const LOW_CLOCK_MS = 10_000;
let lowSaid = null; // the request whose low clock was said

function clockTimes(request) {
  const spent = request.age_ms + (performance.now() - receivedAt);
  const decision = Math.max(0, request.decision_ms - spent);
  const bank = Math.max(0, request.bank_ms - Math.max(0, spent - request.decision_ms));
  const low = decision + bank <= Math.min(LOW_CLOCK_MS, (request.decision_ms + request.bank_ms) / 3);
  return { decision, bank, low };
}

function renderClock() {
  const clock = $("clock");
  const request = state?.request;
  if (!request || request.answered || state.result || state.auto || elsewhere) {
    clock.replaceChildren();
    clock.hidden = true;
    return;
  }
  clock.hidden = false;
  const { decision, bank, low } = clockTimes(request);
  const share = request.decision_ms ? decision / request.decision_ms : 0;
  clock.replaceChildren(el("span", { class: "label" }, t("clock")), " ",
    el("strong", { class: decision < 5000 || low ? "low" : null }, t("seconds", { s: Math.ceil(decision / 1000) })),
    " ", el("span", { class: "bank" }, t("bank", { s: t("seconds", { s: Math.ceil(bank / 1000) }) })),
    el("div", { class: "bar", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": 100,
                "aria-valuenow": Math.round(share * 100), "aria-label": t("clock") },
      el("div", { class: "fill", style: { width: `${(share * 100).toFixed(1)}%` } })));
}

// Said once per request, as the clock ticks (not as a snapshot is drawn: its own
// announcement would say over it), while the decision is the person's to make here.
function warnLowClock() {
  const request = state?.request;
  if (!request || state.result || request.id === lowSaid || !myRequest(request.kind) || pending?.id === request.id) return;
  const { decision, bank, low } = clockTimes(request);
  if (!low) return;
  lowSaid = request.id;
  const s = Math.ceil((decision + bank) / 1000);
  say(t(`clock_low_${request.kind}`, { s, n: s }));
}

// What the page tells a screen reader at once: in the page's live region, or in the moon
// choice's own while that modal dialog is open (the page behind it is inert to a reader).
function say(text) {
  ($("moon").open ? moonNote : $("announce")).textContent = text;
}

const moonNote = el("p", { class: "moon-note", "aria-live": "assertive" });

function renderMoon() {
  const dialog = $("moon");
  const request = myRequest("moon");
  if (!request) {
    if (dialog.open) dialog.close();
    moonNote.textContent = "";
    return;
  }
  const total = state.ruleset.deal_total;
  dialog.replaceChildren(el("h2", { id: "moon-title" }, t("moon_title")), el("p", {}, t("moon_text")),
    el("div", { class: "choices" }, request.moon_options.map((option) => el("button", {
      type: "button", class: option === request.default_moon ? "primary" : null, dataset: { moon: option },
      onclick: () => send({ moon: option }),
    }, t(`moon_${option}`, { n: total }), option === request.default_moon ? ` ${t("default_choice")}` : ""))),
  moonNote);
  if (!dialog.open) dialog.showModal();
}

// The moon choice is not dismissed: it stays until it is made (or the server makes it).
// Escape closed the dialog (a modal dialog's default), and nothing opened it again: the
// house waits for the choice, so no snapshot came to draw it, and the page said "You shot
// the moon!" with no way to choose until the clock chose the default. Escape is refused;
// should the browser close the dialog anyway (it does not let a page refuse it twice
// without a click between), the open request draws it again.
function keepMoonOpen() {
  const dialog = $("moon");
  dialog.addEventListener("cancel", (event) => event.preventDefault());
  dialog.addEventListener("close", () => { if (state && myRequest("moon")) renderMoon(); });
}

// The seat is played by the server (auto-play after repeated time-outs), or another tab
// took it: say so, with the one button that changes it.
let seatNoteShown = "";

function renderSeatNote() {
  const box = $("seat-note");
  // The same note stays as it is: drawn again with every snapshot (a house bot plays every
  // few hundred ms), its button was replaced between a person's press and release, and the
  // click was lost (the seat stayed on auto-play once in a clean CI run).
  const kind = elsewhere ? "elsewhere" : state?.auto && !state.result ? "auto" : "";
  const shown = kind && `${kind}:${t(kind === "elsewhere" ? "play_here" : "take_back")}`;
  if (shown === seatNoteShown) return;
  seatNoteShown = shown;
  let note = null;
  if (elsewhere) {
    note = [el("p", {}, t("elsewhere")), el("button", { id: "play-here", type: "button", class: "primary", onclick: () => {
      elsewhere = false;
      renderSeatNote();
      connect(); // the seat's snapshot draws its open request here again
    } }, t("play_here"))];
  } else if (state?.auto && !state.result) {
    note = [el("p", {}, t("auto_playing")), el("button", { id: "take-back", type: "button", class: "primary", onclick: () => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "back" }));
    } }, t("take_back"))];
  }
  box.replaceChildren(...(note ?? []));
  box.hidden = !note;
}

function renderRejection() {
  const box = $("rejection");
  const rejection = state.rejection;
  const text = rejection ? t("refused", { reason: rejectionText(rejection) }) : hint;
  box.replaceChildren(text ? el("p", {}, text) : "");
  box.hidden = !text;
}

// What the server decided for the person (their time ran out, they were away...): a line
// that stays until they answer again, drawn again only when it changes (its region is
// polite live: a screen reader says each new one once).
function renderDefaulted() {
  const box = $("defaulted");
  const d = state.defaulted;
  const text = d && !state.result ? defaultedText(d) : "";
  if (box.textContent !== text) box.replaceChildren(text ? el("p", {}, text) : "");
}

function defaultedText(d) {
  const why = t(`defaulted_${d.provenance}`);
  if (d.kind === "pass" && d.cards) return t("defaulted_pass", { why, cards: d.cards.map(cardLabel).join(", ") });
  if (d.kind === "pass") return t("defaulted_pass_unseen", { why, n: state.ruleset.pass_count });
  if (d.kind === "play" && d.cards) return t("defaulted_play", { why, card: cardLabel(d.cards[0]) });
  if (d.kind === "moon" && d.option) {
    return t("defaulted_moon", { why, option: t(`moon_${d.option}`, { n: state.ruleset.deal_total }) });
  }
  return t("defaulted_other", { why });
}

// "Leave table": asked first (the match ends for everyone and cannot be resumed), then
// the server ends the seat's match as it does when the page has been away too long.
function renderLeave() {
  const box = $("leave");
  const shown = Boolean(state && !state.result && !elsewhere && !left);
  if (!shown) {
    box.replaceChildren();
    if ($("leave-dialog").open) $("leave-dialog").close(); // the match ended meanwhile: nothing to leave
    return;
  }
  if (!box.firstChild) {
    box.replaceChildren(el("button", { id: "leave-button", type: "button", onclick: askLeave }, t("leave_button")));
  } else {
    box.firstChild.textContent = t("leave_button");
  }
}

function askLeave() {
  const dialog = $("leave-dialog");
  dialog.replaceChildren(el("h2", { id: "leave-title" }, t("leave_title")), el("p", {}, t("leave_text")),
    el("p", { class: "leave-error", role: "alert" }),
    el("div", { class: "choices" },
      el("button", { id: "leave-stay", type: "button", class: "primary", autofocus: true, onclick: () => dialog.close() },
        t("leave_stay")),
      el("button", { id: "leave-confirm", type: "button", onclick: (event) => leave(event.currentTarget) },
        t("leave_confirm"))));
  if (!dialog.open) dialog.showModal();
}

async function leave(button) {
  const dialog = $("leave-dialog");
  button.disabled = true;
  try {
    await postJSON(`/api/seat/${encodeURIComponent(matchId)}/leave`, {});
  } catch (error) {
    button.disabled = false;
    sayError(dialog.querySelector(".leave-error"), error);
    return;
  }
  left = true;
  dialog.close();
  // The socket brings the match's end; should it not (it was down), the stored record says it.
  if (!state?.result) await matchOver({ message: t("you_left") });
  render();
  $("announce").textContent = t("you_left");
}

// The match's end is said (the result's heading, who won, the person's rank) and its
// heading takes the focus where the game had it (the hand, gone with its last card; the
// page), which brings it on the screen: before, the last card played was the last thing
// said, and on a phone the result was below the screen. Once per page.
let resultSaid = false;

function resultText(result, names, won) {
  const outcome = result.status === "finished"
    ? (won ? t("you_won") : `${t(result.winners.length > 1 ? "winners" : "winner", { names: names.join(", ") })}.`)
    : `${left ? t("you_left") : t("ended_because", { reason: endReason(result) })}`;
  const rank = result.ranks.length ? ` ${t("rank_n", { rank: result.ranks[state.you], n: result.ranks.length })}` : "";
  return `${t("result_title")}. ${outcome}${rank}`;
}

function sayResult(before) {
  const result = state.result;
  if (resultSaid || !result) return;
  resultSaid = true;
  const names = result.winners.map((s) => seatName(state.seats[s], state.you));
  const text = resultText(result, names, result.winners.includes(state.you));
  say(before ? t("said_then", { first: before, then: text }) : text); // after the last card, if just said
  const focus = document.activeElement;
  const heading = $("result").querySelector("h2");
  if (!focus || focus === document.body || focus.closest("#hand, #pass-bar, #leave")) heading.focus();
  else heading.scrollIntoView({ block: "nearest" });
}

function renderResult() {
  const box = $("result");
  const result = state.result;
  if (!result) { box.replaceChildren(); box.hidden = true; return; }
  box.hidden = false;
  const names = result.winners.map((s) => seatName(state.seats[s], state.you));
  const won = result.winners.includes(state.you);
  box.replaceChildren(el("h2", { tabindex: "-1" }, t("result_title")),
    result.status === "finished" // the winners' names each one line, never broken at their hyphens (namedText)
      ? el("p", { class: "winner-line" }, won ? t("you_won") : namedText(result.winners.length > 1 ? "winners" : "winner", { names }, ["names"]))
      : el("p", {}, left ? t("you_left") : t("ended_because", { reason: endReason(result) })),
    result.ranks.length ? el("p", {}, t("rank_n", { rank: result.ranks[state.you], n: result.ranks.length })) : "",
    el("p", {}, el("a", { href: `/watch/${encodeURIComponent(matchId)}` }, t("watch_replay")), " · ",
      el("a", { href: "/" }, t("back_to_lobby"))));  // "" where there is nothing: replaceChildren shows null as text
}

// What a screen reader is told (an assertive live region): each card the others play, and
// each decision the person is asked for, once, after the card played before it.
function announce() {
  const shown = state.trick.cards.length ? state.trick : state.last_trick;
  const last = shown?.cards?.[shown.cards.length - 1];
  const key = last ? `${state.deal}:${shown.number}:${last.card}` : "";
  const played = last && last.seat !== state.you
    ? t("played_card", { name: seatName(state.seats[last.seat], state.you), card: cardLabel(last.card) }) : "";
  let text = key && key !== announced ? played : "";
  announced = key || announced;
  const asked = askedText();
  if (asked) text = played ? t("said_then", { first: played, then: asked }) : asked;
  if (state.rejection) text = t("refused", { reason: rejectionText(state.rejection) });
  if (sayFirst) {
    text = text ? `${sayFirst} ${text}` : sayFirst;
    sayFirst = "";
  }
  if (text) $("announce").textContent = text;
  return text;
}

// The decision the person is asked for now, said once per request (not again as the page
// is drawn again, nor when a reconnect brings the same request); "" if none or said. The
// status line says it too, but is no live region: before, a person who could not see the
// table heard only the others' cards, and had to work out that it was their turn while
// their clock ran. (The moon choice is a dialog, which takes the focus: said as it opens.)
let askedSaid = null;
let receivedSaid = null; // the deal whose cards received were said

function askedText() {
  const request = myRequest("pass") ?? myRequest("play");
  if (!request || request.id === askedSaid) return "";
  askedSaid = request.id;
  if (request.kind === "pass") return t("pass_hint", { n: request.pass_count, direction: directionText() });
  const turn = state.trick.cards.length ? t("your_turn") : t("your_lead");
  // The cards received in the exchange, said with the deal's first play: only the pass bar's
  // line named them, which no screen reader reads unless it is looked for, and three cards of
  // the hand changed unsaid. (Each is a sentence, in every language: one after the other.)
  const fresh = state.received && (state.tricks_won ?? []).every((w) => w === 0);
  if (!fresh || receivedSaid === state.deal) return turn;
  receivedSaid = state.deal;
  return `${t("received", { cards: state.received.map(cardLabel).join(", ") })} ${turn}`;
}

// The page draws `state`, but for a moment after a deal ends, the deal as it ended (its last
// trick taken: table.js) before the next deal's hand and pass.
const dealView = dealEndHold(() => render());

function render() {
  $("heading").textContent = t("play_heading", { id: matchId }); // for screen readers: the page's name
  if (!state || !state.ruleset?.players) return;
  const latest = state;
  state = dealView(latest);
  try {
    draw();
  } finally {
    state = latest;
  }
}

// On a screen too short for the whole board (a phone of 375x667, a laptop), the table gives
// way, down to TABLE_FLOOR (its seats and the trick still apart), so that everything under it
// (the hand, the pass bar, a refusal) is on the screen without scrolling, above the clock
// bar a phone shows at the bottom of the screen (arena.css). Before, on such a phone that bar
// covered the hand's second row of cards and the Pass button was below the screen: a person
// saw and could tap them only after scrolling. Measured after each drawing (what is under
// the table changes with it) and as the window changes size.
const TABLE_FLOOR = { 3: 210, 4: 250, 5: 305, 6: 380, 7: 380 };
const phoneLayout = matchMedia("(max-width: 899px)"); // the clock is the fixed bar (arena.css)
let clockRoom = 56; // the clock bar's height, as last measured while shown

function fitTable() {
  const table = $("table");
  table.classList.remove("fitted");
  const natural = table.getBoundingClientRect().height;
  // The screen's height with a phone browser's bars shown (the root's client height: it does
  // not change as they slide away, as innerHeight does, which would resize the table as the page scrolls).
  let room = document.documentElement.clientHeight;
  if (phoneLayout.matches) {
    if (!$("clock").hidden) clockRoom = $("clock").getBoundingClientRect().height;
    room -= clockRoom + 4; // kept for the bar whether it shows or not: the table does not jump with each turn
  }
  const over = document.querySelector(".play-area").getBoundingClientRect().bottom + window.scrollY - room;
  const floor = Math.min(natural, TABLE_FLOOR[state.ruleset.players] ?? 380);
  const height = Math.max(floor, Math.floor(natural - over));
  if (over <= 0 || height >= natural) return;
  table.style.setProperty("--fit-h", `${height}px`);
  table.classList.add("fitted");
}

let focusLater = null; // the focus a drawing moves, moved once the board is laid out

function draw() {
  const active = document.activeElement; // if drawing removes it (the pass bar), focus goes to the hand
  focusLater = null;
  if (state.request?.kind === "pass" && liftedFor !== state.request.id) {
    lifted = new Set();
    liftedFor = state.request.id;
  }
  document.body.dataset.phase = state.phase;
  renderTable($("table"), $("table-info"), state, { bottom: state.you, you: state.you });
  renderStatus();
  renderPassBar();
  renderHand();
  renderRejection();
  renderPending();
  renderSeatNote();
  renderDefaulted();
  renderLeave();
  renderClock();
  renderScores($("scores"), state, { you: state.you });
  renderResult();
  renderMoon();
  const said = announce();
  fitTable();
  focusLater?.();
  sayResult(said); // once the board is laid out: the result's heading may take the focus
  if (active && active !== document.body && !document.contains(active)) {
    $("hand").querySelector('[tabindex="0"]')?.focus();
  }
}

function connect() {
  $("status").textContent = t("connecting");
  socket = new WebSocket(socketURL(`/api/seat/${encodeURIComponent(matchId)}/socket`));
  socket.addEventListener("open", () => { retry = 500; });
  socket.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    if (data.error) { showError($("status"), data.error); return; }
    state = data;
    offline = false;
    hint = "";
    receivedAt = performance.now();
    // The answer sent is settled once the server's snapshot shows it: answered, refused, or moved on.
    const request = state.request;
    if (sentFor && (!request || request.id !== sentFor || request.answered || state.rejection?.request_id === sentFor)) {
      sentFor = null;
    }
    settlePending(); // an answer kept while the connection was down: sent now, or dropped and said
    render();
  });
  socket.addEventListener("close", async (event) => {
    socket = null;
    // An answer the server has not shown as received may have been lost with the connection
    // (sent into a socket already dead): the request the server sends again on reconnecting,
    // if it is still open, is the person's to answer again. Before, the page took it as
    // answered ("Passed. Waiting for the others…") while the clock ran down to the server's
    // default. One the server did receive is not open again: nothing can be answered twice.
    sentFor = null;
    if (state?.result) return;
    if (event.code === 4000) { // another tab or window took the seat: no reconnecting by itself
      elsewhere = true;
      $("status").textContent = t("elsewhere");
      render(); // no decision offered here any more (myRequest), the seat note says where it is
      return;
    }
    offline = true;
    if (state) render(); else $("status").textContent = t("reconnecting");
    const gone = await seatGone();
    if (gone) { matchOver(gone); return; }
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 8000);
  });
}

// Whether the server says this page's seat is gone (the refusal, or null): a seat's socket
// refused shows the page only a close, so its JSON resource is asked. A 404 (the match is
// over and forgotten, or the daemon restarted) or 403 is for good: reconnecting cannot help.
// A failed request (the daemon is down) is not: the page goes on trying.
async function seatGone() {
  try {
    await getJSON(`/api/seat/${encodeURIComponent(matchId)}`);
    return null;
  } catch (error) {
    return error instanceof HttpError && [403, 404].includes(error.status) ? error : null;
  }
}

// The match is over for this page: drawn as over (no request, no clock), with how it ended
// from the stored record where there is one (the server's refusal where there is none).
async function matchOver(refusal) {
  pending = null; // nothing to send to a match that is over
  pendingNote = null;
  let result = { status: "gone", reason: refusal.message, refusal, totals: [], ranks: [], winners: [] };
  try {
    result = (await getJSON(`/api/replay/${encodeURIComponent(matchId)}`)).result;
  } catch { /* no record to read: the refusal says why */ }
  if (!state) {
    $("status").replaceChildren(el("p", {}, t("ended_because", { reason: endReason(result) })),
      el("p", {}, el("a", { href: `/watch/${encodeURIComponent(matchId)}` }, t("watch_replay"))));
    return;
  }
  state = { ...state, result, request: null, auto: false, phase: "over" };
  render();
}

async function start() {
  $("hand").addEventListener("keydown", onHandKey);
  keepMoonOpen();
  for (const id of ["hand", "pass-bar"]) $(id).addEventListener("keydown", () => { byKeyboard = true; });
  document.addEventListener("pointerdown", () => { byKeyboard = false; });
  try {
    await getJSON(`/api/seat/${encodeURIComponent(matchId)}`);
    rememberSeat(matchId); // it is this browser's: the lobby offers to come back to it
  } catch (error) {
    if (error?.code === "no_match") { // no table ever had this id: its Watch page is a 404 too (a QA pass)
      showNotFound(error, { message: () => t("no_such_table", { id: matchId }) });
      return;
    }
    showError($("status"), error);
    $("status").append(el("p", {}, el("a", { href: `/watch/${encodeURIComponent(matchId)}` }, t("watch"))));
    return;
  }
  connect();
  setInterval(() => {
    if (state && !dealView.holding()) {
      renderClock();
      warnLowClock();
    }
  }, 250);
}

onLanguage(() => render());
addEventListener("resize", () => { if (state?.ruleset?.players) fitTable(); });
$("heading").textContent = t("play_heading", { id: matchId });
start();
