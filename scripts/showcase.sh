#!/usr/bin/env bash
# The main job (npm start): the fault-injection showcase on the local stack that
# scripts/bootstrap.sh has just started. Extra arguments go to the showcase
# (npm start -- --tui, npm start -- --keep).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# The local stack's addresses (../shared/spec/README.md); a user's own endpoints win.
export AMENDS_DATABASE_URL="${AMENDS_DATABASE_URL:-postgres://amends:amends-local-only@127.0.0.1:15432/amends?sslmode=disable}"
export AMENDS_BROKERS="${AMENDS_BROKERS:-127.0.0.1:19092}"
exec ./bin/amendsctl showcase "$@"
