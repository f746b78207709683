#!/usr/bin/env bash
# A PostgreSQL server for sqlmailbox's tests, stopped when its owner process
# exits, however it exits.
#
#   eval "$(scripts/postgres.sh start $$)"   # exports PG_DSN and PG_BIN; the shell $$ owns the server
#   scripts/postgres.sh check                # says what it would use, or what is missing
#
# Without OWNER_PID the owner is the parent process, which in a command
# substitution is a subshell that exits at once. scripts/test.sh sources
# this file and calls pg_plan, then pg_start "$$".
#
# What it uses, first that the machine has:
#   - the binaries (initdb, pg_ctl) in PG_BIN, of the pg_ctl on the PATH, of
#     pg_config, of Homebrew (/opt/homebrew/opt/postgresql@*/bin,
#     /usr/local/opt/postgresql@*/bin), of Debian (/usr/lib/postgresql/*/bin)
#     or of the PGDG packages (/usr/pgsql-*/bin): a server on a temporary
#     directory and a free port on 127.0.0.1, stopped by a watchdog once the
#     owner is gone; as root it runs as the postgres user (PostgreSQL
#     refuses to run as root);
#   - else Debian's postgresql package, installed with apt-get (as root, or
#     with sudo), and the above;
#   - else a container (integration/cmd/pgserver: testcontainers-go's
#     PostgreSQL module) when a Docker engine answers; it then sets no PG_BIN,
#     and the tests that start servers of their own skip.
# The server is for tests: fsync off (a killed server loses nothing, a
# crashed machine would; PG_FSYNC=on for benchmarks), trust authentication,
# user sqsloop, database postgres, 300 connections; PG_SERVER_OPTS adds
# server options ("-c shared_preload_libraries=pg_stat_statements").

source "$(dirname "${BASH_SOURCE[0]}")/machine.sh"

pg__log() { echo "postgres.sh: $*" >&2; }

# pg__find_bin prints the directory holding initdb, pg_ctl and postgres, if
# any.
pg__find_bin() {
  local d candidates=()
  [ -n "${PG_BIN:-}" ] && candidates+=("$PG_BIN")
  if command -v pg_ctl >/dev/null 2>&1; then
    candidates+=("$(dirname "$(command -v pg_ctl)")")
  fi
  if command -v pg_config >/dev/null 2>&1; then
    candidates+=("$(pg_config --bindir 2>/dev/null)")
  fi
  # The newest version first.
  while IFS= read -r d; do
    candidates+=("$d")
  done < <(ls -d /opt/homebrew/opt/postgresql@*/bin /usr/local/opt/postgresql@*/bin \
    /opt/homebrew/opt/postgresql/bin /usr/local/opt/postgresql/bin \
    /usr/lib/postgresql/*/bin /usr/pgsql-*/bin 2>/dev/null | sort -t@ -k2 -V -r)
  for d in "${candidates[@]}"; do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

# pg_plan sets PG_HOW to how pg_start will get a server: "dsn" (PG_DSN),
# "bin" (the binaries in PG_BIN_FOUND), "install" (apt-get), "docker" (a
# container), or "" (no way); and PG_MISSING to one line per thing the
# tests need that the machine lacks, saying how to get it.
pg_plan() {
  PG_HOW= PG_MISSING=()
  PG_BIN_FOUND=$(pg__find_bin || true)
  local how_bin="put PostgreSQL's bin directory on the PATH or in PG_BIN (apt-get install postgresql, dnf install postgresql-server, brew install postgresql@16)"
  if [ -n "$PG_BIN_FOUND" ] && [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    PG_MISSING+=("no postgres user for the binaries in $PG_BIN_FOUND (PostgreSQL refuses to run as root): create one (useradd --system postgres) or run as another user")
    PG_BIN_FOUND=
  fi
  if [ -n "${PG_DSN:-}" ]; then
    PG_HOW=dsn
  elif [ -n "$PG_BIN_FOUND" ]; then
    PG_HOW=bin
  elif machine_can_apt; then
    PG_HOW=install
  elif machine_docker; then
    PG_HOW=docker
  else
    PG_MISSING+=("no PostgreSQL (sqlmailbox/postgres's tests and the end-to-end tests on it skip): set PG_DSN, $how_bin, or start a Docker engine")
    return 0
  fi
  case $PG_HOW in
    dsn | docker)
      if [ -z "$PG_BIN_FOUND" ]; then
        PG_MISSING+=("no PostgreSQL binaries (initdb, pg_ctl: the tests that crash a server of their own skip): $how_bin")
      fi
      ;;
  esac
}

# pg__start_local starts a server with the binaries in $2, owned by process
# $1, and sets PG_DSN and PG_BIN.
pg__start_local() {
  local owner=$1 bin=$2 dir port as=() try fsync=${PG_FSYNC:-off}
  dir=$(mktemp -d "${TMPDIR:-/tmp}/sqsloop-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
    as=(runuser -u postgres --)
  fi
  if ! "${as[@]}" "$bin/initdb" -D "$dir/data" -U sqsloop --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1; then
    pg__log "initdb failed:"
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    return 1
  fi
  for try in 1 2 3 4 5; do
    port=$(pg__free_port) || break
    if (machine_close_fds; exec "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $dir -c fsync=$fsync -c full_page_writes=$fsync -c max_connections=300 ${PG_SERVER_OPTS:-}" start) </dev/null >/dev/null; then
      break
    fi
    port=
  done
  if [ -z "$port" ]; then
    pg__log "the server did not start:"
    tail -20 "$dir/server.log" >&2
    rm -rf "$dir"
    return 1
  fi
  # The watchdog: stops the server once the owner is gone, however it went.
  (
    trap '' INT TERM HUP
    machine_close_fds
    while kill -0 "$owner" 2>/dev/null; do sleep 0.5; done
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
      "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1
    rm -rf "$dir"
  ) </dev/null >/dev/null 2>&1 &
  disown 2>/dev/null || true
  PG_DSN="postgres://sqsloop@127.0.0.1:$port/postgres?sslmode=disable"
  PG_BIN=$bin
  pg__log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') at 127.0.0.1:$port (data in $dir), stopped when process $owner exits"
}

# pg__free_port prints a port on 127.0.0.1 nothing listens on.
pg__free_port() {
  local port i
  for i in $(seq 50); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# pg__start_docker starts a server in a container (integration/cmd/pgserver),
# owned by process $1, and sets PG_DSN (and PG_BIN empty).
pg__start_docker() {
  local owner=$1 dir pid i
  dir=$(mktemp -d "${TMPDIR:-/tmp}/sqsloop-pgserver.XXXXXX")
  pg__log "no PostgreSQL binaries: starting one in a container (integration/cmd/pgserver)"
  if ! (cd "$(dirname "${BASH_SOURCE[0]}")/../integration" && go build -o "$dir/pgserver" ./cmd/pgserver); then
    rm -rf "$dir"
    return 1
  fi
  (machine_close_fds; exec "$dir/pgserver" -owner "$owner") </dev/null >"$dir/out" 2>"$dir/log" &
  pid=$!
  disown 2>/dev/null || true
  # Its image may have to be pulled first: up to pgserver's own 5 minutes.
  for i in $(seq 3200); do
    PG_DSN=$(sed -n 's/^PG_DSN=//p' "$dir/out")
    if [ -n "$PG_DSN" ] || ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  if [ -z "$PG_DSN" ]; then
    pg__log "no server in a container:"
    cat "$dir/log" >&2
    kill "$pid" 2>/dev/null || true
    rm -rf "$dir"
    return 1
  fi
  # pgserver removes its container once the owner is gone; then its files go.
  (
    trap '' INT TERM HUP
    machine_close_fds
    while kill -0 "$pid" 2>/dev/null; do sleep 0.5; done
    rm -rf "$dir"
  ) </dev/null >/dev/null 2>&1 &
  disown 2>/dev/null || true
  PG_BIN=
  pg__log "PostgreSQL in a container ($(sed -n 's/^pgserver: //p' "$dir/log" | tail -1)), removed when process $owner exits"
}

# pg_start gets the server pg_plan chose (calling it if it has not run),
# owned by process $1: it sets PG_DSN and PG_BIN (the binaries, if any, for
# tests that start servers of their own).
pg_start() {
  local owner=$1
  [ -n "${PG_HOW+set}" ] || pg_plan
  case $PG_HOW in
    dsn)
      PG_BIN=$PG_BIN_FOUND
      pg__log "using PG_DSN"
      ;;
    bin) pg__start_local "$owner" "$PG_BIN_FOUND" ;;
    install)
      pg__log "installing Debian's postgresql package (apt-get)"
      machine_apt_install postgresql || return 1
      PG_BIN_FOUND=$(pg__find_bin) || { pg__log "apt-get installed no initdb and pg_ctl"; return 1; }
      pg__start_local "$owner" "$PG_BIN_FOUND"
      ;;
    docker) pg__start_docker "$owner" ;;
    *)
      printf 'postgres.sh: %s\n' "${PG_MISSING[@]}" >&2
      return 1
      ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    start)
      # The owner: the PID given (the caller's $$), else the parent process
      # (not the caller's shell when it runs this in a command substitution).
      pg_start "${2:-$PPID}"
      printf 'export PG_DSN=%q PG_BIN=%q\n' "$PG_DSN" "$PG_BIN"
      ;;
    check)
      pg_plan
      case $PG_HOW in
        dsn) echo "PG_DSN" ;;
        bin) echo "the binaries in $PG_BIN_FOUND" ;;
        install) echo "Debian's postgresql package, to be installed with apt-get" ;;
        docker) echo "a container (a Docker engine seems to answer)" ;;
      esac
      if [ ${#PG_MISSING[@]} -gt 0 ]; then
        printf 'postgres.sh: %s\n' "${PG_MISSING[@]}" >&2
        [ -n "$PG_HOW" ]
      fi
      ;;
    *)
      echo "usage: scripts/postgres.sh start [OWNER_PID]   (prints export lines: eval \"\$(scripts/postgres.sh start \$\$)\")" >&2
      echo "       scripts/postgres.sh check              (what it would use, or what is missing)" >&2
      exit 2
      ;;
  esac
fi
