// Fails when the page's modules import each other in a circle (type-only imports included: a circle of
// types still ties two parts together). Part of `npm run build` and `npm run typecheck`, so the page
// build that CI runs (scripts/build-page.sh) stops on one. Reads the imports with TypeScript's own
// preprocessor, so nothing else need be installed. Usage: node scripts/check-imports.mjs [src folder]
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? join(here, "../src"));

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

/** The module a relative specifier names (./x, ./x.ts, ./x.js written for x.ts, ./x/index.ts), or null. */
function target(from, spec) {
  const base = resolve(dirname(from), spec);
  const bare = base.replace(/\.js$/, "");
  for (const c of [base, bare + ".ts", bare + ".tsx", join(base, "index.ts")]) {
    if (existsSync(c) && c.startsWith(root) && /\.tsx?$/.test(c)) return c;
  }
  return null;
}

const files = sources(root);
const deps = new Map();
for (const f of files) {
  const found = ts.preProcessFile(readFileSync(f, "utf8"), true, true).importedFiles;
  const local = found.filter((i) => i.fileName.startsWith(".")).map((i) => target(f, i.fileName));
  deps.set(f, [...new Set(local.filter((x) => x !== null))]);
}

// Depth-first search; a module met again while still on the path closes a circle.
const state = new Map(); // absent: unseen, 1: on the path, 2: done
const path = [];
const circles = [];
function visit(f) {
  state.set(f, 1);
  path.push(f);
  for (const d of deps.get(f)) {
    if (state.get(d) === 1) circles.push([...path.slice(path.indexOf(d)), d]);
    else if (!state.has(d)) visit(d);
  }
  path.pop();
  state.set(f, 2);
}
for (const f of files.sort()) if (!state.has(f)) visit(f);

for (const c of circles) {
  console.error(`check-imports: import circle: ${c.map((f) => relative(root, f)).join(" -> ")}`);
}
if (circles.length) process.exit(1);
console.log(`check-imports: ${files.length} modules, no import circle`);
