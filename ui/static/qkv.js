// @ts-check
/* Attention Lens, one row of a map opened up: the query, a key, their dot product term by term, the
   scaling, the mask, the softmax across the row and the value mixing, fetched from /qkv (lens/qkv.py)
   and told in words. Used by the viewer's "How was this computed?" button. */
import { callApi } from "./backend.js";
import { KINDS, SPECIAL, diverging, modelOf } from "./core.js";
import { el, signedLegend } from "./draw.js";
import { fixed, list, t } from "./i18n.js";


/** A piece as a reader writes it (no word-start mark). */
export const pieceText = (piece) => String(piece).replace(/^[\u2581\u0120]/, "");

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
    panel.replaceChildren(el("div", "al-qkv-error", t("qkv.failed_because", { failed, error: err.message })));
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
    row.append(el("span", "al-qkv-label", labels[i]), bar, el("span", "al-qkv-value", Number.isFinite(v) ? fixed(v, 3) : t("qkv.masked")));
    box.append(row);
  });
  return box;
}

const fmt = (x) => fixed(x, Math.abs(x) >= 10 ? 1 : 3);

/** The column a learner is shown first: the piece of text with the most attention, not a mark such as </s> where
    heads rest their attention when nothing else is useful (the mark only where the row sees nothing else).
    @param {{column_tokens: string[], weights: number[], mask: boolean[]}} r */
export function likeliestWord(r) {
  const words = r.weights.map((w, i) => [w, i]).filter(([, i]) => r.mask[i] && !SPECIAL[r.column_tokens[i]]);
  const pool = words.length ? words : r.weights.map((w, i) => [w, i]);
  return pool.reduce((best, next) => (next[0] > best[0] ? next : best))[1];
}

/** The walk through one row, as a list of short steps a learner reads top to bottom. */
export function renderQkv(r, column) {
  const d = r.q.length, label = (t) => (t === "</s>" || t === "<s>" ? t : t.replace(/^\u2581/, ""));
  const cols = r.column_tokens.map(label), row = label(r.row_token);
  const clicked = column >= 0 && column < cols.length;
  const c = clicked ? column : likeliestWord(r);
  const terms = r.q.map((q, i) => [i, q * r.k[c][i]]).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, 4);
  const masked = r.mask.filter((m) => !m).length;
  const box = el("div", "al-qkv");
  const step = (title, ...body) => { const s = el("div", "al-qkv-step"); s.append(el("b", null, title), ...body); box.append(s); };
  const who = r.writes ? t("qkv.who_writes", { word: label(r.writes), row }) : t("qkv.who_row", { row });
  box.append(el("div", "al-qkv-title", t("qkv.title", { kind: KINDS[r.kind].label, layer: r.layer, head: r.head, who })));
  step(t("qkv.query"), el("div", null, t("qkv.query_size", { d })),
    signedLegend(t("qkv.negative"), t("qkv.positive")), strip(r.q, "q"));
  step(t("qkv.key", { column: cols[c] }), el("div", null, clicked ? t("qkv.key_clicked") : t("qkv.key_most")), strip(r.k[c], "k"));
  step(t("qkv.dot"), el("div", null, t("qkv.dot_text", { d, score: fmt(r.scores[c]),
    terms: list(terms.map(([i, term]) => t("qkv.term", { i: i + 1, value: fmt(term) }))) })));
  step(t("qkv.scaled"), el("div", null, t("qkv.scaled_text", { d, root: fixed(Math.sqrt(d), 1), scaled: fmt(r.scaled[c]) })));
  step(t("qkv.masked_step"), el("div", null, masked ? t("qkv.masked_some", { n: masked }) : t("qkv.masked_none")));
  step(t("qkv.softmax"),
    bars(r.scaled.map((v, i) => (r.mask[i] ? v : NaN)), cols, "al-qkv-before"), bars(r.weights, cols, "al-qkv-after"));
  step(t("qkv.mixing"), el("div", null, t("qkv.mixing_text", { d })),
    strip(r.head_output, t("qkv.weights_v")), el("div", null, t("qkv.heads_text", { n: r.output.length, row })));
  return box;
}

/** The viewer's button: open the row in focus (or under the pointer) of the map on screen. */
/** The first word of a row axis worth opening: letters, three or more, not a special token or a small word. */
function contentRow(words) {
  const at = words.findIndex(([w]) => !SPECIAL[w] && /\p{L}{3,}/u.test(w) && !/^(the|and|with|are|for|from|der|die|das|und|ein|eine|mit)$/i.test(w));
  return at >= 0 ? at : 0;
}

export async function openRow(viewer, panel) {
  const x = viewer.explanation, s = viewer.state;
  if (!x) return;
  const sentence = x.sentences[s.sentence], kind = KINDS[s.kind], layer = viewer.current().layer;
  const cell = viewer.lastCell && viewer.lastCell[0] === s.focusRow ? viewer.lastCell : null;
  let row = s.focusRow >= 0 ? s.focusRow : contentRow(sentence.words[kind.rows]);
  let column = cell ? cell[1] : -1;
  if (s.level === "words") { // a word's row: the query of its last piece; a column: its first piece
    row = sentence.words[kind.rows][row][1].slice(-1)[0];
    column = column >= 0 ? sentence.words[kind.cols][column][1][0] : -1;
  }
  const head = s.head === null ? 1 : s.head + 1;
  panel.replaceChildren(el("div", "al-qkv-wait", t("qkv.computing")));
  const o = /** @type {Partial<DecodingOptions>} */ (x.options || {});
  try {
    const r = await callApi("qkv", [sentence.source, s.kind, layer + 1, head, row + 1,
      (o.num_beams || 4) > 1 ? "beam search" : "greedy", o.num_beams || 4, o.length_penalty ?? 1.0, o.max_new_tokens || 128,
      modelOf(sentence)]);
    panel.replaceChildren(renderQkv(r, column));
    panel.scrollIntoView({ block: "nearest" });
    if (s.head === null) panel.prepend(el("div", "al-qkv-note", t("qkv.head_one")));
  } catch (err) {
    panel.replaceChildren(el("div", "al-qkv-error", t("qkv.failed", { error: err.message })));
  }
}
