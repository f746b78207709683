#!/usr/bin/env bash
# Installs Debian's chromium, which the lease page's browser test
# (integration/leasepage_browser_test.go) drives headless, when no Chromium
# is on the PATH; prints the path of the browser to use. It needs root (as
# CI and the developers' machines are) or sudo. CHROMIUM names a browser to
# use instead, and skips the install.
set -euo pipefail

find_chromium() {
  if [ -n "${CHROMIUM:-}" ] && [ -x "$CHROMIUM" ]; then
    echo "$CHROMIUM"
    return 0
  fi
  for name in chromium chromium-browser google-chrome; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

if find_chromium; then
  exit 0
fi
sudo=
if [ "$(id -u)" != 0 ]; then
  sudo=sudo
fi
echo "install-chromium.sh: installing Debian's chromium (apt-get)" >&2
$sudo apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
find_chromium
