// Deletes the run's temporary D1 (made in playwright.config.ts).
import { rmSync } from "node:fs";

export default function teardown(): void {
  if (process.env.BROWSER_D1) rmSync(process.env.BROWSER_D1, { recursive: true, force: true });
}
