#!/usr/bin/env bash
# The local stack: one Kafka-protocol broker on 127.0.0.1:19092 (plaintext) and
# 127.0.0.1:19094 (SASL_SSL, SCRAM-SHA-512 user amends / amends-local-only), and one
# PostgreSQL on 127.0.0.1:15432 (role amends, password amends-local-only, database
# amends; TLS offered, plaintext allowed). The broker's and the database's certificate
# come from a CA the stack makes at first start (.stack/tls/ca.pem); a ready librdkafka
# client file for the secured listener is .stack/kafka-client-sasl.properties.
#
#   stack.sh up [--reset] [--brokers 1|3] [--database single|ha] [--postgres MAJOR]
#               [--kafka-only|--database-only]
#                           start both (idempotent); --reset wipes .stack/ first;
#                           --brokers 3 runs a 3-node KRaft cluster instead of one broker;
#                           --database ha runs the HA database instead of one PostgreSQL
#                           (stack-ha.sh: etcd, two Patroni nodes, HAProxy on the same port);
#                           --postgres 18 runs PostgreSQL 18 (the embedded-postgres
#                           devDependency's binaries, data in .stack/postgres-18) instead of
#                           the machine's (Debian's 15, data in .stack/postgres): one at a
#                           time, same port and credentials (stack-postgres.sh);
#                           --kafka-only starts what is missing of the brokers and leaves
#                           PostgreSQL as it is (amendsctl chaos restarts a killed broker
#                           while the database may be away on purpose); --database-only
#                           starts the database alone
#   stack.sh down           stop both (whichever broker and database layout or major runs), keep their data
#   stack.sh fetch          resolve the Kafka jars into the cache (no start)
#   stack.sh status         say what runs
#   stack.sh db-kill        stop PostgreSQL at once (pg_ctl -m immediate: a crash, for chaos runs)
#   stack.sh db-start       start PostgreSQL again, the major that ran last (its data kept;
#                           recovery replays the WAL)
#   stack.sh ha-status      the HA database: each node's role, where HAProxy's ports lead
#   stack.sh ha-kill-primary SIGKILL the HA primary's postmaster (Patroni fails over)
#   stack.sh ha-switchover  patronictl switchover to the synchronous standby
#   stack.sh tool CLASS ARGS run a Kafka tool class with the stack's jars, e.g.
#                           tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
#                           --bootstrap-server 127.0.0.1:19092 --describe --group G
#
# With a Docker engine it runs compose.yaml (Redpanda + PostgreSQL). Without one it
# runs Apache Kafka (KRaft, a single node by default) from Maven Central jars on the machine's
# Java 17 and a private PostgreSQL cluster made with the machine's initdb, both with
# data and logs under .stack/. Every failure is one line on stderr and exit 1.
#
# --brokers 3 (native only): three nodes, each broker and controller (a 3-voter quorum), on
# 127.0.0.1:19092, 19192 and 19292 (SASL_SSL on 19094/19194/19294, controllers on
# 19093/19193/19293), node N's data and logs in .stack/kafka-cluster/node-N. The single
# broker's data (.stack/kafka) is kept apart. Both layouts serve 19092, so one runs at a
# time: up with the other layout running is a one-line error (run down first).
#
# A checkout that finds another checkout's amends stack on its ports uses it (adopts it):
# its .stack/tls/ca.pem and client file then name that stack's CA, and a CA of its own is
# kept aside (tls/own-ca.pem) and put back when its own stack runs again.
#
# A running native stack (this checkout's or another's) whose configuration is older
# than this script's (stack_config below) is restarted into the new one, keeping its
# data. AMENDS_STACK_DIR and AMENDS_STACK_{KAFKA,SASL,CONTROLLER,PG}_PORT move a private
# copy elsewhere (to try this script without touching the shared stack), and
# AMENDS_STACK_JVM_OPTS adds JVM options to its brokers and tools; the secured and
# controller ports default to the plaintext port + 2 and + 1, and a cluster's node N
# listens on each of them + (N-1)*100.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# This checkout's stack directory: it always gets the client file and a copy of the CA.
own_stack="${AMENDS_STACK_DIR:-$root/.stack}"
# Where the services live: own_stack, or another checkout's running amends stack (adopt_running_stack).
stack="$own_stack"
cache="${AMENDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/amends}"
kafka_pom="$root/stack/kafka/pom.xml"
broker_port=${AMENDS_STACK_KAFKA_PORT:-19092}
# The secured and controller listeners sit next to the plaintext one unless moved on their own.
sasl_port=${AMENDS_STACK_SASL_PORT:-$((broker_port + 2))}
controller_port=${AMENDS_STACK_CONTROLLER_PORT:-$((broker_port + 1))}
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
  local props; props=$(kafka_props_of "$pid")
  case "$props" in
    */.stack/kafka/server.properties) echo "${props%/kafka/server.properties}"; return 0 ;;
    */.stack/kafka-cluster/node-*/server.properties) echo "${props%/kafka-cluster/node-*}"; return 0 ;;
  esac
  # PostgreSQL: the postmaster's data directory lives in /proc/pid/cwd; the HA database's
  # HAProxy runs in its own directory (stack-ha.sh).
  local cwd; cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || return 1
  case "$cwd" in
    */.stack/postgres/data) echo "${cwd%/postgres/data}" ;;
    */.stack/postgres-*/data) echo "${cwd%/postgres-*/data}" ;;
    */.stack/ha/haproxy) echo "${cwd%/ha/haproxy}" ;;
    *) return 1 ;;
  esac
}

# The server.properties a Kafka broker process runs (the argument after kafka.Kafka), if any.
kafka_props_of() {
  tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | sed -n '/^kafka\.Kafka$/{n;p;q;}'
}

# When another checkout's amends stack already runs on our ports, its services (and their
# data and certificates) live in its directory: manage them there instead of failing on the
# ports, upgrading them in place when their configuration is older than ours.
# PORTS (default: the broker's and the database's) are the ones to look at.
adopt_running_stack() {
  local port dir ports=("$@")
  [ "${#ports[@]}" -gt 0 ] || ports=("$broker_port" "$pg_port")
  for port in "${ports[@]}"; do
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
  if [ -f "$d/.complete" ]; then
    tls_own_ca "$d" && return 0
    say "$d/ca.pem did not sign this stack's certificates (another stack's CA, copied over it before stack.sh kept the two apart): making new ones"
  fi
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

tls_signed_by() { openssl verify -CAfile "$1" "$2" >/dev/null 2>&1; }

# Makes D/ca.pem the CA that signed D's server certificate again when a copy of an adopted
# stack's CA stands there (ca_adopt kept the own one in own-ca.pem); fails when neither is.
tls_own_ca() {
  local d="$1"
  tls_signed_by "$d/ca.pem" "$d/server.pem" && return 0
  [ -f "$d/own-ca.pem" ] && tls_signed_by "$d/own-ca.pem" "$d/server.pem" || return 1
  cp "$d/own-ca.pem" "$d/ca.pem"
}

# Gives the tls directory INTO of a checkout whose clients reach an adopted stack that
# stack's CA (SRC) as ca.pem, where its clients look for it. A CA of the checkout's own
# (tls_make's, for its own services) is first kept aside as own-ca.pem: copied over, it made
# the checkout's own stack fail every TLS check once it ran again.
ca_adopt() {
  local src="$1" into="$2"
  if [ -f "$into/.complete" ] && tls_signed_by "$into/ca.pem" "$into/server.pem"; then
    cp "$into/ca.pem" "$into/own-ca.pem"
  fi
  cp "$src" "$into/ca.pem"
}

# This checkout's copy of the CA and the ready client file for the SASL_SSL listener
# (librdkafka names, as kcat -F and amends --kafka-config read them).
# Written into this checkout's stack directory and, when the services live in another
# checkout's, into that one too.
# $1 is the running layout (single or cluster): the file lists each of its brokers.
client_files() {
  # Services of this checkout's own: its CA is the one their clients need.
  if [ "$stack" -ef "$own_stack" ] && [ -f "$(tls_dir)/.complete" ]; then tls_own_ca "$(tls_dir)" || true; fi
  client_file_in "$own_stack" "$1"
  [ "$stack" -ef "$own_stack" ] || client_file_in "$stack" "$1"
}

client_file_in() {
  local into="$1" layout="$2"
  mkdir -p "$into/tls"
  [ "$(tls_dir)/ca.pem" -ef "$into/tls/ca.pem" ] || ca_adopt "$(tls_dir)/ca.pem" "$into/tls"
  cat >"$into/kafka-client-sasl.properties" <<PROPS
# Written by scripts/stack.sh: the local broker's SASL_SSL listener (local-only credentials).
bootstrap.servers=$(layout_addresses "$layout" "$sasl_port")
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.username=$sasl_user
sasl.password=$sasl_password
ssl.ca.location=$into/tls/ca.pem
PROPS
}

# ---------------------------------------------------------------- Kafka (native)
#
# Two layouts, never both at once in one stack directory (both serve 127.0.0.1:19092):
# - single (the default): one KRaft node that is broker and controller, in $stack/kafka;
# - cluster (up --brokers 3): three nodes, each broker and controller (a 3-voter quorum),
#   node N in $stack/kafka-cluster/node-N with the single node's ports plus (N-1)*100:
#   plaintext 19092/19192/19292, controller 19093/19193/19293, SASL_SSL 19094/19194/19294.
# A node is named by a key: "single", or the cluster node's id (1..cluster_size).

# Three is the smallest quorum that survives losing a node, and the smallest cluster where
# replication factor 3 with min.insync.replicas=2 keeps accepting writes with one broker down.
cluster_size=3
cluster_port_step=100
cluster_min_isr=2

kafka_version() { sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$kafka_pom"; }
kafka_lib() { echo "$cache/kafka-$(kafka_version)-$(sha256sum "$kafka_pom" | cut -c1-12)/lib"; }

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

layout_nodes() { case "$1" in single) echo single ;; cluster) seq 1 "$cluster_size" ;; esac; }
# Where a layout keeps what is shared by its nodes (the SCRAM user's marker, the cluster id).
layout_dir() { case "$1" in single) echo "$stack/kafka" ;; cluster) echo "$stack/kafka-cluster" ;; esac; }
layout_name() { case "$1" in single) echo "the single-broker stack" ;; cluster) echo "the $cluster_size-broker cluster" ;; esac; }
node_dir() { case "$1" in single) echo "$stack/kafka" ;; *) echo "$stack/kafka-cluster/node-$1" ;; esac; }
node_name() { case "$1" in single) echo "the broker" ;; *) echo "broker $1" ;; esac; }
# node_port KEY BASE: the node's port of the listener whose single-node port is BASE.
node_port() { case "$1" in single) echo "$2" ;; *) echo $(($2 + ($1 - 1) * cluster_port_step)) ;; esac; }
node_pid_file() { echo "$(node_dir "$1")/kafka.pid"; }

# host:port,… of a layout's listener whose single-node port is BASE.
layout_addresses() {
  local key list=""
  for key in $(layout_nodes "$1"); do list+="${list:+,}127.0.0.1:$(node_port "$key" "$2")"; done
  echo "$list"
}

cluster_voters() {
  local n list=""
  for n in $(layout_nodes cluster); do list+="${list:+,}$n@127.0.0.1:$(node_port "$n" "$controller_port")"; done
  echo "$list"
}

# The node's pid: its pid file, or (a broker started without one) the listener's on the
# node's port, when that listener runs this very node's server.properties: a broker of
# another checkout on the same port is never taken for ours (down must not stop it).
node_pid() {
  local f; f=$(node_pid_file "$1")
  if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then cat "$f"; return 0; fi
  local pid props; pid=$(listener_pid "$(node_port "$1" "$broker_port")")
  [ -n "$pid" ] && props=$(kafka_props_of "$pid") && [ -n "$props" ] \
    && [ "$props" -ef "$(node_dir "$1")/server.properties" ] && { echo "$pid"; return 0; }
  return 1
}
node_running() { node_pid "$1" >/dev/null; }

# The layout whose broker(s) run in $stack (a cluster counts when any of its nodes runs).
running_layout() {
  local layout key
  for layout in single cluster; do
    for key in $(layout_nodes "$layout"); do node_running "$key" && { echo "$layout"; return 0; }; done
  done
  return 1
}

# The running node was started with this script's configuration.
node_current() { grep -qxF "$stack_config_marker" "$(node_dir "$1")/server.properties" 2>/dev/null; }

# Sets java_cmd: the JVM and class path of the broker and its tools.
java_cmd=()
set_java_cmd() {
  # AMENDS_STACK_JVM_OPTS: more JVM options, for stacks that live a minute (the chaos run's).
  # shellcheck disable=SC2206
  java_cmd=(java -Xms256m -Xmx512m -XX:+UseG1GC ${AMENDS_STACK_JVM_OPTS:-} -Djava.awt.headless=true
    -Dlog4j2.configurationFile="$root/stack/kafka/log4j2.xml" -cp "$(kafka_lib)/*")
}

write_server_properties() {
  local key="$1" dir tls; dir=$(node_dir "$key"); tls=$(tls_dir)
  local port sasl controller; port=$(node_port "$key" "$broker_port")
  sasl=$(node_port "$key" "$sasl_port"); controller=$(node_port "$key" "$controller_port")
  local header node_id voters rf min_isr
  if [ "$key" = single ]; then
    header="a single KRaft node that is broker and controller."
    node_id=1 voters="1@127.0.0.1:$controller_port" rf=1 min_isr=1
  else
    header="node $key of a $cluster_size-node KRaft cluster, each node broker and controller."
    node_id=$key voters=$(cluster_voters) rf=$cluster_size min_isr=$cluster_min_isr
  fi
  cat >"$dir/server.properties" <<PROPS
# Written by scripts/stack.sh: $header
$stack_config_marker
process.roles=broker,controller
node.id=$node_id
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sasl,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sasl
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
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$min_isr
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=6000
PROPS
}

# Refuses to start LAYOUT where the other layout runs: both serve the same first port, and
# stopping a running broker that someone may be using is the user's call, not up's.
kafka_layout_free() {
  local want="$1" running
  running=$(running_layout) || return 0
  [ "$running" = "$want" ] && return 0
  local again="npm run up" where=""
  [ "$want" = cluster ] && again="npm run up -- --brokers $cluster_size"
  [ "$stack" -ef "$own_stack" ] || where=" in its checkout"
  die "$(layout_name "$running") is up in $stack: stop it first (npm run down$where, data kept), then $again"
}

# The ports of a node about to start: each must be free.
node_ports_free() {
  local key="$1" port
  if [ "$key" = single ]; then
    port_open "$broker_port" && die "port $broker_port is taken by a process that is not an amends broker: stop it, then run npm run up again"
    for port in "$sasl_port" "$controller_port"; do
      port_open "$port" && die "port $port (the broker's secured or controller listener) is taken by another process: stop it, then run npm run up again"
    done
    return 0
  fi
  for port in $(node_port "$key" "$broker_port") $(node_port "$key" "$sasl_port") $(node_port "$key" "$controller_port"); do
    port_open "$port" && die "port $port (a listener of broker $key of the cluster) is taken by another process: stop it, then run npm run up -- --brokers $cluster_size again"
  done
  return 0
}

kafka_up() {
  local layout="$1" key pid starting=()
  java_ok; fetch_kafka; tls_make
  for key in $(layout_nodes "$layout"); do
    if node_running "$key"; then
      node_current "$key" && continue
      say "restarting $(node_name "$key") in $(node_dir "$key") into stack config $stack_config (secured listener on $(node_port "$key" "$sasl_port"); data kept)"
      kafka_stop "$key"
    fi
    node_ports_free "$key"
    starting+=("$key")
  done
  # Every storage formatted first, at once (a JVM each), then every node launched before
  # any wait: a cluster node finishes starting only once a quorum of voters runs.
  local formats=()
  [ "$layout" = cluster ] && [ "${#starting[@]}" -gt 0 ] && cluster_id >/dev/null
  for key in "${starting[@]}"; do node_prepare "$key" & formats+=("$!"); done
  for pid in "${formats[@]}"; do wait "$pid" || exit 1; done
  for key in "${starting[@]}"; do node_launch "$key"; done
  for key in $(layout_nodes "$layout"); do wait_node "$key"; done
  # A start that died before its SCRAM user was set gets it now.
  if [ "${#starting[@]}" -gt 0 ] || [ ! -f "$(layout_dir "$layout")/scram-user.done" ]; then
    kafka_scram_user "$layout"
  fi
}

# A new cluster id, made here rather than with StorageTool random-uuid (one JVM start less,
# a second or two of a fresh stack's start): a Kafka Uuid is 16 random bytes in unpadded
# base64url, and Kafka never hands out one that starts with "-".
new_cluster_id() {
  local id=-
  while [ "${id:0:1}" = - ]; do id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
  echo "$id"
}

# The cluster's id, shared by its nodes' storage and kept in kafka-cluster/cluster.id.
cluster_id() {
  local file; file="$(layout_dir cluster)/cluster.id"
  if [ ! -s "$file" ]; then
    mkdir -p "$(layout_dir cluster)"
    new_cluster_id >"$file"
  fi
  cat "$file"
}

# A node's directory, configuration and (first time only) formatted storage. The cluster's
# id is made before the nodes are prepared in parallel, so they all format with the same one.
node_prepare() {
  local key="$1" dir; dir=$(node_dir "$key"); set_java_cmd
  mkdir -p "$dir/data" "$dir/logs"
  write_server_properties "$key"
  if [ ! -f "$dir/data/meta.properties" ]; then
    local cluster_id
    if [ "$key" = single ]; then
      cluster_id=$(new_cluster_id)
    else
      cluster_id=$(cat "$(layout_dir cluster)/cluster.id")
    fi
    "${java_cmd[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/server.properties" \
      >>"$dir/logs/format.log" 2>&1 || die "could not format the Kafka storage; see $dir/logs/format.log"
  fi
}

node_launch() {
  local key="$1" dir; dir=$(node_dir "$key"); set_java_cmd
  # A fresh log per start, so the readiness check cannot read an earlier start's line.
  [ -f "$dir/logs/server.log" ] && mv "$dir/logs/server.log" "$dir/logs/server.log.prev"
  # setsid: the broker must outlive the npm command that started it.
  setsid nohup "${java_cmd[@]}" kafka.Kafka "$dir/server.properties" >>"$dir/logs/server.log" 2>&1 </dev/null &
  echo $! >"$(node_pid_file "$key")"
}

wait_node() {
  local key="$1" dir port sasl i; dir=$(node_dir "$key")
  port=$(node_port "$key" "$broker_port"); sasl=$(node_port "$key" "$sasl_port")
  for ((i = 0; i < start_wait_s * 2; i++)); do
    node_running "$key" || die "$(node_name "$key") exited while starting; see $dir/logs/server.log"
    if port_open "$port" && port_open "$sasl" \
      && grep -q 'Kafka Server started' "$dir/logs/server.log" 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  die "$(node_name "$key") did not accept connections on 127.0.0.1:$port within ${start_wait_s}s; see $dir/logs/server.log"
}

# The SCRAM credential of the secured listener's user, set through the plaintext listener
# (KRaft keeps it in the metadata log, shared by every node; setting it again is harmless).
kafka_scram_user() {
  local into; into=$(layout_dir "$1")
  set_java_cmd
  mkdir -p "$into/logs"
  "${java_cmd[@]}" kafka.admin.ConfigCommand --bootstrap-server "$(layout_addresses "$1" "$broker_port")" --alter \
    --entity-type users --entity-name "$sasl_user" \
    --add-config "SCRAM-SHA-512=[iterations=8192,password=$sasl_password]" \
    >>"$into/logs/scram.log" 2>&1 \
    || die "could not set the SCRAM user $sasl_user on the broker; see $into/logs/scram.log"
  touch "$into/scram-user.done"
}

# Stops the given nodes (default: every node of this stack directory, of either layout):
# SIGTERM to all at once, so a cluster's brokers shut down while their quorum still stands,
# then SIGKILL whatever still runs after 30 s.
kafka_stop() {
  local keys=("$@") key pid pids=() alive i
  [ "${#keys[@]}" -gt 0 ] || keys=($(layout_nodes single) $(layout_nodes cluster))
  for key in "${keys[@]}"; do
    if pid=$(node_pid "$key"); then kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); fi
  done
  for ((i = 0; i < 60; i++)); do
    alive=()
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    [ "${#alive[@]}" -gt 0 ] || break
    sleep 0.5
  done
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true; done
  for key in "${keys[@]}"; do rm -f "$(node_pid_file "$key")"; done
}

# ------------------------------------------------------------ PostgreSQL (native)

# One PostgreSQL of the machine's major or of another (up --postgres N): pg_choose, pg_up, pg_down.
# shellcheck source=scripts/stack-postgres.sh
source "$root/scripts/stack-postgres.sh"

# The HA database (up --database ha): etcd, two Patroni nodes, HAProxy.
# shellcheck source=scripts/stack-ha.sh
source "$root/scripts/stack-ha.sh"

# Refuses to start the database layout WANT (single or ha) where the other one runs: both
# serve the PostgreSQL port.
database_layout_free() {
  local want="$1" where=""
  [ "$stack" -ef "$own_stack" ] || where=" in its checkout"
  if [ "$want" = ha ] && pg_running; then
    die "the single-node PostgreSQL is up in $stack: stop it first (npm run down$where, data kept), then npm run up -- --database ha"
  fi
  if [ "$want" = single ] && ha_running; then
    die "the HA database (Patroni) is up in $stack: stop it first (npm run down$where, data kept), then npm run up"
  fi
  return 0
}

# ------------------------------------------------------------------- commands

compose() { docker compose -f "$root/compose.yaml" "$@"; }

up() {
  local reset=false brokers=1 layout arg kafka_only=false database=single database_only=false postgres=""
  while [ "$#" -gt 0 ]; do
    arg="$1"; shift
    case "$arg" in
      --reset) reset=true ;;
      --kafka-only) kafka_only=true ;;
      --database-only) database_only=true ;;
      --brokers=*) brokers="${arg#--brokers=}" ;;
      --brokers) [ "$#" -gt 0 ] || die "--brokers needs a value: 1 or $cluster_size"; brokers="$1"; shift ;;
      --database=*) database="${arg#--database=}" ;;
      --database) [ "$#" -gt 0 ] || die "--database needs a value: single or ha"; database="$1"; shift ;;
      --postgres=*) postgres="${arg#--postgres=}" ;;
      --postgres) [ "$#" -gt 0 ] || die "--postgres needs a major version, e.g. 18"; postgres="$1"; shift ;;
      *) die "unknown option $arg (usage: npm run up [-- --reset] [--brokers 1|$cluster_size] [--database single|ha] [--postgres MAJOR] [--kafka-only|--database-only])" ;;
    esac
  done
  case "$postgres" in
    '' | [1-9] | [1-9][0-9]) ;;
    *) die "--postgres takes a PostgreSQL major version, e.g. 18, not $postgres" ;;
  esac
  case "$database" in
    single | ha) ;;
    *) die "--database must be single (the default one PostgreSQL) or ha (Patroni and HAProxy), not $database" ;;
  esac
  $kafka_only && $database_only && die "--kafka-only and --database-only exclude each other: leave both out to start both"
  case "$brokers" in
    1) layout=single ;;
    "$cluster_size") layout=cluster ;;
    *) die "--brokers must be 1 (the default single broker) or $cluster_size (a KRaft cluster), not $brokers" ;;
  esac
  if docker_engine; then
    [ "$layout" = single ] || die "the $cluster_size-broker cluster runs on the native stack only: set AMENDS_STACK=native (compose.yaml has one Redpanda broker)"
    [ "$database" = single ] || die "the HA database runs on the native stack only: set AMENDS_STACK=native (compose.yaml has one PostgreSQL)"
    [ -z "$postgres" ] || [ "$postgres" = 18 ] || die "compose.yaml runs PostgreSQL 18.6: --postgres $postgres is for the native stack (set AMENDS_STACK=native)"
    $reset && compose down -v
    compose up -d --wait || die "docker compose could not start the stack (compose.yaml)"
  else
    if $reset; then kafka_stop; pg_down; ha_down; rm -rf "$stack"; fi
    # --database-only: a broker on the Kafka port is not this command's business.
    if $database_only; then adopt_running_stack "$pg_port"; else adopt_running_stack; fi
    # Before anything starts: the other layout holding the ports is one line, nothing touched.
    $database_only || kafka_layout_free "$layout"
    $kafka_only || database_layout_free "$database"
    if ! $kafka_only && [ "$database" = single ]; then pg_choose "$postgres"; fi
    [ "$database" = single ] || [ -z "$postgres" ] || [ -x "/usr/lib/postgresql/$postgres/bin/pg_rewind" ] \
      || die "the HA database runs on Debian's PostgreSQL packages (Patroni needs pg_basebackup and pg_rewind, which embedded-postgres lacks): leave out --postgres, or apt-get install postgresql-$postgres"
    [ "$database" = ha ] && [ -n "$postgres" ] && pg_major=$postgres
    mkdir -p "$stack"
    if ! $kafka_only; then
      if [ "$database" = ha ]; then ha_up; else pg_up; fi
    fi
    $database_only || kafka_up "$layout"
    client_files "$layout"
  fi
  local brokers_said="broker 127.0.0.1:$broker_port (SASL_SSL 127.0.0.1:$sasl_port"
  [ "$layout" = cluster ] && brokers_said="$cluster_size brokers $(layout_addresses cluster "$broker_port") (SASL_SSL $(layout_addresses cluster "$sasl_port")"
  local database_said="database postgres://$pg_role:$pg_password@127.0.0.1:$pg_port/$pg_database (TLS CA $own_stack/tls/ca.pem)"
  [ -n "$pg_major" ] && [ "$database" = single ] && database_said="$database_said, PostgreSQL $pg_major in $pg_home"
  [ "$database" = ha ] && database_said="$database_said: the primary through HAProxy, a replica on 127.0.0.1:$(ha_replica_port)"
  if $database_only; then say "up: $database_said"; else say "up: $brokers_said, $own_stack/kafka-client-sasl.properties), $database_said"; fi
}

down() {
  # Only this checkout's own services: another checkout's stack is stopped from there.
  # Whichever layout runs here (single broker or cluster) is stopped.
  if docker_engine; then compose down; else kafka_stop; pg_down; ha_down; fi
  say "down (data kept)"
}

status_label() { case "$1" in single) echo broker ;; *) echo "broker $1" ;; esac; }

status() {
  if docker_engine; then compose ps; return; fi
  adopt_running_stack
  local layout key pid home
  if layout=$(running_layout); then
    for key in $(layout_nodes "$layout"); do
      if pid=$(node_pid "$key"); then
        echo "$(status_label "$key"): running (pid $pid, 127.0.0.1:$(node_port "$key" "$broker_port"), $stack)"
      else
        echo "$(status_label "$key"): stopped (127.0.0.1:$(node_port "$key" "$broker_port"), $stack)"
      fi
    done
  else
    echo "broker: stopped"
  fi
  if ha_running; then
    echo "database: HA ($stack/ha)"
    ha_status | sed 's/^/  /'
  elif home=$(pg_running_home); then
    echo "database: PostgreSQL $(pg_home_major "$home") running ($home)"
  else
    echo "database: stopped"
  fi
}

# db-kill and db-start act on the single-node database: on the HA one they would do nothing.
single_database() {
  ha_running && die "$1 is for the single-node database, and the HA database runs in $stack: use ha-kill-primary or ha-switchover"
  return 0
}

# The HA operations act on the HA database on the PostgreSQL port, this checkout's or
# another's (as status does).
ha_command() {
  docker_engine && die "the HA database runs on the native stack only: set AMENDS_STACK=native"
  adopt_running_stack "$pg_port"
  "$@"
}

cmd=${1:-up}; shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  fetch) docker_engine || fetch_kafka ;;
  status) status ;;
  db-kill) single_database db-kill; pg_stop immediate; say "database stopped (immediate)" ;;
  # The major that ran last (db-kill leaves none running to tell).
  db-start) single_database db-start; pg_choose "$(cat "$stack/postgres.major" 2>/dev/null)"; pg_up; say "database up" ;;
  ha-status) ha_command ha_status ;;
  ha-kill-primary) ha_command ha_kill_primary ;;
  ha-switchover) ha_command ha_switchover ;;
  tool) java_ok; fetch_kafka; set_java_cmd; exec "${java_cmd[@]}" "$@" ;;
  *) die "unknown command $cmd (up, down, fetch, status, tool, db-kill, db-start, ha-status, ha-kill-primary, ha-switchover)" ;;
esac
