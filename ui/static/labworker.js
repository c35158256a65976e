// @ts-check
/* Attention Lens, one lab run in a worker, so that the page stays responsive while it trains: the message
   {settings, limitS} starts trainer.js's train; every report goes back as {report}, the end as {done}, a refusal
   or a failure as {error}. The page ends a run by terminating the worker. */
import { train } from "./trainer.js";

self.onmessage = async (event) => {
  try {
    const last = await train(event.data.settings, (report) => self.postMessage({ report }), () => false, event.data.limitS);
    self.postMessage({ done: last });
  } catch (err) {
    self.postMessage({ error: String((err && err.message) || err).slice(0, 300) });
  }
};
