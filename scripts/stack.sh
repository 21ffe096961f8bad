#!/usr/bin/env bash
# The local stack: one Kafka-protocol broker on 127.0.0.1:19092 (plaintext) and
# 127.0.0.1:19094 (SASL_SSL, SCRAM-SHA-512 user amends / amends-local-only), and one
# PostgreSQL on 127.0.0.1:15432 (role amends, password amends-local-only, database
# amends; TLS offered, plaintext allowed). The broker's and the database's certificate
# come from a CA the stack makes at first start (.stack/tls/ca.pem); a ready librdkafka
# client file for the secured listener is .stack/kafka-client-sasl.properties.
#
#   stack.sh up [--reset]   start both (idempotent); --reset wipes .stack/ first
#   stack.sh down           stop both, keep their data
#   stack.sh fetch          resolve the Kafka jars into the cache (no start)
#   stack.sh status         say what runs
#   stack.sh tool CLASS ARGS run a Kafka tool class with the stack's jars, e.g.
#                           tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
#                           --bootstrap-server 127.0.0.1:19092 --describe --group G
#
# With a Docker engine it runs compose.yaml (Redpanda + PostgreSQL). Without one it
# runs Apache Kafka (KRaft, single node) from Maven Central jars on the machine's
# Java 17 and a private PostgreSQL cluster made with the machine's initdb, both with
# data and logs under .stack/. Every failure is one line on stderr and exit 1.
#
# A running native stack (this checkout's or another's) whose configuration is older
# than this script's (stack_config below) is restarted into the new one, keeping its
# data. AMENDS_STACK_DIR and AMENDS_STACK_{KAFKA,SASL,CONTROLLER,PG}_PORT move a private
# copy elsewhere (to try this script without touching the shared stack).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# This checkout's stack directory: it always gets the client file and a copy of the CA.
own_stack="${AMENDS_STACK_DIR:-$root/.stack}"
# Where the services live: own_stack, or another checkout's running amends stack (adopt_running_stack).
stack="$own_stack"
cache="${AMENDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/amends}"
kafka_pom="$root/stack/kafka/pom.xml"
broker_port=${AMENDS_STACK_KAFKA_PORT:-19092}
sasl_port=${AMENDS_STACK_SASL_PORT:-19094}
controller_port=${AMENDS_STACK_CONTROLLER_PORT:-19093}
pg_port=${AMENDS_STACK_PG_PORT:-15432}
# Bump when the services' configuration changes: a running stack with an older marker is restarted.
stack_config=2
stack_config_marker="# amends stack config $stack_config"
sasl_user=amends
sasl_password=amends-local-only
tls_days=3650
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


# Another checkout's amends stack (same addresses, same credentials) is as good as ours.
# Prints the stack directory of the amends service listening on the port, if any.
amends_stack_on_port() {
  local pid; pid=$(listener_pid "$1")
  [ -n "$pid" ] || return 1
  local cmd; cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  case "$cmd" in
    *kafka.Kafka*/.stack/kafka/server.properties*)
      local props="${cmd##*kafka.Kafka }"; echo "${props%/kafka/server.properties*}" ;;
    *) # PostgreSQL: the postmaster's data directory lives in /proc/pid/cwd.
       local cwd; cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || return 1
       case "$cwd" in */.stack/postgres/data) echo "${cwd%/postgres/data}" ;; *) return 1 ;; esac ;;
  esac
}

# When another checkout's amends stack already runs on our ports, its services (and their
# data and certificates) live in its directory: manage them there instead of failing on the
# ports, upgrading them in place when their configuration is older than ours.
adopt_running_stack() {
  local port dir
  for port in "$broker_port" "$pg_port"; do
    if dir=$(amends_stack_on_port "$port") && [ "$dir" != "$stack" ]; then
      say "using the amends stack already running in $dir (port $port)"
      stack="$dir"
      return 0
    fi
  done
}

docker_engine() {
  [ "${AMENDS_STACK:-auto}" = native ] && return 1
  command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 && docker compose version >/dev/null 2>&1
}

# ------------------------------------------------------------- TLS material

tls_dir() { echo "$stack/tls"; }
# The broker's PKCS12 keystore password: local-only, like every other secret of this stack.
tls_store_password=amends-local-only

# A CA and one server certificate (127.0.0.1 and localhost) for both the broker and the
# database, made once with openssl; later starts reuse them.
tls_make() {
  local d; d=$(tls_dir)
  [ -f "$d/.complete" ] && return 0
  command -v openssl >/dev/null 2>&1 || die "openssl is missing: install it (apt-get install openssl) to make the stack's certificates"
  rm -rf "$d"; mkdir -p "$d"
  {
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$tls_days" -subj "/CN=amends local CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout "$d/ca.key" -out "$d/ca.pem"
    openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=127.0.0.1" -keyout "$d/server.key" -out "$d/server.csr"
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >"$d/server.ext"
    openssl x509 -req -sha256 -days "$tls_days" -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
      -CAcreateserial -extfile "$d/server.ext" -out "$d/server.pem"
    openssl pkcs12 -export -in "$d/server.pem" -inkey "$d/server.key" -certfile "$d/ca.pem" -name broker \
      -passout "pass:$tls_store_password" -out "$d/broker.p12"
  } >"$d/openssl.log" 2>&1 || die "could not make the stack's certificates; see $d/openssl.log"
  chmod 600 "$d"/*.key
  touch "$d/.complete"
}

# This checkout's copy of the CA and the ready client file for the SASL_SSL listener
# (librdkafka names, as kcat -F and amends --kafka-config read them).
# Written into this checkout's stack directory and, when the services live in another
# checkout's, into that one too.
client_files() {
  client_file_in "$own_stack"
  [ "$stack" -ef "$own_stack" ] || client_file_in "$stack"
}

client_file_in() {
  local into="$1"
  mkdir -p "$into/tls"
  [ "$(tls_dir)/ca.pem" -ef "$into/tls/ca.pem" ] || cp "$(tls_dir)/ca.pem" "$into/tls/ca.pem"
  cat >"$into/kafka-client-sasl.properties" <<PROPS
# Written by scripts/stack.sh: the local broker's SASL_SSL listener (local-only credentials).
bootstrap.servers=127.0.0.1:$sasl_port
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.username=$sasl_user
sasl.password=$sasl_password
ssl.ca.location=$into/tls/ca.pem
PROPS
}

# ---------------------------------------------------------------- Kafka (native)

kafka_version() { sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$kafka_pom"; }
kafka_lib() { echo "$cache/kafka-$(kafka_version)-$(sha256sum "$kafka_pom" | cut -c1-12)/lib"; }
kafka_pid_file() { echo "$stack/kafka/kafka.pid"; }

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

# The broker's pid: its pid file, or (a broker started without one) the listener's.
kafka_pid() {
  local f; f=$(kafka_pid_file)
  if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then cat "$f"; return 0; fi
  local pid; pid=$(listener_pid "$broker_port")
  [ -n "$pid" ] && amends_stack_on_port "$broker_port" >/dev/null && { echo "$pid"; return 0; }
  return 1
}
kafka_running() { kafka_pid >/dev/null; }

# The running broker was started with this script's configuration.
kafka_current() { grep -qxF "$stack_config_marker" "$stack/kafka/server.properties" 2>/dev/null; }

# Sets java_cmd: the JVM and class path of the broker and its tools.
java_cmd=()
set_java_cmd() {
  java_cmd=(java -Xms256m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true
    -Dlog4j2.configurationFile="$root/stack/kafka/log4j2.xml" -cp "$(kafka_lib)/*")
}

write_server_properties() {
  local dir="$stack/kafka" tls; tls=$(tls_dir)
  cat >"$dir/server.properties" <<PROPS
# Written by scripts/stack.sh: a single KRaft node that is broker and controller.
$stack_config_marker
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$broker_port,SASL_SSL://127.0.0.1:$sasl_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port,SASL_SSL://127.0.0.1:$sasl_port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$tls/broker.p12
listener.name.sasl_ssl.ssl.keystore.password=$tls_store_password
listener.name.sasl_ssl.ssl.key.password=$tls_store_password
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
}

kafka_up() {
  java_ok; fetch_kafka; tls_make
  if kafka_running; then
    if kafka_current; then
      { port_open "$broker_port" && port_open "$sasl_port"; } || wait_kafka
      # A start that died before its SCRAM user was set gets it now.
      [ -f "$stack/kafka/scram-user.done" ] || kafka_scram_user
      return 0
    fi
    say "restarting the broker in $stack/kafka into stack config $stack_config (secured listener on $sasl_port; data kept)"
    kafka_down
  elif port_open "$broker_port"; then
    die "port $broker_port is taken by a process that is not an amends broker: stop it, then run npm run up again"
  fi
  local port
  for port in "$sasl_port" "$controller_port"; do
    port_open "$port" && die "port $port (the broker's secured or controller listener) is taken by another process: stop it, then run npm run up again"
  done
  local dir="$stack/kafka"; set_java_cmd
  mkdir -p "$dir/data" "$dir/logs"
  write_server_properties
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
  echo $! >"$(kafka_pid_file)"
  wait_kafka
  kafka_scram_user
}

wait_kafka() {
  local i
  for ((i = 0; i < start_wait_s * 2; i++)); do
    kafka_running || die "the broker exited while starting; see $stack/kafka/logs/server.log"
    if port_open "$broker_port" && port_open "$sasl_port" \
      && grep -q 'Kafka Server started' "$stack/kafka/logs/server.log" 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  die "the broker did not accept connections on 127.0.0.1:$broker_port within ${start_wait_s}s; see $stack/kafka/logs/server.log"
}

# The SCRAM credential of the secured listener's user, set through the plaintext listener
# (KRaft keeps it in the metadata log; setting it again is harmless).
kafka_scram_user() {
  set_java_cmd
  "${java_cmd[@]}" kafka.admin.ConfigCommand --bootstrap-server "127.0.0.1:$broker_port" --alter \
    --entity-type users --entity-name "$sasl_user" \
    --add-config "SCRAM-SHA-512=[iterations=8192,password=$sasl_password]" \
    >>"$stack/kafka/logs/scram.log" 2>&1 \
    || die "could not set the SCRAM user $sasl_user on the broker; see $stack/kafka/logs/scram.log"
  touch "$stack/kafka/scram-user.done"
}

kafka_down() {
  local pid i
  pid=$(kafka_pid) || { rm -f "$(kafka_pid_file)"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 60; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$(kafka_pid_file)"
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

pg_data() { echo "$stack/postgres/data"; }
pg_run() { echo "$stack/postgres/run"; }
pg_log() { echo "$stack/postgres/postgres.log"; }

pg_running() { [ -f "$(pg_data)/postmaster.pid" ] && as_pg "$(pg_bin)/pg_ctl" -D "$(pg_data)" status >/dev/null 2>&1; }

pg_psql() {
  as_pg "$(pg_bin)/psql" -h "$(pg_run)" -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA "$@"
}

# The running server serves TLS (so it was started after pg_tls_conf).
pg_current() { [ "$(pg_psql -c 'show ssl' 2>/dev/null)" = on ]; }

# TLS with the stack's server certificate: plaintext connections stay allowed (sslmode=disable).
pg_tls_conf() {
  local data; data=$(pg_data)
  tls_make
  as_pg cp "$(tls_dir)/server.pem" "$data/server.crt" </dev/null
  as_pg tee "$data/server.key" <"$(tls_dir)/server.key" >/dev/null
  as_pg chmod 600 "$data/server.key"
  grep -qxF "$stack_config_marker" "$data/postgresql.conf" && return 0
  cat <<CONF | as_pg tee -a "$data/postgresql.conf" >/dev/null
$stack_config_marker
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
CONF
}

pg_up() {
  local bin; bin=$(pg_bin)
  if pg_running; then
    if pg_current; then pg_roles; return 0; fi
    say "restarting PostgreSQL in $(pg_data) into stack config $stack_config (TLS; data kept)"
    pg_tls_conf
    as_pg "$bin/pg_ctl" -D "$(pg_data)" -l "$(pg_log)" -m fast -w -t "$start_wait_s" restart >/dev/null \
      || die "PostgreSQL did not restart; see $(pg_log)"
    pg_roles
    return 0
  fi
  port_open "$pg_port" && die "port $pg_port is taken by a process that is not an amends PostgreSQL: stop it, then run npm run up again"
  mkdir -p "$stack/postgres"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "user postgres is missing: install the PostgreSQL server package (apt-get install postgresql)"
    chown postgres: "$stack/postgres"
    chmod o+x "$stack" "$root"
  fi
  if [ ! -f "$(pg_data)/PG_VERSION" ]; then
    as_pg mkdir -p "$(pg_data)" "$(pg_run)"
    as_pg "$bin/initdb" -D "$(pg_data)" -U postgres -E UTF8 --locale=C \
      --auth-local=trust --auth-host=scram-sha-256 >"$stack/postgres/initdb.log" 2>&1 \
      || die "initdb failed; see $stack/postgres/initdb.log"
    cat <<CONF | as_pg tee -a "$(pg_data)/postgresql.conf" >/dev/null
# Written by scripts/stack.sh
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$(pg_run)'
max_connections = 200
CONF
  fi
  pg_tls_conf
  as_pg mkdir -p "$(pg_run)"
  as_pg "$bin/pg_ctl" -D "$(pg_data)" -l "$(pg_log)" -w -t "$start_wait_s" start >/dev/null \
    || die "PostgreSQL did not start; see $(pg_log)"
  pg_roles
}

pg_roles() {
  local bin; bin=$(pg_bin)
  if [ "$(pg_psql -c "select 1 from pg_roles where rolname='$pg_role'")" != 1 ]; then
    pg_psql -c "create role $pg_role login password '$pg_password'" >/dev/null
  fi
  if [ "$(pg_psql -c "select 1 from pg_database where datname='$pg_database'")" != 1 ]; then
    pg_psql -c "create database $pg_database owner $pg_role" >/dev/null
  fi
  PGPASSWORD=$pg_password "$bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" -d "$pg_database" -U "$pg_role" \
    || die "PostgreSQL runs but does not accept connections on 127.0.0.1:$pg_port; see $(pg_log)"
}

pg_down() {
  pg_running || return 0
  as_pg "$(pg_bin)/pg_ctl" -D "$(pg_data)" -m fast -w stop >/dev/null
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
    adopt_running_stack
    mkdir -p "$stack"
    pg_up
    kafka_up
    client_files
  fi
  say "up: broker 127.0.0.1:$broker_port (SASL_SSL 127.0.0.1:$sasl_port, $own_stack/kafka-client-sasl.properties)," \
    "database postgres://$pg_role:$pg_password@127.0.0.1:$pg_port/$pg_database (TLS CA $own_stack/tls/ca.pem)"
}

down() {
  # Only this checkout's own services: another checkout's stack is stopped from there.
  if docker_engine; then compose down; else kafka_down; pg_down; fi
  say "down (data kept)"
}

status() {
  if docker_engine; then compose ps; return; fi
  adopt_running_stack
  kafka_running && echo "broker: running (pid $(kafka_pid), $stack)" || echo "broker: stopped"
  pg_running && echo "database: running ($stack)" || echo "database: stopped"
}

cmd=${1:-up}; shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  fetch) docker_engine || fetch_kafka ;;
  status) status ;;
  tool) java_ok; fetch_kafka; set_java_cmd; exec "${java_cmd[@]}" "$@" ;;
  *) die "unknown command $cmd (up, down, fetch, status, tool)" ;;
esac
