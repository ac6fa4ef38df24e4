#!/usr/bin/env bash
# What `npm test` runs after the build: jest, and beside it the code's shape checks (`npm run checks`: TypeScript,
# ESLint, Prettier) at the lowest CPU priority. jest leaves the cores idle for a fifth of a run (its files wait on the
# services, browsers and timers they start); the checks fill that time instead of running first on their own
# (docs/decisions/0268-shape-checks-beside-jest.md). The checks' output is printed after jest's; either failing fails
# the command. Arguments go to jest.
set -u
cd "$(dirname "$0")/.."
out=$(mktemp)
nice -n 19 npm run checks --silent >"$out" 2>&1 &
checks=$!
NODE_OPTIONS="--experimental-vm-modules --disable-warning=ExperimentalWarning" npx jest "$@"
tests=$?
wait "$checks"
shape=$?
if [ "$shape" -ne 0 ]; then
  echo "npm run checks failed (TypeScript, ESLint or Prettier):"
  cat "$out"
fi
rm -f "$out"
[ "$tests" -eq 0 ] && [ "$shape" -eq 0 ]
