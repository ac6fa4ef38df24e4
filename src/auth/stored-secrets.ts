import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Db } from "../db/sql.js";
import { createWhole, ownerOnly, writeFileAtomic } from "../db/data-dir.js";
import { SecretUnreadableError, type SecretBox, type SecretPurpose } from "./secret-box.js";

interface StoredSecrets {
  adminToken?: string;
  secretKey?: string;
}

/**
 * ADMIN_TOKEN and SECRET_KEY when the environment gives none (development/demo only): generated once and
 * kept in DATA_DIR/secrets.json, so a restart keeps the same tokens and can still decrypt stored secrets.
 * The directory and the file are kept to their owner (at the directory's real path). Several processes may
 * share the file (api and worker processes on one DATABASE_URL, none of them holding DATA_DIR's lock): it is
 * created whole and only if absent, so processes starting together all end with the one that was written
 * first, and it is replaced whole, so a reader never sees half of it.
 */
export function loadOrCreateSecrets(
  dataDir: string,
  given: { adminToken: string | null; secretKey: string | null },
): { adminToken: string; secretKey: string } {
  if (given.adminToken !== null && given.secretKey !== null)
    return { adminToken: given.adminToken, secretKey: given.secretKey };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  ownerOnly(dataDir, false);
  const file = join(dataDir, "secrets.json");
  for (;;) {
    const found = existsSync(file);
    if (found) ownerOnly(file);
    const stored = found ? (JSON.parse(readFileSync(file, "utf8")) as StoredSecrets) : {};
    const adminToken = given.adminToken ?? stored.adminToken ?? `adm_${randomBytes(24).toString("base64url")}`;
    const secretKey = given.secretKey ?? stored.secretKey ?? randomBytes(32).toString("base64url");
    const text = JSON.stringify({ adminToken, secretKey }, null, 2);
    if (found && (stored.adminToken !== adminToken || stored.secretKey !== secretKey)) writeFileAtomic(file, text);
    // Another process created it first: read theirs.
    else if (!found && !createWhole(file, text)) continue;
    return { adminToken, secretKey };
  }
}

/** A column that holds a SecretBox-sealed secret, bound to its row's `id`. */
export interface SealedColumn {
  table: "webhook_endpoint" | "gateway_config";
  column: "secret_enc" | "previous_secret_enc" | "api_secret_enc";
  purpose: SecretPurpose;
}

/**
 * Replaces a legacy (v1) secret with its v2 form, only if the row still holds the text that was read: two
 * processes upgrading the same row both write a valid v2, and a secret rotated meanwhile is left alone.
 */
export async function rewriteSealed(
  db: Pick<Db, "query">,
  col: SealedColumn,
  id: string,
  from: string,
  to: string,
): Promise<void> {
  await db.query(`update ${col.table} set ${col.column} = ? where id = ? and ${col.column} = ?`, [to, id, from]);
}

/**
 * Rewrites every row of these columns still in the legacy v1 format (run when a module starts, so rows that
 * are never read are upgraded too; reads upgrade lazily as well). Returns how many were rewritten. A row
 * that does not open is left as it is and counted in `unreadable`: it fails where it is used, loudly.
 */
export async function upgradeLegacySecrets(
  db: Pick<Db, "query">,
  box: SecretBox,
  cols: readonly SealedColumn[],
): Promise<{ upgraded: number; unreadable: number }> {
  let upgraded = 0;
  let unreadable = 0;
  for (const col of cols) {
    const rows = await db.query<{ id: string; sealed: string }>(
      `select id, ${col.column} as sealed from ${col.table} where ${col.column} like 'v1.%'`,
    );
    for (const row of rows) {
      let next: string | null;
      try {
        next = box.open(row.sealed, col.purpose, row.id).upgraded;
      } catch (err) {
        if (!(err instanceof SecretUnreadableError)) throw err;
        unreadable++;
        continue;
      }
      if (next === null) continue;
      await rewriteSealed(db, col, row.id, row.sealed, next);
      upgraded++;
    }
  }
  return { upgraded, unreadable };
}
