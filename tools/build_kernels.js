"use strict";
/* ui/static/kernels.wat -> ui/static/kernels.wasm (wabt, a devDependency): `npm run wasm`. The page loads the
   .wasm as committed; tests/js/kernels.test.js assembles the .wat again and checks the bytes agree. */
const fs = require("node:fs");
const path = require("node:path");

const STATIC = path.join(__dirname, "..", "ui", "static");

async function assemble() {
  const wabt = await require("wabt")();
  const source = fs.readFileSync(path.join(STATIC, "kernels.wat"), "utf8");
  const module = wabt.parseWat("kernels.wat", source, { simd: true });
  module.validate();
  return Buffer.from(module.toBinary({}).buffer);
}

if (require.main === module) {
  assemble().then((bytes) => {
    fs.writeFileSync(path.join(STATIC, "kernels.wasm"), bytes);
    console.log(`ui/static/kernels.wasm: ${bytes.length} bytes`);
  });
}
module.exports = { assemble };
