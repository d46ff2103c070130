// How the page tests (playwright.config.ts) and the page benches (bench/frontend/chromium.mjs) launch
// Debian's Chromium: software rendering, no background traffic.
export const chromiumLaunchOptions = {
  executablePath: process.env.GA_CHROMIUM ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
};
