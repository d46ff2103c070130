// The text of errors shown to the user: the service names the file in its
// messages, and the page names it again in its own sentence, so the
// service's copy of the path is dropped.
import { ApiError } from "../api/client";
import { t } from "../i18n";

/** The message without a leading "<path ending in file>: " (absolute or relative). */
export function withoutPath(message: string, file: string): string {
  const base = file.split("#")[0];
  for (const name of [file, base]) {
    const at = message.indexOf(`${name}: `);
    if (at >= 0 && !/\s/.test(message.slice(0, at))) return message.slice(at + name.length + 2);
  }
  return message;
}

/** Why a file did not open; a damaged file's message says how to rebuild or convert it. */
export function openFailedText(file: string, e: unknown): string {
  const message = withoutPath((e as Error).message, file);
  const damaged = e instanceof ApiError && (e.code === "DATA_LOSS" || e.code === "INVALID_ARGUMENT");
  return t(damaged ? "loadFailedDamaged" : "loadFailed", { file, message: message.replace(/[.\s]+$/, "") });
}
