"use strict";
/* Loads page scripts (ui/static/*.js) into node the way the page does: as written, in order, sharing
   one `window`, whose AttentionLens they fill. The page globals a script reads at load time (document,
   location, history, timers) are stubs that find nothing, so a script that waits for the page waits
   for ever, harmlessly; the tests call the pure functions the scripts put on AttentionLens. */
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const STATIC = path.join(__dirname, "..", "..", "ui", "static");

function stubs(window) {
  const nothing = { querySelector: () => null, querySelectorAll: () => [], addEventListener() {} };
  return {
    window,
    document: { ...nothing, body: { ...nothing, classList: { contains: () => false } } },
    location: { hash: "", pathname: "/", search: "" },
    history: { replaceState() {} },
    setTimeout: () => 0,
    requestAnimationFrame: () => 0,
  };
}

/** Run the named scripts (e.g. "core.js", "walk.js") in order; returns the page's `window`. */
function loadWindow(...names) {
  const window = {};
  const page = stubs(window);
  for (const name of names) {
    const file = path.join(STATIC, name);
    // One line for the wrapper's head, so the file's line numbers stay its own in a stack trace.
    const code = "(function (" + Object.keys(page).join(", ") + ") {" + fs.readFileSync(file, "utf8") + "\n})";
    vm.runInThisContext(code, { filename: file })(...Object.values(page));
  }
  return window;
}

/** The AttentionLens namespace after running the named scripts. */
function load(...names) {
  return loadWindow(...names).AttentionLens;
}

/** base64 of bytes, as lens/payload.py's quantize sends a map. */
function base64(bytes) {
  return Buffer.from(Uint8Array.from(bytes)).toString("base64");
}

/** A map of `layers` x `heads` x rows x cols as base64 bytes, each byte `byte(layer, head, row, col)`. */
function mapOf(layers, heads, rows, cols, byte) {
  const out = [];
  for (let l = 0; l < layers; l++)
    for (let h = 0; h < heads; h++)
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out.push(byte(l, h, r, c));
  return base64(out);
}

module.exports = { load, loadWindow, base64, mapOf, STATIC };
