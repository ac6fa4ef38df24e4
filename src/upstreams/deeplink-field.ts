/**
 * The `deeplink` field (an AreaField of module.ts), declared alike by the two areas whose upstream gives one: the
 * hosted gateway and the PayWay payment link. Either area alone shows it; with both, one field.
 */
export const DEEPLINK_FIELD = {
  name: "deeplink",
  type: () => String,
  nullable: true,
  description: "Hosted gateway and PayWay link payments: the deeplink that opens the payer's banking app on it",
  none: null,
  checkout: { after: "merchantName", link: "app" as const },
};

/** An area's stored deeplink (its own `upstream.deeplink`), if it is text. */
export const storedDeeplink = (upstream: Record<string, unknown>): string | null =>
  typeof upstream.deeplink === "string" ? upstream.deeplink : null;
