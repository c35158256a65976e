// The page's search (ui/static/search.js): topk, which the beam, the step-through's candidates and the picture's
// output step read, against a sort of the whole row.
import test from "node:test";
import assert from "node:assert/strict";
import { topk } from "../../ui/static/search.js";

/** The k largest of a row by a full sort: [[value, index]], the lower index first among equals. */
const sorted = (row, k) => row.map((v, i) => [v, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, k);

test("topk is the sort's first k, however the row is ordered (no entry twice, none lost)", () => {
  let seed = 7;
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (const [n, k] of [[5, 10], [5, 3], [60, 50], [200, 4], [8000, 50]]) {
    const row = Array.from({ length: n }, () => Math.round(random() * 40) / 4); // ties too
    assert.deepEqual(topk(row, k), sorted(row, k), `n ${n}, k ${k}`);
  }
  assert.deepEqual(topk([1, 5, 2, 4, 3], 10), [[5, 1], [4, 3], [3, 4], [2, 2], [1, 0]]);
});
