// @ts-check
/* Attention Lens, which heads carry a word: two German sentences that differ in one word, every attention
   head's output copied from the clean run into the other (/patch, lens/patching_heads.py), drawn as layer x head
   grids and told in a sentence. */
import { callApi } from "./backend.js";
import { diverging, modelOf } from "./core.js";
import { el, explainer, signedLegend } from "./draw.js";
import { pieceText, wholePercent } from "./qkv.js";

const clean = (t) => pieceText(t);
const KIND_NAMES = { encoder: "encoder self-attention", decoder: "decoder self-attention", cross: "cross-attention" };

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
  const t = el("table", "al-patch-grid");
  t.append(el("caption", null, KIND_NAMES[kind]));
  const head = el("tr");
  head.append(el("th"), ...rows[0].map((_, h) => el("th", null, "head " + (h + 1))));
  t.append(head);
  rows.forEach((row, l) => {
    const tr = el("tr");
    tr.append(el("th", null, "layer " + (l + 1)));
    row.forEach((v, h) => {
      const td = el("td", "al-patch-cell", wholePercent(v));
      const a = Math.min(1, Math.abs(v) / Math.max(best, 1e-9));
      td.style.background = diverging(v / Math.max(best, 1e-9));  // the page's one scale for signed values
      td.style.color = a > 0.6 ? "#fff" : "inherit";
      td.title = `${KIND_NAMES[kind]} layer ${l + 1} head ${h + 1}: brings back ${(100 * v).toFixed(1)}% of the choice`;
      tr.append(td);
    });
    t.append(tr);
  });
  return t;
}

/** In words: which heads carry the word, and how much the strongest carries alone. */
export function patchSentence(p) {
  const [first] = p.top_heads;
  const kinds = new Set(p.top_heads.map((h) => h.kind));
  const spread = first.restored < 0.5 ? " No single head carries it: several share the work" +
    (kinds.size === 1 ? `, all of them in ${KIND_NAMES[first.kind]}.` : ".") : "";
  return `At step ${p.step} the clean German writes \u2018${clean(p.clean_piece)}\u2019 and the other ` +
    `\u2018${clean(p.corrupted_piece)}\u2019. Copying ${KIND_NAMES[first.kind]} layer ${first.layer} head ` +
    `${first.head} alone from the clean run brings back ${wholePercent(first.restored)} of that choice.${spread} ` +
    `Every head copied: ${wholePercent(p.all)}; none: ${wholePercent(p.none)}.`;
}

export function renderPatch(p) {
  const box = el("div", "al-patch");
  box.append(el("div", "al-patch-pair", `\u201c${p.clean_translation}\u201d against \u201c${p.corrupted_translation}\u201d`));
  box.append(el("div", "al-patch-says", patchSentence(p)));
  const best = Math.max(...Object.values(p.restored).flat(2).map(Math.abs));
  const grids = el("div", "al-patch-grids");
  ["encoder", "decoder", "cross"].forEach((k) => grids.append(grid(k, p.restored[k], best)));
  box.append(signedLegend("pushes the other way", "brings the clean choice back"), grids);
  // Of the pieces that differ, the one whose own vector carries most of the choice.
  const differ = p.source_tokens.map((t, i) => i).filter((i) => p.source_tokens[i] !== p.corrupted_tokens[i]);
  const swapped = differ.reduce((a, b) => (p.recovered[0][b] > p.recovered[0][a] ? b : a), differ[0]);
  const carried = p.recovered.map((row) => row[swapped]);
  const stays = Math.min(...carried) > 0.5;
  box.append(el("div", "al-patch-note", `The encoder's vector at \u2018${clean(p.source_tokens[swapped])}\u2019, copied ` +
    `alone, brings back ${carried.map((v, i) => `${wholePercent(v)} (${p.levels[i]})`).join(", ")}` + (stays
    ? ": the word travels through the encoder in the residual stream at its own position, and the decoder's " +
      "cross-attention fetches it from there." : ".")));
  box.append(el("div", "al-who-note", "What this shows and what not: what one head's output is worth for this one " +
    "choice, with everything else as the other sentence has it; heads that work together can each look small."));
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
  input.setAttribute("aria-label", "The German sentence with one word swapped");
  input.value = swaps.length ? swaps[0][2] : sentence.source;
  const chips = el("div", "al-patch-chips");
  swaps.forEach(([from, to, text]) => {
    const chip = el("button", "al-patch-chip", `${from} \u2192 ${to}`);
    chip.type = "button";
    chip.addEventListener("click", () => { input.value = text; run(); });
    chips.append(chip);
  });
  const go = el("button", "al-open-ladder", "Patch every head");
  go.type = "button";
  const out = el("div", "al-patch-out");
  async function run() {
    out.replaceChildren(el("div", "al-qkv-wait", "Running the other sentence with each head copied in\u2026"));
    try {
      const p = await callApi("patch", [sentence.source, input.value, 0, (o.num_beams || 4) > 1 ? "beam search" : "greedy",
        o.num_beams || 4, o.length_penalty ?? 1.0, o.max_new_tokens || 128, modelOf(sentence)]);
      out.replaceChildren(renderPatch(p));
    } catch (err) {
      out.replaceChildren(el("div", "al-qkv-error", "Could not patch: " + err.message));
    }
  }
  go.addEventListener("click", run);
  panel.replaceChildren(explainer("al-who-title", "Which heads carry a word? Swap one German word for another " +
    "of as many pieces, then copy each head's output back from this sentence.", "Each attention head's output is " +
    "copied, one at a time, from this sentence into the other, and we measure how much of the original word comes " +
    "back."), input, chips, go, out);
  if (swaps.length) run();
}
