# What this machine has, for the other scripts, which source this file:
# running a command as root (as root, or with sudo), installing Debian
# packages with apt-get, and whether a Docker engine may answer.

# machine_sudo prints the prefix that runs a command as root: nothing as
# root; "sudo" when sudo works without a password, or may ask for one on
# this terminal. It fails when there is no way.
machine_sudo() {
  if [ "$(id -u)" = 0 ]; then
    return 0
  fi
  command -v sudo >/dev/null 2>&1 || return 1
  if sudo -n true 2>/dev/null || { [ -t 0 ] && [ -t 2 ]; }; then
    echo sudo
    return 0
  fi
  return 1
}

# machine_can_apt reports whether packages can be installed with apt-get
# (Debian, Ubuntu), as root or with sudo.
machine_can_apt() {
  command -v apt-get >/dev/null 2>&1 && machine_sudo >/dev/null
}

# machine_apt_install installs Debian packages with apt-get, as root or
# with sudo; its output goes to standard error.
machine_apt_install() {
  local sudo
  sudo=$(machine_sudo) || return 1
  $sudo apt-get update -qq >&2 &&
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# machine_docker reports whether a Docker engine may answer: DOCKER_HOST is
# set or one of the usual sockets exists (Docker, rootless Docker, Docker
# Desktop, Colima). testcontainers-go has the last word when it connects.
machine_docker() {
  [ -n "${DOCKER_HOST:-}" ] && return 0
  local s
  for s in /var/run/docker.sock "${XDG_RUNTIME_DIR:-/nonexistent}/docker.sock" \
    "$HOME/.docker/run/docker.sock" "$HOME/.colima/default/docker.sock"; do
    [ -S "$s" ] && return 0
  done
  return 1
}

# machine_close_fds closes every file descriptor above 2 of the current
# (sub)shell, so that a process started from it holds no pipe of its
# caller open (scripts/test.sh's SQS server stops when its pipe closes).
machine_close_fds() {
  local fd dir=/proc/$BASHPID/fd
  [ -d "$dir" ] || dir=/dev/fd
  for fd in $(ls "$dir" 2>/dev/null); do
    if [ "$fd" -gt 2 ]; then
      eval "exec $fd>&-" 2>/dev/null || true
    fi
  done
}
