// @ts-check
/* Attention Lens, the page's one door: `window.attentionLens`, the only name the page puts on `window`, for tests,
   notebooks, benchmarks and the console (docs/page.md lists what it offers). Each module adds what it offers
   with `publish`; nothing else writes to `window`. */

/** @type {PublicApi} */
const api = /** @type {PublicApi} */ ({});

/** Add `offered` (names to functions or values) to the door. */
export function publish(offered) {
  Object.assign(api, offered);
  if (typeof window !== "undefined") window.attentionLens = api;
}

/** What the door offers now. */
export function offered() {
  return api;
}
