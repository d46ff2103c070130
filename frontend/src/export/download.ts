// Files the page hands to the browser's download: CSV text and images, made
// in the page (the service is not involved).

/** Saves `blob` as a file named `name` through the browser's download. */
export function download(name: string, blob: Blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.style.display = "none";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** RFC 4180 CSV: cells with a comma, quote or line break are quoted, quotes doubled; CRLF rows. */
export function csvText(rows: readonly (readonly string[])[]): string {
  const cell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  return rows.map((r) => r.map(cell).join(",")).join("\r\n") + "\r\n";
}

/** Downloads rows as UTF-8 CSV with a byte-order mark, so that spreadsheet programs read Chinese names. */
export function downloadCsv(name: string, rows: readonly (readonly string[])[]) {
  download(name, new Blob(["\uFEFF", csvText(rows)], { type: "text/csv;charset=utf-8" }));
}

/** A file-name-safe stem of a log-directory path: "run/compare_1.vis" -> "compare_1". */
export function fileStem(path: string): string {
  const base = path.split("#")[0].split("/").pop() ?? "graph";
  const graph = path.includes("#") ? `_${path.split("#")[1]}` : "";
  return (base.replace(/\.vis(\.db)?$/, "") + graph).replace(/[^\w.-]+/g, "_") || "graph";
}
