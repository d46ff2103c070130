// The side panels: precision buckets, unmatched and overflow lists, rank
// switching on a batch output, manual matching; theme and language.
import { type Route, expect, test } from "@playwright/test";
import {
  chooseRun,
  clickNode,
  idle,
  node,
  nodes,
  onScreen,
  openPlugin,
  searchAndJump,
  selectedName,
  shot,
} from "./helpers";

test("a precision bucket lists its nodes and a click opens one", async ({ page }, info) => {
  const frame = await openPlugin(page, "statistics/");
  await frame.locator(".side-tab[data-tab=filter]").click();
  const legend: { name: string; unmatched: boolean }[] = await frame.evaluate(
    () => (window as any).graphAscend.info().meta.legend,
  );
  const worst = legend.findIndex((b) => b.name === "0.8-1");
  expect(worst).toBeGreaterThanOrEqual(0);
  const expected: number = await frame.evaluate(
    (b) => (window as any).graphAscend.info().npu.buckets.find((x: any) => x.bucket === b)?.count ?? 0,
    worst,
  );
  expect(expected).toBeGreaterThan(0);
  await frame.locator(`.filter-panel input[data-bucket="${worst}"]`).check();
  const list = frame.locator(".hitlist[data-list=precision]");
  await expect(list.locator(".count")).toHaveText(`(${expected})`);
  const first = list.locator(".vlist-row[data-node]").first();
  const name = (await first.getAttribute("data-node"))!;
  await first.click();
  await expect.poll(() => selectedName(frame, "npu")).toBe(name);
  await idle(frame);
  const n = await node(frame, "npu", name);
  expect(n?.bucket).toBe(worst);
  expect(await onScreen(frame, "npu", n!.index)).toBe(true);
  await expect(frame.locator(".node-badge[data-side=npu] .badge-name")).toHaveText(name);
  await shot(page, info, "precision-filter");
});

test("unmatched nodes of each side and overflow levels are listed", async ({ page }, info) => {
  const frame = await openPlugin(page, "overflow/");
  await frame.locator(".side-tab[data-tab=filter]").click();
  const summary = await frame.evaluate(() => {
    const i = (window as any).graphAscend.info();
    return { npu: i.npu.unmatched, bench: i.bench.unmatched, critical: i.npu.overflowCritical };
  });
  expect(summary.npu).toBeGreaterThan(0);
  const npuList = frame.locator(".hitlist[data-list=unmatched-npu]");
  const benchList = frame.locator(".hitlist[data-list=unmatched-bench]");
  await expect(npuList.locator(".count")).toHaveText(`(${summary.npu})`);
  await expect(benchList.locator(".count")).toHaveText(`(${summary.bench})`);

  const benchRow = benchList.locator(".vlist-row[data-node]").first();
  const benchName = (await benchRow.getAttribute("data-node"))!;
  await benchRow.click();
  await expect.poll(() => selectedName(frame, "bench")).toBe(benchName);
  await idle(frame);
  expect((await node(frame, "bench", benchName))?.matched).toBe(-1);
  await expect(frame.locator(".node-badge[data-side=npu]")).toContainText(/not matched|未匹配/);

  expect(summary.critical).toBeGreaterThan(0);
  await frame.locator('.filter-panel input[data-level="OVERFLOW_CRITICAL"]').check();
  const overflow = frame.locator(".hitlist[data-list=overflow]");
  await expect(overflow.locator(".count")).toHaveText(`(${summary.critical})`);
  await overflow.locator(".vlist-row[data-node]").first().click();
  await idle(frame);
  await expect(frame.locator(".node-badge[data-side=npu] .overflow")).toBeVisible();
  await shot(page, info, "unmatched-and-overflow");
});

test("switching rank on a batch output keeps the selected node", async ({ page }, info) => {
  const frame = await openPlugin(page, "batch/");
  const rankPicker = frame.locator("select[data-picker=rank]");
  await expect(rankPicker).toBeEnabled();
  const ranks = await rankPicker.locator("option").allTextContents();
  expect(ranks).toEqual(expect.arrayContaining([expect.stringMatching(/^rank0\b/), expect.stringMatching(/^rank1\b/)]));
  await rankPicker.selectOption("rank0");
  await idle(frame);
  const deep = (await nodes(frame, "npu")).find((n) => n.parent === 0 && n.expandable);
  expect(deep, "a first-level module").toBeDefined();
  await clickNode(frame, "npu", deep!.name);
  expect(await selectedName(frame, "npu")).toBe(deep!.name);
  const before = await frame.evaluate(() => (window as any).graphAscend.file().path);
  expect(before).toContain("rank0");

  await rankPicker.selectOption("rank1");
  await expect.poll(() => frame.evaluate(() => (window as any).graphAscend.file().path)).toContain("rank1");
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe(deep!.name);
  const after = await node(frame, "npu", deep!.name);
  expect(await onScreen(frame, "npu", after!.index)).toBe(true);
  await expect(frame.locator(".node-badge[data-side=npu] .badge-name")).toHaveText(deep!.name);
  await shot(page, info, "rank-switch");
});

test("manual matching: unmatch a pair, match it again, save the config and load it back", async ({ page }, info) => {
  const frame = await openPlugin(page, "statistics/");
  const name = "Module.fc.Linear.forward.0";
  await frame.locator(".side-tab[data-tab=match]").click();
  await clickNode(frame, "npu", name);
  await clickNode(frame, "bench", name);
  await expect(frame.locator(".picked[data-side=npu]")).toHaveAttribute("data-node", name);
  await expect(frame.locator(".picked[data-side=bench]")).toHaveAttribute("data-node", name);
  const benchIndex = (await node(frame, "bench", name))!.index;

  await frame.locator("button[data-action=unmatch]").click();
  await expect(frame.locator(".match-result.ok").first()).toBeVisible();
  await idle(frame);
  await expect.poll(async () => (await node(frame, "npu", name))?.matched).toBe(-1);
  const npuUnmatched = frame.locator(".match-panel .hitlist[data-list=match-npu]");
  await expect(npuUnmatched.locator(`.vlist-row[data-node="${name}"]`)).toBeVisible();
  await shot(page, info, "unmatched-pair");

  await frame.locator("button[data-action=match]").click();
  await expect(frame.locator(".match-result.ok").first()).toBeVisible();
  await idle(frame);
  await expect.poll(async () => (await node(frame, "npu", name))?.matched).toBe(benchIndex);
  await expect(npuUnmatched.locator(`.vlist-row[data-node="${name}"]`)).toHaveCount(0);

  await frame.locator("button[data-action=save]").click();
  await expect(frame.locator(".match-summary")).toHaveAttribute("data-saved", /\.config$/);

  // The saved config brings the pair back after another unmatch.
  await frame.locator("button[data-action=unmatch]").click();
  await idle(frame);
  await expect.poll(async () => (await node(frame, "npu", name))?.matched).toBe(-1);
  await frame.locator("button[data-action=load]").click();
  await idle(frame);
  await expect.poll(async () => (await node(frame, "npu", name))?.matched).toBe(benchIndex);
});

test("a damaged .vis file gives an error naming it, and other runs still open", async ({ page }) => {
  const frame = await openPlugin(page, "statistics/");
  const picker = frame.locator("select[data-picker=run]");
  const broken = (await picker.locator("option").allTextContents()).find((t) => t.includes("broken/"))!;
  expect(broken).toBeTruthy();
  await picker.selectOption({ label: broken });
  const empty = frame.locator(".empty-state");
  await expect(empty).toBeVisible();
  await expect(empty).toContainText(broken.split(" ")[0]);
  await expect(empty.locator("button[data-action=retry]")).toBeVisible();
  await expect(frame.locator(".toast.error")).toBeVisible();
  await chooseRun(frame, "statistics/");
  await expect(empty).toBeHidden();
  expect((await nodes(frame, "npu")).length).toBeGreaterThan(0);
});

test("follows TensorBoard's dark mode and switches to Chinese", async ({ page }, info) => {
  const frame = await openPlugin(page, "statistics/");
  await expect(frame.locator("html")).not.toHaveClass(/\bdark\b/);
  // TensorBoard's own theme menu: the page follows the body.dark-mode it sets.
  const theme = async (name: RegExp) => {
    await page.getByRole("button", { name: /light or dark theme/i }).click();
    await page.getByRole("menuitem", { name }).click();
  };
  // The canvas itself is redrawn with the dark palette (its top-left pixel is background).
  const corner = () =>
    frame.evaluate(() => {
      const c = document.querySelector<HTMLCanvasElement>(".pane[data-side=npu] canvas.graph-canvas")!;
      return Array.from(c.getContext("2d")!.getImageData(1, 1, 1, 1).data.slice(0, 3));
    });
  // Polled: the pane draws on an animation frame, which may come after the page went idle.
  await expect.poll(corner).toEqual([255, 255, 255]);
  await theme(/^dark$/i);
  await expect(page.locator("body")).toHaveClass(/dark-mode/);
  await expect(frame.locator("html")).toHaveClass(/\bdark\b/);
  await expect.poll(corner).toEqual([32, 33, 36]);
  await frame.locator("button.lang").click();
  await expect(frame.locator(".side-tab[data-tab=search]")).toHaveText("搜索");
  await searchAndJump(frame, "relu.0", "Functional.relu.0.forward");
  await shot(page, info, "dark-chinese");
  await frame.locator("button.lang").click();
  await expect(frame.locator(".side-tab[data-tab=search]")).toHaveText("Search");
  await theme(/^light$/i);
  await expect(frame.locator("html")).not.toHaveClass(/\bdark\b/);
  await expect.poll(corner).toEqual([255, 255, 255]);
});

test("a build file shows one graph without the compare panels", async ({ page }) => {
  const frame = await openPlugin(page, "build/");
  await expect(frame.locator(".pane[data-side=bench]")).toBeHidden();
  await expect(frame.locator(".side-tab[data-tab=match]")).toBeHidden();
  await chooseRun(frame, "statistics/");
  await expect(frame.locator(".pane[data-side=bench]")).toBeVisible();
});

test("the side panels keep at most 3 requests in flight, so a file's first screen never waits behind them", async ({
  page,
}) => {
  const frame = await openPlugin(page, "statistics/");
  // Hold the side panels' requests of the next file, as a service still reading a big file would.
  const held: Route[] = [];
  let release = false;
  let seen = 0;
  await page.route(/\/data\/plugin\/graph_ascend\/api\/(Filter|GetCkpt|ListMatchConfigs)$/, (route) => {
    seen++;
    if (release) return route.continue();
    held.push(route);
  });
  await frame.evaluate(() => {
    const w = window as any;
    w.__before = [w.graphAscend.npu.nodes, w.graphAscend.bench.nodes];
  });
  const picker = frame.locator("select[data-picker=run]");
  const label = (await picker.locator("option").allTextContents()).find((t) => t.includes("gpt/"));
  expect(label, "a run containing gpt/").toBeTruthy();
  await picker.selectOption({ label: label! });
  // Both panes show the new file's first screen while the panels' requests hang.
  await expect
    .poll(() =>
      frame.evaluate(() => {
        const w = window as any;
        const [npu, bench] = w.__before;
        const a = w.graphAscend;
        return a.npu.nodes !== npu && a.npu.nodes.length > 0 && a.bench.nodes !== bench && a.bench.nodes.length > 0;
      }),
    )
    .toBe(true);
  expect(held.length).toBeGreaterThan(0);
  expect(held.length).toBeLessThanOrEqual(3);
  const waiting = await frame.evaluate(() => (window as any).graphAscend.api.inFlight);
  expect(waiting).toBeGreaterThan(held.length); // the others wait in the page, counted as busy
  // Released, the waiting ones follow.
  release = true;
  for (const r of held) await r.continue();
  await idle(frame);
  expect(seen).toBeGreaterThan(held.length);
});

test("the filter and match panels share one request for each side's unmatched list", async ({ page }) => {
  const frame = await openPlugin(page, "statistics/");
  const unmatched: string[] = [];
  await page.route(/\/data\/plugin\/graph_ascend\/api\/Filter$/, (route) => {
    const body = JSON.parse(route.request().postData() ?? "{}");
    if (body.unmatched) unmatched.push(JSON.stringify(body));
    return route.continue();
  });
  await chooseRun(frame, "overflow/");
  await idle(frame);
  const summary = await frame.evaluate(() => {
    const i = (window as any).graphAscend.info();
    return { npu: i.npu.unmatched, bench: i.bench.unmatched };
  });
  expect(summary.npu).toBeGreaterThan(0);
  // Both panels list both sides...
  for (const [list, n] of [
    ["unmatched-npu", summary.npu],
    ["match-npu", summary.npu],
    ["unmatched-bench", summary.bench],
    ["match-bench", summary.bench],
  ]) {
    await expect(frame.locator(`.hitlist[data-list=${list}] .count`)).toHaveText(`(${n})`);
  }
  // ...from one request a side.
  expect(unmatched.length).toBe(2);
  expect(new Set(unmatched).size).toBe(2);
});

test("a shared request goes on while one of its callers waits, and a new one starts once all have aborted", async ({
  page,
}) => {
  const frame = await openPlugin(page, "overflow/");
  await idle(frame);
  const held: Route[] = [];
  await page.route(/\/data\/plugin\/graph_ascend\/api\/Filter$/, (route) => {
    held.push(route);
  });
  // Two identical calls, the first aborted: one request, which answers the second.
  const oneLeft = frame.evaluate(async () => {
    const app = (window as any).graphAscend;
    const req = { view: app.viewKey("SIDE_NPU"), unmatched: true, offset: 0, limit: 7 };
    const a = new AbortController();
    const first = app.api.call("filter", req, a.signal).then(
      () => "answered",
      (e: Error) => e.name,
    );
    const second = app.api.call("filter", req).then(
      (r: any) => `answered ${r.total}`,
      (e: Error) => e.name,
    );
    a.abort();
    return [await first, await second];
  });
  await expect.poll(() => held.length).toBe(1);
  await held[0].continue();
  const unmatched: number = await frame.evaluate(() => (window as any).graphAscend.info().npu.unmatched);
  expect(await oneLeft).toEqual(["AbortError", `answered ${unmatched}`]);
  // Both aborted once their request is out: each caller gets its abort, and the same call afterwards
  // is a request of its own.
  await frame.evaluate(() => {
    const w = window as any;
    const req = { view: w.graphAscend.viewKey("SIDE_NPU"), unmatched: true, offset: 0, limit: 8 };
    w.__req = req;
    w.__controllers = [new AbortController(), new AbortController()];
    w.__calls = w.__controllers.map((c: AbortController) =>
      w.graphAscend.api.call("filter", req, c.signal).then(
        () => "answered",
        (e: Error) => e.name,
      ),
    );
  });
  await expect.poll(() => held.length).toBe(2);
  const allAborted = frame.evaluate(async () => {
    const w = window as any;
    for (const c of w.__controllers) c.abort();
    const aborted = await Promise.all(w.__calls);
    const again = await w.graphAscend.api.call("filter", w.__req).then((r: any) => `answered ${r.total}`);
    return [...aborted, again];
  });
  await expect.poll(() => held.length).toBe(3);
  await held[2].continue();
  expect(await allAborted).toEqual(["AbortError", "AbortError", `answered ${unmatched}`]);
});
