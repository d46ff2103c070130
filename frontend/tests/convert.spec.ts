// Conversions from the page (issue 12): the log directory of scripts/test-browser.sh also holds raw
// msprobe dumps under dumps/ (samples/gpt_statistics, a 10^5-node scale of it made by bench/scale, and a
// damaged dump). The form converts them through the real graph service and graph-ascend executable.
import { expect, type Frame, test } from "@playwright/test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";

import { openPlugin, shot, waitGraph } from "./helpers";

const LOGDIR = process.env.GA_LOGDIR ?? "";
const OUT = "zz_converted";

// Converted files are new runs: removed so that the other specs see the log directory as made.
test.afterAll(() => {
  if (LOGDIR) rmSync(join(LOGDIR, OUT), { recursive: true, force: true });
});

/** Every path under `dir` a conversion could leave: staging folders, temporaries, graph files. */
function leftovers(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (/^\.graph-ascend-|\.tmp-\d+$/.test(e.name)) out.push(join(e.parentPath, e.name));
  }
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pid of the running conversion's builder: a graph-ascend process writing into a staging folder. */
function builderPid(): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    if (basename(argv[0]) === "graph-ascend" && argv.some((a) => a.includes(".graph-ascend-convert-"))) {
      return Number(entry);
    }
  }
  return undefined;
}

/** Whether a SIGTERM waits for the process (ShdPnd, bit 15 - 1), or it has ended. */
function terminatedOrGone(pid: number): boolean {
  try {
    const pending = /ShdPnd:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return pending === null || (BigInt(`0x${pending[1]}`) & 0x4000n) !== 0n;
  } catch {
    return true;
  }
}

/** Whether `ready` holds within `ms`, asked every 50 ms. */
async function within(ms: number, ready: () => Promise<boolean>): Promise<boolean> {
  for (const end = Date.now() + ms; ; await sleep(50)) {
    if (await ready()) return true;
    if (Date.now() > end) return false;
  }
}

/**
 * The conversion's builder, stopped (SIGSTOP) as soon as it runs, then run 20 ms at a time until `ready`
 * holds, and left stopped: the builder converts 10^5 nodes a side in under a second, which a click can miss.
 * After each slice the page gets 2 s, with the builder stopped, to show what the builder has already said:
 * a page slow under load waits for nothing that runs on meanwhile.
 */
async function holdBuilderWhen(ready: () => Promise<boolean>): Promise<number> {
  let pid: number | undefined;
  for (const end = Date.now() + 30_000; pid === undefined && Date.now() < end; await sleep(2)) pid = builderPid();
  if (pid === undefined) throw new Error("no graph-ascend builder started within 30 s");
  process.kill(pid, "SIGSTOP");
  for (const end = Date.now() + 120_000; !(await within(2_000, ready));) {
    if (Date.now() > end) throw new Error("the builder did not get there within 120 s");
    process.kill(pid, "SIGCONT"); // throws if the builder has ended
    await sleep(20);
    process.kill(pid, "SIGSTOP");
  }
  return pid;
}

async function openForm(frame: Frame, npu: string, bench: string, output: string) {
  await frame.locator("button[data-action=convert]").click();
  const npuSel = frame.locator("select[data-convert=npu]");
  await expect(npuSel.locator(`option[value="${npu}"]`)).toHaveCount(1);
  await npuSel.selectOption(npu);
  await frame.locator("select[data-convert=bench]").selectOption(bench);
  await frame.locator("input[data-convert=output]").fill(output);
}

/** Records the highest value the progress bar showed (the dialog closes as soon as the file opens). */
async function recordProgress(frame: Frame) {
  await frame.evaluate(() => {
    const bar = document.querySelector("[data-convert=progress]")!;
    const w = window as any;
    w.convertMax = 0;
    w.convertStages = [];
    new MutationObserver(() => {
      w.convertMax = Math.max(w.convertMax, Number(bar.getAttribute("aria-valuenow") ?? 0));
      // The job's own stage history: a fast run passes stages between two progress messages.
      const stages = (document.querySelector("[data-convert=stage]") as HTMLElement | null)?.dataset.stages ?? "";
      if (stages) w.convertStages = stages.split("\n");
    }).observe(bar, { attributes: true });
  });
}

test("converts gpt_statistics with -oc: the plan says a batch of 2, progress reaches 100 % and the graph opens", async ({
  page,
}, info) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  const frame = await openPlugin(page);
  await openForm(frame, "dumps/gpt/npu", "dumps/gpt/bench", `${OUT}/gpt`);
  await frame.locator("input[data-convert=oc]").check();
  const plan = frame.locator("[data-convert=plan]");
  await expect(plan).toHaveAttribute("data-kind", "compare");
  await expect(plan).toHaveAttribute("data-files", "2");
  await expect(plan).toContainText("2");
  await expect(frame.locator("[data-convert=argv]")).toContainText("-oc");
  await shot(page, info, "convert-form");
  await recordProgress(frame);
  await frame.locator("button[data-action=convert-start]").click();
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""), { timeout: 60_000 })
    .toMatch(new RegExp(`^${OUT}/gpt/compare_step0_rank0_\\d+\\.vis$`));
  await waitGraph(frame, "npu");
  await waitGraph(frame, "bench");
  expect(await frame.evaluate(() => (window as any).convertMax)).toBe(100);
  const stages: string[] = await frame.evaluate(() => (window as any).convertStages);
  expect(stages.join("\n")).toContain("comparing and writing");
  expect(await frame.evaluate(() => (window as any).graphAscend.info()?.meta?.overflowChecked)).toBe(true);
  await expect(frame.locator(".convert-overlay")).toBeHidden();
  const runs = await frame.locator("select[data-picker=run] option").allTextContents();
  expect(runs.some((r) => r.includes(`${OUT}/gpt`))).toBe(true);
});

test("cancelling a conversion of a scaled 10^5-node dump mid-way leaves no file", async ({ page }, info) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  const frame = await openPlugin(page);
  await openForm(frame, "dumps/scaled/npu", "dumps/scaled/bench", `${OUT}/scaled`);
  await expect(frame.locator("[data-convert=plan]")).toHaveAttribute("data-kind", "compare");
  await frame.locator("button[data-action=convert-start]").click();
  const stage = frame.locator("[data-convert=stage]");
  // Held mid-way, reading the dumps, while the page cancels it; continued once the service's SIGTERM waits
  // for it, which it then handles as it would running (its temporaries removed).
  const pid = await holdBuilderWhen(async () => ((await stage.textContent()) ?? "").includes("reading dumps"));
  await expect(stage).toContainText("reading dumps");
  await shot(page, info, "convert-running");
  await frame.locator("button[data-action=convert-cancel]").click();
  await expect.poll(() => terminatedOrGone(pid), { timeout: 10_000 }).toBe(true);
  try {
    process.kill(pid, "SIGCONT");
  } catch {
    // already ended: the service's SIGKILL after its grace period
  }
  await expect(frame.locator("[data-convert=error]")).toContainText("cancelled from the page");
  await expect(frame.locator("button[data-action=convert-cancel]")).toBeHidden();
  expect(existsSync(join(LOGDIR, OUT, "scaled"))).toBe(false);
  expect(leftovers(LOGDIR)).toEqual([]);
  expect(await frame.evaluate(() => (window as any).graphAscend.file()?.path ?? "")).not.toContain(OUT);
});

test("a damaged dump shows the builder's one-line error naming the file and the place", async ({ page }, info) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  const frame = await openPlugin(page);
  await openForm(frame, "dumps/bad", "", `${OUT}/bad`);
  await expect(frame.locator("[data-convert=plan]")).toHaveAttribute("data-kind", "build");
  await frame.locator("button[data-action=convert-start]").click();
  const error = frame.locator("[data-convert=error]");
  await expect(error).toContainText("dumps/bad/dump.json: line 2", { timeout: 60_000 });
  await shot(page, info, "convert-error");
  expect(existsSync(join(LOGDIR, OUT, "bad"))).toBe(false);
  expect(leftovers(LOGDIR)).toEqual([]);
});
