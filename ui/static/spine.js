// @ts-check
/* Attention Lens, the picture of the model: the page's sentence flowing through the encoder and the decoder,
   drawn from the explanation's own sizes (a 3+3 checkpoint shows 3+3 layers, a 6+6 one 6+6). Every block is a
   button that opens the view belonging to it, for the page's sentence; live figures of that sentence (the word
   chosen at the output and its probability, the German word each cross-attention layer looks at most) sit on
   the blocks. Drawn into the translate view's result, between the English and the map. */
import { el } from "./draw.js";
import { SPECIAL, selectMap } from "./core.js";
import { wholePercent } from "./qkv.js";
import { act, can, get } from "./store.js";

/** A block of the picture: a named button that runs `open`. */
function block(cls, title, detail, name, open) {
  const b = el("button", "al-block " + cls);
  b.title = name;
  b.type = "button";
  b.setAttribute("aria-label", name);
  b.append(el("span", "al-block-title", title));
  if (detail) b.append(el("span", "al-block-detail", detail));
  b.addEventListener("click", () => open(b));
  return b;
}

const arrow = () => el("span", "al-flow", "\u2192");

/** The English word the figures speak of: the one focused in the map, else the first written. */
function focusWord(viewer, sentence) {
  const words = sentence.words.tgt.filter(([w]) => !SPECIAL[w]);
  if (!words.length) return null;
  const s = viewer.state, row = s.kind !== "encoder" && s.level === "words" && s.focusRow >= 0 ? s.focusRow : -1;
  const content = words.find(([w]) => /\p{L}{3,}/u.test(w) && !/^(the|and|with|are|for|from|his|her|its)$/i.test(w));
  const all = sentence.words.tgt, picked = row >= 0 && all[row] && !SPECIAL[all[row][0]] ? all[row] : content || words[0];
  return { word: picked[0], row: all.indexOf(picked), pieces: picked[1] };
}

/** The German word cross-attention layer `layer` (mean of its heads) looks at most from English word `row`. */
function strongestLink(x, sentence, layer, row) {
  const map = selectMap(x, sentence, "cross", layer, null, "words");
  let best = -1, weight = -1;
  for (let c = 0; c < map.cols; c++) {
    const label = map.colLabels[c], v = map.values[row * map.cols + c];
    if (!SPECIAL[label] && v > weight) { best = c; weight = v; }
  }
  return best < 0 ? null : { word: map.colLabels[best], weight: weight };
}

/** Show the map of (kind, layer) in the viewer and bring it into sight. */
function showMap(result, kind, layer, level) {
  const v = result.viewer;
  v.choose("kind", kind);
  if (layer != null) v.choose("layer", layer);
  v.choose("level", level || "words");
  v.root.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

/** A block that opens one of the result's inside panels, marked with the panel's opener (tests find it by it).
    Drawn with no server to ask (a notebook's saved file: lens/standalone.py) it says so instead. */
function opens(b, opener) {
  b.dataset.opens = opener;
  if (b.closest(".al-standalone") || standalone) {
    b.disabled = true;
    b.title = "This view asks the model: open it in the app, or pass server= to lens.show";
  }
  return b;
}
let standalone = false;

/** Open one of the inside panels of the result (who wrote, the ladder, patching). */
function openPanel(result, opener) {
  const button = result.inside.querySelector(`[data-view="${opener}"]`);
  if (button) /** @type {HTMLElement} */ (button).click();
  result.ladder.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

const open = (name) => () => act("open", name); // walk.js opens the page's views

/** The sublayers of one layer, as buttons: what a layer block expands into, under the picture. */
function sublayers(result, x, sentence, which, i, focus) {
  const out = [];
  if (which === "encoder") {
    out.push(block("al-b-attn", "Self-attention", "German \u2194 German: the map, Q/K/V from a row",
      `Encoder layer ${i + 1} self-attention`, () => showMap(result, "encoder", i)));
    out.push(opens(block("al-b-ff", "Feed-forward", "each piece alone; patching its output",
      `Encoder layer ${i + 1} feed-forward`, () => openPanel(result, "openPatch")), "openPatch"));
    return out;
  }
  const link = focus ? strongestLink(x, sentence, i, focus.row) : null;
  out.push(block("al-b-attn", "Masked self-attention", "only the English before", `Decoder layer ${i + 1} masked self-attention`,
    () => showMap(result, "decoder", i)));
  out.push(opens(block("al-b-cross", "Cross-attention", link ? `\u2018${focus.word}\u2019 looks at \u2018${link.word}\u2019 ` +
    wholePercent(link.weight) + "; who wrote each word" : "looks at the German",
    `Decoder layer ${i + 1} cross-attention to the German`, () => { showMap(result, "cross", i); openPanel(result, "openContributions"); }),
    "openContributions"));
  out.push(opens(block("al-b-ff", "Feed-forward", "the word read out after each stage", `Decoder layer ${i + 1} feed-forward: ` +
    "the word read out after each stage", () => openPanel(result, "openLadder")), "openLadder"));
  return out;
}

/** One stack of the picture: its input, embedding, layers and output, in the order the stream flows. A layer is
    one block; opening it shows its map and expands it into its sublayers under the picture. */
function stack(result, x, sentence, which, detail) {
  const L = x.layers[which === "encoder" ? "encoder" : "decoder"], row = el("div", "al-spine-row al-spine-" + which);
  const focus = which === "decoder" ? focusWord(result.viewer, sentence) : null;
  const kind = which === "encoder" ? "encoder" : "decoder";
  row.append(el("div", "al-spine-label", which === "encoder" ? "Encoder \u00b7 reads the German" :
    "Decoder \u00b7 writes the English"));
  const flow = el("div", "al-spine-flow");
  const pieces = sentence.tokens[which === "encoder" ? "src" : "in"].length;
  flow.append(block("al-b-input", which === "encoder" ? "German" : "English so far", pieces + " pieces",
    which === "encoder" ? "German pieces: how the sentence is cut" : "English so far: what the decoder reads",
    () => showMap(result, kind, 0, "pieces")), arrow());
  flow.append(block("al-b-embed", "Embedding", "+ position", (which === "encoder" ? "Encoder" : "Decoder") +
    " embedding and positional encoding: pieces and positions", () => showMap(result, kind, 0, "pieces")), arrow());
  for (let i = 0; i < L; i++) {
    const link = focus ? strongestLink(x, sentence, i, focus.row) : null;
    const parts = which === "encoder" ? "attention \u00b7 FFN" : link ? `\u2192 \u2018${link.word}\u2019 ` +
      wholePercent(link.weight) : "self \u00b7 cross \u00b7 FFN";
    const layer = block("al-b-layer", "Layer " + (i + 1), parts, `${which === "encoder" ? "Encoder" : "Decoder"} layer ${i + 1}`,
      (b) => {
        showMap(result, which === "encoder" ? "encoder" : "cross", i);
        result.root.querySelectorAll(".al-b-layer").forEach((n) => n.setAttribute("aria-expanded", String(n === b)));
        detail.replaceChildren(el("span", "al-spine-label", b.getAttribute("aria-label") + ":"),
          ...sublayers(result, x, sentence, which, i, focus));
        detail.hidden = false;
      });
    layer.setAttribute("aria-expanded", "false");
    flow.append(layer, arrow());
  }
  if (which === "encoder") {
    flow.append(block("al-b-memory", "Memory", "to every cross-attention", "Encoder output, the memory",
      () => showMap(result, "cross", null)));
  } else {
    const p = focus ? focus.pieces.reduce((acc, k) => acc * (sentence.probs[k] ?? 1), 1) : null;
    flow.append(block("al-b-out", "Softmax", focus ? `\u2018${focus.word}\u2019 ${wholePercent(p)}` : "the next word",
      "Output layer and softmax: the next word, step by step", open("step")));
  }
  row.append(flow);
  return row;
}

/** The whole-model views hanging from the picture, behind one button (its state kept on the picture, `box`,
    across answers). */
function whole(result, box) {
  const row = el("div", "al-spine-row al-spine-whole");
  const toggle = el("button", "al-spine-toggle", "The whole model: 7 views \u25b8");
  toggle.type = "button";
  toggle.setAttribute("aria-label", "The whole model: step through, head lab, patching, training data, time travel, " +
    "copy lab, compare");
  const flow = el("div", "al-spine-flow");
  const show = (on) => {
    flow.hidden = !on;
    toggle.setAttribute("aria-expanded", String(on));
    toggle.textContent = "The whole model: 7 views " + (on ? "\u25be" : "\u25b8");
    box.dataset.whole = on ? "1" : "";
  };
  toggle.addEventListener("click", () => show(flow.hidden));
  row.append(toggle);
  flow.append(
    block("al-b-view", "Step through", null, "Step through the decoding", open("step")),
    block("al-b-view", "Head lab", null, "Head lab: switch heads off", open("headlab")),
    opens(block("al-b-view", "Patching", null, "Patching: which heads carry a word", () => openPanel(result, "openPatch")),
      "openPatch"),
    block("al-b-view", "Training data", null, "What the training data says of each word",
      () => { const e = result.root.querySelector(".al-evidence"); if (e) e.scrollIntoView({ block: "nearest" }); }),
    block("al-b-view", "Time travel", null, "Time travel through training", open("history")),
    block("al-b-view", "Copy lab", null, "Copy lab: train a tiny Transformer", open("copylab")),
    block("al-b-view", "Compare", null, "Compare with a second model", open("compare")));
  row.append(flow);
  show(!!box.dataset.whole || get().allOpen);
  return row;
}

/** Draw the picture for the explanation the result shows (the sentence the viewer has picked). */
export function drawSpine(result) {
  let box = /** @type {HTMLElement | null} */ (result.root.querySelector(".al-spine"));
  const x = result.viewer.explanation;
  if (!x || !x.sentences || !x.sentences.length) {
    if (box) { box.hidden = true; box.dataset.shown = ""; }
    result.root.querySelectorAll(":scope > .al-evidence").forEach((n) => n.remove());
    return;
  }
  if (!box) {
    box = el("figure", "al-spine");
    // on a phone the map comes first and the picture under it, drawn vertically
    // (on a wider screen above the panels its blocks open, so that opening one never moves the picture)
    if (matchMedia("(max-width: 700px)").matches) result.root.append(box);
    else result.ladder.before(box);
  }
  const sentence = x.sentences[result.viewer.state.sentence] || x.sentences[0];
  standalone = result.root.classList.contains("al-standalone") || !!result.root.closest(".al-standalone");
  box.hidden = false;
  box.setAttribute("aria-label", `Architecture of the model: ${x.layers.encoder} encoder and ${x.layers.decoder} ` +
    "decoder layers; each block opens its view");
  // the German in training: under the map on the page, where it does not push the map down
  if (box.dataset.shown !== String(x.id)) {  // a new answer: its evidence line (if any) replaces the last one
    result.root.querySelectorAll(":scope > .al-evidence").forEach((n) => n.remove());
    const evidence = result.notes && result.notes.querySelector(".al-evidence");
    if (evidence) result.root.append(evidence);
    box.dataset.shown = String(x.id);
  }
  const detail = el("div", "al-spine-detail");
  detail.hidden = true;
  box.replaceChildren(stack(result, x, sentence, "encoder", detail), stack(result, x, sentence, "decoder", detail), detail);
  if (can("open")) box.append(whole(result, box)); // the whole-model views live on the page only
}
