import { Merchant } from "../admin/merchant.entity.js";
import { GatewayConfig } from "../admin/gateway-config.entity.js";
import { LinkConfig } from "../admin/link-config.entity.js";
import { ApiKey } from "../auth/api-key.entity.js";
import { Transaction } from "../transactions/transaction.entity.js";
import { TransactionEvent } from "../transactions/transaction-event.entity.js";
import { WebhookEndpoint } from "../webhooks/webhook-endpoint.entity.js";
import { WebhookAttempt, WebhookDelivery } from "../webhooks/webhook-delivery.entity.js";

export const ENTITIES = [Merchant, GatewayConfig, LinkConfig, ApiKey, Transaction, TransactionEvent, WebhookEndpoint, WebhookDelivery, WebhookAttempt];
