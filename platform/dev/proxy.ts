// `npm run dev`'s proxy to the developer platform (platform/dev/wrangler.toml): every
// request, as it came, to the platform worker running inside the API's `wrangler dev`.
export default {
  fetch: (request, env) => env.PLATFORM.fetch(request),
} satisfies ExportedHandler<{ PLATFORM: Fetcher }>;
