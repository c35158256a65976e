// @ts-check
/* Attention Lens, the copy lab trained in the page: the paper's tiny Transformer (trainer.js, the page's one trainer,
   at its default switches) learning to copy random sequences of symbols in the visitor's browser, under the copy
   lab's caps (training/lab.py's CAPS). Every REPORT_EVERY steps it reports in ui/copylab.py's fields, which
   copylab.js draws: the loss, four held-out sequences copied, and the cross-attention of the first turning from
   uniform into a diagonal. What differs from the server's run: the random numbers (a seeded generator of its own,
   so the weights and the batches are not torch's), the batch (18 sequences, half the server's) and the time limit. */
import { quantize } from "./inpage.js";
import { SHOWN, VOCAB_SIZE, finalLook, heldOut, startRun, trainStep } from "./trainer.js";

export const TIME_LIMIT_S = 60;
// training/lab.py's CAPS
export const CAPS = { n_layers: [1, 2], n_heads: [1, 4], d_model: [16, 64], steps: [10, 600], lr: [1e-4, 1e-2] };
const COPY_REPORT_EVERY = 10;

/** The copy lab's settings, checked against CAPS (training/lab.CopyLabSettings.validate); a message naming what to fix. */
export function checkedSettings(s) {
  for (const [name, [low, high]] of Object.entries(CAPS)) {
    const v = Number(s[name]);
    if (!Number.isFinite(v) || v < low || v > high || (name !== "lr" && !Number.isInteger(v))) {
      throw new Error(`${name} must be between ${low} and ${high}, got ${s[name]}`);
    }
  }
  if (s.d_model % s.n_heads) throw new Error(`d_model (${s.d_model}) must be divisible by n_heads (${s.n_heads})`);
  const steps = Number(s.steps);
  return { n_layers: Number(s.n_layers), n_heads: Number(s.n_heads), d_model: Number(s.d_model), lr: Number(s.lr), steps,
    seed: Number(s.seed || 0), warmup: Math.max(1, Math.min(100, Math.floor(steps / 4))) };
}

/** The copy lab's report (ui/copylab.progress_payload's fields) of the model on the first SHOWN held-out sequences. */
function copyReport(run, c, held, state) {
  const look = finalLook(run, held), T = look.tgt.length, S = look.src.length;
  const maps = new Float32Array(c.n_layers * c.n_heads * T * S);
  look.cross.forEach((w, l) => maps.set(w, l * c.n_heads * T * S));
  const words = (tokens) => tokens.map((t, i) => [t, [i]]);
  return {
    id: Date.now() + state.step, step: state.step, total: c.steps, elapsed: Math.round(state.elapsed * 100) / 100, limit: TIME_LIMIT_S,
    losses: state.losses.slice(), examples: look.examples, accuracy: look.examples.filter((e) => e[1] === e[2]).length / look.examples.length,
    done: state.done, stopped_by_time: state.stopped, label_smoothing: run.c.smoothing, vocab_size: VOCAB_SIZE,
    map: { layers: { cross: c.n_layers }, heads: c.n_heads, sentences: [{ tokens: { src: look.src, tgt: look.tgt, in: [] },
      words: { src: words(look.src), tgt: words(look.tgt), in: [] }, maps: { cross: quantize(maps) } }] },
  };
}

/** The copy lab: train with `settings` (checkedSettings), calling `onReport(report)` every COPY_REPORT_EVERY steps
    and at the end; `stop()` true ends it early. Resolves to the last report. */
export async function trainCopy(settings, onReport, stop = () => false) {
  const c = checkedSettings(settings), run = startRun(c), held = heldOut("copy", SHOWN);
  const state = { step: 0, losses: [], elapsed: 0, done: false, stopped: false }, start = performance.now();
  let last = null;
  while (!state.done) {
    const { loss } = trainStep(run);
    state.step = run.step;
    state.losses.push([state.step, Math.round(loss * 1e4) / 1e4]);
    state.elapsed = (performance.now() - start) / 1000;
    state.stopped = state.elapsed >= TIME_LIMIT_S || stop();
    state.done = state.step >= c.steps || state.stopped || !Number.isFinite(loss);
    if (state.step % COPY_REPORT_EVERY === 0 || state.done) {
      last = copyReport(run, c, held, state);
      onReport(last);
      await new Promise((r) => setTimeout(r, 0)); // the page draws the report
    }
  }
  return last;
}
