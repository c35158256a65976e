// @ts-check
/* Attention Lens, "why this word and not that one?" in the step view: pick another candidate of the
   step, and /contrast (lens/contrast.py) answers with the logit difference, which German pieces pushed
   for the word written and which for the other (integrated gradients of the difference), and which
   heads the choice leaned on most (the difference with each head switched off). */
import { callApi } from "./backend.js";
import { nodeLabel } from "./beam.js";
import { diverging } from "./core.js";
import { el, signedLegend } from "./draw.js";

const q = (w) => "\u2018" + w + "\u2019";

/** The form under the candidates: "Why ‘A’ and not [another candidate]?" */
export function mountWhy(view, panel) {
  const box = panel.appendChild(el("div", "st-why"));
  const form = box.appendChild(el("form", "st-why-form"));
  view.whyLabel = form.appendChild(el("span", "st-why-label"));
  view.whyPick = form.appendChild(el("select", "st-why-pick"));
  view.whyPick.setAttribute("aria-label", "the other candidate to compare with");
  const ask = form.appendChild(el("button", "st-why-ask", "Why?"));
  ask.type = "submit";
  view.whyAnswer = box.appendChild(el("div", "st-why-answer"));
  view.whyAnswer.setAttribute("aria-live", "polite");
  form.addEventListener("submit", (e) => { e.preventDefault(); askWhy(view); });
}

/** A new step: the other candidates to compare with, and no old answer. */
export function drawWhy(view, tr, t) {
  if (!view.whyPick) return;
  view.whyPick.parentElement.parentElement.hidden = view.state.which === "forced"; // /contrast decodes freely
  const chosen = nodeLabel(tr.tokens[t]);
  view.whyLabel.textContent = "Why " + q(chosen) + " and not";
  const others = tr.top[t].filter(([piece, id]) => id !== tr.ids[t] && piece !== "</s>");
  view.whyPick.replaceChildren(...others.map(([piece]) => {
    const o = el("option", "", nodeLabel(piece));
    o.value = nodeLabel(piece);
    return o;
  }));
  // One click from any candidate: each other piece of the top list asks at once.
  if (!view.whyQuick) {
    view.whyQuick = el("div", "st-why-quick");
    view.whyPick.parentElement.after(view.whyQuick);
  }
  view.whyQuick.replaceChildren(el("span", "st-why-or", "or ask at once: "), ...others.slice(0, 5).map(([piece]) => {
    const b = el("button", "st-why-chip", "why not " + q(nodeLabel(piece)) + "?");
    b.type = "button";
    b.addEventListener("click", () => { view.whyPick.value = nodeLabel(piece); askWhy(view); });
    return b;
  }));
  view.whyAnswer.replaceChildren();
  view.whyAnswer.classList.remove("st-why-busy");
}

export async function askWhy(view) {
  const t = view.state.t, other = view.whyPick.value;
  if (!other) return;
  const beams = view.state.which === "greedy" ? 1 : view.x.num_beams;
  view.whyAnswer.classList.add("st-why-busy");
  view.whyAnswer.textContent = "Asking the model why\u2026";
  try {
    const r = await callApi("contrast", [view.x.source, t + 1, other, beams > 1 ? "beam search" : "greedy",
      beams, 1.0, 128, view.x.model || "auto"]);
    if (view.state.t === t) view.whyAnswer.replaceChildren(...answer(r));
  } catch (err) {
    view.whyAnswer.textContent = "The model could not be asked: " + err.message;
  }
  view.whyAnswer.classList.remove("st-why-busy");
}

/** The answer in words, the German pieces as chips (green: for the word written; red: for the other). */
function answer(r) {
  const a = q(nodeLabel(r.chosen)), b = q(nodeLabel(r.alternative));
  const times = Math.exp(Math.min(30, r.logit_diff));
  const lead = el("p", "st-why-lead", r.logit_diff >= 0 ? "The model found " + a + " about " + times.toPrecision(2) +
    " times as likely as " + b + " here. The German pieces behind that:" : "The model found " + b + " about " +
    (1 / times).toPrecision(2) + " times as likely as " + a + " here, yet wrote " + a + ". The German pieces behind that:");
  const top = Math.max(1e-6, ...r.source_attribution.map(Math.abs));
  const chips = el("div", "st-chips st-why-chips");
  r.source_tokens.forEach((token, i) => {
    const v = r.source_attribution[i], chip = el("span", "st-chip");
    chip.style.background = diverging(v / top);  // the page's one scale for signed values
    const word = token === "</s>" ? token : nodeLabel(token);
    chip.append(el("span", "st-chip-word", word), el("span", "st-chip-v", (v >= 0 ? "+" : "") + v.toFixed(2)));
    chip.title = q(word) + (v >= 0 ? " pushed for " + a : " pushed for " + b) + " by " + Math.abs(v).toFixed(2);
    chips.append(chip);
  });
  const heads = [];
  for (const [kind, layers] of Object.entries(r.heads)) {
    layers.forEach((row, l) => row.forEach((d, h) => heads.push([d, kind, l + 1, h + 1])));
  }
  heads.sort((x, y) => x[0] - y[0]); // most negative first: without these heads the choice weakens most
  const leaned = heads.slice(0, 3).filter(([d]) => d < 0)
    .map(([d, kind, l, h]) => kind + " layer " + l + " head " + h + " (" + (-d).toFixed(2) + ")"); // d < 0: it shrinks by -d
  const foot = el("p", "st-why-foot", (leaned.length ? "It leaned most on " + leaned.join(", ") +
    ": switching that head off makes " + a + "'s lead smaller by the number shown. " : "") + "Blue pieces pushed for " +
    a + ", red ones for " + b + ".");
  const more = el("details", "st-why-more");
  more.append(el("summary", null, "More: the numbers"), el("p", null, "In logits (the scores before the softmax) " + a +
    " is " + r.logit_diff.toFixed(2) + " above " + b + ", so it is e^" + r.logit_diff.toFixed(1) + " \u2248 " +
    times.toPrecision(2) + " times as likely. Each piece's share comes from integrated gradients from a German of " +
    "zeros, where the difference is " + r.baseline_logit_diff.toFixed(2) + "; the pieces add up to the rest, within " +
    Math.abs(r.completeness_gap).toFixed(2) + "."));
  return [lead, signedLegend("for " + b, "for " + a), chips, foot, more];
}
