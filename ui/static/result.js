// @ts-check
/* Attention Lens, the translate view's result: the English text shaded by the model's confidence,
   what to make of it (notices), and the viewer under it. Fed by the value of a gr.HTML component. */
import { el } from "./draw.js";
import { SPECIAL } from "./core.js";
import { drawSpine } from "./spine.js";
import { Viewer } from "./viewer.js";
import { useServer } from "./backend.js";
import { publish } from "./door.js";
import { localeOf } from "./locale.js";
import { answerText, fixed, list, number, percent, plural, t } from "./i18n.js";
import { openCode } from "./code.js";
import { openLadder } from "./ladder.js";
import { openPatch } from "./patchlab.js";
import { register, set } from "./store.js";
import { openContributions } from "./who.js";

/** The English of one sentence, word by word, paler where the model was less sure.
    @param {Sentence} sentence @param {number} index @param {(index: number) => void} onPick */
function shadedSentence(sentence, index, onPick) {
  const span = el("span", "al-sentence-text");
  span.dataset.sentence = String(index);
  span.title = t("result.sentence_pick", { n: index + 1 });
  span.addEventListener("click", () => onPick(index));
  for (const [word, pieces] of sentence.words.tgt) {
    if (SPECIAL[word]) continue;
    const p = pieces.reduce((acc, i) => acc * (sentence.probs[i] ?? 1), 1); // the word's probability
    const w = el("span", "al-word" + (p < 0.5 ? " al-unsure" : ""), word);
    w.style.opacity = (0.45 + 0.55 * p).toFixed(2);
    w.title = t("result.word_probability", { word, p: fixed(p, 2) });
    // A space where the text has one: before a word whose first piece starts with '▁' ("I'm" stays whole).
    const first = sentence.tokens.tgt[pieces[0]] || "";
    const glue = first.startsWith("\u2581") ? " " : /^[.,;:!?)\]'’”]/.test(word) || span.childElementCount ? "" : " ";
    span.append(glue, w);
  }
  return span;
}

const GERMAN_WORD = /\p{L}+(?:[-'\u2019]\p{L}+)*/gu; // lens/evidence.german_words

// The training corpora of lens/evidence, as a learner reads them.
const CORPUS_NAMES = {
  get multi30k() { return t("result.corpus.multi30k"); },
  get ding() { return t("result.corpus.ding"); },
  get ding_phrases() { return t("result.corpus.ding_phrases"); },
  get ding_words() { return t("result.corpus.ding_words"); },
};

/** What the training data says of one German word, in a sentence a learner reads. @param {Evidence} e */
function evidenceText(e) {
  const verdict = e.unseen ? t("result.verdict_unseen") : e.rare ? t("result.verdict_rare") : t("result.verdict_known");
  if (e.count === 0) return t("result.evidence_never", { word: e.word, verdict });
  const where = list(Object.entries(e.counts).map(([corpus, n]) => t("result.corpus_count",
    { corpus: CORPUS_NAMES[corpus] || corpus, count: number(n) })));
  return plural("result.evidence_seen", e.count, { word: e.word, where, verdict });
}

/** The German of each sentence, word by word: rare and unseen words marked; a click shows the evidence.
    @param {Explanation} x */
function evidenceLine(x) {
  const line = el("div", "al-evidence");
  line.append(el("span", "al-evidence-label", t("result.evidence_label")));
  const detail = el("div", "al-evidence-detail", t("result.evidence_hint"));
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
    const examples = el("ul", "al-evidence-examples");
    for (const ex of e.examples) examples.append(el("li", null, t("result.evidence_example", { de: ex.de, en: ex.en })));
    detail.append(el("div", null, t("result.evidence_examples")), examples);
  }
}

/** Sentence `index` (from 0) as the subject of a notice; null: "This sentence" (a text of one sentence). */
const subject = (index) => (index == null ? t("result.this_sentence") : t("result.sentence_n", { n: index + 1 }));

/** One of the alarm's reasons (training_data/alarm.py's judge) in the page's words. @param {Alarm} a */
function alarmText(a) {
  if (a.kind === "unsure") return t("result.alarm.unsure", { mean: fixed(a.mean, 2), below: fixed(a.below, 2) });
  if (a.kind === "rare") {
    const words = list(a.words.map(([word, n]) => t("result.alarm.word", { word,
      count: n === 0 ? t("result.alarm.never") : t("result.alarm.times", { n: number(n) }) })));
    return t("result.alarm.rare", { share: percent(a.share), fewer: number(a.fewer_than), words });
  }
  return t("result.alarm.pairs", { unseen: number(a.unseen), pairs: number(a.pairs),
    listed: list(a.listed.map((pair) => t("result.quoted", { word: pair }))) });
}

/** The warning every view shows for a sentence unlike the training data: of sentence `index` (from 0), or of "this
    sentence" where `index` is null; its reasons from `alarms` in the page's words (else `reasons`, as sent). */
export function unfamiliarText(index, reasons, alarms) {
  const said = alarms && alarms.length ? alarms.map(alarmText) : reasons;
  return t("result.unfamiliar", { sentence: subject(index), reasons: said.join(t("result.alarm.separator")) });
}

/** A view's notice element for one payload carrying `unfamiliar` and `reasons` (the step view, the head lab). */
export function unfamiliarNotice(box, x) {
  const on = !!(x && x.unfamiliar && x.reasons && x.reasons.length);
  box.hidden = !on;
  box.textContent = on ? unfamiliarText(null, x.reasons, x.alarms) : "";
}


const NAMED = { get "?"() { return t("result.question_mark"); }, get "!"() { return t("result.exclamation_mark"); } };
const quoted = (words) => list(words.map((w) => NAMED[w] || t("result.quoted", { word: w })));
const MODEL_NAMES = { get default() { return t("result.model.default"); }, get everyday() { return t("result.model.everyday"); },
  get "zh-en"() { return t("result.model.chinese"); } };
// Why a text is not German (training_data/language.py's codes), in words.
const NOT_GERMAN = {
  get "no letters"() { return t("result.not_german.no_letters"); },
  get script() { return t("result.not_german.script"); },
  get english() { return t("result.not_german.english"); },
};

/** Why a sentence went where it went, in one clause (lens/routed.Route). @param {Route} r */
function reason(r) {
  if (r.reads_like === "Chinese") return t("result.reason_chinese");
  if (r.reads_like !== "everyday") return t("result.reason_caption");
  return r.words.length ? t("result.reason_everyday_words", { words: quoted(r.words.slice(0, 3)) }) : t("result.reason_everyday");
}

/** One line per sentence that says which model translated it and why, what the page recased, and whether the
    text is German at all: [class, text] each (one line for a text whose sentences all went the same way).
    @param {Explanation} x */
/** The route line's button says what a click does now. */
function otherLabel(button, shown) {
  button.textContent = shown ? t("result.hide_other") : t("result.see_other");
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
    const model = MODEL_NAMES[r.model], foreign = r.reads_like === "not German" && !r.forced;
    const line = r.other ? t("result.route_other", { model, picked: MODEL_NAMES[r.other] })
      : r.forced ? t("result.route_forced", { model })
      : r.reads_like === "Chinese" && r.model !== "zh-en" ? t("result.route_chinese_no_model", { model })
      : foreign ? (r.words.length ? t("result.route_foreign_words", { why: NOT_GERMAN[r.why], words: quoted(r.words), model })
        : t("result.route_foreign", { why: NOT_GERMAN[r.why], model }))
      : t("result.route_reason", { model, reason: reason(r) });
    const text = !many ? line[0].toUpperCase() + line.slice(1)
      : picked.length === x.sentences.length ? t("result.route_every", { line })
      : plural("result.route_sentences", picked.length, { sentences: list(picked.map((i) => String(i + 1))), line });
    out.push([foreign ? "al-route al-not-german" : "al-route", foreign ? t("result.warning", { text }) : text]);
  }
  for (const chinese of [false, true]) { // German recased or given its umlauts; Chinese read in Simplified characters
    const recased = routed.flatMap((s) => s.route && (s.route.reads_like === "Chinese") === chinese ? s.route.recased : []);
    if (!recased.length) continue;
    const changes = recased.slice(0, 6).map(([a, b]) => t("result.recased_change", { from: a, to: b }));
    const all = list(recased.length > 6 ? [...changes, "\u2026"] : changes);
    out.push(["al-recased", chinese ? t("result.simplified", { changes: all }) : t("result.recased", { changes: all })]);
  }
  return out;
}

/** What to make of an explanation: [class, text] of each notice. @param {Explanation} x */
function notices(x) {
  const out = routeNotes(x);
  x.sentences.forEach((s, i) => {
    const index = x.sentences.length > 1 ? i : null, sentence = subject(index);
    if (!s.route && s.domain && s.domain.everyday) {
      out.push(["al-everyday", s.domain.words.length ? t("result.everyday_words", { sentence, words: quoted(s.domain.words) })
        : t("result.everyday", { sentence })]);
    }
    if (s.unfamiliar && s.reasons && s.reasons.length) {
      out.push(["al-unfamiliar", unfamiliarText(index, s.reasons, s.alarms)]);
    } else if (s.unfamiliar) {
      out.push(["al-unfamiliar", t("result.unsure", { sentence, mean: fixed(s.mean_log_prob, 3),
        threshold: String(s.threshold ?? x.threshold) })]);
    }
    if (s.truncated) out.push(["al-truncated", t("result.truncated", { sentence, max: x.max_len })]);
  });
  if (x.left_out) out.push(["al-left-out", t("result.left_out", { shown: x.sentences.length, more: x.left_out })]);
  return out;
}

export class Result {
  constructor(element) {
    this.root = el("div", "al-result al-empty");
    element.appendChild(this.root);
    this.top = el("div", "al-top");
    this.english = el("div", "al-english");
    this.english.setAttribute("aria-label", t("result.english_label"));
    this.english.textContent = t("result.empty");
    this.status = el("div", "al-status");
    this.notes = el("div", "al-notices");
    this.staleNote = el("div", "al-stale-note", t("result.stale"));
    // The inside views of the sentence shown: a button each, opening its panel below the buttons.
    this.inside = el("div", "al-inside");
    this.ladder = el("div", "al-ladder-panel");
    const OPENERS = { openLadder, openContributions, openPatch, openCode };
    [[t("result.open_ladder"), "openLadder"], [t("result.open_contributions"), "openContributions"],
      [t("result.open_patch"), "openPatch"], [t("result.open_code"), "openCode"]].forEach(([label, opener]) => {
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
  /** @param {Explanation} x */
  offerOther(x) {
    const line = this.notes.querySelector(".al-route");
    const compare = /** @type {HTMLInputElement | null} */ (document.querySelector("#compare input"));
    if (!line || !compare || this.root.closest("#second-result")) return;
    // Chinese has one model: no other translation to offer
    if (x.sentences.every((s) => s.route && s.route.model === "zh-en")) return;
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
      this.english.textContent = x && x.error ? answerText(x) : t("result.empty");
      this.english.classList.toggle("al-error", !!(x && x.error));
      this.status.textContent = answerText(x, "message");
      this.notes.replaceChildren();
      this.ladder.replaceChildren();
      this.inside.hidden = true;
      this.viewer.clear();
      return;
    }
    this.root.classList.remove("al-empty");
    this.english.classList.remove("al-error");
    // the lesson says "Chinese" where it said "German" (i18n.js) when every sentence is the Chinese model's
    const chinese = x.sentences.every((s) => s.route && s.route.model === "zh-en");
    if (!this.root.closest("#second-result, #site-second-result")) set({ source: chinese ? "zh" : "de" });
    this.ladder.replaceChildren();
    this.inside.hidden = false;
    this.inside.querySelectorAll("button").forEach((b) => b.removeAttribute("aria-pressed"));
    this.english.replaceChildren(...x.sentences.map((s, i) => shadedSentence(s, i, (k) => this.viewer.choose("sentence", k))));
    const pieces = x.sentences.reduce((n, s) => n + s.tokens.src.length, 0);
    const out = x.sentences.reduce((n, s) => n + s.tokens.tgt.length, 0);
    const beams = x.options && x.options.num_beams;
    const method = !beams ? x.status.method : beams === 1 ? t("result.greedy") : t("result.beam_search", { n: number(beams) });
    this.status.textContent = t("result.status", { method, sentences: plural("result.sentences",
      x.sentences.length), pieces, out, ms: x.status.ms, device: x.status.device });
    this.notes.replaceChildren(...notices(x).map(([cls, text]) => el("div", "al-notice " + cls, text)));
    this.offerOther(x);
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

/** The viewer outside the page (a notebook cell, a saved file, ui/standalone.py): one payload drawn as the page
    draws it. `apiRoot`, a running app's address, lets the buttons that ask the model more call its API;
    without it they are hidden. `locale` ("en", "zh-CN"): the language it speaks (else the browser's). */
export function mountStandalone(element, payload, apiRoot, locale) {
  set({ locale: locale || localeOf(navigator.language) || "en" }); // the notebook's browser language, unless told
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
