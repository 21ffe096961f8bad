#!/usr/bin/env bash
# The Kafka Streams peer of the benchmark (peers/kstreams, docs/benchmarks.md): builds it once
# per version of its sources and prints where it is.
#
#   kstreams-peer.sh path    build if needed, then print the directory that holds peer.jar
#                            and lib/ (its runtime jars); run it with
#                            java -cp "DIR/peer.jar:DIR/lib/*" dev.amends.kstreams.LedgerPeer …
#
# The build is cached outside git as the stack's Kafka jars are: under
# ~/.cache/amends/kstreams-peer-<hash>, the hash taken over the peer's pom and sources (and this
# script), so a fresh checkout on the same machine (CI's) does not build again. Maven runs
# offline (-o) when ~/.m2 already holds what the build needs, and online (Maven Central)
# otherwise.
# Every failure is one line on stderr and exit 1.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
peer="$root/peers/kstreams"
# The bench may run with a bare environment (its smoke test passes PATH alone): HOME from passwd then.
home="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
cache="${AMENDS_CACHE_DIR:-${XDG_CACHE_HOME:-$home/.cache}/amends}"

die() { printf 'kstreams-peer: %s\n' "$*" >&2; exit 1; }
say() { printf 'kstreams-peer: %s\n' "$*" >&2; }

# The hash of every file of the peer but Maven's output, names included (a rename rebuilds),
# and of this script, which says how it is built.
sources_hash() {
  { (cd "$peer" && find . -type f -not -path './target/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    sha256sum <"${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-12
}

build() {
  local dir="$1" work log
  command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is missing: install it (apt-get install maven) to build the Kafka Streams peer"
  command -v javac >/dev/null 2>&1 || die "javac is missing: the peer needs a Java 17 JDK (apt-get install openjdk-17-jdk-headless)"
  # Built aside and renamed, so a build cut short (or one running beside it) never leaves half a peer.
  work="$dir.partial.$$"
  log="$work.log"
  rm -rf "$work"; mkdir -p "$work"
  local args=(-q -B -f "$peer/pom.xml" "-Dpeer.build.directory=$work/target" package
    dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$work/lib")
  if ! mvn -o "${args[@]}" >"$log" 2>&1; then
    say "building the Kafka Streams peer (Maven Central: its jars are not all in ~/.m2 yet)"
    mvn "${args[@]}" >"$log" 2>&1 || { mv "$log" "$dir.failed.log"; rm -rf "$work"; die "could not build the peer with Maven; see $dir.failed.log"; }
  fi
  mv "$work/target/amends-kstreams-peer-1.jar" "$work/peer.jar"
  rm -rf "$work/target" "$log"
  if ! mv -T "$work" "$dir" 2>/dev/null; then
    # Another build finished first with the same sources: its result is as good as ours.
    [ -f "$dir/peer.jar" ] || die "could not move the built peer into $dir"
    rm -rf "$work"
  fi
}

case "${1:-}" in
  path)
    dir="$cache/kstreams-peer-$(sources_hash)"
    [ -f "$dir/peer.jar" ] || build "$dir"
    echo "$dir"
    ;;
  *) die "usage: kstreams-peer.sh path" ;;
esac
