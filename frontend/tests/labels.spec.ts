// Labels that read (issue 30 point 4): search hits cut in the middle, the legend wraps instead of
// scrolling, the ◆ divergence mark and the overflow corner leave the label alone, labels keep a contrast
// of 4.5 on their fill in both themes, and the minimap of a tall graph is not a sliver.
import { expect, type Frame, test } from "@playwright/test";
import { expandAll, idle, openPlugin, selectedName } from "./helpers";

const CULPRIT = "Functional.linear.11.forward";

/** WCAG contrast of two "#rrggbb" colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const v = parseInt(c.slice(1), 16);
    const lin = (x: number) => (x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(((v >> 16) & 255) / 255) + 0.7152 * lin(((v >> 8) & 255) / 255) + 0.0722 * lin((v & 255) / 255);
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

async function labelBoxes(frame: Frame) {
  return frame.evaluate(() => {
    const p = (window as any).graphAscend.npu;
    return p.nodes.filter((n: any) => p.isOnScreen(n.index)).map((n: any) => ({ name: n.name, ...p.labelBox(n.name) }));
  });
}

test("search hits keep the end of long names and cut the middle", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const frame = await openPlugin(page, "gpt/");
  await frame.locator(".side-tab[data-tab=search]").click();
  await frame.locator(".search-input").fill("self_attn");
  const rows = frame.locator(".search-panel .vlist-row[data-node]");
  await expect(rows.first()).toBeVisible();
  const cut = await rows.evaluateAll((els) =>
    els.map((row) => {
      const name = row.querySelector(".hit-name") as HTMLElement;
      const tail = row.querySelector(".hit-tail") as HTMLElement | null;
      const box = name.getBoundingClientRect();
      return {
        node: (row as HTMLElement).dataset.node!,
        text: name.textContent,
        clipped:
          name.scrollWidth > name.clientWidth + 1 ||
          (name.firstChild as HTMLElement).scrollWidth > (name.firstChild as HTMLElement).clientWidth + 1,
        tail: tail?.textContent ?? "",
        tailInside: !!tail && tail.getBoundingClientRect().right <= box.right + 0.5,
      };
    }),
  );
  expect(
    cut.some((c) => c.clipped),
    "some hit is longer than the panel",
  ).toBe(true);
  for (const c of cut) {
    expect(c.text).toBe(c.node);
    expect(c.node.endsWith(c.tail) && c.tail.split(".").length >= 3, `${c.node} keeps its end`).toBe(true);
    expect(c.tailInside, `the end of ${c.node} is in view`).toBe(true);
  }
});

for (const width of [1280, 1600]) {
  test(`the legend wraps at ${width} px: every item whole, no sideways scroll`, async ({ page }) => {
    await page.setViewportSize({ width, height: width === 1280 ? 720 : 1000 });
    const frame = await openPlugin(page, "gpt/");
    const legend = frame.locator(".legend-bar .legend").first();
    const state = await legend.evaluate((el) => {
      const box = el.getBoundingClientRect();
      return {
        scrolls: el.scrollWidth > el.clientWidth + 1,
        cut: Array.from(el.querySelectorAll(".legend-item")).filter((it) => {
          const r = it.getBoundingClientRect();
          return r.right > box.right + 0.5 || r.left < box.left - 0.5 || it.scrollWidth > it.clientWidth + 1;
        }).length,
        items: el.querySelectorAll(".legend-item").length,
      };
    });
    expect(state.items).toBeGreaterThan(3);
    expect(state.scrolls).toBe(false);
    expect(state.cut).toBe(0);
  });
}

for (const theme of ["light", "dark"] as const) {
  test(`labels clear the ◆ mark and read on their fill (${theme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: theme });
    const frame = await openPlugin(page, "gpt/");
    await frame.locator("button[data-action=first-divergence]").click();
    await idle(frame);
    expect(await selectedName(frame, "npu")).toBe(CULPRIT);
    // Zoom in on the culprit so that its label is drawn.
    await frame.evaluate((name) => {
      const p = (window as any).graphAscend.npu;
      const n = p.nodes.find((x: any) => x.name === name);
      p.camera.set({ ...p.camera.centred(n), scale: 2 }, false);
    }, CULPRIT);
    await idle(frame);
    const boxes = await labelBoxes(frame);
    const culprit = boxes.find((b: any) => b.name === CULPRIT)!;
    expect(culprit.right).toBeGreaterThan(culprit.left);
    expect(culprit.left, "the culprit's label starts right of its ◆").toBeGreaterThanOrEqual(culprit.markRight);
    for (const b of boxes) {
      if (b.right <= b.left) continue;
      expect(b.left, `${b.name}: label clear of its ◆`).toBeGreaterThanOrEqual(b.markRight);
      if (/^#[0-9a-f]{6}$/i.test(b.fill))
        expect(contrast(b.colour, b.fill), `${b.name}: ${b.colour} on ${b.fill}`).toBeGreaterThanOrEqual(4.5);
    }
  });
}

test("the minimap of a tall graph is wide enough to aim at", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const frame = await openPlugin(page, "gpt/");
  // Everything expanded makes the graph many times taller than wide.
  await expandAll(frame);
  const map = frame.locator(".pane[data-side=npu] canvas.minimap");
  const tall = await frame.evaluate(() => {
    const p = (window as any).graphAscend.npu;
    return p.rootHeight / p.rootWidth;
  });
  expect(tall).toBeGreaterThan(4);
  await frame.evaluate(() => {
    const p = (window as any).graphAscend.npu;
    p.camera.set({ ...p.camera.centred(p.nodes[p.nodes.length - 1]), scale: 1 }, false);
  });
  await idle(frame);
  await expect(map).toBeVisible();
  const box = (await map.boundingBox())!;
  expect(box.width).toBeGreaterThanOrEqual(72);
});

/** The loaded collapsed nodes whose header lies under the NPU pane's minimap (its box in canvas px). */
async function nodesUnderMinimap(frame: Frame) {
  const map = await frame.locator(".pane[data-side=npu] canvas.minimap").boundingBox();
  const pane = (await frame.locator(".pane[data-side=npu] canvas.graph-canvas").boundingBox())!;
  if (!map || !(await frame.locator(".pane[data-side=npu] canvas.minimap").isVisible())) return null;
  const box = { x: map.x - pane.x, y: map.y - pane.y, width: map.width, height: map.height };
  return frame.evaluate((m) => {
    const p = (window as any).graphAscend.npu;
    const { scale, tx, ty } = p.camera;
    return p.nodes
      .filter((n: any) => !n.expanded)
      .filter((n: any) => {
        const x = n.x * scale + tx;
        const y = n.y * scale + ty;
        return x < m.x + m.width && x + n.width * scale > m.x && y < m.y + m.height && y + n.height * scale > m.y;
      })
      .map((n: any) => n.name);
  }, box);
}

test("the minimap keeps clear of the nodes of a fitted or reset view", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const frame = await openPlugin(page, "gpt/");
  await expandAll(frame);
  // The view a file opens with: its whole width, top aligned, the graph running far below the screen.
  await frame.evaluate(() => {
    const p = (window as any).graphAscend.npu;
    p.camera.reset(p.rootWidth, p.rootHeight, p.minimap.footprint());
  });
  await idle(frame);
  await expect(frame.locator(".pane[data-side=npu] canvas.minimap")).toBeVisible();
  expect(await nodesUnderMinimap(frame)).toEqual([]);
  // Fitted (F): either all of it shows and the minimap hides, or the minimap's strip is left free.
  await frame.locator(".pane[data-side=npu] canvas.graph-canvas").click({ position: { x: 5, y: 5 } });
  await frame.locator(".pane[data-side=npu] canvas.graph-canvas").press("f");
  await idle(frame);
  expect((await nodesUnderMinimap(frame)) ?? []).toEqual([]);
});
