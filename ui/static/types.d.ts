/* Attention Lens, the types of the page scripts (ui/static/*.js), for `npm run check` (tsc, no build step).

   1. The payloads the server sends: above all the explanation the viewer draws (ui/payload.py,
      page_payload and sentence_payload), then each view's own (the step view's trace, the head lab's,
      time travel's, the copy lab's) and the answers of the endpoints the buttons call.
   2. window.AttentionLens, the one namespace the scripts share: every name a file puts on it.
   3. window.attentionLens, the page's public API (tests, benchmarks, the console): AttentionLens.api. */

// ---------------------------------------------------------------------------------------------------
// 1. Payloads

/** The three kinds of attention map; a map's rows attend, its columns are attended to. */
type Kind = "cross" | "encoder" | "decoder";
/** The token axes of a sentence: the German, the English written, the decoder's input (<s> + English). */
type Axis = "src" | "tgt" | "in";
/** A map shown by vocabulary piece or by word (merged pieces). */
type Level = "words" | "pieces";
/** The colour scale: brightest = the map's maximum ("auto"), or fixed 0..1. */
type Scale = "auto" | "fixed";
/** A word as a reader writes it and the positions of its pieces (lens.explain.Word). */
type Word = [text: string, pieces: number[]];

/** What the training data says of one German word (training_data/evidence.py). */
interface Evidence {
  word: string;
  count: number;
  counts: Record<string, number>;
  examples: { de: string; en: string }[];
  rare: boolean;
  unseen: boolean;
}

/** lens.explain.DecodingOptions.to_dict(). */
interface DecodingOptions {
  num_beams: number;
  length_penalty: number;
  max_new_tokens: number;
}

/** What a map is selected from: tokens, words and maps (base64, one byte a weight, (layer, head, row, col)). */
interface MapSource {
  tokens: Partial<Record<Axis, string[]>>;
  words: Partial<Record<Axis, Word[]>>;
  maps: Partial<Record<Kind, string>>;
  /** The decoded bytes of each kind, kept once decoded (core.js). */
  _bytes?: Partial<Record<Kind, Uint8Array>>;
}

/** One sentence of an explanation (lens.payload.sentence_payload). */
interface Sentence extends MapSource {
  source: string;
  translation: string;
  truncated: boolean;
  tokens: Record<Axis, string[]>;
  words: Record<Axis, Word[]>;
  /** Per English piece, the probability the model gave it. */
  probs: number[];
  mean_log_prob: number;
  unfamiliar: boolean;
  reasons: string[];
  /** The same reasons as data (training_data/alarm.py's judge), for the page to say in its language. */
  alarms: Alarm[];
  evidence: Evidence[];
  /** Which kind of German it reads like (training_data/domain.py), where the checkpoint has the guess. */
  domain?: { everyday: boolean; log_odds: number; words: string[] };
  /** Which model translated it and why (lens/routed.Route); absent where the page has one model. */
  route?: Route;
  /** The alarm's confidence threshold of the model that translated it. */
  threshold?: number;
  maps: Record<Kind, string>;
}

/** Where a sentence went (lens/routed.Route.to_dict). */
interface Route {
  model: "default" | "everyday" | "zh-en";
  reads_like: "captions" | "everyday" | "Chinese" | "not German";
  forced: boolean;
  words: string[];
  recased: [string, string][];
  why: string;
  /** The sentence as the visitor wrote it (`source` is as the model read it: recased, plain marks). */
  written: string;
  /** On the compare view's second side: the model the page picked, this sentence shown by the other one. */
  other?: "default" | "everyday" | "zh-en";
}

/** The explanation the viewer draws (lens.payload.page_payload; the same from every view). */
interface Explanation {
  v: number;
  /** A fresh value every run: the page redraws even for the same text. */
  id: number;
  layers: Record<Kind, number>;
  heads: number;
  /** The model's width: the numbers of each piece's vector. */
  d_model: number;
  max_len: number;
  threshold: number;
  options: DecodingOptions;
  left_out: number;
  status: { method: string; ms: number; device: string };
  sentences: Sentence[];
  /** An answer that failed, or has nothing to show yet, says why instead. */
  error?: string;
  message?: string;
}

/** One hypothesis of the beam tree (ui/step_through.py, trace_payload). */
interface BeamNode {
  id: number;
  parent: number;
  step: number;
  token: string;
  ids: number[];
  log_prob: number;
  score: number;
  status: string;
}

/** One decoding traced for the step view (ui/step_through.py, trace_payload). */
interface Trace {
  translation: string;
  num_beams: number;
  length_penalty: number;
  prefix_length: number;
  src: { tokens: string[]; words: Word[] };
  tokens: string[];
  ids: number[];
  probs: number[];
  entropy: number[];
  forced: boolean[];
  /** Per step, the likeliest pieces: [piece, id, probability]. */
  top: [piece: string, id: number, p: number][][];
  /** (T, L, H, S) and (T, L, H, T) as base64 bytes. */
  cross: string;
  decoder: string;
  beam: BeamNode[];
  nbest: number[];
  _bytes?: { cross: Uint8Array; decoder: Uint8Array };
}

/** What the step view draws (ui/step_through.py, view_payload). */
interface StepPayload {
  id: number;
  source: string;
  /** The model that traced it ("default" or "everyday") and why (ui/step_through.py). */
  model?: string;
  route?: Route;
  num_beams: number;
  layers: number;
  heads: number;
  greedy: Trace;
  beam: Trace | null;
  unfamiliar?: boolean;
  reasons?: string[];
  alarms?: Alarm[];
  error?: string;
}

/** A payload that may say the sentence is unlike the training data (training_data/alarm.py). */
interface Familiar {
  unfamiliar?: boolean;
  reasons?: string[];
  alarms?: Alarm[];
}

/** One reason the alarm fired: the model unsure, rare words, or word pairs never seen. */
interface Alarm {
  kind: "unsure" | "rare" | "pairs";
  mean?: number;
  below?: number;
  share?: number;
  fewer_than?: number;
  words?: [string, number][];
  unseen?: number;
  pairs?: number;
  listed?: string[];
}

/** The head lab's grids (ui/head_lab_data.py, importance_payload). */
interface ImportancePayload {
  layers: Record<Kind, number>;
  heads: number;
  importance: null | {
    baseline: { val_loss: number; val_bleu: number };
    slice: number;
    metrics: Record<Kind, Record<string, number[][]>>;
    ranked: [kind: Kind, layer: number, head: number, value: number][];
    attribution: string;
  };
}

/** What every answer of an inside view carries besides its own fields: the model that made it and why
    (ui/api.py, routed). */
interface Routed {
  model: "default" | "everyday" | "zh-en";
  reads_like: "captions" | "everyday" | "Chinese" | "not German";
  route: Route;
}

/** /qkv: one row of one head's map opened up (lens/qkv.py, OpenedRow). */
interface QkvAnswer extends Routed {
  kind: Kind;
  layer: number;
  head: number;
  row: number;
  row_token: string;
  writes: string | null;
  column_tokens: string[];
  q: number[];
  k: number[][];
  v: number[][];
  scores: number[];
  scaled: number[];
  mask: boolean[];
  weights: number[];
  head_output: number[];
  output: number[];
}

/** /logit_lens: every decoder stage read out as a prediction (lens/logit_lens.py). */
interface LogitLensAnswer extends Routed {
  stages: string[];
  target_tokens: string[];
  prob: number[][];
  top: { token: string; prob: number }[][][];
  decided_at: number[];
}

/** /contributions: who wrote each word, ALTI+ (lens/contributions.py). */
interface ContributionsAnswer extends Routed {
  source_tokens: string[];
  target_tokens: string[];
  input_tokens: string[];
  source: number[][];
  target: number[][];
  source_share: number[];
  source_share_by_layer: number[][];
  encoder: number[][];
  cross_attention: number[][];
  agreement: number;
  same_top: number;
}

/** /contrast: why one piece and not another (lens/contrast.py). */
interface ContrastAnswer extends Routed {
  step: number;
  chosen: string;
  alternative: string;
  logit_diff: number;
  baseline_logit_diff: number;
  source_tokens: string[];
  source_attribution: number[];
  completeness_gap: number;
  heads: Record<Kind, number[][]>;
}

/** /patch: every head's output copied from the clean run into the other (lens/patching_heads.py). */
interface PatchAnswer extends Routed {
  step: number;
  clean_piece: string;
  corrupted_piece: string;
  /** The clean choice's logit minus the corrupted one's, in the clean run and in the corrupted run. */
  clean_diff: number;
  corrupted_diff: number;
  clean_translation: string;
  corrupted_translation: string;
  top_heads: { kind: Kind; layer: number; head: number; restored: number }[];
  all: number;
  none: number;
  restored: Record<Kind, number[][]>;
  source_tokens: string[];
  corrupted_tokens: string[];
  recovered: number[][];
  levels: string[];
}

// ---------------------------------------------------------------------------------------------------
// 2. What the scripts build and pass around

/** One map as numbers (core.js, selectMap): values row-major, 0..1; rows and columns by piece or word. */
interface AttentionMap {
  kind: Kind;
  layer: number;
  head: number | null;
  level: Level;
  rows: number;
  cols: number;
  values: Float32Array;
  masked: Uint8Array;
  max: number;
  rowLabels: string[];
  colLabels: string[];
}

interface KindInfo {
  label: string;
  short: string;
  rows: Axis;
  cols: Axis;
}

/** The page's colours, light or dark (viewer.js, theme). */
interface Theme {
  dark: boolean;
  bg: string;
  text: string;
  muted: string;
  accent: string;
  masked: string;
  hatch: string;
}

interface MatrixLayout {
  cell: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

interface MatrixOptions {
  cell: number;
  scale: Scale;
  theme: Theme;
  focusRow?: number;
  hover?: number[] | null;
  title?: string;
}

/** The maps of the heads a Lines view draws. */
type HeadMaps = { head: number | null; map: AttentionMap }[];

interface HeadViewOptions {
  width: number;
  scale: Scale;
  theme: Theme;
  focusRow: number;
  leftTitle: string;
  rightTitle: string;
  title?: string;
}

interface HeadViewLayout {
  top: number;
  rowH: number;
  x1: number;
  x2: number;
  width: number;
  rows: number;
}

/** A thumbnail of the layer x head overview, for hit testing. */
interface OverviewBox {
  layer: number;
  head: number | null;
  x: number;
  y: number;
  size: number;
}

/** The viewer's state: what is selected (viewer.js). */
interface ViewerState {
  sentence: number;
  kind: Kind;
  /** null: the last layer. */
  layer: number | null;
  /** null: the mean of the heads. */
  head: number | null;
  view: "matrix" | "lines";
  level: Level;
  scale: Scale;
  focusRow: number;
  hover: number[] | null;
}

interface ViewerOptions {
  sentencePicker?: boolean;
  onSelect?: (state: ViewerState) => void;
}

/** What the other scripts use of a Viewer (viewer.js). */
interface ViewerLike {
  root: HTMLElement;
  state: ViewerState;
  explanation: Explanation | null;
  /** The layer drawn last (from 0). */
  layer: number;
  lastCell: number[] | null;
  show(explanation: Explanation): void;
  clear(): void;
  draw(): void;
  choose(name: string, value: string | number): void;
  current(): { sentence: Sentence; layer: number; map: AttentionMap };
}

/** The translate view's result panel (result.js). */
interface ResultLike {
  root: HTMLElement;
  viewer: ViewerLike;
  show(x: Explanation | null): void;
}

/** A gr.HTML component's props and its watch, as js_on_load receives them. */
interface GradioProps {
  value: any;
}
type GradioWatch = (name: string, callback: () => void) => void;

/** A word of the step view: its text and the positions of its pieces (steptext.js, wordsOf). */
interface PieceWord {
  text: string;
  span: number[];
}

/** The step view's server functions (ui/step_through.py): each takes one object. */
interface StepServer {
  force(request: object): Promise<any>;
  hypothesis(request: object): Promise<any>;
  [name: string]: (request: object) => Promise<any>;
}

/** What why.js and stepinside.js use of the step view (stepthrough.js), and what they keep on it. */
interface StepViewLike {
  x: StepPayload | null;
  state: { which: string; t: number; layer: number | null; head: number | null; guess: boolean };
  trace(): Trace;
  whyLabel?: HTMLElement;
  whyPick?: HTMLSelectElement;
  whyAnswer?: HTMLElement;
  whyQuick?: HTMLElement;
  insideBox?: HTMLElement;
  insideOn?: boolean;
  _inside?: { trace: Trace; answers: Promise<[ContributionsAnswer, LogitLensAnswer]> };
}

/** The page's state, as the link keeps it (walk.js); layers and heads counted from 1. */
interface PageState {
  sentence: string;
  view: string;
  kind: string;
  layer: number | null;
  head: number | null;
  display: string;
  level: string;
  step: number | null;
  /** The second model shown beside the first (the compare tick). */
  compare?: boolean;
  /** The model chosen in Options: "auto" (each sentence by the model that knows it), "default" or "everyday". */
  model?: string;
  /** The translate view's open inside panel: "ladder", "who", "patch" or "qkv" (null: none). */
  panel: string | null;
  /** The picture's whole-model views shown. */
  whole: boolean;
  /** The sentence each view shows now (null: nothing yet). */
  views: Record<string, string | null>;
}

/** The page's state as a link carries it (walk.js, readLink); absent = as on a first visit. */
interface LinkState {
  compare?: boolean;
  model?: string;
  panel?: string;
  whole?: boolean;
  sentence?: string;
  view?: string;
  kind?: string;
  layer?: number;
  head?: number;
  display?: string;
  level?: string;
  step?: number;
}

/** window.attentionLens: the page's public API, for tests, benchmarks and the console (docs/page.md). */
interface PublicApi {
  /** The page's state now (walk.js in the app; siteviews.js on the static site: sentence, view and views). */
  state(): PageState;
  /** Open a view for the page's sentence (views.js): resolves once it shows it; an unknown name throws. */
  openView?(name: string): Promise<void>;
  /** The names openView takes (views.js). */
  viewNames?(): string[];
  /** The glossary's dialog, opened at a term (glossary.js). */
  glossary?(id?: string): void;
  /** The guided walk's stops (tour.js). */
  walk?(): { title: string; view: string; guess: boolean; concept: string | null }[];
  /** The static site (site.js): translate in the page; a Promise of the payload the viewer draws. */
  translate?(text: string, options?: { num_beams?: number; length_penalty?: number; max_new_tokens?: number | null }): Promise<any>;
  /** The picture's twelve steps (concepts.js): each opens in place; `taps` names the tap names it draws. */
  concepts?(): { id: string; title: string; taps: string[]; open(place?: any): Promise<HTMLElement> }[];
  /** The step open now, and its place (from 0), or null. */
  openedConcept?(): { id: string; place: { kind: string; layer: number; head: number; row: number } } | null;
  /** The static site: ms from the page's start to the model loaded, and to the first map drawn. */
  loadedMs?: number;
  firstMs?: number;
  ready?: boolean;
  /** The static site: the float maps of the last translation, and a text's pieces (tests compare them). */
  maps?(): Record<string, number[]>[];
  pieces?(text: string): number[];
  sentences?(text: string): string[];
  /** The static site: training_data/domain.py's report on a text (null without the checkpoint's guess). */
  domain?(text: string): { everyday: boolean; log_odds: number; words: string[] } | null;
  /** The static site: each sentence of a text as the router sends it (router.js), null without the router's files. */
  route?(text: string): (Route & { text: string })[] | null;
  /** The static site (siteviews.js): the step view's value, computed in the page (steptrace.js), and its two
      server functions. */
  step?(text: string, numBeams?: number, model?: string): Promise<any>;
  stepForce?(request: { text: string; num_beams: number; ids: number[]; word?: string | null; model?: string }): Promise<any>;
  stepHypothesis?(request: { text: string; ids: number[]; model?: string }): Promise<any>;
  /** The static site: the head lab's answer for a text with a mask (headlab.js's JSON; the grids' when omitted). */
  headLab?(text: string, mask?: string): Promise<any>;
  /** The head lab's grids (headlab.js): the heads switched off, as JSON; a result waits for an answer. */
  headMask?(): string | null;
  labBusy?(id: string): void;
  /** The static site: train the copy lab in the page with these settings; a Promise of its last report. */
  /** The static site: the payload translate() draws, computed and not drawn. */
  compute?(text: string, options?: { num_beams?: number; length_penalty?: number; max_new_tokens?: number | null; model?: string }): Promise<any>;
  /** The static site: the compare view's second side for a text (each sentence by the other model). */
  compare?(text: string, options?: { num_beams?: number }): Promise<any>;
  /** The static site: time travel's value for a text (the trained snapshot read), and snapshot i read too. */
  travel?(text: string): Promise<any>;
  travelTo?(i: number): Promise<any>;
  copyLab?(settings: { n_layers: number | string; n_heads: number | string; d_model: number | string; lr: number | string; steps: number | string }): Promise<any>;
}

/** The page's state (store.js): what every view reads and follows. */
interface PageStore {
  /** The German the page translated last. */
  sentence: string;
  /** The view the visitor works in: translate, step, headlab, history, copylab. */
  view: string;
  /** The step the step-through view shows (from 0), or null. */
  step: number | null;
  /** The language the page speaks: "en". */
  locale: string;
  /** The language of the sentence the page shows: "de", or "zh" where the Chinese model translated it (i18n.js). */
  source: "de" | "zh";
  /** Where the views' questions go: the app's "server", or the model in this "page". */
  backend: "server" | "page";
  /** Every view's section is open, and the picture's whole-model views (?open=all: tests, screenshots). */
  allOpen: boolean;
  /** The explanation the translate view drew last, and the compared model's. */
  translated: Explanation | null;
  compared: Explanation | null;
  /** The views whose mount has run, by name (store.register). */
  mounted: string[];
  /** The line the Code view scrolls to when it next draws (a picture's step asked for it): its tap and layer (from 1). */
  codeTarget?: { tap: string; layer: number } | null;
}

/** A DOM element with a class and text (draw.js): typed by its tag. */
type ElementMaker = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string | null, text?: string) =>
  HTMLElementTagNameMap[K];

/** An SVG element with its attributes and text (draw.js). */
type SvgMaker = (tag: string, attrs?: Record<string, string | number>, text?: string) => SVGElement;

interface Window {
  /** The page's door for tests, notebooks and the console (door.js): the only name the page puts on window. */
  attentionLens: PublicApi;
  /** Gradio's page config: the app's root URL. */
  gradio_config?: { root?: string };
}

/** The tokenizer in the page (bpe.js). */
interface InPageTokenizer {
  encode(text: string): number[];
  decode(ids: number[], keepSpecial?: boolean): string;
  labels(ids: number[]): string[];
}

/** training_data/domain.py's guess of which kind of German a text is (domain.js). */
interface DomainGuess {
  threshold: number;
  logOdds(text: string): number;
  report(text: string, shown?: number): { everyday: boolean; log_odds: number; words: string[] };
}

/** What AL.loadInPage loads: the model, its tokenizer, its decoding rule and its domain guess (or null). */
interface InPageLens {
  config: any;
  bpe: InPageTokenizer;
  model: any;
  noRepeat: number;
  rule: { confidence_below: number };
  site: any;
  domain: DomainGuess | null;
  /** lens/routed.Router in the page (router.js), or null where the checkpoint ships no domain or language file. */
  router: InPageRouter | null;
  /** The everyday model's lens, fetched on first use; null where the site ships one model. */
  everyday: (() => Promise<InPageLens>) | null;
  chinese: (() => Promise<InPageLens>) | null;
  /** The folder its files came from (ending in '/'). */
  base: string;
  /** The Code view's files and tap lines (code.json, lens/code.py's code_map), fetched when the view first opens. */
  code?: Promise<{ files: Record<string, string>; lines: Record<string, { file: string; line: number; caller_file: string; caller_line: number }> }>;
  lastMaps?: Record<string, Float32Array>[];
}

/** The SIMD product (transformer.js, AL.loadKernels); `fresh` gives another instance with its own memory. */
interface Kernels {
  memory: WebAssembly.Memory;
  linear: Function;
  fresh?: () => Promise<Kernels>;
}

/** router.js: AL.makeRouter's answer. */
interface InPageRouter {
  split(text: string): [string, string][];
  route(sentence: string, model?: string, written?: string | null): Route & { text: string };
}
