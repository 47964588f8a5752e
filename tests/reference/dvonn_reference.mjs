#!/usr/bin/env node
// DVONN reference implementation and differential harness for oppidum.
//
// Written from the rule texts only: docs/RULES.md (section "DVONN" and its notation), the DVONN
// summary among the seed texts, and the published GIPF-project rules. It shares no code with the
// C++ implementation, so that the two can check each other.
//
// Usage:
//   node dvonn_reference.mjs --binary PATH [--games N] [--seed S] [options]
//
// Options:
//   --binary PATH        the oppidum binary to check (required unless --self-test)
//   --games N            random games played from the empty board (default 100)
//   --seed S             seed of every random choice (default 1); the same seed gives the same run
//   --random-positions N hand-made phase-2 positions with random stack layouts (default 200)
//   --moves-sample N     positions whose move list is compared with `oppidum moves`; one process
//                        each, so they are sampled (default 10; the fixed positions come on top)
//   --continuations N    hand-made positions played out to the end and compared with `apply`
//                        (default 10)
//   --apply-games N      games whose moves are replayed by `oppidum apply` (one process each;
//                        default: every game); perft still covers every position of every game
//   --jobs N             binary processes run at once (default 1)
//   --malformed          also check that malformed positions and moves are refused (about 45
//                        more binary processes)
//   --self-test          only check the reference against the worked examples of docs/RULES.md
//   --verbose            print every binary call
//
// Exit status: 0 when nothing differs, 1 on any difference (a minimal reproducer is printed),
// 2 on a usage error.
//
// Requires Node.js 18 or later and nothing else (harness.mjs beside it runs the processes).

import { runBinary as run, runPool, seededRandom } from './harness.mjs';
import process from 'node:process';
import fs from 'node:fs';

// ---------------------------------------------------------------------------------------------
// Board
// ---------------------------------------------------------------------------------------------
//
// RULES.md: five rows of 9, 10, 11, 10 and 9 spaces. A space is (column c, row r), A = 0.
// Row 1: A1..I1, row 2: A2..J2, row 3: A3..K3, row 4: B4..K4, row 5: C5..K5.

const ROWS = [
  { row: 1, first: 0, last: 8 },
  { row: 2, first: 0, last: 9 },
  { row: 3, first: 0, last: 10 },
  { row: 4, first: 1, last: 10 },
  { row: 5, first: 2, last: 10 },
];

// The six steps: (c+1, r), (c-1, r), (c, r+1), (c+1, r+1), (c, r-1), (c-1, r-1).
const DIRECTIONS = [
  [1, 0], [-1, 0], [0, 1], [1, 1], [0, -1], [-1, -1],
];

const CELL_COUNT = 49;
const CELL_COL = [];                 // index -> column
const CELL_ROW = [];                 // index -> row
const CELL_NAME = [];                // index -> "D4"
const INDEX_OF = new Map();          // "c,r" -> index
for (const { row, first, last } of ROWS) {
  for (let c = first; c <= last; c++) {
    INDEX_OF.set(`${c},${row}`, CELL_COL.length);
    CELL_COL.push(c);
    CELL_ROW.push(row);
    CELL_NAME.push(String.fromCharCode(65 + c) + row);
  }
}
if (CELL_COL.length !== CELL_COUNT) throw new Error('board construction');

function cellAt(c, r) {
  const i = INDEX_OF.get(`${c},${r}`);
  return i === undefined ? -1 : i;
}

// NEIGHBOURS[i] lists the existing neighbours; RAY[i][d][k] is the space k+1 steps away in
// direction d, or -1 once the line has left the board.
const NEIGHBOURS = [];
const RAY = [];
for (let i = 0; i < CELL_COUNT; i++) {
  NEIGHBOURS.push([]);
  RAY.push([]);
  for (const [dc, dr] of DIRECTIONS) {
    const n = cellAt(CELL_COL[i] + dc, CELL_ROW[i] + dr);
    if (n >= 0) NEIGHBOURS[i].push(n);
    const ray = [];
    for (let k = 1; k <= 48; k++) ray.push(cellAt(CELL_COL[i] + k * dc, CELL_ROW[i] + k * dr));
    RAY[i].push(ray);
  }
}

const INDEX_BY_NAME = new Map(CELL_NAME.map((name, i) => [name, i]));

// ---------------------------------------------------------------------------------------------
// Position
// ---------------------------------------------------------------------------------------------
//
// A space is null (empty) or a stack { top, height, dvonn }: top is 'W', 'B' or 'R' (a lone
// DVONN piece), height counts every piece, dvonn says whether a DVONN piece is inside.
// The ply decides the side to move and the phase: placement on plies 0..48, moving from 49.

const PLACEMENT_PLIES = 49;
const WHITE = 'W';
const BLACK = 'B';
const RED = 'R';
const PASS = 'PASS';

function emptyPosition() {
  return { cells: new Array(CELL_COUNT).fill(null), ply: 0 };
}

function clonePosition(pos) {
  return { cells: pos.cells.map((s) => (s ? { ...s } : null)), ply: pos.ply };
}

// RULES.md: during placement White on even plies; from ply 49 on White when ply - 49 is even.
function sideToMove(ply) {
  if (ply < PLACEMENT_PLIES) return ply % 2 === 0 ? WHITE : BLACK;
  return (ply - PLACEMENT_PLIES) % 2 === 0 ? WHITE : BLACK;
}

function opponent(colour) {
  return colour === WHITE ? BLACK : WHITE;
}

// What placement ply p puts down: DVONN pieces on plies 0, 1, 2, then the mover's own colour.
function placedPiece(ply) {
  if (ply < 3) return RED;
  return sideToMove(ply);
}

// ---------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------

// "A piece or stack is blocked while all six of its neighbouring spaces exist and are occupied.
// Spaces on the edge of the board are never blocked this way."
function isBlocked(pos, i) {
  const ns = NEIGHBOURS[i];
  if (ns.length < 6) return false;
  for (const n of ns) if (!pos.cells[n]) return false;
  return true;
}

// Stack moves of one colour: "A stack of height h moves exactly h spaces in a straight line ...
// It must land on an occupied space ... never on an empty space or off the board."
function stackMoves(pos, colour) {
  const moves = [];
  for (let i = 0; i < CELL_COUNT; i++) {
    const s = pos.cells[i];
    if (!s || s.top !== colour) continue;
    if (isBlocked(pos, i)) continue;
    if (s.height > 48) continue;
    for (let d = 0; d < 6; d++) {
      const t = RAY[i][d][s.height - 1];
      if (t >= 0 && pos.cells[t]) moves.push(CELL_NAME[i] + CELL_NAME[t]);
    }
  }
  return moves;
}

function isPlacement(pos) {
  return pos.ply < PLACEMENT_PLIES;
}

// All legal actions. Placement: every empty space. Moving: the mover's stack moves; if there are
// none, PASS when the opponent can move; nothing when neither can (the game is over).
function legalActions(pos) {
  if (isPlacement(pos)) {
    const out = [];
    for (let i = 0; i < CELL_COUNT; i++) if (!pos.cells[i]) out.push(CELL_NAME[i]);
    return out;
  }
  const side = sideToMove(pos.ply);
  const own = stackMoves(pos, side);
  if (own.length > 0) return own;
  if (stackMoves(pos, opponent(side)).length > 0) return [PASS];
  return [];
}

function isTerminal(pos) {
  return !isPlacement(pos) && legalActions(pos).length === 0;
}

// "after each move, find the groups of occupied spaces that are connected through the six
// neighbour relation. Every group that contains no DVONN piece is removed". Returns the number
// of pieces removed.
function removeDisconnected(pos) {
  const alive = new Array(CELL_COUNT).fill(false);
  const queue = [];
  for (let i = 0; i < CELL_COUNT; i++) {
    if (pos.cells[i] && pos.cells[i].dvonn) { alive[i] = true; queue.push(i); }
  }
  while (queue.length > 0) {
    const i = queue.pop();
    for (const n of NEIGHBOURS[i]) {
      if (!alive[n] && pos.cells[n]) { alive[n] = true; queue.push(n); }
    }
  }
  let removed = 0;
  for (let i = 0; i < CELL_COUNT; i++) {
    if (pos.cells[i] && !alive[i]) { removed += pos.cells[i].height; pos.cells[i] = null; }
  }
  return removed;
}

// Applies a legal action (checked by the caller) and returns the new position and what happened.
function applyAction(pos, action) {
  const next = clonePosition(pos);
  const info = { removed: 0, capturedDvonn: false, pass: false };
  if (isPlacement(pos)) {
    const i = INDEX_BY_NAME.get(action);
    const piece = placedPiece(pos.ply);
    next.cells[i] = { top: piece, height: 1, dvonn: piece === RED };
  } else if (action === PASS) {
    // RULES.md: "oppidum treats a pass as a move"; the removal step follows every move.
    info.pass = true;
    info.removed = removeDisconnected(next);  // RULES.md: the removal step follows a pass too
  } else {
    const from = INDEX_BY_NAME.get(action.slice(0, 2));
    const to = INDEX_BY_NAME.get(action.slice(2));
    const s = next.cells[from];
    const t = next.cells[to];
    info.capturedDvonn = t.dvonn;
    next.cells[to] = { top: s.top, height: s.height + t.height, dvonn: s.dvonn || t.dvonn };
    next.cells[from] = null;
    info.removed = removeDisconnected(next);
  }
  next.ply = pos.ply + 1;
  return { position: next, info };
}

// "Each player's score is the total height of all stacks topped by their colour".
function scores(pos) {
  let w = 0;
  let b = 0;
  for (const s of pos.cells) {
    if (!s) continue;
    if (s.top === WHITE) w += s.height;
    else if (s.top === BLACK) b += s.height;
  }
  return { white: w, black: b };
}

// 'White wins', 'Black wins' or 'draw' at a finished game, null before.
function result(pos) {
  if (!isTerminal(pos)) return null;
  const { white, black } = scores(pos);
  if (white > black) return 'White wins';
  if (black > white) return 'Black wins';
  return 'draw';
}

// ---------------------------------------------------------------------------------------------
// Notation (docs/RULES.md, DVONN "Notation")
// ---------------------------------------------------------------------------------------------

function formatStack(s) {
  if (!s) return '.';
  if (s.top === RED) return 'R1*';
  return s.top + s.height + (s.dvonn ? '*' : '');
}

function formatPosition(pos) {
  const rows = [];
  let i = 0;
  for (const { first, last } of ROWS) {
    const entries = [];
    for (let c = first; c <= last; c++) entries.push(formatStack(pos.cells[i++]));
    rows.push(entries.join(','));
  }
  return `${rows.join('/')} ${sideToMove(pos.ply)} ${pos.ply}`;
}

class NotationError extends Error {}

function parseStack(token, where) {
  if (token === '.') return null;
  const m = /^([WBR])([1-9][0-9]*)(\*?)$/.exec(token);
  if (!m) throw new NotationError(`${where}: bad entry '${token}'`);
  const height = Number(m[2]);
  if (height > 49) throw new NotationError(`${where}: height ${height} is over 49`);
  const dvonn = m[3] === '*';
  if (m[1] === RED) {
    // "R for a lone DVONN piece": exactly one piece, written R1* (R1 also accepted).
    if (height !== 1) throw new NotationError(`${where}: a lone DVONN piece has height 1`);
    return { top: RED, height: 1, dvonn: true };
  }
  // A stack of one white or black piece cannot hold a DVONN piece.
  if (dvonn && height < 2) throw new NotationError(`${where}: '${token}' cannot hold a DVONN piece`);
  return { top: m[1], height, dvonn };
}

function parsePosition(text) {
  // Blanks (spaces, tabs, line ends) separate the fields; blanks at the ends are ignored.
  const fields = text.split(/[ \t\r\n]+/).filter((f) => f !== '');
  if (fields.length !== 3) throw new NotationError(`expected three fields, got ${fields.length}`);
  const [board, side, plyText] = fields;
  if (!/^(0|[1-9][0-9]*)$/.test(plyText)) throw new NotationError(`bad ply '${plyText}'`);
  const ply = Number(plyText);
  if (ply > 99999) throw new NotationError(`bad ply '${plyText}': RULES.md allows 0..99999`);
  if (side !== WHITE && side !== BLACK) throw new NotationError(`bad side '${side}'`);
  if (side !== sideToMove(ply)) throw new NotationError(`side ${side} disagrees with ply ${ply}`);
  const rows = board.split('/');
  if (rows.length !== 5) throw new NotationError(`expected 5 rows, got ${rows.length}`);
  const pos = emptyPosition();
  pos.ply = ply;
  let i = 0;
  rows.forEach((rowText, r) => {
    const entries = rowText.split(',');
    const { row, first, last } = ROWS[r];
    if (entries.length !== last - first + 1) {
      throw new NotationError(`row ${row}: expected ${last - first + 1} entries, got ${entries.length}`);
    }
    for (const e of entries) { pos.cells[i] = parseStack(e, CELL_NAME[i]); i++; }
  });
  validatePosition(pos);
  return pos;
}

// RULES.md: "Before ply 49, oppidum rejects any position that the placement phase could not have
// produced at that ply: a wrong number of DVONN, white or black pieces, or any stack taller than
// 1. In phase 2 it rejects a position with more than 49 pieces, more than three DVONN-holding
// stacks, or no DVONN piece at all. Other phase-2 positions are taken as given".
function validatePosition(pos) {
  let pieces = 0;
  let dvonnStacks = 0;
  const count = { W: 0, B: 0, R: 0 };
  for (const s of pos.cells) {
    if (!s) continue;
    pieces += s.height;
    if (s.dvonn) dvonnStacks++;
    count[s.top]++;
  }
  if (isPlacement(pos)) {
    const want = { R: 0, W: 0, B: 0 };
    for (let p = 0; p < pos.ply; p++) want[placedPiece(p)]++;
    for (const s of pos.cells) {
      if (s && s.height !== 1) throw new NotationError('a stack taller than 1 during placement');
    }
    for (const k of ['R', 'W', 'B']) {
      if (count[k] !== want[k]) {
        throw new NotationError(`ply ${pos.ply}: ${count[k]} ${k} pieces, placement gives ${want[k]}`);
      }
    }
  } else {
    if (pieces > 49) throw new NotationError(`${pieces} pieces, more than 49`);
    if (dvonnStacks > 3) throw new NotationError(`${dvonnStacks} DVONN-holding stacks`);
    if (dvonnStacks === 0) throw new NotationError('no DVONN piece');
  }
}

// Move notation: "D4", "A2A1", "PASS"; either case on input, surrounding spaces ignored.
function parseMove(text) {
  const t = text.trim().toUpperCase();
  if (t === PASS) return PASS;
  if (/^[A-K][1-5]$/.test(t) && INDEX_BY_NAME.has(t)) return t;
  if (/^[A-K][1-5][A-K][1-5]$/.test(t) && INDEX_BY_NAME.has(t.slice(0, 2)) && INDEX_BY_NAME.has(t.slice(2))) {
    return t;
  }
  throw new NotationError(`bad move '${text}'`);
}

// Applies a move given in notation, rejecting illegal ones.
function playMove(pos, text) {
  const move = parseMove(text);
  if (!legalActions(pos).includes(move)) {
    throw new NotationError(`illegal move '${text}' in ${formatPosition(pos)}`);
  }
  return applyAction(pos, move).position;
}

// ---------------------------------------------------------------------------------------------
// Perft
// ---------------------------------------------------------------------------------------------

// "Perft counts sequences of legal actions, DVONN passes and placements included. A finished
// game contributes nothing at depth 1 or more."
function perft(pos, depth) {
  if (depth === 0) return 1;
  const actions = legalActions(pos);
  if (depth === 1) return actions.length;
  let total = 0;
  for (const a of actions) total += perft(applyAction(pos, a).position, depth - 1);
  return total;
}

function shuffle(rng, list) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

// ---------------------------------------------------------------------------------------------
// Random games, steered towards the rare rules
// ---------------------------------------------------------------------------------------------

const EDGE_CELLS = [];
for (let i = 0; i < CELL_COUNT; i++) if (NEIGHBOURS[i].length < 6) EDGE_CELLS.push(i);
const CORNER_CELLS = ['A1', 'I1', 'A3', 'K3', 'C5', 'K5'].map((n) => INDEX_BY_NAME.get(n));

const PLACEMENT_STYLES = ['uniform', 'dvonn-edge', 'dvonn-corner', 'dvonn-cluster', 'dvonn-spread',
  'colour-halves', 'colour-rows', 'white-interior', 'black-interior'];
const MOVE_POLICIES = ['uniform', 'cutter', 'dvonn-hunter', 'tall', 'short', 'mixed'];

// Chooses the space of a placement according to the game's style.
function choosePlacement(rng, pos, style, legal) {
  const empty = legal.map((n) => INDEX_BY_NAME.get(n));
  const piece = placedPiece(pos.ply);
  const prefer = (pred) => {
    const good = empty.filter(pred);
    return CELL_NAME[good.length > 0 ? rng.pick(good) : rng.pick(empty)];
  };
  if (piece === RED) {
    switch (style) {
      case 'white-interior':
      case 'black-interior':
      case 'dvonn-edge': return prefer((i) => EDGE_CELLS.includes(i));
      case 'dvonn-corner': return prefer((i) => CORNER_CELLS.includes(i));
      case 'dvonn-cluster': {
        const reds = [];
        pos.cells.forEach((s, i) => { if (s) reds.push(i); });
        if (reds.length === 0) return prefer(() => true);
        return prefer((i) => NEIGHBOURS[i].some((n) => reds.includes(n)));
      }
      case 'dvonn-spread': {
        const targets = ['A3', 'F3', 'K3', 'A1', 'K5', 'I1', 'C5'].map((n) => INDEX_BY_NAME.get(n));
        return prefer((i) => targets.includes(i));
      }
      default: return CELL_NAME[rng.pick(empty)];
    }
  }
  if (style === 'colour-halves' && rng.chance(0.85)) {
    return prefer((i) => (piece === WHITE ? CELL_COL[i] - CELL_ROW[i] / 2 < 3.5 : CELL_COL[i] - CELL_ROW[i] / 2 >= 3.5));
  }
  // A colour kept off the edge cannot move at first (only edge stacks are free on a full board).
  // The other colour takes the edge, leaving the interior free.
  if (style === 'white-interior' || style === 'black-interior') {
    const inside = (style === 'white-interior') === (piece === WHITE);
    return prefer((i) => EDGE_CELLS.includes(i) !== inside);
  }
  if (style === 'colour-rows' && rng.chance(0.85)) {
    return prefer((i) => (piece === WHITE ? CELL_ROW[i] <= 2 : CELL_ROW[i] >= 4));
  }
  return CELL_NAME[rng.pick(empty)];
}

function chooseMove(rng, pos, policy, legal) {
  if (legal.length === 1) return legal[0];
  const p = policy === 'mixed' ? rng.pick(MOVE_POLICIES.slice(0, 5)) : policy;
  if (p === 'uniform' || rng.chance(0.25)) return rng.pick(legal);
  const score = (m) => {
    const from = INDEX_BY_NAME.get(m.slice(0, 2));
    const to = INDEX_BY_NAME.get(m.slice(2));
    switch (p) {
      case 'cutter': return applyAction(pos, m).info.removed;
      case 'dvonn-hunter': return (pos.cells[to].dvonn ? 2 : 0) + (pos.cells[from].dvonn ? 1 : 0);
      case 'tall': return pos.cells[from].height + pos.cells[to].height;
      case 'short': return -pos.cells[from].height;
      default: return 0;
    }
  };
  let best = -Infinity;
  let bestMoves = [];
  for (const m of legal) {
    const s = score(m);
    if (s > best) { best = s; bestMoves = [m]; } else if (s === best) bestMoves.push(m);
  }
  return rng.pick(bestMoves);
}

// Coverage counters: which rare situations the run reached.
const coverage = {
  games: 0, plies: 0, passes: 0, gamesWithPass: 0, draws: 0, whiteWins: 0, blackWins: 0,
  removalEvents: 0, maxRemoved: 0, movedStackRemoved: 0, dvonnCaptured: 0, dvonnStackMoved: 0,
  blockedStacksSeen: 0, firstMovePass: 0, tallestStack: 0, longestGame: 0, placementStyles: {}, movePolicies: {},
};

// Plays one game from the empty board; returns its moves and the positions before each move plus
// the last one.
function randomGame(rng) {
  const style = rng.pick(PLACEMENT_STYLES);
  const policy = rng.pick(MOVE_POLICIES);
  coverage.placementStyles[style] = (coverage.placementStyles[style] || 0) + 1;
  coverage.movePolicies[policy] = (coverage.movePolicies[policy] || 0) + 1;
  let pos = emptyPosition();
  const positions = [pos];
  const moves = [];
  let hadPass = false;
  for (;;) {
    const legal = legalActions(pos);
    if (legal.length === 0) break;
    if (!isPlacement(pos)) {
      const side = sideToMove(pos.ply);
      for (let i = 0; i < CELL_COUNT; i++) {
        const s = pos.cells[i];
        if (s && s.top === side && isBlocked(pos, i)) coverage.blockedStacksSeen++;
      }
    }
    const move = isPlacement(pos) ? choosePlacement(rng, pos, style, legal) : chooseMove(rng, pos, policy, legal);
    if (move !== PASS && !isPlacement(pos)) {
      const from = INDEX_BY_NAME.get(move.slice(0, 2));
      const to = INDEX_BY_NAME.get(move.slice(2));
      if (pos.cells[from].dvonn) coverage.dvonnStackMoved++;
      if (pos.cells[to].dvonn) coverage.dvonnCaptured++;
    }
    const { position, info } = applyAction(pos, move);
    if (info.pass) { coverage.passes++; hadPass = true; if (pos.ply === PLACEMENT_PLIES) coverage.firstMovePass++; }
    if (info.removed > 0) {
      coverage.removalEvents++;
      coverage.maxRemoved = Math.max(coverage.maxRemoved, info.removed);
      if (move !== PASS && !position.cells[INDEX_BY_NAME.get(move.slice(2))]) coverage.movedStackRemoved++;
    }
    for (const s of position.cells) if (s) coverage.tallestStack = Math.max(coverage.tallestStack, s.height);
    moves.push(move);
    positions.push(position);
    pos = position;
  }
  coverage.games++;
  coverage.plies += moves.length;
  coverage.longestGame = Math.max(coverage.longestGame, moves.length);
  if (hadPass) coverage.gamesWithPass++;
  const r = result(pos);
  if (r === 'draw') coverage.draws++;
  else if (r === 'White wins') coverage.whiteWins++;
  else coverage.blackWins++;
  return { style, policy, moves, positions };
}

// ---------------------------------------------------------------------------------------------
// Hand-made phase-2 positions (not reachable by the random games)
// ---------------------------------------------------------------------------------------------

// A random stack layout: random spaces (scattered, one blob, or a few islands), random heights
// (mostly low, sometimes tall), one to three DVONN-holding stacks, random tops, sometimes one
// colour without any stack, sometimes stacks cut off from every DVONN piece.
function randomLayout(rng) {
  const pos = emptyPosition();
  const shape = rng.pick(['scattered', 'blob', 'islands', 'line', 'dense']);
  const stackCount = shape === 'dense' ? 25 + rng.int(20) : 1 + rng.int(18);
  const chosen = [];
  const taken = new Set();
  const take = (i) => { if (!taken.has(i)) { taken.add(i); chosen.push(i); } };
  if (shape === 'scattered' || shape === 'dense') {
    for (const i of shuffle(rng, [...Array(CELL_COUNT).keys()]).slice(0, stackCount)) take(i);
  } else if (shape === 'line') {
    const start = rng.int(CELL_COUNT);
    const d = rng.int(6);
    take(start);
    for (const i of RAY[start][d]) if (i >= 0 && rng.chance(0.8)) take(i);
  } else {
    const seeds = shape === 'blob' ? 1 : 2 + rng.int(3);
    for (let k = 0; k < seeds; k++) take(rng.int(CELL_COUNT));
    let guard = 0;
    while (chosen.length < stackCount && guard++ < 500) {
      const base = rng.pick(chosen);
      const n = rng.pick(NEIGHBOURS[base]);
      if (shape === 'islands' && rng.chance(0.1)) take(rng.int(CELL_COUNT)); else take(n);
    }
  }
  // Heights: total at most 49.
  let budget = 49;
  const heights = chosen.map(() => 1);
  budget -= chosen.length;
  for (let k = 0; k < chosen.length && budget > 0; k++) {
    const extra = rng.chance(0.1) ? rng.int(Math.min(budget, 15) + 1) : rng.int(Math.min(budget, 3) + 1);
    heights[k] += extra;
    budget -= extra;
  }
  const dvonnCount = Math.min(chosen.length, 1 + rng.int(3));
  const noWhite = rng.chance(0.12);
  const noBlack = !noWhite && rng.chance(0.12);
  chosen.forEach((i, k) => {
    const dvonn = k < dvonnCount;
    let top = rng.chance(0.5) ? WHITE : BLACK;
    if (noWhite) top = BLACK;
    if (noBlack) top = WHITE;
    // A DVONN-holding stack of height 1 is a lone DVONN piece.
    pos.cells[i] = dvonn && heights[k] === 1 ? { top: RED, height: 1, dvonn: true } : { top, height: heights[k], dvonn };
  });
  pos.ply = PLACEMENT_PLIES + rng.int(97);
  return pos;
}

// Fixed positions for the rules that random play rarely shows. Each entry: [why, position].
const EMPTY_ROW = { 1: '.,.,.,.,.,.,.,.,.', 2: '.,.,.,.,.,.,.,.,.,.', 3: '.,.,.,.,.,.,.,.,.,.,.', 4: '.,.,.,.,.,.,.,.,.,.', 5: '.,.,.,.,.,.,.,.,.' };

// Builds a position string from { name: token } and a ply.
function layout(spec, ply) {
  const pos = emptyPosition();
  for (const [name, token] of Object.entries(spec)) pos.cells[INDEX_BY_NAME.get(name)] = parseStack(token, name);
  pos.ply = ply;
  return formatPosition(pos);
}

const FIXED_POSITIONS = [
  ['RULES.md disconnection example',
    `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/W1,B1,R1*,W1,B1,W1,.,.,.,.,./${EMPTY_ROW[4]}/${EMPTY_ROW[5]} W 49`],
  ['RULES.md passing example',
    `${EMPTY_ROW[1]}/.,B1,.,.,.,.,.,.,.,./W2,R1*,.,.,.,.,.,.,.,.,./${EMPTY_ROW[4]}/${EMPTY_ROW[5]} W 49`],
  ['lone DVONN written R1 (accepted)', layout({ A3: 'W1', B3: 'R1' }, 49).replace('R1*', 'R1')],
  ['white to move owns no stack, black can move: PASS', layout({ A3: 'B1', B3: 'R1', C3: 'B2' }, 49)],
  ['neither side owns a stack: game over', layout({ C3: 'R1', E3: 'R1', G3: 'R1' }, 50)],
  ['only lone DVONN pieces and a blocked stack', layout({ E3: 'W1', D3: 'R1', F3: 'R1', E4: 'R1', F4: 'B1', E2: 'B1', D2: 'B1' }, 49)],
  ['interior stack surrounded on six sides cannot move', layout({ E3: 'W2', D3: 'R1', F3: 'B1', E4: 'B1', F4: 'B1', E2: 'B1', D2: 'B1', C3: 'B1', G3: 'W1' }, 49)],
  ['edge stack with all existing neighbours occupied can move', layout({ A1: 'W1', B1: 'R1', A2: 'B1', B2: 'B1' }, 49)],
  ['height 10 crosses row 3', layout({ A3: 'W10', K3: 'R1', F3: 'B1' }, 49)],
  ['height 11 never moves', layout({ A3: 'W11', B3: 'R1', C3: 'B1', D3: 'W1' }, 49)],
  ['height 4 jumps over empty spaces and stacks', layout({ A3: 'W4', B3: 'R1', C3: 'B1', E3: 'B1', A1: 'B3' }, 49)],
  ['stack without DVONN given cut off: it may move and it scores', layout({ A1: 'W1', B1: 'W2', G3: 'R1*', H3: 'B1' }, 49)],
  ['only the cut-off stack of the mover can move', layout({ A1: 'W1', B1: 'B1', K5: 'R1', K3: 'B1', K4: 'W2' }, 49)],
  ['mover stuck; opponent movable only in a cut-off group (PASS, then removal?)', layout({ A1: 'B1', B1: 'B1', K5: 'R1', J5: 'W3' }, 50)],
  ['mover stuck; opponent movable in a cut-off group, also in a live one', layout({ A1: 'W1', B1: 'W1', K5: 'R1', J5: 'W3', K4: 'W1' }, 50)],
  ['a given DVONN-less group is terminal: score counts it', layout({ A1: 'W5', E3: 'R1', G5: 'B1' }, 51)],
  ['mover stuck with a cut-off stack; opponent can move', layout({ A1: 'W5', E3: 'R1', G3: 'B2' }, 51)],
  ['White must pass; a cut-off black stack could jump back into play (removal after PASS?)', layout({ A3: 'B2', C3: 'B1', D3: 'R1' }, 49)],
  ['three DVONN stacks, one isolated', layout({ A1: 'R1', E3: 'W3*', F3: 'B2*', K5: 'B1' }, 60)],
  ['a black stack holding all DVONN pieces', layout({ E3: 'B5*', D3: 'W1', F3: 'W1', E4: 'W1', F4: 'W1', E2: 'W1', D2: 'W1' }, 52)],
  ['49 pieces in one stack', layout({ E3: 'W49*' }, 144)],
  ['45 pieces, tall stacks', layout({ A3: 'W20*', K3: 'B20', F3: 'B5' }, 70)],
  ['draw by equal scores', layout({ A3: 'W2', B3: 'R1', C3: 'B2' }, 51)],
  ['many singles around DVONN pieces',
    `B1,W1,B1,W1,B1,W1,B1,W1,B1/W1,B1,W1,B1,W1,B1,W1,B1,W1,B1/R1*,W1,B1,W1,B1,R1*,W1,B1,W1,B1,R1*/B1,W1,B1,W1,B1,W1,B1,W1,B1,W1/W1,B1,W1,B1,W1,B1,W1,B1,W1 W 49`],
  ['big disconnection on the next move', layout({ A3: 'W1', B3: 'R1', C3: 'W1', D3: 'B1', E3: 'B1', F3: 'B1', G3: 'B1', H3: 'B1', I3: 'B1', D4: 'B1', E4: 'B1', D2: 'B1', E2: 'B1' }, 49)],
  ['placement ply 3, pieces anywhere', `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/R1*,.,.,.,.,.,.,.,.,.,R1*/${EMPTY_ROW[4]}/.,.,.,.,.,.,.,.,R1* B 3`],
  ['placement ply 48, one space left', null],
];

// The last fixed position: a full board but one space, White to place its 23rd piece.
(function fillPly48() {
  let pos = emptyPosition();
  for (let i = 0; i < 48; i++) pos = applyAction(pos, CELL_NAME[(i * 5) % 49]).position;
  FIXED_POSITIONS[FIXED_POSITIONS.length - 1][1] = formatPosition(pos);
})();

// ---------------------------------------------------------------------------------------------
// Self-test against the worked examples of docs/RULES.md
// ---------------------------------------------------------------------------------------------

function selfTest() {
  const failures = [];
  const expect = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) failures.push(`${what}: got ${JSON.stringify(got)}, RULES.md says ${JSON.stringify(want)}`);
  };
  const start = parsePosition(`${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/${EMPTY_ROW[3]}/${EMPTY_ROW[4]}/${EMPTY_ROW[5]} W 0`);
  expect('perft(1) from the empty board', perft(start, 1), 49);
  expect('perft(2) from the empty board', perft(start, 2), 2352);
  let pos = start;
  for (const m of ['C3', 'F3', 'I3', 'D4', 'E2']) pos = playMove(pos, m);
  expect('C3 F3 I3 D4 E2', formatPosition(pos),
    '.,.,.,.,.,.,.,.,./.,.,.,.,W1,.,.,.,.,./.,.,R1*,.,.,R1*,.,.,R1*,.,./.,.,B1,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,. B 5');
  for (let i = 0; i < CELL_COUNT; i++) if (!pos.cells[i]) pos = playMove(pos, CELL_NAME[i]);
  expect('full board side and ply', formatPosition(pos).split(' ').slice(1), ['W', '49']);
  const whiteMoves = legalActions(pos);
  expect('White legal moves on the full board', whiteMoves.length, 45);
  const movers = [...new Set(whiteMoves.map((m) => m.slice(0, 2)))].sort();
  // RULES.md lists "A2, A3, B1, B4, C5, D1, E5, F1, G5, H1, I5, K5", but the reading-order fill
  // puts Black on A3 (ply 23) and B4 (ply 31) and White on J2 (ply 22) and K3 (ply 30): an erratum
  // in RULES.md. The count of 12 pieces and 45 moves is right.
  expect('White edge pieces that move', movers, ['A2', 'B1', 'C5', 'D1', 'E5', 'F1', 'G5', 'H1', 'I5', 'J2', 'K3', 'K5']);
  const afterB1B2 = formatPosition(playMove(pos, 'B1B2'));
  const [board, side, ply] = afterB1B2.split(' ');
  const rows = board.split('/');
  expect('B1B2 row 1 start', rows[0].split(',').slice(0, 4), ['B1', '.', 'B1', 'W1']);
  expect('B1B2 row 2 start', rows[1].split(',').slice(0, 3), ['W1', 'W2', 'W1']);
  expect('B1B2 side and ply', [side, ply], ['B', '50']);

  const disc = parsePosition(FIXED_POSITIONS[0][1]);
  expect('disconnection example moves', legalActions(disc).sort(), ['A3B3', 'D3C3', 'D3E3', 'F3E3']);
  const d1 = playMove(disc, 'D3C3');
  expect('after D3C3', formatPosition(d1),
    `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/W1,B1,W2*,.,.,.,.,.,.,.,./${EMPTY_ROW[4]}/${EMPTY_ROW[5]} B 50`);
  expect('score after D3C3', scores(d1), { white: 3, black: 1 });
  const d2 = playMove(d1, 'B3C3');
  expect('after B3C3', formatPosition(d2),
    `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/.,.,B3*,.,.,.,.,.,.,.,./${EMPTY_ROW[4]}/${EMPTY_ROW[5]} W 51`);
  expect('result after B3C3', [result(d2), scores(d2)], ['Black wins', { white: 0, black: 3 }]);

  const passing = parsePosition(FIXED_POSITIONS[1][1]);
  expect('passing example moves', legalActions(passing), [PASS]);
  const p1 = playMove(passing, 'PASS');
  expect('after PASS', formatPosition(p1).split(' ').slice(1), ['B', '50']);
  const p2 = playMove(p1, 'B2B3');
  expect('after B2B3', [result(p2), scores(p2), p2.ply], ['draw', { white: 2, black: 2 }, 51]);
  return failures;
}

// ---------------------------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------------------------

let BINARY = null;
let VERBOSE = false;
let processCount = 0;

function runBinary(args, input = '') {
  processCount++;
  if (VERBOSE) console.error(`$ oppidum ${args.map((a) => (/[\s*"]/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
  return run(BINARY, args, input);
}

function shellQuote(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

// The second line of `apply --pretty`: "DVONN, ply P: <state>; score White W, Black B".
// <state> is "game over, White wins|Black wins|draw", "<Side> to move[ (must pass)]" or
// "<Side> places a <DVONN|white|black> piece (<n> placements left)" ("1 placement left").
function expectedStatus(pos) {
  const { white, black } = scores(pos);
  const side = sideToMove(pos.ply) === WHITE ? 'White' : 'Black';
  let state;
  if (isPlacement(pos)) {
    const piece = { R: 'DVONN', W: 'white', B: 'black' }[placedPiece(pos.ply)];
    const left = PLACEMENT_PLIES - pos.ply;
    state = `${side} places a ${piece} piece (${left} placement${left === 1 ? '' : 's'} left)`;
  } else if (isTerminal(pos)) {
    state = `game over, ${result(pos)}`;
  } else if (legalActions(pos)[0] === PASS) {
    state = `${side} to move (must pass)`;
  } else {
    state = `${side} to move`;
  }
  return `DVONN, ply ${pos.ply}: ${state}; score White ${white}, Black ${black}`;
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

const differences = [];   // { kind, position, detail, reproduce }

function report(kind, position, detail, reproduce) {
  differences.push({ kind, position, detail, reproduce });
}

// perft(1) and perft(2) of every position, in one binary process.
async function comparePerft(positions) {
  const input = positions.join('\n') + '\n';
  const res = await runBinary(['perft', '--game', 'dvonn', '--depth', '2', '--positions', '-'], input);
  if (res.rc !== 0) {
    report('perft', '', `perft --positions exited ${res.rc}: ${res.stderr.trim()}`, 'oppidum perft --game dvonn --depth 2 --positions - < positions');
  }
  const lines = res.stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== positions.length) {
    report('perft', '', `perft printed ${lines.length} lines for ${positions.length} positions`, '');
  }
  let compared = 0;
  for (let k = 0; k < Math.min(lines.length, positions.length); k++) {
    const tokens = lines[k].trim().split(/\s+/);
    const got = tokens.slice(-2).map(Number);
    const echoed = tokens.slice(0, -2).join(' ');
    const p = positions[k];
    if (echoed !== p.trim().split(/\s+/).join(' ')) {
      report('perft', p, `line ${k + 1} echoes '${echoed}'`, '');
      continue;
    }
    const pos = parsePosition(p);
    const want = [perft(pos, 1), perft(pos, 2)];
    compared++;
    if (got[0] !== want[0] || got[1] !== want[1]) {
      report('perft', p, `perft(1), perft(2): binary ${got.join(', ')}, reference ${want.join(', ')}; reference moves: ${legalActions(pos).sort().join(' ') || '(none)'}`,
        `oppidum perft --game dvonn --depth 2 --position ${shellQuote(p)}`);
    }
  }
  return compared;
}

// The sorted legal move list of one position.
async function compareMoves(p) {
  const res = await runBinary(['moves', '--game', 'dvonn', '--position', p]);
  const pos = parsePosition(p);
  const want = legalActions(pos).slice().sort();
  const got = res.stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const repro = `oppidum moves --game dvonn --position ${shellQuote(p)}`;
  if (res.rc !== 0) {
    report('moves', p, `exit status ${res.rc}: ${res.stderr.trim()}`, repro);
    return;
  }
  const gotSorted = got.slice().sort();
  if (JSON.stringify(gotSorted) !== JSON.stringify(want)) {
    const missing = want.filter((m) => !got.includes(m));
    const extra = got.filter((m) => !want.includes(m));
    report('moves', p, `binary lacks [${missing.join(' ')}], binary adds [${extra.join(' ')}]${got.length !== new Set(got).size ? ', binary repeats moves' : ''}`, repro);
  } else if (JSON.stringify(got) !== JSON.stringify(gotSorted)) {
    report('moves', p, `moves are right but not printed in sorted order: ${got.join(' ')}`, repro);
  }
  if (want.length === 0 && !/game is over/i.test(res.stderr)) {
    report('moves', p, `terminal position: binary does not say the game is over (stderr '${res.stderr.trim()}')`, repro);
  }
}

// Plays `moves` from `start` in the binary; compares its final position and status line with the
// reference. On a difference, finds the first move after which they differ.
async function compareLine(start, moves, label) {
  const startPos = parsePosition(start);
  const refPositions = [startPos];
  for (const m of moves) refPositions.push(playMove(refPositions[refPositions.length - 1], m));
  const check = async (k) => {
    const res = await runBinary(['apply', '--game', 'dvonn', '--position', start, '--moves', moves.slice(0, k).join(' '), '--pretty']);
    const lines = res.stdout.split('\n');
    const want = refPositions[k];
    const problems = [];
    if (res.rc !== 0) problems.push(`exit status ${res.rc}: ${res.stderr.trim()}`);
    else {
      if (lines[0] !== formatPosition(want)) problems.push(`position: binary '${lines[0]}', reference '${formatPosition(want)}'`);
      if (lines[1] !== expectedStatus(want)) problems.push(`status: binary '${lines[1]}', reference '${expectedStatus(want)}'`);
    }
    return problems;
  };
  const problems = await check(moves.length);
  if (problems.length === 0) return;
  // Binary search for the shortest failing prefix.
  let lo = 0;
  let hi = moves.length;
  if ((await check(0)).length > 0) hi = 0;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((await check(mid)).length > 0) hi = mid; else lo = mid;
  }
  if (hi === 0) {
    report('apply', start, `${label}: the start position itself differs: ${(await check(0)).join('; ')}`,
      `oppidum apply --game dvonn --pretty --position ${shellQuote(start)} --moves ''`);
    return;
  }
  const before = formatPosition(refPositions[hi - 1]);
  const firstProblems = await check(hi);
  report('apply', before, `${label}: differs after move ${hi} '${moves[hi - 1]}': ${firstProblems.join('; ')}`,
    `oppidum apply --game dvonn --pretty --position ${shellQuote(before)} --moves '${moves[hi - 1]}'`);
}

// Plays a hand-made position out with uniform random moves.
function randomContinuation(rng, start) {
  let pos = parsePosition(start);
  const moves = [];
  for (;;) {
    const legal = legalActions(pos);
    if (legal.length === 0) break;
    const m = rng.pick(legal);
    moves.push(m);
    pos = applyAction(pos, m).position;
  }
  return moves;
}

// Malformed positions and moves: [what, apply arguments, note]. The reference parser says
// whether RULES.md accepts each one; the binary must agree, and must explain a refusal.
function malformedCases() {
  const start = `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/${EMPTY_ROW[3]}/${EMPTY_ROW[4]}/${EMPTY_ROW[5]} W 0`;
  const disc = FIXED_POSITIONS[0][1];
  const rowsOf = (p) => p.split(' ')[0].split('/');
  const withRow3 = (row3, rest = 'W 49') => `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/${row3}/${EMPTY_ROW[4]}/${EMPTY_ROW[5]} ${rest}`;
  const singles = (n, token) => {
    const cells = new Array(CELL_COUNT).fill('.');
    cells[24] = 'R1*';
    let k = 0;
    for (let i = 0; i < CELL_COUNT && k < n; i++) if (i !== 24) { cells[i] = token; k++; }
    let i = 0;
    return ROWS.map(({ first, last }) => { const r = cells.slice(i, i + last - first + 1); i += last - first + 1; return r.join(','); }).join('/');
  };
  const fullPly48 = FIXED_POSITIONS[FIXED_POSITIONS.length - 1][1];
  return [
    ['48 spaces (row 3 has 10 entries)', withRow3('.,.,.,.,.,.,.,.,.,.').replace(' W 49', ' W 0'), ''],
    ['50 spaces (row 1 has 10 entries)', `.,${start}`, ''],
    ['4 rows', rowsOf(start).slice(0, 4).join('/') + ' W 0', ''],
    ['bad character Q1', withRow3('Q1,B1,R1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['bad character in empty space (-)', start.replace('.', '-'), ''],
    ['lower-case stack w1', withRow3('w1,B1,R1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['height 0 (W0)', withRow3('W0,B1,R1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['leading zero height (W01)', withRow3('W01,B1,R1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['height 50 (W50*)', withRow3('W50*,.,.,.,.,.,.,.,.,.,.'), ''],
    ['W1* (one white piece cannot hold a DVONN piece)', withRow3('W1*,B1,R1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['R2* (a lone DVONN piece of height 2)', withRow3('W1,B1,R2*,W1,B1,W1,.,.,.,.,.'), ''],
    ['R3 (a lone DVONN piece of height 3)', withRow3('W1,B1,R3,W1,B1,W1,.,.,.,.,.'), ''],
    ['bad side letter X', disc.replace(' W 49', ' X 49'), ''],
    ['side disagrees with ply (B 49)', disc.replace(' W 49', ' B 49'), ''],
    ['side disagrees with ply (W 1)', `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/R1*,.,.,.,.,.,.,.,.,.,./${EMPTY_ROW[4]}/${EMPTY_ROW[5]} W 1`, ''],
    ['leading zero ply (049)', disc.replace(' W 49', ' W 049'), ''],
    ['negative ply', disc.replace(' W 49', ' W -1'), ''],
    ['missing ply', disc.replace(' W 49', ' W'), ''],
    ['ply 4 with 3 pieces only (missing a black piece)', `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/R1*,.,.,.,.,R1*,.,.,R1*,.,./${EMPTY_ROW[4]}/${EMPTY_ROW[5]} W 4`, ''],
    ['4 DVONN pieces and 1 black at ply 5', `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/R1*,R1*,.,.,.,R1*,.,.,R1*,.,./${EMPTY_ROW[4]}/B1,.,.,.,.,.,.,.,. B 5`, ''],
    ['4 DVONN stacks in phase 2', withRow3('R1*,B1,R1*,W1,R1*,W1,R1*,.,.,.,.'), ''],
    ['no DVONN piece in phase 2', withRow3('W1,B1,W1,W1,B1,W1,.,.,.,.,.'), ''],
    ['a 2-stack during placement (ply 5)', `${EMPTY_ROW[1]}/${EMPTY_ROW[2]}/R1*,.,.,.,.,R1*,.,.,R1*,.,./${EMPTY_ROW[4]}/W2,.,.,.,.,.,.,.,. B 5`, ''],
    ['24 white pieces during placement (ply 48 board, one B1 made W1)', fullPly48.replace('B1', 'W1'), ''],
    ['24 white single pieces in phase 2 (RULES.md: "taken as given")', `${singles(24, 'W1')} W 49`, ''],
    ['24 black single pieces in phase 2, no white', `${singles(24, 'B1')} W 49`, ''],
    ['fields separated by a tab (RULES.md: "separated by blanks")', disc.replace(' W 49', '\tW\t49'), ''],
    ['four fields', `${disc} 7`, ''],
    ['ply with a plus sign (+49)', disc.replace(' W 49', ' W +49'), ''],
    ['ply 100001 (RULES.md: 0..99999)', disc.replace(' W 49', ' W 100001'), ''],
    ['ply 99999 (the largest RULES.md allows)', disc.replace(' W 49', ' W 99999'), ''],
    ['lower-case lone DVONN r1*', withRow3('W1,B1,r1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['star without height (W*)', withRow3('W*,B1,R1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['two stars (W2**)', withRow3('W2**,B1,R1*,W1,B1,W1,.,.,.,.,.'), ''],
    ['empty position string', '', ''],
    ['50 pieces in phase 2', withRow3('W25*,B25,.,.,.,.,.,.,.,.,.'), ''],
    ['move off the board: L3', start, 'L3'],
    ['move off the board: A6', start, 'A6'],
    ['move onto a row that lacks the space: A5', start, 'A5'],
    ['move to an occupied space at placement: C3 C3', start, 'C3 C3'],
    ['stack move during placement: C3D3', start, 'C3D3'],
    ['stack move to a space off the board: A3Z3', disc, 'A3Z3'],
    ['stack move of the wrong length: A3C3', disc, 'A3C3'],
    ['stack move onto an empty space: F3G3', disc, 'F3G3'],
    ['moving an opponent stack: B3C3', disc, 'B3C3'],
    ['PASS when a move exists', disc, 'PASS'],
    ['PASS during placement', start, 'PASS'],
    ['garbage move', disc, 'D3-C3'],
    ['lower-case move (accepted)', disc, 'd3c3'],
    ['move with spaces around (accepted)', disc, '  D3C3  '],
  ];
}

async function checkMalformed(jobs) {
  const cases = malformedCases();
  const tasks = cases.map(([, position, moves]) => () => (moves
    ? runBinary(['apply', '--game', 'dvonn', '--position', position, '--moves', moves])
    : runBinary(['moves', '--game', 'dvonn', '--position', position])));
  const results = await runPool(tasks, jobs);
  const table = [];
  cases.forEach(([what, position, moves], k) => {
    let refAccepts = true;
    let refWhy = '';
    try {
      let pos = parsePosition(position);
      if (moves) {
        // apply splits its --moves at spaces; a move with spaces around it is one token.
        for (const m of moves.trim().split(/\s+/)) pos = playMove(pos, m);
      }
    } catch (e) {
      if (!(e instanceof NotationError)) throw e;
      refAccepts = false;
      refWhy = e.message;
    }
    const res = results[k];
    const binAccepts = res.rc === 0;
    const message = (res.stderr.trim().split('\n')[0] || res.stdout.trim().split('\n')[0] || '').slice(0, 220);
    table.push({ what, refAccepts, binAccepts, rc: res.rc, message });
    const repro = moves
      ? `oppidum apply --game dvonn --position ${shellQuote(position)} --moves ${shellQuote(moves)}`
      : `oppidum moves --game dvonn --position ${shellQuote(position)}`;
    if (refAccepts !== binAccepts) {
      report('malformed', position, `${what}: reference ${refAccepts ? 'accepts' : `refuses (${refWhy})`}, binary ${binAccepts ? 'accepts' : `refuses: ${message}`}`, repro);
    } else if (!binAccepts && res.stderr.trim() === '') {
      report('malformed', position, `${what}: binary refuses with exit ${res.rc} but no message`, repro);
    }
  });
  return table;
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

function parseArgs(argv) {
  const opts = {
    binary: null, games: 100, seed: 1, randomPositions: 200, movesSample: 10, continuations: 10,
    jobs: 1, applyGames: -1, malformed: false, selfTest: false, verbose: false,
  };
  const numeric = { '--games': 'games', '--seed': 'seed', '--random-positions': 'randomPositions', '--moves-sample': 'movesSample', '--continuations': 'continuations', '--jobs': 'jobs', '--apply-games': 'applyGames' };
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    if (a === '--binary') opts.binary = argv[++k];
    else if (numeric[a]) {
      const v = Number(argv[++k]);
      if (!Number.isInteger(v) || v < 0) usage(`${a} needs a non-negative integer`);
      opts[numeric[a]] = v;
    } else if (a === '--malformed') opts.malformed = true;
    else if (a === '--self-test') opts.selfTest = true;
    else if (a === '--verbose') opts.verbose = true;
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown argument '${a}'`);
  }
  if (!opts.selfTest && !opts.binary) usage('--binary is required');
  return opts;
}

function usage(error) {
  const lines = fs.readFileSync(new URL(import.meta.url)).toString().split('\n');
  const header = [];
  for (let k = 1; k < lines.length && lines[k].startsWith('//'); k++) header.push(lines[k].slice(3));
  const text = header.join('\n');
  if (error) { console.error(`error: ${error}\n`); console.error(text); process.exit(2); }
  console.log(text);
  process.exit(0);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const selfFailures = selfTest();
  if (selfFailures.length > 0) {
    console.log('The reference disagrees with the worked examples of docs/RULES.md:');
    for (const f of selfFailures) console.log(`  ${f}`);
    process.exit(1);
  }
  console.log('reference: worked examples of docs/RULES.md reproduced');
  if (opts.selfTest) return;
  BINARY = opts.binary;
  VERBOSE = opts.verbose;
  if (!fs.existsSync(BINARY)) usage(`no binary at ${BINARY}`);

  const rng = seededRandom(opts.seed);

  // 1. Random games from the empty board.
  const games = [];
  for (let g = 0; g < opts.games; g++) games.push(randomGame(seededRandom((opts.seed * 1000003 + g) >>> 0)));

  // 2. Hand-made positions: the fixed ones and random layouts.
  const handMade = FIXED_POSITIONS.map(([, p]) => p);
  for (let k = 0; k < opts.randomPositions; k++) handMade.push(formatPosition(randomLayout(rng)));
  // Their random continuations, so that the removal after the first move is seen as well.
  const continuationStarts = [];
  // Fixed positions that must pass first: they show what follows a PASS.
  const fixedWithMoves = FIXED_POSITIONS.map(([, p]) => p).filter((p) => legalActions(parsePosition(p)).length > 0);
  fixedWithMoves.sort((a, b) => Number(legalActions(parsePosition(b))[0] === PASS) - Number(legalActions(parsePosition(a))[0] === PASS));
  for (const p of fixedWithMoves.slice(0, Math.min(fixedWithMoves.length, opts.continuations))) continuationStarts.push(p);
  for (let k = 0; continuationStarts.length < opts.continuations && k < opts.randomPositions; k++) {
    const p = handMade[FIXED_POSITIONS.length + k];
    if (legalActions(parsePosition(p)).length > 0) continuationStarts.push(p);
  }
  if (continuationStarts.length > opts.continuations) continuationStarts.length = opts.continuations;
  const continuations = continuationStarts.map((p) => ({ start: p, moves: randomContinuation(rng, p) }));

  // Every position, once.
  const all = new Set();
  for (const g of games) for (const p of g.positions) all.add(formatPosition(p));
  for (const p of handMade) all.add(p);
  for (const c of continuations) {
    let pos = parsePosition(c.start);
    for (const m of c.moves) { pos = applyAction(pos, m).position; all.add(formatPosition(pos)); }
  }
  const allPositions = [...all];
  const tGen = Date.now();

  // 3. perft(1), perft(2) of all of them in one process.
  const perftCompared = await comparePerft(allPositions);

  // 4. apply: every game, every continuation.
  const applied = opts.applyGames < 0 ? games : games.slice(0, opts.applyGames);
  const applyTasks = applied.map((g, k) => () => compareLine(formatPosition(g.positions[0]), g.moves, `game ${k} (${g.style}, ${g.policy})`));
  for (const [k, c] of continuations.entries()) applyTasks.push(() => compareLine(c.start, c.moves, `continuation ${k}`));
  // The status line (score, result) of the fixed positions that are finished, must pass, or hold
  // a stack cut off from every DVONN piece (which still counts until the next move).
  for (const [why, p] of FIXED_POSITIONS) {
    const pos = parsePosition(p);
    const legal = legalActions(pos);
    if (legal.length === 0 || legal[0] === PASS || removeDisconnected(clonePosition(pos)) > 0) {
      applyTasks.push(() => compareLine(p, [], `fixed position '${why}'`));
    }
  }
  await runPool(applyTasks, opts.jobs);

  // 5. moves: the fixed positions, then a sample weighted towards phase 2, passes and game ends.
  const sample = new Set(FIXED_POSITIONS.map(([, p]) => p));
  const interesting = [];
  const ordinary = [];
  for (const p of allPositions) {
    if (sample.has(p)) continue;
    const pos = parsePosition(p);
    const legal = legalActions(pos);
    if (!isPlacement(pos) && (legal.length <= 1 || pos.ply === PLACEMENT_PLIES)) interesting.push(p);
    else ordinary.push(p);
  }
  shuffle(rng, interesting);
  shuffle(rng, ordinary);
  const half = Math.ceil(opts.movesSample / 2);
  for (const p of interesting.slice(0, half)) sample.add(p);
  for (const p of ordinary.slice(0, opts.movesSample - Math.min(half, interesting.length))) sample.add(p);
  await runPool([...sample].map((p) => () => compareMoves(p)), opts.jobs);

  // 6. Malformed input.
  let malformed = [];
  if (opts.malformed) malformed = await checkMalformed(opts.jobs);

  // Summary.
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  const c = coverage;
  console.log(`games: ${c.games} (${c.plies} plies, longest ${c.longestGame}; White ${c.whiteWins}, Black ${c.blackWins}, draws ${c.draws})`);
  console.log(`  placement styles ${JSON.stringify(c.placementStyles)}`);
  console.log(`  move policies ${JSON.stringify(c.movePolicies)}`);
  console.log(`  passes ${c.passes} in ${c.gamesWithPass} games (${c.firstMovePass} on ply 49); removals ${c.removalEvents} (largest ${c.maxRemoved} pieces, ${c.movedStackRemoved} took the moved stack); DVONN pieces captured into stacks ${c.dvonnCaptured}; DVONN stacks moved ${c.dvonnStackMoved}; blocked own stacks seen ${c.blockedStacksSeen}; tallest stack ${c.tallestStack}`);
  console.log(`hand-made positions: ${FIXED_POSITIONS.length} fixed, ${opts.randomPositions} random layouts, ${continuations.length} played out`);
  console.log(`compared: perft(1..2) of ${perftCompared} positions; ${applyTasks.length} apply lines (final position and status, bisected on a difference); move lists of ${sample.size} positions; ${malformed.length} malformed inputs`);
  if (malformed.length > 0) {
    console.log('malformed input (reference / binary / binary message):');
    for (const m of malformed) {
      console.log(`  ${m.what}: reference ${m.refAccepts ? 'accepts' : 'refuses'}; binary ${m.binAccepts ? 'accepts' : `refuses (exit ${m.rc})`}: ${m.message}`);
    }
  }
  console.log(`binary processes: ${processCount}; time ${seconds} s (generation ${((tGen - t0) / 1000).toFixed(1)} s)`);
  if (differences.length === 0) {
    console.log('no differences');
    return;
  }
  const byKind = {};
  for (const d of differences) byKind[d.kind] = (byKind[d.kind] || 0) + 1;
  console.log(`\n${differences.length} DIFFERENCES ${JSON.stringify(byKind)}`);
  for (const d of differences) {
    console.log(`\n[${d.kind}] ${d.detail}`);
    if (d.position) console.log(`  position: ${d.position}`);
    if (d.reproduce) console.log(`  reproduce: ${d.reproduce}`);
  }
  process.exitCode = 1;
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(3); });
