// @ts-check
/* Attention Lens, the guided walk: eight stops through the sentence on the page, from its pieces to the
   English, each pointing at the part of the page it speaks of. Leave it at any stop (Esc, or Close). */
(function () {
  "use strict";
  const AL = (window.AttentionLens = window.AttentionLens || /** @type {AttentionLens} */ ({}));
  const $ = (s) => document.querySelector(s);
  const el = /** @type {ElementMaker} */ ((...args) => AL.el(...args)); // draw.js

  function viewer() {
    const root = $("#result");
    if (!root) return null;
    for (const n of [root, ...root.querySelectorAll("div")]) if (n.__lens) return n.__lens.viewer;
    return null;
  }
  const show = (kind, level) => () => { const v = viewer(); if (v) { v.choose("kind", kind); v.choose("level", level || "words"); } };

  const STOPS = [
    { at: "#source", title: "1 · The German goes in",
      text: "Everything starts here: one German sentence (or a few). The model never sees letters: the text is first cut into pieces from a vocabulary of 8,000 that German and English share." },
    { at: "#result .al-level", before: show("encoder", "pieces"), title: "2 · Pieces and their positions",
      text: "\u201cPieces\u201d shows the cut: a long or rare word becomes several pieces. Each piece becomes a vector of 256 numbers, plus a wave pattern that says where it stands in the sentence: attention itself does not know order." },
    { at: "#result .al-stage", before: show("encoder"), title: "3 · The encoder reads the German",
      text: "Encoder self-attention: every German word looks at every other German word (rows look at columns). In three layers the words gather context: a verb finds its subject, an article its noun." },
    { at: "#result .al-stage", before: show("decoder"), title: "4 · The decoder looks back at its own English",
      text: "Decoder self-attention is masked: while writing a word, the model may look only at the English words before it (the empty upper triangle). It cannot peek at what it has not written yet." },
    { at: "#result .al-stage", before: show("cross"), title: "5 · Cross-attention links the languages",
      text: "Each English word (row) looks at the German (columns). A bright cell often marks the word being translated: this is where the two languages meet. Try the Layer and Head buttons: heads specialise." },
    { at: "#result .al-english", title: "6 · A probability for every word",
      text: "After the last layer, the model scores all 8,000 pieces and turns the scores into probabilities. Paler words were less certain. The step view below shows the candidates at every step." },
    { at: "#step-view", title: "7 · One word at a time, and the beam",
      text: "The translation is written piece by piece. Beam search keeps the 4 likeliest partial sentences at every step and picks the best finished one. Press Step through, then try Guess first: predict where it looks before it shows you." },
    { at: "#headlab", title: "8 · Take it apart",
      text: "Switch heads off and watch the translation change, or compare attention with attribution: attention shows where the model looked, attribution which German words the choice rested on. They do not always agree." },
  ];

  class Tour {
    constructor() {
      this.box = el("div", "al-tour");
      this.box.setAttribute("role", "dialog");
      this.box.setAttribute("aria-label", "Guided walk through the page");
      this.title = this.box.appendChild(el("h3", "al-tour-title"));
      this.text = this.box.appendChild(el("p", "al-tour-text"));
      const nav = this.box.appendChild(el("div", "al-tour-nav"));
      this.prev = nav.appendChild(el("button", "al-tour-button", "\u2190 Back"));
      this.next = nav.appendChild(el("button", "al-tour-button al-tour-next", "Next \u2192"));
      this.close = nav.appendChild(el("button", "al-tour-button", "Close"));
      for (const b of [this.prev, this.next, this.close]) b.type = "button";
      this.prev.addEventListener("click", () => this.go(this.i - 1));
      this.next.addEventListener("click", () => (this.i === STOPS.length - 1 ? this.end() : this.go(this.i + 1)));
      this.close.addEventListener("click", () => this.end());
      this.keys = (e) => { if (e.key === "Escape") this.end(); };
    }

    start() {
      document.body.appendChild(this.box);
      document.addEventListener("keydown", this.keys);
      this.go(0);
    }

    go(i) {
      this.i = i = Math.max(0, Math.min(STOPS.length - 1, i));
      const stop = STOPS[i];
      if (stop.before) stop.before();
      document.querySelectorAll(".al-tour-spot").forEach((n) => n.classList.remove("al-tour-spot"));
      const target = $(stop.at);
      if (target) { target.classList.add("al-tour-spot"); target.scrollIntoView({ block: "center" }); }
      this.title.textContent = stop.title;
      this.text.textContent = stop.text;
      this.prev.disabled = i === 0;
      this.next.textContent = i === STOPS.length - 1 ? "Done" : "Next \u2192";
      this.box.dataset.stop = String(i + 1);
    }

    end() {
      document.querySelectorAll(".al-tour-spot").forEach((n) => n.classList.remove("al-tour-spot"));
      document.removeEventListener("keydown", this.keys);
      this.box.remove();
      AL.tour = null;
    }
  }

  AL.TOUR_STOPS = STOPS.length;
  AL.startTour = function () {
    if (AL.tour) AL.tour.end();
    const tour = (AL.tour = new Tour());
    tour.start();
    return tour;
  };

  // The page header's button starts the walk (app.py writes it, so nothing moves when this script arrives).
  (function bind(since) {
    const b = /** @type {HTMLElement | null} */ (document.querySelector("#page-header .al-tour-start"));
    if (b && !b.dataset.bound) {
      b.dataset.bound = "true";
      b.addEventListener("click", () => AL.startTour());
    } else if (!b && Date.now() - since < 60000) setTimeout(() => bind(since), 100);
  })(Date.now());
})();
