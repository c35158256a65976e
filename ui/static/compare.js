// @ts-check
/* Attention Lens, two models side by side (the compare view, ui/translate.wire_second): both sides laid out alike
   (the English, its notes, then the map, the German in training under it) and their maps level, the higher
   map moved down to the lower one. While two models are compared the picture of the model waits (it is the
   page's one model's; "Hide the other model" brings it back). */
import { subscribe, view } from "./store.js";

/** Lay the two sides out alike and level their maps; undo it when one model is shown. */
function level() {
  const a = view("translate"), b = view("second");
  document.body.classList.remove("al-comparing");
  for (const side of [a, b]) if (side) side.top.style.minHeight = "";
  if (!a || !b || b.root.offsetParent === null || !b.viewer.explanation) return;
  document.body.classList.add("al-comparing");
  const evidence = b.notes.querySelector(".al-evidence"); // under the map, where the page's own side has it
  if (evidence) b.root.append(evidence);
  const ra = a.root.getBoundingClientRect(), rb = b.root.getBoundingClientRect();
  if (Math.abs(ra.left - rb.left) < 40) return; // one above the other (a phone): nothing to level
  // the higher map moves down to the lower one: the part above it grows by the difference
  const [ya, yb] = [a, b].map((side) => side.viewer.root.getBoundingClientRect().top);
  const higher = ya < yb ? a : b;
  higher.top.style.minHeight = `${higher.top.offsetHeight + Math.abs(ya - yb)}px`;
}

const soon = () => requestAnimationFrame(() => requestAnimationFrame(level)); // once both have drawn
subscribe("compared", soon);
subscribe("translated", soon);
window.addEventListener("resize", soon);
// the route line's button shows or hides the other model: Gradio shows its column a moment later
document.addEventListener("click", (e) => {
  if (!(/** @type {HTMLElement} */ (e.target)).closest(".al-see-other")) return;
  for (const ms of [100, 400, 1200]) setTimeout(level, ms);
});
