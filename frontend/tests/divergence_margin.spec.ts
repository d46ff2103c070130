// The noise rule on the page (docs/DIVERGENCE.md): the divergence walk says by how many times the
// noise of its kind each entry changed (gpt_statistics, built by scripts/test-browser.sh), and a
// noise-only run of the scored corpus (bench/divergence/corpus.tar.xz), converted from the page,
// says "no divergence beyond noise" with the largest margin and its node, in English and Chinese.
import { expect, type Frame, test } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { convertAndOpen, idle, openPlugin, selectedName, shot } from "./helpers";

const LOGDIR = process.env.GA_LOGDIR ?? "";
const CORPUS = join(dirname(fileURLToPath(import.meta.url)), "../../bench/divergence/corpus.tar.xz");
// The corpus case whose npu run has only `order` noise (fp32, another summation order).
const NOISE_CASE = "gpt-order-none";
const DUMPS = "zz_noise_dumps";
const OUT = "zz_noise";

const status = (frame: Frame) => frame.locator(".divergence-nav .divergence-status");

// The case's dumps and graph are removed so that the other specs see the log directory as made.
test.afterAll(() => {
  if (!LOGDIR) return;
  rmSync(join(LOGDIR, DUMPS), { recursive: true, force: true });
  rmSync(join(LOGDIR, OUT), { recursive: true, force: true });
});

test("each entry of the walk says how many times the noise of its kind it changed by", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  const first = frame.locator("button[data-action=first-divergence]");
  await expect(first).toHaveAttribute("title", /Functional\.linear\.11\.forward · (> 10⁶|[\d.]+)x the noise/);
  await first.click();
  await idle(frame);
  const item = await frame.evaluate(() => (window as any).graphAscend.divergence.current());
  expect(item.name).toBe("Functional.linear.11.forward");
  expect(item.hasMargin).toBe(true);
  expect(item.margin).toBeGreaterThan(5);
  // Its kind's other instances (the other linears) are bit for bit the same: no noise at all.
  const shown = item.margin >= 1e6 ? "> 10⁶" : String(Number(item.margin.toPrecision(3)));
  await expect(status(frame)).toHaveText(
    `1/${await frame.locator(".divergence-nav").getAttribute("data-count")} · ${item.reasonText} · ${shown}x the noise`,
  );
  await expect(status(frame)).toHaveAttribute("title", new RegExp(`${shown.replace(".", "\\.")}x the noise`));
  await frame.locator("button[data-action=next-divergence]").click();
  await idle(frame);
  await expect(status(frame)).toHaveText(/^2\/\d+ · .*x the noise$/);
  await frame.locator("button.lang").click();
  await frame.locator("button[data-action=prev-divergence]").click();
  await idle(frame);
  await expect(status(frame)).toContainText(`噪声的 ${shown} 倍`);
  await frame.locator("button.lang").click();
});

test("a noise-only run says no divergence beyond noise, with the largest margin and its node", async ({
  page,
}, info) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  // The case's two dumps, as a user would put them in the log directory.
  const work = mkdtempSync(join(tmpdir(), "ga-noise-"));
  try {
    execFileSync("tar", ["-xJf", CORPUS, "-C", work]);
    const c = JSON.parse(readFileSync(join(work, "corpus/manifest.json"), "utf8"))[NOISE_CASE];
    expect(c.culprit, "a noise-only case").toBeNull();
    cpSync(join(work, "corpus", c.npu), join(LOGDIR, DUMPS, "npu"), { recursive: true });
    cpSync(join(work, "corpus", c.bench), join(LOGDIR, DUMPS, "bench"), { recursive: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const frame = await openPlugin(page);
  await convertAndOpen(frame, `${DUMPS}/npu`, `${DUMPS}/bench`, OUT);

  const nav = frame.locator(".divergence-nav");
  await expect(nav).toHaveAttribute("data-verdict", "none-beyond-noise");
  await expect(nav).toHaveAttribute("data-count", "0");
  await expect(frame.locator("button[data-action=first-divergence]")).toBeDisabled();
  const verdict = /^No divergence beyond noise \(largest: ([\d.]+)x the noise at (\S+)\)$/;
  await expect(status(frame)).toHaveText(verdict);
  const [, margin, name] = verdict.exec((await status(frame).textContent()) ?? "")!;
  expect(Number(margin)).toBeGreaterThan(0);
  expect(Number(margin)).toBeLessThanOrEqual(5);
  await expect(status(frame)).toHaveAttribute("title", /more than 5x the noise of its kind/);
  await shot(page, info, "no-divergence-beyond-noise");
  // The verdict names a node of the graph: a click shows it.
  await status(frame).click();
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe(name);

  await frame.locator("button.lang").click();
  await expect(status(frame)).toHaveText(`没有超出噪声的分歧（最大：${name} 处，噪声的 ${margin} 倍）`);
  await frame.locator("button.lang").click();
  await expect(status(frame)).toHaveText(verdict);
});
