// @ts-check
/* Attention Lens, inside one step of the step-through: who wrote the piece (its German and English shares,
   /contributions) and when it was decided (its rung of the logit-lens ladder, /logit_lens), fetched once per
   trace (the forced one too, from its forced start) and read out for the step shown. */
import { callApi } from "./backend.js";
import { stageName } from "./core.js";
import { el } from "./draw.js";
import { nodeLabel } from "./beam.js";
import { fixed, percent, t } from "./i18n.js";
import { sourceMeter } from "./who.js";

export function mountInside(view, panel) {
  view.insideBox = panel.appendChild(el("div", "st-inside"));
  view.insideBox.setAttribute("aria-live", "polite");
  view.insideOn = false; // asked for once; then every step and trace reads it out (stepping alone asks nothing)
}

function offerButton(view) {
  const open = el("button", "st-inside-open", t("stepinside.open"));
  open.type = "button";
  open.addEventListener("click", () => { view.insideOn = true; drawInside(view, view.trace(), view.state.t); });
  return open;
}

/** The English a forced trace starts with, as text (the pieces up to its forced word). */
function prefixOf(tr) {
  if (!tr.prefix_length) return "";
  return tr.tokens.slice(0, tr.prefix_length).join("").replace(/[\u2581\u0120]/g, " ").trim();
}

/** Both answers for one trace, asked once. */
function askFor(view, tr) {
  if (view._inside && view._inside.trace === tr) return view._inside.answers;
  const beams = tr.num_beams || (view.state.which === "greedy" ? 1 : view.x.num_beams);
  const args = [view.x.source, beams > 1 ? "beam search" : "greedy", beams, 1.0, 128, prefixOf(tr), view.x.model || "auto"];
  const answers = Promise.all([callApi("contributions", args), callApi("logit_lens", args)]);
  view._inside = { trace: tr, answers };
  return answers;
}

function meterLine(c, step) {
  const share = c.source_share[step], row = c.source[step];
  const top = row.indexOf(Math.max(...row));
  const word = nodeLabel(c.target_tokens[step]);
  const line = el("div", "st-inside-line");
  line.append(el("b", null, t("stepinside.who_label")), sourceMeter(share, word), el("span", null, t("stepinside.who",
    { german: percent(share), word: nodeLabel(c.source_tokens[top]), top: percent(row[top]), english: percent(1 - share) })));
  return line;
}

function ladderLine(lens, step) {
  const line = el("div", "st-inside-line");
  const stage = lens.stages[lens.decided_at[step]];
  line.append(el("b", null, t("stepinside.when_label")), el("span", null, lens.decided_at[step] === 0
    ? t("stepinside.at_embedding") : t("stepinside.from_stage", { stage: stageName(stage) })));
  const rungs = el("div", "st-rungs");
  lens.stages.forEach((name, s) => {
    const rung = el("span", "st-rung" + (s === lens.decided_at[step] ? " st-rung-decided" : ""));
    rung.style.background = `rgba(79, 70, 229, ${Math.min(1, lens.prob[s][step]).toFixed(2)})`;
    rung.title = t("stepinside.rung", { stage: stageName(name), p: fixed(lens.prob[s][step], 3) });
    rungs.append(rung);
  });
  line.append(rungs);
  return line;
}

/** A new step (or trace): read out its piece's shares and rung, once the answers are in. */
export async function drawInside(view, tr, step) {
  if (!view.insideBox) return;
  if (!view.insideOn) { view.insideBox.replaceChildren(offerButton(view)); return; }
  if (!(view._inside && view._inside.trace === tr)) {
    view.insideBox.replaceChildren(el("p", "st-note", t("stepinside.looking")));
  }
  let c, lens;
  try { [c, lens] = await askFor(view, tr); } catch (err) {
    view.insideBox.replaceChildren(el("p", "st-note", t("stepinside.failed", { error: err.message })));
    return;
  }
  if (view.trace() !== tr || view.state.t !== step) return; // the learner moved on meanwhile
  if (c.target_tokens[step] !== tr.tokens[step] || lens.target_tokens[step] !== tr.tokens[step]) {
    view.insideBox.replaceChildren(el("p", "st-note", t("stepinside.cannot_show")));
    return;
  }
  view.insideBox.replaceChildren(meterLine(c, step), ladderLine(lens, step));
}
