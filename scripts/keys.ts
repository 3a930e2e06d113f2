// npm run keys -- create --label L [--env staging|production]
// npm run keys -- list [--env staging|production]
// npm run keys -- revoke <id> [--env staging|production]
// Without --env the local database (the one `npm run dev` uses) is changed.
// Keys are stored only as SHA-256 hashes; `create` prints the key once, alone
// on the last line of standard output.
import { parseArgs } from "node:util";
import { displayPrefix, generateApiKey, hashApiKey } from "../src/auth/keys.ts";
import { AUTH_CACHE_TTL_MS } from "../src/config.ts";
import {
  createKeyStatement,
  LIST_KEYS_STATEMENT,
  parseKeyId,
  revokeKeyStatement,
} from "./key-statements.ts";
import { d1Target, wrangler } from "./wrangler.ts";

const USAGE = `usage:
  npm run keys -- create --label <label> [--env staging|production]
  npm run keys -- list [--env staging|production]
  npm run keys -- revoke <id> [--env staging|production]`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    label: { type: "string" },
    env: { type: "string" },
    "persist-to": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const [command, ...rest] = positionals;
if (values.help || !command) fail(USAGE);
if (values.env !== undefined && !["staging", "production"].includes(values.env)) {
  fail(`--env must be staging or production (got "${values.env}")`);
}
const target = d1Target(values.env, values["persist-to"]);
const where = values.env ? `${values.env} (remote)` : "local";

interface D1ExecuteResult {
  results: Array<Record<string, unknown>>;
  meta?: { changes?: number };
}

function execute(sql: string): D1ExecuteResult {
  const output = wrangler(["d1", "execute", "DB", ...target, "--json", "--command", sql], {
    capture: true,
    ci: true,
  });
  const parsed = JSON.parse(output.slice(output.indexOf("["))) as D1ExecuteResult[];
  const first = parsed[0];
  if (!first) throw new Error("wrangler d1 execute returned no result");
  return first;
}

const now = Math.floor(Date.now() / 1000);

// The local database may not exist yet: bring it to the current schema first
// (remote databases are migrated by the deploy scripts, never from here).
if (!values.env)
  wrangler(["d1", "migrations", "apply", "DB", ...target], { capture: true, ci: true });

if (command === "create") {
  const label = values.label ?? fail("create needs --label <label> (who or what the key is for)");
  if (!/^[\x20-\x7E]{1,100}$/.test(label))
    fail("--label must be 1 to 100 printable ASCII characters");
  const key = generateApiKey();
  const { results } = execute(
    createKeyStatement({
      keyHash: await hashApiKey(key),
      prefix: displayPrefix(key),
      label,
      now,
    }),
  );
  console.log(`Created key id ${results[0]?.id} (${label}) in ${where}. It is shown only once:`);
  console.log(key);
} else if (command === "list") {
  const { results } = execute(LIST_KEYS_STATEMENT);
  const iso = (s: unknown) => (typeof s === "number" ? new Date(s * 1000).toISOString() : "");
  console.table(
    results.map((r) => ({
      id: r.id,
      prefix: `${r.prefix}…`,
      label: r.label,
      created: iso(r.created_at),
      revoked: iso(r.revoked_at) || "-",
    })),
  );
} else if (command === "revoke") {
  const id =
    parseKeyId(rest[0]) ?? fail("revoke needs the key's numeric id (see `npm run keys -- list`)");
  const { results } = execute(revokeKeyStatement(id, now));
  if (results.length === 0) fail(`No active key with id ${id} in ${where}.`);
  console.log(
    `Revoked key id ${id} in ${where}; it is refused everywhere within ${AUTH_CACHE_TTL_MS / 1000} seconds.`,
  );
} else {
  fail(USAGE);
}
