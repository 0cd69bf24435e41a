// Cards in the page. A face-up card carries its identity as data-card="QS" and a label
// a screen reader reads ("Queen of spades"); a face-down card carries neither.
import { cardLabel } from "./i18n.js";

const SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RANK_TEXT = { T: "10" };

export function rankText(code) { const r = code.slice(0, -1); return RANK_TEXT[r] ?? r; }
export function suitSymbol(code) { return SYMBOLS[code.slice(-1)]; }
export function shortName(code) { return `${rankText(code)}${suitSymbol(code)}`; }

// A face-up card: a <button> when `button` (the person's hand), else a <div>.
export function faceUp(code, { button = false, small = false } = {}) {
  const node = document.createElement(button ? "button" : "div");
  if (button) node.type = "button";
  node.className = `card face suit-${code.slice(-1)}${small ? " small" : ""}`;
  node.dataset.card = code;
  node.setAttribute("aria-label", cardLabel(code));
  if (!button) node.setAttribute("role", "img");
  const rank = document.createElement("span");
  rank.className = "rank";
  rank.textContent = rankText(code);
  const suit = document.createElement("span");
  suit.className = "suit";
  suit.setAttribute("aria-hidden", "true");
  suit.textContent = suitSymbol(code);
  node.append(rank, suit);
  return node;
}

export function faceDown({ small = false } = {}) {
  const node = document.createElement("div");
  node.className = `card back${small ? " small" : ""}`;
  node.setAttribute("aria-hidden", "true");
  return node;
}

// Make `container`'s cards exactly `codes`, in order, reusing the nodes already there
// (keyed by data-card), so focus and transitions survive a redraw.
export function syncCards(container, codes, make) {
  const existing = new Map();
  for (const child of container.querySelectorAll(":scope > [data-card]")) existing.set(child.dataset.card, child);
  const wanted = [];
  for (const code of codes) {
    wanted.push(existing.get(code) ?? make(code));
    existing.delete(code);
  }
  for (const stale of existing.values()) stale.remove();
  wanted.forEach((node, index) => {
    if (container.children[index] !== node) container.insertBefore(node, container.children[index] ?? null);
  });
  while (container.children.length > wanted.length) container.lastElementChild.remove();
  return wanted;
}
