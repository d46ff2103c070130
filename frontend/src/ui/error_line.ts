// A dialog's own error line: what its last request answered when it failed,
// shown inside the dialog (a toast can hide behind it or fade before it is
// read) until the next request starts.
import "./error_line.css";
import { h } from "../dom";

export class ErrorLine {
  readonly el = h("p.dialog-error", { role: "alert", "data-dialog-error": "" });

  constructor() {
    this.el.hidden = true;
  }

  show(message: string) {
    this.el.textContent = message;
    this.el.hidden = false;
  }

  clear() {
    this.el.textContent = "";
    this.el.hidden = true;
  }

  get message(): string {
    return this.el.hidden ? "" : (this.el.textContent ?? "");
  }
}
