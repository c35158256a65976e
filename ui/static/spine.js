// @ts-check
/* Attention Lens, the picture of the model: the page's sentence flowing through the encoder and the decoder,
   drawn from the explanation's own sizes (a 3+3 checkpoint shows 3+3 layers, a 6+6 one 6+6). Every block is a
   button that opens the view belonging to it, for the page's sentence; live figures of that sentence (the word
   chosen at the output and its probability, the German word each cross-attention layer looks at most) sit on
   the blocks. Drawn into the translate view's result, between the English and the map. The computation inside
   the blocks (the twelve steps of concepts.js) opens under the picture: the input opens its pieces, the
   embedding its vectors, a layer lists the steps inside it, the output its softmax. */
import { keepStep, openStep } from "./concepts.js";
import { el } from "./draw.js";
import { stepTitle } from "./steps.js";
import { SPECIAL, selectMap } from "./core.js";
import { percent, t } from "./i18n.js";
import { openGlossary } from "./glossary.js";
import { act, can, get } from "./store.js";

/** A block of the picture: a named button that runs `open`; `where` ({stack, part, layer}) says which part of the
    model it is, for a step to light it. */
function block(cls, title, detail, name, open, where) {
  const b = el("button", "al-block " + cls);
  if (where) Object.entries(where).forEach(([k, v]) => { b.dataset[k] = String(v); });
  b.title = name;
  b.type = "button";
  b.dataset.name = name; // its name for screen readers is its full name, then what it shows (WCAG 2.5.3)
  b.append(el("span", "al-sr", name + ": "), el("span", "al-block-title", title));
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
    Drawn with no server to ask (a notebook's saved file: ui/standalone.py) it says so instead. */
function opens(b, opener) {
  b.dataset.opens = opener;
  if (b.closest(".al-standalone") || standalone) {
    b.disabled = true;
    b.title = t("spine.needs_server");
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

/** Open a step of the computation (concepts.js) at a place of the picture. */
const step = (id, kind, layer) => () => { openStep(id, { kind, layer, head: 0, row: 0 }).catch(() => {}); };

/** The steps inside one layer, as small buttons under its sublayers. */
function insideLayer(which, i) {
  const ids = ["qkv-projection", "scores", "mask", "softmax", "heads-concat", "residual-layernorm",
    ...(which === "encoder" ? [] : ["cross-attention"]), "feed-forward"];
  const row = el("div", "al-spine-steps");
  row.append(el("span", "al-spine-label", t("spine.inside")));
  for (const id of ids) {
    const kind = which === "encoder" ? "encoder" : id === "cross-attention" ? "cross" : "decoder";
    const b = el("button", "al-step-link", stepTitle(id));
    b.type = "button";
    b.dataset.step = id;
    b.addEventListener("click", step(id, kind, i));
    row.append(b);
  }
  return row;
}

/** The sublayers of one layer, as buttons: what a layer block expands into, under the picture. */
function sublayers(result, x, sentence, which, i, focus) {
  const out = [];
  const layer = i + 1;
  if (which === "encoder") {
    out.push(block("al-b-attn", t("spine.encoder_self"), t("spine.encoder_self_detail"),
      t("spine.encoder_self_name", { layer }), () => showMap(result, "encoder", i)));
    out.push(block("al-b-ff", t("spine.feed_forward"), t("spine.encoder_ff_detail"),
      t("spine.encoder_ff_name", { layer }), step("feed-forward", "encoder", i)));
    return out;
  }
  const link = focus ? strongestLink(x, sentence, i, focus.row) : null;
  out.push(block("al-b-attn", t("spine.decoder_self"), t("spine.decoder_self_detail"), t("spine.decoder_self_name", { layer }),
    () => showMap(result, "decoder", i)));
  out.push(opens(block("al-b-cross", t("spine.cross"), link ? t("spine.cross_link", { word: focus.word, german: link.word,
    percent: percent(link.weight) }) : t("spine.cross_detail"),
    t("spine.cross_name", { layer }), () => { showMap(result, "cross", i); openPanel(result, "openContributions"); }),
    "openContributions"));
  out.push(block("al-b-ff", t("spine.feed_forward"), t("spine.decoder_ff_detail"), t("spine.decoder_ff_name", { layer }),
    step("feed-forward", "decoder", i)));
  out.push(opens(block("al-b-view", t("spine.ladder"), null, t("spine.ladder_name"), () => openPanel(result, "openLadder")),
    "openLadder"));
  return out;
}

/** One stack of the picture: its input, embedding, layers and output, in the order the stream flows. A layer is
    one block; opening it shows its map and expands it into its sublayers under the picture. */
function stack(result, x, sentence, which, detail) {
  const L = x.layers[which === "encoder" ? "encoder" : "decoder"], row = el("div", "al-spine-row al-spine-" + which);
  const focus = which === "decoder" ? focusWord(result.viewer, sentence) : null;
  const kind = which === "encoder" ? "encoder" : "decoder";
  const encoder = which === "encoder";
  row.append(el("div", "al-spine-label", encoder ? t("spine.encoder_label") : t("spine.decoder_label")));
  const flow = el("div", "al-spine-flow");
  const pieces = sentence.tokens[encoder ? "src" : "in"].length;
  const stackName = encoder ? "encoder" : "decoder";
  flow.append(block("al-b-input", encoder ? t("spine.german") : t("spine.english_so_far"), t("spine.pieces", { n: pieces }),
    encoder ? t("spine.german_name") : t("spine.english_name"),
    step("tokens", stackName, 0), { stack: stackName, part: "input" }), arrow());
  flow.append(block("al-b-embed", t("spine.embedding"), t("spine.embedding_detail"),
    encoder ? t("spine.encoder_embedding_name") : t("spine.decoder_embedding_name"),
    step("embedding", stackName, 0), { stack: stackName, part: "embed" }), arrow());
  for (let i = 0; i < L; i++) {
    const link = focus ? strongestLink(x, sentence, i, focus.row) : null;
    const parts = encoder ? t("spine.encoder_layer_detail") : link ? t("spine.decoder_layer_link", { german: link.word,
      percent: percent(link.weight) }) : t("spine.decoder_layer_detail");
    const name = encoder ? t("spine.encoder_layer_name", { layer: i + 1 }) : t("spine.decoder_layer_name", { layer: i + 1 });
    const layer = block("al-b-layer", t("spine.layer", { layer: i + 1 }), parts, name,
      (b) => {
        showMap(result, encoder ? "encoder" : "cross", i);
        result.root.querySelectorAll(".al-b-layer").forEach((n) => n.setAttribute("aria-expanded", String(n === b)));
        detail.replaceChildren(el("span", "al-spine-label", t("spine.sublayers_of", { layer: b.dataset.name })),
          ...sublayers(result, x, sentence, which, i, focus), insideLayer(which, i));
        detail.hidden = false;
      }, { stack: stackName, part: "layer", layer: i });
    layer.setAttribute("aria-expanded", "false");
    flow.append(layer, arrow());
  }
  if (encoder) {
    flow.append(block("al-b-memory", t("spine.memory"), t("spine.memory_detail"), t("spine.memory_name"),
      () => showMap(result, "cross", null)));
  } else {
    const p = focus ? focus.pieces.reduce((acc, k) => acc * (sentence.probs[k] ?? 1), 1) : null;
    flow.append(block("al-b-out", t("spine.softmax"), focus ? t("spine.softmax_word", { word: focus.word, percent: percent(p) })
      : t("spine.softmax_detail"), t("spine.softmax_name"),
      () => { openStep("logits-softmax", { kind: "decoder", layer: 0, head: 0, row: Math.max(0, focus ? focus.pieces[0] : 0) })
        .catch(() => {}); }, { stack: "decoder", part: "out" }));
  }
  row.append(flow);
  return row;
}

/** Whether this page has a second model to compare with: the app's tick, or the site's where it is not hidden. */
const canCompare = () => { const c = document.querySelector("#compare input, #site-compare"); return !!c && !c.closest("[hidden]"); };

/** Whether every sentence shown is the Chinese model's: no other model of its direction to compare with. */
const chineseOnly = (result) => { const x = result.viewer.explanation;
  return !!x && x.sentences.every((s) => s.route && s.route.model === "zh-en"); };

/** The whole-model views hanging from the picture, behind one button (its state kept on the picture, `box`,
    across answers). */
function whole(result, box) {
  const row = el("div", "al-spine-row al-spine-whole");
  const toggle = el("button", "al-spine-toggle");
  toggle.type = "button";
  toggle.title = t("spine.whole_label");
  const flow = el("div", "al-spine-flow");
  const show = (on) => {
    flow.hidden = !on;
    toggle.setAttribute("aria-expanded", String(on));
    const n = flow.childElementCount; // the views this page offers: the count is the buttons'
    toggle.textContent = on ? t("spine.whole_open", { n }) : t("spine.whole_closed", { n });
    box.dataset.whole = on ? "1" : "";
  };
  toggle.addEventListener("click", () => show(flow.hidden));
  row.append(toggle);
  flow.append(
    block("al-b-view", t("spine.step"), null, t("spine.step_name"), open("step")),
    block("al-b-view", t("spine.headlab"), null, t("spine.headlab_name"), open("headlab")),
    opens(block("al-b-view", t("spine.patching"), null, t("spine.patching_name"), () => openPanel(result, "openPatch")),
      "openPatch"),
    ...(result.root.querySelector(".al-evidence") ? [block("al-b-view", t("spine.evidence"), null, t("spine.evidence_name"),
      () => { const e = result.root.querySelector(".al-evidence"); if (e) e.scrollIntoView({ block: "nearest" }); })] : []),
    block("al-b-view", t("spine.history"), null, t("spine.history_name"), open("history")),
    block("al-b-view", t("spine.copylab"), null, t("spine.copylab_name"), open("copylab")),
    block("al-b-view", t("spine.lab"), null, t("spine.lab_name"), open("lab")),
    ...(canCompare() && !chineseOnly(result) ? [block("al-b-view", t("spine.compare"), null, t("spine.compare_name"), open("compare"))] : []),
    opens(block("al-b-view", t("spine.code"), null, t("spine.code_name"), () => openPanel(result, "openCode")), "openCode"),
    block("al-b-view", t("spine.glossary"), null, t("spine.glossary_name"), () => openGlossary()));
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
    // (on a phone right under the map, so that a step a block opens shows beside the map it explains)
    const stage = result.root.querySelector(".al-viewer .al-stage");
    if (matchMedia("(max-width: 700px)").matches) { if (stage) stage.after(box); else result.root.append(box); }
    else result.ladder.before(box);
  }
  const sentence = x.sentences[result.viewer.state.sentence] || x.sentences[0];
  standalone = result.root.classList.contains("al-standalone") || !!result.root.closest(".al-standalone");
  box.hidden = false;
  box.setAttribute("aria-label", t("spine.label", { encoder: x.layers.encoder, decoder: x.layers.decoder }));
  const same = box.dataset.shown === String(x.id) && box.dataset.sentence === String(result.viewer.state.sentence);
  const opened = box.querySelector(".al-concept");
  box.dataset.sentence = String(result.viewer.state.sentence);
  // the German in training: under the map on the page, where it does not push the map down
  if (box.dataset.shown !== String(x.id)) {  // a new answer: its evidence line (if any) replaces the last one
    result.root.querySelectorAll(":scope > .al-evidence").forEach((n) => n.remove());
    const evidence = result.notes && result.notes.querySelector(".al-evidence");
    if (evidence) result.root.append(evidence);
    box.dataset.shown = String(x.id);
  }
  const kept = /** @type {HTMLElement | null} */ (box.querySelector(".al-spine-detail"));
  const expanded = /** @type {HTMLElement | null} */ (box.querySelector(".al-b-layer[aria-expanded='true']"));
  const detail = el("div", "al-spine-detail");
  detail.hidden = true;
  box.replaceChildren(stack(result, x, sentence, "encoder", detail), stack(result, x, sentence, "decoder", detail), detail);
  if (same && kept && !kept.hidden && expanded) { // the same answer drawn again: an opened layer stays open
    detail.replaceChildren(...kept.childNodes);
    detail.hidden = false;
    const again = box.querySelector(`.al-b-layer[data-stack="${expanded.dataset.stack}"][data-layer="${expanded.dataset.layer}"]`);
    if (again) again.setAttribute("aria-expanded", "true");
  }
  if (can("open")) box.append(whole(result, box)); // the whole-model views live on the page only
  keepStep(result, same ? opened : null); // an open step stays open: the same panel, or drawn for the new sentence
}
