// npm run dev [-- <wrangler dev flags>]
// 1. applies migrations/ to the local D1, 2. seeds the local-only key
// `local-dev-key` (LOCAL database only, never remote), 3. starts `wrangler dev`.
import { hashApiKey, LOCAL_DEV_KEY } from "../src/auth/keys.ts";
import { seedLocalDevKeyStatement } from "./key-statements.ts";
import { d1Target, runWranglerForeground, wrangler } from "./wrangler.ts";

const passThrough = process.argv.slice(2);
const persistIndex = passThrough.indexOf("--persist-to");
const persistTo = persistIndex >= 0 ? passThrough[persistIndex + 1] : undefined;
const local = d1Target(undefined, persistTo);

wrangler(["d1", "migrations", "apply", "DB", ...local], { ci: true });

wrangler(
  [
    "d1",
    "execute",
    "DB",
    ...local,
    "--command",
    seedLocalDevKeyStatement(await hashApiKey(LOCAL_DEV_KEY)),
  ],
  { capture: true },
);
console.log(
  `Local D1 ready. Try: curl -H "Authorization: Bearer ${LOCAL_DEV_KEY}" http://localhost:8787/v1/pets`,
);

runWranglerForeground(["dev", ...passThrough]);
