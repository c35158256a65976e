// @ts-check
/* Attention Lens, the head lab: the layer x head grids (which heads are on, coloured by what each
   is worth), the ablation result (both translations, changed words marked, and the ablated model's
   maps in the shared viewer), and attention beside attribution on the same word axes.
   Needs core.js, draw.js and viewer.js. Everything here is drawn from data the server sent once. */
import { el } from "./draw.js";
import { colour } from "./core.js";
import { unfamiliarNotice } from "./result.js";
import { Viewer } from "./viewer.js";
import { register } from "./store.js";

const KIND_ORDER = ["encoder", "decoder", "cross"];
const KIND_NAMES = { encoder: "Encoder self-attention", decoder: "Decoder self-attention", cross: "Cross-attention" };
const METRICS = {
  loss: ["Loss rise when off", "How much worse the model predicts the reference English (val loss, nats) with this head alone switched off. Brighter = more important."],
  bleu: ["BLEU drop when off", "How many BLEU points the greedy translations of the val slice lose with this head alone switched off. Brighter = more important."],
  only: ["Only this head", "Loss rise when this head is the only one left on in its layer. Darker = this head alone nearly does the whole layer's job."],
  agreement: ["Agrees with attribution", "Cross-attention only: how often this head's strongest German word is also the one attribution ranks first, over the val slice."],
};
const headLabel = (kind, layer, head) => KIND_NAMES[kind].replace(" self-attention", "").replace("-attention", "") +
  " L" + (layer + 1) + " H" + (head + 1);

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
    presets.appendChild(el("span", "al-group-label", "Switch off"));
    this.button(presets, "3 most important", "the three heads whose loss rises most when off", () => this.preset("most"), "hl-most");
    this.button(presets, "3 least important", "the three heads the model misses least", () => this.preset("least"), "hl-least");
    this.button(presets, "All cross-attention", "the decoder can no longer read the German", () => this.preset("cross"), "hl-all-cross");
    this.button(presets, "None (all on)", "every head on: the model as trained", () => this.preset("none"), "hl-none");
    bar.appendChild(presets);
    this.metricBox = el("div", "al-group hl-metric");
    this.metricBox.appendChild(el("span", "al-group-label", "Colour"));
    for (const [key, [label, title]] of Object.entries(METRICS)) {
      const b = this.button(this.metricBox, label, title, () => { this.metric = key; this.draw(); });
      b.dataset.value = key;
    }
    bar.appendChild(this.metricBox);
    this.root.appendChild(bar);
    if (!imp) {
      /** @type {NodeListOf<HTMLButtonElement>} */ (this.root.querySelectorAll(".hl-most, .hl-least, .hl-metric .al-choice")).forEach((b) => (b.disabled = true));
      this.root.appendChild(el("div", "al-notice hl-missing", "No head_importance.json beside this checkpoint, so the " +
        "heads are not coloured by importance (make one with python recipes/head_importance.py). You can still switch heads off by hand."));
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
    if (this.metric === "agreement") return Math.round(v * 100) + "%";
    if (this.metric === "bleu") return (v > 0 ? "\u2212" : "+") + Math.abs(v).toFixed(1);
    return (v >= 0 ? "+" : "\u2212") + Math.abs(v).toFixed(this.metric === "loss" ? 3 : 2);
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
      for (let h = 0; h < H; h++) table.appendChild(el("span", "hl-col", "H" + (h + 1)));
      this.off[kind].forEach((row, layer) => {
        table.appendChild(el("span", "hl-row", "L" + (layer + 1)));
        row.forEach((isOff, head) => {
          const b = el("button", "hl-head" + (isOff ? " hl-off" : ""));
          b.type = "button";
          Object.assign(b.dataset, { kind: kind, layer: layer, head: head });
          b.setAttribute("aria-pressed", String(!isOff));
          const v = values ? values[layer][head] : null;
          if (v !== null) {
            const t = (v - lo) / (hi - lo || 1);
            b.style.background = colour(t);
            b.style.color = t > 0.62 ? "#111" : "#fff";
          }
          b.textContent = isOff ? "off" : v === null ? "on" : this.format(v);
          b.title = headLabel(kind, layer, head) + (v === null ? "" : ": " + METRICS[this.metric][0].toLowerCase() + " " +
            this.format(v)) + (isOff ? ". Switched off: click to switch it on" : ". Click to switch it off");
          b.addEventListener("click", () => this.toggle(kind, layer, head));
          table.appendChild(b);
        });
      });
      box.appendChild(table);
      this.grids.appendChild(box);
    }
    /** @type {NodeListOf<HTMLElement>} */ (this.metricBox.querySelectorAll(".al-choice")).forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.value === this.metric)));
    const imp = this.data.importance;
    this.legend.innerHTML = imp ? "<b>" + METRICS[this.metric][0] + ":</b> " + METRICS[this.metric][1] +
      " Measured on " + imp.slice + " val sentences; all heads on: val loss " + imp.baseline.val_loss.toFixed(3) +
      ", BLEU " + imp.baseline.val_bleu.toFixed(1) + "." : "";
    const off = this.switchedOff();
    this.summary.textContent = off.length ? off.length + " head" + (off.length > 1 ? "s" : "") + " off: " +
      off.map(([k, l, h]) => headLabel(k, l, h)).join(", ") + ". Press \u201cTranslate with these heads\u201d."
      : "Every head is on. Click a head to switch it off.";
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
  new HeadControls(element.querySelector(".al-mount") || element, props.value);
}

export function labBusy(id) {
  const root = document.querySelector("#" + id + " .hl-root");
  if (root) root.classList.add("hl-busy");
}

const count = (flags, noun) => { const n = flags.filter(Boolean).length; return n + " " + noun + (n === 1 ? "" : "s"); };

function markedWords(words, changed, cls) {
  const p = el("p", "hl-words");
  words.forEach((w, i) => {
    p.append(i ? " " : "", changed[i] ? el("mark", cls, w) : w);
  });
  if (!words.length) p.textContent = "(nothing)";
  return p;
}

/** Both translations side by side, with the changed words marked, and the ablated model's maps. */
class HeadResult {
  constructor(element) {
    this.root = el("div", "hl-root hl-result hl-empty");
    element.appendChild(this.root);
    this.message = el("div", "hl-message", "Switch some heads off above, then press \u201cTranslate with these heads\u201d.");
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
      this.message.textContent = x && x.error ? x.error : this.message.textContent;
      this.message.classList.toggle("al-error", !!(x && x.error));
      return;
    }
    this.root.classList.remove("hl-empty");
    this.message.classList.remove("al-error");
    const n = x.switched_off.length, d = x.diff;
    this.root.dataset.changed = String(x.changed);
    this.root.dataset.off = x.switched_off.map(([k, l, h]) => k + ":" + (l + 1) + ":" + (h + 1)).join(" ");
    this.message.textContent = n === 0 ? "Every head on: both sides are the model as trained."
      : !x.changed ? "No change: with " + n + " head" + (n > 1 ? "s" : "") + " off the model writes exactly the same " +
        "English. It did not need " + (n > 1 ? "them" : "it") + " for this sentence."
      : "Changed: " + count(d.ablated_changed, "new word") + " (green), " + count(d.original_changed, "word") +
        " of the original dropped or replaced (red).";
    const left = el("div", "hl-side hl-original"), right = el("div", "hl-side hl-ablated");
    left.append(el("div", "hl-side-title", "All heads on"), markedWords(d.original_words, d.original_changed, "hl-gone"));
    right.append(el("div", "hl-side-title", n + " head" + (n === 1 ? "" : "s") + " off"),
      markedWords(d.ablated_words, d.ablated_changed, "hl-new"));
    this.compare.replaceChildren(left, right);
    this.status.textContent = (x.left_out ? "Only the first sentence is used (" + x.left_out + " more left out) \u00b7 " : "") +
      "beam search, 4 beams \u00b7 " + x.ms.original + " ms all on, " + x.ms.ablated + " ms with heads off (translation + maps)";
    this.mapsTitle.textContent = "The maps of the model with these heads off. A switched-off head still computes its " +
      "pattern (shown), but its output is dropped before the mix, so later layers never see it.";
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
