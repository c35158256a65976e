// @ts-check
// twin of: lens/time_travel.py, ui/time_travel.py (tests/test_site_views.py)
/* Attention Lens, time travel answered in the page: what ui/time_travel.py's view streams (each snapshot of the
   training run reading the visitor's sentence: its translation, its maps, how spread its cross-attention is),
   computed by the page with each snapshot's weights (int8, snapshots/ beside the page). A snapshot's weights are
   fetched the first time the slider shows it; the trained end of the run is read first, as the slider starts
   there. The snapshots run without the SIMD kernel (one kernel memory a model): a sentence takes a moment more. */
import { inPageTranslate, typedRefusal } from "./inpage.js";
import { splitSentences } from "./sentences.js";
import { Transformer, readSafetensors } from "./transformer.js";

const MAX_CHARACTERS = 300, KEPT = 3; // ui/time_travel.py's; at most KEPT snapshots' models held at once

/** (L, H, T, S) cross-attention -> (L,) mean entropy of its rows in bits (lens/time_travel.cross_sharpness). */
function sharpness(cross, L, H, T, S) {
  return [...Array(L).keys()].map((l) => {
    let total = 0;
    for (let r = 0; r < H * T; r++) {
      const row = cross.subarray((l * H * T + r) * S, (l * H * T + r + 1) * S), sum = row.reduce((a, b) => a + b, 0) || 1e-12;
      for (const w of row) if (w > 0) total -= (w / sum) * Math.log2(w / sum);
    }
    return total / (H * T);
  });
}

const round3 = (x) => Math.round(x * 1000) / 1000;

/** Time travel on the page's model `lens` (inpage.js), from the site's snapshots/index.json; a Chinese text reads the
    Chinese model's snapshots (zh-en/snapshots/, fetched when first needed). */
export function travelServer(lens) {
  let current = /** @type {any} */ (null), show = (_x) => {};
  const sources = new Map(); // snapshots folder -> {lens, base, index, models}
  const sourceOf = (of) => {
    const base = of.base + (of.site.snapshots || "snapshots/");
    if (!sources.has(base)) sources.set(base, { lens: of, base, index: null, models: new Map() });
    return sources.get(base);
  };
  let source = sourceOf(lens);
  const readFrom = new WeakMap(); // each text's reading -> the snapshots it reads
  const catalog = (from = source) => (from.index = from.index || fetch(from.base + "index.json").then((r) => {
    if (!r.ok) throw new Error(`the snapshots could not be fetched (index.json: HTTP ${r.status})`);
    return r.json();
  }));
  const snapshotLens = (entry, from = source) => {
    const { models, base } = from; // the models of the KEPT snapshots last used: path -> Promise of a lens-like object
    if (!models.has(entry.path)) {
      models.set(entry.path, Promise.all([fetch(base + entry.path + "config.json").then((r) => r.json()),
        fetch(base + entry.path + "weights.safetensors").then((r) => {
          if (!r.ok) throw new Error(`snapshot at step ${entry.step} could not be fetched (HTTP ${r.status})`);
          return r.arrayBuffer();
        })]).then(([config, bytes]) => ({ ...from.lens, config, model: new Transformer(config, readSafetensors(bytes), null),
        noRepeat: 0, router: null, everyday: null, chinese: null, domain: null })));
      while (models.size > KEPT) models.delete(models.keys().next().value);
    }
    return /** @type {Promise<any>} */ (models.get(entry.path));
  };
  const entryOf = (s) => ({ step: s.step, val_bleu: s.val_bleu, val_loss: s.val_loss, phase: s.phase });
  /** Snapshot i's reading of the text (ui/time_travel.py's drawn). */
  const read = async (x, i) => {
    const from = readFrom.get(x) || source;
    const s = (await catalog(from)).snapshots[i], by = await snapshotLens(s, from), t0 = performance.now();
    const words = x.text.split(/\s+/).filter(Boolean).length;
    const payload = await inPageTranslate(by, x.text, { num_beams: 1, max_new_tokens: Math.min(64, by.config.max_len, 8 + 3 * words) });
    if (payload.error || payload.message) throw new Error(payload.error || payload.message);
    const c = by.config, L = c.n_decoder_layers, H = c.n_heads, per = by.lastMaps.map((maps, k) => {
      const p = payload.sentences[k], S = p.tokens.src.length, T = p.tokens.tgt.length;
      return { sharp: sharpness(maps.cross, L, H, T, S), even: Math.log2(S) };
    });
    payload.status.ms = Math.round(performance.now() - t0);
    return { ...entryOf(s), explanation: payload, translation: payload.translation,
      sharpness: [...Array(L).keys()].map((l) => round3(per.reduce((a, r) => a + r.sharp[l], 0) / per.length)),
      uniform: round3(per.reduce((a, r) => a + r.even, 0) / per.length) };
  };
  /** Read snapshot i of the shown text, once; the view is drawn again with it. */
  const want = async (i) => {
    const x = current;
    if (!x || x.snapshots[i].explanation || x.snapshots[i].reading) return;
    x.snapshots[i].reading = true;
    try {
      x.snapshots[i] = await read(x, i);
      const last = x.snapshots.length - 1;
      if (i === last) Object.assign(x, { done: true, unfamiliar: x.snapshots[i].explanation.sentences[0].unfamiliar,
        reasons: x.snapshots[i].explanation.sentences[0].reasons, alarms: [] });
    } catch (err) {
      x.error = String(err.message || err).slice(0, 300);
    }
    if (x === current) show({ ...x, id: Date.now() });
  };
  /** The view's value for a text: every snapshot listed, the trained one read first. */
  const run = async (text) => {
    const sentences = typeof text === "string" ? splitSentences(text.slice(0, MAX_CHARACTERS)).slice(0, 2) : [];
    const route = sentences.length && lens.router ? lens.router.route(sentences[0]) : null; // ui/time_travel.routed_run
    const chinese = route && route.model === "zh-en" && lens.chinese;
    source = sourceOf(chinese ? await lens.chinese() : lens);
    const shown = { id: Date.now(), source: "snapshots", snapshots: (await catalog()).snapshots.map(entryOf) };
    if (typeof text !== "string" || !text.trim()) return { ...shown, message: "app.history.empty", message_key: "app.history.empty" };
    const refused = typedRefusal(text.slice(0, MAX_CHARACTERS), "text"); // ui/time_travel.py's check_typed
    if (refused) return { ...shown, error: refused };
    const read = chinese ? sentences.map((s) => lens.router.route(s).text) : sentences; // as the Chinese model reads it
    current = { ...shown, text: read.join(" "), done: false, note: "" };
    readFrom.set(current, source);
    await want(current.snapshots.length - 1);
    return current;
  };
  return { run, want, catalog, onShow: (fn) => { show = fn; } };
}
