// The order jest runs test files in, with one change. jest runs a file that failed last time first, then the
// longest files by their timing from the last run, and files with no timing (a fresh clone) by size, largest first.
// Here a file is weighed by its size plus the size of each `./name.part.js` it imports: a folder's small files run as
// one file that holds nothing but those imports (docs/testing.md), and by its own few lines it would start last,
// leaving the other workers idle while it runs.
const Sequencer = require("@jest/test-sequencer").default;
const { readFileSync, statSync } = require("node:fs");
const { dirname, join } = require("node:path");

const PART = /^import "\.\/([\w.-]+\.part)\.js";$/gm;

function weight(path) {
  const text = readFileSync(path, "utf8");
  let size = statSync(path).size;
  for (const m of text.matchAll(PART)) size += statSync(join(dirname(path), `${m[1]}.ts`)).size;
  return size;
}

class PartsWeighedSequencer extends Sequencer {
  sort(tests) {
    const weights = new Map();
    const weigh = (test) => {
      if (!weights.has(test.path)) weights.set(test.path, weight(test.path));
      return weights.get(test.path);
    };
    for (const test of tests) test.duration = this.time(test);
    return tests.sort((a, b) => {
      const failedA = this.hasFailed(a);
      if (failedA !== this.hasFailed(b)) return failedA ? -1 : 1;
      const timedA = a.duration != null;
      if (timedA !== (b.duration != null)) return timedA ? 1 : -1;
      if (timedA) return a.duration < b.duration ? 1 : -1;
      return weigh(a) < weigh(b) ? 1 : -1;
    });
  }
}

module.exports = PartsWeighedSequencer;
