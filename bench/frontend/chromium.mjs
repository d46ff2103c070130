// Debian's Chromium driven by the frontend's Playwright, as the page benches
// launch it: headless, software rendering, no background traffic.
import { createRequire } from "node:module";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright");

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.GA_CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}
