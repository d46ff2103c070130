import { defineConfig } from "@playwright/test";

import { chromiumLaunchOptions } from "./chromium.mjs";

// The tests drive Debian's Chromium against a real tensorboard with the
// plugin installed; scripts/test-browser.sh starts it and sets GA_TB_URL.
const baseURL = process.env.GA_TB_URL ?? "http://127.0.0.1:6006";

export default defineConfig({
  testDir: "tests",
  outputDir: "test-results/artifacts",
  timeout: 90_000,
  expect: { timeout: 15_000 },
  workers: 1,
  fullyParallel: false,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "test-results/results.json" }]],
  use: {
    baseURL,
    viewport: { width: 1600, height: 1000 },
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: chromiumLaunchOptions,
  },
  projects: [{ name: "chromium", use: { browserName: "chromium", headless: true } }],
});
