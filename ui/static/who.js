// @ts-check
/* Attention Lens, who wrote each word: the shares of every English piece that came from each German piece
   and from the English before it (/contributions, ALTI+, lens/contributions.py), as a meter per word and a
   contribution map beside the cross-attention map, with how far the two agree. */
import { colour } from "./core.js";
import { amountLegend, el, explainer } from "./draw.js";
import { askAboutShown, pieceText, wholePercent } from "./qkv.js";

const clean = (t) => pieceText(t);
const percent = (p) => wholePercent(p);

/** One English piece's meter: German share (blue) beside the English share (orange). */
export function sourceMeter(share, label) {
  const meter = el("div", "al-who-meter");
  meter.setAttribute("role", "img");
  meter.setAttribute("aria-label", `${label || "this word"}: ${percent(share)} from the German, ` +
    `${percent(1 - share)} from the English before it`);
  const german = el("span", "al-who-german");
  german.style.width = percent(share);
  meter.append(german, el("span", "al-who-english"));
  meter.title = meter.getAttribute("aria-label");
  return meter;
}

/** A map as a table: a row per English piece, a column per German piece, shaded by its value. */
function table(caption, rows, cols, values) {
  const t = el("table", "al-who-table");
  t.append(el("caption", null, caption));
  const head = el("tr");
  head.append(el("th"), ...cols.map((c) => el("th", "al-who-col", clean(c))));
  t.append(head);
  rows.forEach((r, i) => {
    const tr = el("tr");
    tr.append(el("th", "al-who-row", clean(r)));
    const top = Math.max(...values[i]);
    values[i].forEach((v, j) => {
      const td = el("td", "al-who-cell" + (v === top && v > 0 ? " al-who-top" : ""));
      td.style.background = colour(Math.min(1, v / Math.max(top, 1e-9)));  // the maps' own scale
      td.title = `\u2018${clean(r)}\u2019 \u2190 \u2018${clean(cols[j])}\u2019: ${v.toFixed(3)}`;
      tr.append(td);
    });
    t.append(tr);
  });
  return t;
}

/** The whole panel for one /contributions answer. */
export function renderContributions(c) {
  const box = el("div", "al-who");
  box.append(explainer("al-who-title", "Who wrote each word? Each English piece is a mix: some of it came from " +
    "the German (blue), the rest from the English written before it (orange).", "Measured through every attention " +
    "block with its residual and LayerNorm, rolled out over the layers (ALTI+, Ferrando et al. 2022)."));
  const meters = el("div", "al-who-meters");
  c.target_tokens.forEach((token, t) => {
    const item = el("div", "al-who-item");
    item.append(el("span", "al-who-word", clean(token)), sourceMeter(c.source_share[t], clean(token)),
      el("span", "al-who-share", percent(c.source_share[t])));
    meters.append(item);
  });
  box.append(meters);
  const normalized = c.source.map((row) => { const s = row.reduce((a, b) => a + b, 0) || 1; return row.map((v) => v / s); });
  const maps = el("div", "al-who-maps");
  maps.append(table("Contributions: where each English piece's German part came from", c.target_tokens,
    c.source_tokens, normalized),
  table("Cross-attention, the mean of every layer and head", c.target_tokens, c.source_tokens, c.cross_attention));
  const scroll = el("div", "al-who-scroll");
  scroll.append(maps);
  box.append(amountLegend("0", "the largest share in each table"), scroll);
  const same = Math.round(c.same_top * c.target_tokens.length);
  box.append(el("div", "al-who-agree", `The two agree on the German piece that matters most for ${same} of ` +
    `${c.target_tokens.length} English pieces; their rows overlap by ${percent(c.agreement)} on average. ` +
    "Attention says where a head looked; contributions also weigh what it fetched against what the word already held."));
  box.append(el("div", "al-who-note", "What this shows and what not: a decomposition of the computation with the " +
    "LayerNorm linearized and the feed-forward layers left out of the mixing; it says where a word's vector came " +
    "from, not why the model chose it (for that: \u201cWhy X and not Y\u201d in the step view)."));
  return box;
}

/** The button under the translation: fetch the contributions of the sentence shown, then draw them. */
export const openContributions = (result, panel) => askAboutShown(result, panel, "contributions",
  "Following every word back to the German\u2026", "Could not follow the words back", renderContributions);
