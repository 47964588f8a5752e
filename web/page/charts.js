// Line charts as SVG, drawn by the page itself (no library): lineChart(title, xLabel, series)
// returns an <svg> element. Each series is {name, color, points: [[x, y], ...]}; every point is a
// circle of class "pt" (with data-series), so tests and people can count and hover them.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(name, attrs, parent) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function formatTick(v) {
  const a = Math.abs(v);
  if (a >= 1000 || (a > 0 && Number.isInteger(v))) return String(Math.round(v));
  if (a === 0) return "0";
  const text = v.toPrecision(3);
  return text.includes(".") && !text.includes("e") ? text.replace(/\.?0+$/, "") : String(+text);
}

function lineChart(title, xLabel, series, opts) {
  const w = (opts && opts.width) || 420, h = (opts && opts.height) || 250;
  const left = 52, right = 12, top = 26, bottom = 36;
  const svg = svgEl("svg", { width: w, height: h, class: "chart", viewBox: `0 0 ${w} ${h}` });
  svg.dataset.title = title;
  svgEl("text", { x: w / 2, y: 17, "text-anchor": "middle", class: "title" }, svg).textContent = title;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const s of series)
    for (const [x, y] of s.points) {
      if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
  if (!Number.isFinite(x0)) {
    svgEl("text", { x: w / 2, y: h / 2, "text-anchor": "middle", class: "empty" }, svg).textContent =
      "no data yet";
    return svg;
  }
  if (x1 === x0) { x1 = x0 + 1; }
  if (y1 === y0) { y1 = y0 + 1; y0 -= 1; }
  const px = (x) => left + (x - x0) / (x1 - x0) * (w - left - right);
  const py = (y) => h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom);
  svgEl("rect", { x: left, y: top, width: w - left - right, height: h - top - bottom, fill: "none",
                  stroke: "#bbb" }, svg);
  for (let i = 0; i <= 4; i++) {
    const y = y0 + (y1 - y0) * i / 4, x = x0 + (x1 - x0) * i / 4;
    svgEl("line", { x1: left, x2: w - right, y1: py(y), y2: py(y), stroke: "#eee" }, svg);
    svgEl("text", { x: left - 4, y: py(y) + 4, "text-anchor": "end" }, svg).textContent = formatTick(y);
    svgEl("text", { x: px(x), y: h - bottom + 14, "text-anchor": "middle" }, svg).textContent = formatTick(x);
  }
  svgEl("text", { x: (left + w - right) / 2, y: h - 6, "text-anchor": "middle" }, svg).textContent = xLabel;
  let legend = 0;
  for (const s of series) {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (!pts.length) continue;
    svgEl("polyline", { fill: "none", stroke: s.color, "stroke-width": 1.5,
                        points: pts.map(([x, y]) => `${px(x)},${py(y)}`).join(" ") }, svg);
    const r = pts.length > 80 ? 1.2 : 2.5;
    for (const [x, y] of pts) {
      const c = svgEl("circle", { cx: px(x), cy: py(y), r, fill: s.color, class: "pt",
                                  "data-series": s.name }, svg);
      svgEl("title", {}, c).textContent = `${s.name}: ${formatTick(y)} at ${formatTick(x)}`;
    }
    svgEl("text", { x: left + 6, y: top + 13 + 13 * legend++, fill: s.color, stroke: "#fff",
                    "stroke-width": 3, "paint-order": "stroke" }, svg).textContent = s.name;
  }
  return svg;
}
