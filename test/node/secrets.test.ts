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

it("the developer platform, in each environment, is where the API's reference page leads, grants the API's addresses, on the API's database, and needs the API's key tag secret", () => {
  const api = experimental_readRawConfig({ config: "wrangler.toml" }).rawConfig;
  const platform = experimental_readRawConfig({ config: "platform/wrangler.toml" }).rawConfig;
  type Config = typeof api;
  const environments = (config: Config): Array<[string, Config]> => [
    ["local", config],
    ...Object.entries(config.env ?? {}).map(
      ([name, env]) => [name, env as Config] as [string, Config],
    ),
  ];
  expect(environments(platform).map(([name]) => name)).toEqual(
    environments(api).map(([name]) => name),
  );
  for (const [name, apiEnv] of environments(api)) {
    const platformEnv = (name === "local" ? platform : platform.env?.[name]) as Config;
    const vars = (config: Config) => (config.vars ?? {}) as Record<string, string>;
    expect(vars(apiEnv).PLATFORM_ORIGIN, name).toBe(vars(platformEnv).PLATFORM_ORIGIN);
    // The API's addresses, the same list in both (what /mcp responds under, what the platform
    // grants): its route's first, then its workers.dev address where it has one.
    const apiRoute = (apiEnv.routes as Array<{ pattern: string }> | undefined)?.[0]?.pattern;
    const origins = vars(apiEnv).API_ORIGINS?.split(" ");
    expect(vars(platformEnv).API_ORIGINS, name).toBe(vars(apiEnv).API_ORIGINS);
    expect(origins, name).toEqual(
      apiRoute
        ? [
            `https://${apiRoute}`,
            ...(apiEnv.workers_dev
              ? [
                  expect.stringMatching(
                    new RegExp(`^https://${apiEnv.name}\\.[a-z0-9-]+\\.workers\\.dev$`),
                  ),
                ]
              : []),
          ]
        : ["http://localhost:8787", "http://127.0.0.1:8787"],
    );
    const database = (config: Config) =>
      config.d1_databases?.map(
        (db: { binding: string; database_name?: string; database_id?: string }) => [
          db.binding,
          db.database_name,
          db.database_id,
        ],
      );
    expect(database(platformEnv), name).toEqual(database(apiEnv));
    // Keys the platform issues must pass the API's tag check: the same secret, by name.
    if (name !== "local") {
      expect(platformEnv.secrets?.required, name).toContain("API_KEY_TAG_SECRET");
    }
  }
});
