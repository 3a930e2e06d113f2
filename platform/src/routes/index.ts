// The route table: every route module of the platform and where the app mounts it. Each
// module is named after the paths it holds, and holds every method of each of its paths.
import { accountRoutes } from "./account.ts";
import { keyRoutes } from "./keys.ts";
import { oauthAuthorizeRoutes } from "./oauth-authorize.ts";
import { oauthGrantRoutes } from "./oauth-grants.ts";
import { oauthMetadataRoutes } from "./oauth-metadata.ts";
import { oauthRegisterRoutes } from "./oauth-register.ts";
import { oauthTokenRoutes } from "./oauth-token.ts";
import { pageRoutes } from "./pages.ts";
import { passkeyRoutes } from "./passkeys.ts";
import { recoveryCodeRoutes } from "./recovery-codes.ts";
import { sessionRoutes } from "./sessions.ts";
import { signInRoutes } from "./sign-in.ts";
import { signUpRoutes } from "./sign-up.ts";

/**
 * The JSON endpoints, under /api: what the pages' script (public/app.js) sends, every change
 * among them. Another method on one of their paths is 405, its Allow listing theirs.
 */
export const API_ROUTES = [
  signUpRoutes,
  signInRoutes,
  sessionRoutes,
  accountRoutes,
  passkeyRoutes,
  recoveryCodeRoutes,
  keyRoutes,
  oauthGrantRoutes,
];

/**
 * At the origin's root, in this order: the OAuth server's endpoints, then the pages, whose
 * last route (any other GET) is the 404 page.
 */
export const SITE_ROUTES = [
  oauthMetadataRoutes,
  oauthAuthorizeRoutes,
  oauthTokenRoutes,
  oauthRegisterRoutes,
  pageRoutes,
];
