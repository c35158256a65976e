// @ts-check
/* Attention Lens, attention beside attribution: one sentence's cross-attention (one layer, mean of
   its heads) and its attribution map, drawn with draw.js on the same word axes and the same cell
   size, and the agreement of the two per layer. */
import { selectMap } from "./core.js";
import { drawMatrix, el, matrixLayout } from "./draw.js";
import { register } from "./store.js";
import { themeOf } from "./viewer.js";

const pct = (v) => Math.round(v * 100) + "%";

export class AttributionView {
  constructor(element) {
    this.root = el("div", "hl-root hl-attribution hl-empty");
    element.appendChild(this.root);
    this.message = el("div", "hl-message", "Press \u201cCompare attention with attribution\u201d to see both maps of the sentence above.");
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
      if (x && x.error) this.message.textContent = x.error;
      this.message.classList.toggle("al-error", !!(x && x.error));
      return;
    }
    this.data = x;
    this.root.classList.remove("hl-empty");
    this.message.classList.remove("al-error");
    this.message.textContent = "\u201c" + x.sentence + "\u201d \u2192 \u201c" + x.translation + "\u201d" +
      (x.left_out ? " (only the first sentence; " + x.left_out + " more left out)" : "");
    this.layer = this.layer === null || this.layer >= x.layers ? x.layers - 1 : this.layer;
    this.layerBox.replaceChildren(el("span", "al-group-label", "Cross-attention layer"));
    for (let l = 0; l < x.layers; l++) {
      const b = el("button", "al-choice", String(l + 1));
      b.type = "button"; b.dataset.value = String(l);
      b.addEventListener("click", () => { this.layer = l; this.draw(); });
      this.layerBox.appendChild(b);
    }
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
    const method = x.method === "integrated_gradients" ? "integrated gradients, " + x.steps + " steps" : "input \u00d7 gradient";
    this.panels[0].title.textContent = "Cross-attention, layer " + (this.layer + 1) + ", mean of " + x.heads + " heads: where it looked";
    this.panels[1].title.textContent = "Attribution (" + method + "): what each English word depended on";
    // One cell size for both, so a word sits at the same place in the two maps.
    const probe = matrixLayout(maps[0], 1), side = window.innerWidth > 900;
    const width = side ? (this.root.clientWidth - 24) / 2 : this.root.clientWidth - 4;
    this.cell = Math.max(14, Math.min(34, Math.floor((width - probe.width) / maps[0].cols)));
    maps.forEach((map, i) => drawMatrix(this.panels[i].canvas, map, { cell: this.cell, scale: "auto", theme: theme,
      focusRow: -1, hover: null }));
    const a = x.agreement, rows = a.per_layer.map((v, l) => "layer " + (l + 1) + ": <b>" + pct(v) + "</b>").join(", ");
    this.agreement.innerHTML = "<b>Agreement</b> (" + a.tokens + " English tokens): the German word a layer's heads look " +
      "at most is also the one attribution ranks first for " + rows + "; mean <b>" + pct(a.mean) + "</b>. " +
      "Best single head: " + this.bestHead() + ".";
    this.root.dataset.agreement = a.mean;
    const off = x.heads_off || [];
    this.notes.innerHTML = (off.length ? "<b>With " + off.length + " head" + (off.length > 1 ? "s" : "") +
      " switched off</b>, as in the grid above: the translation, both maps and the attribution are those of that model. "
      : "With every head on (switch heads off above, and both maps follow). ") +
      "Rows are the English words, columns the German words, in both maps; each row's cells add up to 1 " +
      "and the outlined cell is the row's strongest. The attribution map shows each row's positive attribution as shares" +
      (x.method === "integrated_gradients" ? ". <b>Completeness</b>: the attributions of an English word should add " +
        "up to how much likelier the model finds that word with the real German than with a German of zeros (the " +
        "difference of the two log-probabilities); here they do to within " + x.completeness_gap + ", the largest " +
        "miss over the words. Near 0, the shares can be trusted; a large miss means the path from zeros to the German " +
        "was too rough for " + x.steps + " steps" : "") +
      ". Computed in " + x.ms + " ms. Agreement counts pieces, leaving out &lt;s&gt; and &lt;/s&gt;.";
  }

  bestHead() {
    const per = this.data.agreement.per_head;
    let best = [0, 0];
    per.forEach((row, l) => row.forEach((v, h) => { if (v > per[best[0]][best[1]]) best = [l, h]; }));
    return "layer " + (best[0] + 1) + " head " + (best[1] + 1) + " at " + pct(per[best[0]][best[1]]);
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
