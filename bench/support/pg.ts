import pg from "pg";

const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
let counter = 0;

export interface BenchDb {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh database on the local PostgreSQL (named pqr_evbench_*), dropped by `drop()`. */
export async function createBenchDb(label: string): Promise<BenchDb> {
  const name = `pqr_evbench_${label}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  await adminQuery(`create database "${name}"`);
  return {
    url: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    name,
    drop: () => adminQuery(`drop database if exists "${name}" with (force)`).catch(() => undefined),
  };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
