// Dark mode: TensorBoard marks its own document with body.dark-mode. The page
// runs in a same-origin iframe, so it watches the parent's body class; when
// the parent is unreachable (opened on its own, or cross-origin) it follows
// prefers-color-scheme.
export interface Palette {
  dark: boolean;
  background: string;
  containerFill: string;
  noColourFill: string;
  text: string;
  textOnFill: string;
  stroke: string;
  benchStroke: string;
  selected: string;
  counterpart: string;
  hover: string;
  minimapBackground: string;
  minimapViewport: string;
  minimapViewportStroke: string;
}

const light: Palette = {
  dark: false,
  background: "#ffffff",
  containerFill: "rgba(0, 0, 0, 0.025)",
  noColourFill: "#ffffff",
  text: "#222222",
  textOnFill: "#222222",
  stroke: "#8a8a8a",
  benchStroke: "#a1a1a1",
  selected: "#1f3fcf",
  counterpart: "#e67e00",
  hover: "#4a6cf0",
  minimapBackground: "rgba(255, 255, 255, 0.92)",
  minimapViewport: "rgba(38, 143, 50, 0.18)",
  minimapViewportStroke: "rgba(38, 143, 50, 0.9)",
};

const dark: Palette = {
  dark: true,
  background: "#202124",
  containerFill: "rgba(255, 255, 255, 0.035)",
  noColourFill: "#3c4043",
  text: "#e8eaed",
  textOnFill: "#1b1b1b",
  stroke: "#9aa0a6",
  benchStroke: "#80868b",
  selected: "#8ab4f8",
  counterpart: "#fbbc04",
  hover: "#aecbfa",
  minimapBackground: "rgba(32, 33, 36, 0.92)",
  minimapViewport: "rgba(129, 201, 149, 0.2)",
  minimapViewportStroke: "rgba(129, 201, 149, 0.9)",
};

let current: Palette = light;
const listeners = new Set<() => void>();

export function palette(): Palette {
  return current;
}

export function onThemeChange(fn: () => void) {
  listeners.add(fn);
}

function apply(isDark: boolean) {
  const next = isDark ? dark : light;
  if (next === current && document.documentElement.classList.contains("dark") === isDark) return;
  current = next;
  document.documentElement.classList.toggle("dark", isDark);
  for (const l of listeners) l();
}

function parentBody(): HTMLElement | null {
  try {
    if (window.parent === window) return null;
    return window.parent.document.body;
  } catch {
    return null;
  }
}

export function startThemeTracking() {
  const body = parentBody();
  if (body) {
    const read = () => apply(body.classList.contains("dark-mode"));
    read();
    new MutationObserver(read).observe(body, { attributes: true, attributeFilter: ["class"] });
    return;
  }
  const media = window.matchMedia("(prefers-color-scheme: dark)");
  apply(media.matches);
  media.addEventListener("change", () => apply(media.matches));
}
