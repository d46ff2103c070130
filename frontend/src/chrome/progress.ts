// The overlay showing the progress of opening a file. It appears only when
// opening takes a while, so quick opens do not flash.
import { h } from "../dom";
import { t } from "../i18n";

export class ProgressOverlay {
  readonly el = h("div.overlay");
  private readonly title = h("div.overlay-title");
  private readonly stage = h("div.overlay-stage");
  private readonly bar = h("div.progress-bar", null, h("div.progress-fill"));
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    this.el.hidden = true;
    this.el.append(h("div.overlay-box", null, this.title, this.bar, this.stage));
  }

  show(title: string, fraction: number, stage: string) {
    if (this.el.hidden && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.el.hidden = false;
      }, 200);
    }
    this.title.textContent = title;
    this.stage.textContent = stage ? `${stage} · ${Math.round(fraction * 100)}%` : t("loading");
    (this.bar.firstChild as HTMLElement).style.width = `${Math.round(Math.max(0, Math.min(1, fraction)) * 100)}%`;
    this.bar.setAttribute("role", "progressbar");
    this.bar.setAttribute("aria-valuenow", String(Math.round(fraction * 100)));
  }

  hide() {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.el.hidden = true;
  }

  /** Whether a file is being opened (the overlay may not show yet). */
  opening(): boolean {
    return this.timer !== undefined || !this.el.hidden;
  }
}
