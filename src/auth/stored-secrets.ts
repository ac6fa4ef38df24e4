import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * ADMIN_TOKEN and SECRET_KEY when the environment gives none (development/demo only): generated once and
 * kept in DATA_DIR/secrets.json, so a restart keeps the same tokens and can still decrypt stored secrets.
 */
export function loadOrCreateSecrets(
  dataDir: string,
  given: { adminToken: string | null; secretKey: string | null },
): { adminToken: string; secretKey: string } {
  if (given.adminToken !== null && given.secretKey !== null)
    return { adminToken: given.adminToken, secretKey: given.secretKey };
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "secrets.json");
  let stored: { adminToken?: string; secretKey?: string } = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, "utf8")) as typeof stored;
  const adminToken = given.adminToken ?? stored.adminToken ?? `adm_${randomBytes(24).toString("base64url")}`;
  const secretKey = given.secretKey ?? stored.secretKey ?? randomBytes(32).toString("base64url");
  if (stored.adminToken !== adminToken || stored.secretKey !== secretKey) {
    writeFileSync(file, JSON.stringify({ adminToken, secretKey }, null, 2), { mode: 0o600 });
  }
  return { adminToken, secretKey };
}
