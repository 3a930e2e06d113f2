// What the browser tests share: a person's hand (clicks counted) and a virtual passkey
// authenticator through the DevTools WebAuthn domain.
import type { BrowserContext, CDPSession, Locator, Page } from "@playwright/test";

/** A person's hand: each click counted, typing into a field after clicking it. */
export function hand(page: Page) {
  const hand = {
    clicks: 0,
    async click(target: Locator) {
      hand.clicks += 1;
      await target.click();
    },
    async type(field: Locator, text: string) {
      await hand.click(field);
      await page.keyboard.type(text);
    },
  };
  return hand;
}

/** The page's DevTools session with the WebAuthn domain on. */
export async function passkeyBrowser(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  return cdp;
}

/** A virtual authenticator on "this device" (or a security key): discoverable, verifying. */
export async function authenticator(cdp: CDPSession, transport: "internal" | "usb" = "internal") {
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport,
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  const credentials = async () =>
    (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials;
  return {
    id: authenticatorId,
    credentials,
    /** Whether it answers prompts (and the browser's autofill) by itself. */
    answers: (enabled: boolean) =>
      cdp.send("WebAuthn.setAutomaticPresenceSimulation", { authenticatorId, enabled }),
    remove: () => cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId }),
  };
}
