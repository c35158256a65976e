/* Imports page modules (ui/static/*.js) into node as the page does, as ES modules. The page globals a module
   touches when it is imported (window, document, location, history) are stubs that find nothing, so a module
   that waits for the page waits harmlessly; the tests call the pure functions the modules export. */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const STATIC = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "ui", "static");

const nothing = { querySelector: () => null, querySelectorAll: () => [], addEventListener() {} };
Object.assign(globalThis, {
  window: globalThis.window || {},
  document: { ...nothing, readyState: "complete", body: { ...nothing, classList: { contains: () => false } } },
  location: { hash: "", pathname: "/", search: "" },
  history: { replaceState() {} },
});

/** The exports of the named modules (e.g. "core.js", "walk.js") as one object. */
export async function load(...names) {
  const modules = await Promise.all(names.map((name) => import(pathToFileURL(path.join(STATIC, name)).href)));
  return Object.assign({}, ...modules);
}

/** The page's `window` (where door.js puts `attentionLens`). */
export const page = globalThis.window;

/** base64 of bytes, as ui/payload.py's quantize sends a map. */
export function base64(bytes) {
  return Buffer.from(Uint8Array.from(bytes)).toString("base64");
}

/** A map of `layers` x `heads` x rows x cols as base64 bytes, each byte `byte(layer, head, row, col)`. */
export function mapOf(layers, heads, rows, cols, byte) {
  const out = [];
  for (let l = 0; l < layers; l++)
    for (let h = 0; h < heads; h++)
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out.push(byte(l, h, r, c));
  return base64(out);
}
