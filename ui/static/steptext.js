// @ts-check
/* Attention Lens, the words of the step-through view: pieces grouped into words, a step's choice
   described for a learner, and which words a forced word changed. No DOM, no state. */
import { nodeLabel } from "./beam.js";
import { isHan } from "./chinese.js";
import { SPECIAL } from "./core.js";
import { fixed, percent, t } from "./i18n.js";

/** A probability as a whole percentage, "<1%" for a tiny but real chance. */
const pct = (p) => (p > 0 && p < 0.005 ? t("steptext.under_one_percent", { percent: percent(0.01) }) : percent(p));
export { pct as percent };

/** Pieces grouped into words: a '▁' piece starts one; punctuation, <s>, </s> and each Han character stand alone. */
export function wordsOf(pieces) {
  const words = [];
  let breaks = true;
  pieces.forEach((p, i) => {
    const text = p.replace(/▁/g, ""), special = p in SPECIAL;
    const punct = !special && text !== "" && !/[\p{L}\p{N}]/u.test(text), han = isHan(text);
    if (breaks || special || punct || han || p.startsWith("▁") || !words.length) words.push({ text: special ? p : text, span: [i] });
    else { words[words.length - 1].text += text; words[words.length - 1].span.push(i); }
    breaks = special || punct || han;
  });
  return words;
}
export const glue = (word) => (/^[.,;:!?)\]'’”]/.test(word) ? "" : " ");
export const sentenceOf = (pieces) => wordsOf(pieces).filter((w) => !(w.text in SPECIAL))
  .map((w, i) => (i ? glue(w.text) : "") + w.text).join("");

/** The choice at step t in words: how sure the model was, and what else it weighed. */
export function describeChoice(tr, step) {
  const top = tr.top[step], p1 = top[0][2], p2 = top.length > 1 ? top[1][2] : 0, name = (c) => nodeLabel(c[0]);
  const word = name(top[0]), p = pct(p1);
  let text;
  if (p1 >= 0.8) text = t("steptext.sure", { word, p });
  else if (p2 >= 0.15 && p1 - p2 < 0.2) text = t("steptext.torn", { word, p, second: name(top[1]), p2: pct(p2) });
  else if (p1 >= 0.5) text = t("steptext.leaned", { word, p, second: name(top[1]), p2: pct(p2) });
  else text = t("steptext.unsure", { word, p });
  const spread = Math.exp(tr.entropy[step]);
  text = t("steptext.then", { before: text, after: t("steptext.doubt", { spread: fixed(spread, spread < 9.95 ? 1 : 0) }) });
  if (tr.forced[step]) text = t("steptext.then", { before: t("steptext.forced"), after: text });
  else if (tr.ids[step] !== top[0][1]) {
    text = t("steptext.then", { before: text, after: t("steptext.beam_instead", { word: nodeLabel(tr.tokens[step]) }) });
  }
  return text;
}

/** Words of `after` that are not in a longest common subsequence with `before`: what changed. */
export function changedWords(before, after) {
  const n = before.length, m = after.length, L = [...Array(n + 1)].map(() => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    L[i][j] = before[i] === after[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const keptB = new Set(), keptA = new Set();
  for (let i = 0, j = 0; i < n && j < m;) {
    if (before[i] === after[j]) { keptB.add(i++); keptA.add(j++); } else if (L[i + 1][j] >= L[i][j + 1]) i++; else j++;
  }
  return { before: before.map((_, i) => !keptB.has(i)), after: after.map((_, j) => !keptA.has(j)) };
}
