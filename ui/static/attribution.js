// @ts-check
/* Attention Lens, attention beside attribution: one sentence's cross-attention (one layer, mean of
   its heads) and its attribution map, drawn with draw.js on the same word axes and the same cell
   size, and the agreement of the two per layer. */
import { selectMap } from "./core.js";
import { drawMatrix, el, matrixLayout } from "./draw.js";
import { answerText, list, percent, plural, t } from "./i18n.js";
import { register } from "./store.js";
import { themeOf } from "./viewer.js";

const pct = (v) => percent(v);

export class AttributionView {
  constructor(element) {
    this.root = el("div", "hl-root hl-attribution hl-empty");
    element.appendChild(this.root);
    this.message = el("div", "hl-message", t("attribution.start"));
    this.toolbar = el("div", "al-toolbar");
    this.layerBox = el("div", "al-group hl-attr-layer");
    this.toolbar.appendChild(this.layerBox);
    this.agreement = el("div", "hl-agreement");
    this.agreement.setAttribute("aria-live", "polite");
    this.pair = el("div", "hl-pair");
    this.panels = [0, 1].map(() => {
      const panel = el("figure", "hl-panel"), title = el("figcaption", "hl-panel-title"), canvas = el("canvas", "hl-canvas");
      panel.append(title, canvas);
      this.pair.appendChild(panel);
      return { title: title, canvas: canvas };
    });
    this.notes = el("div", "hl-notes");
    this.root.append(this.message, this.toolbar, this.agreement, this.pair, this.notes);
    this.layer = null;
    new ResizeObserver(() => this.data && this.draw()).observe(this.root);
  }

  show(x) {
    this.root.classList.remove("hl-busy");
    this.root.dataset.shown = x && x.id ? x.id : "";
    if (!x || x.error || !x.tokens) {
      this.root.classList.add("hl-empty");
      if (x && x.error) this.message.textContent = answerText(x);
      this.message.classList.toggle("al-error", !!(x && x.error));
      return;
    }
    this.data = x;
    this.root.classList.remove("hl-empty");
    this.message.classList.remove("al-error");
    this.message.textContent = x.left_out
      ? t("attribution.pair_left_out", { sentence: x.sentence, translation: x.translation, more: x.left_out })
      : t("attribution.pair", { sentence: x.sentence, translation: x.translation });
    this.layer = this.layer === null || this.layer >= x.layers ? x.layers - 1 : this.layer;
    this.layerBox.replaceChildren(el("span", "al-group-label", t("attribution.layer")));
    for (let l = 0; l < x.layers; l++) {
      const b = el("button", "al-choice", String(l + 1));
      b.type = "button"; b.dataset.value = String(l);
      b.addEventListener("click", () => { this.layer = l; this.draw(); });
      this.layerBox.appendChild(b);
    }
    // every cross-attention head off: the decoder reads no German, so no English word can owe anything to it
    const cut = (x.heads_off || []).filter(([kind]) => kind === "cross").length >= x.layers * x.heads;
    this.root.classList.toggle("hl-cut", cut);
    if (cut) {
      this.message.textContent = t("attribution.cut", { translation: x.translation });
      this.pair.hidden = true; this.agreement.textContent = ""; this.notes.textContent = ""; this.toolbar.hidden = true;
      return;
    }
    this.pair.hidden = false; this.toolbar.hidden = false;
    this.sentence = { tokens: x.tokens, words: x.words, maps: { cross: x.maps.cross } };
    this.attributed = { tokens: x.tokens, words: x.words, maps: { cross: x.attribution } };
    this.draw();
  }

  maps() {
    const x = this.data;
    const attention = selectMap({ heads: x.heads }, this.sentence, "cross", this.layer, null, "words");
    const attribution = selectMap({ heads: 1 }, this.attributed, "cross", 0, 0, "words");
    return [attention, attribution];
  }

  draw() {
    const x = this.data, theme = themeOf(this.root), maps = this.maps();
    /** @type {NodeListOf<HTMLElement>} */ (this.layerBox.querySelectorAll(".al-choice")).forEach((b) => b.setAttribute("aria-pressed", String(+b.dataset.value === this.layer)));
    const method = x.method === "integrated_gradients" ? t("attribution.method_ig", { steps: x.steps })
      : t("attribution.method_gradient");
    this.panels[0].title.textContent = t("attribution.attention_title", { layer: this.layer + 1, heads: x.heads });
    this.panels[1].title.textContent = t("attribution.attribution_title", { method });
    // One cell size for both, so a word sits at the same place in the two maps.
    const probe = matrixLayout(maps[0], 1), side = window.innerWidth > 900;
    const width = side ? (this.root.clientWidth - 24) / 2 : this.root.clientWidth - 4;
    this.cell = Math.max(14, Math.min(34, Math.floor((width - probe.width) / maps[0].cols)));
    maps.forEach((map, i) => drawMatrix(this.panels[i].canvas, map, { cell: this.cell, scale: "auto", theme: theme,
      focusRow: -1, hover: null }));
    const a = x.agreement;
    const layers = list(a.per_layer.map((v, l) => t("attribution.layer_agreement", { layer: l + 1, agreement: pct(v) })));
    this.agreement.innerHTML = t("attribution.agreement", { tokens: a.tokens, layers, mean: pct(a.mean), best: this.bestHead() });
    this.root.dataset.agreement = a.mean;
    const off = x.heads_off || [];
    const then = (before, after) => t("attribution.then", { before, after });
    let notes = then(off.length ? plural("attribution.heads_off", off.length) : t("attribution.heads_on"), t("attribution.reading"));
    if (x.method === "integrated_gradients") {
      notes = then(notes, t("attribution.completeness", { gap: String(x.completeness_gap), steps: x.steps }));
    }
    this.notes.innerHTML = then(notes, t("attribution.computed", { ms: x.ms }));
  }

  bestHead() {
    const per = this.data.agreement.per_head;
    let best = [0, 0];
    per.forEach((row, l) => row.forEach((v, h) => { if (v > per[best[0]][best[1]]) best = [l, h]; }));
    return t("attribution.best_head", { layer: best[0] + 1, head: best[1] + 1, agreement: pct(per[best[0]][best[1]]) });
  }
}

/** js_on_load of the head lab's attribution gr.HTML. */
export function mountAttribution(element, props, watch) {
  const view = new AttributionView(element.querySelector(".al-mount") || element);
  register("attribution", view);
  if (props.value) view.show(props.value);
  watch("value", () => view.show(props.value));
  new MutationObserver(() => view.data && view.draw()).observe(document.body, { attributes: true, attributeFilter: ["class"] });
}
