// Debian's Chromium driven by the frontend's Playwright, launched as the page
// tests launch it (frontend/chromium.mjs), headless.
import { createRequire } from "node:module";

import { chromiumLaunchOptions } from "../../frontend/chromium.mjs";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright");

export function launchChromium() {
  return chromium.launch({ ...chromiumLaunchOptions, headless: true });
}
