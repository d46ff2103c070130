// The grading switch: a compare file stores two measures per node (msprobe
// 8.x's precision index and msprobe 26's pass / warning / error), and the
// page colours, lists and filters by one of them at a time. The service
// colours by the grading of each view key; the legend, bucket counts and
// filters follow through the effective FileInfo this class hands out.
import type { FileInfo } from "../api/client";
import { Grading } from "../api/client";
import { h } from "../dom";
import { onLangChange, t } from "../i18n";

export class GradingToggle {
  readonly el: HTMLDivElement;
  private readonly select: HTMLSelectElement;
  private raw: FileInfo | null = null;
  private choice: Grading | null = null; // null: the file's own default

  constructor(private readonly changed: () => void) {
    this.select = h(
      "select.grading",
      { "aria-label": t("grading"), title: t("gradingHelp") },
      h("option", { value: Grading.GRADING_INDEX }, t("gradingIndex")),
      h("option", { value: Grading.GRADING_26 }, t("grading26")),
    );
    this.select.addEventListener("change", () => {
      this.choice = this.select.value as Grading;
      this.changed();
    });
    const label = h("span", null, t("grading"));
    this.el = h("div.grading-toggle", { hidden: true }, h("label", null, label, " ", this.select));
    // The words follow the language switch (they were set once, in the language the page opened with).
    onLangChange(() => {
      label.textContent = t("grading");
      this.select.setAttribute("aria-label", t("grading"));
      this.select.title = t("gradingHelp");
      this.select.options[0].textContent = t("gradingIndex");
      this.select.options[1].textContent = t("grading26");
    });
  }

  /** True when the file stores msprobe 26 grades beside the index. */
  private hasGrades(info: FileInfo | null): boolean {
    return (info?.meta?.gradeLegend?.length ?? 0) > 0;
  }

  /** The grading the views show. */
  value(): Grading {
    if (!this.hasGrades(this.raw)) return Grading.GRADING_INDEX;
    return this.choice ?? this.raw?.meta?.grading ?? Grading.GRADING_INDEX;
  }

  /**
   * The FileInfo the page works with: under msprobe 26's grading, its legend
   * and NPU bucket counts are the grade ones. Remembers `info` for later switches.
   */
  apply(info: FileInfo | null): FileInfo | null {
    if (info !== this.raw && info?.file !== this.raw?.file) this.choice = null;
    this.raw = info;
    this.el.hidden = !this.hasGrades(info);
    this.select.value = this.value();
    if (!info || this.value() !== Grading.GRADING_26 || !info.meta) return info;
    return {
      ...info,
      meta: { ...info.meta, legend: info.meta.gradeLegend },
      npu: info.npu ? { ...info.npu, buckets: info.npu.gradeBuckets } : info.npu,
    };
  }

  /** The effective FileInfo again (after a switch). */
  current(): FileInfo | null {
    return this.apply(this.raw);
  }
}
