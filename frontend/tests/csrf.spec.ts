// Cross-site request forgery (issue 17, 6a): a hostile page served from
// another local origin (another port of 127.0.0.1, so the same site but not
// the same origin) tries every way a page can send a POST to the plugin's
// API without CORS — text/plain fetch, form-encoded and multipart forms, and
// a JSON fetch (which needs a preflight) — to SetLegend, Unmatch and
// SaveMatches. Chromium sends them; the plugin must refuse each one, and
// nothing may change: legend, matches, the config file on disk.
import { expect, test, type APIRequestContext } from "@playwright/test";
import { existsSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

const API = "/data/plugin/graph_ascend/api/";

async function call(request: APIRequestContext, rpc: string, body: object): Promise<any> {
  const res = await request.post(API + rpc, { data: body, headers: { "Content-Type": "application/json" } });
  expect(res.status(), `${rpc} from the test itself`).toBe(200);
  return res.json();
}

/** The page an attacker would host: every forgery it can make, then document.title = "done". */
function hostilePage(target: string, file: string, npu: number, bench: number): string {
  const legend = JSON.stringify({ file, legend: [{ color: "#000000", lo: 0, hi: 1, name: "owned" }] });
  const unmatch = JSON.stringify({ file, npuNode: npu, benchNode: bench, withChildren: true });
  const save = JSON.stringify({ file });
  const form = (rpc: string, enctype: string, body: string, n: number) => `
    <iframe name="sink${n}"></iframe>
    <form id="f${n}" method="POST" action="${target}${API}${rpc}" enctype="${enctype}" target="sink${n}">
      <input type="hidden" name='${body.slice(0, -1)}, "pad": "' value='"}'>
    </form>`;
  return `<!doctype html><html><body>
    ${form("SetLegend", "text/plain", legend, 1)}
    ${form("Unmatch", "application/x-www-form-urlencoded", unmatch, 2)}
    ${form("SaveMatches", "multipart/form-data", save, 3)}
    <script>
      const api = ${JSON.stringify(target + API)};
      const loaded = [1, 2, 3].map((n) => new Promise((r) => (document.querySelector("iframe[name=sink" + n + "]").onload = r)));
      async function attack() {
        const tries = [
          fetch(api + "SetLegend", { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: ${JSON.stringify(legend)} }),
          fetch(api + "Unmatch", { method: "POST", mode: "no-cors", body: ${JSON.stringify(unmatch)} }),
          fetch(api + "SaveMatches", { method: "POST", mode: "no-cors", body: ${JSON.stringify(save)} }),
          fetch(api + "SetLegend", { method: "POST", headers: { "Content-Type": "application/json" }, body: ${JSON.stringify(legend)} }),
        ];
        for (const n of [1, 2, 3]) document.getElementById("f" + n).submit();
        await Promise.allSettled(tries);
        await Promise.race([Promise.all(loaded), new Promise((r) => setTimeout(r, 10000))]);
        document.title = "done";
      }
      attack();
    </script></body></html>`;
}

test("a page from another origin can change nothing through the API", async ({ page, request, baseURL }) => {
  const runs = await call(request, "ListRuns", {});
  const file: string = runs.files.find((f: any) => f.path.startsWith("statistics/")).path;
  const view = { session: "csrf", file, side: "SIDE_NPU", microStep: -1 };
  // A matched pair to try to unmatch: the first matched node below the root.
  const hits = await call(request, "Search", { view, query: "^", regex: true, limit: 200 });
  let npu = -1,
    bench = -1;
  for (const h of hits.hits) {
    if (h.index === 0) continue;
    const d = await call(request, "GetNodeDetail", { view, node: h.index });
    if (d.node.matched >= 0) {
      npu = h.index;
      bench = d.node.matched;
      break;
    }
  }
  expect(npu, "a matched node in the statistics compare").toBeGreaterThan(0);
  const before = await call(request, "GetFileInfo", { file });
  const logdir = process.env.GA_LOGDIR!;
  const configs = () => readdirSync(join(logdir, "statistics")).filter((n) => n.endsWith(".config"));
  const configsBefore = configs();

  // The hostile page, on another port.
  const target = new URL(baseURL!).origin;
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end(hostilePage(target, file, npu, bench));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const statuses: number[] = [];
  page.on("response", (res) => {
    if (res.url().includes(API) && res.request().method() === "POST") statuses.push(res.status());
  });
  try {
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await expect(page).toHaveTitle("done", { timeout: 30_000 });
  } finally {
    server.close();
  }

  // Chromium did send the simple requests (6 of them; the JSON one stops at its preflight), and each was refused.
  expect(statuses.length).toBeGreaterThanOrEqual(6);
  for (const s of statuses) expect([403, 415]).toContain(s);
  const after = await call(request, "GetFileInfo", { file });
  expect(after.meta.legend).toEqual(before.meta.legend);
  expect(after.manualMatches).toBe(before.manualMatches);
  expect(after.matchesSaved).toBe(before.matchesSaved);
  expect((await call(request, "GetNodeDetail", { view, node: npu })).node.matched).toBe(bench);
  expect(configs()).toEqual(configsBefore);
  expect(existsSync(join(logdir, file + ".config"))).toBe(before.matchesSaved);
});
