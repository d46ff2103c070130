import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

// The plugin serves the page under a CSP that allows only inline scripts and
// styles, so the build is one self-contained dist/index.html.
export default defineConfig({
  base: "./",
  plugins: [viteSingleFile()],
  build: {
    target: "es2022",
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 100_000_000,
    cssCodeSplit: false,
    reportCompressedSize: false,
    modulePreload: { polyfill: false },
  },
});
