#!/usr/bin/env bash
# `npm test`: what CI runs on a clean checkout (.ci/run). bootstrap's packages and npm
# dependencies first; then the stack's start, the build, the type check, the lint and the
# bench's Kafka Streams peer (built once per version of its sources, then taken from the cache)
# side by side (each is mostly one core, and a fresh stack's start waits on its JVM and
# initdb); then every vitest suite, on the stack's database and (the pg18 project) on
# PostgreSQL 18.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { printf 'npm test: %s\n' "$*" >&2; exit 1; }

# --database ha: test/integration/ha-stack.test.ts starts a private HA database, so the suite
# needs Patroni, etcd and HAProxy (installed once per machine; the shared stack stays single).
bash scripts/bootstrap.sh --deps-only --database ha
bash scripts/stack.sh up & stack=$!
npx --no-install tsc -p tsconfig.build.json & build=$!
npx --no-install tsc -p tsconfig.json --noEmit & check=$!
bash scripts/kstreams-peer.sh path >/dev/null & peer=$!
npx --no-install biome check . & lint=$!
failed=()
wait "$stack" || failed+=('the stack did not start (see above)')
wait "$build" || failed+=('the TypeScript build failed')
wait "$check" || failed+=('the type check failed')
wait "$peer" || failed+=('the Kafka Streams peer did not build (see above)')
wait "$lint" || failed+=('the lint failed (npm run format fixes formatting)')
[ ${#failed[@]} -eq 0 ] || die "$(IFS=';'; echo "${failed[*]}")"
# The pg18 project starts a PostgreSQL 18 server of its own (test/support/require-pg18.ts).
exec npx --no-install vitest run "$@"
