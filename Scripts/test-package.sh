#!/usr/bin/env bash
# Proves the Debian package on a clean Debian: makes a bare root with debootstrap (no Swift toolchain in it),
# installs the .deb there with apt-get (so its Depends are resolved from the Debian archive), and runs mediasync
# inside it: --version, --help, the installed files, and a podcast subscription and sync against a feed served from
# this machine on 127.0.0.1 (a chroot shares the network), checking the episode's bytes; then removes the package.
#
# Usage: Scripts/test-package.sh [--deb FILE] [--fresh] [--keep] [--with-recommends]
#   --deb FILE  the package to test (default: dist/mediasync_<version>_<arch>.deb, the newest there; Scripts/package.sh
#               makes one when there is none)
#   --fresh     run debootstrap again instead of unpacking the root cached by an earlier run
#   --keep      keep the root afterwards (its path is printed)
#   --with-recommends  install the Recommends too (mpv, ffmpeg: some 200 MB more); by default only the Depends
# Environment: DEBOOTSTRAP_CACHE, the folder of the cached root (default: .build-debootstrap in the repository).
#
# Needs root and the Debian archive; without either it says "skipped" and exits 0. Not part of Scripts/test.sh.
set -euo pipefail
export SCRIPT_NAME=test-package
SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/packaging.sh
. "$SCRIPT_DIR/lib/packaging.sh"
cd "$SCRIPT_DIR/.."
repo=$PWD

deb=""
fresh=0
keep=0
recommends=0
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) deb=${2:?--deb needs a file}; shift 2 ;;
        --fresh) fresh=1; shift ;;
        --keep) keep=1; shift ;;
        --with-recommends) recommends=1; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) pkg_die "unknown argument: $1 (see --help)" ;;
    esac
done

skip() {
    echo "$SCRIPT_NAME: skipped: $*"
    exit 0
}

started=$(pkg_now_ns)
[ "$(id -u)" -eq 0 ] || skip "debootstrap and chroot need root (run it with sudo)"
command -v dpkg >/dev/null 2>&1 || skip "this is not a Debian system (no dpkg)"

# The suite and the archive this machine installs from: the same mirror serves the clean root.
# shellcheck source=/dev/null
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || skip "/etc/os-release names no release codename"
arch=$(dpkg --print-architecture)
# `apt-cache policy` lists each source as " 500 URI SUITE/main ARCH Packages".
mapfile -t sources < <(apt-cache policy 2>/dev/null | awk -v suite="$suite" '
    $3 ~ "^" suite "(-updates|-security)?/main$" && $2 ~ /^https?:\/\// { split($3, s, "/"); print $2 " " s[1] }' |
    LC_ALL=C sort -u)
mirror=""
for source in "${sources[@]}"; do
    [ "${source#* }" = "$suite" ] && mirror=${source%% *}
done
mirror=${mirror:-http://deb.debian.org/debian}
[ ${#sources[@]} -gt 0 ] || sources=("$mirror $suite")

pkg_need curl=curl python3=python3 sha256sum=coreutils
curl -fsS --max-time 30 -o /dev/null "$mirror/dists/$suite/Release" ||
    skip "the Debian archive ($mirror) does not answer from here"
pkg_need debootstrap=debootstrap || skip "debootstrap is not installed and apt-get could not install it"

# The package: the one named, else the newest for this architecture in dist/, else a new one.
if [ -z "$deb" ]; then
    deb=$(find dist -maxdepth 1 -name "mediasync_*_${arch}.deb" -printf '%T@ %p\n' 2>/dev/null | sort -nr |
        awk 'NR == 1 { print $2 }')
    if [ -z "$deb" ]; then
        pkg_log "no package in dist/: making one with Scripts/package.sh"
        Scripts/package.sh >&2
        deb=$(find dist -maxdepth 1 -name "mediasync_*_${arch}.deb" -printf '%T@ %p\n' | sort -nr | awk 'NR == 1 { print $2 }')
    fi
fi
[ -f "$deb" ] || pkg_die "no package at $deb"
deb=$(readlink -f "$deb")
version=$(dpkg-deb -f "$deb" Version)
installed_kib=$(dpkg-deb -f "$deb" Installed-Size)
pkg_log "testing $deb"

# The root, and everything to undo on the way out: the loopback server, the mounts (before any removal, so that
# removing the root can never reach the host's /dev or /proc), the root itself.
root=$(mktemp -d /tmp/mediasync-debroot.XXXXXX)
served=$(mktemp -d /tmp/mediasync-served.XXXXXX)
server=""
mounts=()
cleanup() {
    local status=$? mount_point
    if [ -n "$server" ]; then { kill "$server" && wait "$server"; } 2>/dev/null || true; fi
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        mount_point=${mounts[i]}
        umount "$mount_point" 2>/dev/null || umount -l "$mount_point" 2>/dev/null ||
            pkg_log "could not unmount $mount_point"
    done
    rm -rf "$served"
    if awk -v r="$root/" 'index($2 "/", r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
        pkg_log "something is still mounted under $root: left in place"
    elif [ "$keep" = 1 ]; then
        pkg_log "the root stays in $root"
    else
        rm -rf "$root"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
check() { # check NAME COMMAND...: runs COMMAND, counts and prints the outcome
    local name=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok      $name"
    else
        failed=$((failed + 1))
        echo "FAILED  $name"
    fi
}
# Runs a command inside the root with a clean environment, as a fresh login would have it.
in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

# 1. A bare Debian: debootstrap's minimal variant, or the root an earlier run cached right after debootstrap.
cache=${DEBOOTSTRAP_CACHE:-$repo/.build-debootstrap}
tarball="$cache/$suite-minbase-$arch.tar.gz"
t0=$(pkg_now_ns)
if [ "$fresh" = 0 ] && [ -s "$tarball" ]; then
    how="unpacked from $tarball"
    tar -xzf "$tarball" -C "$root" --numeric-owner
else
    how="debootstrap --variant=minbase $suite $mirror"
    pkg_log "$how (a few minutes)"
    if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.debootstrap.log" 2>&1; then
        tail -20 "$root.debootstrap.log" >&2
        grep -q "Operation not permitted" "$root.debootstrap.log" &&
            skip "debootstrap is not permitted here (a container without the rights to make a root)"
        pkg_die "debootstrap failed (log: $root.debootstrap.log)"
    fi
    rm -f "$root.debootstrap.log"
    mkdir -p "$cache"
    tar -czf "$tarball.part" -C "$root" --numeric-owner . && mv "$tarball.part" "$tarball"
fi
debootstrap_ms=$(pkg_ms_since "$t0")
pkg_log "root ready in $(pkg_secs "$debootstrap_ms") ($how)"

# What apt needs inside: the host's name resolution, the same archive sources (the release, its updates and its
# security fixes, as on an installed Debian), /proc and /dev.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
for source in "${sources[@]}"; do echo "deb ${source% *} ${source#* } main"; done >"$root/etc/apt/sources.list"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount --bind /dev "$root/dev" && mounts+=("$root/dev")

check "the clean root has no Swift toolchain" \
    test -z "$(in_root sh -c 'command -v swift; command -v swiftc; find / -xdev -name "libswift*" 2>/dev/null')"

# 2. The package, through apt-get, which fetches its Depends from the archive.
cp "$deb" "$root/tmp/"
t0=$(pkg_now_ns)
install_log=$(mktemp /tmp/mediasync-apt.XXXXXX)
apt_recommends=--no-install-recommends
[ "$recommends" = 1 ] && apt_recommends=--install-recommends
if in_root apt-get update -q >"$install_log" 2>&1 &&
    in_root sh -c "cd /tmp && apt-get install -y $apt_recommends ./$(basename "$deb")" >>"$install_log" 2>&1; then
    install_status=0
else
    install_status=$?
fi
install_ms=$(pkg_ms_since "$t0")
grep -E '^(Need to get|After this operation|[0-9]+ upgraded)' "$install_log" | sed "s/^/$SCRIPT_NAME: apt: /" >&2 || true
[ "$install_status" = 0 ] || tail -30 "$install_log" >&2
rm -f "$install_log"
check "apt-get install ./$(basename "$deb") resolves its Depends and installs" test "$install_status" = 0
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
check "dpkg has mediasync $version installed" \
    test "$(in_root dpkg-query -W -f='${Status} ${Version}' mediasync 2>/dev/null)" = "install ok installed $version"
check "the binary loads every library from the root (ldd: nothing missing)" \
    sh -c "out=\$(chroot '$root' ldd /usr/bin/mediasync) && ! printf '%s\n' \"\$out\" | grep -qE 'not found|swift'"

# 3. The program and its files.
check "mediasync --version prints $version" test "$(in_root mediasync --version 2>&1)" = "$version"
check "mediasync --help prints the usage" sh -c "chroot '$root' /usr/bin/mediasync --help | grep -q '^USAGE: mediasync'"
for file in /usr/bin/mediasync /usr/share/man/man1/mediasync.1.gz /usr/share/bash-completion/completions/mediasync \
    /usr/share/zsh/vendor-completions/_mediasync /usr/share/fish/vendor_completions.d/mediasync.fish \
    /usr/share/doc/mediasync/examples/mediasync.service /usr/share/doc/mediasync/examples/mediasync.timer \
    /usr/share/doc/mediasync/copyright; do
    check "the package installs $file" test -s "$root$file"
done
check "the man page is a gzipped mediasync(1)" sh -c "gzip -dc '$root/usr/share/man/man1/mediasync.1.gz' | grep -q '^.Dt MEDIASYNC 1'"
check "the example service runs /usr/bin/mediasync" grep -q '^ExecStart=/usr/bin/mediasync sync' \
    "$root/usr/share/doc/mediasync/examples/mediasync.service"

# 4. A podcast sync against a feed on 127.0.0.1: one episode of 300,000 random bytes.
head -c 300000 /dev/urandom >"$served/episode-1.mp3"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$served" >"$served.log" 2>&1 &
server=$!
port=""
for _ in $(seq 50); do
    port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$served.log")
    [ -n "$port" ] && break
    sleep 0.1
done
rm -f "$served.log"
[ -n "$port" ] || pkg_die "python3 -m http.server did not start"
base="http://127.0.0.1:$port"
cat >"$served/feed.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Package test</title>
    <link>$base/</link>
    <description>A one-episode feed for the package test.</description>
    <item>
      <title>Episode 1</title>
      <guid isPermaLink="false">package-test-episode-1</guid>
      <pubDate>Mon, 01 Dec 2025 08:00:00 +0000</pubDate>
      <enclosure url="$base/episode-1.mp3" length="300000" type="audio/mpeg"/>
    </item>
  </channel>
</rss>
XML
check "mediasync podcast add $base/feed.xml --all" in_root mediasync podcast add "$base/feed.xml" --all --root /tmp/m
check "mediasync sync downloads the episode" in_root mediasync sync --root /tmp/m
mapfile -t episodes < <(find "$root/tmp/m/Downloads" -type f -name '*.mp3' 2>/dev/null)
check "one episode file in the mirror" test ${#episodes[@]} = 1
expected=$(sha256sum <"$served/episode-1.mp3" | cut -d' ' -f1)
got=none
[ ${#episodes[@]} = 1 ] && got=$(sha256sum <"${episodes[0]}" | cut -d' ' -f1)
check "its bytes are the served ones (sha256 ${expected:0:16}…)" test "$got" = "$expected"
check "mediasync verify finds the mirror sound" in_root mediasync verify --root /tmp/m
{ kill "$server" && wait "$server"; } 2>/dev/null || true
server=""

# 5. Removal leaves none of the package's files.
check "apt-get purge mediasync removes it and its files" \
    sh -c "chroot '$root' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        apt-get purge -y -q mediasync >/dev/null 2>&1 && [ ! -e '$root/usr/bin/mediasync' ] \
        && [ ! -e '$root/usr/share/doc/mediasync' ] && [ ! -e '$root/usr/share/man/man1/mediasync.1.gz' ]"

total_ms=$(pkg_ms_since "$started")
echo "package: $deb"
echo "package size: $(pkg_human "$(stat -c %s "$deb")")"
echo "installed size: $(pkg_human $((installed_kib * 1024))) ($installed_kib KiB)"
echo "debootstrap time: $(pkg_secs "$debootstrap_ms") ($how)"
echo "install time: $(pkg_secs "$install_ms") (apt-get update and install, with the Depends)"
echo "total time: $(pkg_secs "$total_ms")"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
