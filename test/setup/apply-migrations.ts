import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Setup files run before each test file, outside per-file storage isolation;
// applyD1Migrations only applies what is missing, so this is safe to repeat.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
