// Staging and production cannot be deployed without their secrets (wrangler refuses
// `deploy` and `versions upload` while a required secret is unset); local development
// needs none, since the worker then uses the public local values.
import { expect, it } from "vitest";
import { experimental_readRawConfig } from "wrangler";

it("wrangler.toml requires the key tag secret and the cursor secret in every deployed environment, and nothing locally", () => {
  const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
  const required = (config: { secrets?: { required?: string[] } } | undefined) =>
    [...(config?.secrets?.required ?? [])].sort();
  expect(Object.keys(rawConfig.env ?? {}).sort()).toEqual(["production", "staging"]);
  for (const name of ["staging", "production"]) {
    expect(required(rawConfig.env?.[name]), name).toEqual(["API_KEY_TAG_SECRET", "CURSOR_SECRET"]);
  }
  expect(required(rawConfig)).toEqual([]);
});
