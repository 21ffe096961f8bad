#!/usr/bin/env bash
# The local stack: one Kafka-protocol broker on 127.0.0.1:19092 and one PostgreSQL
# on 127.0.0.1:15432 (role amends, password amends-local-only, database amends).
#
#   stack.sh up [--reset]   start both (idempotent); --reset wipes .stack/ first
#   stack.sh down           stop both, keep their data
#   stack.sh fetch          resolve the Kafka jars into the cache (no start)
#   stack.sh status         say what runs
#
# With a Docker engine it runs compose.yaml (Redpanda + PostgreSQL). Without one it
# runs Apache Kafka (KRaft, single node) from Maven Central jars on the machine's
# Java 17 and a private PostgreSQL cluster made with the machine's initdb, both with
# data and logs under .stack/. Every failure is one line on stderr and exit 1.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
stack="$root/.stack"
cache="${AMENDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/amends}"
kafka_pom="$root/stack/kafka/pom.xml"
broker_port=19092
controller_port=19093
pg_port=15432
pg_role=amends
pg_password=amends-local-only
pg_database=amends
start_wait_s=90

die() { printf 'stack: %s\n' "$*" >&2; exit 1; }
say() { printf 'stack: %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Compose is used only when an engine answers and the compose plugin exists; otherwise native.
# The pid listening on a loopback port, when ss can tell.
listener_pid() { ss -ltnpH "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1; }

# Another checkout's amends stack (same addresses, same credentials) is as good as ours:
# say so and use it, instead of failing on a port that holds exactly what we need.
foreign_amends_stack() {
  local pid; pid=$(listener_pid "$1")
  [ -n "$pid" ] || return 1
  local cmd; cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  case "$cmd" in
    *kafka.Kafka*/.stack/kafka/server.properties*) echo "${cmd##*kafka.Kafka }" ;;
    *) # PostgreSQL: the postmaster's data directory lives in /proc/pid/cwd.
       local cwd; cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || return 1
       case "$cwd" in */.stack/postgres/data) echo "$cwd" ;; *) return 1 ;; esac ;;
  esac
}

docker_engine() {
  [ "${AMENDS_STACK:-auto}" = native ] && return 1
  command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 && docker compose version >/dev/null 2>&1
}

# ---------------------------------------------------------------- Kafka (native)

kafka_version() { sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$kafka_pom"; }
kafka_lib() { echo "$cache/kafka-$(kafka_version)-$(sha256sum "$kafka_pom" | cut -c1-12)/lib"; }
kafka_pid_file="$stack/kafka/kafka.pid"

fetch_kafka() {
  local lib; lib=$(kafka_lib)
  [ -f "$lib/.complete" ] && return 0
  command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is missing: install it (apt-get install maven) to fetch the Kafka jars"
  say "fetching Apache Kafka $(kafka_version) jars from Maven Central into $lib"
  rm -rf "$lib"; mkdir -p "$lib"
  mvn -q -B -f "$kafka_pom" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$lib" >"$lib/../fetch.log" 2>&1 \
    || die "could not fetch the Kafka jars with Maven; see $(dirname "$lib")/fetch.log"
  touch "$lib/.complete"
}

java_ok() {
  command -v java >/dev/null 2>&1 || die "Java is missing: Kafka 4 needs Java 17 or newer (apt-get install openjdk-17-jre-headless)"
  local major
  major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  [ "${major%%.*}" -ge 17 ] 2>/dev/null || die "Java $major found: Kafka 4 needs Java 17 or newer"
}

kafka_running() { [ -f "$kafka_pid_file" ] && kill -0 "$(cat "$kafka_pid_file")" 2>/dev/null; }

kafka_up() {
  if kafka_running; then
    port_open "$broker_port" || wait_kafka
    return 0
  fi
  if port_open "$broker_port"; then
    local other
    if other=$(foreign_amends_stack "$broker_port"); then
      say "using the amends broker already running on port $broker_port ($other)"
      return 0
    fi
    die "port $broker_port is taken by a process that is not an amends broker: stop it, then run npm run up again"
  fi
  port_open "$controller_port" && die "port $controller_port (the broker's controller) is taken by another process: stop it, then run npm run up again"
  java_ok; fetch_kafka
  local dir="$stack/kafka" lib; lib=$(kafka_lib)
  mkdir -p "$dir/data" "$dir/logs"
  cat >"$dir/server.properties" <<PROPS
# Written by scripts/stack.sh: a single KRaft node that is broker and controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
auto.create.topics.enable=false
delete.topic.enable=true
num.partitions=2
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=6000
PROPS
  local java_cmd=(java -Xms256m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true
    -Dlog4j2.configurationFile="$root/stack/kafka/log4j2.xml" -cp "$lib/*")
  if [ ! -f "$dir/data/meta.properties" ]; then
    local cluster_id
    cluster_id=$("${java_cmd[@]}" kafka.tools.StorageTool random-uuid 2>>"$dir/logs/format.log" | tail -n 1)
    "${java_cmd[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/server.properties" \
      >>"$dir/logs/format.log" 2>&1 || die "could not format the Kafka storage; see $dir/logs/format.log"
  fi
  # A fresh log per start, so the readiness check cannot read an earlier start's line.
  [ -f "$dir/logs/server.log" ] && mv "$dir/logs/server.log" "$dir/logs/server.log.prev"
  # setsid: the broker must outlive the npm command that started it.
  setsid nohup "${java_cmd[@]}" kafka.Kafka "$dir/server.properties" >>"$dir/logs/server.log" 2>&1 </dev/null &
  echo $! >"$kafka_pid_file"
  wait_kafka
}

wait_kafka() {
  local i
  for ((i = 0; i < start_wait_s * 2; i++)); do
    kafka_running || die "the broker exited while starting; see $stack/kafka/logs/server.log"
    if port_open "$broker_port" && grep -q 'Kafka Server started' "$stack/kafka/logs/server.log" 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  die "the broker did not accept connections on 127.0.0.1:$broker_port within ${start_wait_s}s; see $stack/kafka/logs/server.log"
}

kafka_down() {
  kafka_running || { rm -f "$kafka_pid_file"; return 0; }
  local pid i; pid=$(cat "$kafka_pid_file")
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 60; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$kafka_pid_file"
}

# ------------------------------------------------------------ PostgreSQL (native)

pg_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  die "PostgreSQL server binaries (initdb, pg_ctl) are missing: install them (apt-get install postgresql)"
}

# initdb and pg_ctl refuse to run as root: run them as the postgres user.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_data="$stack/postgres/data"
pg_run="$stack/postgres/run"
pg_log="$stack/postgres/postgres.log"

pg_running() { [ -f "$pg_data/postmaster.pid" ] && as_pg "$(pg_bin)/pg_ctl" -D "$pg_data" status >/dev/null 2>&1; }

pg_up() {
  local bin; bin=$(pg_bin)
  if pg_running; then pg_roles; return 0; fi
  if port_open "$pg_port"; then
    local other
    if other=$(foreign_amends_stack "$pg_port"); then
      say "using the amends PostgreSQL already running on port $pg_port ($other)"
      PGPASSWORD=$pg_password "$bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" -d "$pg_database" -U "$pg_role" \
        || die "the amends PostgreSQL on port $pg_port ($other) does not accept connections"
      return 0
    fi
    die "port $pg_port is taken by a process that is not an amends PostgreSQL: stop it, then run npm run up again"
  fi
  mkdir -p "$stack/postgres"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "user postgres is missing: install the PostgreSQL server package (apt-get install postgresql)"
    chown postgres: "$stack/postgres"
    chmod o+x "$stack" "$root"
  fi
  if [ ! -f "$pg_data/PG_VERSION" ]; then
    as_pg mkdir -p "$pg_data" "$pg_run"
    as_pg "$bin/initdb" -D "$pg_data" -U postgres -E UTF8 --locale=C \
      --auth-local=trust --auth-host=scram-sha-256 >"$stack/postgres/initdb.log" 2>&1 \
      || die "initdb failed; see $stack/postgres/initdb.log"
    cat <<CONF | as_pg tee -a "$pg_data/postgresql.conf" >/dev/null
# Written by scripts/stack.sh
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$pg_run'
max_connections = 200
CONF
  fi
  as_pg mkdir -p "$pg_run"
  as_pg "$bin/pg_ctl" -D "$pg_data" -l "$pg_log" -w -t "$start_wait_s" start >/dev/null \
    || die "PostgreSQL did not start; see $pg_log"
  pg_roles
}

pg_roles() {
  local bin; bin=$(pg_bin)
  local psql=("$bin/psql" -h "$pg_run" -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
  if [ "$(as_pg "${psql[@]}" -c "select 1 from pg_roles where rolname='$pg_role'")" != 1 ]; then
    as_pg "${psql[@]}" -c "create role $pg_role login password '$pg_password'" >/dev/null
  fi
  if [ "$(as_pg "${psql[@]}" -c "select 1 from pg_database where datname='$pg_database'")" != 1 ]; then
    as_pg "${psql[@]}" -c "create database $pg_database owner $pg_role" >/dev/null
  fi
  PGPASSWORD=$pg_password "$bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" -d "$pg_database" -U "$pg_role" \
    || die "PostgreSQL runs but does not accept connections on 127.0.0.1:$pg_port; see $pg_log"
}

pg_down() {
  pg_running || return 0
  as_pg "$(pg_bin)/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null
}

# ------------------------------------------------------------------- commands

compose() { docker compose -f "$root/compose.yaml" "$@"; }

up() {
  local reset=false arg
  for arg in "$@"; do
    case "$arg" in
      --reset) reset=true ;;
      *) die "unknown option $arg (usage: npm run up [-- --reset])" ;;
    esac
  done
  if docker_engine; then
    $reset && compose down -v
    compose up -d --wait || die "docker compose could not start the stack (compose.yaml)"
  else
    if $reset; then kafka_down; pg_down; rm -rf "$stack"; fi
    mkdir -p "$stack"
    pg_up
    kafka_up
  fi
  say "up: broker 127.0.0.1:$broker_port, database postgres://$pg_role:$pg_password@127.0.0.1:$pg_port/$pg_database"
}

down() {
  if docker_engine; then compose down; else kafka_down; pg_down; fi
  say "down (data kept)"
}

status() {
  if docker_engine; then compose ps; return; fi
  kafka_running && echo "broker: running (pid $(cat "$kafka_pid_file"))" || echo "broker: stopped"
  pg_running && echo "database: running" || echo "database: stopped"
}

cmd=${1:-up}; shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  fetch) docker_engine || fetch_kafka ;;
  status) status ;;
  *) die "unknown command $cmd (up, down, fetch, status)" ;;
esac
