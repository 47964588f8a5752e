// Line charts as SVG, drawn by the page itself (no library): lineChart(title, axes, series)
// returns an <svg> element. axes: {x: label, y: label, integerX: whether x counts whole things
// (generations)}. Each series is {name, color, points: [[x, y], ...]}; every point is a circle of
// class "pt" (with data-series), so tests and people can count and hover them. Ticks fall on round
// numbers (1, 2 or 5 times a power of ten; whole numbers on an integer axis), the axes carry their
// labels with units, and the legend sits below the plot, never over a curve.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(name, attrs, parent) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

// Round ticks covering [lo, hi]: about `count` of them, a step of 1, 2 or 5 times a power of ten
// (at least 1 when `integer`). Returns {lo, hi, step, ticks}, the range widened to whole steps.
function niceTicks(lo, hi, count, integer) {
  if (hi <= lo) { hi = lo + (integer ? 1 : Math.max(1, Math.abs(lo) * 0.1)); }
  const raw = (hi - lo) / Math.max(1, count);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) || 10 * power;
  if (integer) step = Math.max(1, Math.round(step));
  const first = Math.floor(lo / step + 1e-9) * step, last = Math.ceil(hi / step - 1e-9) * step;
  // Values so large that a step no longer changes them (past 2^53 a step of 1 is lost) would tick
  // for ever: such an axis has its two ends only.
  const n = Math.round((last - first) / step);
  if (!Number.isFinite(first) || !Number.isFinite(last) || !(n >= 0 && n <= 1000) ||
      first + step === first || last - step === last) {
    let a = Number.isFinite(lo) ? lo : 0, b = Number.isFinite(hi) && hi > a ? hi : a + Math.max(1, Math.abs(a) * 0.1);
    if (!Number.isFinite(b)) { b = a; a = b - Math.abs(b) * 0.1; }
    return { lo: a, hi: b, step: b - a, ticks: [a, b] };
  }
  const ticks = [];
  for (let i = 0; i <= n; i++) {
    const v = first + i * step;
    ticks.push(Math.abs(v) < step / 1e6 ? 0 : v);
  }
  return { lo: first, hi: last, step, ticks };
}

function formatTick(v, step) {
  if (step !== undefined) {
    const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    const text = v.toFixed(digits);
    return Math.abs(v) >= 10000 ? Math.round(v).toLocaleString("en") : text;
  }
  const a = Math.abs(v);
  if (a >= 1000 || (a > 0 && Number.isInteger(v))) return String(Math.round(v));
  if (a === 0) return "0";
  const text = v.toPrecision(3);
  return text.includes(".") && !text.includes("e") ? text.replace(/\.?0+$/, "") : String(+text);
}

// The width of a legend's text in pixels (the style's 11 px font), measured on a canvas; about 6.5 px
// a character where no canvas can measure.
const legendFont = "11px system-ui, sans-serif";
let measureContext = null;
function textWidth(text) {
  if (measureContext === null) {
    measureContext = document.createElement("canvas").getContext("2d") || false;
    if (measureContext) measureContext.font = legendFont;
  }
  return measureContext ? measureContext.measureText(text).width : 6.5 * text.length;
}

// `text` in lines of at most `width` pixels, broken between words (a word longer than a line gets
// a line of its own).
function wrapWords(text, width) {
  const lines = [];
  for (const word of text.split(" ")) {
    const last = lines.length - 1;
    if (last >= 0 && textWidth(`${lines[last]} ${word}`) <= width) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return lines;
}

function lineChart(title, axes, series, opts) {
  const shown = series.filter((s) => s.points.some(([x, y]) => Number.isFinite(x) && Number.isFinite(y)));
  const w = (opts && opts.width) || 420, plotH = (opts && opts.height) || 230;
  const left = 58, right = 14, top = 26, bottom = 40, legendTop = plotH + 2;
  // Each legend's name wrapped to the width beside its swatch, so that none runs off the chart.
  const legends = shown.map((s) => wrapWords(s.name, w - left - 22 - right));
  const legendRows = Math.max(1, legends.reduce((n, lines) => n + lines.length, 0));
  const h = legendTop + 15 * legendRows + 6;
  const svg = svgEl("svg", { width: w, height: h, class: "chart", viewBox: `0 0 ${w} ${h}` });
  svg.dataset.title = title;
  svgEl("text", { x: w / 2, y: 17, "text-anchor": "middle", class: "title" }, svg).textContent = title;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const s of shown)
    for (const [x, y] of s.points) {
      if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
  if (!Number.isFinite(x0)) {
    svgEl("text", { x: w / 2, y: plotH / 2, "text-anchor": "middle", class: "empty" }, svg).textContent =
      "no data yet";
    return svg;
  }
  const xs = niceTicks(x0, x1, 5, axes.integerX), ys = niceTicks(y0, y1, 4, false);
  const px = (x) => left + (x - xs.lo) / (xs.hi - xs.lo) * (w - left - right);
  const py = (y) => plotH - bottom - (y - ys.lo) / (ys.hi - ys.lo) * (plotH - top - bottom);
  svgEl("rect", { x: left, y: top, width: w - left - right, height: plotH - top - bottom, fill: "none",
                  stroke: "#bbb" }, svg);
  for (const y of ys.ticks) {
    svgEl("line", { x1: left, x2: w - right, y1: py(y), y2: py(y), stroke: "#eee" }, svg);
    svgEl("text", { x: left - 4, y: py(y) + 4, "text-anchor": "end", class: "tick-y" }, svg).textContent =
      formatTick(y, ys.step);
  }
  for (const x of xs.ticks)
    svgEl("text", { x: px(x), y: plotH - bottom + 14, "text-anchor": "middle", class: "tick-x" }, svg)
      .textContent = formatTick(x, xs.step);
  svgEl("text", { x: (left + w - right) / 2, y: plotH - bottom + 30, "text-anchor": "middle",
                  class: "axis-x" }, svg).textContent = axes.x;
  svgEl("text", { x: 12, y: (top + plotH - bottom) / 2, "text-anchor": "middle", class: "axis-y",
                  transform: `rotate(-90 12 ${(top + plotH - bottom) / 2})` }, svg).textContent = axes.y;
  let legendRow = 0;
  shown.forEach((s, i) => {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    svgEl("polyline", { fill: "none", stroke: s.color, "stroke-width": 1.5,
                        points: pts.map(([x, y]) => `${px(x)},${py(y)}`).join(" ") }, svg);
    const r = pts.length > 80 ? 1.2 : 2.5;
    for (const [x, y] of pts) {
      const c = svgEl("circle", { cx: px(x), cy: py(y), r, fill: s.color, class: "pt",
                                  "data-series": s.name }, svg);
      svgEl("title", {}, c).textContent = `${s.name}: ${formatTick(y)} at ${axes.x} ${formatTick(x)}`;
    }
    // The legend, below the plot: a swatch and the name, on as many lines as it needs.
    const ly = legendTop + 15 * legendRow + 8;
    svgEl("line", { x1: left, x2: left + 16, y1: ly, y2: ly, stroke: s.color, "stroke-width": 3 }, svg);
    for (const line of legends[i])
      svgEl("text", { x: left + 22, y: legendTop + 15 * legendRow++ + 12, class: "legend",
                      "data-series": s.name }, svg).textContent = line;
  });
  return svg;
}
