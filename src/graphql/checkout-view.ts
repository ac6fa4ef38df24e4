import { GraphQLError, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from "graphql";

/**
 * A field's extension that puts it in the checkout view too: the areas' fields a client token may read (their
 * declarations say so, AreaField.checkout; transactions/area-fields.ts sets it), which this list cannot name.
 */
export const CHECKOUT_VIEW_EXTENSION = "checkoutView";

/**
 * What a clientToken (a browser's credential for one transaction: public by design) may read: the
 * checkout view of its transaction and nothing else. Never meta, internal ids (merchant, key), the event
 * timeline, webhook deliveries, or the payer's details. The list is documented in docs/api.md ("Client tokens")
 * and docs/decisions/0130-checkout-view-allow-list.md; a field added to these types is invisible to client
 * tokens until it is listed here, or, an area's field, its declaration puts it in the view (CHECKOUT_VIEW_EXTENSION).
 */
export const CHECKOUT_VIEW: Record<string, readonly string[]> = {
  Query: ["transaction", "transactions"],
  Subscription: ["transactionUpdated"],
  Transaction: ["id", "status", "amount", "currency", "qr", "qrImage", "expiredAt", "merchantName"],
  TransactionConnection: ["edges", "pageInfo"],
  TransactionEdge: ["cursor", "node"],
  PageInfo: ["hasNextPage", "hasPreviousPage", "startCursor", "endCursor"],
  // A live event: its id (for lastEventId), its type (payment.scanned, payment.completed…) and the snapshot.
  TransactionEvent: ["id", "type", "transaction"],
  TransactionSnapshot: ["transactionId", "status", "amount", "currency", "expiredAt"],
};

const ALLOWED = new Map(Object.entries(CHECKOUT_VIEW).map(([t, f]) => [t, new Set(f)]));

/**
 * The fields of a (valid) document outside the checkout view, as `Type.field`; empty when a client token may
 * run it. Static: checked once per operation before it runs, so a refused one does no work at all.
 */
export function outsideCheckoutView(schema: GraphQLSchema, document: DocumentNode): string[] {
  const typeInfo = new TypeInfo(schema);
  const out = new Set<string>();
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const name = node.name.value;
        if (name === "__typename") return;
        const parent = typeInfo.getParentType();
        const parentName = parent?.name ?? "?";
        const declared = typeInfo.getFieldDef()?.extensions?.[CHECKOUT_VIEW_EXTENSION] === true;
        if (!ALLOWED.get(parentName)?.has(name) && !declared) out.add(`${parentName}.${name}`);
      },
    }),
  );
  return [...out];
}

export function checkoutViewError(fields: string[]): GraphQLError {
  return new GraphQLError(
    `A client token reads the checkout view only; not readable with it: ${fields.slice(0, 10).join(", ")}`,
    { extensions: { code: "FORBIDDEN", http: { status: 403 } } },
  );
}
