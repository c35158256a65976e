// @ts-check
/* Attention Lens, the head lab: the layer x head grids (which heads are on, coloured by what each
   is worth), the ablation result (both translations, changed words marked, and the ablated model's
   maps in the shared viewer), and attention beside attribution on the same word axes.
   Needs core.js, draw.js and viewer.js. Everything here is drawn from data the server sent once. */
import { el } from "./draw.js";
import { colour } from "./core.js";
import { answerText, fixed, list, percent, plural, t } from "./i18n.js";
import { unfamiliarNotice } from "./result.js";
import { Viewer } from "./viewer.js";
import { publish } from "./door.js";
import { register, view } from "./store.js";

const KIND_ORDER = ["encoder", "decoder", "cross"];
const KIND_NAMES = { get encoder() { return t("headlab.kind.encoder"); }, get decoder() { return t("headlab.kind.decoder"); },
  get cross() { return t("headlab.kind.cross"); } };
const SHORT_NAMES = { get encoder() { return t("headlab.short.encoder"); }, get decoder() { return t("headlab.short.decoder"); },
  get cross() { return t("headlab.short.cross"); } };
// Each colouring of the grid: [its name, what it measures, its name inside a sentence].
const METRICS = {
  get loss() { return [t("headlab.metric.loss"), t("headlab.metric.loss_about"), t("headlab.metric.loss_inline")]; },
  get bleu() { return [t("headlab.metric.bleu"), t("headlab.metric.bleu_about"), t("headlab.metric.bleu_inline")]; },
  get only() { return [t("headlab.metric.only"), t("headlab.metric.only_about"), t("headlab.metric.only_inline")]; },
  get agreement() {
    return [t("headlab.metric.agreement"), t("headlab.metric.agreement_about"), t("headlab.metric.agreement_inline")];
  },
};
const headLabel = (kind, layer, head) => t("headlab.head_label", { kind: SHORT_NAMES[kind], layer: layer + 1, head: head + 1 });

/** The grids of heads: click to switch one off or on; presets from the importance ranking. */
class HeadControls {
  /** @param {HTMLElement} element @param {ImportancePayload} data */
  constructor(element, data) {
    this.data = data;
    this.metric = "loss";
    this.off = {};
    for (const k of KIND_ORDER) this.off[k] = [...Array(data.layers[k])].map(() => Array(data.heads).fill(false));
    this.root = el("div", "hl-controls");
    element.appendChild(this.root);
    this.build();
    this.draw();
  }

  button(parent, text, title, onClick, cls) {
    const b = el("button", "al-choice " + (cls || ""), text);
    b.type = "button"; if (title) b.title = title;
    b.addEventListener("click", onClick);
    parent.appendChild(b);
    return b;
  }

  build() {
    const imp = this.data.importance, bar = el("div", "al-toolbar hl-toolbar");
    const presets = el("div", "al-group hl-presets");
    presets.appendChild(el("span", "al-group-label", t("headlab.switch_off")));
    this.button(presets, t("headlab.most"), t("headlab.most_title"), () => this.preset("most"), "hl-most");
    this.button(presets, t("headlab.least"), t("headlab.least_title"), () => this.preset("least"), "hl-least");
    this.button(presets, t("headlab.all_cross"), t("headlab.all_cross_title"), () => this.preset("cross"), "hl-all-cross");
    this.button(presets, t("headlab.none"), t("headlab.none_title"), () => this.preset("none"), "hl-none");
    bar.appendChild(presets);
    this.metricBox = el("div", "al-group hl-metric");
    this.metricBox.appendChild(el("span", "al-group-label", t("headlab.colour")));
    for (const [key, [label, title]] of Object.entries(METRICS)) {
      const b = this.button(this.metricBox, label, title, () => { this.metric = key; this.draw(); });
      b.dataset.value = key;
    }
    bar.appendChild(this.metricBox);
    this.root.appendChild(bar);
    if (!imp) {
      /** @type {NodeListOf<HTMLButtonElement>} */ (this.root.querySelectorAll(".hl-most, .hl-least, .hl-metric .al-choice")).forEach((b) => (b.disabled = true));
      this.root.appendChild(el("div", "al-notice hl-missing", t("headlab.missing")));
    }
    this.grids = el("div", "hl-grids");
    this.root.appendChild(this.grids);
    this.legend = el("div", "hl-legend");
    this.summary = el("div", "hl-summary");
    this.summary.setAttribute("aria-live", "polite");
    this.root.append(this.legend, this.summary);
  }

  preset(name) {
    for (const k of KIND_ORDER) this.off[k].forEach((row) => row.fill(name === "cross" && k === "cross"));
    const ranked = this.data.importance ? this.data.importance.ranked : [];
    const pick = name === "most" ? ranked.slice(0, 3) : name === "least" ? ranked.slice(-3) : [];
    for (const [k, l, h] of pick) this.off[k][l][h] = true;
    this.draw();
  }

  toggle(kind, layer, head) {
    this.off[kind][layer][head] = !this.off[kind][layer][head];
    this.draw();
  }

  /** The grid's values for the chosen metric, and a 0..1 shade of each (shared scale over the kinds). */
  values(kind) {
    const imp = this.data.importance;
    if (!imp || !imp.metrics[kind][this.metric]) return null;
    return imp.metrics[kind][this.metric];
  }

  scale() {
    const all = KIND_ORDER.flatMap((k) => (this.values(k) || []).flat());
    if (this.metric === "agreement") return [0, 1];
    return [Math.min(0, ...all), Math.max(1e-9, ...all)];
  }

  format(v) {
    if (this.metric === "agreement") return percent(v);
    if (this.metric === "bleu") return (v > 0 ? "\u2212" : "+") + fixed(Math.abs(v), 1);
    return (v >= 0 ? "+" : "\u2212") + fixed(Math.abs(v), this.metric === "loss" ? 3 : 2);
  }

  draw() {
    const [lo, hi] = this.scale(), H = this.data.heads;
    this.grids.replaceChildren();
    for (const kind of KIND_ORDER) {
      const box = el("div", "hl-grid"), values = this.values(kind);
      box.appendChild(el("div", "hl-grid-title", KIND_NAMES[kind]));
      const table = el("div", "hl-table");
      table.style.gridTemplateColumns = "auto repeat(" + H + ", minmax(44px, 1fr))";
      table.appendChild(el("span", "hl-corner", ""));
      for (let h = 0; h < H; h++) table.appendChild(el("span", "hl-col", t("headlab.column", { n: h + 1 })));
      this.off[kind].forEach((row, layer) => {
        table.appendChild(el("span", "hl-row", t("headlab.row", { n: layer + 1 })));
        row.forEach((isOff, head) => {
          const b = el("button", "hl-head" + (isOff ? " hl-off" : ""));
          b.type = "button";
          Object.assign(b.dataset, { kind: kind, layer: layer, head: head });
          b.setAttribute("aria-pressed", String(!isOff));
          const v = values ? values[layer][head] : null;
          if (v !== null) {
            const shade = (v - lo) / (hi - lo || 1);
            b.style.background = colour(shade);
            b.style.color = shade > 0.62 ? "#111" : "#fff";
          }
          b.textContent = isOff ? t("headlab.off") : v === null ? t("headlab.on") : this.format(v);
          const name = headLabel(kind, layer, head);
          if (v === null) b.title = isOff ? t("headlab.head_off", { head: name }) : t("headlab.head_on", { head: name });
          else {
            const shown = { head: name, metric: METRICS[this.metric][2], value: this.format(v) };
            b.title = isOff ? t("headlab.head_value_off", shown) : t("headlab.head_value_on", shown);
          }
          b.addEventListener("click", () => this.toggle(kind, layer, head));
          table.appendChild(b);
        });
      });
      box.appendChild(table);
      this.grids.appendChild(box);
    }
    /** @type {NodeListOf<HTMLElement>} */ (this.metricBox.querySelectorAll(".al-choice")).forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.value === this.metric)));
    const imp = this.data.importance;
    const [metric, about] = METRICS[this.metric];
    this.legend.innerHTML = imp ? t("headlab.legend", { metric, about, slice: imp.slice,
      loss: fixed(imp.baseline.val_loss, 3), bleu: fixed(imp.baseline.val_bleu, 1) }) : "";
    const off = this.switchedOff();
    this.summary.textContent = off.length ? plural("headlab.off_summary", off.length,
      { heads: list(off.map(([k, l, h]) => headLabel(k, l, h))) }) : t("headlab.all_on_summary");
    this.root.dataset.off = off.map(([k, l, h]) => k + ":" + (l + 1) + ":" + (h + 1)).join(" ");
  }

  switchedOff() {
    const out = [];
    for (const k of KIND_ORDER) this.off[k].forEach((row, l) => row.forEach((isOff, h) => isOff && out.push([k, l, h])));
    return out;
  }

  /** The mask as HeadMask.to_dict(): 1 keeps a head, 0 switches it off. */
  maskJSON() {
    const mask = {};
    for (const k of KIND_ORDER) mask[k] = this.off[k].map((row) => row.map((isOff) => (isOff ? 0 : 1)));
    return JSON.stringify(mask);
  }
}

export function mountHeadControls(element, props) {
  if (!props.value) return;
  register("headControls", new HeadControls(element.querySelector(".al-mount") || element, props.value));
}

/** The lab's result `id` waits for an answer (its buttons' js, ui/head_lab.py, call it through the door). */
export function labBusy(id) {
  const root = document.querySelector("#" + id + " .hl-root");
  if (root) root.classList.add("hl-busy");
}

/** The heads switched off in the grids, as the JSON the lab's endpoints take (null before the grids are built). */
function headMask() {
  const controls = view("headControls");
  return controls ? controls.maskJSON() : null;
}
publish({ labBusy, headMask });


function markedWords(words, changed, cls) {
  const p = el("p", "hl-words");
  words.forEach((w, i) => {
    p.append(i ? " " : "", changed[i] ? el("mark", cls, w) : w);
  });
  if (!words.length) p.textContent = t("headlab.nothing");
  return p;
}

/** Both translations side by side, with the changed words marked, and the ablated model's maps. */
class HeadResult {
  constructor(element) {
    this.root = el("div", "hl-root hl-result hl-empty");
    element.appendChild(this.root);
    this.message = el("div", "hl-message", t("headlab.start"));
    this.compare = el("div", "hl-compare");
    this.status = el("div", "hl-status");
    this.mapsTitle = el("div", "hl-maps-title");
    this.viewerBox = el("div", "hl-viewer");
    this.notice = el("div", "al-notice hl-notice"); // unlike the training data (result.js)
    this.notice.hidden = true;
    this.root.append(this.message, this.notice, this.compare, this.status, this.mapsTitle, this.viewerBox);
    this.viewer = null; // made with the first answer: until then the page has one viewer only
  }

  show(x) {
    this.root.classList.remove("hl-busy");
    this.root.dataset.shown = x && x.id ? x.id : "";
    if (x && x.sentence) this.sentence = x.sentence; // the sentence this view shows (walk.js)
    unfamiliarNotice(this.notice, x && !x.error ? x : null);
    if (!x || x.error || !x.explanation) {
      this.root.classList.add("hl-empty");
      this.message.textContent = x && x.error ? answerText(x) : this.message.textContent;
      this.message.classList.toggle("al-error", !!(x && x.error));
      return;
    }
    this.root.classList.remove("hl-empty");
    this.message.classList.remove("al-error");
    const n = x.switched_off.length, d = x.diff;
    this.root.dataset.changed = String(x.changed);
    this.root.dataset.off = x.switched_off.map(([k, l, h]) => k + ":" + (l + 1) + ":" + (h + 1)).join(" ");
    const count = (flags) => flags.filter(Boolean).length;
    this.message.textContent = n === 0 ? t("headlab.all_on")
      : !x.changed ? plural("headlab.no_change", n)
      : t("headlab.changed", { added: plural("headlab.new_words", count(d.ablated_changed)),
        dropped: plural("headlab.words", count(d.original_changed)) });
    const left = el("div", "hl-side hl-original"), right = el("div", "hl-side hl-ablated");
    left.append(el("div", "hl-side-title", t("headlab.all_heads_on")), markedWords(d.original_words, d.original_changed, "hl-gone"));
    right.append(el("div", "hl-side-title", plural("headlab.heads_off", n)),
      markedWords(d.ablated_words, d.ablated_changed, "hl-new"));
    this.compare.replaceChildren(left, right);
    this.status.textContent = x.left_out
      ? t("headlab.status_left_out", { more: x.left_out, original: x.ms.original, ablated: x.ms.ablated })
      : t("headlab.status", { original: x.ms.original, ablated: x.ms.ablated });
    this.mapsTitle.textContent = t("headlab.maps");
    this.viewer = this.viewer || new Viewer(this.viewerBox, { sentencePicker: false });
    this.viewer.show(x.explanation);
  }
}

export function mountHeadResult(element, props, watch) {
  const view = new HeadResult(element.querySelector(".al-mount") || element);
  register("headlab", view);
  if (props.value) view.show(props.value);
  watch("value", () => view.show(props.value));
}
