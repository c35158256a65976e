// @ts-check
/* Attention Lens, the translate view's result: the English text shaded by the model's confidence,
   what to make of it (notices), and the viewer under it. Fed by the value of a gr.HTML component. */
import { el } from "./draw.js";
import { SPECIAL } from "./core.js";
import { drawSpine } from "./spine.js";
import { Viewer } from "./viewer.js";
import { useServer } from "./backend.js";
import { publish } from "./door.js";
import { openLadder } from "./ladder.js";
import { openPatch } from "./patchlab.js";
import { register, set } from "./store.js";
import { openContributions } from "./who.js";

/** The English of one sentence, word by word, paler where the model was less sure.
    @param {Sentence} sentence @param {number} index @param {(index: number) => void} onPick */
function shadedSentence(sentence, index, onPick) {
  const span = el("span", "al-sentence-text");
  span.dataset.sentence = String(index);
  span.title = "Sentence " + (index + 1) + ": click to show its maps";
  span.addEventListener("click", () => onPick(index));
  for (const [word, pieces] of sentence.words.tgt) {
    if (SPECIAL[word]) continue;
    const p = pieces.reduce((acc, i) => acc * (sentence.probs[i] ?? 1), 1); // the word's probability
    const w = el("span", "al-word" + (p < 0.5 ? " al-unsure" : ""), word);
    w.style.opacity = (0.45 + 0.55 * p).toFixed(2);
    w.title = "\u2018" + word + "\u2019: the model gave it a probability of " + p.toFixed(2);
    // A space where the text has one: before a word whose first piece starts with '▁' ("I'm" stays whole).
    const first = sentence.tokens.tgt[pieces[0]] || "";
    const glue = first.startsWith("\u2581") ? " " : /^[.,;:!?)\]'’”]/.test(word) || span.childElementCount ? "" : " ";
    span.append(glue, w);
  }
  return span;
}

const GERMAN_WORD = /\p{L}+(?:[-'\u2019]\p{L}+)*/gu; // lens/evidence.german_words

// The training corpora of lens/evidence, as a learner reads them.
const CORPUS_NAMES = {multi30k: "captions", ding: "everyday sentences", ding_phrases: "dictionary phrases",
  ding_words: "dictionary headwords"};

/** What the training data says of one German word, in a sentence a learner reads. @param {Evidence} e */
function evidenceText(e) {
  const where = Object.entries(e.counts).map(([corpus, n]) => (CORPUS_NAMES[corpus] || corpus) + " " +
    n.toLocaleString()).join(", ");
  const seen = e.count === 0 ? "never occurs in the training data" : "occurs " + e.count.toLocaleString() +
    (e.count === 1 ? " time" : " times") + " in the training data (" + where + ")";
  return "\u2018" + e.word + "\u2019 " + seen + (e.unseen ? ": the model has to guess it from its pieces." :
    e.rare ? ": too rare to be learned well." : ".");
}

/** The German of each sentence, word by word: rare and unseen words marked; a click shows the evidence.
    @param {Explanation} x */
function evidenceLine(x) {
  const line = el("div", "al-evidence");
  line.append(el("span", "al-evidence-label", "The German in training \u2014 click a word (wavy: rare or never seen): "));
  const detail = el("div", "al-evidence-detail", "Click a German word: how often the model saw it in training, and where.");
  x.sentences.forEach((s) => {
    if (!s.evidence || !s.evidence.length) return;
    const byWord = Object.fromEntries(s.evidence.map((e) => [e.word, e]));
    const text = el("span", "al-evidence-sentence");
    let last = 0;
    for (const m of s.source.matchAll(GERMAN_WORD)) {
      text.append(s.source.slice(last, m.index));
      const e = byWord[m[0].toLowerCase().replace("\u2019", "'")];
      const w = el("button", "al-ev-word" + (e && e.unseen ? " al-ev-unseen" : e && e.rare ? " al-ev-rare" : ""), m[0]);
      w.type = "button";
      if (e) {
        w.title = evidenceText(e);
        w.addEventListener("click", () => showEvidence(detail, e));
      }
      text.append(w);
      last = m.index + m[0].length;
    }
    text.append(s.source.slice(last), " ");
    line.append(text);
  });
  if (line.childElementCount < 2) return null;
  line.append(detail);
  return line;
}

/** @param {HTMLElement} detail @param {Evidence} e */
function showEvidence(detail, e) {
  detail.replaceChildren(el("div", "al-evidence-count", evidenceText(e)));
  if (e.examples.length) {
    const list = el("ul", "al-evidence-examples");
    for (const ex of e.examples) list.append(el("li", null, ex.de + " \u2192 " + ex.en));
    detail.append(el("div", null, "In training:"), list);
  }
}

/** The warning every view shows for a sentence unlike the training data (lens/alarm.py's reasons). */
export function unfamiliarText(which, reasons) {
  return "\u26a0\ufe0f " + which + " unlike what this model learned from, so expect a rough translation: " +
    reasons.join("; ") + ".";
}

/** A view's notice element for one payload carrying `unfamiliar` and `reasons` (the step view, the head lab). */
export function unfamiliarNotice(box, x) {
  const on = !!(x && x.unfamiliar && x.reasons && x.reasons.length);
  box.hidden = !on;
  box.textContent = on ? unfamiliarText("This sentence is", x.reasons) : "";
}


const NAMED = { "?": "a question mark", "!": "an exclamation mark" };
const quoted = (words) => words.map((w) => NAMED[w] || "\u201c" + w + "\u201d").join(", ");
const MODEL_NAMES = { default: "the default model", everyday: "the everyday model" };
const NOT_GERMAN = { "no letters": "it has no words", script: "its letters are not those of German",
  english: "its words are English" };

/** Why a sentence went where it went, in one clause (lens/routed.Route). @param {Route} r */
function reason(r) {
  if (r.reads_like !== "everyday") return "it reads like a photo caption";
  return "it reads like everyday German" + (r.words.length ? " (" + quoted(r.words.slice(0, 3)) + ")" : "");
}

/** One line per sentence that says which model translated it and why, what the page recased, and whether the
    text is German at all: [class, text] each (one line for a text whose sentences all went the same way).
    @param {Explanation} x */
/** The route line's button says what a click does now. */
function otherLabel(button, shown) {
  button.textContent = shown ? "Hide the other model" : "The other model\u2019s answer";
  button.setAttribute("aria-pressed", String(shown));
}
// the comparison ticked by a link or the walk as well: every route line's button follows
document.addEventListener("change", (e) => {
  const t = /** @type {HTMLInputElement} */ (e.target);
  if (t && t.matches && t.matches("#compare input")) {
    document.querySelectorAll(".al-see-other").forEach((b) => otherLabel(/** @type {HTMLElement} */ (b), t.checked));
  }
}, true);

export function routeNotes(x) {
  const routed = x.sentences.filter((s) => s.route);
  if (!routed.length) return [];
  const out = /** @type {[string, string][]} */ ([]), many = x.sentences.length > 1;
  const groups = new Map();
  x.sentences.forEach((s, i) => {
    if (!s.route) return;
    const key = s.route.model + "|" + (s.route.other || (s.route.forced ? "forced" : s.route.reads_like));
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(i);
  });
  for (const picked of groups.values()) {
    const r = /** @type {Route} */ (x.sentences[picked[0]].route);
    const which = !many ? "" : picked.length === x.sentences.length ? "Every sentence: " :
      (picked.length > 1 ? "Sentences " : "Sentence ") + picked.map((i) => i + 1).join(", ") + ": ";
    const by = "translated by " + MODEL_NAMES[r.model], foreign = r.reads_like === "not German" && !r.forced;
    const line = r.other ? by + ", the other of the two models (the page picked " + MODEL_NAMES[r.other] + ")"
      : r.forced ? by + ", as you chose in Options"
      : foreign ? "this does not look like German (" + NOT_GERMAN[r.why] + (r.words.length ? ": " + quoted(r.words) : "") +
        "): the English is " + MODEL_NAMES[r.model] + "\u2019s guess"
      : by + ": " + reason(r);
    out.push([foreign ? "al-route al-not-german" : "al-route", (foreign ? "\u26a0\ufe0f " : "") + which +
      (which ? line : line[0].toUpperCase() + line.slice(1)) + "."]);
  }
  const recased = routed.flatMap((s) => s.route ? s.route.recased : []);
  if (recased.length) {
    out.push(["al-recased", "Read with capitals, as German is written: " +
      recased.slice(0, 6).map(([a, b]) => a + " \u2192 " + b).join(", ") + (recased.length > 6 ? ", \u2026" : "") + "."]);
  }
  return out;
}

/** What to make of an explanation: [class, text] of each notice. @param {Explanation} x */
function notices(x) {
  const out = routeNotes(x);
  x.sentences.forEach((s, i) => {
    const which = x.sentences.length > 1 ? "Sentence " + (i + 1) + " is" : "This sentence is";
    if (!s.route && s.domain && s.domain.everyday) {
      out.push(["al-everyday", which.replace(/ is$/, " reads") + " like everyday German rather than like a photo " +
        "caption, the German this model learned most from" + (s.domain.words.length ? " (" + quoted(s.domain.words) +
        ": far more common in everyday sentences)" : "") + "."]);
    }
    if (s.unfamiliar && s.reasons && s.reasons.length) {
      out.push(["al-unfamiliar", unfamiliarText(which, s.reasons)]);
    } else if (s.unfamiliar) {
      out.push(["al-unfamiliar", "\u26a0\ufe0f " + which + " unlike most of what this model learned from: expect a rough " +
        "translation (the model's mean log-probability per piece is " + s.mean_log_prob.toFixed(3) +
        "; 95% of the captions it was tested on score above " + (s.threshold ?? x.threshold) + ")."]);
    }
    if (s.truncated) {
      out.push(["al-truncated", "\u26a0\ufe0f " + which + " longer than the model's limit of " + x.max_len +
        " pieces: only its beginning was translated."]);
    }
  });
  if (x.left_out) out.push(["al-left-out", "Only the first " + x.sentences.length + " sentences were translated (" +
    x.left_out + " more left out)."]);
  return out;
}

export class Result {
  constructor(element) {
    this.root = el("div", "al-result al-empty");
    element.appendChild(this.root);
    this.top = el("div", "al-top");
    this.english = el("div", "al-english");
    this.english.setAttribute("aria-label", "English translation");
    this.english.textContent = "The English translation appears here.";
    this.status = el("div", "al-status");
    this.notes = el("div", "al-notices");
    this.staleNote = el("div", "al-stale-note", "The German or an option changed: this result is out of date.");
    // The inside views of the sentence shown: a button each, opening its panel below the buttons.
    this.inside = el("div", "al-inside");
    this.ladder = el("div", "al-ladder-panel");
    const OPENERS = { openLadder, openContributions, openPatch };
    [["When was each word decided? \u2192", "openLadder"], ["Who wrote each word? \u2192", "openContributions"],
      ["Which heads carry a word? \u2192", "openPatch"]].forEach(([label, opener]) => {
      const button = el("button", "al-open-ladder", label);
      button.type = "button";
      button.dataset.view = opener;
      button.addEventListener("click", () => {
        this.inside.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
        OPENERS[opener](this, this.ladder);
      });
      this.inside.append(button);
    });
    this.top.append(this.english, this.status, this.notes, this.staleNote, this.inside, this.ladder);
    this.root.appendChild(this.top);
    this.viewer = new Viewer(this.root, { sentencePicker: true, onSelect: (s) => this.highlight(s.sentence) });
  }

  /** The route line gets one button that shows (or hides) the other model's answer: the compare view's tick,
      on the page that has one. */
  offerOther() {
    const line = this.notes.querySelector(".al-route");
    const compare = /** @type {HTMLInputElement | null} */ (document.querySelector("#compare input"));
    if (!line || !compare || this.root.closest("#second-result")) return;
    const button = el("button", "al-see-other");
    button.type = "button";
    otherLabel(button, compare.checked);
    button.addEventListener("click", () => {
      compare.click();
      otherLabel(button, compare.checked);
      const other = document.querySelector("#second-column");
      if (other && compare.checked) setTimeout(() => other.scrollIntoView({ block: "nearest", behavior: "smooth" }), 50);
    });
    line.append(" ", button);
  }

  highlight(index) {
    /** @type {NodeListOf<HTMLElement>} */ (this.english.querySelectorAll(".al-sentence-text")).forEach((e) => e.classList.toggle("al-picked",
      +e.dataset.sentence === index && this.viewer.explanation.sentences.length > 1));
  }

  /** @param {Explanation | null} x */
  show(x) {
    this.root.classList.remove("al-stale", "al-busy");
    this.root.dataset.shown = x && x.id ? String(x.id) : ""; // which answer is on screen (tests, benchmarks)
    publish({ arrived: performance.now() }); // bench/page.py: from the answer's arrival to the map on screen
    if (!x || x.error || !x.sentences || !x.sentences.length) {
      this.root.classList.add("al-empty");
      this.english.textContent = x && x.error ? x.error : "The English translation appears here.";
      this.english.classList.toggle("al-error", !!(x && x.error));
      this.status.textContent = x && x.message ? x.message : "";
      this.notes.replaceChildren();
      this.ladder.replaceChildren();
      this.inside.hidden = true;
      this.viewer.clear();
      return;
    }
    this.root.classList.remove("al-empty");
    this.english.classList.remove("al-error");
    this.ladder.replaceChildren();
    this.inside.hidden = false;
    this.inside.querySelectorAll("button").forEach((b) => b.removeAttribute("aria-pressed"));
    this.english.replaceChildren(...x.sentences.map((s, i) => shadedSentence(s, i, (k) => this.viewer.choose("sentence", k))));
    const pieces = x.sentences.reduce((n, s) => n + s.tokens.src.length, 0);
    const out = x.sentences.reduce((n, s) => n + s.tokens.tgt.length, 0);
    this.status.textContent = [x.status.method, x.sentences.length + (x.sentences.length > 1 ? " sentences" : " sentence"),
      pieces + " German pieces \u2192 " + out + " English", x.status.ms + " ms on " + x.status.device,
      "paler words: the model was less sure"].join(" \u00b7 ");
    this.notes.replaceChildren(...notices(x).map(([cls, text]) => el("div", "al-notice " + cls, text)));
    this.offerOther();
    const evidence = evidenceLine(x);
    if (evidence) this.notes.append(evidence);
    this.viewer.show(x);
    this.highlight(this.viewer.state.sentence);
  }
}

/** js_on_load of the translate view's gr.HTML: build once, redraw when its value changes. */
export function mountResult(element, props, watch) {
  const result = new Result(element.querySelector(".al-mount") || element);
  const main = !!element.closest("#result"); // the page's own result: its sentence is every view's (walk.js)
  const second = !!element.closest("#second-result"); // the model it is compared with
  if (main || second) register(main ? "translate" : "second", result);
  // Shown once the inputs above it have rendered: until then it would be pushed down (a layout shift).
  const reveal = () => (document.querySelector("#source textarea") && document.querySelector("#translate"))
    ? requestAnimationFrame(() => {
      for (let n = element; n && n !== document.body; n = n.parentElement) if (n.id) n.classList.add("al-ready");
      // The views below appear with it: drawn before the inputs above them, they would jump down (a layout shift).
      document.querySelectorAll("#step-view, #headlab").forEach((n) => n.classList.add("al-ready"));
    }) : setTimeout(reveal, 20);
  reveal();
  const show = (x) => {
    result.show(x);
    if (main) set({ translated: x }); // walk.js follows: every view takes its sentence, the link keeps it
    if (second) set({ compared: x && x.sentences ? x : null });
  };
  if (props.value) show(props.value);
  watch("value", () => show(props.value));
  // Dark mode toggled after load: redraw with the new colours.
  new MutationObserver(() => result.viewer.explanation && result.viewer.draw())
    .observe(document.body, { attributes: true, attributeFilter: ["class"] });
}

/** The viewer outside the page (a notebook cell, a saved file, lens/standalone.py): one payload drawn as the page
    draws it. `apiRoot`, a running app's address, lets the buttons that ask the model more call its API;
    without it they are hidden. */
export function mountStandalone(element, payload, apiRoot) {
  if (apiRoot) useServer(apiRoot);
  else element.classList.add("al-standalone");
  const result = new Result(element);
  register("translate", result);
  result.show(payload);
  drawSpine(result); // the page's picture of the model, in the notebook too
  return result;
}

/** The input or an option changed: what is shown no longer answers it. */
export function markStale() {
  document.querySelectorAll(".al-result:not(.al-empty)").forEach((r) => r.classList.add("al-stale"));
}
/** A request for the viewer inside `where` (a selector; every viewer without it) has left: it shows so until
    the answer is drawn. Only a viewer that will get an answer is marked. */
export function busy(where) {
  document.querySelectorAll(where ? `${where} .al-result` : ".al-result").forEach((r) => r.classList.add("al-busy"));
}
