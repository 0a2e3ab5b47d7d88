#!/bin/sh
# Installs the Debian 12 packages memlens needs when they are missing:
# with apt-get when run as root, otherwise it prints the exact command.
#   tools/deps.sh          build + test dependencies
#   tools/deps.sh --torch  also Debian's python3-torch (1.13, CPU) for
#                          tools/memlens-export-graph.py and the tests that
#                          export PyTorch models (they skip without it)
set -e
PKGS="build-essential meson ninja-build pkg-config libcjson-dev libyajl-dev libglpk-dev
libgtk-4-dev libglib2.0-dev-bin libcairo2-dev libpango1.0-dev zlib1g-dev libsqlite3-dev xvfb xauth
clang valgrind poppler-utils xdotool python3 nodejs chromium"
for a in "$@"; do
  case $a in
    --torch) PKGS="$PKGS python3-torch" ;;
    *) echo "usage: tools/deps.sh [--torch]" >&2; exit 2 ;;
  esac
done
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "memlens: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "memlens: missing Debian packages. Run:" >&2
  echo "  sudo apt-get install -y$missing" >&2
  exit 1
fi
