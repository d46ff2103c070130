// The conversion dialog: the form, what the result will be (ConvertPlan),
// start, progress (ConvertProgress, one watch per started job: a job nobody
// watches is cancelled by the server), cancel, the builder's error, and the
// result opened in the page when done.
import "./convert.css";
import { ApiError, type ConvertJob, ConvertState, GraphApi, isAbort } from "../api/client";
import { debounce, h } from "../dom";
import { onLangChange } from "../i18n";
import { ConvertForm } from "./form";
import { ct } from "./strings";

export interface ConvertHost {
  readonly api: GraphApi;
  readonly session: string;
  /** Shows a converted file (the run list is read again first). */
  openConverted(path: string): Promise<void>;
}

export class ConvertDialog {
  /** The top-bar button that opens the dialog. */
  readonly button = h("button", { type: "button", "data-action": "convert" });
  readonly el = h("div.overlay.convert-overlay");
  private readonly form: ConvertForm;
  private readonly titleEl = h("span");
  private readonly closeBtn = h("button", { type: "button", "data-action": "convert-close" });
  private readonly notice = h("div.convert-error", { role: "alert" });
  private readonly plan = h("div.convert-plan", { "data-convert": "plan" });
  private readonly argv = h("div.convert-argv", { "data-convert": "argv" });
  private readonly startBtn = h("button", { type: "button", "data-action": "convert-start" });
  private readonly cancelBtn = h("button", { type: "button", "data-action": "convert-cancel" });
  private readonly bar = h(
    "div.progress-bar",
    { "data-convert": "progress", role: "progressbar" },
    h("div.progress-fill"),
  );
  private readonly stage = h("div.convert-stage", { "data-convert": "stage" });
  private readonly error = h("div.convert-error", { "data-convert": "error", role: "alert" });
  private readonly logTitle = h("summary");
  private readonly log = h("pre.convert-log", { "data-convert": "log" });
  private readonly jobsEl = h("div.convert-jobs", { "data-convert": "jobs" });
  private readonly watches = new Map<string, AbortController>();
  private readonly jobs = new Map<string, ConvertJob>();
  private shown: string | null = null;
  private planSeq = 0;
  private canStart = false;

  constructor(private readonly host: ConvertHost) {
    this.el.hidden = true;
    this.form = new ConvertForm(() => this.formChanged());
    this.el.append(
      h(
        "div.convert-box",
        { role: "dialog", "aria-modal": "true" },
        h("div.convert-head", null, this.titleEl, this.closeBtn),
        this.notice,
        this.form.el,
        this.plan,
        this.argv,
        h("div.convert-actions", null, this.cancelBtn, this.startBtn),
        this.bar,
        this.stage,
        this.error,
        h("details", null, this.logTitle, this.log),
        this.jobsEl,
      ),
    );
    this.button.addEventListener("click", () => void this.open());
    this.closeBtn.addEventListener("click", () => this.close());
    this.startBtn.addEventListener("click", () => void this.start());
    this.cancelBtn.addEventListener("click", () => void this.cancelShown());
    this.el.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.close();
      e.stopPropagation(); // the graph's keys do not apply while the form is open
    });
    onLangChange(() => this.relabel());
    this.relabel();
    this.render();
  }

  async open() {
    this.el.hidden = false;
    this.notice.textContent = "";
    try {
      const inputs = await this.host.api.call("convertInputs", {});
      if (!inputs.allowed) {
        this.notice.textContent = ct("notAllowed", { why: inputs.notAllowedReason });
        this.canStart = false;
      } else if (!inputs.dumps.length) {
        this.notice.textContent = ct("noDumps");
        this.canStart = false;
      }
      this.form.fill(inputs);
      if (inputs.allowed && inputs.dumps.length) this.replan();
    } catch (e) {
      this.notice.textContent = (e as Error).message;
    }
    this.render();
  }

  close() {
    this.el.hidden = true;
  }

  private relabel() {
    this.button.textContent = ct("button");
    this.button.title = ct("buttonTip");
    this.titleEl.textContent = ct("title");
    this.closeBtn.textContent = "×";
    this.closeBtn.title = ct("close");
    this.startBtn.textContent = ct("start");
    this.cancelBtn.textContent = ct("cancel");
    this.logTitle.textContent = ct("log");
    this.form.relabel();
    this.render();
  }

  /** A new form: the finished job's outcome (its red error too) belongs to the old one. */
  private formChanged() {
    const job = this.shown ? this.jobs.get(this.shown) : undefined;
    if (!job || GraphApi.finished(job)) {
      this.shown = null;
      this.error.textContent = "";
      this.render();
    }
    this.replan();
  }

  /** What the form would write, asked of the server's planner (debounced). */
  private readonly replan = debounce(() => void this.askPlan(), 150);

  private async askPlan() {
    const seq = ++this.planSeq;
    this.plan.textContent = ct("planning");
    this.plan.classList.remove("bad");
    this.canStart = false;
    this.render();
    try {
      const p = await this.host.api.call("convertPlan", this.form.request(this.host.session));
      if (seq !== this.planSeq) return;
      const kind = ct(
        p.kind === "build" || (p.kind === "merge" && !this.form.bench.value) ? "kindBuild" : "kindCompare",
      );
      const what =
        p.files === 1
          ? p.kind === "merge"
            ? ct("merge1", { kind })
            : ct(p.kind === "build" ? "build1" : "compare1")
          : ct("batch", { kind, n: p.files });
      this.plan.textContent = ct("result", { what });
      this.plan.dataset.kind = p.kind;
      this.plan.dataset.files = String(p.files);
      this.plan.title = p.outputs.join("\n");
      this.argv.textContent = p.argv.join(" ");
      this.canStart = true;
    } catch (e) {
      if (seq !== this.planSeq) return;
      this.plan.textContent = (e as Error).message.replace(/^ConvertPlan: /, "");
      this.plan.classList.add("bad");
      this.argv.textContent = "";
    }
    this.render();
  }

  private async start() {
    this.error.textContent = "";
    let job: ConvertJob;
    try {
      job = await this.host.api.call("convertStart", this.form.request(this.host.session));
    } catch (e) {
      this.error.textContent = (e as Error).message.replace(/^ConvertStart: /, "");
      return;
    }
    this.jobs.set(job.id, job);
    this.shown = job.id;
    this.render();
    void this.watch(job.id);
  }

  /** Follows a job to its end; the stream is opened again when it is cut before. */
  private async watch(id: string) {
    const abort = new AbortController();
    this.watches.set(id, abort);
    let failures = 0;
    try {
      while (!GraphApi.finished(this.jobs.get(id))) {
        try {
          await this.host.api.convertProgress({ session: this.host.session, id }, (j) => this.update(j), abort.signal);
          failures = 0;
        } catch (e) {
          if (isAbort(e)) return;
          if (e instanceof ApiError && e.status === 404) throw e;
          if (++failures > 5) throw e;
          await new Promise((r) => setTimeout(r, 500 * failures));
        }
      }
    } catch (e) {
      const j = this.jobs.get(id);
      if (j) this.update({ ...j, state: ConvertState.CONVERT_FAILED, errorMessage: (e as Error).message });
      return;
    } finally {
      this.watches.delete(id);
    }
    const final = this.jobs.get(id)!;
    if (final.state === ConvertState.CONVERT_DONE && id === this.shown && final.outputs.length) {
      this.close();
      await this.host.openConverted(final.outputs[0]);
    }
  }

  private update(job: ConvertJob) {
    this.jobs.set(job.id, job);
    this.render();
  }

  private async cancelShown() {
    const id = this.shown;
    if (!id) return;
    try {
      this.update(await this.host.api.call("convertCancel", { session: this.host.session, id }));
    } catch (e) {
      this.error.textContent = (e as Error).message;
    }
  }

  private render() {
    const job = this.shown ? this.jobs.get(this.shown) : undefined;
    const active = !!job && !GraphApi.finished(job);
    this.startBtn.disabled = !this.canStart;
    this.cancelBtn.hidden = !active;
    this.bar.hidden = this.stage.hidden = !job;
    const fraction = job ? Math.max(0, Math.min(1, job.fraction)) : 0;
    const pct = Math.round(fraction * 100);
    (this.bar.firstChild as HTMLElement).style.width = `${pct}%`;
    this.bar.setAttribute("aria-valuenow", String(pct));
    this.bar.dataset.state = job?.state ?? "";
    if (job) {
      const stage =
        job.state === ConvertState.CONVERT_QUEUED
          ? ct("queued", { n: job.queuePosition })
          : job.state === ConvertState.CONVERT_DONE
            ? ct("done", { n: job.outputs.length })
            : job.stage === "starting"
              ? ct("starting")
              : [job.stage, job.file].filter(Boolean).join(" · ");
      this.stage.textContent = `${stage} · ${pct}%`;
      this.stage.title = job.stages.join(" → ");
      this.stage.dataset.stages = job.stages.join("\n");
      this.error.textContent =
        job.state === ConvertState.CONVERT_FAILED
          ? ct("failed", { message: job.errorMessage })
          : job.state === ConvertState.CONVERT_CANCELLED
            ? ct("cancelled", { message: job.errorMessage })
            : "";
      this.log.textContent = job.log.join("\n");
    }
    const others = [...this.jobs.values()].filter((j) => j.id !== this.shown && !GraphApi.finished(j));
    this.jobsEl.textContent = others.length
      ? `${ct("jobs")}: ${others.map((j) => `#${j.id} ${j.request?.npu ?? ""} (${j.stage})`).join(", ")}`
      : "";
  }
}
