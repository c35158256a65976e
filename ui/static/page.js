// @ts-check
/* Attention Lens, the app's page: the one module Gradio's views import. It brings the page's own behaviour (one
   sentence for every view and the link: walk.js; the guided walk: tour.js; "compute in my browser": browser.js)
   and mounts each view by name, importing the view's module the first time it is needed:

     import("/gradio_api/file=ui/static/page.js").then((page) => page.mount("step", element, props, watch, server));

   is the js_on_load of a view's gr.HTML (ui/assets.py writes it). */
// first: it sets the page's locale before the modules that write texts run
import { startLocale } from "./locale.js";
import { startContent } from "./content.js";
import { startGlossary } from "./glossary.js";
import "./walk.js";
import "./views.js";
import { startEmbed } from "./embed.js";
import "./tour.js";
import "./browser.js";
import "./compare.js";
import { publish } from "./door.js";
import { busy, markStale } from "./result.js";
import { view } from "./store.js";

/** Each view's mount (element, props, watch, server), from its own module. */
const MOUNTS = {
  result: () => import("./result.js").then((m) => m.mountResult),
  step: () => import("./stepthrough.js").then((m) => m.mountStep),
  headControls: () => import("./headlab.js").then((m) => m.mountHeadControls),
  headResult: () => import("./headlab.js").then((m) => m.mountHeadResult),
  attribution: () => import("./attribution.js").then((m) => m.mountAttribution),
  history: () => import("./timetravel.js").then((m) => m.mountHistory),
  copylab: () => import("./copylab.js").then((m) => m.mountCopyLab),
  lab: () => import("./lab.js").then((m) => m.mountLabView),
};

/** Build view `name` in `element`: its gr.HTML's js_on_load. */
export async function mount(name, element, props, watch, server) {
  if (!MOUNTS[name]) throw new Error(`no view named ${name}: one of ${Object.keys(MOUNTS).join(", ")}`);
  const mountView = await MOUNTS[name]();
  mountView(element, props, watch, server);
}

/** The copy lab's Train button was pressed: until the first report, it says why it may wait. */
function copyLabWaiting() {
  const lab = view("copylab");
  if (lab) lab.waiting();
}

startLocale(); // before any view is mounted: each writes its texts in the page's language
startContent();
startGlossary();

// Gradio's buttons call these before their request leaves (ui/translate.py, ui/copylab.py).
publish({ busy, markStale, copyLabWaiting });
startEmbed().catch(() => {}); // ?view=NAME&embed=1: that view alone (embed.js)
