// npm run platform:assets
// Copies @simplewebauthn/browser's browser build (the pinned devDependency) into
// platform/public/vendor, where Workers static assets serve it from the platform's own
// origin (git-ignored: nothing of node_modules is committed, none of it enters the
// worker script). platform/wrangler.toml's [build] runs it before dev, deploy and dry
// runs, npm's pretest hook before the tests. Quiet unless it fails.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const source = path.join(root, "node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js");
const target = path.join(root, "platform/public/vendor/simplewebauthn-browser.js");

let script: string;
try {
  script = readFileSync(source, "utf8");
} catch {
  console.error("platform:assets: @simplewebauthn/browser is not installed: run npm install.");
  process.exit(1);
}
mkdirSync(path.dirname(target), { recursive: true });
writeFileSync(target, script.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"));
