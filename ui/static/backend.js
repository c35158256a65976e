// @ts-check
/* Attention Lens, where the views' questions go: the app's API (POST /gradio_api/call/NAME, then its event
   stream), or the model in this page where it runs one (inside.js answers what the model alone can). The store's
   `backend` says which: "server" or "page". */
import { t } from "./i18n.js";
import { set } from "./store.js";

let apiRoot = ""; // a running app's address, for a notebook's viewer (ui/standalone.py); "" on the app's own page
/** @type {((name: string, data: any[]) => Promise<any>) | null} */
let inPage = null;

/** Ask a running app at `root` (a notebook's viewer with server=...). */
export function useServer(root) {
  apiRoot = String(root || "").replace(/\/$/, "");
  set({ backend: "server" });
}

/** Answer the views' questions in this page with `answer(name, data)` (inside.js). */
export function useInPage(answer) {
  inPage = answer;
  set({ backend: "page" });
}

/** Call endpoint `name` with `data` (its arguments in order); resolves to its answer. */
export function callApi(name, data) {
  return inPage ? inPage(name, data) : askServer(name, data);
}

/** Call a named endpoint of this app's API (POST, then read the event stream); resolves to its answer. */
async function askServer(name, data) {
  const root = apiRoot || (window.gradio_config && window.gradio_config.root) || "";
  const posted = await fetch(root + "/gradio_api/call/" + name, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ data }) });
  if (!posted.ok) throw new Error(t("backend.status", { status: posted.status }));
  const { event_id: id } = await posted.json();
  const text = await (await fetch(root + "/gradio_api/call/" + name + "/" + id)).text();
  const events = text.split("\n\n").map((block) => ({
    event: (block.match(/^event: (.*)$/m) || [])[1], data: (block.match(/^data: (.*)$/m) || [])[1] }));
  const done = events.find((e) => e.event === "complete");
  if (!done) {
    const failed = events.find((e) => e.event === "error");
    const said = failed && failed.data && failed.data !== "null" ? JSON.parse(failed.data) : t("backend.no_answer");
    throw new Error(typeof said === "string" ? said : said.error || said.message || JSON.stringify(said));
  }
  return JSON.parse(done.data)[0];
}
