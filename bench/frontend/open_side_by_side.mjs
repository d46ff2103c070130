// One cold first screen of a .vis.db in one page of a real TensorBoard, in Debian's Chromium
// (bench/frontend/open_side_by_side.sh runs it, alternating the two pages round after round).
//
//   GA_SIDE=msprobe|ours GA_TB_URL=http://127.0.0.1:PORT GA_EXPECT='{"npu":[...],"bench":[...]}' \
//     [GA_SHOT=file.png] node bench/frontend/open_side_by_side.mjs
//
// The action is the navigation to TensorBoard's GRAPH_ASCEND tab (URL/#graph_ascend): msprobe 26.2.0's page
// has no file picker to time; it opens the first run's first file as it loads, and graph-ascend's page does
// the same with the only run of the log directory. So both intervals start at the top document's navigation
// start (its performance.timeOrigin) and are read inside the page with performance.now() (Chromium clamps
// it to 0.1 ms here), never by polling from Node:
//
//   readyMs   navigation start -> the first screen's content is in the page: for msprobe's page, the
//             MutationObserver callback after React put the root's children (GA_EXPECT, the names in the
//             root's sub_nodes) into both of its <svg id="graph"> panes; for ours, the end of the
//             GraphPane.apply (onApply) that left both the NPU and the Bench pane holding every one of them.
//   paintedMs navigation start -> that content drawn: a requestAnimationFrame callback queued at readyMs,
//             then a MessageChannel message (it runs after that frame's style, layout, paint and our
//             pane's canvas draw). Frames come at 60 Hz, so this adds 0-17 ms of frame wait to readyMs.
//
// Also printed: pageMs, navigation start -> the plugin's iframe document's own navigation start (the
// TensorBoard shell, a different TensorBoard on each side: 2.21.0 in msprobe's venv, 2.20.0 in ours), and
// each request of the plugin's frame as start/sent-end from navigation start (Resource Timing: sent is when
// it left on a connection, later than start while Chromium held it back at its 6 connections a host), to
// say where the time went. A fresh Chromium each run: nothing cached. Prints one JSON line.
import { launchChromium } from "./chromium.mjs";

const side = process.env.GA_SIDE;
if (side !== "msprobe" && side !== "ours")
  throw new Error("GA_SIDE is msprobe or ours");
const url = process.env.GA_TB_URL ?? "http://127.0.0.1:6006";
const expect = JSON.parse(process.env.GA_EXPECT ?? "{}");
if (!expect.npu?.length || !expect.bench?.length)
  throw new Error("GA_EXPECT names no children of the roots");

/** Runs in every frame before its scripts; arms only in the plugin's iframe. */
function probe([side, expect]) {
  if (!location.pathname.endsWith("/data/plugin/graph_ascend/index.html"))
    return;
  const w = window;
  const out = (w.__firstScreen = {
    timeOrigin: performance.timeOrigin,
    ready: null,
    painted: null,
  });
  const done = () => {
    if (out.ready !== null) return;
    out.ready = performance.now();
    requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => (out.painted = performance.now());
      ch.port2.postMessage(0);
    });
  };
  const holds = (text, names) => names.every((n) => text.includes(n));
  if (side === "msprobe") {
    // Its panes are <svg id="graph"> (React, antd); node names are <text><title>NAME</title>.
    const check = () => {
      const svgs = document.querySelectorAll("svg#graph");
      if (svgs.length < 2) return false;
      const texts = Array.from(svgs, (s) =>
        Array.from(s.querySelectorAll("title"), (t) => t.textContent).join(
          "\n",
        ),
      );
      return holds(texts[0], expect.npu) && holds(texts[1], expect.bench); // NPU left, Bench right
    };
    const mo = new MutationObserver(() => {
      if (check()) {
        done();
        mo.disconnect();
      }
    });
    mo.observe(document, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  } else {
    // main.ts assigns window.graphAscend (the App) before any reply comes: hook both panes' apply then.
    const has = (pane, names) => {
      const set = new Set(pane.nodes.map((n) => n.name));
      return names.every((n) => set.has(n));
    };
    let app;
    Object.defineProperty(w, "graphAscend", {
      configurable: true,
      get: () => app,
      set: (v) => {
        app = v;
        const check = () => {
          if (has(app.npu, expect.npu) && has(app.bench, expect.bench)) done();
        };
        app.npu.onApply = check;
        app.bench.onApply = check;
      },
    });
  }
}

const browser = await launchChromium();
try {
  const context = await browser.newContext({
    viewport: { width: 1600, height: 1000 },
  });
  await context.addInitScript(probe, [side, expect]);
  const page = await context.newPage();
  await page.goto(`${url}/#graph_ascend`, { waitUntil: "commit" });
  let frame = null;
  for (let i = 0; i < 6000 && !frame; i++) {
    frame = page
      .frames()
      .find((f) => f.url().includes("/data/plugin/graph_ascend/index.html"));
    if (!frame) await page.waitForTimeout(10);
  }
  if (!frame) throw new Error("the GRAPH_ASCEND frame did not load");
  // Only waits: the times were taken inside the page.
  await frame.waitForFunction(
    () => window.__firstScreen?.painted != null,
    null,
    { polling: "raf", timeout: 600000 },
  );
  const top = await page.evaluate(() => performance.timeOrigin);
  const inner = await frame.evaluate(() => {
    const f = window.__firstScreen;
    const requests = performance
      .getEntriesByType("resource")
      .filter((e) => e.name.includes("/data/plugin/graph_ascend/"))
      .map((e) => ({
        what: e.name
          .replace(/^.*\/data\/plugin\/graph_ascend\//, "")
          .slice(0, 60),
        start: performance.timeOrigin + e.startTime,
        // When it left on a connection: later than start while Chromium queued it (6 per host at most).
        sent: performance.timeOrigin + (e.requestStart || e.startTime),
        end: performance.timeOrigin + e.responseEnd,
      }));
    return {
      origin: f.timeOrigin,
      ready: f.timeOrigin + f.ready,
      painted: f.timeOrigin + f.painted,
      requests,
    };
  });
  if (process.env.GA_SHOT) await page.screenshot({ path: process.env.GA_SHOT });
  const ms = (t) => Math.round((t - top) * 10) / 10;
  console.log(
    JSON.stringify({
      side,
      readyMs: ms(inner.ready),
      paintedMs: ms(inner.painted),
      pageMs: ms(inner.origin),
      requests: inner.requests.map(
        (r) => `${r.what} ${ms(r.start)}/${ms(r.sent)}-${ms(r.end)}`,
      ),
    }),
  );
} finally {
  await browser.close();
}
