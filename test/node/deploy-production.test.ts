// `npm run deploy:production` run as a CI job would run it by mistake: no terminal, no --yes.
// It must refuse before anything reaches wrangler. The run has no Cloudflare credentials
// (an empty home and token), so even a broken guard could not deploy.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { npm } from "../live/dev-server.ts";

it("npm run deploy:production refuses to deploy unattended without --yes", async () => {
  const home = mkdtempSync(path.join(tmpdir(), "petstore-no-credentials-"));
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: home, CLOUDFLARE_API_TOKEN: "" };
  try {
    await expect(npm(["deploy:production"], env)).rejects.toMatchObject({
      code: 2,
      stdout: "",
      stderr: expect.stringMatching(/^error: .*no terminal to ask on: nothing was deployed\./),
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
