// Boards as SVG: Murus Gallicus (8 x 7 squares) and DVONN (49 hexagonal spaces), drawn from a
// position in the notation of docs/RULES.md. The page reads positions to draw them, never to apply
// rules: legal moves come from the server. Every square or space is an element with
// data-square="c1" / "D4", so clicks (people and tests) name it.
"use strict";

const MG_COLS = "abcdefgh";
const DVONN_ROW_LETTERS = { 1: "ABCDEFGHI", 2: "ABCDEFGHIJ", 3: "ABCDEFGHIJK", 4: "BCDEFGHIJK", 5: "CDEFGHIJK" };
const LETTERS = "ABCDEFGHIJK";

// {cells: {square: {owner: 0|1, height: 1|2}}, toMove}
function parseMg(position) {
  const [board, side] = position.trim().split(/\s+/);
  const rows = board.split("/");
  const cells = {};
  rows.forEach((row, i) => {
    const rank = 7 - i;
    [...row].forEach((ch, c) => {
      const sq = MG_COLS[c] + rank;
      if (ch === "T") cells[sq] = { owner: 0, height: 2 };
      else if (ch === "W") cells[sq] = { owner: 0, height: 1 };
      else if (ch === "t") cells[sq] = { owner: 1, height: 2 };
      else if (ch === "w") cells[sq] = { owner: 1, height: 1 };
    });
  });
  return { cells, toMove: side === "D" ? 1 : 0 };
}

// {cells: {space: {top: "W"|"B"|"R", height, dvonn}}, toMove, ply}
function parseDvonn(position) {
  const [board, side, ply] = position.trim().split(/\s+/);
  const cells = {};
  board.split("/").forEach((row, i) => {
    const r = i + 1, letters = DVONN_ROW_LETTERS[r];
    row.split(",").forEach((entry, k) => {
      if (entry === ".") return;
      const m = /^([WBR])(\d+)(\*?)$/.exec(entry);
      if (m) cells[letters[k] + r] = { top: m[1], height: +m[2], dvonn: m[3] === "*" || m[1] === "R" };
    });
  });
  return { cells, toMove: side === "B" ? 1 : 0, ply: +ply };
}

// The squares a move names: {from, to} (either may be missing: a placement, PASS).
function moveSquares(game, move) {
  if (game === "mg") {
    const m = /^([a-h][1-7])[-x]([a-h][1-7])$/.exec(move);
    return m ? { from: m[1], to: m[2], kind: move.includes("x") ? "sacrifice" : "distribution" } : {};
  }
  if (move === "PASS") return { kind: "pass" };
  const m = /^([A-K][1-5])([A-K][1-5])?$/.exec(move);
  if (!m) return {};
  return m[2] ? { from: m[1], to: m[2], kind: "move" } : { to: m[1], kind: "place" };
}

// Centre of a square or space in board pixels, and the board's size.
function mgGeometry() {
  const size = 56, margin = 24;
  return {
    width: margin + 8 * size + 8, height: 7 * size + margin + 8, size,
    center(sq) {
      const c = MG_COLS.indexOf(sq[0]), r = +sq[1];
      return [margin + c * size + size / 2, 8 + (7 - r) * size + size / 2];
    },
    squares() {
      const out = [];
      for (let r = 7; r >= 1; r--) for (const c of MG_COLS) out.push(c + r);
      return out;
    },
  };
}

function dvonnGeometry() {
  const dx = 50, dy = 44, margin = 34;
  return {
    width: margin * 2 + 10 * dx, height: margin * 2 + 4 * dy, size: 44,
    center(sq) {
      const c = LETTERS.indexOf(sq[0]), r = +sq[1];
      return [margin + (c - 0.5 * (r - 3)) * dx, margin + (5 - r) * dy];
    },
    squares() {
      const out = [];
      for (let r = 5; r >= 1; r--) for (const l of DVONN_ROW_LETTERS[r]) out.push(l + r);
      return out;
    },
  };
}

function hexPoints(cx, cy, radius) {
  const pts = [];
  for (let i = 0; i < 6; i++) {
    const a = Math.PI / 6 + i * Math.PI / 3;
    pts.push(`${cx + radius * Math.cos(a)},${cy + radius * Math.sin(a)}`);
  }
  return pts.join(" ");
}

// Draws `position` of `game`. opts: {onClick(square), sources, targets (Sets of squares),
// selected, last ([squares]), arrows ([{from, to, weight, label}]), marks ([{square, text}])}.
function drawBoard(game, position, opts) {
  opts = opts || {};
  const geo = game === "mg" ? mgGeometry() : dvonnGeometry();
  const svg = svgEl("svg", { width: geo.width, height: geo.height, class: "board",
                             viewBox: `0 0 ${geo.width} ${geo.height}`, "data-game": game });
  const parsed = game === "mg" ? parseMg(position) : parseDvonn(position);
  const last = new Set(opts.last || []);
  for (const sq of geo.squares()) {
    const [cx, cy] = geo.center(sq);
    let cell;
    const cls = ["cell"];
    if (opts.sources && opts.sources.has(sq)) cls.push("source");
    if (opts.targets && opts.targets.has(sq)) cls.push("target");
    if (opts.selected === sq) cls.push("selected");
    if (last.has(sq)) cls.push("last");
    if (game === "mg") {
      const s = geo.size;
      const dark = (MG_COLS.indexOf(sq[0]) + +sq[1]) % 2 === 0;
      cell = svgEl("rect", { x: cx - s / 2, y: cy - s / 2, width: s, height: s,
                             fill: dark ? "#d9c7a3" : "#efe3c8", stroke: "#b09a74" }, svg);
    } else {
      cell = svgEl("polygon", { points: hexPoints(cx, cy, 26), fill: "#ece6da", stroke: "#a89f8f" }, svg);
    }
    cell.setAttribute("class", cls.join(" "));
    cell.setAttribute("data-square", sq);
    if (opts.onClick) cell.addEventListener("click", () => opts.onClick(sq));
    const piece = parsed.cells[sq];
    if (piece) drawPiece(svg, game, piece, cx, cy, geo.size, sq);
  }
  // Coordinates.
  if (game === "mg") {
    for (let c = 0; c < 8; c++) {
      const [x] = geo.center(MG_COLS[c] + 1);
      svgEl("text", { x, y: geo.height - 4, "text-anchor": "middle", "font-size": 11, fill: "#777" }, svg).textContent = MG_COLS[c];
    }
    for (let r = 1; r <= 7; r++) {
      const [, y] = geo.center("a" + r);
      svgEl("text", { x: 10, y: y + 4, "text-anchor": "middle", "font-size": 11, fill: "#777" }, svg).textContent = r;
    }
  } else {
    for (const sq of geo.squares()) {
      if (parsed.cells[sq]) continue;
      const [cx, cy] = geo.center(sq);
      svgEl("text", { x: cx, y: cy + 4, "text-anchor": "middle", "font-size": 10, fill: "#aaa" }, svg).textContent = sq;
    }
  }
  for (const a of opts.arrows || []) drawArrow(svg, geo, a);
  for (const m of opts.marks || []) {
    const [cx, cy] = geo.center(m.square);
    svgEl("circle", { cx, cy: cy - 14, r: 11, fill: "#1f6feb", opacity: 0.85, "pointer-events": "none" }, svg);
    svgEl("text", { x: cx, y: cy - 10, "text-anchor": "middle", "font-size": 10, fill: "#fff",
                    class: "mark" }, svg).textContent = m.text;
  }
  return svg;
}

// Pieces let clicks through to their square (pointer-events none).
function drawPiece(svg, game, piece, cx, cy, size, sq) {
  const g = svgEl("g", { class: "piece", "data-piece": sq, "pointer-events": "none" }, svg);
  if (game === "mg") {
    const light = piece.owner === 0;
    const fill = light ? "#f7ecd0" : "#5a3b22", stroke = light ? "#8a6d3b" : "#2b1a0e";
    if (piece.height === 2) {
      svgEl("circle", { cx, cy: cy + 4, r: size * 0.36, fill, stroke, "stroke-width": 2 }, g);
      svgEl("circle", { cx, cy: cy - 4, r: size * 0.36, fill, stroke, "stroke-width": 2 }, g);
      svgEl("circle", { cx, cy: cy - 4, r: size * 0.18, fill: "none", stroke, "stroke-width": 1.5 }, g);
    } else {
      svgEl("rect", { x: cx - size * 0.32, y: cy - size * 0.14, width: size * 0.64, height: size * 0.28,
                      rx: 4, fill, stroke, "stroke-width": 2 }, g);
    }
    return;
  }
  const fills = { W: "#ffffff", B: "#222222", R: "#d62728" };
  svgEl("circle", { cx, cy, r: 18, fill: fills[piece.top], stroke: "#555", "stroke-width": 1.5 }, g);
  if (piece.dvonn && piece.top !== "R")
    svgEl("circle", { cx, cy, r: 13, fill: "none", stroke: "#d62728", "stroke-width": 3 }, g);
  svgEl("text", { x: cx, y: cy + 5, "text-anchor": "middle", "font-size": 14, "font-weight": 700,
                  fill: piece.top === "W" ? "#222" : "#fff" }, g).textContent = piece.height;
}

function drawArrow(svg, geo, a) {
  const opacity = 0.25 + 0.75 * Math.min(1, a.weight || 0);
  const [x2, y2] = geo.center(a.to);
  if (a.from) {
    const [x1, y1] = geo.center(a.from);
    const len = Math.hypot(x2 - x1, y2 - y1) || 1;
    const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
    const ex = x2 - ux * 10, ey = y2 - uy * 10;
    svgEl("line", { x1, y1, x2: ex, y2: ey, stroke: "#1f6feb", "stroke-width": 2 + 6 * (a.weight || 0),
                    "stroke-linecap": "round", opacity, "pointer-events": "none", class: "arrow" }, svg);
    svgEl("polygon", { points: `${x2},${y2} ${ex - uy * 7},${ey + ux * 7} ${ex + uy * 7},${ey - ux * 7}`,
                       fill: "#1f6feb", opacity, "pointer-events": "none" }, svg);
  } else {
    svgEl("circle", { cx: x2, cy: y2, r: 8 + 14 * (a.weight || 0), fill: "none", stroke: "#1f6feb",
                      "stroke-width": 3, opacity, "pointer-events": "none", class: "arrow" }, svg);
  }
  if (a.label) {
    // Along the arrow, so that moves to one square from different squares keep apart.
    const [lx, ly] = a.from ? (([x1, y1]) => [x1 + 0.6 * (x2 - x1) + 6, y1 + 0.6 * (y2 - y1) - 6])(geo.center(a.from))
                            : [x2 + 12, y2 - 12];
    svgEl("text", { x: lx, y: ly, "font-size": 11, "font-weight": 700, fill: "#0b3d91",
                    "pointer-events": "none" }, svg).textContent = a.label;
  }
}
