// Browser tests of the page of `oppidum serve`, in the system's headless Chromium driven by
// playwright-core (nothing is downloaded; the pinned version runs on Debian 12's Node 18). Run by
// tests/web_browser_test.cpp against a server it started on two tiny runs:
//   node browser_test.mjs URL SCREENSHOT_DIR EXPECT_JSON
// EXPECT_JSON: {"mg_run": NAME, "mg_dir": DIR, "dvonn_run": NAME, "train_rows": N, "gates": N,
//               "mg_games": N, "mg_positions": N, "mg_speed": TEXT, "mg_minutes": TEXT,
//               "arena_file": NAME, "arena_games": N}.
// The first lines say which Node, driver and browser ran the checks. Each check prints "ok NAME"
// or "FAIL NAME: why"; the exit status is the number of failures.
import { appendFileSync, readFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

// Said before the driver is loaded, so that a driver refusing this Node is seen against it.
const driver = createRequire(import.meta.url)("playwright-core/package.json");
console.log(`node ${process.version} (${process.execPath}), playwright-core ${driver.version} ` +
            `(needs node ${driver.engines.node})`);
const { chromium } = await import("playwright-core");

const [url, shots, expectJson] = process.argv.slice(2);
const expect = JSON.parse(expectJson);
mkdirSync(shots, { recursive: true });
const executablePath = process.env.OPPIDUM_CHROMIUM || "/usr/bin/chromium";
const args = process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : [];
const browser = await chromium.launch({ executablePath, headless: true, args });
console.log(`browser ${executablePath}: Chromium ${browser.version()}`);
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
page.setDefaultTimeout(30000);
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(e.message));

let failures = 0;
async function check(name, f) {
  try {
    await f();
    console.log(`ok ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
    await page.screenshot({ path: join(shots, `failed-${name}.png`), fullPage: true }).catch(() => {});
  }
}
function assert(condition, message) { if (!condition) throw new Error(message); }
const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
const text = async (sel) => (await page.locator(sel).textContent()) || "";

await check("the games come from /api/games", async () => {
  // The page lists what the server serves: with the display names changed on the way, the page
  // shows the changed names, in the server's order.
  const served = await (await page.request.get(`${url}api/games`)).json();
  assert(served.length >= 2, `/api/games: ${JSON.stringify(served).slice(0, 200)}`);
  const pattern = "**/api/games";
  await page.route(pattern, async (route) => {
    const response = await route.fetch();
    const games = (await response.json()).map((g) => ({ ...g, display_name: `${g.display_name} (served)` }));
    await route.fulfill({ response, json: games });
  });
  await page.goto(`${url}#/play`);
  await page.locator("#play-game option").first().waitFor({ state: "attached" });
  const options = await page.locator("#play-game option").evaluateAll((els) => els.map((e) => [e.value, e.textContent]));
  const want = served.map((g) => [g.name, `${g.display_name} (served)`]);
  assert(JSON.stringify(options) === JSON.stringify(want), `options ${JSON.stringify(options)}, want ${JSON.stringify(want)}`);
  const sides = await page.locator("#play-side option").evaluateAll((els) => els.map((e) => e.textContent));
  assert(sides[0] === `${served[0].sides[0]} (first)` && sides[1] === `${served[0].sides[1]} (second)`, `sides ${sides}`);
  await page.unroute(pattern);
  await page.reload();  // the page reads the games once, at its start
});

await check("dashboard shows the curve points", async () => {
  await page.goto(`${url}#/runs`);
  const run = `section[data-run="${expect.mg_run}"]`;
  const policy = page.locator(`${run} svg[data-title="Training loss"] circle.pt[data-series^="policy loss"]`);
  await policy.first().waitFor();
  assert(await policy.count() === expect.train_rows, `policy loss points: ${await policy.count()}, want ${expect.train_rows}`);
  const rating = page.locator(`${run} svg[data-title="Rating (Elo) by generation"] circle.pt[data-series^="best network"]`);
  assert(await rating.count() === expect.gates, `rating points: ${await rating.count()}, want ${expect.gates}`);
  assert((await text(`${run} [data-card="generation"] .value`)) === String(expect.gates), "generation card");
  assert((await text(`${run} [data-card="best"] .value`)) === "gen-0003", "best network card");
  assert(await page.locator(`${run} table.gates tr`).count() === expect.gates + 1, "gate table rows");
  // Beside each gate's Elo (with the prior) its observed score, and under the table what the prior
  // does: generation 3, promoted at 6-2.
  const newest = await page.locator(`${run} table.gates tr:nth-child(2) td`).allTextContents();
  assert(newest[0] === "3" && newest[4] === "75.0%", `newest gate row ${newest}`);
  assert(/prior of one virtual game/.test(await text(`${run} [data-note="gate-elo"]`)), "gate Elo note");
  await shot("runs");
});

await check("dashboard numbers come from the run folder", async () => {
  // Games and positions are the store's, the speed the newest self-play row's, the time the
  // sessions' (the tiny run's last rows say 12,000 positions and 150 games: not the store's).
  const run = `section[data-run="${expect.mg_run}"]`;
  const card = (id) => text(`${run} [data-card="${id}"] .value`);
  assert((await card("games")) === String(expect.mg_games), `games card ${await card("games")}`);
  assert((await card("positions")) === expect.mg_positions.toLocaleString("en"),
         `positions card ${await card("positions")}, want ${expect.mg_positions}`);
  assert((await card("speed")) === expect.mg_speed, `speed card ${await card("speed")}`);
  assert((await card("time")) === expect.mg_minutes, `time card ${await card("time")}`);
  const speed = page.locator(`${run} svg[data-title^="Self-play speed"] circle.pt`);
  assert(await speed.count() === expect.gates, `speed points ${await speed.count()}`);
  // Round ticks (whole generations), axis labels with units, legends below the plot.
  for (const title of ["Training loss", "Rating (Elo) by generation", "Self-play speed by generation"]) {
    const chart = `${run} svg[data-title="${title}"]`;
    const ticks = await page.locator(`${chart} text.tick-x, ${chart} text.tick-y`).allTextContents();
    assert(ticks.length >= 4 && ticks.every((t) => /^-?[0-9,]+(\.[0-9]{1,2})?$/.test(t)), `${title}: ticks ${ticks}`);
    if (title !== "Training loss") {
      const xs = await page.locator(`${chart} text.tick-x`).allTextContents();
      assert(xs.every((t) => /^\d+$/.test(t)), `${title}: generation ticks ${xs}`);
    }
    assert((await text(`${chart} text.axis-y`)) !== "" && (await text(`${chart} text.axis-x`)) !== "", `${title}: axis labels`);
    const below = await page.locator(chart).evaluate((svg) => {
      const plot = svg.querySelector("rect").getBBox();
      return [...svg.querySelectorAll("text.legend")].every((t) => t.getBBox().y >= plot.y + plot.height);
    });
    assert(below, `${title}: a legend over the plot`);
  }
  // A long legend (a long run's says how its points are averaged) wraps inside the chart.
  const legend = await page.evaluate(() => {
    const name = "policy loss (cross-entropy, nats; each point the mean of about 14 steps and more)";
    const svg = lineChart("T", { x: "step", y: "loss" },
      [{ name, color: "#000", points: [[0, 1], [1, 2]] }, { name: "b", color: "#111", points: [[0, 2]] }]);
    document.body.appendChild(svg);
    const lines = [...svg.querySelectorAll("text.legend")];
    const out = { lines: lines.map((t) => t.textContent), width: svg.width.baseVal.value,
                  right: Math.max(...lines.map((t) => t.getBBox().x + t.getBBox().width)),
                  bottom: Math.max(...lines.map((t) => t.getBBox().y + t.getBBox().height)),
                  height: svg.height.baseVal.value };
    svg.remove();
    return out;
  });
  assert(legend.lines.length >= 3 && legend.right <= legend.width && legend.bottom <= legend.height,
         `a long legend runs off its chart: ${JSON.stringify(legend)}`);
  assert(legend.lines.slice(0, -1).join(" ") ===
         "policy loss (cross-entropy, nats; each point the mean of about 14 steps and more)",
         `a wrapped legend lost words: ${legend.lines}`);
  // Values a step cannot change (past 2^53 a generation of 1 more is the same number) once ticked
  // for ever and hung the tab: such an axis gets its two ends, and every coordinate is finite.
  const huge = await page.evaluate(() => {
    const out = [];
    for (const v of [1e17, 1e22, 1e300, 1.7e308]) {
      const svg = lineChart("H", { x: "generation", y: "positions / s", integerX: true },
        [{ name: "s", color: "#000", points: [[v, v], [v, 1]] }]);
      const numbers = [...svg.querySelectorAll("circle.pt")].flatMap((c) => [+c.getAttribute("cx"), +c.getAttribute("cy")]);
      out.push({ v, ticks: svg.querySelectorAll("text.tick-x").length, finite: numbers.every(Number.isFinite) });
    }
    return out;
  });
  assert(huge.every((c) => c.ticks >= 2 && c.ticks <= 1001 && c.finite), `huge values: ${JSON.stringify(huge)}`);
  assert(!/\binf\b/i.test(await text("main")), "the dashboard shows inf");
});

await check("dashboard updates live", async () => {
  // A training step arrives, as `train` appends it: the page shows it within a poll or two.
  const points = `section[data-run="${expect.mg_run}"] svg[data-title="Training loss"] circle.pt[data-series^="policy loss"]`;
  const metricsFile = join(expect.mg_dir, "metrics.csv");
  const columns = readFileSync(metricsFile, "utf8").split("\n")[0].split(",").length;
  const fields = ["train", "800", "31", "3", "12500", "160", "1.4", "0.69", "0.02"];
  appendFileSync(metricsFile, fields.concat(Array(columns - fields.length).fill("")).join(",") + "\n");
  await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length === n,
    [points, expect.train_rows + 1], { timeout: 30000 });
  assert((await text(`section[data-run="${expect.mg_run}"] [data-card="step"] .value`)) === "31", "step card");
});

await check("the ratings tab shows one ladder per game with intervals", async () => {
  await page.goto(`${url}#/ratings`);
  const ladder = page.locator('table.ratings[data-game="mg"]').filter({ has: page.locator(`tr[data-player="${expect.mg_run}/gen-0003"]`) });
  await ladder.waitFor();
  // Generations 0 to 3 of the tiny run, from its gates.
  assert(await ladder.locator("tr[data-player]").count() === 4, `ladder rows ${await ladder.locator("tr[data-player]").count()}`);
  const intervals = await ladder.locator("tr[data-player] td:nth-child(4)").allTextContents();
  for (const t of intervals) {
    if (t.startsWith("anchor")) continue;
    const m = /^\[(-?[\d,]+), (-?[\d,]+)\]$/.exec(t);
    assert(m && m[1] !== m[2], `interval ${t}`);
  }
  // The arena record file's players are baselines: they join the baselines' ladder
  // (docs/baselines/, compiled in), random = 0; no games join them to the tiny run.
  const baselines = page.locator('table.ratings[data-game="mg"]').filter({ has: page.locator('tr[data-player="alphabeta:depth=2"]') });
  assert(await baselines.count() === 1, `mg ladders with the baselines: ${await baselines.count()}`);
  assert((await baselines.locator('tr[data-player="random"] td:nth-child(4)').textContent()).startsWith("anchor"),
         "random is not the baselines' anchor");
  assert(!/\binf\b/i.test(await text("main")), "the ratings show inf");
  await shot("ratings");
});

await check("a game replays to its end", async () => {
  await page.goto(`${url}#/games/${expect.mg_run}`);
  const rows = page.locator("#games-table tr.clickable");
  await rows.first().waitFor();
  assert(await rows.count() === Math.min(50, expect.mg_games), `rows: ${await rows.count()}`);
  assert((await text("#page-info")).includes(`${expect.mg_games} games match`), await text("#page-info"));
  await shot("games");
  await rows.first().click();
  await page.locator("#ply-info").waitFor();
  const total = +(/of (\d+)/.exec(await text("#ply-info"))[1]);
  assert(total > 0, "no moves");
  for (let i = 0; i < total; i++) await page.click("#next");
  assert((await text("#ply-info")) === `ply ${total} of ${total}`, await text("#ply-info"));
  assert(await page.locator("#next").isDisabled(), "next is still enabled at the end");
  assert(/Result: (1-0|0-1)/.test(await text("#game-result")), `result: ${await text("#game-result")}`);
  assert(await page.locator("#move-list span.current").count() === 1, "current move not marked");
  // A network's view of a position: value and top moves drawn on the board.
  await page.click("#first");
  await page.click("#next");
  await page.selectOption("#net-checkpoint", `${expect.mg_run}/best`);
  await page.waitForFunction(() => document.querySelector("#net-info").textContent.includes("value"));
  assert(await page.locator("#board .arrow").count() > 0, "no policy arrows on the board");
  // Two networks side by side on the same position.
  await page.selectOption("#net-compare", `${expect.mg_run}/gen-0000`);
  await page.locator("#compare-table tr[data-move]").first().waitFor();
  const heads = await page.locator("#compare-table th").allTextContents();
  assert(heads.includes(`${expect.mg_run}/best`) && heads.includes(`${expect.mg_run}/gen-0000`), `heads ${heads}`);
  // ... and a short match between them, played by the server.
  await page.fill("#match-sims", "8");
  await page.click("#match-go");
  await page.waitForFunction(() => / in \d+ games /.test(document.querySelector("#match-result").textContent));
  assert(/^\S+ against \S+: \+\d+ =\d+ -\d+ in 10 games/.test(await text("#match-result")), await text("#match-result"));
  await shot("game");
  // The moves as text: shown, copied and downloaded the same.
  const moves = (await page.locator("#move-list span[data-ply]").allTextContents()).join(" ") + "\n";
  assert((await page.locator("#moves-text").inputValue()) === moves, "the moves' text");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-moves")]);
  const saved = readFileSync(await download.path(), "utf8");
  assert(saved === moves, `downloaded ${JSON.stringify(saved.slice(0, 80))}`);
  // The flipped board: the same cells, turned half a turn.
  const yOf = (sq) => page.locator(`#board .cell[data-square="${sq}"]`).evaluate((e) => +e.getAttribute("y"));
  const before = [await yOf("a1"), await yOf("a7")];
  await page.click("#flip");
  const after = [await yOf("a1"), await yOf("a7")];
  assert(before[0] > before[1] && after[0] < after[1], `a1/a7 rows ${before} then ${after}`);
  // The position shown (after one ply) opened in Analyse, then in Play with its move.
  const shown = await page.evaluate(() => document.querySelector("#move-list span.current").textContent);
  await page.click("#open-analyse");
  await page.waitForFunction(() => location.hash === "#/analyse" && document.querySelector("#an-position")?.value);
  assert(!(await page.locator("#an-position").inputValue()).includes("TTTTTTTT "), "the start position, not the one shown");
  await page.goBack();
  await page.locator("#next").click();
  await page.locator("#open-play").click();
  await page.waitForFunction(() => document.querySelector("#play-moves span:not(.num)"));
  assert((await text("#play-moves span:not(.num)")) === shown, `play opened with ${await text("#play-moves")}`);
});

await check("an arena game replays", async () => {
  await page.goto(`${url}#/games`);
  await page.locator("#games-table tr.clickable").first().waitFor();
  await page.selectOption("#games-run", `arena:${expect.arena_file}`);
  await page.waitForFunction(() => location.hash.startsWith("#/arena/"));
  const rows = page.locator("#games-table tr.clickable");
  await page.waitForFunction((n) => document.querySelectorAll("#games-table tr.clickable").length === n &&
    document.querySelector("#games-table th").textContent === "game", expect.arena_games);
  assert((await rows.first().textContent()).includes("alphabeta:depth=2"), await rows.first().textContent());
  await rows.first().click();
  await page.locator("#ply-info").waitFor();
  await page.click("#last");
  assert(/Result: (1-0|0-1)/.test(await text("#game-result")), `result: ${await text("#game-result")}`);
});

const cellsOf = (cls) => page.locator(`#play-board .cell.${cls}`).evaluateAll((els) => els.map((e) => e.dataset.square));

// Plays a whole game by clicks on the page: the cells of a move in turn (sources lead on, a target
// ends the move), or the button of a move on no cell (a pass). `start()` checks the first board.
async function playByClicks(game, side, prefer, start) {
  await page.goto(`${url}#/play`);
  await page.selectOption("#play-game", game);
  await page.selectOption("#play-side", String(side));
  await page.fill("#play-opponent", "random");
  await page.click("#play-new");
  for (let plies = 0; plies < 600; plies++) {
    await page.waitForFunction(() => {
      const s = document.querySelector("#play-status").textContent;
      return document.querySelector("#play-result").textContent !== "" || s.startsWith("Your move");
    });
    if ((await text("#play-result")) !== "") return text("#play-result");
    if (plies === 0 && start) await start();
    const listed = await page.locator("#play-moves span:not(.num)").count();
    const buttons = page.locator("#play-buttons button");
    if (await buttons.count()) {
      assert(await cellsOf("target").then((t) => t.length) === 0, "a pass beside moves on cells");
      await buttons.first().click();
    } else {
      for (let clicks = 0; ; clicks++) {
        const targets = await cellsOf("target");
        if (targets.length) {
          await page.click(`#play-board .cell[data-square="${prefer(targets)}"]`);
          break;
        }
        const sources = await cellsOf("source");
        assert(sources.length > 0 && clicks < 8, `no cell to click after ${clicks} clicks`);
        await page.click(`#play-board .cell[data-square="${prefer(sources)}"]`);
        await page.locator("#play-board .cell.selected").first().waitFor();
      }
    }
    // The move is taken once the move list grows.
    await page.waitForFunction((n) => document.querySelectorAll("#play-moves span:not(.num)").length > n, listed);
  }
  throw new Error("the game did not end in 600 plies");
}

const pick = (list) => list[Math.floor(Math.random() * list.length)];

await check("a full Murus Gallicus game against random, by clicks", async () => {
  // Light pushes towards row 7: the highest row among the squares offered.
  const forward = (squares) => {
    const best = Math.max(...squares.map((s) => +s[1]));
    return pick(squares.filter((s) => +s[1] === best));
  };
  // The board as the server describes it: 56 squares, 8 towers (two stones) of each side.
  const start = async () => {
    assert(await page.locator("#play-board rect.cell").count() === 56, "56 squares");
    assert(await page.locator('#play-board .piece[data-owners="00"]').count() === 8, "Light towers");
    assert(await page.locator('#play-board .piece[data-owners="11"]').count() === 8, "Dark towers");
    assert(await page.locator("#play-board text.coord").count() === 15, "files a-h and ranks 1-7");
  };
  const result = await playByClicks("mg", 0, forward, start);
  assert(/(Light|Dark) wins, (1-0|0-1)/.test(result), `result: ${result}`);
  assert(await page.locator("#play-moves span:not(.num)").count() > 2, "no moves listed");
  await shot("play-mg");
  // Undo takes back the person's last move and the reply.
  const n = await page.locator("#play-moves span:not(.num)").count();
  await page.click("#play-undo");
  await page.waitForFunction(() => document.querySelector("#play-result").textContent === "");
  const after = await page.locator("#play-moves span:not(.num)").count();
  assert(after < n && after >= n - 2, `undo: ${n} -> ${after} moves`);
});

await check("a full DVONN game against random, by clicks (second player)", async () => {
  // White has placed its first DVONN piece when Black first moves: 49 empty hexagons but one.
  const start = async () => {
    assert(await page.locator("#play-board polygon.cell").count() === 49, "49 hexagons");
    assert(await page.locator('#play-board .piece[data-owners="2"]').count() === 1, "one DVONN piece");
  };
  const result = await playByClicks("dvonn", 1, pick, start);
  assert(/(White wins|Black wins|Draw) \(White \d+, Black \d+\)/.test(result), `result: ${result}`);
  // Stacks show their height, and those holding a DVONN piece show it under their top.
  const labels = await page.locator("#play-board .piece text.label").evaluateAll((els) => els.map((e) => +e.textContent));
  assert(labels.length > 0 && labels.every((n) => n >= 1), `stack heights ${labels}`);
  assert(await page.locator('#play-board .piece[data-owners^="2"]').count() >= 1, "no DVONN piece left");
  const plies = await page.locator("#play-moves span:not(.num)").count();
  assert(plies >= 50, `a DVONN game has at least 50 plies, got ${plies}`);
  // Each space's name is drawn over the pieces, so that no stack hides it.
  const over = await page.locator("#play-board svg").evaluate((svg) => {
    const pieces = [...svg.querySelectorAll(".piece")], coords = [...svg.querySelectorAll("text.coord")];
    return coords.length === 49 && pieces.every((p) => coords.every((c) =>
      p.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING));
  });
  assert(over, "the coordinates are not all drawn over the pieces");
  assert(await page.locator('#play-board svg[data-flipped="true"]').count() === 1, "the second side's board is not turned");
  const outcome = await page.locator("#play-result").getAttribute("class");
  assert(!result.includes("you lose") || outcome.includes("lose"), `a loss shown as ${outcome}`);
  assert(!result.includes("you win") || outcome.includes("win"), `a win shown as ${outcome}`);
  await shot("play");
});

await check("the play board takes no clicks while the server answers", async () => {
  // The second side: the board is turned, Light's home row at the top.
  await page.goto(`${url}#/play`);
  await page.selectOption("#play-game", "mg");
  await page.selectOption("#play-side", "1");
  await page.fill("#play-opponent", "random");
  await page.click("#play-new");
  await page.waitForFunction(() => document.querySelector("#play-status").textContent.startsWith("Your move"));
  assert(await page.locator('#play-board svg[data-flipped="true"]').count() === 1, "the board is not flipped");
  const yOf = (sq) => page.locator(`#play-board .cell[data-square="${sq}"]`).evaluate((e) => +e.getAttribute("y"));
  assert((await yOf("a1")) < (await yOf("a7")), "rank 1 is not at the top");
  // Hold the server's answer to the position after the person's move.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route("**/api/position", async (route) => { await held; await route.continue().catch(() => {}); });
  const source = (await cellsOf("source"))[0];
  await page.click(`#play-board .cell[data-square="${source}"]`);
  const target = (await cellsOf("target"))[0];
  await page.click(`#play-board .cell[data-square="${target}"]`);
  await page.locator('#play-board svg[data-busy="true"]').waitFor();
  assert((await text("#play-status")).startsWith("Waiting"), await text("#play-status"));
  // Clicks meanwhile select nothing and send nothing.
  await page.click(`#play-board .cell[data-square="${source}"]`, { force: true });
  assert(await page.locator("#play-board .cell.selected").count() === 0, "a click was taken while busy");
  assert(await page.locator("#play-moves span:not(.num)").count() === 2, "moves while busy");
  await shot("play-busy");
  release();
  await page.waitForFunction(() => document.querySelector("#play-status").textContent.startsWith("Your move"));
  await page.unroute("**/api/position");
  assert(await page.locator("#play-moves span:not(.num)").count() === 3, "the game did not go on");
});

await check("analyse shows the search and the network", async () => {
  await page.goto(`${url}#/analyse`);
  await page.waitForFunction(() => document.querySelector("#an-position").value.includes("TTTTTTTT"));
  await page.waitForFunction(() => document.querySelectorAll("#an-checkpoint option").length > 1);
  await page.fill("#an-player", "uct:sims=300");
  await page.selectOption("#an-checkpoint", `${expect.mg_run}/best`);
  await page.click("#an-go");
  await page.locator("#an-table tr").nth(5).waitFor();
  assert((await text("#an-summary")).includes("300 simulations"), await text("#an-summary"));
  await page.locator("#an-network").waitFor();
  assert((await text("#an-network")).includes("value"), await text("#an-network"));
  await shot("analyse");
});

await check("bad input shows an error", async () => {
  await page.fill("#an-position", "this is not a position");
  await page.click("#an-go");
  await page.locator("#error").waitFor({ state: "visible" });
  assert((await text("#error")).includes("start position"), `error: ${await text("#error")}`);
  await page.fill("#an-position", "tttttttt/......../......../......../......../......../TTTTTTTT L");
  await page.fill("#an-player", "uct:sims=lots");
  await page.click("#an-go");
  await page.waitForFunction(() => document.querySelector("#error").textContent.includes("sims"));
  await shot("error");
  // A player the page must not run.
  await page.goto(`${url}#/play`);
  await page.selectOption("#play-game", "mg");
  await page.selectOption("#play-side", "1");
  await page.fill("#play-opponent", 'external:cmd="ls"');
  await page.click("#play-new");
  await page.waitForFunction(() => document.querySelector("#error").textContent.includes("the page plays"));
  // An unknown run.
  await page.goto(`${url}#/games/no-such-run`);
  await page.waitForFunction(() => document.querySelector("#error").textContent.includes("no run named"));
});

await check("no script errors", async () => {
  assert(pageErrors.length === 0, pageErrors.join("; "));
});

await browser.close();
process.exit(failures);
