#!/usr/bin/env node
// mg_reference.mjs: an independent reference implementation of Murus Gallicus and a
// differential harness against the `oppidum` binary.
//
// Written from the rule texts only (docs/RULES.md, "Murus Gallicus" and its "Notation", and the
// original rule texts among the seeds), without reading oppidum's game code or tests.
//
// Usage:
//   node mg_reference.mjs --binary PATH [--games N] [--seed S] [--random-boards K]
//                         [--apply-games A] [--moves-samples M] [--jobs J] [--max-plies P]
//                         [--no-notation] [--quiet]
//   node mg_reference.mjs --selftest          (reference only: the documented examples and perft)
//
// What is compared with the binary:
//   - perft(1) and perft(2) of EVERY position (all game positions and K random boards, which need
//     not be reachable), through one `oppidum perft --depth 2 --positions -` process; perft(1) = 0
//     is also the terminal test of every position (a finished game has no moves);
//   - the sorted move list (`oppidum moves`) of M positions, one of every feature first (terminal,
//     stalemate, no towers, edge sacrifice, ...), then random ones;
//   - whole games through `oppidum apply` for A games (every game with --apply-games N): every move
//     must be accepted, the final position must match, and an extra, illegal probe move makes the
//     binary say whether the game is over and who won;
//   - the notation's error handling (malformed positions and moves), unless --no-notation.
// Each oppidum process costs about 0.35 s of CPU just to start, so the harness starts few of them:
// one for all the perft counts, then A + M + 7 + 32 small ones, --jobs at a time.
//
// Exit status: 0 when the binary agrees everywhere, 1 on any difference, 2 on a usage or
// harness error. Node.js 18 or later, no packages (harness.mjs beside it runs the processes).

import { runBinary, runPool, seededRandom } from './harness.mjs';
import process from 'node:process';
import fs from 'node:fs';

// ---------------------------------------------------------------------------------------------
// Board geometry. A square is an index r * 8 + c with r = 0..6 for rows 1..7 and c = 0..7 for
// columns a..h. A cell holds +1 (Light wall), +2 (Light tower), -1 (Dark wall), -2 (Dark tower)
// or 0 (empty).
// ---------------------------------------------------------------------------------------------

export const COLS = 8;
export const ROWS = 7;
export const LIGHT = 0; // player 0, moves first, home row 1
export const DARK = 1; //  player 1, home row 7
export const SIDE_NAME = ['Light', 'Dark'];
export const STONES_PER_SIDE = 16;
const DIRECTIONS = [[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [1, -1], [-1, 1], [-1, -1]]; // [dc, dr]

const sq = (c, r) => r * COLS + c;
const colOf = (s) => s % COLS;
const rowOf = (s) => Math.floor(s / COLS);
const onBoard = (c, r) => c >= 0 && c < COLS && r >= 0 && r < ROWS;
export const squareName = (s) => 'abcdefgh'[colOf(s)] + String(rowOf(s) + 1);
const sign = (player) => (player === LIGHT ? 1 : -1);
const ownerOf = (cell) => (cell > 0 ? LIGHT : cell < 0 ? DARK : -1);
export const homeRow = (player) => (player === LIGHT ? 0 : ROWS - 1);

// ---------------------------------------------------------------------------------------------
// Position
// ---------------------------------------------------------------------------------------------

export class Position {
  constructor(cells, side) {
    this.cells = cells; // Int8Array(56)
    this.side = side; //   LIGHT or DARK: the player to move
  }

  static initial() {
    const cells = new Int8Array(COLS * ROWS);
    for (let c = 0; c < COLS; c++) {
      cells[sq(c, 0)] = 2;
      cells[sq(c, ROWS - 1)] = -2;
    }
    return new Position(cells, LIGHT);
  }

  stones(player) {
    let n = 0;
    for (const v of this.cells) if (ownerOf(v) === player) n += Math.abs(v);
    return n;
  }

  towers(player) {
    let n = 0;
    for (const v of this.cells) if (v === 2 * sign(player)) n++;
    return n;
  }

  /** True when `player` has a stone on the home row of the other player. */
  hasBrokenThrough(player) {
    const r = homeRow(1 - player);
    for (let c = 0; c < COLS; c++) if (ownerOf(this.cells[sq(c, r)]) === player) return true;
    return false;
  }

  /**
   * Legal moves of the side to move. RULES.md: a breakthrough wins at once, so a position in which
   * the opponent already stands on the mover's home row has no moves; otherwise every
   * distribution and every sacrifice of every tower of the mover.
   */
  legalMoves() {
    const me = this.side;
    if (this.hasBrokenThrough(1 - me)) return [];
    const s = sign(me);
    const moves = [];
    for (let from = 0; from < this.cells.length; from++) {
      if (this.cells[from] !== 2 * s) continue; // only towers act
      const c = colOf(from);
      const r = rowOf(from);
      for (const [dc, dr] of DIRECTIONS) {
        // Distribution: s1 and s2 both on the board, each empty or one of my walls.
        if (onBoard(c + 2 * dc, r + 2 * dr)) {
          const s1 = sq(c + dc, r + dr);
          const s2 = sq(c + 2 * dc, r + 2 * dr);
          const free = (v) => v === 0 || v === s;
          if (free(this.cells[s1]) && free(this.cells[s2])) {
            moves.push({ kind: 'distribute', from, s1, s2 });
          }
        }
        // Sacrifice: an enemy wall (never a tower) on a neighbouring square.
        if (onBoard(c + dc, r + dr)) {
          const target = sq(c + dc, r + dr);
          if (this.cells[target] === -s) moves.push({ kind: 'sacrifice', from, target });
        }
      }
    }
    return moves;
  }

  /** The position after `move`, which must be legal here. */
  apply(move) {
    const s = sign(this.side);
    const cells = Int8Array.from(this.cells);
    if (move.kind === 'distribute') {
      cells[move.from] = 0;
      cells[move.s1] += s;
      cells[move.s2] += s;
    } else {
      cells[move.from] = s; // the tower loses one stone and becomes a wall
      cells[move.target] = 0; // the enemy wall leaves the board
    }
    return new Position(cells, 1 - this.side);
  }

  /**
   * null while the game goes on; otherwise { winner, reason } where reason is 'breakthrough'
   * (the winner stands on the loser's home row) or 'stalemate' (the side to move has no action).
   */
  outcome() {
    const me = this.side;
    if (this.hasBrokenThrough(1 - me)) return { winner: 1 - me, reason: 'breakthrough' };
    if (this.legalMoves().length === 0) return { winner: 1 - me, reason: 'stalemate' };
    return null;
  }

  toString() {
    const rows = [];
    for (let r = ROWS - 1; r >= 0; r--) {
      let row = '';
      for (let c = 0; c < COLS; c++) row += CELL_CHAR[this.cells[sq(c, r)]];
      rows.push(row);
    }
    return rows.join('/') + ' ' + (this.side === LIGHT ? 'L' : 'D');
  }
}

const CELL_CHAR = { 0: '.', 1: 'W', 2: 'T', '-1': 'w', '-2': 't' };
const CHAR_CELL = { '.': 0, W: 1, T: 2, w: -1, t: -2 };

// ---------------------------------------------------------------------------------------------
// Notation (docs/RULES.md, "Notation")
// ---------------------------------------------------------------------------------------------

/** Parses a position; throws Error with a message when the text is not a valid position. */
export function parsePosition(text) {
  // Blanks (spaces, tabs, line ends) separate the two fields; blanks at the ends are ignored.
  const fields = text.split(/[ \t\r\n]+/).filter((f) => f !== '');
  if (fields.length !== 2) throw new Error('expected the board and the side to move, separated by blanks');
  const [board, sideText] = fields;
  if (sideText !== 'L' && sideText !== 'D') throw new Error(`side to move must be L or D, not "${sideText}"`);
  const rows = board.split('/');
  if (rows.length !== ROWS) throw new Error(`expected ${ROWS} rows, got ${rows.length}`);
  const cells = new Int8Array(COLS * ROWS);
  rows.forEach((row, i) => {
    const r = ROWS - 1 - i; // row 7 first
    if (row.length !== COLS) throw new Error(`row ${r + 1} has ${row.length} characters, not ${COLS}`);
    for (let c = 0; c < COLS; c++) {
      const v = CHAR_CELL[row[c]];
      if (v === undefined) throw new Error(`unknown character '${row[c]}' at ${squareName(sq(c, r))}`);
      cells[sq(c, r)] = v;
    }
  });
  const pos = new Position(cells, sideText === 'L' ? LIGHT : DARK);
  for (const p of [LIGHT, DARK]) {
    if (pos.stones(p) > STONES_PER_SIDE) throw new Error(`${SIDE_NAME[p]} has more than ${STONES_PER_SIDE} stones`);
  }
  if (pos.hasBrokenThrough(pos.side)) {
    throw new Error(`${SIDE_NAME[pos.side]} (to move) already stands on the opponent's home row`);
  }
  return pos;
}

export function moveToString(move) {
  return move.kind === 'distribute'
    ? `${squareName(move.from)}-${squareName(move.s2)}`
    : `${squareName(move.from)}x${squareName(move.target)}`;
}

/** Parses a move's text (upper-case columns, `X` and surrounding spaces accepted); throws on bad syntax. */
export function parseMoveText(text) {
  const m = /^\s*([a-hA-H])([1-7])([-xX])([a-hA-H])([1-7])\s*$/.exec(text);
  if (!m) throw new Error(`not a move: "${text}"`);
  const from = sq(m[1].toLowerCase().charCodeAt(0) - 97, Number(m[2]) - 1);
  const to = sq(m[4].toLowerCase().charCodeAt(0) - 97, Number(m[5]) - 1);
  const dc = colOf(to) - colOf(from);
  const dr = rowOf(to) - rowOf(from);
  if (m[3] === '-') {
    const straight = (dc === 0 || dr === 0 || Math.abs(dc) === Math.abs(dr)) && Math.max(Math.abs(dc), Math.abs(dr)) === 2;
    if (!straight) throw new Error(`a distribution ends two squares away on a line: "${text}"`);
    return { kind: 'distribute', from, s1: sq(colOf(from) + dc / 2, rowOf(from) + dr / 2), s2: to };
  }
  if (Math.max(Math.abs(dc), Math.abs(dr)) !== 1) throw new Error(`a sacrifice targets a neighbour: "${text}"`);
  return { kind: 'sacrifice', from, target: to };
}

/** The legal move of `pos` written as `text`, or throws. */
export function parseMove(pos, text) {
  const want = moveToString(parseMoveText(text));
  const found = pos.legalMoves().find((mv) => moveToString(mv) === want);
  if (!found) throw new Error(`illegal move ${want} in ${pos}`);
  return found;
}

export function perft(pos, depth) {
  if (depth === 0) return 1;
  const moves = pos.legalMoves();
  if (depth === 1) return moves.length;
  let n = 0;
  for (const mv of moves) n += perft(pos.apply(mv), depth - 1);
  return n;
}


// ---------------------------------------------------------------------------------------------
// Self-test of the reference against the examples printed in docs/RULES.md.
// ---------------------------------------------------------------------------------------------

export function selfTest({ deep = false } = {}) {
  const failures = [];
  const expect = (what, got, want) => {
    if (got !== want) failures.push(`${what}: got ${got}, expected ${want}`);
  };
  const start = Position.initial();
  expect('start position', start.toString(), 'tttttttt/......../......../......../......../......../TTTTTTTT L');
  const perfts = [20, 400, 6960, 121104, 1953664];
  for (let d = 1; d <= (deep ? 5 : 4); d++) expect(`perft(${d}) from the start`, perft(start, d), perfts[d - 1]);

  const example = [
    ['d1-d3', 'tttttttt/......../......../......../...W..../...W..../TTT.TTTT D'],
    ['e7-e5', 'tttt.ttt/....w.../....w.../......../...W..../...W..../TTT.TTTT L'],
    ['c1-e3', 'tttt.ttt/....w.../....w.../......../...WW.../...T..../TT..TTTT D'],
    ['f7-d5', 'tttt..tt/....t.../...ww.../......../...WW.../...T..../TT..TTTT L'],
    ['d2-d4', 'tttt..tt/....t.../...ww.../...W..../...TW.../......../TT..TTTT D'],
    ['e6-e4', 'tttt..tt/......../...wt.../...Ww.../...TW.../......../TT..TTTT L'],
    ['d3xe4', 'tttt..tt/......../...wt.../...W..../...WW.../......../TT..TTTT D'],
  ];
  let pos = start;
  for (const [mv, want] of example) {
    try {
      pos = pos.apply(parseMove(pos, mv));
      expect(`worked example after ${mv}`, pos.toString(), want);
    } catch (e) {
      failures.push(`worked example ${mv}: ${e.message}`);
      break;
    }
    if (mv === 'e7-e5') {
      const moves = pos.legalMoves().map(moveToString);
      expect('Light moves after d1-d3 e7-e5', moves.length, 17);
      expect('c1-e3 legal there', moves.includes('c1-e3'), true);
      expect('d1-d3 legal there', moves.includes('d1-d3'), false);
      expect('d2-d4 legal there', moves.includes('d2-d4'), false);
    }
  }
  expect('stones after the example', `${pos.stones(LIGHT)}/${pos.stones(DARK)}`, '15/15');
  const edge = parsePosition('t......./......../......../......Tw/......../......../.T...... L');
  const edgeMoves = edge.legalMoves().map(moveToString);
  expect('g4xh4 at the edge', edgeMoves.includes('g4xh4'), true);
  expect('no eastward distribution from g4', edgeMoves.some((m) => /^g4-[h-z]/.test(m)), false);
  expect('upper case and X accepted', moveToString(parseMoveText(' D3Xe4 ')), 'd3xe4');
  return failures;
}

// ---------------------------------------------------------------------------------------------
// Random play: several move-choice styles, so that rare rules are reached.
// ---------------------------------------------------------------------------------------------

const forward = (player, s) => (player === LIGHT ? rowOf(s) : ROWS - 1 - rowOf(s));
const isEdge = (s) => colOf(s) === 0 || colOf(s) === COLS - 1 || rowOf(s) === 0 || rowOf(s) === ROWS - 1;
const isWinning = (pos, mv) =>
  mv.kind === 'distribute' && (rowOf(mv.s1) === homeRow(1 - pos.side) || rowOf(mv.s2) === homeRow(1 - pos.side));

export const STYLES = ['uniform', 'sacrifice', 'long', 'builder', 'rush', 'random-start'];

function chooseMove(pos, moves, style, rng) {
  const prefer = (p, pred) => {
    const good = moves.filter(pred);
    return good.length > 0 && rng() < p ? rng.pick(good) : null;
  };
  let mv = null;
  switch (style) {
    case 'sacrifice': // take a sacrifice whenever there is one, mostly
      mv = prefer(0.85, (m) => m.kind === 'sacrifice');
      break;
    case 'long': { // neither win nor let the opponent win at once: long games, ending in stalemates
      const safe = (m) => {
        if (isWinning(pos, m)) return false;
        const next = pos.apply(m);
        return !next.legalMoves().some((r) => isWinning(next, r));
      };
      mv = prefer(0.98, (m) => safe(m) && m.kind === 'distribute') || prefer(0.98, safe);
      break;
    }
    case 'builder': // stack onto own walls (walls become towers) and put towers on the edges
      mv =
        prefer(0.6, (m) => m.kind === 'distribute' && (pos.cells[m.s1] !== 0 || pos.cells[m.s2] !== 0)) ||
        prefer(0.6, (m) => m.kind === 'distribute' && isEdge(m.s2));
      break;
    case 'rush': { // run forward: breakthroughs by either side
      if (rng() < 0.7) {
        const best = Math.max(...moves.map((m) => (m.kind === 'distribute' ? forward(pos.side, m.s2) - forward(pos.side, m.from) : -3)));
        mv = prefer(1, (m) => m.kind === 'distribute' && forward(pos.side, m.s2) - forward(pos.side, m.from) === best);
      }
      break;
    }
    default:
      break;
  }
  return mv || rng.pick(moves);
}

/** Plays one game; returns { start, moves (strings), positions (strings, start and after each move), final }. */
export function playGame(start, style, rng, maxPlies) {
  let pos = start;
  const moves = [];
  const positions = [pos.toString()];
  const subStyle = style === 'random-start' ? rng.pick(STYLES.slice(0, 5)) : style;
  for (let ply = 0; ply < maxPlies; ply++) {
    const legal = pos.legalMoves();
    if (legal.length === 0) break;
    const mv = chooseMove(pos, legal, subStyle, rng);
    moves.push(moveToString(mv));
    pos = pos.apply(mv);
    positions.push(pos.toString());
  }
  return { start, moves, positions, final: pos };
}

/**
 * A random position that obeys the notation's rules but need not be reachable: up to 16 stones a
 * side, walls and towers anywhere, either side to move, sometimes a side without towers,
 * sometimes the opponent already on the mover's home row (a finished game).
 */
export function randomBoard(rng) {
  const side = rng.int(2);
  const cells = new Int8Array(COLS * ROWS);
  const finished = rng() < 0.1; // let the other side stand on the mover's home row
  for (const p of [LIGHT, DARK]) {
    const s = sign(p);
    const budget = rng() < 0.2 ? rng.int(5) : rng.int(STONES_PER_SIDE + 1);
    const towerShare = rng() < 0.15 ? 0 : rng() < 0.15 ? 1 : rng();
    let left = budget;
    for (let tries = 0; left > 0 && tries < 400; tries++) {
      const at = rng.int(cells.length);
      if (cells[at] !== 0) continue;
      const r = rowOf(at);
      if (p === side && r === homeRow(1 - side)) continue; // the mover may not stand on the goal row
      if (p !== side && r === homeRow(side) && !finished) continue;
      const tower = left >= 2 && rng() < towerShare;
      cells[at] = (tower ? 2 : 1) * s;
      left -= tower ? 2 : 1;
    }
  }
  return new Position(cells, side);
}

/**
 * A random position in which the side to move has towers but, most of the time, no action: each
 * of its towers is hemmed in by towers (its own or the enemy's) and the board edge, and no enemy
 * wall stands next to it. The rarest way to lose; random play almost never reaches it.
 */
export function blockedBoard(rng) {
  for (;;) {
    const side = rng.int(2);
    const me = sign(side);
    const cells = new Int8Array(COLS * ROWS);
    const stones = [0, 0];
    const put = (at, v) => {
      cells[at] = v;
      stones[ownerOf(v)] += Math.abs(v);
    };
    const towers = 1 + rng.int(3);
    for (let i = 0; i < towers; i++) {
      // corners and edges need the fewest blockers
      const c = rng() < 0.6 ? rng.pick([0, COLS - 1]) : rng.int(COLS);
      const r = rng() < 0.6 ? rng.pick([0, ROWS - 1]) : 1 + rng.int(ROWS - 2);
      if (r === homeRow(1 - side) || cells[sq(c, r)] !== 0) continue;
      put(sq(c, r), 2 * me);
    }
    if (stones[side] === 0) continue;
    // Block every open distribution with a tower, until none is left (own blockers are towers
    // too, so they are blocked in turn). Enemy stones stay off the mover's home row.
    for (let changed = true, rounds = 0; changed && rounds < 10; rounds++) {
      changed = false;
      for (let from = 0; from < cells.length; from++) {
        if (cells[from] !== 2 * me) continue;
        for (const [dc, dr] of DIRECTIONS) {
          const c = colOf(from);
          const r = rowOf(from);
          if (!onBoard(c + 2 * dc, r + 2 * dr)) continue;
          const s1 = sq(c + dc, r + dr);
          const s2 = sq(c + 2 * dc, r + 2 * dr);
          if (Math.abs(cells[s1]) === 2 || Math.abs(cells[s2]) === 2 || cells[s1] === -me || cells[s2] === -me) continue;
          const at = rng() < 0.7 ? s1 : s2; // both are empty: this board has no walls of the mover
          const ownOk = rowOf(at) !== homeRow(1 - side);
          if (rowOf(at) === homeRow(side) || (ownOk && rng() < 0.15)) put(at, 2 * me);
          else put(at, -2 * me);
          changed = true;
        }
      }
    }
    if (stones[0] > STONES_PER_SIDE || stones[1] > STONES_PER_SIDE) continue;
    if (rng() < 0.3) { // an enemy wall somewhere, usually out of reach
      const at = rng.int(cells.length);
      if (cells[at] === 0 && stones[1 - side] < STONES_PER_SIDE && rowOf(at) !== homeRow(side)) put(at, -me);
    }
    return new Position(cells, side);
  }
}

// ---------------------------------------------------------------------------------------------
// Talking to the binary
// ---------------------------------------------------------------------------------------------

const binMoves = async (bin, position) => {
  const r = await runBinary(bin, ['moves', '--game', 'mg', '--position', position]);
  return { ...r, list: r.stdout.split('\n').map((l) => l.trim()).filter(Boolean) };
};

/**
 * perft(1), perft(2) of many positions in one process. The binary answers each input line with
 * `<the line> <perft1> <perft2>` and stops at the first position it refuses; the refused one is
 * noted and the rest are sent again. Returns { counts: Map position -> [p1, p2], refused: [{ position, message }] }.
 */
async function binPerft(bin, positions) {
  const counts = new Map();
  const refused = [];
  let rest = positions;
  while (rest.length > 0) {
    const r = await runBinary(bin, ['perft', '--game', 'mg', '--depth', '2', '--positions', '-'], rest.join('\n') + '\n');
    for (const line of r.stdout.split('\n')) {
      const m = /^(.*) (\d+) (\d+)$/.exec(line);
      if (m) counts.set(m[1], [Number(m[2]), Number(m[3])]);
    }
    if (r.rc === 0) break;
    const m = /standard input line (\d+)/.exec(r.stderr);
    if (!m || refused.length >= 20) {
      refused.push({ position: '', message: `perft stopped (exit ${r.rc}): ${r.stderr.trim()}` });
      break;
    }
    const line = Number(m[1]); // 1-based; the input has no blank lines
    refused.push({ position: rest[line - 1], message: r.stderr.trim() });
    rest = rest.slice(line);
  }
  return { counts, refused };
}

/** The binary's verdict in its `apply` error text: { gameOver, winner, reason } or null. */
function parseGameOver(message) {
  const m = /the game is over: (.*)$/.exec(message);
  if (!m) return { gameOver: false };
  let r = /(Light|Dark) has reached (Light|Dark)'s home row/.exec(m[1]);
  if (r) return { gameOver: true, winner: SIDE_NAME.indexOf(r[1]), reason: 'breakthrough', text: m[1] };
  r = /(Light|Dark) has no legal action/.exec(m[1]);
  if (r) return { gameOver: true, winner: 1 - SIDE_NAME.indexOf(r[1]), reason: 'stalemate', text: m[1] };
  return { gameOver: true, winner: null, reason: null, text: m[1] };
}

/** A syntactically valid move that is illegal in `pos` (to make `apply` report the game state). */
function probeMove(pos) {
  const legal = new Set(pos.legalMoves().map(moveToString));
  for (let from = 0; from < COLS * ROWS; from++) {
    for (const [dc, dr] of DIRECTIONS) {
      const c = colOf(from) + dc;
      const r = rowOf(from) + dr;
      if (!onBoard(c, r)) continue;
      const text = `${squareName(from)}x${squareName(sq(c, r))}`;
      if (!legal.has(text)) return text;
    }
  }
  throw new Error('no probe move'); // impossible: at most 16 towers
}

/** Features of a position, for coverage counts and for choosing the `moves` samples. */
function features(pos) {
  const f = [];
  const out = pos.outcome();
  if (out) f.push(`terminal:${out.reason}:${SIDE_NAME[out.winner]}-wins`);
  if (out && out.reason === 'stalemate') f.push(pos.towers(pos.side) === 0 ? 'stalemate:no-towers' : 'stalemate:towers-blocked');
  const moves = pos.legalMoves();
  if (moves.some((m) => m.kind === 'sacrifice')) f.push('sacrifice-available');
  for (const m of moves) {
    if (m.kind === 'sacrifice' && isEdge(m.from)) f.push('edge-tower-sacrifice');
    if (m.kind === 'distribute' && (pos.cells[m.s1] !== 0 || pos.cells[m.s2] !== 0)) f.push('wall-to-tower-available');
    if (isWinning(pos, m)) f.push('breakthrough-available');
  }
  const s = sign(pos.side);
  for (const corner of [sq(0, 0), sq(7, 0), sq(0, 6), sq(7, 6)]) if (pos.cells[corner] === 2 * s) f.push('corner-tower');
  if (pos.side === DARK) f.push('dark-to-move');
  return [...new Set(f)];
}

// ---------------------------------------------------------------------------------------------
// Notation error handling: strings every reader must refuse.
// ---------------------------------------------------------------------------------------------

const S = 'tttttttt/......../......../......../......../......../TTTTTTTT';
export const BAD_POSITIONS = [
  ['six rows', 'tttttttt/......../......../......../......../TTTTTTTT L'],
  ['eight rows', 'tttttttt/......../......../......../......../......../......../TTTTTTTT L'],
  ['row of 7', 'tttttttt/......./......../......../......../......../TTTTTTTT L'],
  ['row of 9', 'tttttttt/......../......../......../......../......../TTTTTTTTT L'],
  ['empty row', 'tttttttt//......../......../......../......../TTTTTTTT L'],
  ['trailing slash', S + '/ L'],
  ['unknown char x', 'tttttttt/......../......../......x./......../......../TTTTTTTT L'],
  ['digit for a stack of 3', 'tttttttt/......../......../......3./......../......../TTTTTTTT L'],
  ['three stones as a letter', 'tttttttt/......../......../...Q..../......../......../TTTTTTTT L'],
  ['side X', S + ' X'],
  ['side lower-case l', S + ' l'],
  ['no side', S],
  ['no space before side', S + 'L'],
  ['extra field', S + ' L 0'],
  ['17 Dark stones', 'tttttttt/......../......../......../......../......../TTTTTTTw L'],
  ['17 Light stones', 'tttttttt/......../......../...W..../......../......../TTTTTTTT D'],
  ['mover already on the goal row', 'ttttttTt/......../......../......../......../......../TTTTTTT. L'],
  ['commas for slashes', 'tttttttt,........,........,........,........,........,TTTTTTTT L'],
];
// Other spellings of the start position that RULES.md's blank rule accepts: the binary must too.
export const BLANK_SPELLINGS = [
  ['two spaces before side', S + '  L'],
  ['tab before side', S + '\tL'],
  ['leading space', ' ' + S + ' L'],
  ['trailing blanks', S + ' L \r\n'],
];
// Hand-made positions for rules that random play seldom isolates; their move lists are always compared.
export const FIXED_POSITIONS = [
  // RULES.md: g4 may play g4xh4 at the edge but cannot distribute eastward.
  't......./......../......../......Tw/......../......../.T...... L',
  // a1 in the corner: a1xa2 and a1-c1 only (b2 is its own tower); b2 has no south or west moves
  // (s2 off the board) but may sacrifice b2xa2.
  'ttttttt./......../......../......../......../wT....../T....... L',
  // c2: walls c3 and c4 both become towers (c2-c4), d3 (own tower) blocks c2-e4; d3: the enemy
  // tower e3 blocks d3-f3 and cannot be sacrificed against
  'tttttt../......../......../..W...../..WTt.../..T.W.../........ L',
  // Dark stands on Light's home row: the game is over although Light could sacrifice b1
  'ttttttt./......../......../......../......../......../Tw...... L',
  // Light stands on Dark's home row, Dark to move: the game is over
  '.W....../......../......../......../......../......../TTTTTTT. D',
  // Dark's only tower, h4, is hemmed in by Light towers and the edge; its wall d4 cannot act
  '......../......../......TT/...w..Tt/......TT/......../TTT..... D',
  // no towers at all for the mover, only walls
  'tttttttt/......../......../.W..W.../......../......../........ L',
];

export const BAD_MOVES = ['d1d3', 'd1-d4', 'd1-d2', 'i1-i3', 'd0-d2', 'd1xd3', 'd1+d3', 'd1-d3-', 'd1—d3'];

// ---------------------------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------------------------

function parseArgs(argv) {
  const opts = { binary: null, games: 200, seed: 1, randomBoards: null, applyGames: 60, movesSamples: 24, jobs: 4,
                 maxPlies: 1000, notation: true, quiet: false, selftest: false };
  const num = (i) => {
    const v = Number(argv[i]);
    if (!Number.isInteger(v) || v < 0) throw new Error(`${argv[i - 1]} needs a non-negative integer`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--binary') opts.binary = argv[++i];
    else if (a === '--games') opts.games = num(++i);
    else if (a === '--seed') opts.seed = num(++i);
    else if (a === '--random-boards') opts.randomBoards = num(++i);
    else if (a === '--moves-samples') opts.movesSamples = num(++i);
    else if (a === '--apply-games') opts.applyGames = num(++i);
    else if (a === '--no-notation') opts.notation = false;
    else if (a === '--jobs') opts.jobs = Math.max(1, num(++i));
    else if (a === '--max-plies') opts.maxPlies = num(++i);
    else if (a === '--quiet') opts.quiet = true;
    else if (a === '--selftest') opts.selftest = true;
    else if (a === '--help' || a === '-h') opts.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (opts.randomBoards === null) opts.randomBoards = 5 * opts.games;
  return opts;
}

const USAGE = `usage: node mg_reference.mjs --binary PATH [--games N=200] [--seed S=1]
         [--random-boards K=5N] [--apply-games A=60] [--moves-samples M=24] [--jobs J=4]
         [--max-plies P=1000] [--no-notation] [--quiet]
       node mg_reference.mjs --selftest`;

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${e.message}\n${USAGE}`);
    return 2;
  }
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const t0 = Date.now();
  const log = (...a) => { if (!opts.quiet) console.log(...a); };

  const selfFailures = selfTest({ deep: opts.selftest });
  for (const f of selfFailures) console.error(`reference self-test FAILED: ${f}`);
  if (selfFailures.length) return 2;
  log('reference self-test: the RULES.md examples and perft(1..' + (opts.selftest ? 5 : 4) + ') from the start pass');
  if (opts.selftest) return 0;
  if (!opts.binary || !fs.existsSync(opts.binary)) {
    console.error(`no binary: ${opts.binary}\n${USAGE}`);
    return 2;
  }
  const bin = opts.binary;
  const diffs = []; // { kind, position, detail }
  const notes = [];
  const diff = (kind, position, detail) => diffs.push({ kind, position, detail });

  // 1. Games and random positions, all from the reference.
  const rng = seededRandom(opts.seed);
  const games = [];
  for (let g = 0; g < opts.games; g++) {
    const style = STYLES[g % STYLES.length];
    let start = Position.initial();
    if (style === 'random-start') {
      // Mostly a game from a random board; sometimes a finished one (a "game" of no moves, so
      // that `apply` reports the binary's verdict on breakthroughs and blocked towers too).
      if (rng() < 0.1) start = blockedBoard(rng);
      else do start = randomBoard(rng); while (start.outcome() && rng() < 0.8);
    }
    games.push({ index: g, style, ...playGame(start, style, rng, opts.maxPlies) });
  }
  const boards = Array.from({ length: opts.randomBoards }, (_, i) => (i % 10 === 9 ? blockedBoard(rng) : randomBoard(rng)).toString());

  const unique = new Map(); // position string -> { source: 'game' | 'random-board' | 'hand-made' }
  for (const g of games) for (const p of g.positions) unique.set(p, { source: 'game' });
  for (const b of boards) if (!unique.has(b)) unique.set(b, { source: 'random-board' });
  for (const f of FIXED_POSITIONS) if (!unique.has(f)) unique.set(f, { source: 'hand-made' });
  const positions = [...unique.keys()];

  // Coverage
  const coverage = new Map();
  const bump = (k) => coverage.set(k, (coverage.get(k) || 0) + 1);
  const featureOf = new Map();
  const refCounts = new Map();
  for (const p of positions) {
    const pos = parsePosition(p);
    refCounts.set(p, [perft(pos, 1), perft(pos, 2)]);
    const f = features(pos);
    featureOf.set(p, f);
    for (const k of f) bump(`${unique.get(p).source}: ${k}`);
  }
  for (const g of games) bump(`game end: ${gameEnd(g.final)}`);

  // 2. Ask the binary. One perft process for every position; `apply` once per game; `moves` on a
  //    sample of positions; the notation checks.
  const tRef = Date.now();
  const tasks = [];
  const perftTask = tasks.push(() => binPerft(bin, positions)) - 1;

  const applied = chooseGames(games, opts.applyGames, seededRandom(opts.seed ^ 0xa991));
  for (const g of applied) bump(`games through apply: ${gameEnd(g.final)}`);
  const applyTasks = applied.map((g) => {
    const probe = probeMove(g.final);
    return tasks.push(() => runBinary(bin, ['apply', '--game', 'mg', '--position', g.start.toString(), '--moves', [...g.moves, probe].join(' ')])) - 1;
  });

  const sample = [...FIXED_POSITIONS, ...chooseSamples(positions, featureOf, opts.movesSamples, seededRandom(opts.seed ^ 0x5eed))];
  const moveTasks = sample.map((p) => tasks.push(() => binMoves(bin, p)) - 1);

  const badPositions = opts.notation ? [...BAD_POSITIONS, ...BLANK_SPELLINGS] : [];
  const badMoves = opts.notation ? BAD_MOVES : [];
  const badPosTasks = badPositions.map(([, p]) => tasks.push(() => runBinary(bin, ['moves', '--game', 'mg', '--position', p])) - 1);
  const badMoveTasks = badMoves.map((m) => tasks.push(() => runBinary(bin, ['apply', '--game', 'mg', '--moves', m])) - 1);
  const lenientMoves = 'D1-D3  E7-E5 C1-e3 f7-D5 d2-d4 E6-E4 D3Xe4 ';
  const lenientMoveTask = opts.notation ? tasks.push(() => runBinary(bin, ['apply', '--game', 'mg', '--moves', lenientMoves])) - 1 : -1;

  log(`asking ${bin}: ${positions.length} positions (${games.length} games, ${boards.length} random boards), ` +
      `${tasks.length} processes, ${opts.jobs} at a time`);
  const results = await runPool(tasks, opts.jobs);

  // 2a. perft(1), perft(2)
  const perftResult = results[perftTask];
  let perftCompared = 0;
  const perftMismatch = [];
  const refusedSet = new Set();
  for (const { position, message } of perftResult.refused) {
    refusedSet.add(position);
    diff('position refused', position, `the reference accepts it; the binary says: ${message}`);
  }
  for (const p of positions) {
    const got = perftResult.counts.get(p);
    if (!got) {
      if (!refusedSet.has(p) && perftResult.refused.every((r) => r.position)) diff('perft: no answer', p, 'the binary printed no counts for this position');
      continue;
    }
    perftCompared++;
    const want = refCounts.get(p);
    if (got[0] !== want[0] || got[1] !== want[1]) perftMismatch.push({ p, got, want });
  }
  // Minimal reproducers for perft differences (a `moves` call each, the first few).
  for (const { p, got, want } of perftMismatch.slice(0, 5)) {
    let detail = `perft(1,2): binary ${got.join(', ')}, reference ${want.join(', ')}`;
    detail += await explainCounts(bin, parsePosition(p), got[0] !== want[0]);
    diff('perft', p, detail);
  }
  if (perftMismatch.length > 5) diff('perft', '', `${perftMismatch.length - 5} more positions with different perft counts`);

  // 2b. apply on whole games, with the final state
  let applyCompared = 0;
  applied.forEach((g, i) => {
    const r = results[applyTasks[i]];
    const n = g.moves.length;
    const where = `game ${g.index} (${g.style}) from ${g.start}: ${g.moves.join(' ')}`;
    if (r.rc === 0) {
      diff('apply: probe accepted', g.final.toString(), `the binary accepted ${probeMove(g.final)} after the game, which the reference calls illegal; it printed ${r.stdout.trim()}\n    ${where}`);
      return;
    }
    const m = /^error: move (\d+) \((.*?)\) in (.*?): move "(.*)": (.*)$/m.exec(r.stderr);
    if (!m) {
      diff('apply: unexpected output', g.start.toString(), `${r.stderr.trim()}\n    ${where}`);
      return;
    }
    const k = Number(m[1]);
    const before = g.positions[k - 1];
    if (m[3] !== before) diff('apply: position', before, `before move ${k} the binary has ${m[3]}\n    ${where}`);
    if (k <= n) {
      diff('apply: reference move rejected', before, `move ${k} ${g.moves[k - 1]} is legal for the reference; the binary says: ${m[5]}\n` +
        `  reproduce: oppidum apply --game mg --position "${before}" --moves "${g.moves[k - 1]}"\n    ${where}`);
      return;
    }
    applyCompared += n;
    const verdict = parseGameOver(m[5]);
    const out = g.final.outcome();
    if (!!out !== verdict.gameOver) {
      diff('game over', g.final.toString(), `reference: ${out ? `over, ${SIDE_NAME[out.winner]} wins by ${out.reason}` : 'not over'}; binary: ${m[5]}`);
    } else if (out && (verdict.winner !== out.winner || verdict.reason !== out.reason)) {
      diff('winner', g.final.toString(), `reference: ${SIDE_NAME[out.winner]} wins by ${out.reason}; binary: ${m[5]}`);
    }
  });

  // 2c. move lists
  let movesCompared = 0;
  sample.forEach((p, i) => {
    const r = results[moveTasks[i]];
    if (r.rc !== 0) {
      diff('moves: rejected', p, r.stderr.trim());
      return;
    }
    movesCompared++;
    const mine = parsePosition(p).legalMoves().map(moveToString).sort();
    const d = listDiff(mine, [...r.list].sort());
    if (d) diff('moves', p, d);
    const sorted = [...r.list].sort();
    if (r.list.join(' ') !== sorted.join(' ')) notes.push(`moves output not in byte order for ${p}`);
    if (mine.length === 0 && !/game is over/.test(r.stderr)) notes.push(`no moves but no game-over message for ${p}: ${r.stderr.trim()}`);
  });

  // 2d. notation
  const notation = [];
  badPositions.forEach(([what, p], i) => {
    const r = results[badPosTasks[i]];
    let ref = 'accepts';
    try { parsePosition(p); } catch (e) { ref = `refuses (${e.message})`; }
    const said = (r.stderr.trim() || r.stdout.trim()).split('\n')[0];
    notation.push(`  ${what.padEnd(32)} ${JSON.stringify(p)}\n      reference ${ref}; binary rc=${r.rc}: ${said}`);
    const good = i >= BAD_POSITIONS.length;
    if (!good && r.rc === 0) diff('notation: bad position accepted', p, `${what}: ${said}`);
    if (!good && r.rc !== 0 && !/error/i.test(r.stderr)) diff('notation: no clear message', p, `${what}: ${r.stderr}`);
    if (good && r.rc !== 0) diff('notation: a spelling RULES.md allows refused', p, `${what}: ${said}`);
  });
  badMoves.forEach((mv, i) => {
    const r = results[badMoveTasks[i]];
    let ref = 'accepts';
    try { parseMove(Position.initial(), mv); } catch (e) { ref = `refuses (${e.message})`; }
    const said = (r.stderr.trim() || r.stdout.trim()).split('\n')[0];
    notation.push(`  move ${JSON.stringify(mv).padEnd(27)} reference ${ref}; binary rc=${r.rc}: ${said}`);
    if (r.rc === 0) diff('notation: bad move accepted', Position.initial().toString(), `${mv}: ${said}`);
  });
  if (lenientMoveTask >= 0) {
    const r = results[lenientMoveTask];
    let want = Position.initial();
    for (const t of lenientMoves.trim().split(/\s+/)) want = want.apply(parseMove(want, t));
    notation.push(`  moves ${JSON.stringify(lenientMoves)} -> binary rc=${r.rc}: ${(r.stdout.trim() || r.stderr.trim())}`);
    if (r.rc !== 0 || r.stdout.trim() !== want.toString()) diff('notation: upper-case moves', '', `${lenientMoves}: ${r.stdout}${r.stderr}`);
  }

  // 3. Report
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  if (!opts.quiet) {
    console.log('\ncoverage (unique positions with the feature; game ends):');
    for (const [k, v] of [...coverage.entries()].sort()) console.log(`  ${k.padEnd(58)} ${v}`);
    console.log('\nnotation checks:');
    for (const l of notation) console.log(l);
  }
  for (const n of notes) console.log(`note: ${n}`);
  console.log(`\nsummary: ${positions.length} positions; perft(1,2) compared on ${perftCompared}, ` +
    `${applyCompared} moves applied in ${applied.length} of ${games.length} games (final position and game end compared), ` +
    `move lists compared on ${movesCompared}; ${badPositions.length + badMoves.length + (lenientMoveTask >= 0 ? 1 : 0)} notation checks; ` +
    `${tasks.length} oppidum processes; ${diffs.length} difference(s); ${secs} s (${((tRef - t0) / 1000).toFixed(1)} s in the reference before the binary ran)`);
  for (const d of diffs) {
    console.log(`\nDIFFERENCE [${d.kind}]${d.position ? `\n  position: ${d.position}` : ''}\n  ${d.detail}`);
  }
  return diffs.length ? 1 : 0;
}

function listDiff(mine, theirs) {
  const a = new Set(mine);
  const b = new Set(theirs);
  const onlyMine = mine.filter((m) => !b.has(m));
  const onlyTheirs = theirs.filter((m) => !a.has(m));
  if (!onlyMine.length && !onlyTheirs.length) return null;
  return `legal for the reference only: [${onlyMine.join(' ')}]; legal for the binary only: [${onlyTheirs.join(' ')}]`;
}

/** Narrows a perft difference down to one move list: this position's, or a child's. */
async function explainCounts(bin, pos, depthOne) {
  if (depthOne) {
    const r = await binMoves(bin, pos.toString());
    return `\n  ${listDiff(pos.legalMoves().map(moveToString).sort(), r.list.sort()) ?? '(the move lists agree?)'}`;
  }
  const kids = pos.legalMoves().map((m) => ({ m, child: pos.apply(m) }));
  const r = await binPerft(bin, kids.map((k) => k.child.toString()));
  for (const { m, child } of kids) {
    const got = r.counts.get(child.toString());
    const want = perft(child, 1);
    if (!got || got[0] !== want) {
      const l = await binMoves(bin, child.toString());
      return `\n  after ${moveToString(m)}: ${child}\n  ${listDiff(child.legalMoves().map(moveToString).sort(), l.list.sort()) ?? l.stderr.trim()}`;
    }
  }
  return '\n  (no child differs at depth 1)';
}

function gameEnd(pos) {
  const out = pos.outcome();
  if (!out) return 'ply cap';
  const blocked = out.reason === 'stalemate' ? (pos.towers(pos.side) ? ' (towers blocked)' : ' (no towers)') : '';
  return `${out.reason}${blocked}, ${SIDE_NAME[out.winner]} wins`;
}

/** Up to `n` games for `apply`: one of every (style, way the game ended) first, then random ones. */
function chooseGames(games, n, rng) {
  const kind = (g) => {
    const out = g.final.outcome();
    return `${g.style}/${out ? `${out.reason}/${out.winner}/${out.reason === 'stalemate' && g.final.towers(g.final.side) === 0 ? 'no-towers' : ''}` : 'cap'}`;
  };
  const chosen = new Set();
  const seen = new Set();
  for (const g of games) {
    if (chosen.size >= n) break;
    if (!seen.has(kind(g))) {
      seen.add(kind(g));
      chosen.add(g);
    }
  }
  const rest = games.filter((g) => !chosen.has(g));
  while (chosen.size < n && rest.length) chosen.add(rest.splice(rng.int(rest.length), 1)[0]);
  return [...chosen].sort((a, b) => a.index - b.index);
}

/** Up to `n` positions for `moves`: one of every feature first, then random ones. */
function chooseSamples(positions, featureOf, n, rng) {
  const chosen = new Set();
  const seen = new Set();
  const order = [...positions];
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (const p of order) {
    if (chosen.size >= n) break;
    const fresh = featureOf.get(p).filter((f) => !seen.has(f));
    if (fresh.length) {
      chosen.add(p);
      for (const f of featureOf.get(p)) seen.add(f);
    }
  }
  for (const p of order) {
    if (chosen.size >= n) break;
    chosen.add(p);
  }
  return [...chosen];
}

main().then((rc) => process.exit(rc), (e) => { console.error(e.stack || String(e)); process.exit(2); });
