#!/bin/sh
# deps.sh -- install the Debian packages tally needs, only those missing.
# Usage: scripts/deps.sh [run|test|scale|bench|lint]
# The PostgreSQL server only for DB=postgres (make run DB=postgres), the
# tests that run on it (scale) and the benchmarks; every build links libpq.
# Quick when everything is present: one dpkg query, no network.
set -eu
what=${1:-run}
pkgs="make gcc pkg-config libc6-dev nginx-light redis-server redis-tools sqlite3
 libfcgi-dev libjemalloc-dev libhiredis-dev libsqlite3-dev libsodium-dev libjansson-dev libpq-dev gettext-base curl
 libcurl4-openssl-dev libnginx-mod-nchan"
[ "$what" = scale ] && what=test && pkgs="$pkgs postgresql"
[ "$what" = run ] && [ "${DB:-}" = postgres ] && pkgs="$pkgs postgresql"
[ "$what" = test ] && pkgs="$pkgs libcmocka-dev perl chromium fonts-dejavu-core clang-14 libclang-rt-14-dev libfcgi-bin"
[ "$what" = bench ] && pkgs="$pkgs wrk redis-tools postgresql"
[ "$what" = lint ] && pkgs="$pkgs perl cppcheck clang-tools"
missing=""
for p in $pkgs; do
    case $p in
    nginx-light) # any nginx flavour will do
        dpkg-query -W -f='${Status}\n' nginx nginx-light nginx-core 2>/dev/null |
            grep -q 'install ok installed' || missing="$missing nginx" ;;
    *)  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
            grep -q 'install ok installed' || missing="$missing $p" ;;
    esac
done
if { [ "$what" = test ] || [ "$what" = bench ]; } && ! command -v node >/dev/null 2>&1; then
    missing="$missing nodejs npm"
fi
if [ -n "$missing" ]; then
    echo "deps: installing$missing"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
# The nchan module registers nginx's built-in client body directory
# (/var/lib/nginx/body on Debian) in every nginx that loads it, and no
# directive moves it ("duplicate"): an nginx that runs as a user, as
# tally's does, cannot make it and does not start without it.  Debian's
# nginx makes it on its first start as root, which a machine without
# services never had; made here as that start would.
body=$(nginx -V 2>&1 | sed -n 's/.*--http-client-body-temp-path=\([^ ]*\).*/\1/p')
if [ -n "$body" ] && [ ! -d "$body" ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO install -d -m 0700 "$body"
    $SUDO chown www-data "$body" 2>/dev/null || true
fi
if [ "$what" = test ] && { [ ! -d tests/node_modules/playwright-core ] || [ ! -d tests/node_modules/@axe-core/playwright ]; }; then
    (cd tests && npm ci --no-audit --no-fund --loglevel=error)
fi
exit 0
