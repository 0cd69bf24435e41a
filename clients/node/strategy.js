// The bot's strategy: pure functions from a DecisionRequest (as @grpc/proto-loader
// decodes it, enums as names) to the action of an Answer. No networking here.
//
// Everything needed is in the request (hand, legal_cards, the trick in progress), so
// the strategy keeps no memory between decisions.
'use strict';

const SUITS = ['SUIT_CLUBS', 'SUIT_DIAMONDS', 'SUIT_HEARTS', 'SUIT_SPADES'];
const RANK_NAMES = [null, null, '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'];
const SUIT_SYMBOLS = { SUIT_CLUBS: 'C', SUIT_DIAMONDS: 'D', SUIT_HEARTS: 'H', SUIT_SPADES: 'S' };

// Ranks arrive as names (RANK_TWO ... RANK_ACE); their enum numbers are the face values.
const RANK_VALUES = {
  RANK_TWO: 2, RANK_THREE: 3, RANK_FOUR: 4, RANK_FIVE: 5, RANK_SIX: 6, RANK_SEVEN: 7, RANK_EIGHT: 8,
  RANK_NINE: 9, RANK_TEN: 10, RANK_JACK: 11, RANK_QUEEN: 12, RANK_KING: 13, RANK_ACE: 14,
};

const rank = (card) => RANK_VALUES[card.rank] ?? 0;
const key = (card) => `${card.suit}/${card.rank}`;
const name = (card) => `${RANK_NAMES[rank(card)] ?? '?'}${SUIT_SYMBOLS[card.suit] ?? '?'}`;
const byRank = (a, b) => rank(a) - rank(b) || SUITS.indexOf(a.suit) - SUITS.indexOf(b.suit);

// PASS: the highest cards we may pass.
function choosePass(request) {
  const sorted = [...request.legal_cards].sort(byRank);
  return sorted.slice(Math.max(0, sorted.length - Math.max(0, request.pass_count | 0))); // slice(-0) is all
}

// PLAY: the lowest legal card that cannot win the trick; else (leading, or every card
// would win) the lowest legal card. `avoid` holds keys of cards the server rejected.
function choosePlay(request, avoid = new Set()) {
  const legal = request.legal_cards.filter((c) => !avoid.has(key(c))).sort(byRank);
  const cards = (request.current_trick?.cards ?? []).map((p) => p.card);
  if (cards.length > 0) {
    const led = cards[0].suit;
    const winning = Math.max(...cards.filter((c) => c.suit === led).map(rank));
    const ducking = legal.filter((c) => c.suit !== led || rank(c) < winning);
    if (ducking.length > 0) return ducking[0];
  }
  return legal[0] ?? null;
}

// MOON: what the server would apply anyway, else adding 26 to the others.
function chooseMoon(request) {
  const fallback = 'MOON_OPTION_ADD_TO_OTHERS';
  const option = request.default_moon_option;
  return option && option !== 'MOON_OPTION_UNSPECIFIED' ? option : fallback;
}

// The action part of an Answer for `request` (one of pass_cards, play, moon), or null
// when nothing is left to try. `avoid`: cards already rejected for this request.
function decide(request, avoid = new Set()) {
  switch (request.kind) {
    case 'DECISION_KIND_PASS': {
      let cards = choosePass(request);
      if (cards.some((c) => avoid.has(key(c)))) cards = request.legal_cards.slice(0, request.pass_count);
      return { pass_cards: { cards } };
    }
    case 'DECISION_KIND_PLAY': {
      const card = choosePlay(request, avoid);
      return card && { play: card };
    }
    case 'DECISION_KIND_MOON':
      return { moon: chooseMoon(request) };
    default:
      return null;
  }
}

module.exports = { choosePass, choosePlay, chooseMoon, decide, key, name };
