/**
 * The first import of main.ts: on a Node older than the one the dependencies need, stop in one line before any
 * of them loads (on Node 20, undici dies at import time with "Cannot read properties of undefined (reading
 * 'bind')", which says nothing about the version). ESM evaluates imports in order, so this module's body runs
 * before any other import of main.ts is evaluated; it must import nothing itself.
 */
export const NODE_MAJOR_NEEDED = 24;

/** The one line printed when `version` (process.versions.node) is too old, or null when it will do. */
export function nodeVersionProblem(version: string): string | null {
  const major = Number(version.split(".")[0]);
  if (Number.isInteger(major) && major >= NODE_MAJOR_NEEDED) return null;
  return (
    `Start-up failed: this service needs Node.js ${NODE_MAJOR_NEEDED} or newer and this is Node.js ${version}; ` +
    `run it with the Node ${NODE_MAJOR_NEEDED} that npm ci installs (npm start, npx node dist/src/main.js …, ` +
    `or node_modules/.bin/node dist/src/main.js …), or install Node ${NODE_MAJOR_NEEDED} (https://nodejs.org)`
  );
}

const problem = nodeVersionProblem(process.versions.node);
if (problem !== null) {
  console.error(problem);
  process.exit(1);
}
