// Builds the package (npm pack's prepack, npm run build): core/client.ts and each <surface>/index.ts
// compile to .js and .d.ts beside them (tsconfig.build.json). It compiles with the TypeScript this
// package pins as its one dev dependency: the one installed here or in an enclosing folder (this
// repository's root, after `make deps-npm`), and otherwise, as in a fresh clone, it installs that
// version here first, so `npm pack` alone works.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const dir = new URL(".", import.meta.url);
const pinned = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")).devDependencies.typescript;

/** tsc finds the compiler's entry point, or null (a fresh require each time: none is cached). */
function tsc() {
  try {
    return createRequire(new URL("package.json", dir)).resolve("typescript/bin/tsc");
  } catch {
    return null;
  }
}

let compiler = tsc();
if (compiler === null) {
  console.error(`build: installing typescript@${pinned}, the package's one dev dependency`);
  execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", `typescript@${pinned}`], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  compiler = tsc();
  if (compiler === null) {
    throw new Error(`typescript@${pinned} did not install`);
  }
}
execFileSync(process.execPath, [compiler, "-p", "tsconfig.build.json"], { cwd: dir, stdio: "inherit" });
