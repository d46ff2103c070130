// Keyboard navigation of a pane, as msprobe documents it: W/S zoom in and
// out about the centre, A/D pan left and right, the arrow keys (or Shift
// with W/S) pan up and down: a press moves one step, a key held past
// HOLD_MS keeps moving; +/- zoom a step, F fits the graph.

const PAN_SPEED = 700; // screen px per second
const ZOOM_SPEED = 2.5; // scale factor per second
export const PAN_STEP = 80; // screen px a press pans
export const ZOOM_STEP = 1.25; // the factor a press zooms
const HOLD_MS = 250; // a key held this long moves on continuously

/** What the keys drive on their pane. */
export interface KeyTarget {
  panBy(dx: number, dy: number): void;
  zoomAt(factor: number, sx: number, sy: number): void;
  fit(): void;
  size(): { width: number; height: number };
}

/** The held motion a key starts, or null. */
function motion(key: string, shift: boolean): string | null {
  const k = key.toLowerCase();
  if (k === "w") return shift ? "up" : "in";
  if (k === "s") return shift ? "down" : "out";
  if (k === "a" || key === "ArrowLeft") return "left";
  if (k === "d" || key === "ArrowRight") return "right";
  if (key === "ArrowUp") return "up";
  if (key === "ArrowDown") return "down";
  return null;
}

export class PaneKeys {
  private held = new Map<string, number>(); // motion -> when its key went down
  private keyLoop: number | null = null;
  private lastKeyTime = 0;

  constructor(private readonly pane: KeyTarget) {}

  /** True when the key was one of the pane's. */
  keyDown(key: string, shift = false): boolean {
    const m = motion(key, shift);
    const { width, height } = this.pane.size();
    if (m) {
      if (this.held.has(m)) return true; // the key's auto-repeat: the hold is under way
      this.held.set(m, performance.now());
      // One step for the press itself.
      if (m === "in" || m === "out") this.pane.zoomAt(m === "in" ? ZOOM_STEP : 1 / ZOOM_STEP, width / 2, height / 2);
      else
        this.pane.panBy(
          m === "left" ? PAN_STEP : m === "right" ? -PAN_STEP : 0,
          m === "up" ? PAN_STEP : m === "down" ? -PAN_STEP : 0,
        );
      if (this.keyLoop === null) {
        this.lastKeyTime = performance.now();
        this.keyLoop = requestAnimationFrame(this.keyStep);
      }
      return true;
    }
    if (key === "=" || key === "+") {
      this.pane.zoomAt(1.25, width / 2, height / 2);
      return true;
    }
    if (key === "-" || key === "_") {
      this.pane.zoomAt(0.8, width / 2, height / 2);
      return true;
    }
    if (key === "f" || key === "F") {
      this.pane.fit();
      return true;
    }
    return false;
  }

  keyUp(key: string) {
    // Shift may be pressed or let go while W/S is held: stop both motions of the key.
    for (const shift of [false, true]) {
      const m = motion(key, shift);
      if (m) this.held.delete(m);
    }
  }

  releaseKeys() {
    this.held.clear();
  }

  private keyStep = (now: number) => {
    const dt = Math.min(0.05, (now - this.lastKeyTime) / 1000);
    this.lastKeyTime = now;
    // Only the keys held past HOLD_MS move on; a tap had its step on the press.
    const on = (m: string) => {
      const since = this.held.get(m);
      return since !== undefined && now - since >= HOLD_MS;
    };
    let dx = 0;
    let dy = 0;
    // The keys move the view: "up" looks up (the graph moves down), and so on.
    if (on("up")) dy += 1;
    if (on("down")) dy -= 1;
    if (on("left")) dx += 1;
    if (on("right")) dx -= 1;
    if (dx || dy) this.pane.panBy(dx * PAN_SPEED * dt, dy * PAN_SPEED * dt);
    const zoom = (on("in") ? 1 : 0) - (on("out") ? 1 : 0);
    if (zoom) {
      const { width, height } = this.pane.size();
      this.pane.zoomAt(Math.pow(ZOOM_SPEED, zoom * dt), width / 2, height / 2);
    }
    this.keyLoop = this.held.size ? requestAnimationFrame(this.keyStep) : null;
  };
}
