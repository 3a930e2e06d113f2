// The bodies the platform's JSON endpoints accept. Names and labels follow the pet-name
// rules of the API (one module for both workers, src/pets/names.ts).
import * as z from "zod/mini";
import { nameSchema } from "../../src/pets/names.ts";
import { SCOPES } from "../../src/scopes.ts";
import {
  DISPLAY_NAME_MAX,
  KEY_LIFETIMES,
  LABEL_MAX,
  MAX_EXPIRY_SECONDS,
  MAX_GRACE_SECONDS,
  MAX_PASSKEYS,
} from "./config.ts";

/** An account's display name: 1 to 64 characters under the name rules. */
const DisplayNameSchema = nameSchema(DISPLAY_NAME_MAX);

/** A key's label, and a passkey's name: 1 to 100 characters under the name rules. */
const LabelSchema = nameSchema(LABEL_MAX);

/** A body with nothing in it: `{}`. */
export const EmptyBody = z.strictObject({});

/** Sign-up's first step: the name the passkey is saved under (the account's display name). */
export const SignUpOptionsBody = z.strictObject({ displayName: DisplayNameSchema });

const base64urlString = z.string().check(z.regex(/^[A-Za-z0-9_-]+$/, "must be base64url"));

/** What @simplewebauthn/browser's startRegistration answers; the library checks the rest. */
export const RegistrationBody = z.looseObject({
  id: base64urlString,
  rawId: base64urlString,
  type: z.literal("public-key"),
  response: z.looseObject({
    clientDataJSON: base64urlString,
    attestationObject: base64urlString,
    transports: z.optional(z.array(z.string())),
  }),
  clientExtensionResults: z._default(z.looseObject({}), {}),
});

/** What @simplewebauthn/browser's startAuthentication answers. */
export const AuthenticationBody = z.looseObject({
  id: base64urlString,
  rawId: base64urlString,
  type: z.literal("public-key"),
  response: z.looseObject({
    clientDataJSON: base64urlString,
    authenticatorData: base64urlString,
    signature: base64urlString,
    userHandle: z.optional(base64urlString),
  }),
  clientExtensionResults: z._default(z.looseObject({}), {}),
});

const wholeSeconds = (min: number, max: number) =>
  z.int().check(z.gte(min), z.lte(max, `must be at most ${max} seconds`));

/** A key's scopes: at least one, each one of the API's. */
const ScopesSchema = z
  .array(z.enum(SCOPES, { error: `must each be one of ${SCOPES.join(", ")}` }))
  .check(z.minLength(1, "must name at least one scope"));

/** A new key: its label, scopes (the API's three) and expiry in seconds (none: until revoked). */
export const CreateKeyBody = z.strictObject({
  label: LabelSchema,
  scopes: ScopesSchema,
  expiresInSeconds: z.optional(z.nullable(wholeSeconds(60, MAX_EXPIRY_SECONDS))),
});

/**
 * A rotation: how long the old key keeps working (default DEFAULT_GRACE_SECONDS; 0: it stops now).
 */
export const RotateKeyBody = z.strictObject({
  graceSeconds: z.optional(wholeSeconds(0, MAX_GRACE_SECONDS)),
});

/** A key's new label. */
export const LabelBody = z.strictObject({ label: LabelSchema });

/** A passkey's new name. */
export const PasskeyNameBody = z.strictObject({ name: LabelSchema });

/** A recovery code as a person types it: the letters and digits, dashes and spaces anywhere. */
export const RecoveryCodeBody = z.strictObject({
  code: z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
    .check(z.maxLength(64, "must have 16 letters and digits, such as 7KQ4-M2ZD-9XWB-H3TR")),
});

/**
 * Securing the account (after a recovery): the passkeys to remove (the account's; never all), and
 * whether its other sessions end.
 */
export const SecureAccountBody = z.strictObject({
  removePasskeys: z.array(base64urlString).check(z.maxLength(MAX_PASSKEYS)),
  endOtherSessions: z.boolean(),
});

/** Account deletion: the passkey's answer to the confirmation challenge. */
export const DeleteAccountBody = z.strictObject({ passkey: AuthenticationBody });

/** The holder's Allow on the consent page: the scopes allowed, and one of the lifetimes offered. */
export const AllowBody = z.strictObject({
  scopes: ScopesSchema,
  expiresInSeconds: z.nullable(
    z.number().check(
      z.refine((n) => KEY_LIFETIMES.some(([seconds]) => seconds === n), {
        error: `must be one of ${KEY_LIFETIMES.flatMap(([s]) => (s === null ? [] : [s])).join(", ")} or null`,
      }),
    ),
  ),
});
