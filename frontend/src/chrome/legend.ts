// The legend bar: the file's colour buckets, unmatched, the overflow levels
// when the file was checked for overflow, and the node shapes.
import "./legend.css";
import { type FileInfo, OverflowLevel } from "../api/client";
import { h } from "../dom";
import { OVERFLOW_COLOURS, bucketLabel, unmatchedColour } from "../graph/paint";
import { t } from "../i18n";

export function legendItems(info: FileInfo | null, compare: boolean): HTMLElement[] {
  const meta = info?.meta;
  const legend = meta?.legend ?? [];
  const items: HTMLElement[] = [];
  for (const b of legend) {
    const sw = h("span.swatch");
    sw.style.background = b.color;
    items.push(
      h(
        "span.legend-item",
        { title: b.description || b.name, "data-bucket": b.name },
        sw,
        bucketLabel(b, t("unmatched")),
      ),
    );
  }
  if (compare && !legend.some((b) => b.unmatched)) {
    const sw = h("span.swatch");
    sw.style.background = unmatchedColour(legend);
    items.push(h("span.legend-item", null, sw, t("unmatched")));
  }
  const npu = info?.npu;
  if (meta?.overflowChecked || (npu && npu.overflowMedium + npu.overflowHigh + npu.overflowCritical > 0)) {
    for (const [level, key] of [
      [OverflowLevel.OVERFLOW_MEDIUM, "overflowMedium"],
      [OverflowLevel.OVERFLOW_HIGH, "overflowHigh"],
      [OverflowLevel.OVERFLOW_CRITICAL, "overflowCritical"],
    ] as const) {
      const mark = h("span.overflow-mark");
      mark.style.borderTopColor = OVERFLOW_COLOURS[level];
      items.push(h("span.legend-item", null, mark, `${t("overflow")}: ${t(key)}`));
    }
  }
  items.push(
    h("span.legend-item.shape", null, h("span.shape-module"), t("module")),
    h("span.legend-item.shape", null, h("span.shape-api"), t("api")),
    h("span.legend-item.shape", null, h("span.shape-collection"), t("collection")),
  );
  return items;
}
