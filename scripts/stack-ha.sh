# shellcheck shell=bash
# The HA database of the native stack (stack.sh up --database ha), sourced by stack.sh: its
# helpers (die, say, port_open, tls_make, pg_bin, pg_roles) and variables ($stack, $pg_port,
# the credentials) are stack.sh's. No failover of our own: Patroni (one per node) decides who
# is primary through etcd, and HAProxy routes to whoever its REST API says.
#
# Ports, all from the PostgreSQL port P (AMENDS_STACK_PG_PORT, default 15432):
#   P       HAProxy -> the primary (Patroni REST /primary)   what every amends command uses
#   P+1     HAProxy -> a replica (Patroni REST /replica)     read-only
#   P+2     etcd clients, P+3 etcd peers (one member)
#   P+4     HAProxy's statistics page (http://127.0.0.1:P+4/)
#   P+10N   node N's PostgreSQL, P+10N+1 node N's Patroni REST API (N = 1, 2)
#   P+10N+2 with AMENDS_STACK_HA_ETCD_LINKS=1 only: where node N's Patroni reaches etcd,
#           through a TCP relay the caller runs (see ha_node_etcd_port)
# Data and logs under $stack/ha/: etcd/, node-1/, node-2/ (Patroni's configuration, its log,
# the node's data directory; PostgreSQL's own log in data/log/), haproxy/.
#
# The Patroni settings below and why they are what they are: docs/operations.md, "Running on
# Patroni and HAProxy".

ha_config=1
ha_config_marker="# amends stack config ha-$ha_config"
ha_nodes=(1 2)
ha_scope=amends
ha_replication_user=replicator
# Local-only, like every other secret of this stack: Patroni's own connections (rewind,
# basebackup) and stack.sh's role setup use them over TCP.
ha_superuser_password=amends-local-only
ha_replication_password=amends-local-only

ha_dir() { echo "$stack/ha"; }
ha_node_dir() { echo "$stack/ha/node-$1"; }
ha_replica_port() { echo $((pg_port + 1)); }
ha_etcd_port() { echo $((pg_port + 2)); }
ha_etcd_peer_port() { echo $((pg_port + 3)); }
ha_stats_port() { echo $((pg_port + 4)); }
ha_node_pg_port() { echo $((pg_port + 10 * $1)); }
ha_node_rest_port() { echo $((pg_port + 10 * $1 + 1)); }

# Where node N's Patroni reaches etcd: etcd's own port, or with AMENDS_STACK_HA_ETCD_LINKS=1
# the port P+10N+2, where the caller (the chaos run, src/showcase/etcd-links.ts) runs a TCP
# relay to etcd that it can cut: one node is then cut off from etcd while the other still
# reaches it, which is what Patroni sees of a network partition. The relays must listen
# before `up`; with them, Patroni is told the address is a proxy (use_proxies), or it would
# learn etcd's own address from the member list and go round the relay.
ha_etcd_links() { [ "${AMENDS_STACK_HA_ETCD_LINKS:-}" = 1 ]; }
ha_node_etcd_port() { if ha_etcd_links; then echo $((pg_port + 10 * $1 + 2)); else ha_etcd_port; fi; }

# ------------------------------------------------------------------ processes

# The pid of the process started for DIR (its pid file), when it still runs DIR's
# configuration: a recycled pid is never taken for ours.
ha_pid() {
  local dir="$1" pid
  pid=$(cat "$dir/pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/" || return 1
  echo "$pid"
}
ha_component_running() { ha_pid "$1" >/dev/null; }

# Any part of the HA database runs in $stack.
ha_running() {
  local dir
  for dir in "$(ha_dir)/etcd" "$(ha_dir)/haproxy" $(for n in "${ha_nodes[@]}"; do ha_node_dir "$n"; done); do
    ha_component_running "$dir" && return 0
  done
  return 1
}

# Starts CMD… detached (setsid: it outlives the command that started it) in DIR, its output
# appended to DIR/LOG. The process writes its own pid to DIR/pid before it becomes CMD (exec
# keeps the pid): setsid forks when it has to, so $! can be another process's.
ha_launch() {
  local dir="$1" log="$2" i; shift 2
  rm -f "$dir/pid"
  # shellcheck disable=SC2016
  # The subshell becomes setsid at once (exec): no shell is left holding the caller's output.
  ( cd "$dir" && exec setsid nohup bash -c 'echo $$ >"$0/pid"; exec "$@"' "$dir" "$@" ) >>"$dir/$log" 2>&1 </dev/null &
  for ((i = 0; i < 50; i++)); do [ -s "$dir/pid" ] && return 0; sleep 0.1; done
  die "could not start $1 (no pid after 5 s); see $dir/$log"
}

# SIGTERM, up to WAIT seconds for the exit, then SIGKILL.
ha_stop_component() {
  local dir="$1" wait_s="$2" pid i
  pid=$(ha_pid "$dir") || { rm -f "$dir/pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < wait_s * 4; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  rm -f "$dir/pid"
}

# The HTTP status of GET PATH on a loopback port, or nothing when no answer comes within 2 s.
http_status() {
  local line
  line=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
    printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$1" >&3; head -n 1 <&3' "$1" "$2" 2>/dev/null) || return 0
  line=${line#* }; echo "${line%% *}"
}

# The body of GET PATH on a loopback port (empty when no answer comes within 2 s).
http_body() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
    printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$1" >&3; cat <&3' "$1" "$2" 2>/dev/null \
    | tr -d '\r' | sed '1,/^$/d' || true
}

# ------------------------------------------------------------------ packages

ha_packages_present() {
  command -v patroni >/dev/null 2>&1 && command -v patronictl >/dev/null 2>&1 \
    && command -v etcd >/dev/null 2>&1 && command -v haproxy >/dev/null 2>&1
}

# Patroni, etcd and HAProxy are installed only for the HA database (bootstrap.sh --database ha).
ha_packages() {
  ha_packages_present && return 0
  say "installing Patroni, etcd and HAProxy for the HA database (bootstrap.sh --packages-only --database ha)"
  bash "$root/scripts/bootstrap.sh" --packages-only --database ha || exit 1
  ha_packages_present || die "Patroni, etcd or HAProxy is still missing after bootstrap: install patroni etcd-server etcd-client haproxy"
}

# ---------------------------------------------------------------------- etcd

ha_etcd_up() {
  local dir; dir="$(ha_dir)/etcd"
  ha_component_running "$dir" && return 0
  local port peer; port=$(ha_etcd_port); peer=$(ha_etcd_peer_port)
  ha_port_free "$port" "etcd's client port"; ha_port_free "$peer" "etcd's peer port"
  mkdir -p "$dir/data"; chmod 700 "$dir/data"
  [ -f "$dir/etcd.log" ] && mv "$dir/etcd.log" "$dir/etcd.log.prev"
  # The initial-cluster flags are read only when the data directory is new.
  ha_launch "$dir" etcd.log etcd --name amends-stack --data-dir "$dir/data" \
    --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "amends-stack=http://127.0.0.1:$peer" --initial-cluster-state new \
    --initial-cluster-token "amends-stack-$pg_port" --logger zap --log-outputs stderr
  local i
  for ((i = 0; i < start_wait_s * 2; i++)); do
    ha_component_running "$dir" || die "etcd exited while starting; see $dir/etcd.log"
    [ "$(http_status "$port" /health)" = 200 ] && return 0
    sleep 0.5
  done
  die "etcd did not answer on 127.0.0.1:$port within ${start_wait_s}s; see $dir/etcd.log"
}

# A port the kernel may hand to an outgoing connection can be taken while its server is down
# (the chaos run saw it happen to a killed broker's port): every port of the HA database lies
# below the ephemeral range.
ha_ports_below_ephemeral() {
  local low highest=$((pg_port + 10 * ${#ha_nodes[@]} + 2))
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null) || return 0
  [ "$highest" -lt "$low" ] || die "the HA database's ports $pg_port-$highest reach this machine's ephemeral range (from $low): pick an AMENDS_STACK_PG_PORT below $((low - 10 * ${#ha_nodes[@]} - 2))"
}

ha_port_free() {
  port_open "$1" && die "port $1 ($2 of the HA database) is taken by another process: stop it, then run npm run up -- --database ha again"
  return 0
}

# -------------------------------------------------------------------- Patroni

# The settings shared by both nodes through etcd (bootstrap.dcs: read once, when the
# cluster is made; later changes reach a running cluster through patronictl edit-config).
ha_dcs_settings() {
  cat <<YAML
ttl: 10
loop_wait: 2
retry_timeout: 4
maximum_lag_on_failover: 1048576
synchronous_mode: true
synchronous_mode_strict: false
primary_start_timeout: 0
postgresql:
  use_pg_rewind: true
  use_slots: true
  parameters:
    max_connections: 200
    wal_level: replica
    hot_standby: 'on'
    wal_log_hints: 'on'
    max_wal_senders: 10
    max_replication_slots: 10
YAML
}

ha_write_patroni() {
  local n="$1" dir; dir=$(ha_node_dir "$n")
  {
    echo "$ha_config_marker"
    echo "# Written by scripts/stack.sh: node $n of the HA database (docs/operations.md, \"Running on Patroni and HAProxy\")."
    cat <<YAML
scope: $ha_scope
namespace: /amends-stack/
name: node-$n
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$(ha_node_rest_port "$n")
  connect_address: 127.0.0.1:$(ha_node_rest_port "$n")
etcd3:
  hosts: 127.0.0.1:$(ha_node_etcd_port "$n")
$(if ha_etcd_links; then echo "  use_proxies: true"; fi)
watchdog:
  mode: 'off'
bootstrap:
  dcs:
YAML
    ha_dcs_settings | sed 's/^/    /'
    cat <<YAML
  initdb:
    - encoding: UTF8
    - locale: C
    - auth-local: trust
    - auth-host: scram-sha-256
postgresql:
  listen: 127.0.0.1:$(ha_node_pg_port "$n")
  connect_address: 127.0.0.1:$(ha_node_pg_port "$n")
  use_unix_socket: true
  data_dir: $dir/data
  bin_dir: $(pg_bin)
  pgpass: $dir/pgpass
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  basebackup:
    - checkpoint: fast
  authentication:
    superuser:
      username: postgres
      password: $ha_superuser_password
    replication:
      username: $ha_replication_user
      password: $ha_replication_password
  parameters:
    unix_socket_directories: '$dir/run'
    logging_collector: 'on'
    ssl: 'on'
    ssl_cert_file: '$dir/tls/server.crt'
    ssl_key_file: '$dir/tls/server.key'
  pg_hba:
    - local all all trust
    - host replication $ha_replication_user 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
YAML
  } >"$dir/patroni.yml"
}

# Node N's directory (PostgreSQL refuses to run as root: the node runs as postgres), its
# copy of the stack's server certificate, and its configuration.
ha_node_prepare() {
  local n="$1" dir; dir=$(ha_node_dir "$n")
  mkdir -p "$dir/run" "$dir/tls"
  cp "$(tls_dir)/server.pem" "$dir/tls/server.crt"
  cp "$(tls_dir)/server.key" "$dir/tls/server.key"
  chmod 600 "$dir/tls/server.key"
  ha_write_patroni "$n"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "user postgres is missing: install the PostgreSQL server package (apt-get install postgresql)"
    chown -R postgres: "$dir"
    chmod o+x "$stack" "$(ha_dir)" "$root"
  fi
}

ha_node_launch() {
  local n="$1" dir; dir=$(ha_node_dir "$n")
  local ports; ports="$(ha_node_pg_port "$n") $(ha_node_rest_port "$n")"
  for port in $ports; do ha_port_free "$port" "node $n's PostgreSQL or Patroni REST port"; done
  [ -f "$dir/patroni.log" ] && mv "$dir/patroni.log" "$dir/patroni.log.prev"
  if [ "$(id -u)" = 0 ]; then
    ha_launch "$dir" patroni.log setpriv --reuid=postgres --regid=postgres --init-groups \
      env HOME="$(getent passwd postgres | cut -d: -f6)" patroni "$dir/patroni.yml"
  else
    ha_launch "$dir" patroni.log patroni "$dir/patroni.yml"
  fi
}

# Node N's role, from its Patroni REST API: primary, sync-standby, replica, starting (Patroni
# answers, PostgreSQL is not a running member yet) or down (Patroni does not answer).
ha_node_role() {
  local port; port=$(ha_node_rest_port "$1")
  [ "$(http_status "$port" /primary)" = 200 ] && { echo primary; return; }
  [ "$(http_status "$port" /sync)" = 200 ] && { echo sync-standby; return; }
  [ "$(http_status "$port" /replica)" = 200 ] && { echo replica; return; }
  [ -n "$(http_status "$port" /health)" ] && { echo starting; return; }
  echo down
}

# The node with ROLE now (none: return 1).
ha_node_with() {
  local n
  for n in "${ha_nodes[@]}"; do [ "$(ha_node_role "$n")" = "$1" ] && { echo "$n"; return 0; }; done
  return 1
}

ha_patronictl() { patronictl -c "$(ha_node_dir "${ha_nodes[0]}")/patroni.yml" "$@"; }

# -------------------------------------------------------------------- HAProxy

# TCP proxying (TLS passes through: PostgreSQL negotiates it inside the connection), health
# from Patroni's REST API every second. A node becomes a target after one good check (a new
# primary is reached about a second after its promotion) and stops being one after three bad
# ones, and then its sessions are cut (on-marked-down): Patroni stops a demoted primary's
# PostgreSQL itself, so this only matters when Patroni hangs, and three slow checks in a row
# on a loaded machine cost an outage amends rides through rather than a wrong write.
# Client and server timeouts are a day: amends keeps pool connections idle for long.
ha_write_haproxy() {
  local dir; dir="$(ha_dir)/haproxy"
  local servers="" n
  for n in "${ha_nodes[@]}"; do
    servers+="    server node-$n 127.0.0.1:$(ha_node_pg_port "$n") check port $(ha_node_rest_port "$n")"$'\n'
  done
  cat >"$dir/haproxy.cfg" <<CFG
$ha_config_marker
# Written by scripts/stack.sh: the HA database's entry points (docs/operations.md, "Running on Patroni and HAProxy").
global
    maxconn 2000
    log stdout format raw local0 notice
    # The runtime API (the chaos run takes a node out of routing with it, and cuts its sessions).
    stats socket $dir/admin.sock mode 600 level admin

defaults
    mode tcp
    log global
    retries 2
    option redispatch
    timeout connect 2s
    timeout client 24h
    timeout server 24h
    timeout check 2s
    default-server inter 1s fall 3 rise 1 on-marked-down shutdown-sessions

listen amends-primary
    bind 127.0.0.1:$pg_port
    option httpchk OPTIONS /primary
    http-check expect status 200
${servers}
listen amends-replica
    bind 127.0.0.1:$(ha_replica_port)
    option httpchk OPTIONS /replica
    http-check expect status 200
${servers}
listen stats
    bind 127.0.0.1:$(ha_stats_port)
    mode http
    stats enable
    stats uri /
    stats refresh 2s
CFG
}

ha_haproxy_up() {
  local dir; dir="$(ha_dir)/haproxy"
  mkdir -p "$dir"
  if ha_component_running "$dir"; then
    grep -qxF "$ha_config_marker" "$dir/haproxy.cfg" && return 0
    say "restarting HAProxy into stack config ha-$ha_config"
    ha_stop_component "$dir" 10
  fi
  ha_port_free "$pg_port" "the primary's entry point"
  ha_port_free "$(ha_replica_port)" "the replica's entry point"
  ha_port_free "$(ha_stats_port)" "HAProxy's statistics page"
  ha_write_haproxy
  haproxy -c -q -f "$dir/haproxy.cfg" >"$dir/check.log" 2>&1 || die "HAProxy refused its configuration; see $dir/check.log"
  [ -f "$dir/haproxy.log" ] && mv "$dir/haproxy.log" "$dir/haproxy.log.prev"
  # Its working directory names the stack: stack.sh of another checkout finds it (adopt_running_stack).
  ha_launch "$dir" haproxy.log haproxy -db -f "$dir/haproxy.cfg"
}

# The servers HAProxy routes a listener (amends-primary or amends-replica) to now, from its
# statistics (CSV: proxy name, server name, …, status in the 18th column).
ha_routes_to() {
  http_body "$(ha_stats_port)" '/;csv' | awk -F, -v px="$1" '$1 == px && $18 == "UP" && $2 != "BACKEND" && $2 != "FRONTEND" { print $2 }' | sort | paste -sd' '
}

# ------------------------------------------------------------------- commands

ha_up() {
  ha_ports_below_ephemeral
  ha_packages
  tls_make
  mkdir -p "$(ha_dir)"
  ha_etcd_up
  local n dir
  for n in "${ha_nodes[@]}"; do
    dir=$(ha_node_dir "$n")
    if ha_component_running "$dir"; then
      grep -qxF "$ha_config_marker" "$dir/patroni.yml" && continue
      say "restarting node $n into stack config ha-$ha_config (data kept)"
      ha_stop_component "$dir" 60
    fi
    ha_node_prepare "$n"
    ha_node_launch "$n"
  done
  ha_wait_members
  ha_dcs_apply
  ha_haproxy_up
  ha_wait_routes
  pg_roles ha_psql "$(ha_dir)/haproxy/haproxy.log"
}

# Up when one node is primary and the other its synchronous standby: before that a commit
# would be acknowledged with one copy.
ha_wait_members() {
  local i n
  for ((i = 0; i < start_wait_s * 2; i++)); do
    for n in "${ha_nodes[@]}"; do
      ha_component_running "$(ha_node_dir "$n")" || die "Patroni of node $n exited while starting; see $(ha_node_dir "$n")/patroni.log"
    done
    ha_node_with primary >/dev/null && ha_node_with sync-standby >/dev/null && return 0
    sleep 0.5
  done
  die "the HA database has no primary with a synchronous standby after ${start_wait_s}s; see $(ha_dir)/node-*/patroni.log"
}

# The settings of ha_dcs_settings reach a cluster made by an older stack.sh too.
ha_dcs_apply() {
  local applied; applied="$(ha_dir)/dcs.applied"
  [ "$(cat "$applied" 2>/dev/null)" = "$(ha_dcs_settings)" ] && return 0
  ha_dcs_settings | ha_patronictl edit-config --force --quiet --apply - >"$(ha_dir)/edit-config.log" 2>&1 \
    || die "patronictl edit-config could not set the HA database's settings; see $(ha_dir)/edit-config.log"
  ha_dcs_settings >"$applied"
}

# Up when HAProxy routes its primary port to the primary alone and its replica port to the
# standby alone: a freshly started HAProxy counts every server up until checks say otherwise.
ha_wait_routes() {
  local i primary standby
  for ((i = 0; i < start_wait_s * 2; i++)); do
    ha_component_running "$(ha_dir)/haproxy" || die "HAProxy exited while starting; see $(ha_dir)/haproxy/haproxy.log"
    if primary=$(ha_node_with primary) && standby=$(ha_node_with sync-standby) \
      && [ "$(ha_routes_to amends-primary)" = "node-$primary" ] && [ "$(ha_routes_to amends-replica)" = "node-$standby" ]; then
      return 0
    fi
    sleep 0.5
  done
  die "HAProxy does not route 127.0.0.1:$pg_port to the primary alone after ${start_wait_s}s; see $(ha_dir)/haproxy/haproxy.log"
}

# psql as the superuser through HAProxy's primary port (what pg_roles runs).
ha_psql() {
  PGPASSWORD=$ha_superuser_password "$(pg_client_bin)/psql" "host=127.0.0.1 port=$pg_port user=postgres dbname=postgres sslmode=disable" \
    -v ON_ERROR_STOP=1 -qtA "$@"
}

# HAProxy first (no new sessions), the standbys before the primary (a primary stopping first
# would hand its leadership to a standby about to stop), etcd last.
ha_down() {
  ha_running || return 0
  ha_stop_component "$(ha_dir)/haproxy" 10
  local n primary=""
  primary=$(ha_node_with primary) || primary=""
  for n in "${ha_nodes[@]}"; do [ "$n" = "$primary" ] || ha_node_stop "$n"; done
  [ -z "$primary" ] || ha_node_stop "$primary"
  ha_stop_component "$(ha_dir)/etcd" 30
}

# Patroni stops its PostgreSQL on SIGTERM; one that had to be killed leaves it to pg_ctl.
ha_node_stop() {
  local dir; dir=$(ha_node_dir "$1")
  ha_stop_component "$dir" 60
  [ -f "$dir/data/postmaster.pid" ] && as_pg "$(pg_bin)/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 \
    && as_pg "$(pg_bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
  return 0
}

# One line per node (`node-N ROLE 127.0.0.1:PORT`, ROLE primary, sync-standby, replica,
# starting or down), then where HAProxy's two ports lead (`primary-port 127.0.0.1:P node-N`).
ha_status() {
  local n
  for n in "${ha_nodes[@]}"; do echo "node-$n $(ha_node_role "$n") 127.0.0.1:$(ha_node_pg_port "$n")"; done
  echo "primary-port 127.0.0.1:$pg_port $(ha_routes_to amends-primary)"
  echo "replica-port 127.0.0.1:$(ha_replica_port) $(ha_routes_to amends-replica)"
}

# SIGKILL of the primary's postmaster (a crash of PostgreSQL; its Patroni lives on and hands
# the leadership over: primary_start_timeout 0). Prints `node-N PID`.
ha_kill_primary() {
  ha_running || die "the HA database is not running in $stack: start it with npm run up -- --database ha"
  local n pid
  n=$(ha_node_with primary) || die "the HA database has no primary now (bash scripts/stack.sh ha-status says what each node is)"
  pid=$(head -n 1 "$(ha_node_dir "$n")/data/postmaster.pid" 2>/dev/null) \
    || die "node $n's postmaster.pid is missing: its PostgreSQL is not running"
  kill -KILL "$pid" || die "could not SIGKILL node $n's postmaster (pid $pid)"
  say "SIGKILLed the postmaster of node $n (pid $pid), the primary"
  echo "node-$n $pid"
}

# A planned switchover to the synchronous standby (patronictl: it returns once the standby
# is promoted). Prints the new primary, `node-N`.
ha_switchover() {
  ha_running || die "the HA database is not running in $stack: start it with npm run up -- --database ha"
  local from to
  from=$(ha_node_with primary) || die "the HA database has no primary now (bash scripts/stack.sh ha-status says what each node is)"
  to=$(ha_node_with sync-standby) || die "the HA database has no synchronous standby to switch over to (bash scripts/stack.sh ha-status)"
  ha_patronictl switchover --leader "node-$from" --candidate "node-$to" --force >"$(ha_dir)/switchover.log" 2>&1 \
    || die "patronictl switchover from node $from to node $to failed; see $(ha_dir)/switchover.log"
  say "switched over from node $from to node $to"
  echo "node-$to"
}
