// @ts-check
/* Attention Lens, the static site's page (python -m ui.export_site DIR): the sentence box, the translation and
   every map, computed in the visitor's browser from the files beside index.html; nothing is sent anywhere.
   window.attentionLens.translate(text, options) returns a Promise of the payload the viewer draws. */
// first: it sets the page's locale before the modules that write texts run
import { startLocale } from "./locale.js";
import { callApi } from "./backend.js";
import { startContent } from "./content.js";
import { startGlossary } from "./glossary.js";
import { publish } from "./door.js";
import { number, t } from "./i18n.js";
import { register, set } from "./store.js";
import { inPageTranslate, loadInPage } from "./inpage.js";
import { answerInPage } from "./inside.js";
import { Result } from "./result.js";
import { splitSentences } from "./sentences.js";
import { startSiteViews } from "./siteviews.js";
import { startEmbed } from "./embed.js";
// the two sides of the compare view laid out alike, their maps level
import "./compare.js";
// the guided walk, its stops opening the site's views
import "./tour.js";
import { drawSpine } from "./spine.js";
import { loadKernels } from "./transformer.js";

const $ = (s) => /** @type {HTMLElement} */ (document.querySelector(s));

/** Load the model (its weights, tokenizer and kernel) from `base`; resolves to the loaded lens. */
export async function startInPage(base) {
  const kernels = await fetch(base + "static/kernels.wasm")
    .then((r) => { if (!r.ok) throw new Error(String(r.status)); return r.arrayBuffer(); }).then(loadKernels)
    .catch(() => null); // no WebAssembly SIMD here: the same sums in plain JS, about 9x slower
  const lens = await loadInPage(base, kernels);
  answerInPage(lens);
  return lens;
}

async function boot() {
  const status = $("#site-status"), box = /** @type {HTMLTextAreaElement} */ ($("#site-source"));
  const greedy = /** @type {HTMLInputElement} */ ($("#site-greedy")), go = /** @type {HTMLButtonElement} */ ($("#site-translate"));
  const result = /** @type {any} */ (new Result($("#site-result")));
  register("translate", result);
  const t0 = performance.now();
  let lens;
  try {
    lens = await startInPage("./");
  } catch (err) {
    status.textContent = t("site.load_failed", { error: err.message });
    return;
  }
  const compare = /** @type {HTMLInputElement} */ ($("#site-compare"));
  let second = /** @type {any} */ (null);
  const translate = async (text, options) => {
    const payload = await inPageTranslate(lens, text, options);
    result.show(payload);
    drawSpine(result);
    set({ translated: payload });
    if (compare.checked) await compared(text, options);
    return payload;
  };
  /** The compare view: each sentence also by the model that did not translate it (its files fetched now). */
  const compared = async (text, options) => {
    second = second || new Result($("#site-second-result"));
    register("second", second);
    const payload = await inPageTranslate(lens, text, { ...options, other: true });
    second.show(payload);
    set({ compared: payload });
    return payload;
  };
  const showSecond = (on) => {
    $("#site-second").hidden = !on;
    /** @type {HTMLElement} */ (document.querySelector("#site-first .al-model-label")).hidden = !on;
    document.body.classList.toggle("site-comparing", on);
    if (!on) set({ compared: null });
  };
  compare.addEventListener("change", () => {
    showSecond(compare.checked);
    if (compare.checked) compared(box.value, { num_beams: greedy.checked ? 1 : 4 });
  });
  $("#site-compare-choice").hidden = !lens.everyday; // one model: nothing to compare with
  publish({ translate, callApi, loadedMs: Math.round(performance.now() - t0), pieces: (text) => lens.bpe.encode(text),
    sentences: (text) => splitSentences(text), domain: (text) => lens.domain && lens.domain.report(text),
    route: (text) => lens.router && lens.router.split(text).map(([written, read]) => lens.router.route(read, "auto", written)),
    compute: (text, options) => inPageTranslate(lens, text, options), // the payload, computed and not drawn (bench/site.py)
    compare: (text, options) => { compare.checked = true; showSecond(true); return compared(text, options || {}); },
    maps: () => (lens.lastMaps || []).map((m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Array.from(v)]))) });
  startSiteViews(lens);
  const linked = new URLSearchParams(location.search); // a link's sentence and model (?s=, ?model=): read as text
  if (linked.get("s")) box.value = linked.get("s").slice(0, 2000);
  const model = ["default", "everyday", "zh-en"].includes(linked.get("model") || "") ? linked.get("model") : "auto";
  const run = () => translate(box.value, { num_beams: greedy.checked ? 1 : 4, model });
  go.addEventListener("click", run);
  document.querySelectorAll(".site-example").forEach((b) => b.addEventListener("click", () => {
    box.value = b.textContent || ""; box.lang = /** @type {HTMLElement} */ (b).lang; run();
  }));
  box.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) run(); });
  go.disabled = false;
  const said = { parameters: t("site.parameters", { count: number(lens.site.parameters, { notation: "compact",
    maximumFractionDigits: 1 }) }), precision: lens.site.precision };
  status.textContent = lens.model.kernel ? t("site.ready", said) : t("site.ready_plain", said);
  // int8 weights move a probability a little (measured: docs/site.md): said once, under the numbers' source
  if (lens.site.precision === "int8") status.textContent += " " + t("site.int8_note");
  const first = await run();
  publish({ firstMs: Math.round(performance.now() - t0), ready: !!first });
}
function start() {
  startLocale();
  startContent();
  startGlossary();
  boot();
  startEmbed().catch(() => {});
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
