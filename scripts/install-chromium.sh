#!/usr/bin/env bash
# The browser the lease page's browser test (integration/leasepage_browser_test.go)
# drives headless: prints its path, installing Debian's chromium with apt-get
# (as root, or with sudo) when the machine has no Chromium or Chrome and
# apt-get can install one. Elsewhere it says how to get one and fails.
#
# CHROMIUM names the browser to use; else chromium, chromium-browser,
# google-chrome, google-chrome-stable or chrome on the PATH; else the macOS
# applications (/Applications or ~/Applications: Chromium, Google Chrome).
# scripts/test.sh sources this file and calls chromium_find and
# chromium_install before the first test.

source "$(dirname "${BASH_SOURCE[0]}")/machine.sh"

# CHROMIUM_HOW_TO_GET says how to get a browser on a machine where this
# script cannot install one.
CHROMIUM_HOW_TO_GET="install Chromium or Google Chrome (apt-get install chromium, dnf install chromium, brew install --cask chromium) or set CHROMIUM to a browser's path"

# chromium_find prints the path of the browser to use, if any.
chromium_find() {
  if [ -n "${CHROMIUM:-}" ]; then
    if [ -x "$CHROMIUM" ]; then
      echo "$CHROMIUM"
      return 0
    fi
    echo "install-chromium.sh: CHROMIUM=$CHROMIUM is not an executable file" >&2
    return 1
  fi
  local name app
  for name in chromium chromium-browser google-chrome google-chrome-stable chrome; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  for app in {/Applications,"$HOME/Applications"}/{"Chromium.app/Contents/MacOS/Chromium","Google Chrome.app/Contents/MacOS/Google Chrome"}; do
    if [ -x "$app" ]; then
      echo "$app"
      return 0
    fi
  done
  return 1
}

# chromium_install installs Debian's chromium with apt-get and prints its
# path; it fails, saying why, where apt-get cannot be used.
chromium_install() {
  if ! machine_can_apt; then
    echo "install-chromium.sh: no Chromium, and no apt-get to run as root or with sudo: $CHROMIUM_HOW_TO_GET" >&2
    return 1
  fi
  echo "install-chromium.sh: installing Debian's chromium (apt-get)" >&2
  machine_apt_install chromium && chromium_find
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  chromium_find || chromium_install
fi
