import { Migration } from "@mikro-orm/migrations";

/** Hand-written so constraints and partial indexes are explicit; test/db/schema.test.ts checks it matches the entities. */
export class M0001Initial extends Migration {
  override name = "m0001-initial";

  up(): void {
    this.addSql(`create table merchant (
      id text primary key, name text not null, account_type text not null check (account_type in ('individual','merchant')),
      bakong_account_id text not null, merchant_name text not null, merchant_city text not null,
      merchant_id text, acquiring_bank text, merchant_category_code text not null default '5999',
      default_currency integer not null check (default_currency in (116, 840)),
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create table gateway_config (
      id text primary key, merchant_ref text not null references merchant(id), name text not null,
      upstream_merchant_id text not null, api_secret_enc text not null,
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create table link_config (
      id text primary key, merchant_ref text not null references merchant(id), name text not null,
      url text not null, currency integer not null check (currency in (116, 840)),
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create table api_key (
      id text primary key, merchant_ref text not null references merchant(id),
      kind text not null check (kind in ('qr','gateway','gateway_link')), label text not null default '',
      prefix text not null, hash text not null unique,
      gateway_config_ref text references gateway_config(id), link_config_ref text references link_config(id),
      created_at timestamptz not null, last_used_at timestamptz, revoked_at timestamptz,
      check (kind <> 'gateway' or gateway_config_ref is not null),
      check (kind <> 'gateway_link' or link_config_ref is not null))`);
    this.addSql(`create table "transaction" (
      id text primary key, area text not null check (area in ('qr','gateway','gateway_link')),
      merchant_ref text not null references merchant(id), api_key_ref text not null references api_key(id),
      status text not null check (status in ('PENDING','CHECKOUT','SUCCESS','FAILED','EXPIRED')),
      amount numeric(20,2) not null check (amount > 0), currency text not null check (currency in ('USD','KHR')),
      order_id text, md5 text, client_id text, qr text,
      meta jsonb not null default '{}', request jsonb not null default '{}', upstream jsonb not null default '{}',
      receipt_url text, expires_at timestamptz not null, created_at timestamptz not null, updated_at timestamptz not null,
      completed_at timestamptz, next_check_at timestamptz, check_failures integer not null default 0,
      version integer not null default 1)`);
    this.addSql(
      `create unique index transaction_gateway_order_uq on "transaction" (merchant_ref, order_id) where area = 'gateway'`,
    );
    this.addSql(`create index transaction_md5_idx on "transaction" (md5) where md5 is not null`);
    this.addSql(
      `create index transaction_due_idx on "transaction" (area, next_check_at) where status in ('PENDING','CHECKOUT')`,
    );
    this.addSql(`create index transaction_key_created_idx on "transaction" (api_key_ref, created_at desc, id desc)`);
    this.addSql(`create index transaction_created_idx on "transaction" (created_at desc, id desc)`);
    this.addSql(`create table transaction_event (
      seq bigserial primary key, id text not null unique, transaction_ref text not null references "transaction"(id),
      api_key_ref text not null, area text not null, type text not null, status text not null,
      payload jsonb not null, created_at timestamptz not null)`);
    this.addSql(`create index transaction_event_tx_idx on transaction_event (transaction_ref, seq)`);
    this.addSql(`create index transaction_event_key_idx on transaction_event (api_key_ref, seq)`);
    this.addSql(`create table webhook_endpoint (
      id text primary key, api_key_ref text not null references api_key(id), url text not null,
      events jsonb not null default '[]', secret_enc text not null, previous_secret_enc text,
      previous_secret_expires_at timestamptz, enabled boolean not null default true, disabled_reason text,
      failing_since timestamptz, created_at timestamptz not null)`);
    this.addSql(`create index webhook_endpoint_key_idx on webhook_endpoint (api_key_ref)`);
    this.addSql(`create table webhook_delivery (
      id text primary key, event_ref text not null references transaction_event(id),
      endpoint_ref text not null references webhook_endpoint(id),
      state text not null check (state in ('pending','delivered','failed')), attempts integer not null default 0,
      next_attempt_at timestamptz, last_status_code integer, last_error text, delivered_at timestamptz,
      created_at timestamptz not null, unique (event_ref, endpoint_ref))`);
    this.addSql(`create index webhook_delivery_due_idx on webhook_delivery (next_attempt_at) where state = 'pending'`);
    this.addSql(`create index webhook_delivery_endpoint_idx on webhook_delivery (endpoint_ref, created_at desc)`);
    this.addSql(`create table webhook_attempt (
      id bigserial primary key, delivery_ref text not null references webhook_delivery(id),
      attempted_at timestamptz not null, status_code integer, latency_ms integer not null, error text)`);
    this.addSql(`create index webhook_attempt_delivery_idx on webhook_attempt (delivery_ref, id)`);
    this.addSql(`create table idempotency_key (
      api_key_ref text not null, key text not null, operation text not null, request_hash text not null,
      response jsonb, created_at timestamptz not null, primary key (api_key_ref, key))`);
  }
}
