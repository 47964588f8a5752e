// Takes one full-page screenshot of a page, for the docs' pictures of a live run:
//   node tests/web/shoot.mjs URL OUT.png [WAIT_SELECTOR]
// Uses the system's Chromium through the browser test's playwright-core (tests/web/node_modules,
// installed by scripts/setup.sh); waits for WAIT_SELECTOR (default: a chart's point) and a second
// more for the charts to settle.
import { createRequire } from "node:module";

const { chromium } = createRequire(import.meta.url)("playwright-core");
const [url, out, selector = "svg circle.pt"] = process.argv.slice(2);
if (!url || !out) {
  console.error("usage: node tests/web/shoot.mjs URL OUT.png [WAIT_SELECTOR]");
  process.exit(2);
}
const args = process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : [];
const browser = await chromium.launch({
  executablePath: process.env.OPPIDUM_CHROMIUM || "/usr/bin/chromium", headless: true, args });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(url);
  await page.locator(selector).first().waitFor({ timeout: 30000 });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}
