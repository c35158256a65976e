// @ts-check
/* Attention Lens, the door's way into every view, the same on both front doors (the app and the static site):
   window.attentionLens.openView(name) opens the view for the page's sentence and resolves once the view shows it;
   an unknown name throws. viewNames() lists the names. The sections (step, head lab, time travel, copy lab) open
   through the page's "open" action (walk.js in the app, siteviews.js on the site); the translate view's inside
   panels through the result's own buttons; the glossary through its dialog. */
import { offered, publish } from "./door.js";
import { act, view as mounted } from "./store.js";

// The translate view's inside panels: the button of the result that opens each, and what the panel shows when done.
const PANELS = {
  who: ["openContributions", ".al-who-table"],
  patch: ["openPatch", ".al-patch-input"], // its swaps proposed for the sentence; a run waits for the visitor
  ladder: ["openLadder", ".al-ladder-table"],
  code: ["openCode", ".al-code-view"],
};
const SECTIONS = ["step", "headlab", "history", "copylab", "lab"];
export const VIEW_NAMES = ["translate", "step", "headlab", "who", "patch", "why", "qkv", "ladder", "history", "compare",
  "copylab", "lab", "code", "glossary"];
const TIMEOUT_MS = 120000;
const $ = (s) => /** @type {HTMLElement | null} */ (document.querySelector(s));
const same = (a, b) => !!a && !!b && a.replace(/\s+/g, " ").trim() === b.replace(/\s+/g, " ").trim();

/** The page's sentence: the one the translate view shows, as written. */
export function pageSentence() {
  const r = /** @type {any} */ (mounted("translate")), x = r && r.viewer && r.viewer.explanation;
  return x ? x.sentences.map((s) => (s.route ? s.route.written : s.source)).join(" ") : "";
}

/** The sentence each section shows now (null: none yet). */
export function sectionSentence(name) {
  const v = /** @type {any} */ (mounted(name));
  if (!v) return null;
  if (name === "step") return (v.x && v.x.source) || null;
  if (name === "headlab") return v.sentence || null;
  if (name === "history") return (v.data && v.data.text) || null;
  return null;
}

/** Resolves when `done()` is true (checked every 100 ms); rejects after TIMEOUT_MS, naming `what`. */
function until(done, what) {
  const since = Date.now();
  return new Promise((resolve, reject) => {
    const look = () => {
      let ok = false;
      try { ok = !!done(); } catch (err) { ok = false; }
      if (ok) resolve(undefined);
      else if (Date.now() - since > TIMEOUT_MS) reject(new Error(`the ${what} view did not show the page's sentence in ${TIMEOUT_MS / 1000} s`));
      else setTimeout(look, 100);
    };
    look();
  });
}

/** One of the translate view's inside panels, opened with its own button. */
async function openPanel(name) {
  const r = /** @type {any} */ (mounted("translate"));
  const [opener, shows] = PANELS[name];
  const button = r && /** @type {HTMLElement | null} */ (r.inside.querySelector(`[data-view="${opener}"]`));
  if (!button) throw new Error(`the ${name} view needs a translation first`);
  if (button.getAttribute("aria-pressed") !== "true" || !r.ladder.querySelector(shows)) button.click();
  await until(() => r.ladder.querySelector(shows), name);
  r.ladder.scrollIntoView({ block: "nearest" });
}

/** The row the map shows, opened up: its queries, keys and values (qkv.js). */
async function openQkv() {
  const r = /** @type {any} */ (mounted("translate")), v = r && r.viewer;
  if (!v || !v.openCell) throw new Error("the qkv view needs a translation first");
  if (!v.qkvPanel.querySelector(".al-qkv-strip")) v.openCell.click();
  await until(() => v.qkvPanel.querySelector(".al-qkv-strip"), "qkv");
}

/** Why this word and not another: the step view's first step, asked about its second likeliest piece. */
async function openWhy(sentence) {
  await openSection("step", sentence);
  const v = /** @type {any} */ (mounted("step"));
  await until(() => v.whyPick && v.whyPick.options.length, "why");
  const form = /** @type {HTMLFormElement} */ (v.whyPick.form);
  if (!v.whyAnswer.childElementCount) form.requestSubmit();
  await until(() => v.whyAnswer.childElementCount && !v.whyAnswer.classList.contains("st-why-busy"), "why");
}

async function openSection(name, sentence) {
  act("open", name);
  if (name === "copylab" || name === "lab") { await until(() => mounted(name), name); return; }
  await until(() => same(sectionSentence(name), sentence) || (name === "history" && sentence.startsWith(sectionSentence(name) || "\u0000")), name);
}

async function openCompare() {
  const tick = /** @type {HTMLInputElement | null} */ (document.querySelector("#compare input, #site-compare"));
  if (!tick || (tick.closest("[hidden]") && !tick.checked)) throw new Error("the compare view needs a second model");
  if (!tick.checked) tick.click();
  await until(() => { const s = /** @type {any} */ (mounted("second")); return s && s.viewer && s.viewer.explanation; }, "compare");
}

/** Open view `name` for the page's sentence; resolves once it shows it. */
export async function openView(name) {
  if (!VIEW_NAMES.includes(name)) throw new Error(`unknown view '${name}': one of ${VIEW_NAMES.join(", ")}`);
  const sentence = pageSentence();
  if (name === "translate") { const r = $("#result, #site-result"); if (r) r.scrollIntoView({ block: "start" }); return; }
  if (name === "glossary") { offered().glossary(); await until(() => /** @type {any} */ ($("dialog.al-glossary"))?.open, name); return; }
  if (!sentence && name !== "copylab" && name !== "lab") throw new Error(`the ${name} view needs a translation first`);
  if (PANELS[name]) return openPanel(name);
  if (name === "qkv") return openQkv();
  if (name === "why") return openWhy(sentence);
  if (name === "compare") return openCompare();
  if (SECTIONS.includes(name)) return openSection(name, sentence);
}

/** The lab's experiments (lab.js): {id, title, confusion, variants, run()}; run() trains A and B in the page. */
const experiments = () => import("./lab.js").then((m) => m.experiments());

publish({ openView, viewNames: () => VIEW_NAMES.slice(), experiments });
