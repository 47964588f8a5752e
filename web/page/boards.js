// Boards as SVG, drawn from what the server says of a game (GET /api/games: its board layout, the
// cells with their centres in layout units, square or hexagonal, and the coordinate labels) and of a
// position (its board view: the pieces on each cell, bottom to top, and a label). No game is named
// here and no rule applied: legal moves and their cells come from the server too. Every cell is an
// element with data-square="c1" (its name in the game's notation), so clicks (people and tests)
// name it.
"use strict";

const UNIT = 54;  // pixels per layout unit: the distance between neighbouring cells' centres
const HEX_RADIUS = 0.52;  // a hexagon's corner radius in units (0.577 would touch its neighbours)
const LABEL_ROOM = 0.35;  // units kept free around a coordinate label's position
const PIECE_RADIUS = 0.34;
const STACK_STEP = 0.12;  // how far each piece of a stack sits above the one below, in units
// Pieces of player 0 and 1 and neutral pieces (games/game.h, kNeutralPiece = 2).
const PIECE_STYLE = [
  { fill: "#f7ecd0", stroke: "#8a6d3b", text: "#222" },
  { fill: "#3b2616", stroke: "#1a0f06", text: "#fff" },
  { fill: "#d62728", stroke: "#7f1415", text: "#fff" },
];

// Pixel geometry of a layout, made once per layout: the board's size and each cell's centre.
const geometries = new WeakMap();
function boardGeometry(layout) {
  let geo = geometries.get(layout);
  if (geo) return geo;
  const half = layout.shape === "hexagon" ? [0.5, 1 / Math.sqrt(3)] : [0.5, 0.5];
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  const grow = (x, y, dx, dy) => {
    x0 = Math.min(x0, x - dx); x1 = Math.max(x1, x + dx);
    y0 = Math.min(y0, y - dy); y1 = Math.max(y1, y + dy);
  };
  for (const c of layout.cells) grow(c.x, c.y, half[0], half[1]);
  for (const l of layout.labels) grow(l.x, l.y, LABEL_ROOM, LABEL_ROOM);
  const pad = 0.15;
  const px = (x, y) => [(x - x0 + pad) * UNIT, (y - y0 + pad) * UNIT];
  const centres = new Map(layout.cells.map((c) => [c.name, px(c.x, c.y)]));
  geo = {
    width: Math.ceil((x1 - x0 + 2 * pad) * UNIT), height: Math.ceil((y1 - y0 + 2 * pad) * UNIT), px,
    center(name) {
      const c = centres.get(name);
      if (!c) throw new Error(`the board has no cell ${name}`);
      return c;
    },
  };
  geometries.set(layout, geo);
  return geo;
}

function hexPoints(cx, cy, radius) {
  const pts = [];
  for (let i = 0; i < 6; i++) {
    const a = Math.PI / 6 + i * Math.PI / 3;
    pts.push(`${cx + radius * Math.cos(a)},${cy + radius * Math.sin(a)}`);
  }
  return pts.join(" ");
}

// The arrow of a move from its cells: from the first to the last, or a ring on a move's one cell.
function moveArrow(cells, weight, label) {
  if (!cells || !cells.length) return null;
  return { from: cells.length > 1 ? cells[0] : undefined, to: cells[cells.length - 1], weight, label };
}

// The same geometry turned half a turn: the second player's side at the bottom.
function flippedGeometry(geo) {
  const turn = ([x, y]) => [geo.width - x, geo.height - y];
  return { ...geo, px: (x, y) => turn(geo.px(x, y)), center: (name) => turn(geo.center(name)) };
}

// Draws a position of `game` (an entry of /api/games) from its board view (one entry per cell of
// the layout). opts: {onClick(cell), sources, targets, selected (Sets of cell names), last ([cell
// names]), arrows ([{from, to, weight, label}]), marks ([{square, text}]), flip (turn the board
// half a turn), busy (a request is pending: clicks are ignored and the board is greyed)}.
function drawBoard(game, board, opts) {
  opts = opts || {};
  const layout = game.board;
  const geo = opts.flip ? flippedGeometry(boardGeometry(layout)) : boardGeometry(layout);
  const svg = svgEl("svg", { width: geo.width, height: geo.height,
                             class: opts.busy ? "board busy" : "board",
                             viewBox: `0 0 ${geo.width} ${geo.height}`, "data-game": game.name,
                             "data-flipped": opts.flip ? "true" : "false",
                             "data-busy": opts.busy ? "true" : "false" });
  const last = new Set(opts.last || []);
  layout.cells.forEach((c) => {
    const [cx, cy] = geo.center(c.name);
    const cls = ["cell"];
    if (opts.sources && opts.sources.has(c.name)) cls.push("source");
    if (opts.targets && opts.targets.has(c.name)) cls.push("target");
    if (opts.selected && opts.selected.has(c.name)) cls.push("selected");
    if (last.has(c.name)) cls.push("last");
    let cell;
    if (layout.shape === "hexagon") {
      cell = svgEl("polygon", { points: hexPoints(cx, cy, HEX_RADIUS * UNIT), fill: "#ece6da",
                                stroke: "#a89f8f" }, svg);
    } else {
      const dark = (Math.round(c.x) + Math.round(c.y)) % 2 !== 0;
      cell = svgEl("rect", { x: cx - UNIT / 2, y: cy - UNIT / 2, width: UNIT, height: UNIT,
                             fill: dark ? "#d9c7a3" : "#efe3c8", stroke: "#b09a74" }, svg);
    }
    cell.setAttribute("class", cls.join(" "));
    cell.setAttribute("data-square", c.name);
    if (opts.onClick) cell.addEventListener("click", () => { if (!opts.busy) opts.onClick(c.name); });
  });
  // Coordinates beside the board go under the pieces; a name inside its cell (DVONN's) goes over
  // them, at the cell's foot with a light halo, so that a stack never hides it.
  const centres = new Set(layout.cells.map((c) => `${c.x},${c.y}`));
  const inside = (l) => centres.has(`${l.x},${l.y}`);
  const drawLabel = (l) => {
    const [x, y] = geo.px(l.x, l.y);
    const over = inside(l);
    svgEl("text", { x, y: over ? y + 0.42 * UNIT : y + 4, "text-anchor": "middle",
                    "font-size": over ? 9 : 11, fill: over ? "#555" : "#888",
                    stroke: over ? "#fff" : "none", "stroke-width": over ? 2.5 : 0,
                    "paint-order": "stroke", class: "coord" }, svg).textContent = l.text;
  };
  layout.labels.filter((l) => !inside(l)).forEach(drawLabel);
  layout.cells.forEach((c, i) => {
    const v = board[i] || {};
    if (v.pieces && v.pieces.length) drawStack(svg, v, geo.center(c.name), c.name);
  });
  layout.labels.filter(inside).forEach(drawLabel);
  for (const a of opts.arrows || []) drawArrow(svg, geo, a);
  for (const m of opts.marks || []) {
    const [cx, cy] = geo.center(m.square);
    svgEl("circle", { cx, cy: cy - 14, r: 11, fill: "#1f6feb", opacity: 0.85, "pointer-events": "none" }, svg);
    svgEl("text", { x: cx, y: cy - 10, "text-anchor": "middle", "font-size": 10, fill: "#fff",
                    class: "mark" }, svg).textContent = m.text;
  }
  return svg;
}

// A stack: one disc per piece, each a little above the one below, the label on the top one.
// Pieces let clicks through to their cell (pointer-events none).
function drawStack(svg, v, [cx, cy], name) {
  const g = svgEl("g", { class: "piece", "data-piece": name, "data-owners": v.pieces.join(""),
                         "pointer-events": "none" }, svg);
  const step = STACK_STEP * UNIT, bottom = cy + (v.pieces.length - 1) * step / 2;
  let top = cy;
  v.pieces.forEach((owner, i) => {
    const style = PIECE_STYLE[owner] || PIECE_STYLE[2];
    top = bottom - i * step;
    svgEl("circle", { cx, cy: top, r: PIECE_RADIUS * UNIT, fill: style.fill, stroke: style.stroke,
                      "stroke-width": 2 }, g);
  });
  if (v.label) {
    const style = PIECE_STYLE[v.pieces[v.pieces.length - 1]] || PIECE_STYLE[2];
    svgEl("text", { x: cx, y: top + 5, "text-anchor": "middle", "font-size": 14, "font-weight": 700,
                    fill: style.text, class: "label" }, g).textContent = v.label;
  }
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
    // Along the arrow, so that moves to one cell from different cells keep apart.
    const [lx, ly] = a.from ? (([x1, y1]) => [x1 + 0.6 * (x2 - x1) + 6, y1 + 0.6 * (y2 - y1) - 6])(geo.center(a.from))
                            : [x2 + 12, y2 - 12];
    svgEl("text", { x: lx, y: ly, "font-size": 11, "font-weight": 700, fill: "#0b3d91",
                    "pointer-events": "none" }, svg).textContent = a.label;
  }
}
