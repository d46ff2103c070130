// Manual matches re-rank the divergence (docs/DIVERGENCE.md, "Limits"): on samples/renamed_act,
// converted from the page, the build leaves the renamed activation module (GELU on the NPU side,
// GELUActivation on the Bench side) unmatched and ranks it first; matching it with its children in the
// matching panel compares the activation op, which becomes the first divergence with its margin, and
// unmatching them brings the build's ranking back.
import { expect, type Frame, test } from "@playwright/test";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";

import { clickNode, convertAndOpen, idle, openPlugin, SAMPLES, selectedName, shot } from "./helpers";

const LOGDIR = process.env.GA_LOGDIR ?? "";
const DUMPS = "zz_rerank_dumps";
const OUT = "zz_rerank";
const MODULE = "Module.blocks.1.act.GELU.forward.0";
const MODULE_BENCH = "Module.blocks.1.act.GELUActivation.forward.0";
const OP = "Functional.gelu.1.forward";

// The sample's dumps and graph are removed so that the other specs see the log directory as made.
test.afterAll(() => {
  if (!LOGDIR) return;
  rmSync(join(LOGDIR, DUMPS), { recursive: true, force: true });
  rmSync(join(LOGDIR, OUT), { recursive: true, force: true });
});

const firstButton = (frame: Frame) => frame.locator("button[data-action=first-divergence]");

async function pickUnmatched(frame: Frame, list: "match-npu" | "match-bench", name: string) {
  const row = frame.locator(`.match-panel .hitlist[data-list=${list}] .vlist-row[data-node="${name}"]`);
  await expect(row).toBeVisible();
  await row.click();
  await idle(frame);
}

test("matching the renamed module in the page changes the first divergence; unmatching restores it", async ({
  page,
}, info) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  for (const side of ["npu", "bench"]) {
    cpSync(join(SAMPLES, "renamed_act", side, "step0/rank0"), join(LOGDIR, DUMPS, side), { recursive: true });
  }
  const frame = await openPlugin(page);
  await convertAndOpen(frame, `${DUMPS}/npu`, `${DUMPS}/bench`, OUT);

  // As built: the unmatched module between matched neighbours.
  await expect(firstButton(frame)).toHaveAttribute("title", new RegExp(MODULE.replace(/\./g, "\\.")));
  const built = await frame.locator(".divergence-nav").getAttribute("data-count");

  await frame.locator(".side-tab[data-tab=match]").click();
  await pickUnmatched(frame, "match-npu", MODULE);
  await pickUnmatched(frame, "match-bench", MODULE_BENCH);
  await expect(frame.locator(".picked[data-side=npu]")).toHaveAttribute("data-node", MODULE);
  await expect(frame.locator(".picked[data-side=bench]")).toHaveAttribute("data-node", MODULE_BENCH);
  await frame.locator(".match-panel label.check input").check();
  await frame.locator("button[data-action=match]").click();
  await expect(frame.locator(".match-result.ok").first()).toBeVisible();
  await idle(frame);

  // Re-ranked: the op inside, which computes differently, with its margin.
  await expect(firstButton(frame)).toHaveAttribute(
    "title",
    new RegExp(`${OP.replace(/\./g, "\\.")} · [\\d.]+x the noise`),
  );
  await firstButton(frame).click();
  await idle(frame);
  const item = await frame.evaluate(() => (window as any).graphAscend.divergence.current());
  expect(item.name).toBe(OP);
  expect(item.hasMargin).toBe(true);
  expect(item.margin).toBeGreaterThan(5);
  await expect.poll(() => selectedName(frame, "npu")).toBe(OP);
  await expect(frame.locator(".divergence-nav .divergence-status")).toHaveText(
    /^1\/\d+ · outputs differ, inputs agree · /,
  );
  await shot(page, info, "rerank-after-match");

  // Unmatched again: the build's ranking. The jump revealed both modules (the op's parents).
  await clickNode(frame, "npu", MODULE);
  await clickNode(frame, "bench", MODULE_BENCH);
  await expect(frame.locator(".picked[data-side=npu]")).toHaveAttribute("data-node", MODULE);
  await expect(frame.locator(".picked[data-side=bench]")).toHaveAttribute("data-node", MODULE_BENCH);
  await frame.locator("button[data-action=unmatch]").click();
  await idle(frame);
  await expect(firstButton(frame)).toHaveAttribute("title", new RegExp(MODULE.replace(/\./g, "\\.")));
  await expect(frame.locator(".divergence-nav")).toHaveAttribute("data-count", built!);
});
