// @ts-check
/* Attention Lens, the words of the step-through view: pieces grouped into words, a step's choice
   described for a learner, and which words a forced word changed. No DOM, no state. */
import { nodeLabel } from "./beam.js";
import { SPECIAL } from "./core.js";

const q = (s) => "\u2018" + s + "\u2019", pct = (p) => (p > 0 && p < 0.005 ? "<1%" : Math.round(p * 100) + "%");
export { pct as percent };

/** Pieces grouped into words: a '▁' piece starts one; punctuation and <s>, </s> stand alone. */
export function wordsOf(pieces) {
  const words = [];
  let breaks = true;
  pieces.forEach((p, i) => {
    const text = p.replace(/▁/g, ""), special = p in SPECIAL;
    const punct = !special && text !== "" && !/[\p{L}\p{N}]/u.test(text);
    if (breaks || special || punct || p.startsWith("▁") || !words.length) words.push({ text: special ? p : text, span: [i] });
    else { words[words.length - 1].text += text; words[words.length - 1].span.push(i); }
    breaks = special || punct;
  });
  return words;
}
export const glue = (word) => (/^[.,;:!?)\]'’”]/.test(word) ? "" : " ");
export const sentenceOf = (pieces) => wordsOf(pieces).filter((w) => !(w.text in SPECIAL))
  .map((w, i) => (i ? glue(w.text) : "") + w.text).join("");

/** The choice at step t in words: how sure the model was, and what else it weighed. */
export function describeChoice(tr, t) {
  const top = tr.top[t], p1 = top[0][2], p2 = top.length > 1 ? top[1][2] : 0, name = (c) => q(nodeLabel(c[0]));
  let text;
  if (p1 >= 0.8) text = "The model was sure: " + name(top[0]) + " (" + pct(p1) + ").";
  else if (p2 >= 0.15 && p1 - p2 < 0.2) text = "The model was torn between " + name(top[0]) + " (" + pct(p1) + ") and " + name(top[1]) + " (" + pct(p2) + ").";
  else if (p1 >= 0.5) text = "The model leaned towards " + name(top[0]) + " (" + pct(p1) + "); next came " + name(top[1]) + " (" + pct(p2) + ").";
  else text = "The model was unsure: its best guess " + name(top[0]) + " got only " + pct(p1) + ".";
  const spread = Math.exp(tr.entropy[t]);
  text += " Its doubt is like choosing among " + (spread < 9.95 ? spread.toFixed(1) : Math.round(spread)) + " equally likely pieces.";
  if (tr.forced[t]) text = "This piece was forced. " + text;
  else if (tr.ids[t] !== top[0][1]) text += " Beam search wrote " + q(nodeLabel(tr.tokens[t])) + " instead: that path ended in a sentence with a better score (log-probability per piece).";
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
