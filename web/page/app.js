// The page of `oppidum serve`: views on the JSON API (web/server.h), chosen by the URL's hash.
//   #/runs                       live dashboards of the runs served (polled every 2 s)
//   #/ratings                    every result the server sees as Bradley-Terry ladders
//   #/games/RUN?page=&gen=...    the self-play games of a run, paginated and filtered
//   #/game/RUN/CHUNK/INDEX       one game: board, steps, move list, a network's view of a position
//                                (or two networks' side by side), the moves as text, and any
//                                position opened in Play or Analyse
//   #/play                       a game against any player spec, by clicks
//   #/analyse                    a pasted position: search statistics and a network's value
// Rules are never applied here and no game is named: the games (names, sides, boards) come from
// GET /api/games, and legal moves, positions, boards and results from the other calls.
"use strict";

const POLL_MS = 2000;
const MATCH_GAMES = 10; // of a match between two checkpoints

let info = { runs: [], arena: [], limits: {} };
let games = {};     // name -> an entry of /api/games
let gameList = [];  // the same, in the server's order
let pollTimer = null;
let view = 0;  // bumped on every route change; late answers of an old view are dropped

// ---------- helpers ----------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c);
  return el;
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const res = await fetch(path, options);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) throw new Error((data && data.error) || `${res.status} ${res.statusText}`);
  return data;
}

function showError(message) {
  const box = document.getElementById("error");
  box.textContent = message;
  box.hidden = false;
}
function clearError() { document.getElementById("error").hidden = true; }

// Runs `f` and shows its error, if any, in the banner.
async function guard(f) {
  try { return await f(); } catch (e) { showError(e.message); return undefined; }
}

function fmt(v, digits) {
  if (v === null || v === undefined || !Number.isFinite(+v)) return "–";
  v = +v;
  if (digits !== undefined) return v.toFixed(digits);
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en") : String(+v.toPrecision(4));
}

// The entry of /api/games for a game's name; a name the server did not list is an error.
function gameOf(name) {
  const g = games[name];
  if (!g) throw new Error(`the server lists no game "${name}"`);
  return g;
}

function displayName(name) { return games[name] ? games[name].display_name : name; }

function resultText(game, result, scores) {
  const g = gameOf(game), s = g.sides;
  const score = g.has_score && scores ? ` (${s[0]} ${scores[0]}, ${s[1]} ${scores[1]})` : "";
  if (result > 0) return `${s[0]} wins${score}, 1-0`;
  if (result < 0) return `${s[1]} wins${score}, 0-1`;
  return `Draw${score}, 1/2-1/2`;
}

function main() { return document.getElementById("main"); }

function setPage(name) {
  for (const a of document.querySelectorAll("nav a"))
    a.classList.toggle("active", a.dataset.page === name);
}

// ---------- routing ----------

function route() {
  view++;
  clearError();
  if (pollTimer) { clearInterval(pollTimer); pollTimer = null; }
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query] = hash.split("?");
  let parts;
  try {
    parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  } catch (e) {  // a malformed %-escape in a typed or pasted address
    parts = ["not-found"];
  }
  const params = new URLSearchParams(query || "");
  const page = parts[0] || "runs";
  setPage(["game", "arena", "arena-game"].includes(page) ? "games" : page);
  if (page === "runs") return showRuns();
  if (page === "ratings") return showRatings();
  if (page === "games") return showGames(parts[1], params);
  if (page === "game") return showGame(parts[1], parts[2], parts[3]);
  if (page === "arena") return showArena(parts[1], params);
  if (page === "arena-game") return showArenaGame(parts[1], parts[2]);
  if (page === "play") return showPlay();
  if (page === "analyse") return showAnalyse();
  main().replaceChildren(h("p", { text: `No page "${page}".` }));
}

// ---------- runs: live dashboards ----------

function showRuns() {
  const me = view;
  const root = h("div", { id: "runs" });
  main().replaceChildren(h("h1", { text: "Runs" }), root);
  if (!info.runs.length) {
    root.append(h("p", { class: "muted", text:
      "No run folders are served. Start the server with --run runs/<name> (e.g. runs/mg-small)." }));
    return;
  }
  const panels = {}, versions = {};
  for (const run of info.runs) {
    panels[run.name] = h("section", { class: "dashboard", "data-run": run.name });
    root.append(panels[run.name]);
  }
  const refresh = async () => {
    for (const run of info.runs) {
      try {
        const s = await api(`/api/runs/${encodeURIComponent(run.name)}/summary`);
        if (me !== view) return;
        if (versions[run.name] === s.version) continue;
        versions[run.name] = s.version;
        panels[run.name].replaceChildren(...dashboard(s));
      } catch (e) {
        if (me === view) showError(`run ${run.name}: ${e.message}`);
      }
    }
  };
  refresh();
  pollTimer = setInterval(refresh, POLL_MS);
}

// A generation's checkpoint as its file is named: "gen-0003".
const genName = (generation) => `gen-${String(generation).padStart(4, "0")}`;

function card(label, value, id) {
  return h("div", { class: "card", "data-card": id },
    h("div", { class: "label", text: label }), h("div", { class: "value", text: value }));
}

function dashboard(s) {
  const p = s.progress || {};
  const speed = s.speed_now;
  const time = s.time || {};
  const gameLabel = s.game ? displayName(s.game) : "game unknown";
  const out = [
    h("h2", {}, `${s.name} `, h("span", { class: "muted", text: `(${gameLabel}, ${s.folder})` }), " ",
      h("a", { href: `#/games/${encodeURIComponent(s.name)}`, text: "games →" })),
  ];
  if (s.config_error) out.push(h("p", { class: "muted", text: s.config_error }));
  if (s.table_error) out.push(h("p", { class: "muted", text: s.table_error }));
  if (s.reading) out.push(h("p", { class: "muted", text: "reading the run's tables: the curves fill in over the next polls" }));
  const cfg = s.config || {};
  // The keys a run keeps for good (config.yaml's self-play threads, which a session's --set may
  // change, are left out: a resumed run showed the creation's).
  if (cfg.net) out.push(h("p", { class: "muted", text:
    `network ${cfg.net}, self-play ${cfg.selfplay_simulations} simulations, ` +
    `${cfg.steps_per_generation} steps per generation, batch ${cfg.batch_size}, ` +
    (cfg.gate_games > 0 ? `gate ${cfg.gate_games} games` : "no gate (every generation promoted)") +
    (cfg.anchor ? `, anchor ${cfg.anchor}` : "") }));
  // Games and positions are the store's; speed is the newest "selfplay" row of metrics.csv (the
  // rate over a whole generation); the time adds up every session's clock to its last row.
  out.push(h("div", { class: "cards" },
    card(cfg.gate_games === 0 ? "last generation (no gate)" : "last generation gated",
         fmt(s.generation), "generation"),
    card("best network", genName(s.best), "best"),
    card("training step", fmt(p.step), "step"),
    card("self-play games", fmt(s.stored.games), "games"),
    card("positions", fmt(s.stored.positions), "positions"),
    card(speed ? `positions / s (generation ${speed.generation})` : "positions / s",
         speed ? fmt(speed.positions_per_second, 1) : "–", "speed"),
    s.cluster ? card(`games / s (${s.cluster.nodes} node${s.cluster.nodes === 1 ? "" : "s"})`,
                     fmt(s.cluster.games_per_second, 1), "cluster") : null,
    card(time.sessions > 1 ? `time trained (${time.sessions} sessions)` : "time trained",
         !time.sessions ? "–" : time.seconds < 60 ? `${fmt(time.seconds, 1)} s` : `${fmt(time.seconds / 60, 1)} min`,
         "time")));
  // What the counts above leave out: damaged records and lines that are not rows of their table.
  const damaged = (s.stored || {}).damaged || 0;
  if (damaged > 0) out.push(h("p", { class: "muted", "data-note": "damaged", text:
    `${fmt(damaged)} damaged record(s) or unreadable file(s) in the run's games/: the games and ` +
    "positions above leave them out" }));
  if (s.skipped_rows > 0) out.push(h("p", { class: "muted", "data-note": "skipped", text:
    `${fmt(s.skipped_rows)} line(s) of metrics.csv and arena.csv are not rows of their table: ` +
    "the cards and curves leave them out" }));
  const gates = s.gates || [];
  const losses = s.losses || [];
  const averaged = s.steps_per_loss_point > 1 ? `; each point the mean of about ${s.steps_per_loss_point} steps` : "";
  // Curves hold at most 400 points: a longer run's are means of consecutive gates.
  const ratings = s.ratings || {};
  const gatesAveraged = ratings.averaged ? "; means of consecutive gates" : "";
  out.push(h("div", { class: "charts" },
    lineChart("Training loss", { x: "optimiser step", y: "loss" }, [
      { name: `policy loss (cross-entropy, nats${averaged})`, color: "#1f77b4", points: losses.map((l) => [l[0], l[1]]) },
      { name: `value loss (squared error${averaged})`, color: "#d62728", points: losses.map((l) => [l[0], l[2]]) }]),
    lineChart("Rating (Elo) by generation", { x: "generation", y: "Elo", integerX: true }, [
      { name: `best network (chained, biased up${gatesAveraged})`, color: "#2ca02c", points: ratings.best || [] },
      { name: `candidate vs the best network (gate${gatesAveraged})`, color: "#ff7f0e", points: ratings.gate || [] },
      { name: `new best vs anchor${gatesAveraged}`, color: "#17becf", points: ratings.anchor || [] }]),
    lineChart("Self-play speed by generation", { x: "generation", y: "positions / s", integerX: true }, [
      { name: `self-play positions per second${s.speed_averaged ? "; means of consecutive generations" : ""}`,
        color: "#9467bd", points: s.speed }])));
  if (gates.length) {
    // Counts not all known (a gate rebuilt by --recover from metrics.csv has none) show as "–".
    const counted = (g) => g.wins !== null && g.draws !== null && g.losses !== null;
    const played = (g) => counted(g) ? g.wins + g.draws + g.losses : 0;
    const anchors = [...new Set(gates.filter((g) => g.anchor).map((g) => g.anchor))];
    const anchored = anchors.length > 0;
    // The anchor match of a promotion: its score over its games and its Elo with the interval (the
    // anchor named in the header when every row has the same one).
    const anchorText = (g) => !g.anchor || g.anchor_score === null ? "" :
      `${anchors.length > 1 ? `${g.anchor}: ` : ""}${fmt(100 * g.anchor_score, 1)}% of ${fmt(g.anchor_games)}, ` +
      (g.anchor_elo_low === null ? `${fmt(g.anchor_elo, 1)}`
                                 : `${fmt(g.anchor_elo, 1)} [${fmt(g.anchor_elo_low, 0)}, ${fmt(g.anchor_elo_high, 0)}]`);
    const rows = gates.slice().reverse().map((g) => h("tr", {},
      h("td", { text: g.generation }), h("td", { text: g.step }),
      h("td", { text: genName(g.opponent_generation) }),
      // A gate rebuilt by --recover from metrics.csv has no counts (null) and no interval.
      h("td", { text: counted(g) ? `+${g.wins} =${g.draws} -${g.losses}` : "–" }),
      h("td", { text: played(g) === 0 ? "–" : `${fmt(100 * (g.wins + g.draws / 2) / played(g), 1)}%` }),
      h("td", { text: counted(g) && played(g) === 0 ? "– (no games)"
                    : g.elo_low === null ? (g.elo === null ? "–" : `${fmt(g.elo, 1)} (no interval in arena.csv)`)
                                         : `${fmt(g.elo, 1)} [${fmt(g.elo_low, 0)}, ${fmt(g.elo_high, 0)}]` }),
      h("td", { text: g.verdict }), h("td", { text: g.promoted ? "promoted" : "" }),
      h("td", { text: fmt(g.rating, 1) }),
      anchored ? h("td", { "data-col": "anchor", text: anchorText(g) }) : null));
    out.push(h("h2", { text: "Gates (newest first)" }), h("div", { class: "table-scroll" }, h("table", { class: "gates" },
      h("tr", {}, ...["generation", "step", "against", "W/D/L", "score", "Elo [95%]", "verdict", "",
                      "chained rating"].concat(anchored ? [anchors.length > 1 ? "anchor match" : `vs ${anchors[0]}`] : [])
        .map((t) => h("th", { text: t }))), ...rows)),
      h("p", { class: "muted", "data-note": "gate-elo", text: "Elo [95%]: the candidate's Elo against " +
        "the network it challenged, estimated with a prior of one virtual game, half a win and " +
        "half a loss (docs/BASELINES.md, \"Matches\"): it lies nearer 0 than the Elo of the " +
        "score alone, and is finite for a score of 0% or 100%, which alone has none. Chained " +
        "rating: the sum of the gate Elos of the promotions since gen-0000, biased up (a " +
        "candidate is promoted when its gate went well)." +
        (anchored ? " Against the anchor: the new best network's match with the anchor, " +
                    "scored and estimated the same way." : "") }));
  }
  return out;
}

// ---------- ratings ----------

// "+35.2", "-4.0", "0.0": an Elo value with its sign, never "-0.0".
function signed(elo) {
  const v = Math.round(10 * elo) / 10;
  return v === 0 ? "0.0" : (v > 0 ? "+" : "") + v.toFixed(1);
}

// The ladders of GET /api/ratings: one table per game and group of players joined by games, each
// rating with its 95% interval drawn as a bar on the ladder's scale.
async function showRatings() {
  const me = view;
  const box = h("div", { id: "ratings" }, h("p", { class: "muted", text: "Loading…" }));
  main().replaceChildren(h("h1", { text: "Ratings" }), box);
  const r = await guard(() => api("/api/ratings"));
  if (!r || me !== view) return;
  const parts = [h("p", { class: "muted", text: `${r.method}. The results: the baselines' matches ` +
    "(docs/BASELINES.md), every gate (a candidate against the best network it challenged), every " +
    "anchor match of a promoted network (a run whose anchor is a baseline is rated on their " +
    "scale), and the games of the arena record files served (--arena-games)." })];
  if (!r.ladders.length) parts.push(h("p", { class: "muted", text: "No results yet: no run served has a gate." }));
  for (const l of r.ladders) {
    parts.push(h("h2", { text: `${displayName(l.game)}: ${l.players ? l.players.length : 0} players, ` +
      `${l.anchor} rated 0` }), h("p", { class: "muted", text: `from ${l.sources.join(", ")}; ` +
      `${l.matches} match${l.matches === 1 ? "" : "es"}; intervals relative to ${l.anchor}` }));
    if (l.error) { parts.push(h("p", { class: "error-text", text: l.error })); continue; }
    const lo = Math.min(...l.players.map((p) => p.low === null ? p.elo : p.low));
    const hi = Math.max(...l.players.map((p) => p.high === null ? p.elo : p.high));
    const x = (v) => 4 + (v - lo) / Math.max(1, hi - lo) * 192;
    const bar = (p) => {
      const svg = svgEl("svg", { width: 200, height: 14, class: "interval" });
      if (p.low !== null) svgEl("line", { x1: x(p.low), x2: x(p.high), y1: 7, y2: 7, stroke: "#1f6feb",
                                          "stroke-width": 3 }, svg);
      svgEl("circle", { cx: x(p.elo), cy: 7, r: 4, fill: p.low === null ? "#222" : "#1f6feb" }, svg);
      return svg;
    };
    parts.push(h("table", { class: "ratings", "data-game": l.game },
      h("tr", {}, ...["rank", "player", "Elo", "95% interval", "", "games", "score"].map((t) => h("th", { text: t }))),
      ...l.players.map((p, i) => h("tr", { "data-player": p.player },
        h("td", { text: i + 1 }), h("td", { class: "mono", text: p.player }),
        h("td", { text: signed(p.elo) }),
        h("td", { text: p.low === null ? "anchor (0 by definition)" : `[${fmt(p.low, 0)}, ${fmt(p.high, 0)}]` }),
        h("td", {}, bar(p)), h("td", { text: p.games }), h("td", { text: `${fmt(100 * p.score, 1)}%` })))));
  }
  box.replaceChildren(...parts);
}

// ---------- games: list ----------

function gamesHash(run, f) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v !== "" && v !== undefined && v !== null) q.set(k, v);
  return `#/games/${encodeURIComponent(run)}?${q}`;
}

async function showGames(run, params) {
  const me = view;
  if (!run) {
    if (info.runs.length) { location.hash = `#/games/${encodeURIComponent(info.runs[0].name)}`; return; }
    if (info.arena.length) { location.hash = `#/arena/${encodeURIComponent(info.arena[0].name)}`; return; }
    main().replaceChildren(h("h1", { text: "Games" }), h("p", { class: "muted", text:
      "No run folders or arena record files are served (--run DIR, --arena-games FILE)." }));
    return;
  }
  const f = { page: params.get("page") || "0", generation: params.get("generation") || "",
              result: params.get("result") || "", min_plies: params.get("min_plies") || "",
              max_plies: params.get("max_plies") || "" };
  const runSelect = sourceSelect(`run:${run}`);
  const gen = h("input", { type: "text", id: "filter-generation", size: 5, value: f.generation, placeholder: "any" });
  const result = h("select", { id: "filter-result" },
    ...[["", "any"], ["1-0", "1-0"], ["0-1", "0-1"], ["draw", "draw"]].map(([v, t]) =>
      h("option", { value: v, selected: f.result === v, text: t })));
  const minP = h("input", { type: "text", id: "filter-min", size: 4, value: f.min_plies, placeholder: "0" });
  const maxP = h("input", { type: "text", id: "filter-max", size: 4, value: f.max_plies, placeholder: "any" });
  const apply = (e) => {
    e.preventDefault();
    location.hash = gamesHash(run, { generation: gen.value.trim(), result: result.value,
                                     min_plies: minP.value.trim(), max_plies: maxP.value.trim() });
  };
  const list = h("div", { id: "games-list" }, h("p", { class: "muted", text: "Loading…" }));
  main().replaceChildren(h("h1", { text: "Self-play games" }),
    h("form", { class: "controls", onsubmit: apply },
      h("label", { text: "games of" }), runSelect, h("label", { text: "generation" }), gen,
      h("label", { text: "result" }), result, h("label", { text: "plies" }), minP, h("span", { text: "to" }), maxP,
      h("button", { type: "submit", id: "filter-apply", text: "Filter" })),
    list);
  const query = new URLSearchParams({ per_page: 50 });
  for (const [k, v] of Object.entries(f)) if (v !== "") query.set(k, v);
  const data = await guard(() => api(`/api/runs/${encodeURIComponent(run)}/games?${query}`));
  if (!data || me !== view) return;
  const page = data.page;
  const pager = h("div", { class: "pager" },
    h("button", { id: "page-prev", disabled: page <= 0,
                  onclick: () => { location.hash = gamesHash(run, { ...f, page: page - 1 }); } , text: "◀ newer" }),
    h("span", { id: "page-info", text:
      `page ${page + 1} of ${Math.max(1, data.pages)} · ${data.total.toLocaleString("en")} games match` +
      (data.total !== data.all ? ` (of ${data.all.toLocaleString("en")})` : "") }),
    h("button", { id: "page-next", disabled: page + 1 >= data.pages,
                  onclick: () => { location.hash = gamesHash(run, { ...f, page: page + 1 }); }, text: "older ▶" }));
  const rows = data.games.map((g) => h("tr", { class: "clickable", "data-game": `${g.chunk}/${g.index}`,
      onclick: () => { location.hash = `#/game/${encodeURIComponent(run)}/${g.chunk}/${g.index}`; } },
    h("td", { text: `${g.chunk}/${g.index}` }), h("td", { text: g.plies }), h("td", { text: g.result }),
    h("td", { text: g.scores.join("–") }), h("td", { text: g.generation ?? "–" }), h("td", { text: g.network_step })));
  list.replaceChildren(pager, h("table", { id: "games-table" },
    h("tr", {}, ...["chunk/game", "plies", "result", "scores", "generation", "network step"]
      .map((t) => h("th", { text: t }))), ...rows));
}

// ---------- games: one game ----------

async function checkpointOptions(game) {
  const out = [];
  for (const run of info.runs) {
    if (game && run.game && run.game !== game) continue;
    const names = await api(`/api/runs/${encodeURIComponent(run.name)}/checkpoints`).catch(() => []);
    for (const n of names) out.push(`${run.name}/${n}`);
  }
  return out;
}

// The games a page can list: the self-play games of each run and each arena record file.
function sourceSelect(current) {
  return h("select", { id: "games-run", onchange: (e) => {
      const [kind, name] = [e.target.value.slice(0, e.target.value.indexOf(":")), e.target.value.slice(e.target.value.indexOf(":") + 1)];
      location.hash = kind === "run" ? gamesHash(name, {}) : `#/arena/${encodeURIComponent(name)}`;
    } },
    ...info.runs.map((r) => h("option", { value: `run:${r.name}`, selected: current === `run:${r.name}`, text: `${r.name} (self-play)` })),
    ...(info.arena || []).map((a) => h("option", { value: `arena:${a.name}`, selected: current === `arena:${a.name}`, text: `${a.name} (arena)` })));
}

async function showArena(name, params) {
  const me = view;
  const page = +(params.get("page") || 0);
  const player = params.get("player") || "", result = params.get("result") || "";
  const playerBox = h("input", { type: "text", id: "filter-player", size: 24, value: player, placeholder: "any" });
  const resultSel = h("select", { id: "filter-result" },
    ...[["", "any"], ["1-0", "1-0"], ["0-1", "0-1"], ["1/2-1/2", "1/2-1/2"]].map(([v, t]) =>
      h("option", { value: v, selected: result === v, text: t })));
  const hashOf = (p, pl, r) => `#/arena/${encodeURIComponent(name)}?${new URLSearchParams({ page: p, player: pl, result: r })}`;
  const list = h("div", { id: "games-list" }, h("p", { class: "muted", text: "Loading…" }));
  main().replaceChildren(h("h1", { text: "Arena games" }),
    h("form", { class: "controls", onsubmit: (e) => { e.preventDefault(); location.hash = hashOf(0, playerBox.value.trim(), resultSel.value); } },
      h("label", { text: "games of" }), sourceSelect(`arena:${name}`), h("label", { text: "player" }), playerBox,
      h("label", { text: "result" }), resultSel, h("button", { type: "submit", id: "filter-apply", text: "Filter" })),
    list);
  const data = await guard(() => api(`/api/arena/${encodeURIComponent(name)}/games?${new URLSearchParams({ page, per_page: 50, player, result })}`));
  if (!data || me !== view) return;
  const pager = h("div", { class: "pager" },
    h("button", { id: "page-prev", disabled: page <= 0, onclick: () => { location.hash = hashOf(page - 1, player, result); }, text: "◀ newer" }),
    h("span", { id: "page-info", text: `page ${page + 1} of ${Math.max(1, data.pages)} · ${data.total} games match (of ${data.all})` }),
    h("button", { id: "page-next", disabled: page + 1 >= data.pages, onclick: () => { location.hash = hashOf(page + 1, player, result); }, text: "older ▶" }));
  list.replaceChildren(pager, h("table", { id: "games-table" },
    h("tr", {}, ...["game", "first player", "second player", "result", "plies"].map((t) => h("th", { text: t }))),
    ...data.games.map((g) => h("tr", { class: "clickable", onclick: () => { location.hash = `#/arena-game/${encodeURIComponent(name)}/${g.index}`; } },
      h("td", { text: g.index }), h("td", { text: g.first }), h("td", { text: g.second }), h("td", { text: g.result }), h("td", { text: g.plies })))));
}

async function showArenaGame(name, index) {
  const me = view;
  main().replaceChildren(h("p", { text: "Loading…" }));
  const g = await guard(() => api(`/api/arena/${encodeURIComponent(name)}/games/${encodeURIComponent(index)}`));
  if (!g || me !== view) return;
  const sides = gameOf(g.game).sides;
  gameViewer(g, [h("h1", {}, `Game ${g.index} of `, h("a", { href: `#/arena/${encodeURIComponent(name)}`, text: name })),
    h("p", { class: "muted", text: `${displayName(g.game)} · ${sides[0]}: ${g.first} · ${sides[1]}: ${g.second} · ${g.moves.length} plies · ${g.result}` })],
    `${name}-game-${g.index}`);
}

async function showGame(run, chunk, index) {
  const me = view;
  main().replaceChildren(h("p", { text: "Loading…" }));
  const g = await guard(() => api(`/api/runs/${encodeURIComponent(run)}/games/${encodeURIComponent(chunk)}/${encodeURIComponent(index)}`));
  if (!g || me !== view) return;
  gameViewer(g, [h("h1", {}, `Game ${g.chunk}/${g.index} of `, h("a", { href: `#/games/${encodeURIComponent(run)}`, text: run })),
    h("p", { class: "muted", text: `${displayName(g.game)} · network step ${g.network_step} (generation ${g.generation ?? "not known: the run's config.yaml is unreadable"})` +
      ` · seed ${g.seed}${g.node ? " · node " + g.node : ""} · ${g.moves.length} plies · ${g.result}` })],
    `${run}-game-${g.chunk}-${g.index}`);
}

// A game on a board with steps, its move list, a network's view of the position shown (or two
// networks' priors side by side), its moves as text to copy or download, and the position shown
// opened in Play or Analyse.
async function gameViewer(g, header, fileName) {
  const me = view;
  const game = gameOf(g.game);
  const n = g.moves.length;
  let ply = 0, overlay = null, flip = false;
  const boardBox = h("div", { id: "board" });
  const plyInfo = h("div", { id: "ply-info", class: "status" });
  const moveInfo = h("div", { id: "move-info", class: "muted" });
  const resultBox = h("div", { id: "game-result", class: "result" });
  const netInfo = h("div", { id: "net-info", class: "muted" });
  const compareBox = h("div", { id: "compare" });
  const matchBox = h("div", { id: "match-result", class: "muted" });
  const matchSims = h("input", { type: "text", id: "match-sims", size: 5, value: "50" });
  const list = h("div", { class: "moves", id: "move-list" });
  g.moves.forEach((m, i) => {
    list.append(h("span", { class: "num", text: `${i + 1}.` }),
      h("span", { "data-ply": i + 1, title: game.sides[m.side], onclick: () => go(i + 1), text: m.move }), " ");
  });
  const buttons = {
    first: h("button", { id: "first", onclick: () => go(0), text: "|◀" }),
    prev: h("button", { id: "prev", onclick: () => go(ply - 1), text: "◀" }),
    next: h("button", { id: "next", onclick: () => go(ply + 1), text: "▶" }),
    last: h("button", { id: "last", onclick: () => go(n), text: "▶|" }),
    flip: h("button", { id: "flip", onclick: () => { flip = !flip; draw(); }, text: "Flip board" }),
  };
  const ckpt = h("select", { id: "net-checkpoint" }, h("option", { value: "", text: "(no network)" }));
  const other = h("select", { id: "net-compare" }, h("option", { value: "", text: "(none)" }));
  ckpt.addEventListener("change", () => { overlay = null; draw(); evaluate(); });
  other.addEventListener("change", () => evaluate());
  // The network's value and top moves by prior; with a second network, both side by side.
  const evaluate = async () => {
    const names = [ckpt.value, other.value].filter(Boolean);
    if (!names.length || ply >= n) {
      netInfo.textContent = names.length ? "the game is over here" : "";
      compareBox.replaceChildren();
      return;
    }
    const at = ply;
    const answers = await guard(() => Promise.all(names.map((c) =>
      api("/api/evaluate", { game: g.game, start: g.positions[at], checkpoint: c }))));
    if (!answers || at !== ply || me !== view) return;
    const line = (c, e) => `${c}: value ${fmt(e.value, 3)} for ${game.sides[e.to_move]}; top moves ` +
      e.top.slice(0, 5).map((t) => `${t.move} ${(100 * t.prior).toFixed(1)}%`).join(", ");
    if (ckpt.value) {
      overlay = answers[0];
      netInfo.textContent = line(ckpt.value, answers[0]);
      draw();
    } else {
      netInfo.textContent = "";
    }
    if (names.length === 2) compareBox.replaceChildren(comparison(names, answers, game));
    else compareBox.replaceChildren();
  };
  const movesText = g.moves.map((m) => m.move).join(" ") + "\n";
  const textBox = h("textarea", { id: "moves-text", rows: 3, cols: 60, readonly: true, spellcheck: "false" });
  textBox.value = movesText;
  const copied = h("span", { id: "copy-status", class: "muted" });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(movesText);
      copied.textContent = "copied";
    } catch (e) {
      textBox.select();
      copied.textContent = document.execCommand("copy") ? "copied" : "select the text and copy it";
    }
  };
  const download = h("a", { id: "download-moves", download: `${fileName}.txt`, class: "button",
    href: URL.createObjectURL(new Blob([movesText], { type: "text/plain" })), text: "Download" });
  // The two networks chosen play a short match on the server (paired games from random openings,
  // capped in games and time there): its result and Elo with its interval.
  const playMatch = async () => {
    if (!ckpt.value || !other.value) { matchBox.textContent = "choose two networks above"; return; }
    const sims = matchSims.value.trim();
    const [a, b] = [ckpt.value, other.value].map((c) => `net:checkpoint=${c},sims=${sims}`);
    matchBox.textContent = `playing ${a} against ${b}…`;
    const m = await guard(() => api("/api/match", { game: g.game, a, b, games: MATCH_GAMES }));
    if (me !== view) return;
    if (!m) { matchBox.textContent = ""; return; }
    const elo = m.elo === null ? "–" : signed(m.elo);
    matchBox.textContent = `${ckpt.value} against ${other.value}: +${m.wins} =${m.draws} -${m.losses} in ` +
      `${m.games} games (score ${m.score === null ? "–" : fmt(100 * m.score, 1) + "%"}), Elo ${elo} ` +
      (m.elo_low === null ? "(no interval yet)" : `95% [${fmt(m.elo_low, 0)}, ${fmt(m.elo_high, 0)}]`) +
      (m.pairs === null ? ""
                        : ` from pairs ${m.pairs} (by ${ckpt.value}'s points 0, ½, 1, 1½, 2)`) +
      (m.caveats || []).map((c) => ` (${c})`).join("") +
      (m.out_of_time ? `; stopped at the server's time limit after ${m.games} of ${m.games_cap} games` : "");
  };
  // The position shown, in Play (its moves so far, you to move) or in Analyse (its text).
  const openPlay = () => {
    Object.assign(play, { game: g.game, start: g.start || "", moves: g.moves.slice(0, ply).map((m) => m.move),
      cells: g.moves.slice(0, ply).map((m) => m.cells), movers: g.moves.slice(0, ply).map((m) => m.side),
      pos: null, selected: [], thinking: false, pending: false });
    const toMove = ply < n ? g.moves[ply].side : (ply > 0 ? 1 - g.moves[ply - 1].side : 0);
    play.human = toMove;
    play.flip = toMove === 1;
    location.hash = "#/play";
  };
  const openAnalyse = () => {
    analysePreset = { game: g.game, position: g.positions[ply] };
    location.hash = "#/analyse";
  };
  const draw = () => {
    const last = ply > 0 ? g.moves[ply - 1].cells : [];
    const arrows = overlay ? overlay.top.slice(0, 5).map((t) =>
      moveArrow(t.cells, t.prior, `${(100 * t.prior).toFixed(0)}%`)).filter(Boolean) : [];
    boardBox.replaceChildren(drawBoard(game, g.boards[ply], { last, arrows, flip }));
  };
  const go = (p) => {
    ply = Math.max(0, Math.min(n, p));
    overlay = null;
    draw();
    plyInfo.textContent = `ply ${ply} of ${n}`;
    buttons.first.disabled = buttons.prev.disabled = ply === 0;
    buttons.next.disabled = buttons.last.disabled = ply === n;
    for (const s of list.querySelectorAll("span[data-ply]"))
      s.classList.toggle("current", +s.dataset.ply === ply);
    if (ply > 0 && g.moves[ply - 1].value === undefined) {
      moveInfo.textContent = `${ply}. ${g.moves[ply - 1].move}`;
    } else if (ply > 0) {
      const m = g.moves[ply - 1];
      const share = (t) => `${(100 * t.share).toFixed(1)}%`;
      moveInfo.textContent = `${ply}. ${m.move}: search value ${fmt(m.value, 2)} for the mover, ` +
        (m.visits === null
          ? `${m.full_search ? "full" : "fast"} search; improved policy (Gumbel root): ` +
            m.top.map((t) => `${t.move} ${share(t)}`).join(", ")
          : `${m.visits} visits (${m.full_search ? "full" : "fast"} search); most visited: ` +
            m.top.map((t) => `${t.move} ${t.visits} (${share(t)})`).join(", "));
    } else {
      moveInfo.textContent = "the start position";
    }
    resultBox.textContent = ply === n ? `Result: ${g.result}` +
      (game.has_score && g.scores ? ` (scores ${g.scores[0]}–${g.scores[1]})` : "") +
      (g.forfeit ? ` by forfeit: ${g.forfeit}` : "") : "";
    evaluate();
  };
  document.onkeydown = (e) => {
    if (me !== view || e.target === textBox) return;
    if (e.key === "ArrowRight") go(ply + 1);
    if (e.key === "ArrowLeft") go(ply - 1);
  };
  main().replaceChildren(...header,
    h("div", { class: "row" },
      h("div", {}, boardBox,
        h("div", { class: "controls" }, buttons.first, buttons.prev, buttons.next, buttons.last, buttons.flip, plyInfo),
        resultBox, moveInfo,
        h("div", { class: "controls" },
          h("button", { id: "open-play", onclick: openPlay, text: "Play from here" }),
          h("button", { id: "open-analyse", onclick: openAnalyse, text: "Analyse this position" })),
        h("div", { class: "controls" }, h("label", { text: "network's view:" }), ckpt,
          h("label", { text: "compare with:" }), other), netInfo, compareBox,
        h("div", { class: "controls" }, h("button", { id: "match-go", onclick: playMatch, text: `Play a match (${MATCH_GAMES} games)` }),
          h("label", { text: "simulations" }), matchSims), matchBox),
      h("div", { class: "panel" }, h("h2", { text: "Moves" }), list,
        h("h2", { text: "As text" }), textBox,
        h("div", { class: "controls" }, h("button", { id: "copy-moves", onclick: copy, text: "Copy" }), download, copied))));
  go(0);
  for (const name of await checkpointOptions(g.game)) {
    ckpt.append(h("option", { value: name, text: name }));
    other.append(h("option", { value: name, text: name }));
  }
}

// Two networks' values and priors on one position, side by side: the moves either ranks in its
// top ten, with each one's prior ("–" where a move is outside that network's top ten).
function comparison(names, answers, game) {
  const moves = [];
  for (const e of answers) for (const t of e.top) if (!moves.includes(t.move)) moves.push(t.move);
  const prior = (e, m) => { const t = e.top.find((x) => x.move === m); return t ? t.prior : null; };
  moves.sort((a, b) => (prior(answers[0], b) || 0) + (prior(answers[1], b) || 0) -
                       (prior(answers[0], a) || 0) - (prior(answers[1], a) || 0));
  const pct = (v) => v === null ? "–" : `${(100 * v).toFixed(1)}%`;
  return h("table", { id: "compare-table" },
    h("tr", {}, h("th", { text: "" }), ...names.map((c) => h("th", { class: "mono", text: c }))),
    h("tr", { class: "value" }, h("td", { text: `value for ${game.sides[answers[0].to_move]}` }),
      ...answers.map((e) => h("td", { text: fmt(e.value, 3) }))),
    ...moves.map((m) => h("tr", { "data-move": m }, h("td", { class: "mono", text: m }),
      ...answers.map((e) => h("td", { text: pct(prior(e, m)) })))));
}

// ---------- play ----------

// moves: the moves played, in notation (what the server is sent); cells: the cells of each;
// selected: the cells clicked so far towards the person's next move; pending: a position asked of
// the server and not yet answered (the board takes no clicks meanwhile); flip: the board turned,
// as it is for the second player.
// start: the position the game started from ("" for the game's initial one; a replay's position
// opened here keeps its game's start and moves).
const play = { game: null, start: "", moves: [], cells: [], movers: [], human: 0, opponent: "random",
               pos: null, selected: [], thinking: false, pending: false, flip: false, id: 0 };
// The position a replay asked Analyse to open: {game, position}, taken once.
let analysePreset = null;

// The body of a request on the play board's position: its start, if any, and the moves.
function playPosition(extra) {
  return { game: play.game, ...(play.start ? { start: play.start } : {}), moves: play.moves, ...extra };
}

function showPlay() {
  const me = view;
  if (!games[play.game] && gameList.length) play.game = gameList[0].name;
  const gameSel = h("select", { id: "play-game" },
    ...gameList.map((g) => h("option", { value: g.name, selected: play.game === g.name, text: g.display_name })));
  const sideSel = h("select", { id: "play-side" });
  const fillSides = () => sideSel.replaceChildren(...[0, 1].map((s) =>
    h("option", { value: s, selected: play.human === s, text: `${gameOf(gameSel.value).sides[s]} (${s === 0 ? "first" : "second"})` })));
  if (gameList.length) fillSides();
  gameSel.addEventListener("change", fillSides);
  const opponent = h("input", { type: "text", id: "play-opponent", size: 36, value: play.opponent, list: "play-specs" });
  const specs = h("datalist", { id: "play-specs" },
    ...["random", "alphabeta:depth=2", "alphabeta:depth=3", "uct:sims=1000"].map((s) => h("option", { value: s })));
  for (const run of info.runs)
    specs.append(h("option", { value: `net:checkpoint=${run.name}/best,sims=200` }));
  const newGame = () => {
    play.game = gameSel.value;
    play.human = +sideSel.value;
    play.opponent = opponent.value.trim();
    play.start = "";
    play.moves = [];
    play.cells = [];
    play.movers = [];
    play.pos = null;
    play.thinking = false;
    play.pending = false;
    play.flip = play.human === 1;
    for (const id of ["play-board", "play-moves", "play-result", "play-buttons"]) document.getElementById(id).replaceChildren();
    document.getElementById("play-status").textContent = "Starting…";
    start();
  };
  const undo = () => {
    if (play.thinking || play.pending || !play.movers.includes(play.human)) return;
    // Take back the person's last move and every reply after it.
    play.id++;
    while (play.moves.length) {
      play.moves.pop();
      play.cells.pop();
      if (play.movers.pop() === play.human) break;
    }
    refresh();
  };
  main().replaceChildren(h("h1", { text: "Play" }),
    h("div", { class: "controls" }, h("label", { text: "game" }), gameSel, h("label", { text: "you play" }), sideSel,
      h("label", { text: "against" }), opponent, specs,
      h("button", { id: "play-new", class: "primary", onclick: newGame, text: "New game" }),
      h("button", { id: "play-undo", onclick: undo, text: "Undo" }),
      h("button", { id: "play-flip", onclick: () => { play.flip = !play.flip; render(); }, text: "Flip board" })),
    h("p", { class: "muted", text: `Players: random, alphabeta:depth=N (N ≤ ${info.limits.max_alphabeta_depth}), ` +
      `uct:sims=N, net:checkpoint=RUN/best,sims=N (N ≤ ${info.limits.max_simulations}). Click the cells ` +
      "of your move in turn (a piece, then where it goes); legal ones are highlighted, and a move " +
      "on no cell (a pass) is a button." }),
    h("div", { class: "row" },
      h("div", {}, h("div", { id: "play-board" }),
        h("div", { id: "play-status", class: "status" }), h("div", { id: "play-result", class: "result" }),
        h("div", { class: "controls", id: "play-buttons" })),
      h("div", { class: "panel" }, h("h2", { text: "Moves" }), h("div", { class: "moves", id: "play-moves" }))));
  const start = () => { play.id++; play.selected = []; refresh(); };
  // Asks the position after play.moves; when that fails, the moves after `keep` (the person's move
  // just tried) are taken back so that the game stays where it was.
  async function refresh(keep) {
    const id = play.id;
    play.pending = true;
    render();
    const pos = await guard(() => api("/api/position", playPosition()));
    if (id !== play.id || me !== view) return;
    play.pending = false;
    if (!pos) {
      if (keep !== undefined) {
        play.moves.length = play.cells.length = play.movers.length = keep;
      }
      render();
      return;
    }
    play.pos = pos;
    play.selected = [];
    render();
    if (!pos.terminal && pos.to_move !== play.human) engineMove();
  }
  async function engineMove() {
    const id = play.id;
    play.thinking = true;
    render();
    try {
      const m = await api("/api/move", playPosition({ player: play.opponent }));
      if (id !== play.id || me !== view) return;
      play.moves.push(m.move);
      play.cells.push(m.cells);
      play.movers.push(play.pos.to_move);
      play.pos = m.after;
      play.thinking = false;
      render();
      if (!m.after.terminal && m.after.to_move !== play.human) engineMove();
    } catch (e) {
      if (id !== play.id) return;
      play.thinking = false;
      render();
      showError(`${play.opponent}: ${e.message}`);
    }
  }
  // `move`: an entry of the position's legal moves, {move, cells}.
  async function humanMove(move) {
    if (play.thinking || play.pending || !play.pos || play.pos.terminal ||
        play.pos.to_move !== play.human) return;
    clearError();
    play.id++;
    const keep = play.moves.length;
    play.moves.push(move.move);
    play.cells.push(move.cells);
    play.movers.push(play.human);
    play.selected = [];
    refresh(keep);
  }
  play.humanMove = humanMove;
  if (play.game) start();
  else showError("the server lists no games");
}

// Where a click on `cell` leads after the clicks `selected`, among the legal moves: {move} when it
// completes one, {selected} when it is the next cell of some, null when of none. A move's clicks
// never start another's (games/game.h), so a completed sequence is one move.
function clickStep(legal, selected, cell) {
  const next = selected.length;
  const going = legal.filter((m) => m.cells.length > next && m.cells[next] === cell &&
                                    selected.every((c, i) => m.cells[i] === c));
  const done = going.find((m) => m.cells.length === next + 1);
  if (done) return { move: done };
  return going.length ? { selected: [...selected, cell] } : null;
}

function render() {
  const pos = play.pos;
  if (!pos || !document.getElementById("play-board")) return;
  const game = gameOf(pos.game);
  const busy = play.thinking || play.pending;
  const myTurn = !pos.terminal && !busy && pos.to_move === play.human;
  const legal = myTurn ? pos.legal : [];
  const sel = play.selected;
  // The next cells: targets complete a move, sources lead on to more cells.
  const sources = new Set(), targets = new Set();
  for (const m of legal) {
    if (m.cells.length <= sel.length || !sel.every((c, i) => m.cells[i] === c)) continue;
    (m.cells.length === sel.length + 1 ? targets : sources).add(m.cells[sel.length]);
  }
  const onClick = (cell) => {
    if (!myTurn) return;
    // A click on the last cell chosen takes the choice back; on a cell that continues no move it
    // starts afresh from that cell.
    const again = sel.length > 0 && sel[sel.length - 1] === cell;
    const step = again ? null : clickStep(legal, sel, cell) || (sel.length ? clickStep(legal, [], cell) : null);
    if (step && step.move) return play.humanMove(step.move);
    play.selected = step ? step.selected : [];
    render();
  };
  const lastCells = play.cells.length ? play.cells[play.cells.length - 1] : [];
  document.getElementById("play-board").replaceChildren(drawBoard(game, pos.board, {
    onClick, sources, targets, selected: new Set(sel), last: lastCells, flip: play.flip, busy }));
  const sides = game.sides;
  const status = document.getElementById("play-status");
  const result = document.getElementById("play-result");
  if (pos.terminal) {
    const won = pos.result !== 0 && (pos.result > 0) === (play.human === 0);
    const you = pos.result === 0 ? "" : won ? " — you win" : " — you lose";
    status.textContent = "Game over";
    result.textContent = resultText(pos.game, pos.result, pos.scores) + you;
    result.className = `result ${pos.result === 0 ? "draw" : won ? "win" : "lose"}`;
  } else {
    result.textContent = "";
    result.className = "result";
    const who = play.thinking ? `${play.opponent} is thinking… (${sides[pos.to_move]})`
      : play.pending ? "Waiting for the server…"
      : pos.to_move === play.human ? `Your move (${sides[play.human]})` : "";
    status.textContent = who ? `${who} · ply ${pos.ply}` : `ply ${pos.ply}`;
  }
  // Moves on no cell (a pass) are buttons.
  document.getElementById("play-buttons").replaceChildren(...legal.filter((m) => !m.cells.length).map((m) =>
    h("button", { class: "move-button", "data-move": m.move, onclick: () => play.humanMove(m), text: m.move })));
  const list = document.getElementById("play-moves");
  list.replaceChildren(...play.moves.map((m, i) => [h("span", { class: "num", text: `${i + 1}.` }), h("span", { text: m }), " "]).flat());
  list.scrollTop = list.scrollHeight;
}

// ---------- analyse ----------

async function showAnalyse() {
  const me = view;
  const gameSel = h("select", { id: "an-game" },
    ...gameList.map((g) => h("option", { value: g.name, text: g.display_name })));
  const position = h("textarea", { id: "an-position", rows: 3, cols: 90, spellcheck: "false" });
  const player = h("input", { type: "text", id: "an-player", size: 36, value: "uct:sims=1000" });
  const ckpt = h("select", { id: "an-checkpoint" });
  const out = h("div", { id: "an-output" });
  const boardBox = h("div", { id: "an-board" });
  let shown = null;  // {game, text, board} of the position drawn
  let drawn = 0;     // bumped per drawing; a late answer for an older text is dropped
  let flip = false, lastArrows;
  const setStart = async () => {
    const p = await guard(() => api("/api/position", { game: gameSel.value }));
    if (p && me === view) {
      position.value = p.position;
      shown = { game: p.game, text: p.position, board: p.board };
      drawPosition();
    }
    ckpt.replaceChildren(h("option", { value: "", text: "(no network)" }),
      ...(await checkpointOptions(gameSel.value)).map((n) => h("option", { value: n, text: n })));
  };
  // Draws the position in the box (its board asked of the server), with `arrows`; a text that is
  // no position leaves the board empty.
  const drawPosition = async (arrows) => {
    const id = ++drawn, game = gameSel.value, text = position.value.trim();
    lastArrows = arrows;
    if (!text) { boardBox.replaceChildren(); return; }
    if (!shown || shown.game !== game || shown.text !== text) {
      const p = await api("/api/position", { game, start: text }).catch(() => null);
      if (id !== drawn || me !== view) return;
      if (!p) { boardBox.replaceChildren(); return; }
      shown = { game, text, board: p.board };
    }
    boardBox.replaceChildren(drawBoard(gameOf(game), shown.board, { arrows, flip }));
  };
  const analyse = async () => {
    clearError();
    const game = gameSel.value, start = position.value.trim(), sides = gameOf(game).sides;
    out.replaceChildren(h("p", { class: "muted", text: "Searching…" }));
    const a = await guard(() => api("/api/analyse", { game, start, player: player.value.trim() }));
    if (me !== view) return;
    if (!a) { out.replaceChildren(); return; }
    const parts = [];
    let arrows = [];
    if (a.kind === "search") {
      const total = a.top.reduce((s, t) => s + t.visits, 0) || 1;
      arrows = a.top.slice(0, 5).map((t) => moveArrow(t.cells, t.visits / total, String(t.visits))).filter(Boolean);
      parts.push(h("p", { class: "status", id: "an-summary", text:
        `${a.player}: best ${a.best}, value ${fmt(a.value, 3)} for ${sides[a.to_move]}` +
        (a.proven !== "unknown" ? ` (proven ${a.proven})` : "") +
        `, ${a.simulations} simulations in ${fmt(a.ms, a.ms < 10 ? 1 : 0)} ms` + (a.out_of_time ? " (stopped at the time limit)" : "") }),
        h("table", { id: "an-table" }, h("tr", {}, ...["move", "visits", `Q (for ${sides[a.to_move]})`, "prior", "proven"].map((t) => h("th", { text: t }))),
          ...a.top.map((t) => h("tr", {}, h("td", { text: t.move }), h("td", { text: t.visits }),
            h("td", { text: fmt(t.q, 3) }), h("td", { text: fmt(t.prior, 3) }), h("td", { text: t.proven === "unknown" ? "" : t.proven })))),
        h("p", { class: "mono", text: `principal variation: ${a.pv.join(" ")}` }));
    } else {
      arrows = [moveArrow(a.best_cells, 1)].filter(Boolean);
      parts.push(h("p", { class: "status", id: "an-summary", text:
        `${a.player}: best ${a.best}, score ${a.score} for ${sides[a.to_move]} (the game's evaluation; a won game ±1,000,000 less its plies) ` +
        `at depth ${a.depth}, ${a.nodes.toLocaleString("en")} nodes in ${fmt(a.ms, a.ms < 10 ? 1 : 0)} ms` +
        (a.out_of_time ? " (stopped at the time limit: the deepest completed depth)" : "") }));
    }
    if (ckpt.value) {
      const e = await guard(() => api("/api/evaluate", { game, start, checkpoint: ckpt.value }));
      if (e && me === view) parts.push(h("p", { id: "an-network", text:
        `${ckpt.value}: value ${fmt(e.value, 3)} for ${sides[e.to_move]}; priors ` +
        e.top.map((t) => `${t.move} ${(100 * t.prior).toFixed(1)}%`).join(", ") }));
    }
    out.replaceChildren(...parts);
    drawPosition(arrows);
  };
  gameSel.addEventListener("change", setStart);
  position.addEventListener("input", () => drawPosition());
  main().replaceChildren(h("h1", { text: "Analyse a position" }),
    h("div", { class: "controls" }, h("label", { text: "game" }), gameSel,
      h("button", { onclick: setStart, text: "Start position" }),
      h("button", { id: "an-flip", onclick: () => { flip = !flip; drawPosition(lastArrows); }, text: "Flip board" })),
    h("div", {}, h("label", { class: "muted", text: "position (docs/RULES.md notation)" })), position,
    h("div", { class: "controls" }, h("label", { text: "search" }), player,
      h("label", { text: "network value" }), ckpt,
      h("button", { id: "an-go", class: "primary", onclick: analyse, text: "Analyse" })),
    h("div", { class: "row" }, boardBox, out));
  const preset = analysePreset;
  analysePreset = null;
  if (preset && games[preset.game]) {
    gameSel.value = preset.game;
    position.value = preset.position;
    drawPosition();
    ckpt.replaceChildren(h("option", { value: "", text: "(no network)" }),
      ...(await checkpointOptions(preset.game)).map((n) => h("option", { value: n, text: n })));
  } else if (gameList.length) {
    await setStart();
  }
}

// ---------- start ----------

window.addEventListener("hashchange", route);
// The first load's ?token= has set the cookie by now: the address drops it, so that it stays out of
// the history and of links copied from the address bar.
if (new URLSearchParams(location.search).has("token"))
  history.replaceState(null, "", location.pathname + location.hash);
(async () => {
  const [i, g] = await Promise.all([guard(() => api("/api/info")), guard(() => api("/api/games"))]);
  if (i) info = i;
  if (g) {
    gameList = g;
    games = Object.fromEntries(g.map((entry) => [entry.name, entry]));
  }
  route();
})();
