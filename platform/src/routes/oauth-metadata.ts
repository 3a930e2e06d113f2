// The authorization server's metadata (RFC 8414 section 3), readable from any origin.
import { Hono } from "hono";
import { authorizationServerMetadata, OAUTH_PATHS } from "../oauth/metadata.ts";
import { machineCors } from "../oauth/responses.ts";
import type { PlatformAppEnv } from "../types.ts";

/** At the origin's root (routes/index.ts); any origin may call it (no cookie is read). */
export const oauthMetadataRoutes = new Hono<PlatformAppEnv>();

oauthMetadataRoutes.use(OAUTH_PATHS.metadata, machineCors);
oauthMetadataRoutes.get(OAUTH_PATHS.metadata, (c) => c.json(authorizationServerMetadata(c.env)));
