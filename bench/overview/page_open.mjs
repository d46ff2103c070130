// The rank overview in the page at scale: opens TensorBoard (GA_TB_URL) in Debian's Chromium through
// Playwright, picks the run whose name contains GA_RUN, clicks "Rank overview" and times the click
// until the grid shows its rows and the origin line names the origin (the first GetOverview of the
// page; the server may have it cached); then scrolls to the last rank and counts the rows that exist
// in the page (the grid is virtualised). Prints one JSON object.
import { createRequire } from "node:module";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright");

const url = process.env.GA_TB_URL ?? "http://127.0.0.1:6006";
const run = process.env.GA_RUN ?? "ranks_1000";
const rounds = Number(process.env.GA_ROUNDS ?? 5);

async function waitFor(fn, timeoutMs = 300_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const browser = await chromium.launch({
  executablePath: process.env.GA_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(`${url}/#graph_ascend`);
  const frame = await waitFor(() => page.frames().find((f) => f.url().includes("/data/plugin/graph_ascend/index.html")));
  await waitFor(() => frame.evaluate(() => window.graphAscend?.npu?.nodes?.length > 0).catch(() => false));
  const picker = frame.locator("select[data-picker=run]");
  const label = (await picker.locator("option").allTextContents()).find((t) => t.includes(run));
  if (!label) throw new Error(`no run containing ${run}`);
  await picker.selectOption({ label });
  await waitFor(() => frame.evaluate(() => !window.graphAscend.opening() && window.graphAscend.api.inFlight === 0));
  const button = frame.locator("button[data-action=overview]");
  const times = [];
  let ranks = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = Date.now();
    await button.click();
    await waitFor(() =>
      frame.evaluate(
        () =>
          document.querySelectorAll(".overview .vlist-row[data-rank]").length > 0 &&
          !!document.querySelector(".overview-origin")?.dataset.origin,
      ),
    );
    times.push(Date.now() - t0);
    ranks = await frame.evaluate(() => window.graphAscend.overview.current().ranks.length);
    if (i < rounds - 1) await frame.locator("button[data-action=overview-close]").click();
  }
  await frame.evaluate(() => {
    const g = document.querySelector(".overview-grid");
    g.scrollTop = g.scrollHeight;
  });
  await waitFor(() =>
    frame.evaluate((last) => !!document.querySelector(`.overview .vlist-row[data-rank="${last}"]`), `rank${ranks - 1}`),
  );
  const domRows = await frame.evaluate(() => document.querySelectorAll(".overview .vlist-row").length);
  const origin = await frame.evaluate(() => document.querySelector(".overview-origin").dataset.origin);
  console.log(JSON.stringify({ run, ranks, openMs: times, firstOpenMs: times[0], domRows, origin }, null, 2));
} finally {
  await browser.close();
}
