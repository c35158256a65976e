// @ts-check
/* Attention Lens, the Code view: the model's own source (model/attention.py, layers.py, transformer.py and the
   greedy loop's generation/search.py, as in the repository) with the page's sentence in it. Every line that makes
   a tapped tensor (model/tap_lines.py) carries that tensor's shape for this sentence, and a peek at its numbers
   on hover, focus or tap (the first values, the mean, the spread); `data-tap` names the tap ({i} for the layer)
   and `data-shape` its shape. A layer selector runs the same lines for layer 1..L; three questions the tutorials
   ask point at their line with the visitor's numbers. The numbers come from /code (lens/code.py). A tapped line
   opens its step of the picture (concepts.js), and a step's "The code" comes back here at its line. */
import { callApi } from "./backend.js";
import { openStep, placeOfTap, stepOfTap } from "./concepts.js";
import { stepTitle } from "./steps.js";
import { modelOf } from "./core.js";
import { el, withCode } from "./draw.js";
import { fixed, list, t } from "./i18n.js";
import { get, set } from "./store.js";

const KEYWORDS = new Set(["def", "return", "class", "if", "else", "elif", "for", "while", "in", "import", "from", "as",
  "with", "lambda", "not", "and", "or", "is", "None", "True", "False", "raise", "assert", "yield", "self", "pass"]);
const TOKEN = /(#.*$)|("""|'''|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;

/** One line of Python as text and highlighted spans (comments, strings, numbers, keywords). */
function highlighted(line) {
  const out = [];
  let at = 0;
  for (const m of line.matchAll(TOKEN)) {
    const kind = m[1] ? "al-c-comment" : m[2] ? "al-c-string" : m[3] ? "al-c-number"
      : KEYWORDS.has(m[4]) ? "al-c-keyword" : null;
    if (!kind) continue;
    if (m.index > at) out.push(line.slice(at, m.index));
    out.push(el("span", kind, m[0]));
    at = m.index + m[0].length;
  }
  out.push(line.slice(at));
  return out;
}

/** A shape as the page writes it: [1, 4, 12, 64] -> "1×4×12×64". */
export const shapeText = (shape) => shape.join("\u00d7");

/** What a tap's peek says: its shape, its first values, mean and spread (and how many are −∞). */
function peekText(tap) {
  const text = t("code.peek", { name: tap.name, shape: shapeText(tap.shape), first: list(tap.first.map((v) => fixed(v, 3))),
    mean: tap.mean == null ? "–" : fixed(tap.mean, 3), std: tap.std == null ? "–" : fixed(tap.std, 3) });
  return tap.masked ? t("code.peek_masked", { peek: text, masked: tap.masked }) : text;
}

/** Open the picture's step a tapped line belongs to, at the layer shown, and bring the picture into sight. */
function toStep(tap, layer, line) {
  const id = stepOfTap(tap);
  if (!id) return;
  openStep(id, placeOfTap(tap, layer)).then((panel) => panel.scrollIntoView({ block: "nearest" }), () => {});
  line.classList.add("al-code-here");
}

/** One file as numbered lines, each tapped line marked with its taps (data-tap, data-shape) and their shapes; a
    line whose tap is drawn by a step of the picture opens it. */
function file(path, source, taps, layer) {
  const box = el("details", "al-code-file");
  box.open = true;
  box.append(el("summary", "al-code-path", path));
  const pre = el("div", "al-code");
  pre.setAttribute("translate", "no");
  source.split("\n").forEach((text, i) => {
    const here = taps.filter((tap) => tap.line === i + 1);
    const line = el("div", "al-code-line" + (here.length ? " al-code-tapped" : ""));
    line.dataset.line = String(i + 1);
    const code = el("code");
    code.append(...highlighted(text));
    line.append(el("span", "al-code-no", String(i + 1)), code);
    if (here.length) {
      line.dataset.tap = here.map((tap) => tap.tap).join(" ");
      line.dataset.shape = here.map((tap) => shapeText(tap.shape)).join(" ");
      line.tabIndex = 0;
      line.title = here.map(peekText).join("\n");
      line.append(el("span", "al-code-shape", here.map((tap) => `${tap.name} ${shapeText(tap.shape)}`).join(" · ")));
      const step = here.map((tap) => stepOfTap(tap.tap)).find(Boolean);
      if (step) {
        line.dataset.step = step;
        const go = el("button", "al-code-step", stepTitle(step));
        go.type = "button";
        go.setAttribute("aria-label", t("code.open_step", { step: stepTitle(step) }));
        go.addEventListener("click", (e) => { e.stopPropagation(); toStep(here[0].tap, layer, line); });
        line.append(go);
        line.addEventListener("click", () => toStep(here[0].tap, layer, line));
      }
    }
    pre.append(line);
  });
  box.append(pre);
  return box;
}

/** The line a question points at: found in the files shown, by what it says (no table of line numbers). */
function lineOf(answer, path, says) {
  const at = answer.files[path].split("\n").findIndex((text) => text.includes(says));
  return at < 0 ? null : at + 1;
}

/** The tutorials' three questions, each answered with this sentence's numbers and a link to its line. */
function questions(answer, root) {
  const tap = (key) => answer.taps.find((x) => x.tap === key);
  const embed = tap("encoder.embed"), q = tap("encoder.{i}.self_attn.q"), resid = tap("encoder.{i}.self_attn.resid");
  const asked = [
    ["qkv", "model/attention.py", lineOf(answer, "model/attention.py", "def project_qkv"),
      t("code.q_qkv"), t("code.a_qkv", { shape: q ? shapeText(q.shape) : "?" })],
    ["layernorm", resid ? resid.file : "model/layers.py", resid ? resid.line : null,
      t("code.q_layernorm"), t("code.a_layernorm", { std: resid && resid.std != null ? fixed(resid.std, 2) : "?" })],
    ["pe-shape", embed ? embed.file : "model/transformer.py", embed ? embed.line : null,
      t("code.q_pe"), t("code.a_pe", { shape: embed ? shapeText(embed.shape) : "?", pieces: embed ? embed.shape[1] : "?",
        width: embed ? embed.shape[2] : "?", batch: embed ? embed.shape[0] : "?" })],
  ];
  const box = el("div", "al-code-questions");
  for (const [id, path, line, question, reply] of asked) {
    const item = el("div", "al-code-question");
    item.dataset.question = id;
    const go = el("button", "al-code-goto");
    go.append(...withCode(t("code.goto", { path: "`" + path + "`", line: line ?? "?" })));
    go.type = "button";
    go.addEventListener("click", () => showLine(root, path, line));
    item.append(el("b", null, question), " ", ...withCode(reply), " ", go);
    box.append(item);
  }
  return box;
}

/** Scroll to a file's line and mark it. */
function showLine(root, path, line) {
  const file = [...root.querySelectorAll(".al-code-file")].find((f) => f.querySelector("summary").textContent === path);
  const target = file && file.querySelector(`.al-code-line[data-line="${line}"]`);
  if (!target) return;
  root.querySelectorAll(".al-code-here").forEach((n) => n.classList.remove("al-code-here"));
  target.classList.add("al-code-here");
  target.scrollIntoView({ block: "center" });
  /** @type {HTMLElement} */ (target).focus({ preventScroll: true });
}

/** The whole view for one /code answer; `ask(layer)` asks again for another layer. */
export function renderCode(answer, ask) {
  const box = el("div", "al-code-view");
  box.append(el("div", "al-code-lead", t("code.lead")));
  const layers = el("div", "al-code-layers");
  layers.append(el("span", "al-group-label", t("code.layer")));
  for (let l = 1; l <= answer.layers; l++) {
    const b = el("button", "al-choice", String(l));
    b.type = "button";
    b.setAttribute("aria-pressed", String(l === answer.layer));
    b.addEventListener("click", () => ask(l));
    layers.append(b);
  }
  box.append(layers, questions(answer, box));
  for (const path of Object.keys(answer.files)) {
    box.append(file(path, answer.files[path], answer.taps.filter((tap) => tap.file === path), answer.layer));
  }
  return box;
}

/** The button under the translation: the Code view of the sentence shown, at `layer`. */
export async function openCode(result, panel, layer = 1) {
  const x = result.viewer.explanation;
  if (!x) return;
  const sentence = x.sentences[result.viewer.state.sentence], o = x.options || {};
  panel.replaceChildren(el("div", "al-qkv-wait", t("code.waiting")));
  try {
    const answer = await callApi("code", [sentence.source, layer, (o.num_beams || 4) > 1 ? "beam search" : "greedy",
      o.num_beams || 4, o.length_penalty ?? 1.0, o.max_new_tokens || 128, modelOf(sentence)]);
    const target = get().codeTarget;
    if (target && target.layer !== answer.layer) return openCode(result, panel, target.layer); // a step asked for it
    panel.replaceChildren(renderCode(answer, (l) => openCode(result, panel, l)));
    if (target) { // the step's line, in sight
      set({ codeTarget: null });
      const line = answer.taps.find((tap) => tap.tap === target.tap);
      if (line) showLine(panel, line.file, line.line);
    }
  } catch (err) {
    panel.replaceChildren(el("div", "al-qkv-error", t("code.failed", { error: err.message })));
  }
}
