// Keyboard navigation of a pane: W/A/S/D pan smoothly while held, +/- zoom
// about the centre, F fits the graph.

const KEY_SPEED = 700; // screen px per second for W/A/S/D

/** What the keys drive on their pane. */
export interface KeyTarget {
  panBy(dx: number, dy: number): void;
  zoomAt(factor: number, sx: number, sy: number): void;
  fit(): void;
  size(): { width: number; height: number };
}

export class PaneKeys {
  private keysHeld = new Set<string>();
  private keyLoop: number | null = null;
  private lastKeyTime = 0;

  constructor(private readonly pane: KeyTarget) {}

  /** True when the key was one of the pane's. */
  keyDown(key: string): boolean {
    const k = key.toLowerCase();
    if (k === "w" || k === "a" || k === "s" || k === "d") {
      this.keysHeld.add(k);
      if (this.keyLoop === null) {
        this.lastKeyTime = performance.now();
        this.keyLoop = requestAnimationFrame(this.keyStep);
      }
      return true;
    }
    const { width, height } = this.pane.size();
    if (k === "=" || k === "+") {
      this.pane.zoomAt(1.25, width / 2, height / 2);
      return true;
    }
    if (k === "-" || k === "_") {
      this.pane.zoomAt(0.8, width / 2, height / 2);
      return true;
    }
    if (k === "f") {
      this.pane.fit();
      return true;
    }
    return false;
  }

  keyUp(key: string) {
    this.keysHeld.delete(key.toLowerCase());
  }

  releaseKeys() {
    this.keysHeld.clear();
  }

  private keyStep = (now: number) => {
    const dt = Math.min(0.05, (now - this.lastKeyTime) / 1000);
    this.lastKeyTime = now;
    let dx = 0;
    let dy = 0;
    // The keys move the view: W looks up (the graph moves down), and so on.
    if (this.keysHeld.has("w")) dy += 1;
    if (this.keysHeld.has("s")) dy -= 1;
    if (this.keysHeld.has("a")) dx += 1;
    if (this.keysHeld.has("d")) dx -= 1;
    if (dx || dy) this.pane.panBy(dx * KEY_SPEED * dt, dy * KEY_SPEED * dt);
    this.keyLoop = this.keysHeld.size ? requestAnimationFrame(this.keyStep) : null;
  };
}
