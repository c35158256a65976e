// @ts-check
/* Attention Lens, one row of a map opened up: the query, a key, their dot product term by term, the
   scaling, the mask, the softmax across the row and the value mixing, fetched from /qkv (lens/qkv.py)
   and told in words. Used by the viewer's "How was this computed?" button. */
import { callApi } from "./backend.js";
import { KINDS, diverging, modelOf } from "./core.js";
import { el, signedLegend } from "./draw.js";


/** A piece as a reader writes it (no word-start mark) and a share as a whole percentage. */
export const pieceText = (t) => String(t).replace(/^[\u2581\u0120]/, "");
export const wholePercent = (p) => Math.round(100 * p) + "%";

/** Ask endpoint `name` about the sentence a result shows, with its options; draw the answer in `panel`
    with `render`, saying `waiting` meanwhile and `failed` (with the reason) when it cannot. */
export async function askAboutShown(result, panel, name, waiting, failed, render) {
  const x = result.viewer.explanation;
  if (!x) return;
  const sentence = x.sentences[result.viewer.state.sentence], o = /** @type {Partial<DecodingOptions>} */ (x.options || {});
  panel.replaceChildren(el("div", "al-qkv-wait", waiting));
  try {
    const answer = await callApi(name, [sentence.source, (o.num_beams || 4) > 1 ? "beam search" : "greedy",
      o.num_beams || 4, o.length_penalty ?? 1.0, o.max_new_tokens || 128, "", modelOf(sentence)]);
    panel.replaceChildren(render(answer));
  } catch (err) {
    panel.replaceChildren(el("div", "al-qkv-error", failed + ": " + err.message));
  }
}

/** A vector as a strip of coloured cells on the one diverging scale: blue positive, red negative, pale zero. */
function strip(values, title) {
  const box = el("div", "al-qkv-strip");
  box.title = title;
  const top = Math.max(1e-6, ...values.map(Math.abs));
  for (const v of values) {
    const cell = el("span");
    cell.style.background = diverging(v / top);  // the page's one scale for signed values
    box.append(cell);
  }
  return box;
}

function bars(values, labels, cls) {
  const box = el("div", "al-qkv-bars " + cls);
  const top = Math.max(1e-6, ...values.filter(Number.isFinite).map(Math.abs));
  values.forEach((v, i) => {
    const row = el("div", "al-qkv-bar");
    const bar = el("span", "al-qkv-fill");
    bar.style.width = (Number.isFinite(v) ? (100 * Math.abs(v)) / top : 0).toFixed(1) + "%";
    if (v < 0) bar.classList.add("al-qkv-negative");
    row.append(el("span", "al-qkv-label", labels[i]), bar, el("span", "al-qkv-value", Number.isFinite(v) ? v.toFixed(3) : "masked"));
    box.append(row);
  });
  return box;
}

const fmt = (x) => (Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));

/** The walk through one row, as a list of short steps a learner reads top to bottom. */
export function renderQkv(r, column) {
  const d = r.q.length, label = (t) => (t === "</s>" || t === "<s>" ? t : t.replace(/^\u2581/, ""));
  const cols = r.column_tokens.map(label), row = label(r.row_token);
  const clicked = column >= 0 && column < cols.length;
  const c = clicked ? column : r.weights.indexOf(Math.max(...r.weights));
  const terms = r.q.map((q, i) => [i, q * r.k[c][i]]).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, 4);
  const masked = r.mask.filter((m) => !m).length;
  const box = el("div", "al-qkv");
  const step = (title, ...body) => { const s = el("div", "al-qkv-step"); s.append(el("b", null, title), ...body); box.append(s); };
  const who = r.writes ? `the row that writes \u2018${label(r.writes)}\u2019 (its query comes from the state of ` +
    `\u2018${row}\u2019, the piece before it)` : `the row of \u2018${row}\u2019`;
  box.append(el("div", "al-qkv-title", `${KINDS[r.kind].label}, layer ${r.layer}, head ${r.head}: how ${who} was computed`));
  step("1. The query: what this row looks for", el("div", null, `q has ${d} numbers:`),
    signedLegend("\u2212 negative", "+ positive"), strip(r.q, "q"));
  step("2. A key: the label of \u2018" + cols[c] + "\u2019", el("div", null, "Every column has a key k; here " +
    (clicked ? "the column you clicked:" : "the column with the most attention:")), strip(r.k[c], "k"));
  step("3. Their dot product", el("div", null, `q \u00b7 k = q\u2081k\u2081 + \u2026 + q${d}k${d} = ${fmt(r.scores[c])}; ` +
    "the largest terms: " + terms.map(([i, t]) => `q${i + 1}k${i + 1} = ${fmt(t)}`).join(", ") + ". A large product: " +
    "the key fits the query."));
  step("4. Scaled", el("div", null, `divided by \u221a${d} = ${Math.sqrt(d).toFixed(1)}: ${fmt(r.scaled[c])}. Without ` +
    "it, long vectors would give huge scores and a softmax with one winner."));
  step("5. Masked", el("div", null, masked ? `${masked} column(s) may not be looked at (the future, or padding): ` +
    "their scores become \u2212\u221e, so their weight is exactly 0." : "nothing is masked in this row."));
  step("6. Softmax across the row: scores before, weights after (they sum to 1)",
    bars(r.scaled.map((v, i) => (r.mask[i] ? v : NaN)), cols, "al-qkv-before"), bars(r.weights, cols, "al-qkv-after"));
  step("7. Mixing the values", el("div", null, `The row's output is \u03a3 weight \u00d7 v over the columns (${d} numbers):`),
    strip(r.head_output, "weights V"), el("div", null, `Every head does this; their outputs side by side are ` +
    `projected by W_O into ${r.output.length} numbers, which the residual connection adds to \u2018${row}\u2019.`));
  return box;
}

/** The viewer's button: open the row in focus (or under the pointer) of the map on screen. */
export async function openRow(viewer, panel) {
  const x = viewer.explanation, s = viewer.state;
  if (!x) return;
  const sentence = x.sentences[s.sentence], kind = KINDS[s.kind], layer = viewer.current().layer;
  const cell = viewer.lastCell && viewer.lastCell[0] === s.focusRow ? viewer.lastCell : null;
  let row = s.focusRow >= 0 ? s.focusRow : 0;
  let column = cell ? cell[1] : -1;
  if (s.level === "words") { // a word's row: the query of its last piece; a column: its first piece
    row = sentence.words[kind.rows][row][1].slice(-1)[0];
    column = column >= 0 ? sentence.words[kind.cols][column][1][0] : -1;
  }
  const head = s.head === null ? 1 : s.head + 1;
  panel.replaceChildren(el("div", "al-qkv-wait", "Computing\u2026"));
  const o = /** @type {Partial<DecodingOptions>} */ (x.options || {});
  try {
    const r = await callApi("qkv", [sentence.source, s.kind, layer + 1, head, row + 1,
      (o.num_beams || 4) > 1 ? "beam search" : "greedy", o.num_beams || 4, o.length_penalty ?? 1.0, o.max_new_tokens || 128,
      modelOf(sentence)]);
    panel.replaceChildren(renderQkv(r, column));
    if (s.head === null) panel.prepend(el("div", "al-qkv-note", "The map shows the mean of the heads, but Q, K and V belong to one head: this is head 1 (pick a head above for another)."));
  } catch (err) {
    panel.replaceChildren(el("div", "al-qkv-error", "Could not open this row: " + err.message));
  }
}
