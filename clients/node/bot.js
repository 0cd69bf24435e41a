#!/usr/bin/env node
// A Hearts Arena bot in JavaScript: the protocol session (this file) and a simple legal
// strategy (strategy.js). It loads the contract from proto/ at run time, so it needs
// nothing generated.
//
//   npm ci --prefix clients/node            # once (bash scripts/test does it too)
//   node clients/node/bot.js --server 127.0.0.1:50051 --token TOKEN --name NAME \
//       [--rulesets R ...] [--max-matches N] [--matches N] [--proto-dir DIR] [--tls]
//       [--ca FILE] [--cert FILE --key FILE] [--version]
//
// Flags may come from the environment instead: HEARTS_SERVER, HEARTS_TOKEN, HEARTS_NAME,
// HEARTS_PROTO_DIR (default: the repository's proto/, found relative to this file).
// The options, environment variables and exit codes are those of every Hearts Arena
// client (README, "Command-line convention"). --matches N plays N matches: once the Nth
// has started the bot sends `drain` (the server seats it in no new match), finishes its
// running matches and exits 0 when the server ends the stream (0, the default: play
// until Ctrl-C; --matches-to-play, its old name, still works and says it is deprecated). The first Ctrl-C (or SIGTERM)
// drains the same way; a second leaves at once, naming the matches it abandons (exit
// 130). Exit 3 when the server refuses the bot (bad token, wrong name), 4 when it cannot
// be reached (no connection after 5 attempts), 2 on a usage or setup error. A dropped
// stream that once worked is re-opened with exponential backoff and every match is
// resumed from the last event seen (see docs/protocol.md, "Resume").
'use strict';

const path = require('node:path');
const fs = require('node:fs');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const strategy = require('./strategy');

const PACKAGE_VERSION = require('./package.json').version;
const VERSION = `node-bot/${PACKAGE_VERSION}`; // hello.version
const FATAL = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.INVALID_ARGUMENT]);
// A stream that ends with one of these may not have reached the server at all; any other
// status is the server's own answer (a refusal with its reason, to be tried again).
const UNREACHED = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);
const BACKOFF_MS = [200, 10_000];
const CONNECT_ATTEMPTS = 5; // a server never reached is given up after this many tries
const RETRY_SAID_MS = 60_000; // during an outage, "still reconnecting" at most this often
// The finished matches whose ids are kept, the newest (as heartsbot's SEEN_KEPT), so that
// what still comes of one after its `match_ended` is dropped: another seat's of it (a bot may
// hold several), a replay the stream was already sending (a rebuilt seat's history). That
// comes soon after the end, never thousands of matches later. Before, every match id was
// kept for good (and every started one): a ladder bot that ran for weeks grew by two per match.
const ENDED_KEPT = 4096;
const INT32_MAX = 2 ** 31 - 1; // hello.max_concurrent_matches is an int32
// A final `draining` the bot did not ask for: what to do, by its `cause` (bot.proto).
const SENT_AWAY = {
  DRAIN_CAUSE_TOKEN_ROTATED: 'the organiser issued a new token and the old one no longer connects; '
    + 'leaving (start again with the new token)',
  DRAIN_CAUSE_REPLACED: 'another instance of this bot connected and plays in its place; leaving',
};
// The exit codes of every Hearts Arena client (clients/python/heartsbot/exits.py; README).
const EXIT = { done: 0, usage: 2, refused: 3, unreachable: 4, abandoned: 130 };
const USAGE = `usage: node bot.js [--server HOST:PORT] --token TOKEN --name NAME [options]

  --server HOST:PORT    the server (env HEARTS_SERVER; default 127.0.0.1:50051)
  --token TOKEN         the bot's token (env HEARTS_TOKEN; required)
  --name NAME           the bot name the token was issued for (env HEARTS_NAME; required)
  --rulesets R [R ...]  rulesets the bot plays, by spaces or commas (default: all)
  --max-matches N       matches at once, at least 1 (hello.max_concurrent_matches; default 1)
  --matches N           play N matches, then finish them and exit 0 (default: 0, until Ctrl-C)
                        (--matches-to-play N: its old name, deprecated)
  --proto-dir DIR       where hearts/v1/bot.proto is (env HEARTS_PROTO_DIR; default: the repository's proto/)
  --tls                 connect over TLS (trusting the system's CAs)
  --ca FILE             trust this PEM certificate authority (implies --tls; default: the system's CAs)
  --cert FILE           present this PEM client certificate (mutual TLS; with --key; default: none)
  --key FILE            the PEM private key of --cert (default: none)
  --version             print the version and exit
  -h, --help            print this help and exit

exit codes (the same in every Hearts Arena client):
  0    done: --matches played, or stopped with Ctrl-C after finishing the running matches
       (at once when none was running)
  2    usage: a bad or missing option (--token, --name), a ruleset the server does not know, no proto/
  3    refused by the server: an unknown token, a name that is not the token's, a bad hello
  4    the server could not be reached (never connected after ${CONNECT_ATTEMPTS} attempts; a connection
       that once worked is retried until Ctrl-C)
  130  interrupted: a second Ctrl-C left at once, abandoning running matches`;

const log = (...parts) => console.error('[node-bot]', ...parts);

class UsageError extends Error {}

// `--rulesets a b` takes every word up to the next option, as heartsbot's does: joined
// with commas here, for parseArgs (which takes one value per option).
function joinRulesets(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] !== '--rulesets') { out.push(argv[i]); continue; }
    const names = [];
    while (i + 1 < argv.length && !argv[i + 1].startsWith('-')) names.push(argv[(i += 1)]);
    out.push(`--rulesets=${names.join(',')}`);
  }
  return out;
}

function parseOptions(argv, env) {
  const { values } = parseArgs({
    args: joinRulesets(argv),
    options: {
      server: { type: 'string', default: env.HEARTS_SERVER || '127.0.0.1:50051' },
      token: { type: 'string', default: env.HEARTS_TOKEN || '' },
      name: { type: 'string', default: env.HEARTS_NAME || '' },
      rulesets: { type: 'string', default: '' },
      'max-matches': { type: 'string', default: '1' },
      matches: { type: 'string', default: '' },
      'matches-to-play': { type: 'string', default: '' }, // the old name of --matches
      'proto-dir': { type: 'string', default: env.HEARTS_PROTO_DIR || path.resolve(__dirname, '..', '..', 'proto') },
      tls: { type: 'boolean', default: false },
      ca: { type: 'string', default: '' },
      cert: { type: 'string', default: '' },
      key: { type: 'string', default: '' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', default: false },
    },
  });
  if (values.help) return null;
  if (values.version) return 'version';
  // Sent as it is, a token kept with a file's "\r" made grpc-js throw at the first connect (a
  // stack trace, exit 1). The daemon strips what it reads; a header carries printable ASCII.
  values.token = values.token.trim();
  if (!values.token) throw new UsageError('--token (or HEARTS_TOKEN) is required');
  if (!/^[\x20-\x7e]+$/.test(values.token)) {
    throw new UsageError('--token (or HEARTS_TOKEN) holds a character a gRPC header cannot carry: a token is '
      + 'printable ASCII (as every token heartsd issues)');
  }
  if (!values.name) throw new UsageError('--name (or HEARTS_NAME) is required');
  if (values['matches-to-play'] !== '') {
    log('--matches-to-play is deprecated: use --matches (the same option in every Hearts Arena client)');
    if (values.matches === '') values.matches = values['matches-to-play'];
  }
  if (values.matches === '') values.matches = '0';
  // A count: a whole number from `least` to the int32 the protocol carries, said as heartsbot
  // says it (clients/python/heartsbot/options.py, at_least). Before, 99999999999 was taken and
  // went into hello wrapped around (protobuf's int32), for the server to refuse as negative
  // (exit 3, "a bad hello"), or to cap a number nobody gave.
  const count = (flag, least) => {
    const text = values[flag];
    const n = /^\s*[-+]?\d+\s*$/.test(text) ? Number(text) : NaN;
    if (!Number.isInteger(n)) throw new UsageError(`--${flag}: expected an integer, got '${text}'`);
    if (n < least) throw new UsageError(`--${flag}: must be at least ${least}, got ${n}`);
    if (n > INT32_MAX) throw new UsageError(`--${flag}: must be at most ${INT32_MAX}, got ${text.trim()}`);
    return n;
  };
  if (Boolean(values.cert) !== Boolean(values.key)) {
    throw new UsageError('--cert and --key go together (a client certificate and its key)');
  }
  return {
    server: values.server, token: values.token, name: values.name, protoDir: values['proto-dir'],
    rulesets: values.rulesets.split(',').filter(Boolean),
    // At least 1, as heartsbot's: `hello`'s 0 means 1 (a field left unset), but given as an
    // option it reads as "no limit", as `--matches 0` does: refused rather than taken for 1.
    maxMatches: count('max-matches', 1), matchesToPlay: count('matches', 0),
    credentials: channelCredentials(values),
  };
}

// --tls trusts the system's CAs; --ca FILE (implies --tls) trusts that PEM CA; --cert and
// --key present a client certificate (mutual TLS). Without any: a plain channel.
function channelCredentials({ tls, ca, cert, key }) {
  if (!tls && !ca && !cert) return grpc.credentials.createInsecure();
  const read = (flag, file) => {
    if (!file) return null;
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new UsageError(`--${flag}: cannot read ${file}: ${error.message}`);
    }
  };
  return grpc.credentials.createSsl(read('ca', ca), read('key', key), read('cert', cert));
}

function loadBotService(protoDir) {
  const file = path.join(protoDir, 'hearts', 'v1', 'bot.proto');
  if (!fs.existsSync(file)) throw new UsageError(`no ${file}: point --proto-dir (HEARTS_PROTO_DIR) at the repository's proto/`);
  // Field names as in the .proto, enums as names, uint64 as numbers, unset fields filled
  // in, and `kind` naming which field of a oneof is set.
  const definition = protoLoader.loadSync('hearts/v1/bot.proto', {
    includeDirs: [protoDir], keepCase: true, enums: String, longs: Number, defaults: true, oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).hearts.v1.BotService;
}

class Bot {
  constructor(options, BotService) {
    this.options = options;
    this.client = new BotService(options.server, options.credentials, {
      'grpc.keepalive_time_ms': 20_000,
    });
    // Per seat (seatKey: a bot may hold several seats of one match, each with its own
    // events and requests, numbered alike):
    this.lastSequence = new Map(); // seat -> newest event sequence seen
    this.pending = new Map(); // seat -> { request, avoid, call, sent }: its latest request
    // Finished matches (their `match_ended` seen), the ENDED_KEPT newest (oldest first):
    // anything more of them is dropped.
    this.ended = new Set();
    // Running matches whose `match_started` was seen (one a match, however many seats it
    // has here), forgotten at their end; and how many matches were seen to start, for --matches.
    this.started = new Set();
    this.matchesStarted = 0;
    this.active = new Set(); // matches we are seated in, as far as we have heard
    // Seats this stream rebuilds from their first event (listed in the welcome, nothing
    // of them seen): their history comes whole in answer to `resume` from 0.
    this.rebuilding = new Set();
    // seat -> the last event an earlier process was told (where the server's own replay
    // of a rebuilt seat started, the first update after the welcome; not the live updates
    // that may follow it before the history): its notices, replayed, are not said again.
    this.toldBefore = new Map();
    this.draining = false; // drain sent (or to be sent after the next hello)
    this.drained = false; // the server ended the stream with OK after our last match
    this.abandoned = false;
    this.done = false;
    this.welcomed = false;
    this.everConnected = false;
    // Since when the connection is lost (null: connected, or never), when that was last
    // said, and the reconnects tried since: said once, then at most every RETRY_SAID_MS.
    this.awaySince = null;
    this.awaySaid = 0;
    this.awayAttempts = 0;
    this.call = null;
    this.wake = null;
  }

  // Play until drained (0), abandoned by a second Ctrl-C (130), refused (3), or a server
  // never reached after CONNECT_ATTEMPTS tries (4).
  async run() {
    let delay = BACKOFF_MS[0];
    let attempts = 0; // that did not reach the server (UNREACHED), before the first connection
    for (;;) {
      this.welcomed = false;
      const status = await this.session();
      if (this.abandoned) return EXIT.abandoned;
      if (this.drained) return EXIT.done;
      if (this.done) return EXIT.done;
      // Draining with no match to finish: the drain may have gone into a stream already dead.
      if (this.draining && this.active.size === 0) return EXIT.done;
      if (status.code === grpc.status.INVALID_ARGUMENT && /^unknown rulesets:/.test(status.details || '')) {
        // The presets are the server's to know; a name it does not know in --rulesets is a
        // usage error (2) in every client, as heartsbot's own check makes it, not a refusal.
        console.error(`error: --rulesets: ${status.details} (the server's presets)`);
        return EXIT.usage;
      }
      if (FATAL.has(status.code)) {
        console.error(`error: the server refused bot ${this.options.name}: ${statusName(status.code)}: ${status.details}`);
        return EXIT.refused;
      }
      if (this.welcomed) this.everConnected = true;
      const reached = !UNREACHED.has(status.code);
      if (!this.everConnected && !reached) attempts += 1;
      if (!this.everConnected && !reached && attempts >= CONNECT_ATTEMPTS) {
        console.error(`error: could not connect to ${this.options.server} after ${attempts} attempts `
          + `(${statusName(status.code)}: ${status.details || 'no details'}): is the server running there, `
          + 'and are the host and port right?');
        return EXIT.unreachable;
      }
      if (this.welcomed) delay = BACKOFF_MS[0];
      const wait = Math.round(delay * (0.5 + Math.random()));
      const why = `${statusName(status.code)}: ${status.details || 'no details'}`;
      if (this.welcomed) {
        this.awaySince = this.awaySaid = Date.now();
        this.awayAttempts = 0;
        log(`stream ended (${why}); reconnecting in ${wait} ms`);
      } else if (reached) {
        if (this.awaySince !== null) this.awayAttempts += 1;
        log(`refused by the server (${why}); retrying in ${wait} ms`);
      } else if (this.everConnected) this.stillAway(why);
      else log(`could not connect to ${this.options.server} (attempt ${attempts} of ${CONNECT_ATTEMPTS}; ${why}); retrying in ${wait} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => { clearTimeout(timer); resolve(); };
      });
      if (this.done) return 0;
      delay = Math.min(BACKOFF_MS[1], delay * 2);
    }
  }

  // A reconnect that failed: the outage was said when the stream ended; while it lasts,
  // "still reconnecting" at most every RETRY_SAID_MS (a night's outage would otherwise
  // fill the log with one line per attempt).
  stillAway(why) {
    this.awayAttempts += 1;
    const now = Date.now();
    if (now - this.awaySaid < RETRY_SAID_MS) return;
    this.awaySaid = now;
    log(`still reconnecting: away ${Math.round((now - this.awaySince) / 1000)} s, `
      + `${this.awayAttempts} attempt(s) so far (${why})`);
  }

  stop() {
    this.done = true;
    if (this.call) this.call.end();
    else if (this.wake) this.wake(); // between connections: stop waiting
  }

  // Finish the running matches, take no new ones; run() resolves 0 when the server has
  // ended the stream after the last of them. Sent again after a reconnect.
  drain(reason) {
    if (this.draining) return;
    this.draining = true;
    const running = [...this.active];
    log(`draining (${reason}): finishing ${running.length} running match(es)${running.length ? `: ${running.join(', ')}` : ''}, taking no new ones`);
    if (this.call && this.welcomed) this.call.write({ drain: { reason } });
    else if (running.length === 0) this.stop(); // not connected, nothing to finish: no reason to wait
  }

  // Leave at once: the running matches are abandoned (the server plays their seats by default).
  abandon() {
    const running = [...this.active];
    log(`leaving now, abandoning ${running.length} match(es)${running.length ? `: ${running.join(', ')} (the server plays their seats by default)` : ''}`);
    this.abandoned = running.length > 0;
    this.done = true;
    if (this.call) this.call.cancel();
    else if (this.wake) this.wake();
  }

  // Ctrl-C or SIGTERM (`said`: which, as the log and the drain reason name it): the first
  // drains, the second leaves at once.
  interrupt(said) {
    if (!this.draining) this.drain(said);
    else this.abandon();
  }

  // One stream: hello, then messages until the stream ends; resolves with its status.
  session() {
    return new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${this.options.token}`);
      const call = this.client.Play(metadata);
      this.call = call;
      call.on('data', (message) => this.onMessage(call, message));
      call.on('error', () => {}); // reported through 'status'
      call.on('status', (status) => {
        this.call = null;
        resolve(status);
      });
      call.write({
        hello: {
          name: this.options.name, version: VERSION, rulesets: this.options.rulesets,
          max_concurrent_matches: this.options.maxMatches,
        },
      });
    });
  }

  onMessage(call, message) {
    switch (message.kind) {
      case 'welcome': return this.onWelcome(call, message.welcome);
      case 'update': return this.onUpdate(call, message.update);
      case 'rejected': return this.onRejected(call, message.rejected);
      case 'draining': return this.onDraining(message.draining);
      default: return log(`ignoring an unknown message (${message.kind})`);
    }
  }

  onWelcome(call, welcome) {
    this.welcomed = true;
    const away = this.awaySince === null ? ''
      : `; back after ${((Date.now() - this.awaySince) / 1000).toFixed(1)} s and ${this.awayAttempts + 1} attempt(s)`;
    this.awaySince = null;
    log(`connected as ${welcome.bot_name} (session ${welcome.session_id}, server ${welcome.server_version}${away})`);
    if (!this.everConnected && welcome.active_matches.length === 0 && !this.draining) {
      // Else nothing more is said until the first match, which a ladder may take ~30 s to start.
      log('waiting for a match: the server seats this bot when one starts (an organiser\'s match or '
        + 'tournament, or the ladder if the server runs one, which groups its free bots within about 30 s)');
    }
    // The welcome lists every match the bot is seated in: one we thought running and not
    // listed ended while we were away. What its seat missed, up to `match_ended`, follows
    // if the server kept it (its sequence numbers, kept, drop what we had); a server that
    // restarted aborted it and sends nothing, so this is where we learn it is over.
    const listed = new Set(welcome.active_matches.map((m) => m.match_id));
    for (const matchId of [...this.active].filter((id) => !listed.has(id)).sort()) {
      log(`match ${matchId} ended while this bot was away: its result follows if the server kept it `
        + '(a server that restarted aborted it and has none)');
      this.active.delete(matchId);
      this.started.delete(matchId); // counted already; what follows of it is dropped by sequence
      this.forget(matchId); // it asks nothing more (its sequences stay: its end may follow)
    }
    // The server re-sends what it had not delivered by itself; asking from the last event
    // we saw also covers anything lost in flight. Duplicates are dropped by sequence.
    this.rebuilding.clear();
    for (const active of welcome.active_matches) {
      const seat = seatKey(active.match_id, active.seat);
      const last = this.lastSequence.get(seat) ?? 0;
      if (last === 0) this.rebuilding.add(seat); // a new process: nothing of it seen
      log(`resuming ${active.match_id} (seat ${active.seat}) after event ${last}`);
      this.active.add(active.match_id);
      call.write({ resume: { match_id: active.match_id, seat: active.seat, last_sequence: last } });
    }
    if (this.draining) call.write({ drain: { reason: 'still draining after a reconnect' } });
  }

  // The server drains this stream; with no active match left it is the last message.
  onDraining(draining) {
    if (draining.active_matches.length) {
      log(`the server is draining this stream (${draining.reason}); finishing ${draining.active_matches.join(', ')}`);
    } else {
      this.drained = true;
      const away = SENT_AWAY[draining.cause];
      if (away && !this.draining) log(`the server ended this stream without being asked (${draining.reason}): ${away}`);
      else log(`drained (${draining.reason}): every match finished; leaving`);
    }
  }

  onUpdate(call, update) {
    const matchId = update.match_id;
    if (this.ended.has(matchId)) return;
    this.active.add(matchId);
    const seat = seatKey(matchId, update.seat);
    const first = update.events.length ? update.events[0].sequence : 0;
    if (this.rebuilding.has(seat) && first > (this.lastSequence.get(seat) ?? 0) + 1) {
      // The automatic replay of a match being rebuilt starts after the last request
      // answered (by an earlier process): taking its events as the newest seen would drop
      // the whole history that follows as duplicates (`match_started` with it). Only its
      // end, should it hold one, and its request are taken from it; the rest comes again.
      // Only the first such update says what an earlier process was told: the match goes
      // on until the history comes, and its live updates, skipped here too, start later
      // (taken as the told point, they silenced every default the history then held).
      if (!this.toldBefore.has(seat)) this.toldBefore.set(seat, first - 1);
      const end = update.events.find((event) => event.kind === 'match_ended');
      if (end) this.onEvent(matchId, update.seat, end);
    } else {
      if (first) this.rebuilding.delete(seat); // its history, from the first event
      // The same notice, many times in one update (what a seat played by default missed:
      // one a decision), is said once, with how many times it came.
      const notices = new Map();
      for (const event of update.events) {
        if (event.sequence <= (this.lastSequence.get(seat) ?? 0)) continue;
        this.lastSequence.set(seat, event.sequence);
        this.onEvent(matchId, update.seat, event, notices);
      }
      for (const [text, times] of notices) log(`match ${matchId}: ${text}${times > 1 ? ` (${times} times)` : ''}`);
    }
    const request = update.request;
    if (!request || this.ended.has(matchId)) return; // it may end within this update
    const previous = this.pending.get(seat);
    if (previous && previous.request.request_id === request.request_id && previous.call === call) return; // sent twice
    this.pending.set(seat, { request, avoid: new Set(), call });
    this.answer(call, matchId, seat);
  }

  onEvent(matchId, seat, event, notices = new Map()) {
    if (event.kind === 'match_started') {
      const seats = event.match_started.seats.map((s) => s.name).join(', ');
      log(`match ${matchId} started: ${event.match_started.ruleset.name}, seat ${seat} of [${seats}]`);
      if (this.started.has(matchId)) return; // its other seat's
      this.started.add(matchId);
      this.matchesStarted += 1;
      const target = this.options.matchesToPlay;
      if (target > 0 && this.matchesStarted >= target) this.drain(`${target} match(es) played`);
    } else if (event.kind === 'notice') {
      const text = event.notice.text;
      if (event.sequence > (this.toldBefore.get(seatKey(matchId, seat)) ?? 0)) notices.set(text, (notices.get(text) ?? 0) + 1);
    } else if (event.kind === 'match_ended') {
      const result = event.match_ended.result ?? { reason: 'no result given', totals: [], ranks: [] };
      this.ended.add(matchId);
      if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.values().next().value); // the oldest: long over
      this.started.delete(matchId);
      this.active.delete(matchId);
      this.forget(matchId, true);
      console.log(`match ${matchId} ended (${result.reason}): seat ${seat}, totals ${(result.totals ?? []).join(' ')}, `
        + `rank ${(result.ranks ?? [])[seat] ?? '?'}`);
    }
  }

  // What is kept of a match's seats: their open requests (it asks nothing more) and, with
  // `all`, what they have seen (it has ended: nothing of it comes again).
  forget(matchId, all = false) {
    const prefix = seatKey(matchId, '');
    for (const kept of all ? [this.pending, this.lastSequence, this.toldBefore] : [this.pending]) {
      for (const seat of [...kept.keys()].filter((key) => key.startsWith(prefix))) kept.delete(seat);
    }
  }

  answer(call, matchId, seat) {
    const pending = this.pending.get(seat);
    const { request, avoid } = pending;
    const action = strategy.decide(request, avoid);
    if (!action) return log(`match ${matchId}: no legal action left to try for ${request.request_id}`);
    pending.sent = action;
    call.write({ answer: { match_id: matchId, request_id: request.request_id, ...action } });
  }

  onRejected(call, rejected) {
    const { match_id: matchId, request_id: requestId } = rejected;
    log(`answer rejected in ${matchId} (${rejected.code}): ${rejected.reason}`);
    // The seat whose open request it names (a rejection names the match and the request).
    const seat = [...this.pending.keys()].find((key) => key.startsWith(seatKey(matchId, ''))
      && this.pending.get(key).request.request_id === requestId);
    const pending = this.pending.get(seat);
    if (!rejected.retry || !pending) return;
    // Never offer the rejected cards again: retry with the next choice.
    const { play, pass_cards: pass } = pending.sent ?? {};
    for (const card of play ? [play] : pass ? pass.cards : []) pending.avoid.add(strategy.key(card));
    this.answer(call, matchId, seat);
  }
}

// The key of one seat of one match (match ids never hold a space).
function seatKey(matchId, seat) {
  return `${matchId} ${seat}`;
}

function statusName(code) {
  return Object.keys(grpc.status).find((k) => grpc.status[k] === code) ?? String(code);
}

async function main() {
  let options;
  let BotService;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
    if (options === null) return console.log(USAGE);
    if (options === 'version') return console.log(`node-bot ${PACKAGE_VERSION}`);
    BotService = loadBotService(options.protoDir);
  } catch (error) {
    const usage = error instanceof UsageError || String(error.code).startsWith('ERR_PARSE_ARGS');
    console.error(`error: ${error.message}${usage ? `\n${USAGE}` : ''}`);
    process.exitCode = EXIT.usage;
    return;
  }
  const bot = new Bot(options, BotService);
  process.on('SIGINT', () => bot.interrupt('Ctrl-C'));
  process.on('SIGTERM', () => bot.interrupt('SIGTERM'));
  process.exitCode = await bot.run();
  bot.client.close();
}

if (require.main === module) main();

module.exports = { Bot, parseOptions, ENDED_KEPT }; // for the tests (tests/client/test_node_bot.py)
