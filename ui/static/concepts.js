// @ts-check
/* Attention Lens, the picture computes: each of the twelve steps (steps.js) opens in place, under the picture of
   the model, for the page's sentence: the rest of the picture dimmed, the blocks the step belongs to lit, the
   picture itself not moving. A step's numbers are the taps it names, asked of the back end (/taps: the server's
   lens/tap_values.py, or the page's own model, taps.js) for the step opened only, and kept for the sentence.
   A step has its place: which attention (encoder, decoder, cross), which of the N identical layers, which head,
   which piece; prev/next walk the twelve; "The code" opens the Code view at the line that makes its tensor.

   window.attentionLens.concepts() -> [{id, title, taps, open(place)}]; an opened step is the element
   [data-concept="<id>"]. */
import { callApi } from "./backend.js";
import { modelOf, pieceLabels } from "./core.js";
import { publish } from "./door.js";
import { el } from "./draw.js";
import { t } from "./i18n.js";
import { STEPS, stackOf } from "./steps.js";
import { set, view } from "./store.js";

/** @type {Map<string, Promise<any>>} */
const asked = new Map(); // the answers for a sentence, by the taps asked: a step opened again asks nothing
let opened = /** @type {{id: string, place: any} | null} */ (null);

/** The translate view's result, its explanation and the sentence it shows. */
function shown() {
  const result = view("translate"), x = result && result.viewer.explanation;
  if (!x || !x.sentences || !x.sentences.length) return null;
  return { result, x, sentence: x.sentences[result.viewer.state.sentence] || x.sentences[0] };
}

/** A step's place with every part filled in: its first kind, layer 1, head 1, the first content piece. */
function placed(step, place, x) {
  const kind = place && step.kinds.includes(place.kind) ? place.kind : step.kinds[0];
  const layers = x ? x.layers[kind] : 1, heads = x ? x.heads : 1;
  const clamp = (v, n) => Math.max(0, Math.min(n - 1, Number.isInteger(v) ? v : 0));
  return { kind, layer: clamp(place && place.layer, layers), head: clamp(place && place.head, heads),
    row: place && Number.isInteger(place.row) ? Math.max(0, place.row) : 0 };
}

/** The model's sizes the answer gives: model width D, head width dk, heads H. */
function dims(answer) {
  const { d_model: D, n_heads: H } = answer.sizes;
  return { D, H, dk: D / H };
}

/** The answer for these taps of the shown sentence (asked once). */
function numbersFor(x, sentence, names) {
  const o = x.options || {}, key = `${x.id}|${sentence.source}|${names.join(",")}`;
  if (!asked.has(key)) {
    asked.set(key, callApi("taps", [sentence.source, names, (o.num_beams || 4) > 1 ? "beam search" : "greedy",
      o.num_beams || 4, o.length_penalty ?? 1.0, o.max_new_tokens || 128, modelOf(sentence)]));
    asked.get(key).catch(() => asked.delete(key)); // a failure is asked again next time
  }
  return /** @type {Promise<any>} */ (asked.get(key));
}

/** A row of choice buttons; `on(i)` when one is pressed. */
function choices(label, items, current, on) {
  const row = el("div", "al-concept-choices");
  row.append(el("span", "al-group-label", label));
  items.forEach((text, i) => {
    const b = el("button", "al-choice", text);
    b.type = "button";
    b.setAttribute("aria-pressed", String(i === current));
    b.addEventListener("click", () => on(i));
    row.append(b);
  });
  return row;
}

/** The controls of a step's place: the attention, the layer (the N identical layers), the head, the piece. */
function placeControls(step, place, x, sentence) {
  const box = el("div", "al-concept-place"), go = (patch) => openStep(step.id, { ...place, ...patch });
  if (step.kinds.length > 1) {
    const stacks = !step.kinds.includes("cross"); // a step of the stream, not of an attention
    const names = stacks ? { encoder: t("concepts.stack_encoder"), decoder: t("concepts.stack_decoder") }
      : { encoder: t("concepts.kind_encoder"), decoder: t("concepts.kind_decoder"), cross: t("concepts.kind_cross") };
    box.append(choices(stacks ? t("concepts.stack") : t("concepts.kind"), step.kinds.map((k) => names[k]), step.kinds.indexOf(place.kind),
      (i) => go({ kind: step.kinds[i] })));
  }
  if (step.id !== "logits-softmax" && !["tokens", "embedding", "positional-encoding"].includes(step.id)) {
    const n = x.layers[place.kind];
    box.append(choices(t("concepts.layer"), [...Array(n).keys()].map((i) => String(i + 1)), place.layer, (i) => go({ layer: i })));
  }
  if (step.heads) {
    box.append(choices(t("concepts.head"), [...Array(x.heads).keys()].map((i) => String(i + 1)), place.head, (i) => go({ head: i })));
  }
  if (step.rows) {
    const pieces = pieceLabels(sentence, place.kind === "encoder" ? "src" : "in"), select = /** @type {HTMLSelectElement} */ (el("select"));
    pieces.forEach((p, i) => select.append(new Option(`${i + 1} ${p}`, String(i), false, i === place.row)));
    select.setAttribute("aria-label", t("concepts.piece"));
    select.addEventListener("change", () => go({ row: Number(select.value) }));
    const label = el("label", "al-concept-choices");
    label.append(el("span", "al-group-label", t("concepts.piece")), select);
    box.append(label);
  }
  return box;
}

/** Light the blocks of the picture a step belongs to; dim the rest. */
function light(result, step, place) {
  const spine = result.root.querySelector(".al-spine");
  if (!spine) return;
  spine.classList.add("al-spine-stepping");
  const stack = stackOf(place), block = { tokens: "input", embedding: "embed", "positional-encoding": "embed",
    "logits-softmax": "out" }[step.id] || "layer";
  spine.querySelectorAll(".al-block").forEach((b) => {
    const mine = b.dataset.stack === stack && b.dataset.part === block && (block !== "layer" || b.dataset.layer === String(place.layer));
    b.classList.toggle("al-lit", mine);
  });
}

/** Hovering (or focusing) a piece traces it through the step: its strips, its rows, its lines of the bridge. */
function traceOn(panel) {
  const mark = (i) => panel.querySelectorAll("[data-piece]").forEach((n) => n.classList.toggle("al-traced",
    i !== null && /** @type {HTMLElement} */ (n).dataset.piece === i));
  const at = (e) => { const n = /** @type {HTMLElement} */ (e.target).closest("[data-piece]");
    mark(n ? /** @type {HTMLElement} */ (n).dataset.piece || null : null); };
  panel.addEventListener("mouseover", at);
  panel.addEventListener("focusin", at);
  panel.addEventListener("mouseleave", () => mark(null));
}

/** The step's heading, with prev, next, the code and close. */
function heading(step, place) {
  const at = STEPS.indexOf(step), bar = el("div", "al-concept-bar");
  const title = el("h3", "al-concept-title", t("concepts.title", { n: at + 1, of: STEPS.length, title: step.title() }));
  title.id = `al-concept-${step.id}`;
  const button = (text, label, on) => { const b = el("button", "al-concept-nav", text); b.type = "button";
    if (/\p{L}/u.test(text)) b.title = label; else b.setAttribute("aria-label", label); // a word is its own name
    b.addEventListener("click", on); return b; };
  const prev = button("\u2190", t("concepts.prev"), () => openStep(STEPS[at - 1].id, place));
  const next = button("\u2192", t("concepts.next"), () => openStep(STEPS[at + 1].id, place));
  prev.disabled = at === 0; next.disabled = at === STEPS.length - 1;
  const code = button(t("concepts.code"), t("concepts.code_label"), () => showCode(step, place));
  code.classList.add("al-concept-code");
  bar.append(title, prev, next, code, button("\u00d7", t("concepts.close"), closeStep));
  return bar;
}

/** Open the Code view at the line that makes the step's first tap. */
function showCode(step, place) {
  const s = shown();
  if (!s) return;
  const tap = step.taps(place).find((name) => stepOfTap(name.replace(/\.\d+\./, ".{i}.")) === step.id) || step.taps(place)[0];
  set({ codeTarget: { tap: tap.replace(/\.\d+\./, ".{i}."), layer: place.layer + 1 } });
  const button = s.result.inside.querySelector('[data-view="openCode"]');
  if (button) /** @type {HTMLElement} */ (button).click();
}

/** The panel of a step under the picture, in place of any other; resolves when it is drawn. */
export async function openStep(id, place) {
  const s = shown(), step = STEPS.find((x) => x.id === id);
  if (!step) throw new Error(`no step '${id}': the steps are ${STEPS.map((x) => x.id).join(", ")}`);
  if (!s) throw new Error(t("concepts.no_sentence"));
  const spine = /** @type {HTMLElement | null} */ (s.result.root.querySelector(".al-spine"));
  if (!spine) throw new Error(t("concepts.no_sentence"));
  const where = placed(step, place, s.x);
  opened = { id, place: where };
  let panel = /** @type {HTMLElement | null} */ (spine.querySelector(".al-concept"));
  if (!panel) { panel = el("section", "al-concept"); spine.append(panel); traceOn(panel); }
  panel.dataset.concept = id;
  panel.setAttribute("aria-labelledby", `al-concept-${id}`);
  const body = el("div", "al-concept-body", t("concepts.waiting"));
  panel.replaceChildren(heading(step, where), placeControls(step, where, s.x, s.sentence), body);
  light(s.result, step, where);
  const names = step.taps(where);
  try {
    const answer = await numbersFor(s.x, s.sentence, names);
    if (!opened || opened.id !== id || panel.dataset.concept !== id) return panel; // another step took its place
    const rows = s.sentence.tokens[where.kind === "encoder" ? "src" : "in"].length;
    const ctx = { answer, sentence: s.sentence, place: { ...where, row: Math.min(where.row, rows - 1) }, config: dims(answer) };
    const taps = el("p", "al-concept-taps", t("concepts.taps") + " ");
    taps.append(el("code", null, names.join(", ")));
    body.replaceChildren(...step.draw(ctx), taps);
    if (matchMedia("(max-width: 700px)").matches) panel.scrollIntoView({ block: "nearest" }); // a phone: in sight
  } catch (err) {
    body.replaceChildren(el("div", "al-qkv-error", t("concepts.failed", { error: err.message })));
  }
  return panel;
}

/** Close the open step: the picture whole again. */
export function closeStep() {
  const s = shown();
  opened = null;
  if (!s) return;
  const spine = s.result.root.querySelector(".al-spine");
  if (!spine) return;
  spine.classList.remove("al-spine-stepping");
  spine.querySelectorAll(".al-lit").forEach((b) => b.classList.remove("al-lit"));
  const panel = spine.querySelector(".al-concept");
  if (panel) panel.remove();
}

/** The picture was drawn again: the open step's `panel` kept (the same sentence) and its blocks lit again, or
    (null: another sentence) the step drawn afresh with its numbers. */
export function keepStep(result, panel) {
  if (!opened) return;
  const spine = result.root.querySelector(".al-spine"), step = STEPS.find((x) => x.id === opened.id);
  if (!spine || !step) return;
  if (panel) {
    spine.append(panel);
    light(result, step, opened.place);
  } else openStep(opened.id, opened.place).catch(() => {});
}

/** The step a tap name belongs to ("encoder.{i}.self_attn.q" -> "qkv-projection"), for the Code view's lines. */
export function stepOfTap(tap) {
  const last = tap.split(".").pop();
  if (tap === "logits") return "logits-softmax";
  if (/^(encoder|decoder)\.out$/.test(tap)) return "residual-layernorm"; // a stack's output: its last Add & Norm
  if (/\.(tokens)$/.test(tap)) return "embedding";
  if (tap.includes(".ff.")) return "feed-forward";
  if (/\.embed$/.test(tap)) return "positional-encoding";
  if (/cross_attn\.weights$/.test(tap)) return "cross-attention";
  return { q: "qkv-projection", k: "qkv-projection", v: "qkv-projection", scores: "scores", weights: "softmax",
    heads: "heads-concat", out: "heads-concat", resid: "residual-layernorm" }[last] || null;
}

/** The place a tap's line speaks of, at layer `layer` (from 1). */
export function placeOfTap(tap, layer) {
  const kind = tap.startsWith("encoder") ? "encoder" : tap.includes("cross_attn") ? "cross" : "decoder";
  return { kind, layer: layer - 1, head: 0, row: 0 };
}

publish({
  concepts: () => STEPS.map((step) => {
    const s = shown(), place = placed(step, null, s && s.x);
    return { id: step.id, title: step.title(), taps: step.taps(place), open: (p) => openStep(step.id, p) };
  }),
  openedConcept: () => opened && { ...opened, place: { ...opened.place } },
});
