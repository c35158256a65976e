// @ts-check
/* Attention Lens, when was each word decided: the decoder's state after every sublayer read as a
   prediction (/logit_lens, lens/logit_lens.py), drawn as one ladder per English word. */
import { stageName } from "./core.js";
import { el, explainer } from "./draw.js";
import { fixed, t } from "./i18n.js";
import { askAboutShown } from "./qkv.js";

/** A table: a row per stage (embedding at the top), a column per English piece; each cell the
    probability of the piece finally written, marked where it was already the favourite. */
export function renderLadder(lens) {
  const box = el("div", "al-ladder");
  box.append(explainer("al-ladder-title", t("ladder.lead"), t("ladder.more")));
  const table = el("table", "al-ladder-table");
  const head = el("tr");
  head.append(el("th", null, t("ladder.stage")), ...lens.target_tokens.map((token) => el("th", null, token.replace(/^\u2581/, ""))));
  table.append(head);
  lens.stages.forEach((stage, s) => {
    const tr = el("tr");
    tr.append(el("th", "al-ladder-stage", stageName(stage)));
    lens.target_tokens.forEach((token, i) => {
      const p = lens.prob[s][i], best = lens.top[s][i][0];
      const favourite = best.token === token;
      const td = el("td", "al-ladder-cell" + (s === lens.decided_at[i] ? " al-ladder-decided" : ""), favourite ? "\u2605" : "");
      td.style.background = `rgba(79, 70, 229, ${Math.min(1, p).toFixed(2)})`;
      td.style.color = p > 0.5 ? "#fff" : "inherit";
      td.title = t("ladder.cell", { stage: stageName(stage), piece: token.replace(/^\u2581/, ""), p: fixed(p, 3),
        favourite: best.token.replace(/^\u2581/, ""), favourite_p: fixed(best.prob, 3) });
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
export const openLadder = (result, panel) => askAboutShown(result, panel, "logit_lens", t("ladder.reading"),
  t("ladder.failed"), renderLadder);
