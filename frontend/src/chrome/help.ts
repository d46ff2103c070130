// The help overlay ("?" or the Guide link of the top bar): the keyboard
// shortcuts, then the user guide's page section. The guide is the README's
// text bundled at build time, so it reads offline and never drifts from it.
import "./help.css";
import guideEn from "../../../README.md?raw";
import guideZh from "../../../docs/zh/README.md?raw";
import { h } from "../dom";
import { type MessageKey, currentLang, t } from "../i18n";

const SHORTCUTS: [string, MessageKey][] = [
  ["W / S", "keyZoom"],
  ["A / D", "keyPanX"],
  ["↑ / ↓, Shift+W / Shift+S", "keyPanY"],
  ["+ / −", "keyZoomStep"],
  ["F", "fit"],
  ["/", "keySearch"],
  ["G · N · P", "keyDivergence"],
  ["Esc", "keyClose"],
  ["?", "keyHelp"],
];

/** The lines of a markdown document from a heading (its text starts with `title`) to the next one of its level. */
export function guideSection(markdown: string, title: RegExp): string[] {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => /^#{1,6} /.test(l) && title.test(l.replace(/^#+ /, "")));
  if (start < 0) return [];
  const level = /^#+/.exec(lines[start])![0].length;
  let end = lines.findIndex((l, i) => i > start && new RegExp(`^#{1,${level}} `).test(l));
  if (end < 0) end = lines.length;
  return lines.slice(start, end);
}

/** A little markdown: headings, paragraphs, lists, code blocks and `code`; text only (no HTML). */
function render(lines: string[]): HTMLElement[] {
  const out: HTMLElement[] = [];
  let para: string[] = [];
  let code: string[] | null = null;
  const inline = (text: string, el: HTMLElement) => {
    for (const [i, part] of text.replace(/\*\*/g, "").split("`").entries()) {
      el.append(i % 2 ? h("code", null, part) : part);
    }
    return el;
  };
  const flush = () => {
    if (para.length) out.push(inline(para.join(" "), h("p")));
    para = [];
  };
  for (const line of lines) {
    // Comments are for the doc tests (<!-- doc-test: ... -->), not for readers.
    if (!code && /^\s*<!--.*-->\s*$/.test(line)) continue;
    if (line.startsWith("```")) {
      if (code) {
        out.push(h("pre", null, code.join("\n")));
        code = null;
      } else {
        flush();
        code = [];
      }
    } else if (code) code.push(line);
    else if (/^#+ /.test(line)) {
      flush();
      out.push(inline(line.replace(/^#+ /, ""), h("h4")));
    } else if (/^\s*[*-] /.test(line)) {
      flush();
      const depth = /^\s*/.exec(line)![0].length >= 2 ? ".sub" : "";
      out.push(inline(line.replace(/^\s*[*-] /, ""), h(`div.guide-item${depth}`)));
    } else if (!line.trim()) flush();
    else if (out.length && out[out.length - 1].classList.contains("guide-item") && /^\s+/.test(line)) {
      inline(" " + line.trim(), out[out.length - 1]);
    } else para.push(line.trim());
  }
  flush();
  return out;
}

export class HelpOverlay {
  readonly el = h("div.help-overlay", { role: "dialog", "aria-modal": "true", tabindex: "-1" });
  private readonly box = h("div.help-box");

  constructor() {
    this.el.hidden = true;
    this.el.append(this.box);
    this.el.addEventListener("pointerdown", (e) => {
      if (e.target === this.el) this.hide();
    });
    this.el.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.hide();
    });
  }

  isOpen(): boolean {
    return !this.el.hidden;
  }

  toggle(guide = false) {
    if (this.isOpen()) this.hide();
    else this.show(guide);
  }

  /** Opens on the shortcuts, or scrolled to the guide. */
  show(guide = false) {
    const close = h("button.help-close", { type: "button", "data-action": "close-help", title: t("keyClose") }, "×");
    close.addEventListener("click", () => this.hide());
    const rows = SHORTCUTS.map(([keys, what]) =>
      h("div.help-row", null, h("kbd", null, keys), h("span", null, t(what))),
    );
    const section =
      currentLang() === "zh"
        ? guideSection(guideZh, /在 TensorBoard 中浏览/)
        : guideSection(guideEn, /^Browsing in TensorBoard/);
    const guideEl = h("div.guide", null, ...render(section));
    this.box.replaceChildren(
      h("div.help-head", null, h("h3", null, t("shortcuts")), close),
      h("div.help-keys", { "data-help": "keys" }, ...rows),
      h("h3", { "data-help": "guide" }, t("guide")),
      guideEl,
    );
    this.el.hidden = false;
    this.el.focus();
    if (guide) guideEl.previousElementSibling!.scrollIntoView();
    else this.box.scrollTop = 0;
  }

  hide() {
    this.el.hidden = true;
  }
}
