// @ts-check
/* Attention Lens, the page's state in one place: which sentence, which view, which step, which language, which
   back end (the app's server or the model in this page), and the live object of each view. Views read it with
   `get()`, change it with `set()` and follow it with `subscribe()`; nothing of it is kept on DOM elements.

   The view objects are registered by the mount that built them (`register("translate", result)`) and found
   by name (`view("translate")`): the page's own result is "translate", the compared model's "second", then
   "step", "headlab", "history", "copylab". */

import { publish } from "./door.js";

/** @typedef {"translate" | "second" | "step" | "headlab" | "history" | "copylab"} ViewName */

/** @type {PageStore} */
const state = {
  sentence: "", view: "translate", step: null, locale: "en", backend: "server", allOpen: false, source: "de",
  translated: null, compared: null, mounted: [],
};
/** @type {Map<string, Set<(state: PageStore, changed: string[]) => void>>} */
const listeners = new Map();
/** @type {Map<string, any>} */
const views = new Map();

/** The page's state now (a copy: change it with `set`). */
export function get() {
  return { ...state };
}

/** Change some keys of the state; the listeners of each key that changed (and of "*") are called once. */
export function set(patch) {
  const changed = Object.keys(patch).filter((k) => state[k] !== patch[k]);
  if (!changed.length) return;
  Object.assign(state, patch);
  const called = new Set();
  for (const key of [...changed, "*"]) {
    for (const listener of listeners.get(key) || []) {
      if (called.has(listener)) continue;
      called.add(listener);
      listener(get(), changed);
    }
  }
}

/** Call `listener(state, changed)` whenever `key` (or any key: "*") changes; returns the way to stop. */
export function subscribe(key, listener) {
  if (!listeners.has(key)) listeners.set(key, new Set());
  listeners.get(key).add(listener);
  return () => listeners.get(key).delete(listener);
}

/** @type {Map<string, (arg: any) => void>} */
const handlers = new Map();

/** Let `handler` do the page's action `name` (walk.js opens the views: "open"). */
export function handle(name, handler) {
  handlers.set(name, handler);
}

/** Whether this page can do action `name` (a notebook's cell and the static site open no views). */
export function can(name) {
  return handlers.has(name);
}

/** Do action `name` with `arg` where this page can; returns whether it could. */
export function act(name, arg) {
  const handler = handlers.get(name);
  if (handler) handler(arg);
  return !!handler;
}

/** The view object the mount of view `name` built (a Result, the step view, ...), for the others to find. */
export function register(name, object) {
  views.set(name, object);
  set({ mounted: [...views.keys()] });
}

/** The view object of `name`, or null before its mount ran. */
export function view(name) {
  return views.get(name) || null;
}

publish({ view }); // tests, notebooks and the console find a view's object: attentionLens.view("step")
