/* ui/static/kernels.wat -> ui/static/kernels.wasm (wabt, a devDependency): `npm run wasm`. The page loads the
   .wasm as committed; tests/js/kernels.test.js assembles the .wat again and checks the bytes agree. */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import wabt from "wabt";

const STATIC = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "ui", "static");

export async function assemble() {
  const source = fs.readFileSync(path.join(STATIC, "kernels.wat"), "utf8");
  const module = (await wabt()).parseWat("kernels.wat", source, { simd: true });
  module.validate();
  return Buffer.from(module.toBinary({}).buffer);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bytes = await assemble();
  fs.writeFileSync(path.join(STATIC, "kernels.wasm"), bytes);
  console.log(`ui/static/kernels.wasm: ${bytes.length} bytes`);
}
