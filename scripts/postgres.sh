#!/usr/bin/env bash
# A PostgreSQL server for sqlmailbox's tests, started on a temporary directory
# and a free port on 127.0.0.1, and stopped when its owner exits, however it
# exits (a watchdog process waits for the owner's death, then stops the server
# and deletes the directory).
#
# Sourced (scripts/test.sh does: `source scripts/postgres.sh`), it starts the
# server unless PG_DSN already names one, exports PG_DSN and PG_BIN (the
# directory of initdb and pg_ctl, for tests that start servers of their own),
# and the sourcing shell is the owner. Run as `scripts/postgres.sh start
# [OWNER_PID]`, it prints the export lines instead, for
# `eval "$(scripts/postgres.sh start $$)"`: the process OWNER_PID (the
# calling shell, $$) is the owner; without it the parent process is, which
# in a command substitution is a subshell that exits at once.
#
# The binaries: PG_BIN if set, else pg_config's or Debian's
# /usr/lib/postgresql/<version>/bin; when there are none it installs Debian's
# postgresql package (apt-get, as root). PostgreSQL refuses to run as root, so
# as root the server runs as the postgres user the package creates. The
# server is for tests: fsync off (a killed server loses nothing, a crashed
# machine would; PG_FSYNC=on for benchmarks), trust authentication, user
# sqsloop, database postgres; PG_SERVER_OPTS adds server options ("-c
# shared_preload_libraries=pg_stat_statements").

pg__log() { echo "postgres.sh: $*" >&2; }

# pg__close_fds closes every file descriptor above 2 of the current
# (sub)shell, so that a process started from it holds no pipe of its caller
# open (scripts/test.sh's SQS server stops when its pipe closes).
pg__close_fds() {
  local fd
  for fd in $(ls "/proc/$BASHPID/fd" 2>/dev/null); do
    if [ "$fd" -gt 2 ]; then
      eval "exec $fd>&-" 2>/dev/null || true
    fi
  done
}

# pg__find_bin prints the directory holding initdb and pg_ctl, if any.
pg__find_bin() {
  if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then
    echo "$PG_BIN"
    return 0
  fi
  if command -v pg_config >/dev/null 2>&1; then
    local d
    d=$(pg_config --bindir 2>/dev/null)
    if [ -x "$d/initdb" ]; then
      echo "$d"
      return 0
    fi
  fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

# pg__install installs Debian's postgresql package.
pg__install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    pg__log "no PostgreSQL binaries (initdb, pg_ctl) and no apt-get as root to install them; install PostgreSQL or set PG_DSN"
    return 1
  fi
  pg__log "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends postgresql >&2
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

# pg__start starts a server owned by process $1 and sets PG_DSN and PG_BIN.
pg__start() {
  local owner=$1 bin dir port as=() try fsync=${PG_FSYNC:-off}
  bin=$(pg__find_bin) || { pg__install && bin=$(pg__find_bin); } || return 1
  dir=$(mktemp -d "${TMPDIR:-/tmp}/sqsloop-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
    as=(runuser -u postgres --)
  fi
  if ! "${as[@]}" "$bin/initdb" -D "$dir/data" -U sqsloop --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1; then
    pg__log "initdb failed:"; cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    return 1
  fi
  for try in 1 2 3 4 5; do
    port=$(pg__free_port) || break
    if (pg__close_fds; exec "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $dir -c fsync=$fsync -c full_page_writes=$fsync -c max_connections=300 ${PG_SERVER_OPTS:-}" start) </dev/null >/dev/null; then
      break
    fi
    port=
  done
  if [ -z "$port" ]; then
    pg__log "the server did not start:"; tail -20 "$dir/server.log" >&2
    rm -rf "$dir"
    return 1
  fi
  # The watchdog: stops the server once the owner is gone, however it went.
  (
    trap '' INT TERM HUP
    pg__close_fds
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

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  # Sourced: the sourcing shell owns the server.
  if [ -z "${PG_DSN:-}" ]; then
    pg__start $$ || return 1
    export PG_DSN PG_BIN
  else
    PG_BIN=$(pg__find_bin || true)
    export PG_BIN
    pg__log "using PG_DSN"
  fi
else
  set -euo pipefail
  case "${1:-}" in
    start)
      # The owner: the PID given (the caller's $$), else the parent process
      # (not the caller's shell when it runs this in a command substitution).
      pg__start "${2:-$PPID}"
      printf 'export PG_DSN=%q PG_BIN=%q\n' "$PG_DSN" "$PG_BIN"
      ;;
    *)
      echo "usage: scripts/postgres.sh start [OWNER_PID]   (prints export lines: eval \"\$(scripts/postgres.sh start \$\$)\")" >&2
      echo "       source scripts/postgres.sh  (exports PG_DSN and PG_BIN)" >&2
      exit 2
      ;;
  esac
fi
