// Frame times of the GRAPH_ASCEND page while panning a big graph.
//
// Opens TensorBoard (GA_TB_URL) in Debian's Chromium through Playwright,
// picks the run whose name contains GA_RUN, expands the node GA_NODE (one
// large module) with a double click, then pans with the mouse and with the
// keyboard at two zoom levels: a readable one, and one zoomed out until at
// least GA_MIN_NODES nodes are on screen. Frame intervals come from
// requestAnimationFrame timestamps inside the page (Performance API), draw
// times from the pane's own timing of each frame, main-thread stalls from
// PerformanceObserver("longtask"). Prints one JSON object. With GA_OPEN_ONLY
// set it stops after the open and prints only its time.
import { launchChromium } from "./chromium.mjs";

const url = process.env.GA_TB_URL ?? "http://127.0.0.1:6006";
const run = process.env.GA_RUN ?? "gpt_100000";
const target = process.env.GA_NODE ?? "optimizer";
const minNodes = Number(process.env.GA_MIN_NODES ?? 5000);
const steps = Number(process.env.GA_STEPS ?? 240);

const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(`${url}/#graph_ascend`);
  const frame = await waitFor(() =>
    page.frames().find((f) => f.url().includes("/data/plugin/graph_ascend/index.html")),
  );
  await waitFor(() => frame.evaluate(() => window.graphAscend?.npu?.nodes?.length > 0).catch(() => false));
  const picker = frame.locator("select[data-picker=run]");
  const label = (await picker.locator("option").allTextContents()).find((t) => t.includes(run));
  if (!label) throw new Error(`no run containing ${run}`);
  const t0 = Date.now();
  await picker.selectOption({ label });
  await waitIdle(frame);
  const openMs = Date.now() - t0;
  if (process.env.GA_OPEN_ONLY) {
    // bench/frontend/open_vis_db.sh: only the open, from the pick to both sides drawn.
    const nodes = await frame.evaluate(() => window.graphAscend.npu.nodes.length);
    console.log(JSON.stringify({ run, openMs, npuNodesDrawn: nodes }));
    await browser.close();
    process.exit(0);
  }

  // Expand the large module with a real double click on its header.
  const pos = await frame.evaluate((name) => window.graphAscend.npu.locate(name), target);
  if (!pos) throw new Error(`${target} is not a first-level node of ${run}`);
  const canvas = frame.locator(".pane[data-side=npu] canvas.graph-canvas");
  const t1 = Date.now();
  await canvas.dblclick({ position: pos });
  await waitFor(() =>
    frame.evaluate((name) => window.graphAscend.npu.nodes.find((n) => n.name === name)?.expanded, target),
  );
  await waitIdle(frame);
  const expandMs = Date.now() - t1;
  const totalVisible = await frame.evaluate(() => window.graphAscend.npu.totalVisible);

  await frame.evaluate(installProbe);
  const box = await canvas.boundingBox();
  // Strokes start `reach` below the centre and go 480 px up, inside the pane (shorter since the detail
  // board got 40vh).
  const centre = { x: box.x + box.width / 2, y: box.y + box.height / 2, reach: Math.min(260, box.height / 2 - 10) };

  const result = { run, node: target, openMs, expandMs, totalVisible, scenarios: [] };
  // Readable zoom: labels drawn, the header of the expanded module at the top.
  await frame.evaluate((name) => {
    const p = window.graphAscend.npu;
    const n = p.nodes.find((x) => x.name === name);
    // setView: the pane's transform has had no setters since the camera split (645c58c).
    p.setView({ scale: 1, tx: p.size().width / 2 - (n.x + n.width / 2), ty: 20 - n.y });
  }, target);
  result.scenarios.push(await measure(page, frame, centre, "readable zoom (scale 1), mouse drag", "drag"));
  result.scenarios.push(await measure(page, frame, centre, "readable zoom (scale 1), S key held", "key"));

  // Zoomed out until at least minNodes nodes are inside the screen.
  await frame.evaluate(
    ([need, name]) => {
      const p = window.graphAscend.npu;
      const n = p.nodes.find((x) => x.name === name);
      // Leaves come in rows of 5, 25 layout units apart (docs/API.md, "Layout").
      const scale = Math.min(1, Math.max(0.01, p.size().height / ((need / 5) * 25 * 1.3)));
      p.setView({
        scale,
        tx: p.size().width / 2 - (p.rootWidth * scale) / 2,
        ty: p.size().height / 2 - (n.y + n.height / 2) * scale,
      });
    },
    [minNodes, target],
  );
  await settleWindow(frame);
  result.scenarios.push(
    await measure(page, frame, centre, `zoomed out (>= ${minNodes} nodes on screen), mouse drag`, "drag"),
  );
  console.log(JSON.stringify(result, null, 1));
} finally {
  await browser.close();
}

/** Records rAF timestamps, draw times and long tasks inside the page. */
function installProbe() {
  const w = window;
  const probe = { stamps: [], draws: [], drawn: [], longtasks: [], decode: [], bytes: [], apply: [], on: false };
  w.__probe = probe;
  const p = w.graphAscend.npu;
  w.graphAscend.api.onDecode = (rpc, ms, bytes) => {
    if (probe.on && rpc === "GetView") {
      probe.decode.push(ms);
      probe.bytes.push(bytes);
    }
  };
  p.onApply = (ms) => {
    if (probe.on) probe.apply.push(ms);
  };
  p.onFrame = (ms) => {
    if (!probe.on) return;
    probe.draws.push(ms);
    probe.drawn.push(p.drawn);
  };
  const tick = (t) => {
    if (probe.on) probe.stamps.push(t);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => {
    if (probe.on) for (const e of list.getEntries()) probe.longtasks.push(e.duration);
  }).observe({ type: "longtask", buffered: false });
}

async function measure(page, frame, centre, name, how) {
  await settleWindow(frame);
  await frame.evaluate(() => {
    const p = window.__probe;
    p.stamps = [];
    p.draws = [];
    p.drawn = [];
    p.longtasks = [];
    p.decode = [];
    p.bytes = [];
    p.apply = [];
    p.on = true;
  });
  if (how === "drag") {
    // Strokes from the bottom of the pane to the top, 8 px per mouse event:
    // the view keeps moving down the graph into layout it has to fetch.
    const perStroke = 60;
    for (let done = 0; done < steps; done += perStroke) {
      const y0 = centre.y + centre.reach;
      await page.mouse.move(centre.x, y0);
      await page.mouse.down();
      for (let i = 1; i <= perStroke; i++) await page.mouse.move(centre.x + (i % 20) - 10, y0 - 8 * i);
      await page.mouse.up();
    }
  } else {
    await page.mouse.move(centre.x, centre.y);
    await page.keyboard.down("s");
    await page.waitForTimeout(3000);
    await page.keyboard.up("s");
  }
  await page.waitForTimeout(300);
  const raw = await frame.evaluate(() => {
    const p = window.__probe;
    p.on = false;
    return { ...p, scale: window.graphAscend.npu.scale };
  });
  const intervals = raw.stamps.slice(1).map((t, i) => t - raw.stamps[i]);
  return {
    name,
    scale: round(raw.scale, 4),
    frames: intervals.length,
    frameIntervalMs: stats(intervals),
    drawMs: stats(raw.draws),
    nodesDrawn: stats(raw.drawn),
    windowFetches: raw.decode.length,
    replyBytes: stats(raw.bytes),
    parseDecodeMs: stats(raw.decode),
    applyMs: stats(raw.apply),
    longTasks: raw.longtasks.length,
    longestTaskMs: round(Math.max(0, ...raw.longtasks), 1),
  };
}

/** Waits until the pane has fetched the layout around the screen. */
async function settleWindow(frame) {
  await frame.evaluate(() => new Promise((r) => setTimeout(r, 200)));
  await waitIdle(frame);
}

async function waitIdle(frame) {
  await waitFor(() => frame.evaluate(() => window.graphAscend.api.inFlight === 0 && !!window.graphAscend.info()));
  await frame.evaluate(() => Promise.all([window.graphAscend.npu.idle(), window.graphAscend.bench.idle()]));
  await waitFor(() => frame.evaluate(() => window.graphAscend.api.inFlight === 0));
}

async function waitFor(fn, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out: ${fn}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function stats(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return {
    p50: round(q(0.5), 2),
    p95: round(q(0.95), 2),
    max: round(s[s.length - 1], 2),
    mean: round(s.reduce((a, b) => a + b, 0) / s.length, 2),
  };
}

function round(v, d) {
  const k = 10 ** d;
  return Math.round(v * k) / k;
}
