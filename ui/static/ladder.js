// @ts-check
/* Attention Lens, when was each word decided: the decoder's state after every sublayer read as a
   prediction (/logit_lens, lens/logit_lens.py), drawn as one ladder per English word. */
import { el, explainer } from "./draw.js";
import { askAboutShown } from "./qkv.js";

/** A table: a row per stage (embedding at the top), a column per English piece; each cell the
    probability of the piece finally written, marked where it was already the favourite. */
export function renderLadder(lens) {
  const box = el("div", "al-ladder");
  box.append(explainer("al-ladder-title", "When was each word decided? Each column is a piece of the English, " +
    "each row a stage of the decoder read out as if it were the last; \u2605: already the favourite.", "Darker: more " +
    "probable. Early stages are rough readings: the output layer was trained on the last one only."));
  const table = el("table", "al-ladder-table");
  const head = el("tr");
  head.append(el("th", null, "stage"), ...lens.target_tokens.map((t) => el("th", null, t.replace(/^\u2581/, ""))));
  table.append(head);
  lens.stages.forEach((stage, s) => {
    const tr = el("tr");
    tr.append(el("th", "al-ladder-stage", stage));
    lens.target_tokens.forEach((token, t) => {
      const p = lens.prob[s][t];
      const favourite = lens.top[s][t][0].token === token;
      const td = el("td", "al-ladder-cell" + (s === lens.decided_at[t] ? " al-ladder-decided" : ""), favourite ? "\u2605" : "");
      td.style.background = `rgba(79, 70, 229, ${Math.min(1, p).toFixed(2)})`;
      td.style.color = p > 0.5 ? "#fff" : "inherit";
      td.title = `${stage}: p(\u2018${token.replace(/^\u2581/, "")}\u2019) = ${p.toFixed(3)}; favourite: ` +
        `\u2018${lens.top[s][t][0].token.replace(/^\u2581/, "")}\u2019 (${lens.top[s][t][0].prob.toFixed(3)})`;
      tr.append(td);
    });
    table.append(tr);
  });
  const scroll = el("div", "al-ladder-scroll");
  scroll.append(table);
  box.append(scroll);
  return box;
}

/** The button under the translation: fetch the ladder of the sentence shown, then draw it. */
export const openLadder = (result, panel) => askAboutShown(result, panel, "logit_lens", "Reading every stage\u2026",
  "Could not read the stages", renderLadder);
