// Manual matching, exact and reversible (issue 30 point 1): a picked pair is matched and unmatched
// alone (its forward/backward twin keeps the builder's match), the counts are of what was done and
// pluralised, and Save config writes exactly the manual matches of the session.
import { expect, test } from "@playwright/test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { clickNode, idle, node, nodes, openPlugin, pluginFrame, waitGraph } from "./helpers";

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

test("unmatching a builder's match: Save config refuses and names it, the page keeps saying so after a reload; matched again, the saved config loads back to the same session", async ({
  page,
}) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  const frame = await openPlugin(page, "statistics/");
  const file = (await frame.evaluate(() => (window as any).graphAscend.file().path)) as string;
  const config = join(LOGDIR, `${file}.config`);
  const removed = frame.locator(".match-removed");
  const pick = async () => {
    await clickNode(frame, "npu", FWD);
    await clickNode(frame, "bench", FWD);
  };
  const save = () => frame.locator("button[data-action=save]").click();
  try {
    await frame.locator(".side-tab[data-tab=match]").click();
    const built = (await node(frame, "npu", FWD))!.matched;
    expect(built, "the forward pair is matched by the builder").toBeGreaterThanOrEqual(0);
    await expect(removed).toBeHidden();
    await pick();
    await frame.locator("button[data-action=unmatch]").click();
    await expect(frame.locator(".match-count")).toHaveText("1 pair unmatched, 0 failed");
    await expect(removed).toHaveText("1 automatic match removed: a config cannot record that; match it again to save");
    // A config lists pairs to match: saved, the pair would come back matched. Nothing is written.
    await save();
    await expect(frame.locator(".toast.error")).toContainText(
      `${file}.config: not saved: 1 automatic match was removed (${FWD} <-> ${FWD})`,
    );
    expect(existsSync(config), "no config written").toBe(false);

    // Reloaded: the page shows the session the service holds, the removal still named.
    await page.reload();
    const again = await pluginFrame(page);
    await waitGraph(again, "npu");
    await again.locator(".side-tab[data-tab=match]").click();
    await expect(again.locator(".match-removed")).toBeVisible();
    expect((await node(again, "npu", FWD))!.matched).toBe(-1);

    // Matched again: savable, and the saved config loads back to the same matches.
    await clickNode(again, "npu", FWD);
    await clickNode(again, "bench", FWD);
    await again.locator("button[data-action=match]").click();
    await expect(again.locator(".match-count")).toHaveText("1 pair done, 0 failed");
    await expect(again.locator(".match-removed")).toBeHidden();
    await again.locator("button[data-action=save]").click();
    await expect(again.locator(".match-summary")).toHaveAttribute("data-saved", `${file}.config`);
    const saved = JSON.parse(readFileSync(config, "utf8"));
    expect(saved[FWD]).toBe(FWD);
    const before = await nodes(again, "npu");
    await again.locator("button[data-action=load]").click();
    // Every pair of the config (other tests' manual matches of this session among them) applies.
    const pairs = Object.keys(saved).length;
    await expect(again.locator(".toast").last()).toContainText(`Applied the config: ${pairs} matched, 0 failed`);
    await idle(again);
    expect((await nodes(again, "npu")).map((n) => n.matched)).toEqual(before.map((n) => n.matched));
  } finally {
    rmSync(config, { force: true });
  }
});
