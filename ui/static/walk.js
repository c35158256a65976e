// @ts-check
/* Attention Lens, one sentence for the whole page, and the page's state in its link.

   The German translated above is the sentence of every view: it is written into the step view's,
   the head lab's and time travel's boxes, and a view that still shows another sentence says so.
   What the visitor looks at (sentence, view, kind, layer, head, display, pieces or words, step)
   lives in the URL's fragment, #s=...&kind=cross&layer=3..., kept up to date with replaceState:
   opening the link restores the same page, with nothing stored on the server.
   window.attentionLens.state() returns it, with `views`: the sentence each view shows now (the page's
   door, door.js). writeLink and readLink are the link's format. The views it opens and reads are the store's
   (store.js): the live object each mount registered. */
import { publish } from "./door.js";
import { parts, t } from "./i18n.js";
import { get, handle, set, subscribe, view as mounted } from "./store.js";
import { drawSpine } from "./spine.js";

/** The page's state as the URL's fragment (without '#'): only what differs from a first visit, the layer
    only once the visitor chose one (`layerChosen`), the step from the second on. */
export function writeLink(st, layerChosen) {
  const p = new URLSearchParams();
  if (st.sentence) p.set("s", st.sentence);
  if (st.view !== "translate") p.set("view", st.view);
  if (st.kind !== "cross") p.set("kind", st.kind);
  if (st.layer != null && layerChosen) p.set("layer", String(st.layer));
  if (st.head != null) p.set("head", String(st.head));
  if (st.display !== "matrix") p.set("display", st.display);
  if (st.level !== "words") p.set("level", st.level);
  if (st.step != null && st.step > 1) p.set("step", String(st.step));
  if (st.compare) p.set("compare", "1");
  if (st.model && st.model !== "auto") p.set("model", st.model);
  if (st.panel) p.set("panel", st.panel);
  if (st.whole && !get().allOpen) p.set("whole", "1"); // ?open=all opens it anyway
  return p.toString();
}

/** A link's fragment ('#' optional) read back: what it sets, numbers as numbers (counted from 1); a key it
    leaves out (or leaves empty), or gives a value the page does not have, is absent (a crafted link restores what
    it can and nothing else: tests/test_links.py). */
export function readLink(fragment) {
  const p = new URLSearchParams(String(fragment).replace(/^#/, "")), out = /** @type {LinkState} */ ({});
  const sentence = p.get("s");
  if (sentence && sentence.trim()) out.sentence = sentence.slice(0, MAX_LINKED_TEXT);
  for (const [key, name] of Object.entries({ view: "view", kind: "kind", display: "display", level: "level", panel: "panel",
    model: "model" })) {
    const value = p.get(name);
    if (value && LINK_CHOICES[key].includes(value)) out[key] = value;
  }
  for (const name of ["layer", "head", "step"]) {
    const value = Number(p.get(name));
    if (p.get(name) && Number.isInteger(value) && value >= 1 && value <= MAX_LINKED_NUMBER) out[name] = value;
  }
  if (p.get("compare") === "1") out.compare = true;
  if (p.get("whole") === "1") out.whole = true;
  return out;
}

const MAX_LINKED_TEXT = 5000, MAX_LINKED_NUMBER = 1000; // a sentence longer is cut (the box refuses it in words)
// The values a link may set: the views and panels the page has, the map's choices, the models a page can name.
const LINK_CHOICES = {
  view: ["translate", "step", "headlab", "history", "copylab", "lab", "compare"], kind: ["encoder", "decoder", "cross"],
  display: ["matrix", "lines"], level: ["words", "pieces"], panel: ["ladder", "who", "patch", "qkv"],
  model: ["auto", "default", "everyday", "zh-en"],
};
const VIEWS = { translate: "#result", step: "#step-result", headlab: "#headlab-result", history: "#history" };
const SECTIONS = { translate: "#input-row", step: "#step-view", headlab: "#headlab", history: "#history-input" };
const BOXES = { step: "#step-source textarea", headlab: "#headlab-source textarea", history: "#history-source textarea" };
const GO = { step: "#step-go", headlab: "#headlab-apply", history: "#history-go" };
// The label of each view's own button (the Python side writes them), as the page's locale names it.
const LABEL = { get step() { return t("walk.button.step"); }, get headlab() { return t("walk.button.headlab"); },
  get history() { return t("walk.button.history"); } };
// Each view's section of the page: closed (class al-closed) until the picture, the walk or a link opens it.
const CONTAINERS = { step: "#view-step", headlab: "#view-headlab", history: "#view-history", copylab: "#view-copylab", lab: "#view-lab" };
const $ = (s) => document.querySelector(s);
let restoring = null, started = false;
const link = readLink(location.hash); // read before anything rewrites it

function mainViewer() { const r = mainResult(); return r ? r.viewer : null; }
function mainResult() { return mounted("translate"); }

/** The sentence a view shows now (null: nothing yet). */
function shown(name) {
  if (name === "translate") {
    const x = mainViewer() && mainViewer().explanation;
    return x ? x.sentences.map((s) => (s.route ? s.route.written : s.source)).join(" ") : null;
  }
  const v = mounted(name);
  if (!v) return null;
  return name === "step" ? (v.x && v.x.source) || null : name === "headlab" ? v.sentence || null
    : (v.data && v.data.text) || null;
}

// The translate view's inside panels, by the name a link gives them, and the button of the result that opens each.
const PANELS = { ladder: "openLadder", who: "openContributions", patch: "openPatch" };

/** The inside panel open in the translate view: one the result's buttons opened, or the Q/K/V walk-through. */
function openPanel() {
  const r = mainResult(), v = mainViewer();
  if (!r) return null;
  const pressed = r.inside.querySelector("[aria-pressed='true']");
  const name = pressed && Object.keys(PANELS).find((k) => PANELS[k] === /** @type {HTMLElement} */ (pressed).dataset.view);
  if (name && r.ladder.childElementCount) return name;
  return v && v.qkvPanel.childElementCount ? "qkv" : null;
}

export function state() {
  const v = mainViewer(), s = v ? v.state : {}, step = mounted("step");
  return {
    sentence: shown("translate") || ($("#source textarea") || {}).value || "",
    view: get().view, kind: s.kind || "cross", layer: v && v.layer != null ? v.layer + 1 : null,
    head: s.head == null ? null : s.head + 1, display: s.view || "matrix", level: s.level || "words",
    step: step && step.x && step.x.greedy ? step.state.t + 1 : null,
    compare: !!(/** @type {HTMLInputElement | null} */ ($("#compare input")) || { checked: false }).checked,
    model: (/** @type {HTMLInputElement | null} */ ($("#model-choice input:checked")) || { value: "auto" }).value,
    panel: openPanel(), whole: !!($("#result .al-spine") && /** @type {HTMLElement} */ ($("#result .al-spine")).dataset.whole),
    views: Object.fromEntries(Object.keys(VIEWS).map((n) => [n, shown(n)])),
  };
}

/** The state in the URL's fragment (only what differs from a first visit). */
function save() {
  if (restoring) return;
  const fragment = writeLink(state(), !!(mainViewer() && mainViewer().state.layer != null));
  history.replaceState(null, "", location.pathname + location.search + "#" + fragment);
}
export { save as saveState };

/** Write `text` into a Gradio textbox as typing would (Gradio listens to input events). */
function type(selector, text) {
  const box = $(selector);
  if (!box || box.value === text) return;
  box.value = text;
  box.dispatchEvent(new Event("input", { bubbles: true }));
}

/** The other views take the sentence; one that shows another sentence says how to update it. */
function share(text) {
  for (const name of Object.keys(BOXES)) {
    type(BOXES[name], text);
    const root = $(VIEWS[name]), now = shown(name);
    if (!root) continue;
    const stale = now && now !== text;
    root.classList.toggle("al-other-sentence", !!stale);
    if (stale) root.dataset.otherSentence = t("walk.other_sentence", { sentence: now.slice(0, 60) +
      (now.length > 60 ? "\u2026" : ""), button: LABEL[name] });
  }
}

/** Open a view for the page's sentence: its section shown, its own button pressed where it shows another
    sentence or none, and brought into sight. "compare" ticks the second model. */
export function openView(name) {
  if (name === "compare") {
    const tick = /** @type {HTMLInputElement | null} */ ($("#compare input"));
    if (tick && !tick.checked) tick.click();
    const box = $("#compare");
    if (box) box.scrollIntoView({ block: "nearest", behavior: "smooth" });
    return;
  }
  const section = $(CONTAINERS[name]);
  if (!section) return;
  section.classList.remove("al-closed");
  set({ view: name });
  const text = shown("translate");
  if (text) share(text);
  if (GO[name] && $(GO[name]) && text && shown(name) !== text) setTimeout(() => $(GO[name]).click(), 50);
  section.scrollIntoView({ block: "start", behavior: "smooth" });
  save();
}
handle("open", openView); // the picture's blocks and the walk's stops (spine.js, tour.js)
publish({ state }); // openView: views.js, the same on the static site

/** Every view's section open, and the picture's whole-model views (?open=all: tests, screenshots). */
export function openAll() {
  for (const sel of Object.values(CONTAINERS)) { const n = $(sel); if (n) n.classList.remove("al-closed"); }
  document.querySelectorAll("#result .al-toolbar").forEach((t) => t.classList.add("al-extras-shown"));
  set({ allOpen: true }); // the picture's whole-model views too (spine.js), now and when it is drawn again
  document.querySelectorAll(".al-spine-toggle[aria-expanded='false']").forEach((b) => /** @type {HTMLElement} */ (b).click());
}


/** The route line of the main result gets the other model's translation of the same text, and where its maps
    are (beside this one, or below on a narrow screen), once the visitor asked for it. */
function fillOther() {
  const note = $("#result .al-route"), main = mainResult();
  if (!note || !main || !main.viewer.explanation) return;
  const text = (x) => x.sentences.map((s) => s.source).join(" ");
  const old = note.querySelector(".al-route-other");
  const secondShown = get().compared; // the other model's last explanation
  if (!secondShown || text(secondShown) !== text(main.viewer.explanation)) { if (old) old.remove(); return; }
  const line = old || note.appendChild(document.createElement("div"));
  line.className = "al-route-other";
  const first = $("#result"), other = $("#second-result");
  const beside = first && other && other.getBoundingClientRect().left >= first.getBoundingClientRect().right - 5;
  const english = document.createElement("b");
  english.setAttribute("lang", "en");
  english.textContent = t("walk.quoted", { text: secondShown.sentences.map((s) => s.translation).join(" ") });
  line.replaceChildren(...(beside ? parts("walk.other_writes_beside", { english }) : parts("walk.other_writes_below", { english })));
}
subscribe("compared", fillOther); // the other model drew a translation

/** The main result drew a translation: every view takes its sentence, and the link keeps it. */
function onMainResult() {
  const text = shown("translate");
  if (mainResult()) drawSpine(mainResult());
  set({ sentence: text || "" });
  if (!started) return; // the first visit's result, drawn before the link is read
  fillOther();
  if (text) share(text);
  if (restoring && text === restoring.sentence) finishRestore();
  else if (!restoring) save();
}

subscribe("translated", onMainResult);

/** Opened from a link: translate its sentence, then set the viewer as the link says. */
function restore() {
  const text = link.sentence;
  started = true;
  if (!text) { onMainResult(); return; }
  restoring = link;
  const go = () => {
    if (shown("translate") === text && !link.model) { finishRestore(); return; }
    translateOnce(text, 0); // (a model just chosen translates the box again: its answer finishes the restore)
  };
  if (link.model && link.model !== "auto") chooseModel(link.model, go); else go();
}

/** The model of a link chosen in Options before its sentence is translated: Options opened (its choices are
    drawn only then), the choice clicked once it is there. */
function chooseModel(model, then) {
  const pick = () => /** @type {HTMLInputElement | null} */ ($(`#model-choice input[value="${CSS.escape(model)}"]`));
  let tries = 0, opened = false;
  const wait = () => {
    const input = pick(), options = /** @type {HTMLElement | null} */ ($("#options > button"));
    if (input && input.checked) { then(); return; }
    if (input) input.click(); // checked on the next look (Gradio may still be binding its events)
    else if (options && !opened) { options.click(); opened = true; } // its choices are drawn once it is open
    if (tries++ < 200) setTimeout(wait, 100); // a page still starting under load: up to 20 s
    else then();
  };
  wait();
}

/** Type the link's sentence and press Translate, again until Gradio has taken it (it may still be
    starting, and set the box to its first value after us). */
function translateOnce(text, tries) {
  if (!restoring || shown("translate") === text || tries > 40) return;
  const box = $("#source textarea");
  if (box && box.value !== text) type("#source textarea", text);
  else if ($("#translate") && tries % 10 === 1) $("#translate").click(); // once typed; again if no answer came
  setTimeout(() => translateOnce(text, tries + 1), 250);
}

function finishRestore() {
  const p = restoring, v = mainViewer();
  restoring = null;
  if (v && v.explanation) {
    const layers = v.explanation.layers || {}, heads = v.explanation.heads || 0;
    if (p.kind && Object.hasOwn(layers, p.kind)) v.choose("kind", p.kind);
    if (p.layer !== undefined && p.layer <= (layers[v.state.kind] || 0)) v.choose("layer", p.layer - 1);
    if (p.head !== undefined && p.head <= heads) v.choose("head", p.head - 1);
    if (p.display) v.choose("view", p.display);
    if (p.level) v.choose("level", p.level);
  }
  const name = p.view;
  share(shown("translate") || "");
  const r = mainResult();
  if (p.whole && r) { const t = /** @type {HTMLElement | null} */ (r.root.querySelector(".al-spine-toggle[aria-expanded='false']")); if (t) t.click(); }
  const opener = p.panel && r && Object.hasOwn(PANELS, p.panel) ? r.inside.querySelector(`[data-view="${PANELS[p.panel]}"]`) : null;
  if (opener) /** @type {HTMLElement} */ (opener).click();
  else if (p.panel === "qkv" && v && v.openCell) v.openCell.click();
  if (p.compare) openView("compare");
  if (name && Object.hasOwn(SECTIONS, name)) {
    set({ view: name });
    const section = $(CONTAINERS[name]);
    if (section) section.classList.remove("al-closed");
    if (GO[name] && $(GO[name])) setTimeout(() => $(GO[name]).click(), 100);
    const target = $(SECTIONS[name]);
    if (target) target.scrollIntoView({ block: "start" });
    if (name === "step" && p.step !== undefined) stepTo(p.step - 1, Date.now());
  } else if (name && name !== "compare" && Object.hasOwn(CONTAINERS, name)) openView(name);
  save();
}

function stepTo(t, since) {
  const step = mounted("step");
  if (step && step.x && step.x.greedy && step.x.source === shown("translate")) step.go(t);
  else if (Date.now() - since < 30000) setTimeout(() => stepTo(t, since), 200);
}

// Which view the visitor works in: the section of the last click. Any click may change the state.
document.addEventListener("click", (e) => {
  const target = /** @type {HTMLElement} */ (e.target), result = mainResult();
  // a click in the map may pick another word: the picture's figures follow it
  if (result && result.root.contains(target) && target.closest(".al-viewer")) {
    setTimeout(() => drawSpine(result), 0);
  }
  for (const [name, sel] of Object.entries(VIEWS)) {
    const section = $(SECTIONS[name]);
    if ((section && section.contains(e.target)) || ($(sel) && $(sel).contains(e.target))) set({ view: name });
  }
  save(); // the viewer's own click handler has run: its state is the new one
  setTimeout(save, 0);
});

if (new URLSearchParams(location.search).get("open") === "all") { // every view's section open (tests, screenshots)
  (function openWhenBuilt(since) {
    if ($(CONTAINERS.step) && $("#result .al-toolbar")) openAll(); else if (Date.now() - since < 60000) setTimeout(() => openWhenBuilt(since), 50);
  })(Date.now());
}

// The link is read once the translate view is built and its German box is on the page.
const stop = subscribe("mounted", (st) => {
  if (!st.mounted.includes("translate")) return;
  stop();
  (function start(since) {
    if ($("#source textarea")) restore();
    else if (Date.now() - since < 60000) setTimeout(() => start(since), 50);
  })(Date.now());
});
