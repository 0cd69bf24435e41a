// Small helpers every page uses: building DOM nodes (text only, never HTML from data),
// JSON requests, the page header with its language switch, and seat names.
import { LANGUAGES, language, onLanguage, pageHref, saidAs, setLanguage, t } from "./i18n.js";

// el("a", {href: "/", class: "x"}, "text", child...): attributes, then text or nodes. A
// link to a page of this site keeps the language the page's address names (i18n.js pageHref).
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "href" && tag === "a") node.setAttribute("href", pageHref(String(value)));
    else if (key === "class") node.className = value;
    else if (key === "style") Object.assign(node.style, value); // CSSOM: allowed by the page's CSP
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A name (a bot's, a seat's label) drawn word by word, each word on one line: a name never
// breaks at its hyphens (before, on a phone, "house-" over "heuristic-2", where a line break
// says a new word); lines break between words only ("heuristic, seat 3"). A word wider than
// its box keeps its last NAME_TAIL characters (the end tells house-heuristic from
// house-heuristic-2) and its middle gives way to an ellipsis (arena.css, .name), so a name
// never overflows its box. Whoever draws it gives the whole name as the title.
const NAME_TAIL = 5;

export function nameWords(text) {
  return String(text).split(" ").map((word, i) => {
    const chars = [...word]; // by code point: a tail never starts in the middle of one
    return [i ? " " : null, el("span", { class: "word" }, chars.length <= NAME_TAIL + 2 ? el("span", { class: "head" }, word)
      : [el("span", { class: "head" }, chars.slice(0, -NAME_TAIL).join("")),
         el("span", { class: "tail" }, chars.slice(-NAME_TAIL).join(""))])];
  });
}

// t(key, params) with the names in it drawn as names (nameWords): each one line, never broken
// at its hyphens (before, on a phone, "montecarlo-information-" over "set-search-v2 wins the
// trick"), with the whole name as its title. `names`: the params that are names, each a name
// or a list of names (said ", " apart). A screen reader is given the whole text (the names'
// words are boxes of their own). Returns the nodes to put where the text would be.
const NAME_MARK = "\u0000";

export function namedText(key, params, names = ["name"]) {
  const listed = (k) => [params[k]].flat();
  const whole = t(key, { ...params, ...Object.fromEntries(names.map((k) => [k, listed(k).join(", ")])) });
  const marked = t(key, { ...params, ...Object.fromEntries(names.map((k, i) => [k, `${NAME_MARK}${i}${NAME_MARK}`])) });
  const drawn = marked.split(NAME_MARK).map((part, j) => (j % 2 === 0 ? part
    : listed(names[Number(part)]).map((name, i) => [i ? ", " : null, el("span", { class: "name", title: name }, nameWords(name))])));
  return [el("span", { class: "sr-only" }, whole), el("span", { "aria-hidden": "true" }, drawn)];
}

// `text`, said already (a reason in the daemon's words, or in this language), with each of
// `names` where it stands whole in it (not part of a longer name) drawn as a name, as
// namedText does; the whole text as .sr-only text. The text alone where no name is in it.
export function namesIn(text, names) {
  const found = [...new Set(names.filter(Boolean))].sort((a, b) => b.length - a.length);
  if (!found.length) return text;
  const escaped = found.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  // split with a group: the names at the odd indexes
  const parts = text.split(new RegExp(`(?<![\\p{L}\\p{N}_.-])(${escaped.join("|")})(?![\\p{L}\\p{N}_-])`, "u"));
  if (parts.length === 1) return text;
  return [el("span", { class: "sr-only" }, text), el("span", { "aria-hidden": "true" },
    parts.map((part, i) => (i % 2 ? el("span", { class: "name", title: part }, nameWords(part)) : part)))];
}

export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) node.append(child instanceof Node ? child : document.createTextNode(child));
  return node;
}

// `code`: the server's name for a refusal of a fixed set (a seat's: web/seats.py), if any;
// `params`: the figures its words take (i18n.js refusal_<code>).
export class HttpError extends Error {
  constructor(status, message, code = null, params = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.params = params;
  }
}

// A request that never reached the daemon (status 0: the network is gone, the daemon is down)
// or that a proxy in front of it answered with its own error page (5xx, no JSON) is said as
// what it means for the person, in the page's language (refusal_unreachable,
// refusal_not_answering). Before, the browser's words were shown ("Lỗi: Failed to fetch"
// on a Vietnamese page) or the proxy's status ("Error: Bad Gateway").
export async function getJSON(url, options = {}) {
  let response;
  try {
    response = await fetch(url, { headers: { Accept: "application/json" }, ...options });
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw new HttpError(0, "the server could not be reached; check your connection and try again", "unreachable");
  }
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  if (response.ok) return body;
  if (body?.error) throw new HttpError(response.status, body.error, body.code ?? null);
  if (response.status >= 500) {
    throw new HttpError(response.status, `the server is not answering (HTTP ${response.status}); try again in a moment`,
      "not_answering", { status: response.status });
  }
  throw new HttpError(response.status, response.statusText || `HTTP ${response.status}`);
}

export function postJSON(url, data) {
  return getJSON(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
                        body: JSON.stringify(data) });
}

export function socketURL(path) {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
}

// The header of every page: title, navigation, language switch. `rerender` runs when
// the language changes (pages keep their state and draw again); `title` names the page
// when it is not its navigation entry's (a bot's page is under the leaderboard).
// Returns a function that names the tab again, for a page whose `title` changes with its
// data (a table's tab names its seats once they are known: watch.js).
export function header(active, rerender, title = () => t(active)) {
  let bar = document.getElementById("top");
  if (!bar) {
    bar = el("header", { id: "top" });
    document.body.prepend(bar);
  }
  const retitle = () => {
    const named = `${title()} · ${t("title")}`;
    if (document.title !== named) document.title = named;
  };
  const draw = () => {
    retitle();
    const select = el("select", { id: "lang", "aria-label": t("language"), onchange: (e) => setLanguage(e.target.value) },
      Object.entries(LANGUAGES).map(([code, name]) => el("option", { value: code, selected: code === language() }, name)));
    bar.replaceChildren(
      el("a", { class: "brand", href: "/" }, "♥ ", t("title")),
      el("nav", {}, el("a", { href: "/", "aria-current": active === "lobby" ? "page" : null }, t("lobby")),
        el("a", { href: "/leaderboard", "aria-current": active === "leaderboard" ? "page" : null }, t("leaderboard"))),
      el("label", { class: "lang" }, select));
  };
  draw();
  // The page's own links (an error page's, in its HTML) keep the address's language as those it draws do.
  for (const link of document.querySelectorAll("a[href]")) link.setAttribute("href", pageHref(link.getAttribute("href")));
  onLanguage(() => { draw(); rerender?.(); });
  return retitle;
}

// A seat's name for people: "house:heuristic" -> "heuristic (house, seat 2)", "human:h-1a2b" -> "Guest 1a2b"
// ("Tamu 1a2b", "Khách 1a2b").
export function seatName(seat, you = -1) {
  if (!seat) return "?";
  if (seat.seat === you) return t("you");
  if (seat.human) return t("guest", { id: seat.name.split("-").pop() });
  // House seats of one strategy share a name: the seat number tells them apart.
  if (seat.house) return t("house_seat", { name: seat.name.replace(/^house:/, ""), n: seat.seat + 1 });
  return seat.name;
}

// A seat's name where room is short (a seat's label on the table): a house seat without
// "house" ("heuristic, seat 2"); the seat's aria-label and the label's title say it whole.
export function seatShortName(seat, you = -1) {
  if (seat?.house && seat.seat !== you) return t("house_seat_short", { name: seat.name.replace(/^house:/, ""), n: seat.seat + 1 });
  return seatName(seat, you);
}

// The seats this browser took (match ids, newest last): the lobby offers "Resume" for
// those still live. Only a hint for the page; the seat's cookie is what lets it play.
const SEATS_KEY = "seats";
const SEATS_KEPT = 20;

export function mySeats() {
  try {
    const ids = JSON.parse(localStorage.getItem(SEATS_KEY) || "[]");
    return new Set(Array.isArray(ids) ? ids.filter((id) => typeof id === "string") : []);
  } catch {
    return new Set();
  }
}

export function rememberSeat(matchId) {
  const ids = [...mySeats()].filter((id) => id !== matchId);
  ids.push(matchId);
  try { localStorage.setItem(SEATS_KEY, JSON.stringify(ids.slice(-SEATS_KEPT))); } catch { /* private mode */ }
}

// An address of nothing (404): the page says so as a whole, title and heading, with the
// reason and the way back, rather than an error over an empty table or profile (a browser
// pass: /watch/<unknown> kept its title "Watch" and drew the empty table). `heading` is the
// i18n key of what is missing ("Not found" unless the page knows better), `message` the
// page's own words for it (a function: drawn again in each language; else the server's
// reason), `links` the real pages to go on to ([href, text] pairs), before the lobby. Words
// and a link's text may be nodes (a name drawn by namedText or namesIn).
export function showNotFound(error, { heading = "page_not_found", message = null, links = () => [] } = {}) {
  const draw = () => {
    document.title = `${t(heading)} · ${t("title")}`;
    const ways = [...links(), ["/", t("back_to_lobby")]];
    document.getElementById("main").replaceChildren(
      el("h1", { id: "heading" }, t(heading)),
      el("p", { class: "error", role: "alert" }, message ? message() : error.message || String(error)),
      el("p", { class: "ways" }, ways.map(([href, text], i) => [i ? " · " : "", el("a", { href }, text)])));
  };
  draw();
  onLanguage(draw);
}

// A page asked for a ruleset that is none (?ruleset=nope): said as the page's subject
// missing, with the page in each ruleset there is (`link(name)`: [href, text]; /api/options lists them).
export async function showUnknownRuleset(error, ruleset, link) {
  let names = [];
  try { names = (await getJSON("/api/options")).rulesets.map((r) => r.name); } catch { /* the lobby link stays */ }
  showNotFound(error, { heading: "unknown_ruleset", message: () => t("no_such_ruleset", { name: ruleset }),
                        links: () => names.map(link) });
}

// Ask `load` again every `every` ms while the page is in view (and once at once), one
// request at a time: the next only once the last has been answered and handled. After a
// failure (the server's rate, a restart, a lost connection) the wait doubles, up to `max`;
// `load` keeps what the page shows then. It returns false when the page is not to ask again.
function pollWhileShown(load, every, max) {
  let wait = every;
  const poll = async (first) => {
    if (first || !document.hidden) {
      try {
        if ((await load()) === false) return;
        wait = every;
      } catch {
        wait = Math.min(wait * 2, max);
      }
    }
    setTimeout(() => poll(false), wait);
  };
  poll(true);
}

// A page's data kept current while the page is shown (pollWhileShown): `fetch` asked again
// every `every` ms, and what it brings drawn (`draw`) only when it changed (its JSON), so an
// unchanged refresh leaves the page as it is (a selection in it, a keyboard user's or a
// screen reader's place: drawn anew each time, they were lost). A failure is the page's to
// say (`failed(error, shown)`, `shown`: whether anything was drawn yet; a refused refresh
// keeps what the page shows): it returns false when the page is not to ask again, else the
// next request waits longer. Returns `now()`: ask at once, as afresh (another ruleset: a
// failure is said as the first one).
export function keepCurrent(fetch, draw, failed, every, max) {
  let drawn = null; // what was last drawn (its JSON)
  const load = async () => {
    let fresh;
    try {
      fresh = await fetch();
    } catch (error) {
      if (failed(error, drawn !== null) === false) return false;
      throw error; // asked for again, after a longer wait
    }
    const text = JSON.stringify(fresh);
    if (text !== drawn) {
      drawn = text;
      draw(fresh);
    }
    return true;
  };
  pollWhileShown(load, every, max);
  return () => {
    drawn = null;
    return load();
  };
}

// Errors a page shows in place; a 404 is the page's own subject missing (showNotFound, with
// `notFound`: the page's own words for it, in each language).
export function showPageError(container, error, notFound = {}) {
  if (error?.status === 404) showNotFound(error, notFound);
  else showError(container, error);
}

export function showError(container, error) {
  container.replaceChildren(sayError(el("p", { class: "error", role: "alert" }), error));
}

// The errors on the page (each line's node, and the error it says): said again when the
// language changes, before the page draws itself again (this listener is the first). Before,
// an error stayed in the language it was first said in while the rest of the page changed.
const errorLines = new Map();
onLanguage(() => {
  for (const [node, error] of errorLines) {
    if (node.isConnected) node.textContent = t("error", { message: refusalText(error) });
    else errorLines.delete(node); // gone from the page
  }
});

// `node` says `error` ("Error: ..." in this language, and in each the page is switched to);
// null: nothing. Returns `node`.
export function sayError(node, error) {
  for (const line of errorLines.keys()) if (!line.isConnected && line !== node) errorLines.delete(line);
  if (error === null) {
    errorLines.delete(node);
    node.textContent = "";
  } else {
    errorLines.set(node, error);
    node.textContent = t("error", { message: refusalText(error) });
  }
  return node;
}

// A refusal's reason in this language where the server names it (its code: web/seats.py),
// else the server's words.
export function refusalText(error) {
  return saidAs(error?.code ? `refusal_${error.code}` : null, error?.params ?? {}, error?.message || String(error));
}

// A reason of the server's fixed set (`known`: its key and figures, web/present.py's
// reason_key) in this language, by the words `prefix` + its key; else `fallback`, the
// server's. A reason the server said after a wait for the seats ("waited 30 s for the
// seats: ...", its figure `waited_s`) says that wait too: before, only what it waited for.
// A shutdown that cut such a wait short says in brackets why the seats were not free (its
// figure `not_free`, that reason's key): before, "the server is shutting down" alone; a
// reason this language has no words for is the server's, whole.
export function reasonText(prefix, known, fallback) {
  let said = saidAs(known ? `${prefix}${known.key}` : null, known ?? {}, null);
  if (said !== null && known.not_free !== undefined) {
    const why = saidAs(known.not_free ? `${prefix}${known.not_free}` : null, known, null);
    said = why === null ? null : t("seats_not_free", { reason: said, why });
  }
  if (said === null) return fallback;
  return known.waited_s === undefined ? said : t("waited_for_seats", { s: known.waited_s, reason: said });
}

// Why a match ended, in this language where it is one of the server's fixed reasons
// (result.reason_key: web/present.py), else the server's words (an operator's, say).
export function endReason(result) {
  if (result.refusal) return refusalText(result.refusal); // no record: the server's refusal says why (playboard.js)
  return reasonText("end_", result.reason_key, result.reason);
}
