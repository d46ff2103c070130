// Export as drawn (issue 30 point 3): the SVG (and the PNG made from it) holds the labels the canvas
// shows, fitted with its middle ellipsis, and the ◆ divergence marks and red rings.
import { expect, type Page, test } from "@playwright/test";
import { readFileSync } from "node:fs";
import { idle, openPlugin, selectedName } from "./helpers";

const CULPRIT = "Functional.linear.11.forward";

async function exportedSvg(page: Page, click: () => Promise<void>): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent("download"), click()]);
  return readFileSync((await download.path())!, "utf8");
}

test("the exported SVG shows the canvas's labels, ◆ marks and red rings", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  await frame.locator("button[data-action=first-divergence]").click();
  await idle(frame);
  expect(await selectedName(frame, "npu")).toBe(CULPRIT);
  await frame.locator("select[data-picker=export-side]").selectOption("npu");
  // What the canvas draws: each on-screen node's fitted label (empty when too small to draw).
  const drawn: Record<string, string> = await frame.evaluate(() => {
    const p = (window as any).graphAscend.npu;
    const out: Record<string, string> = {};
    for (const n of p.nodes) if (p.isOnScreen(n.index)) out[n.name] = p.labelBox(n.name).text;
    return out;
  });
  const svg = await exportedSvg(page, () => frame.locator("button[data-action=export-svg]").click());
  const parsed = await frame.evaluate(
    ([svg, culprit]) => {
      const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
      const g = doc.querySelector(`g.node[data-name="${CSS.escape(culprit)}"]`);
      return {
        error: doc.querySelector("parsererror")?.textContent ?? null,
        texts: Array.from(doc.querySelectorAll("g.node"), (n) => [
          n.getAttribute("data-name")!,
          n.querySelector("text")?.textContent ?? "",
        ]),
        clipped: doc.querySelectorAll("clipPath").length,
        diamond: !!g?.querySelector("path[data-mark=diamond]"),
        ring: g?.querySelector("rect[data-mark=divergence]")?.getAttribute("stroke") ?? null,
        diamonds: doc.querySelectorAll("path[data-mark=diamond]").length,
      };
    },
    [svg, CULPRIT] as const,
  );
  expect(parsed.error).toBeNull();
  expect(parsed.clipped, "labels are fitted, not clipped").toBe(0);
  expect(parsed.diamond, "the culprit's ◆").toBe(true);
  expect(parsed.ring?.toUpperCase()).toBe("#E32020");
  // Its ancestors carry the ◆ too (expanded containers of the culprit).
  expect(parsed.diamonds).toBeGreaterThan(1);
  let cut = 0;
  for (const [name, text] of parsed.texts) {
    if (!(name in drawn)) continue;
    expect(text, `${name} as the canvas draws it`).toBe(drawn[name]);
    if (text.includes("…")) cut++;
  }
  expect(Object.keys(drawn).length).toBeGreaterThan(3);
  expect(cut + Object.values(drawn).filter((t) => t).length).toBeGreaterThan(0);
});
