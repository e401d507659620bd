# shellcheck shell=bash
# Scripts/lib/packaging.sh — what Scripts/package.sh and Scripts/test-package.sh share. Source it after setting
# SCRIPT_NAME; it defines functions only.
#
#   pkg_log MSG...                one line on stderr, prefixed with $SCRIPT_NAME
#   pkg_die MSG...                pkg_log, then exit 1
#   pkg_need TOOL[=PACKAGE]...    installs the Debian package of each missing tool (PACKAGE defaults to TOOL), with
#                                 apt-get as root or through sudo
#   pkg_human BYTES               "12.3 MB" (powers of 1000, as dpkg and apt print sizes) and the exact byte count
#   pkg_ms_since T0_NS, pkg_now_ns, pkg_secs MS   wall-clock timing
#
# The caller sets -euo pipefail.

pkg_log() { echo "${SCRIPT_NAME:-package}: $*" >&2; }
pkg_die() {
    pkg_log "$@"
    exit 1
}

pkg_need() {
    local missing=() spec tool package
    for spec in "$@"; do
        tool=${spec%%=*}
        package=${spec#*=}
        command -v "$tool" >/dev/null 2>&1 || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    pkg_log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

pkg_human() {
    awk -v b="$1" 'BEGIN {
        if (b >= 1e9) printf "%.2f GB (%d bytes)", b / 1e9, b
        else if (b >= 1e6) printf "%.1f MB (%d bytes)", b / 1e6, b
        else if (b >= 1e3) printf "%.1f kB (%d bytes)", b / 1e3, b
        else printf "%d bytes", b
    }'
}

pkg_now_ns() { date +%s%N; }
pkg_ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
pkg_secs() { awk -v ms="$1" 'BEGIN { printf "%.1f s", ms / 1000 }'; }
