// @ts-check
/* Attention Lens, the static site's views beside the translation: each is the app's own view module, mounted as
   the app mounts it (its element, its props, a watch on its value, its server functions), with the page's model
   as its back end instead of the app's server. Each view's modules are fetched when the visitor first uses it.

   The step-through (stepthrough.js, answered by steptrace.js): the words so far at every step, the likeliest next
   pieces, what-if forcing and the beam tree. The head lab (headlab.js, answered by ablation.js): heads switched
   off in its grids and the sentence translated again. The copy lab (copylab.js, trained by copytrain.js): a tiny
   Transformer learning to copy, its gradients from a backward pass written by hand (backprop.js). */
import { offered, publish } from "./door.js";
import { get, handle, set } from "./store.js";
import { pageSentence, sectionSentence } from "./views.js";

const $ = (s) => /** @type {HTMLElement} */ (document.querySelector(s));

/** A view's props and watch, as Gradio's gr.HTML hands them to js_on_load: set(value) redraws it. */
function mountPoint() {
  const props = { value: null }, watchers = [];
  return { props, watch: (_name, fn) => watchers.push(fn), set: (value) => { props.value = value; watchers.forEach((fn) => fn()); } };
}

/** `mount()` once, when the view's section is first opened or used; resolves to what it made. */
function onFirstUse(name, mount) {
  let made = /** @type {Promise<any> | null} */ (null);
  const once = () => (made = made || mount());
  $(`#site-${name}`).addEventListener("toggle", (e) => { if (/** @type {HTMLDetailsElement} */ (e.target).open) once(); });
  return once;
}

/** The step view: the app's stepthrough.js, answered by steptrace.js. */
function startStep(lens) {
  const go = /** @type {HTMLButtonElement} */ ($("#site-step-go")), box = /** @type {HTMLInputElement} */ ($("#site-step-source"));
  const beams = /** @type {HTMLInputElement} */ ($("#site-step-beams"));
  const mount = onFirstUse("step", () => Promise.all([import("./stepthrough.js"), import("./steptrace.js")]).then(([view, trace]) => {
    const server = trace.stepServer(lens), point = mountPoint();
    view.mountStep($("#site-step-result"), point.props, point.watch, server);
    publish({ stepForce: server.force, stepHypothesis: server.hypothesis });
    return { server, point };
  }));
  const step = async (text, numBeams = 4, model = "auto") => {
    const { server, point } = await mount();
    document.querySelectorAll("#site-step .st-view").forEach((v) => v.classList.add("st-busy"));
    await new Promise((r) => setTimeout(r, 0)); // the view dims before the work starts
    const x = await server.run(text, numBeams, model);
    point.set(x);
    return x;
  };
  go.addEventListener("click", () => step(box.value, Number(beams.value)));
  box.addEventListener("keydown", (e) => { if (e.key === "Enter") step(box.value, Number(beams.value)); });
  go.disabled = false;
  publish({ step });
}

/** The head lab: the app's headlab.js (its grids and its result), answered by ablation.js; its grid's figures are
    the checkpoint's head importance (heads.json), fetched when the lab is first opened. */
function startHeadLab(lens) {
  const go = /** @type {HTMLButtonElement} */ ($("#site-headlab-go")), box = /** @type {HTMLInputElement} */ ($("#site-headlab-source"));
  const mount = onFirstUse("headlab", async () => {
    const [lab, answer, heads] = await Promise.all([import("./headlab.js"), import("./ablation.js"),
      fetch(lens.base + (lens.site.heads || "heads.json")).then((r) => (r.ok ? r.json() : null))]);
    const importance = heads || { layers: { encoder: lens.config.n_encoder_layers, decoder: lens.config.n_decoder_layers,
      cross: lens.config.n_decoder_layers }, heads: lens.config.n_heads, importance: null };
    lab.mountHeadControls($("#site-headlab-controls"), { value: importance });
    const point = mountPoint();
    lab.mountHeadResult($("#site-headlab-result"), point.props, point.watch);
    return { run: answer.headLabServer(lens), point, mask: () => offered().headMask() };
  });
  const headLab = async (text, mask) => {
    const { run, point, mask: grids } = await mount();
    offered().labBusy("site-headlab-result");
    await new Promise((r) => setTimeout(r, 0));
    const x = await run(text, mask ?? grids());
    point.set(x);
    return x;
  };
  go.addEventListener("click", () => headLab(box.value));
  box.addEventListener("keydown", (e) => { if (e.key === "Enter") headLab(box.value); });
  go.disabled = false;
  publish({ headLab });
}

/** The copy lab: the app's copylab.js, its model trained in the page (copytrain.js, backprop.js). A new run stops
    the one before it. */
function startCopyLab() {
  const go = /** @type {HTMLButtonElement} */ ($("#site-copylab-go"));
  const value = (name) => /** @type {HTMLInputElement} */ ($(`#site-copylab-${name}`)).value;
  const mount = onFirstUse("copylab", () => Promise.all([import("./copylab.js"), import("./copytrain.js")]).then(([lab, train]) => {
    const point = mountPoint();
    lab.mountCopyLab($("#site-copylab-result"), point.props, point.watch);
    return { train, point };
  }));
  let run = 0;
  const copyLab = async (settings) => {
    const { train, point } = await mount(), mine = ++run;
    try {
      const s = train.checkedSettings(settings);
      point.set({ id: Date.now(), starting: true, total: s.steps, limit: train.TIME_LIMIT_S });
      await new Promise((r) => setTimeout(r, 0));
      return await train.trainCopy(s, (report) => mine === run && point.set(report), () => mine !== run);
    } catch (err) {
      const x = { id: Date.now(), error: String(err.message || err).slice(0, 300) };
      point.set(x);
      return x;
    }
  };
  go.addEventListener("click", () => copyLab({ n_layers: value("layers"), n_heads: value("heads"), d_model: value("width"),
    lr: value("lr"), steps: value("steps") }));
  go.disabled = false;
  publish({ copyLab });
}

/** The lab: the app's lab.js, mounted when its section first opens; its runs train in workers (labworker.js). */
function startLab() {
  const section = /** @type {HTMLDetailsElement | null} */ ($("#site-lab"));
  if (!section) return;
  let mounted = null;
  const mount = () => { if (!mounted) mounted = import("./lab.js").then((m) => m.mountLab($("#site-lab-result"))); return mounted; };
  section.addEventListener("toggle", () => { if (section.open) mount(); });
  if (section.open) mount();
}

/** Time travel: the app's timetravel.js, each snapshot read by the page when the slider first shows it (travel.js). */
function startHistory(lens) {
  const go = /** @type {HTMLButtonElement} */ ($("#site-history-go")), box = /** @type {HTMLInputElement} */ ($("#site-history-source"));
  const mount = onFirstUse("history", () => Promise.all([import("./timetravel.js"), import("./travel.js")]).then(async ([view, travel]) => {
    const server = travel.travelServer(lens), point = mountPoint();
    view.mountHistory($("#site-history-result"), point.props, point.watch, server);
    server.onShow((x) => point.set(x));
    try {
      point.set({ id: Date.now(), source: "snapshots", snapshots: (await server.catalog()).snapshots });
    } catch (err) {
      point.set({ id: Date.now(), error: String(err.message || err) });
    }
    return { server, point };
  }));
  const travel = async (text) => {
    const { server, point } = await mount();
    try { point.set(await server.run(text)); } catch (err) { point.set({ id: Date.now(), error: String(err.message || err) }); }
    return point.props.value;
  };
  go.addEventListener("click", () => travel(box.value));
  box.addEventListener("keydown", (e) => { if (e.key === "Enter") travel(box.value); });
  go.disabled = false;
  publish({ travel, travelTo: async (i) => { const { server, point } = await mount(); await server.want(i); return point.props.value; } });
}

/** The picture's whole-model blocks and the walk open a view (store.js's "open"): its section, unfolded, with the
    page's sentence in it, run. */
function opening(name) {
  if (name === "compare") { // the second model beside the first: the tick under the sentence
    const tick = /** @type {HTMLInputElement | null} */ (document.querySelector("#site-compare"));
    if (tick && !tick.checked) tick.click();
    if (tick) tick.scrollIntoView({ block: "nearest", behavior: "smooth" });
    return;
  }
  const section = /** @type {HTMLDetailsElement | null} */ (document.querySelector(`#site-${name}`));
  if (!section) return;
  section.open = true;
  set({ view: name });
  const source = /** @type {HTMLInputElement | null} */ (section.querySelector("input[type=text]"));
  const sentence = pageSentence() || /** @type {HTMLTextAreaElement} */ ($("#site-source")).value.trim();
  if (source && sentence && source.value !== sentence) {
    source.value = sentence;
    const go = /** @type {HTMLButtonElement | null} */ (section.querySelector("button[id$='-go']"));
    if (go && name !== "copylab") go.click();
  }
  section.scrollIntoView({ block: "start", behavior: "smooth" });
}

/** Every view of the site beside the translation, on `lens` (inpage.js's loaded model). */
export function startSiteViews(lens) {
  startStep(lens);
  startHeadLab(lens);
  startCopyLab();
  startLab();
  startHistory(lens);
  handle("open", opening);
  // The door's state(), as the app's (walk.js) has it: the page's sentence, the view last opened, each view's sentence.
  publish({ state: () => ({ sentence: pageSentence(), view: get().view || "translate",
    views: { translate: pageSentence() || null, ...Object.fromEntries(["step", "headlab", "history"].map((n) => [n, sectionSentence(n)])) } }) });
}
