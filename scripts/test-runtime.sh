#!/usr/bin/env bash
# Runs the test suite (SQLite) on another Node.js runtime, fetched from the registry's official
# builds, with better-sqlite3 built for it; the installed addon is put back afterwards. Arguments
# after the version go to tap (.ci/run leaves out the files that do not depend on the runtime).
set -euo pipefail
cd "$(dirname "$0")/.."
version="$1"
if ! runtime=$(node scripts/node-runtime.mjs fetch "$version" 2>/tmp/runtime-fetch.err); then
  echo "# skipped: the suite on Node $version ($(head -1 /tmp/runtime-fetch.err))"
  exit 0
fi
addon=$(node scripts/node-runtime.mjs addon "$version")
installed=node_modules/better-sqlite3/build/Release/better_sqlite3.node
cp "$installed" .cache/addon/installed.node
trap 'cp .cache/addon/installed.node "$installed"' EXIT
cp "$addon" "$installed"
# The browser tests and the other run-once tests run in CI's first pass only.
export PLANNING_BROWSER_TESTS=skip PLANNING_ONCE_TESTS=skip
echo "# the suite on Node $("$runtime/bin/node" --version) (SQLite; .ci/run names the runtime-facing files)"
PATH="$runtime/bin:$PATH" npm test -- --jobs=4 "${@:2}"
