// @ts-check
/* Attention Lens, which heads carry a word: two German sentences that differ in one word, every attention
   head's output copied from the clean run into the other (/patch, lens/patching_heads.py), drawn as layer x head
   grids and told in a sentence. */
import { callApi } from "./backend.js";
import { diverging, modelOf, stageName } from "./core.js";
import { el, explainer, signedLegend } from "./draw.js";
import { fixed, list, percent, t } from "./i18n.js";
import { pieceText } from "./qkv.js";

const clean = (piece) => pieceText(piece);
const KIND_NAMES = { get encoder() { return t("patchlab.kind.encoder"); }, get decoder() { return t("patchlab.kind.decoder"); },
  get cross() { return t("patchlab.kind.cross"); } };

// Swaps that keep the sentence German; the first that applies is proposed, the others offered.
const SWAPS = [["Ein Mann", "Eine Frau"], ["ein Mann", "eine Frau"], ["Eine Frau", "Ein Mann"], ["eine Frau", "ein Mann"],
  ["Hund", "Pferd"], ["Katze", "Hund"], ["Pferd", "Hund"], ["Junge", "Mann"], ["Mädchen", "Junge"], ["roten", "blauen"],
  ["rote", "blaue"], ["roter", "blauer"], ["rotes", "blaues"], ["Fahrrad", "Pferd"], ["Hut", "Helm"], ["Mann", "Frau"],
  ["Frau", "Mann"], ["Straße", "Wiese"], ["zwei", "drei"], ["Zwei", "Drei"]];

/** The swaps that apply to a German sentence: [from, to, the sentence with it swapped]. */
export function proposedSwaps(german) {
  const out = [];
  SWAPS.forEach(([from, to]) => {
    const re = new RegExp("(^|[^\\p{L}])" + from + "(?![\\p{L}])", "u");
    if (re.test(german) && !out.some((s) => s[0].includes(from) || from.includes(s[0]))) {
      out.push([from, to, german.replace(re, (m, before) => before + to)]);
    }
  });
  return out;
}

function grid(kind, rows, best) {
  const table = el("table", "al-patch-grid");
  table.append(el("caption", null, KIND_NAMES[kind]));
  const head = el("tr");
  head.append(el("th"), ...rows[0].map((_, h) => el("th", null, t("patchlab.head", { n: h + 1 }))));
  table.append(head);
  rows.forEach((row, l) => {
    const tr = el("tr");
    tr.append(el("th", null, t("patchlab.layer", { n: l + 1 })));
    row.forEach((v, h) => {
      const td = el("td", "al-patch-cell", percent(v));
      const a = Math.min(1, Math.abs(v) / Math.max(best, 1e-9));
      td.style.background = diverging(v / Math.max(best, 1e-9));  // the page's one scale for signed values
      td.style.color = a > 0.6 ? "#fff" : "inherit";
      td.title = t("patchlab.cell", { kind: KIND_NAMES[kind], layer: l + 1, head: h + 1, share: fixed(100 * v, 1) });
      tr.append(td);
    });
    table.append(tr);
  });
  return table;
}

/** In words: which heads carry the word, and how much the strongest carries alone. */
export function patchSentence(p) {
  const [first] = p.top_heads;
  const kinds = new Set(p.top_heads.map((h) => h.kind));
  const says = { step: p.step, clean: clean(p.clean_piece), corrupted: clean(p.corrupted_piece), kind: KIND_NAMES[first.kind],
    layer: first.layer, head: first.head, restored: percent(first.restored), all: percent(p.all), none: percent(p.none) };
  if (first.restored >= 0.5) return t("patchlab.says", says);
  return kinds.size === 1 ? t("patchlab.says_shared_kind", says) : t("patchlab.says_shared", says);
}

export function renderPatch(p) {
  const box = el("div", "al-patch");
  box.append(el("div", "al-patch-pair", t("patchlab.pair", { clean: p.clean_translation, corrupted: p.corrupted_translation })));
  box.append(el("div", "al-patch-says", patchSentence(p)));
  const best = Math.max(...Object.values(p.restored).flat(2).map(Math.abs));
  const grids = el("div", "al-patch-grids");
  ["encoder", "decoder", "cross"].forEach((k) => grids.append(grid(k, p.restored[k], best)));
  box.append(signedLegend(t("patchlab.pushes_away"), t("patchlab.brings_back")), grids);
  // Of the pieces that differ, the one whose own vector carries most of the choice.
  const differ = p.source_tokens.map((t, i) => i).filter((i) => p.source_tokens[i] !== p.corrupted_tokens[i]);
  const swapped = differ.reduce((a, b) => (p.recovered[0][b] > p.recovered[0][a] ? b : a), differ[0]);
  const carried = p.recovered.map((row) => row[swapped]);
  const stays = Math.min(...carried) > 0.5;
  const vector = { piece: clean(p.source_tokens[swapped]),
    levels: list(carried.map((v, i) => t("patchlab.level", { restored: percent(v), level: stageName(p.levels[i]) }))) };
  box.append(el("div", "al-patch-note", stays ? t("patchlab.encoder_vector_stays", vector) : t("patchlab.encoder_vector", vector)));
  box.append(el("div", "al-who-note", t("patchlab.note")));
  return box;
}

/** The button under the translation: a form for the other sentence, proposed from the German shown. */
export function openPatch(result, panel) {
  const x = result.viewer.explanation;
  if (!x) return;
  const sentence = x.sentences[result.viewer.state.sentence], o = /** @type {Partial<DecodingOptions>} */ (x.options || {});
  const swaps = proposedSwaps(sentence.source);
  const input = el("input", "al-patch-input");
  input.type = "text";
  input.setAttribute("aria-label", t("patchlab.input_label"));
  input.value = swaps.length ? swaps[0][2] : sentence.source;
  const chips = el("div", "al-patch-chips");
  swaps.forEach(([from, to, text]) => {
    const chip = el("button", "al-patch-chip", t("patchlab.swap", { from, to }));
    chip.type = "button";
    chip.addEventListener("click", () => { input.value = text; run(); });
    chips.append(chip);
  });
  const go = el("button", "al-open-ladder", t("patchlab.run"));
  go.type = "button";
  const out = el("div", "al-patch-out");
  async function run() {
    out.replaceChildren(el("div", "al-qkv-wait", t("patchlab.running")));
    try {
      const p = await callApi("patch", [sentence.source, input.value, 0, (o.num_beams || 4) > 1 ? "beam search" : "greedy",
        o.num_beams || 4, o.length_penalty ?? 1.0, o.max_new_tokens || 128, modelOf(sentence)]);
      out.replaceChildren(renderPatch(p));
    } catch (err) {
      out.replaceChildren(el("div", "al-qkv-error", t("patchlab.failed", { error: err.message })));
    }
  }
  go.addEventListener("click", run);
  panel.replaceChildren(explainer("al-who-title", t("patchlab.lead"), t("patchlab.more")), input, chips, go, out);
  if (swaps.length) run();
}
