// @ts-check
/* Attention Lens, "why this word and not that one?" in the step view: pick another candidate of the
   step, and /contrast (lens/contrast.py) answers with the logit difference, which German pieces pushed
   for the word written and which for the other (integrated gradients of the difference), and which
   heads the choice leaned on most (the difference with each head switched off). */
import { callApi } from "./backend.js";
import { nodeLabel } from "./beam.js";
import { diverging } from "./core.js";
import { el, signedLegend } from "./draw.js";
import { fixed, list, number, t } from "./i18n.js";

// The kinds of attention, as the answer names a head's.
const KIND_NAMES = { get encoder() { return t("why.kind.encoder"); }, get decoder() { return t("why.kind.decoder"); },
  get cross() { return t("why.kind.cross"); } };

/** The form under the candidates: "Why ‘A’ and not [another candidate]?" */
export function mountWhy(view, panel) {
  const box = panel.appendChild(el("div", "st-why"));
  const form = box.appendChild(el("form", "st-why-form"));
  view.whyLabel = form.appendChild(el("span", "st-why-label"));
  view.whyPick = form.appendChild(el("select", "st-why-pick"));
  view.whyPick.setAttribute("aria-label", t("why.pick_label"));
  const ask = form.appendChild(el("button", "st-why-ask", t("why.ask")));
  ask.type = "submit";
  view.whyAnswer = box.appendChild(el("div", "st-why-answer"));
  view.whyAnswer.setAttribute("aria-live", "polite");
  form.addEventListener("submit", (e) => { e.preventDefault(); askWhy(view); });
}

/** A new step: the other candidates to compare with, and no old answer. */
export function drawWhy(view, tr, step) {
  if (!view.whyPick) return;
  view.whyPick.parentElement.parentElement.hidden = view.state.which === "forced"; // /contrast decodes freely
  const chosen = nodeLabel(tr.tokens[step]);
  view.whyLabel.textContent = t("why.label", { word: chosen });
  const others = tr.top[step].filter(([piece, id]) => id !== tr.ids[step] && piece !== "</s>");
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
  view.whyQuick.replaceChildren(el("span", "st-why-or", t("why.or_ask")), ...others.slice(0, 5).map(([piece]) => {
    const b = el("button", "st-why-chip", t("why.why_not", { word: nodeLabel(piece) }));
    b.type = "button";
    b.addEventListener("click", () => { view.whyPick.value = nodeLabel(piece); askWhy(view); });
    return b;
  }));
  view.whyAnswer.replaceChildren();
  view.whyAnswer.classList.remove("st-why-busy");
}

export async function askWhy(view) {
  const step = view.state.t, other = view.whyPick.value;
  if (!other) return;
  const beams = view.state.which === "greedy" ? 1 : view.x.num_beams;
  view.whyAnswer.classList.add("st-why-busy");
  view.whyAnswer.textContent = t("why.asking");
  try {
    const r = await callApi("contrast", [view.x.source, step + 1, other, beams > 1 ? "beam search" : "greedy",
      beams, 1.0, 128, view.x.model || "auto"]);
    if (view.state.t === step) view.whyAnswer.replaceChildren(...answer(r));
  } catch (err) {
    view.whyAnswer.textContent = t("why.failed", { error: err.message });
  }
  view.whyAnswer.classList.remove("st-why-busy");
}

/** How many times as likely, in two significant digits as a reader writes them: "590,000", never "5.9e+5". */
export const ratio = (x) => number(x, { maximumSignificantDigits: 2 });

/** The answer in words, the German pieces as chips (green: for the word written; red: for the other). */
function answer(r) {
  const chosen = nodeLabel(r.chosen), other = nodeLabel(r.alternative);
  const times = Math.exp(Math.max(-30, Math.min(30, r.logit_diff)));
  const lead = el("p", "st-why-lead", r.logit_diff >= 0 ? t("why.found", { chosen, other, times: ratio(times) })
    : t("why.found_other", { chosen, other, times: ratio(1 / times) }));
  const top = Math.max(1e-6, ...r.source_attribution.map(Math.abs));
  const chips = el("div", "st-chips st-why-chips");
  r.source_tokens.forEach((token, i) => {
    const v = r.source_attribution[i], chip = el("span", "st-chip");
    chip.style.background = diverging(v / top);  // the page's one scale for signed values
    const word = token === "</s>" ? token : nodeLabel(token);
    chip.append(el("span", "st-chip-word", word), el("span", "st-chip-v", (v >= 0 ? "+" : "") + fixed(v, 2)));
    chip.title = t("why.pushed", { word, towards: v >= 0 ? chosen : other, amount: fixed(Math.abs(v), 2) });
    chips.append(chip);
  });
  const heads = [];
  for (const [kind, layers] of Object.entries(r.heads)) {
    layers.forEach((row, l) => row.forEach((d, h) => heads.push([d, kind, l + 1, h + 1])));
  }
  heads.sort((x, y) => x[0] - y[0]); // most negative first: without these heads the choice weakens most
  const leaned = heads.slice(0, 3).filter(([d]) => d < 0).map(([d, kind, l, h]) => t("why.head",
    { kind: KIND_NAMES[kind] || kind, layer: l, head: h, drop: fixed(-d, 2) })); // d < 0: it shrinks by -d
  const foot = el("p", "st-why-foot", leaned.length ? t("why.foot_leaned", { heads: list(leaned), chosen, other })
    : t("why.foot", { chosen, other }));
  const more = el("details", "st-why-more");
  const numbers = { chosen, other, diff: fixed(r.logit_diff, 2), diff_rounded: fixed(r.logit_diff, 1), times: ratio(times),
    baseline: fixed(r.baseline_logit_diff, 2), gap: fixed(Math.abs(r.completeness_gap), 2) };
  // the page's model answers by occlusion (whynot.js), the server by integrated gradients
  more.append(el("summary", null, t("why.more")),
    el("p", null, r.method === "occlusion" ? t("why.numbers_occlusion", numbers) : t("why.numbers", numbers)));
  return [lead, signedLegend(t("why.for", { word: other }), t("why.for", { word: chosen })), chips, foot, more];
}
