// @ts-check
/* Attention Lens, the page's "compute in my browser" choice (Options): ticked, Translate runs the model in this
   page (inpage.js, from the files the app serves: ui/in_browser.py) and draws the answer into the translate
   view's result as the server's would be drawn; the server is not asked. The model loads on the first tick
   (about 15 MB, once). The other views and the inside panels that need the server still ask it. */
import { t } from "./i18n.js";
import { inPageTranslate, loadInPage } from "./inpage.js";
import { busy } from "./result.js";
import { loadKernels } from "./transformer.js";
import { set, view } from "./store.js";

const $ = (s) => /** @type {HTMLElement | null} */ (document.querySelector(s));
let loading = null; // a Promise of the loaded lens

const ticked = () => !!(/** @type {HTMLInputElement | null} */ ($("#in-browser input")) || { checked: false }).checked;
const base = () => { const h = $("#page-header"); return (h && h.dataset.inBrowser) || ""; };

/** The page's own model, loaded once (its kernel with it), without replacing the server's answers to the views. */
function lens() {
  if (!loading) {
    const root = base();
    loading = fetch(root + "kernels.wasm").then((r) => (r.ok ? r.arrayBuffer() : Promise.reject(new Error(String(r.status)))))
      .then(loadKernels).catch(() => null).then((k) => loadInPage(root, k));
    loading.catch(() => { loading = null; });
  }
  return loading;
}

/** The decoding options as the Options panel has them. */
function options() {
  const num = (sel, d) => { const i = /** @type {HTMLInputElement | null} */ ($(sel + " input[type=number]")); return i ? Number(i.value) : d; };
  const greedy = /** @type {HTMLInputElement | null} */ ($("#decoding input[value='greedy']"));
  return { num_beams: greedy && greedy.checked ? 1 : num("#beams", 4), length_penalty: num("#length-penalty", 1),
    max_new_tokens: num("#max-length", 128) };
}

/** The translate view's result (result.js), drawn with `payload` as if the server had sent it. */
function draw(payload) {
  const result = view("translate");
  if (!result) return;
  result.show(payload);
  set({ translated: payload });
}

async function translateHere() {
  const box = /** @type {HTMLTextAreaElement | null} */ ($("#source textarea"));
  busy("#result");
  try {
    const here = await lens();
    draw(await inPageTranslate(here, box ? box.value : "", options()));
  } catch (err) {
    draw({ id: Date.now(), error: t("browser.failed", { error: err.message }) });
  }
}

// Before Gradio sees the click (capture phase): ticked, the page answers and the server is not asked.
document.addEventListener("click", (e) => {
  const target = /** @type {HTMLElement} */ (e.target);
  if (!target.closest || !target.closest("#translate") || !ticked() || !base()) return;
  e.stopPropagation();
  e.preventDefault();
  translateHere();
}, true);
// The first tick starts loading the model, so that the first translation does not wait for it.
document.addEventListener("change", (e) => {
  const target = /** @type {HTMLElement} */ (e.target);
  if (target.closest && target.closest("#in-browser") && ticked() && base()) lens();
}, true);
(function hideWithoutModel(since) { // no files served: no choice
  const choice = $("#in-browser"), header = $("#page-header");
  if (choice && header) choice.hidden = !base(); else if (Date.now() - since < 60000) setTimeout(() => hideWithoutModel(since), 100);
})(Date.now());
