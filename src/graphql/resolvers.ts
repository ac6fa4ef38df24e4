import type { NonEmptyArray } from "type-graphql";
import { HealthResolver } from "../ops/health.resolver.js";
import { SubscriptionsResolver } from "../transactions/subscriptions.resolver.js";
import { QrResolver } from "../qr/qr.resolver.js";
import { GatewayResolver } from "../gateway/gateway.resolver.js";
import { LinkResolver } from "../gateway-link/link.resolver.js";
import { WebhooksResolver } from "../webhooks/webhooks.resolver.js";
import { TransactionsResolver } from "../transactions/transactions.resolver.js";

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql's own resolver list type
export const RESOLVERS: NonEmptyArray<Function> = [HealthResolver, WebhooksResolver, SubscriptionsResolver, TransactionsResolver, QrResolver, GatewayResolver, LinkResolver];
