// @ts-check
/* Attention Lens, the viewer: one explanation in, every map out, with no server round trip.

   new Viewer(container, {sentencePicker: true}) builds the toolbar (sentence, kind,
   layer, head, view, words/pieces, colour scale, downloads), the map or head view, the clickable
   layer x head overview and the "how to read this" panel; viewer.show(explanation) draws one.
   mountResult(element, props, watch) (result.js) is the translate view's result panel: the
   shaded translation, its notices, and a Viewer, fed by a gr.HTML component's value. */
import { matrixTable } from "./numbers.js";
import { KINDS, describeCell, fileName, headName, howToRead, mapBytes, piecesNote, selectMap, shownLayer } from "./core.js";
import { HEAD_COLOURS, drawHeadView, drawMatrix, drawOverview, el, headViewSVG, hitMatrix, legend, matrixLayout, matrixSVG, svg } from "./draw.js";
import { fixed, list, t } from "./i18n.js";
import { openRow } from "./qkv.js";

/** Colours of the page around the viewer (light or dark), read from Gradio's CSS variables. */
export function themeOf(node) {
  const css = getComputedStyle(node), v = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
  const dark = document.body.classList.contains("dark") || !!node.closest(".dark");
  return {
    dark: dark, bg: v("--background-fill-primary", dark ? "#0b0f19" : "#ffffff"),
    text: v("--body-text-color", dark ? "#f3f4f6" : "#1f2937"),
    muted: v("--body-text-color-subdued", dark ? "#9ca3af" : "#6b7280"),
    accent: dark ? "#ff8a3d" : "#e4580b", masked: dark ? "#2a2f3a" : "#e5e7eb", hatch: dark ? "#4b5563" : "#9ca3af",
  };
}

export class Viewer {
  constructor(container, options) {
    this.options = Object.assign({ sentencePicker: true }, options || {});
    /** @type {ViewerState} */
    this.state = { sentence: 0, kind: "cross", layer: null, head: null, view: "matrix", level: "words",
      scale: "auto", focusRow: -1, hover: null };
    /** @type {Explanation | null} */
    this.explanation = null;
    this.draws = 0;
    this.root = el("div", "al-viewer");
    container.appendChild(this.root);
    this.build();
    new ResizeObserver(() => this.explanation && this.draw()).observe(this.stage);
    window.addEventListener("resize", () => this.fitHeight());
    this.fitHeight();
  }

  /** On a wide screen the stage ends at the bottom of the window: the map and the text above it
      are seen together. Phones scroll the page instead (CSS). */
  fitHeight() {
    if (window.innerWidth <= 720) { this.stage.style.height = ""; this.side.style.maxHeight = ""; return; }
    const top = this.stage.getBoundingClientRect().top + window.scrollY;
    const height = Math.max(300, Math.min(900, window.innerHeight - top - 10)) + "px";
    if (this.stage.style.height !== height) { this.stage.style.height = height; this.side.style.maxHeight = height; }
  }

  group(name, label, choices) {
    const box = el("div", "al-group al-" + name);
    box.setAttribute("role", "group"); box.setAttribute("aria-label", label);
    box.appendChild(el("span", "al-group-label", label));
    for (const [value, text, title] of choices) {
      const b = el("button", "al-choice", text);
      b.type = "button"; b.dataset.value = value;
      if (title) b.title = title;
      b.addEventListener("click", () => this.choose(name, value));
      box.appendChild(b);
    }
    this.toolbar.appendChild(box);
    return box;
  }

  build() {
    this.toolbar = el("div", "al-toolbar");
    this.root.appendChild(this.toolbar);
    this.picker = el("label", "al-group al-sentence");
    this.picker.appendChild(el("span", "al-group-label", t("viewer.sentence")));
    this.select = el("select");
    this.select.addEventListener("change", () => this.choose("sentence", this.select.value));
    this.picker.appendChild(this.select);
    this.toolbar.appendChild(this.picker);
    this.group("kind", t("viewer.attention"), Object.entries(KINDS).map(([k, v]) => [k, v.short, v.label]));
    this.layerBox = this.group("layer", t("viewer.layer"), []);
    this.headBox = this.group("head", t("viewer.head"), []);
    this.group("view", t("viewer.view"), [["matrix", t("viewer.view_map"), t("viewer.view_map_title")],
      ["lines", t("viewer.view_lines"), t("viewer.view_lines_title")]]);
    this.group("level", t("viewer.show"), [["words", t("viewer.show_words")],
      ["pieces", t("viewer.show_pieces"), t("viewer.show_pieces_title")]]);
    this.group("scale", t("viewer.colour"), [["auto", t("viewer.colour_auto"), t("viewer.colour_auto_title")],
      ["fixed", t("viewer.colour_fixed"), t("viewer.colour_fixed_title")]]).classList.add("al-extra");
    const downloads = el("div", "al-group al-downloads al-extra");
    downloads.appendChild(el("span", "al-group-label", t("viewer.download")));
    for (const format of ["png", "svg", "json"]) {
      const b = el("button", "al-download", format.toUpperCase()); // the file format's own name: PNG, SVG, JSON
      b.type = "button"; b.dataset.format = format; b.disabled = true;
      b.addEventListener("click", () => this.download(format));
      downloads.appendChild(b);
    }
    this.toolbar.appendChild(downloads);
    // On the page the colour scale and the downloads wait behind "More" (page.css); elsewhere they show.
    // The page's picture picks the kind and layer: its toolbar names the map shown, the chips wait behind "More".
    this.showing = el("span", "al-showing");
    this.toolbar.appendChild(this.showing);
    const more = el("button", "al-choice al-more-tools", t("viewer.more"));
    more.type = "button";
    more.setAttribute("aria-label", t("viewer.more_label"));
    more.setAttribute("aria-expanded", "false");
    more.addEventListener("click", () => more.setAttribute("aria-expanded",
      String(this.toolbar.classList.toggle("al-extras-shown"))));
    this.toolbar.appendChild(more);
    const body = el("div", "al-body");
    this.stage = el("div", "al-stage");
    this.stage.tabIndex = 0; // the arrow keys read the map cell by cell (the side's readout says each)
    this.stage.setAttribute("role", "group");
    this.stage.setAttribute("aria-label", t("viewer.keys_label"));
    this.stage.addEventListener("keydown", (e) => this.key(e));
    this.canvas = el("canvas", "al-canvas");
    this.stage.appendChild(this.canvas);
    this.legend = legend(); // the colour scale, and what hatched cells mean
    this.stage.insertBefore(this.legend.node, this.canvas);
    this.canvas.addEventListener("mousemove", (e) => this.pointer(e, false));
    this.canvas.addEventListener("click", (e) => this.pointer(e, true));
    this.canvas.addEventListener("mouseleave", () => { this.state.hover = null; this.hoverRow = -1; this.tip.hidden = true; this.draw(); });
    this.tip = el("div", "al-tip"); // the cell under the pointer, in words, next to it
    this.tip.hidden = true;
    this.tip.setAttribute("role", "tooltip");
    this.stage.appendChild(this.tip);
    const side = (this.side = el("aside", "al-side"));
    this.overviewTitle = el("div", "al-side-title", t("viewer.overview"));
    this.overview = el("canvas", "al-overview");
    this.overview.style.height = "172px"; // its size once drawn: nothing moves when the first map comes
    this.overview.addEventListener("click", (e) => this.pickHead(e));
    this.readout = el("div", "al-readout");
    this.readout.setAttribute("aria-live", "polite");
    this.help = el("div", "al-help");
    // How a row's weights were computed (ui/static/qkv.js, /qkv): a button, then the walk-through.
    this.openCell = el("button", "al-open-cell", t("viewer.open_row"));
    this.openCell.type = "button";
    this.qkvPanel = el("div", "al-qkv-panel");
    this.openCell.addEventListener("click", () => openRow && openRow(this, this.qkvPanel));
    // the map's numbers as a table: its text alternative, drawn when opened
    this.numbers = el("details", "al-step-table al-map-numbers");
    this.numbers.append(el("summary", null, t("viewer.numbers")));
    this.numbers.addEventListener("toggle", () => this.tabulate());
    side.append(this.overviewTitle, this.overview, this.readout, this.openCell, this.numbers, this.help);
    body.append(this.stage, side);
    this.root.appendChild(body);
    this.root.appendChild(this.qkvPanel); // a row opened up takes the whole width under the map
  }

  /** Nothing to show (an empty box, an error): no sentence picker, overview or readout of an old answer. */
  clear() {
    this.explanation = null;
    this.select.replaceChildren();
    this.picker.hidden = true;
    this.overview.getContext("2d").clearRect(0, 0, this.overview.width, this.overview.height);
    this.readout.textContent = "";
    this.qkvPanel.replaceChildren();
    /** @type {NodeListOf<HTMLButtonElement>} */ (this.root.querySelectorAll(".al-download")).forEach((b) => (b.disabled = true));
  }

  /** A new explanation: keep the user's choices where they still exist.
      @param {Explanation} explanation */
  show(explanation) {
    this.explanation = explanation;
    const s = this.state;
    s.sentence = Math.min(s.sentence, explanation.sentences.length - 1);
    s.focusRow = -1; s.hover = null;
    this.select.replaceChildren(...explanation.sentences.map((sen, i) => {
      const text = sen.source.slice(0, 60) + (sen.source.length > 60 ? "…" : "");
      const o = el("option", "", t("viewer.sentence_option", { n: i + 1, text }));
      o.value = String(i);
      return o;
    }));
    this.picker.hidden = !this.options.sentencePicker || explanation.sentences.length < 2;
    /** @type {NodeListOf<HTMLButtonElement>} */ (this.root.querySelectorAll(".al-download")).forEach((b) => (b.disabled = false));
    this.fitHeight();
    this.draw();
  }

  choose(name, value) {
    const s = this.state;
    if (name === "sentence") { s.sentence = +value; s.focusRow = -1; }
    else if (name === "layer") s.layer = +value;
    else if (name === "head") s.head = value === "mean" ? null : +value;
    else s[name] = value;
    if (name === "kind" || name === "level" || name === "sentence") s.focusRow = -1;
    if (this.options.onSelect) this.options.onSelect(Object.assign({}, s));
    this.draw();
  }

  current() {
    const x = this.explanation, s = this.state, layers = x.layers[s.kind];
    // The layer survives a change of kind; it is clamped only if the new kind has fewer layers.
    const layer = shownLayer(s.layer, layers);
    const sentence = x.sentences[s.sentence];
    return { sentence: sentence, layer: layer, map: selectMap(x, sentence, s.kind, layer, s.head, s.level) };
  }

  syncToolbar(layer) {
    const x = this.explanation, s = this.state;
    const fill = (box, values) => {
      if (box.querySelectorAll("button").length !== values.length) {
        box.querySelectorAll("button").forEach((b) => b.remove());
        for (const [v, t] of values) {
          const b = el("button", "al-choice", t);
          b.type = "button"; b.dataset.value = v;
          b.addEventListener("click", () => this.choose(box === this.layerBox ? "layer" : "head", v));
          box.appendChild(b);
        }
      }
    };
    fill(this.layerBox, [...Array(x.layers[s.kind]).keys()].map((l) => [String(l), String(l + 1)]));
    fill(this.headBox, [["mean", t("viewer.mean")]].concat([...Array(x.heads).keys()].map((h) => [String(h), String(h + 1)])));
    const chosen = { kind: s.kind, layer: String(layer), head: s.head === null ? "mean" : String(s.head),
      view: s.view, level: s.level, scale: s.scale };
    for (const [name, value] of Object.entries(chosen)) {
      /** @type {NodeListOf<HTMLElement>} */ (this.root.querySelectorAll(".al-" + name + " .al-choice")).forEach((b) => {
        b.setAttribute("aria-pressed", String(b.dataset.value === value));
      });
    }
    this.select.value = String(s.sentence);
    /** @type {NodeListOf<HTMLElement>} */ (this.headBox.querySelectorAll(".al-choice")).forEach((b) => {
      b.style.borderBottomColor = b.dataset.value === "mean" ? "" : HEAD_COLOURS[+b.dataset.value];
    });
  }

  /** Redraw what the state selects. Synchronous: a click is drawn before the next frame. */
  draw() {
    if (!this.explanation) return;
    const t0 = performance.now(), s = this.state, x = this.explanation, theme = themeOf(this.root);
    const { sentence, layer, map } = this.current();
    this.map = map; this.layer = layer;
    this.syncToolbar(layer);
    const width = Math.max(240, this.stage.clientWidth - 8), height = Math.max(200, this.stage.clientHeight - 8);
    if (s.view === "matrix") {
      const probe = matrixLayout(map, 1);
      const fit = Math.floor(Math.min((width - probe.width) / map.cols, (height - probe.height) / map.rows));
      this.cell = Math.max(16, Math.min(42, fit)); // readable before it fits: the stage scrolls
      this.layout = drawMatrix(this.canvas, map, { cell: this.cell, scale: s.scale, theme: theme,
        focusRow: s.focusRow, hover: s.hover });
    } else {
      const lines = this.lines(sentence, layer);
      this.layout = drawHeadView(this.canvas, lines.maps, { width: width, scale: s.scale, theme: theme,
        focusRow: lines.focus, leftTitle: lines.rowsTitle, rightTitle: lines.colsTitle });
    }
    this.legend.update(map, s.kind, s.scale);
    const size = Math.max(26, Math.min(46, Math.floor((this.overview.parentElement.clientWidth - 30) / (x.heads + 1)) - 6));
    this.overviewTitle.textContent = t("viewer.overview_kind", { kind: KINDS[s.kind].label });
    this.boxes = drawOverview(this.overview, (l, h) => selectMap(x, sentence, s.kind, l, h, "pieces"),
      x.layers[s.kind], x.heads, { layer: layer, head: s.head }, { size: size, scale: s.scale, theme: theme });
    this.help.innerHTML = howToRead(s.kind, x.layers[s.kind], x.heads) + "<p>" + piecesNote() + "</p>";
    this.readout.textContent = this.describe();
    this.tabulate();
    this.showing.textContent = t("viewer.showing", { kind: KINDS[s.kind].label, layer: layer + 1, head: headName(s.head) });
    this.draws += 1;
    this.root.dataset.draws = String(this.draws);
    this.root.dataset.selection = [s.sentence, s.kind, layer, s.head === null ? "mean" : s.head, s.view, s.level].join(" ");
    this.lastDrawMs = performance.now() - t0;
  }

  /** What the Lines view draws: one map per head shown, its two titles, the row in focus. */
  lines(sentence, layer) {
    const x = this.explanation, s = this.state;
    const heads = s.head === null ? [...Array(x.heads).keys()] : [s.head];
    return {
      maps: heads.map((h) => ({ head: h, map: selectMap(x, sentence, s.kind, layer, h, s.level) })),
      rowsTitle: s.kind === "encoder" ? t("viewer.rows_german") : t("viewer.rows_english"),
      colsTitle: s.kind === "cross" ? t("viewer.cols_german_read") : s.kind === "encoder" ? t("viewer.cols_german")
        : t("viewer.cols_english"),
      focus: this.hoverRow >= 0 ? this.hoverRow : s.focusRow,
    };
  }

  describe() {
    const s = this.state, map = this.map;
    if (s.hover && s.hover[1] >= 0) return describeCell(map, s.hover[0], s.hover[1]);
    const r = s.focusRow;
    if (r < 0 || r >= map.rows) {
      const shown = { kind: KINDS[s.kind].label, layer: this.layer + 1, head: headName(s.head) };
      return s.view === "lines" ? t("viewer.describe_lines", shown) : t("viewer.describe_map", shown);
    }
    const row = [...Array(map.cols).keys()].filter((c) => !map.masked[r * map.cols + c])
      .sort((a, b) => map.values[r * map.cols + b] - map.values[r * map.cols + a]).slice(0, 3);
    return t("viewer.drew_most", { word: map.rowLabels[r], columns: list(row.map((c) => t("viewer.drew_column",
      { word: map.colLabels[c], weight: fixed(map.values[r * map.cols + c], 2) }))) });
  }

  /** The map shown as a table of its numbers, while "The numbers" is open. */
  tabulate() {
    const box = this.numbers, map = this.map;
    if (!box.open || !map) { if (box.children.length > 1) box.lastElementChild.remove(); return; }
    const caption = this.showing.textContent || t("viewer.numbers");
    const table = matrixTable(map.values, map.rows, map.cols, map.rowLabels, map.colLabels, caption,
      { masked: (r, c) => !!map.masked[r * map.cols + c] });
    if (box.children.length > 1) box.lastElementChild.replaceWith(table); else box.append(table);
  }

  /** The arrow keys move from cell to cell of the map (read out beside it), Enter follows the row, Esc leaves. */
  key(e) {
    const s = this.state, map = this.map;
    const move = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
    if (!map || s.view !== "matrix" || !(move || e.key === "Enter" || e.key === "Escape")) return;
    e.preventDefault();
    const [r, c] = s.hover || [Math.max(0, s.focusRow), 0];
    if (e.key === "Escape") s.hover = null;
    else if (e.key === "Enter") { s.focusRow = s.focusRow === r ? -1 : r; this.lastCell = [r, c]; }
    else s.hover = [Math.min(map.rows - 1, Math.max(0, r + (s.hover ? move[0] : 0))),
      Math.min(map.cols - 1, Math.max(0, c + (s.hover ? move[1] : 0)))];
    this.draw();
  }

  pointer(event, click) {
    const box = this.canvas.getBoundingClientRect(), x = event.clientX - box.left, y = event.clientY - box.top;
    const s = this.state;
    if (s.view === "lines") {
      const lay = /** @type {HeadViewLayout} */ (this.layout), r = Math.floor((y - lay.top) / lay.rowH);
      const row = x < lay.x1 && r >= 0 && r < lay.rows ? r : -1;
      if (click) { s.focusRow = s.focusRow === row ? -1 : row; this.hoverRow = -1; }
      else this.hoverRow = row; // hover a token to see only its lines
      this.draw();
      return;
    }
    const hit = hitMatrix(/** @type {MatrixLayout} */ (this.layout), this.map, x, y);
    if (click && hit) s.focusRow = s.focusRow === hit[0] ? -1 : hit[0];
    if (click && hit) this.lastCell = hit; // the cell the Q, K, V walk-through opens
    s.hover = hit && hit[1] >= 0 ? hit : null;
    this.draw();
    this.showTip(s.hover, event);
  }

  /** The hovered cell read out beside the pointer (the side panel keeps the same words). */
  showTip(cell, event) {
    if (!cell || !this.map) { this.tip.hidden = true; return; }
    this.tip.textContent = describeCell(this.map, cell[0], cell[1]);
    this.tip.hidden = false;
    const stage = this.stage.getBoundingClientRect(), w = this.tip.offsetWidth, h = this.tip.offsetHeight;
    let x = event.clientX - stage.left + this.stage.scrollLeft + 14, y = event.clientY - stage.top + this.stage.scrollTop + 14;
    if (x + w > this.stage.scrollLeft + stage.width) x -= w + 28; // keep it inside the stage
    if (y + h > this.stage.scrollTop + stage.height) y -= h + 28;
    this.tip.style.left = Math.max(0, x) + "px";
    this.tip.style.top = Math.max(0, y) + "px";
  }

  pickHead(event) {
    const box = this.overview.getBoundingClientRect(), x = event.clientX - box.left, y = event.clientY - box.top;
    const hit = (this.boxes || []).find((b) => x >= b.x && x <= b.x + b.size && y >= b.y && y <= b.y + b.size);
    if (hit) { this.state.layer = hit.layer; this.state.head = hit.head; this.draw(); }
  }

  /** Files for exactly what is on screen, made here in the browser: nothing is written on the server. */
  download(format) {
    if (!this.explanation) return;
    const s = this.state, map = this.map, theme = themeOf(this.root);
    const title = t("viewer.download_title", { sentence: this.explanation.sentences[s.sentence].source,
      kind: KINDS[s.kind].label, layer: this.layer + 1, head: headName(s.head) });
    const name = fileName(map, s.sentence, format).replace("_" + map.level + ".", "_" + map.level +
      (s.view === "lines" && format !== "json" ? "_lines." : "."));
    if (format === "json") return save(new Blob([JSON.stringify(this.exportJSON(), null, 1)], { type: "application/json" }), name);
    if (format === "svg") return save(new Blob([this.svg(title)], { type: "image/svg+xml" }), name);
    this.canvas.toBlob((blob) => save(blob, name), "image/png");
  }

  /** Exactly what is shown, as SVG: the matrix with its outlines, or the Lines view's lines; the title whole. */
  svg(title) {
    const s = this.state, theme = themeOf(this.root);
    if (s.view !== "lines") return matrixSVG(this.map, { cell: Math.max(this.cell || 24, 20), scale: s.scale, theme: theme, title: title });
    const lines = this.lines(this.explanation.sentences[s.sentence], this.layer);
    return headViewSVG(lines.maps, { width: Math.max(240, this.stage.clientWidth - 8), scale: s.scale, theme: theme,
      focusRow: lines.focus, leftTitle: lines.rowsTitle, rightTitle: lines.colsTitle, title: title });
  }

  exportJSON() {
    const x = this.explanation, s = this.state, sentence = x.sentences[s.sentence], map = this.map;
    const round = (v) => Math.round(v * 1000) / 1000, shape = (kind) => [x.layers[kind], x.heads,
      sentence.tokens[KINDS[kind].rows].length, sentence.tokens[KINDS[kind].cols].length];
    const maps = {};
    for (const kind of /** @type {Kind[]} */ (Object.keys(KINDS))) {
      const [L, H, R, C] = shape(kind), bytes = mapBytes(sentence, kind), out = [];
      for (let l = 0; l < L; l++) {
        const layer = [];
        for (let h = 0; h < H; h++) {
          const rows = [];
          for (let r = 0; r < R; r++) rows.push(Array.from(bytes.subarray(((l * H + h) * R + r) * C, ((l * H + h) * R + r + 1) * C), (b) => round(b / 255)));
          layer.push(rows);
        }
        out.push(layer);
      }
      maps[kind] = out;
    }
    return {
      source: sentence.source, translation: sentence.translation, decoding: x.options,
      shown: { kind: s.kind, layer: this.layer + 1, head: s.head === null ? "mean" : s.head + 1, level: s.level,
        rows: map.rowLabels, columns: map.colLabels,
        weights: [...Array(map.rows).keys()].map((r) => Array.from(map.values.subarray(r * map.cols, (r + 1) * map.cols), round)) },
      tokens: { source: sentence.tokens.src, target: sentence.tokens.tgt, decoder_input: sentence.tokens.in },
      target_probs: sentence.probs, maps: maps,
      note: "maps[kind][layer][head][row][column], every layer and head, in pieces; weights to 1/255",
    };
  }
}

function save(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob); a.download = name;
  document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
