// @ts-check
/* Attention Lens, the static site's views beside the translation: each is the app's own view module, mounted as
   the app mounts it (its element, its props, a watch on its value, its server functions), with the page's model
   as its back end instead of the app's server. Each view's modules are fetched when the visitor first uses it.

   The step-through (stepthrough.js, answered by steptrace.js): the words so far at every step, the likeliest next
   pieces, what-if forcing and the beam tree. */
import { publish } from "./door.js";

const $ = (s) => /** @type {HTMLElement} */ (document.querySelector(s));

/** A view's props and watch, as Gradio's gr.HTML hands them to js_on_load: set(value) redraws it. */
function mountPoint() {
  const props = { value: null }, watchers = [];
  return { props, watch: (_name, fn) => watchers.push(fn), set: (value) => { props.value = value; watchers.forEach((fn) => fn()); } };
}

/** The step view: mounted on its first use, run by the page's model. */
function startStep(lens) {
  const go = /** @type {HTMLButtonElement} */ ($("#site-step-go")), box = /** @type {HTMLInputElement} */ ($("#site-step-source"));
  const beams = /** @type {HTMLInputElement} */ ($("#site-step-beams"));
  let mounted = /** @type {Promise<any> | null} */ (null);
  const mount = () => (mounted = mounted || Promise.all([import("./stepthrough.js"), import("./steptrace.js")]).then(([view, trace]) => {
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

/** Every view of the site beside the translation, on `lens` (inpage.js's loaded model). */
export function startSiteViews(lens) {
  startStep(lens);
}
