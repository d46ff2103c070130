// Manual matching, exact and reversible (issue 30 point 1): a picked pair is matched and unmatched
// alone (its forward/backward twin keeps the builder's match), the counts are of what was done and
// pluralised, and Save config writes exactly the manual matches of the session.
import { expect, test } from "@playwright/test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { clickNode, idle, node, openPlugin } from "./helpers";

const LOGDIR = process.env.GA_LOGDIR ?? "";
const BWD = "Module.fc.Linear.backward.0";
const FWD = "Module.fc.Linear.forward.0";

test("a picked backward pair is matched and unmatched alone; its forward twin keeps its match; Save config writes what the session holds", async ({
  page,
}) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  const frame = await openPlugin(page, "statistics/");
  let config = "";
  try {
    await frame.locator(".side-tab[data-tab=match]").click();
    const twin = (await node(frame, "npu", FWD))!;
    expect(twin.matched, "the forward twin is matched by the builder").toBeGreaterThanOrEqual(0);
    const count = frame.locator(".match-count");
    const summary = frame.locator(".match-summary");
    // Other specs may have left manual matches in the service's session: counts are relative to them.
    const manual = (n: number) => (n === 1 ? "1 manual match" : `${n} manual matches`);
    const pick = async () => {
      await clickNode(frame, "npu", BWD);
      await clickNode(frame, "bench", BWD);
    };
    // The builder's match of the backward pair undone: exactly one pair.
    await pick();
    await frame.locator("button[data-action=unmatch]").click();
    await expect(count).toHaveText("1 pair unmatched, 0 failed");
    await idle(frame);
    expect((await node(frame, "npu", BWD))!.matched).toBe(-1);
    expect((await node(frame, "npu", FWD))!.matched).toBe(twin.matched);

    const base = Number((await summary.textContent())!.split(" ")[0]);
    // Matched by hand: one pair done, one manual match more; the twin untouched.
    await pick();
    await frame.locator("button[data-action=match]").click();
    await expect(count).toHaveText("1 pair done, 0 failed");
    await expect(frame.locator(".match-result")).toHaveCount(1);
    await expect(summary).toHaveText(manual(base + 1));
    await idle(frame);
    expect((await node(frame, "npu", BWD))!.matched).toBeGreaterThanOrEqual(0);
    expect((await node(frame, "npu", FWD))!.matched).toBe(twin.matched);

    // Unmatched again: back to what was there before the match, the twin still matched by the builder.
    await pick();
    await frame.locator("button[data-action=unmatch]").click();
    await expect(count).toHaveText("1 pair unmatched, 0 failed");
    await expect(summary).toHaveText(manual(base));
    await idle(frame);
    expect((await node(frame, "npu", BWD))!.matched).toBe(-1);
    expect((await node(frame, "npu", FWD))!.matched).toBe(twin.matched);

    // Matched once more and saved: the config holds exactly that pair.
    await pick();
    await frame.locator("button[data-action=match]").click();
    await expect(count).toHaveText("1 pair done, 0 failed");
    await idle(frame);
    await frame.locator("button[data-action=save]").click();
    await expect(summary).toHaveAttribute("data-saved", /\.vis\.config$/);
    config = join(LOGDIR, (await summary.getAttribute("data-saved"))!);
    const saved = JSON.parse(readFileSync(config, "utf8"));
    expect(saved[BWD]).toBe(BWD);
    expect(Object.keys(saved).length, "the config holds the session's manual matches").toBe(base + 1);
  } finally {
    if (config) rmSync(config, { force: true });
  }
});
