// @ts-check
/* Attention Lens, who wrote each word: the shares of every English piece that came from each German piece
   and from the English before it (/contributions, ALTI+, lens/contributions.py), as a meter per word and a
   contribution map beside the cross-attention map, with how far the two agree. */
import { colour } from "./core.js";
import { amountLegend, el, explainer } from "./draw.js";
import { fixed, number, percent, t } from "./i18n.js";
import { askAboutShown, pieceText } from "./qkv.js";

const clean = (piece) => pieceText(piece);

/** One English piece's meter: German share (blue) beside the English share (orange). */
export function sourceMeter(share, label) {
  const meter = el("div", "al-who-meter");
  meter.setAttribute("role", "img");
  meter.setAttribute("aria-label", t("who.meter", { word: label || t("who.this_word"), german: percent(share),
    english: percent(1 - share) }));
  const german = el("span", "al-who-german");
  german.style.width = Math.round(100 * share) + "%"; // a CSS width, not words
  meter.append(german, el("span", "al-who-english"));
  meter.title = meter.getAttribute("aria-label");
  return meter;
}

/** A map as a table: a row per English piece, a column per German piece, shaded by its value. */
function table(caption, rows, cols, values) {
  const grid = el("table", "al-who-table");
  grid.append(el("caption", null, caption));
  const head = el("tr");
  head.append(el("th"), ...cols.map((c) => el("th", "al-who-col", clean(c))));
  grid.append(head);
  rows.forEach((r, i) => {
    const tr = el("tr");
    tr.append(el("th", "al-who-row", clean(r)));
    const top = Math.max(...values[i]);
    values[i].forEach((v, j) => {
      const td = el("td", "al-who-cell" + (v === top && v > 0 ? " al-who-top" : ""));
      td.style.background = colour(Math.min(1, v / Math.max(top, 1e-9)));  // the maps' own scale
      td.title = t("who.cell", { row: clean(r), column: clean(cols[j]), value: fixed(v, 3) });
      tr.append(td);
    });
    grid.append(tr);
  });
  return grid;
}

/** The whole panel for one /contributions answer. */
export function renderContributions(c) {
  const box = el("div", "al-who");
  box.append(explainer("al-who-title", t("who.lead"), t("who.more")));
  const meters = el("div", "al-who-meters");
  c.target_tokens.forEach((token, i) => {
    const item = el("div", "al-who-item");
    item.append(el("span", "al-who-word", clean(token)), sourceMeter(c.source_share[i], clean(token)),
      el("span", "al-who-share", percent(c.source_share[i])));
    meters.append(item);
  });
  box.append(meters);
  const normalized = c.source.map((row) => { const s = row.reduce((a, b) => a + b, 0) || 1; return row.map((v) => v / s); });
  const maps = el("div", "al-who-maps");
  maps.append(table(t("who.contributions"), c.target_tokens, c.source_tokens, normalized),
    table(t("who.attention"), c.target_tokens, c.source_tokens, c.cross_attention));
  const scroll = el("div", "al-who-scroll");
  scroll.append(maps);
  box.append(amountLegend(number(0), t("who.legend_top")), scroll);
  const same = Math.round(c.same_top * c.target_tokens.length);
  box.append(el("div", "al-who-agree", t("who.agree", { same, pieces: c.target_tokens.length, overlap: percent(c.agreement) })));
  box.append(el("div", "al-who-note", t("who.note")));
  return box;
}

/** The button under the translation: fetch the contributions of the sentence shown, then draw them. */
export const openContributions = (result, panel) => askAboutShown(result, panel, "contributions",
  t("who.following"), t("who.failed"), renderContributions);
