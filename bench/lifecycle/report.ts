// How the lifecycle bench shows its steps: the line printed while it runs, the table row, the notes under the table.
import { CpuHog } from "../support/cpu-hog.js";
import { ms1 } from "../support/timing.js";
import type { Tally } from "./drain.js";
import { QR_MONITOR_INTERVAL_MS, held, type Step } from "./step.js";

export type Topology = "serve" | "scaled";
export type MixName = "generic" | "mix";

export const TOPOLOGY_NAME: Record<Topology, string> = { serve: "1 × serve", scaled: "2 api + 2 worker" };

const reopenedCount = (s: Step) => Object.values(s.reopened).reduce((a, b) => a + b, 0);
/** Why sockets were reopened, e.g. "socket closed 4408 Connection initialisation timeout × 12". */
const reopenedWhy = (s: Step) =>
  Object.entries(s.reopened)
    .sort((a, b) => b[1] - a[1])
    .map(([why, n]) => `${why} × ${n}`)
    .join("; ");

/** "late / never" of a channel. */
const lateNever = (t: Tally) => `${t.late} / ${t.never}`;

/** How late the late ones were (max / p99 ms beyond the drain window), webhooks then subscribers; "-" for none. */
const lateBy = (s: Step) =>
  [s.webhook, s.subscriber].map((t) => (t.late === 0 ? "-" : `${ms1(t.lateBy.max)} / ${ms1(t.lateBy.p99)}`)).join("; ");

export function rowOf(topology: Topology, mix: MixName, s: Step): (string | number)[] {
  return [
    `${TOPOLOGY_NAME[topology]}, ${mix === "generic" ? "generic QR" : "80/15/5 mix"}${s.hogCpuPct === null ? "" : ", CPU hog"}`,
    `${s.rate}/s × ${s.seconds} s`,
    held(s) ? "held" : "not held",
    `${s.paid} / ${s.errors}`,
    lateNever(s.webhook),
    lateNever(s.subscriber),
    reopenedCount(s),
    lateBy(s),
    `${ms1(s.payToWebhook.p50)} / ${ms1(s.payToWebhook.p99)}`,
    `≤ ${QR_MONITOR_INTERVAL_MS + 1000}`,
    `${ms1(s.payToSubscriber.p50)} / ${ms1(s.payToSubscriber.p99)}`,
    `${ms1(s.generate.p50)} / ${ms1(s.generate.p99)}`,
    `${ms1(s.serviceCpuMs)} + ${ms1(s.pgCpuMs)}`,
    ms1(s.benchCpuMs),
  ];
}

/** A step as the bench prints it while it runs. */
export function stepLine(topology: Topology, mix: MixName, s: Step): string {
  const errors = Object.entries(s.errorKinds)
    .map(([kind, n]) => `${kind} × ${n}`)
    .join(", ");
  const parts = [
    `  ${topology} ${mix} R=${s.rate}/s: ${held(s) ? "held" : "NOT held"}`,
    `webhook late/never ${s.webhook.late}/${s.webhook.never}, subscriber late/never ${s.subscriber.late}/${s.subscriber.never}, late by ${lateBy(s)} ms`,
    `errors ${s.errors}${errors ? ` (${errors}; first: ${s.firstError})` : ""}`,
    s.unknown > 0 ? `${s.unknown} transactions made whose generate answer never reached the load generator` : "",
    s.driverBehind ? "driver behind" : "",
    s.badSignatures + s.unreadable > 0 ? `bad signatures ${s.badSignatures}, unreadable ${s.unreadable}` : "",
    `generate p50/p99 ${ms1(s.generate.p50)}/${ms1(s.generate.p99)} ms`,
    `pay→webhook p50/p99 ${ms1(s.payToWebhook.p50)}/${ms1(s.payToWebhook.p99)} ms`,
    `pay→subscriber ${ms1(s.payToSubscriber.p50)}/${ms1(s.payToSubscriber.p99)} ms`,
    `CPU ${ms1(s.serviceCpuMs)} + PG ${ms1(s.pgCpuMs)} ms/lifecycle (bench processes ${ms1(s.benchCpuMs)})`,
    `load generator's event-loop delay p99 ${ms1(s.driverLoopP99Ms)} ms`,
    s.hogCpuPct === null ? "" : `CPU hog ${Math.round(s.hogCpuPct)} % of a core`,
    reopenedCount(s) > 0 ? `subscriber sockets reopened: ${reopenedWhy(s)}` : "",
  ];
  return parts.filter((x) => x !== "").join("; ");
}

/** What never came, under the table: the first NEVER_SHOWN payments (the run's output has every one). */
const NEVER_SHOWN = 10;
function neverNote(name: string, never: string[][]): string {
  const lines = never.slice(0, NEVER_SHOWN).flat();
  if (never.length > NEVER_SHOWN) lines.push(`(${never.length - NEVER_SHOWN} more in the run's output)`);
  // Indented under its list item, so the block stays part of the note.
  return `${name}, never came (${never.length}):\n\n${["```", ...lines, "```"].map((l) => `  ${l}`).join("\n")}\n`;
}

/** Per step, for the notes under the table: sockets reopened and why, the CPU hog's share, what never came. */
export function stepNotes(results: [Topology, Map<MixName, Step[]>][]): string[] {
  const notes: string[] = [];
  for (const [t, byMix] of results)
    for (const [mix, steps] of byMix)
      for (const s of steps) {
        const name = `${TOPOLOGY_NAME[t]}, ${mix}, ${s.rate}/s`;
        if (reopenedCount(s) > 0) notes.push(`${name}: subscriber sockets reopened: ${reopenedWhy(s)}.`);
        if (Object.keys(s.errorKinds).length > 0)
          notes.push(
            `${name}: errors by kind: ${Object.entries(s.errorKinds)
              .map(([kind, n]) => `${kind} × ${n}`)
              .join(
                ", ",
              )} (first: ${s.firstError}); webhooks came for ${s.unknown} transactions whose generate answer never reached the load generator.`,
          );
        if (s.hogCpuPct !== null)
          notes.push(
            `${name}: CPU hog (BENCH_CPU_HOG=${CpuHog.fromEnv()}: \`node -e "for(;;){}"\`, not pinned, for the whole step) got ${Math.round(s.hogCpuPct)} % of one core.`,
          );
        if (s.never.length > 0) notes.push(neverNote(name, s.never));
      }
  return notes;
}
