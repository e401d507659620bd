# Scripts/lib/bench-common.sh — the preamble the benchmark scripts share. Source it; it defines functions only.
#
#   bench_log MSG...                 a line on stderr, prefixed with $BENCH_NAME
#   bench_need TOOL...               installs the Debian packages of missing tools (apt, as root or with sudo)
#   bench_binaries SCRATCH           builds the release mediasync and mediasync-test-server (once) and sets $bin, $ms;
#                                    MEDIASYNC_BIN_DIR set: uses the binaries there instead
#   bench_scratch                    a scratch folder in $work, removed on exit unless BENCH_KEEP=1; sets
#                                    MEDIASYNC_ROOT and MEDIASYNC_CONFIG_DIR inside it
#   bench_server ARGS...             starts the test server on 127.0.0.1 with ARGS; sets $server (pid), $base, $user,
#                                    $password
#   bench_login_and_select_libraries signs in and selects the movies and tvshows views
#   bench_now_ns, bench_ms_since T0, bench_median N..., bench_secs MS
#
# The caller sets -euo pipefail and BENCH_NAME.

bench_log() { echo "${BENCH_NAME:-bench}: $*" >&2; }

bench_need() {
    local missing=() tool package
    for tool in "$@"; do
        case "$tool" in
            time) [ -x /usr/bin/time ] || missing+=(time) ;;
            *) command -v "$tool" >/dev/null 2>&1 || missing+=("$tool") ;;
        esac
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    bench_log "installing ${missing[*]}"
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y "${missing[@]}" >&2 || { apt-get update >&2 && apt-get install -y "${missing[@]}" >&2; }
    else
        sudo apt-get install -y "${missing[@]}" >&2
    fi
}

bench_binaries() {
    local scratch=$1
    if [ -n "${MEDIASYNC_BIN_DIR:-}" ]; then
        bin=$MEDIASYNC_BIN_DIR
    else
        bin=$(swift build -c release --scratch-path "$scratch" --show-bin-path)
        if [ ! -x "$bin/mediasync" ] || [ ! -x "$bin/mediasync-test-server" ] || [ "${BENCH_REBUILD:-1}" = 1 ]; then
            bench_log "building the release binaries ($scratch)"
            swift build -c release --scratch-path "$scratch" --product mediasync >&2
            swift build -c release --scratch-path "$scratch" --product mediasync-test-server >&2
        fi
    fi
    ms="$bin/mediasync"
}

bench_cleanup() {
    if [ -n "${server:-}" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    if [ "${BENCH_KEEP:-0}" = 1 ]; then bench_log "kept $work"; else rm -rf "$work"; fi
}

bench_scratch() {
    work=$(mktemp -d "/tmp/${BENCH_NAME:-bench}.XXXXXX")
    server=""
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    export MEDIASYNC_ROOT="$work/mirror" MEDIASYNC_CONFIG_DIR="$work/config"
}

bench_server() {
    "$bin/mediasync-test-server" "$@" >"$work/server.out" 2>"$work/server.err" &
    server=$!
    local _
    for _ in $(seq 1 300); do grep -q '^listening on ' "$work/server.out" && break; sleep 0.1; done
    base=$(sed -n 's/^listening on \(http[^ ]*\).*/\1/p' "$work/server.out")
    [ -n "$base" ] || { cat "$work/server.out" "$work/server.err" >&2; bench_log "the test server did not start"; exit 1; }
    case "$base" in http://127.0.0.1:*) ;; *) bench_log "server not on 127.0.0.1: $base"; exit 1 ;; esac
    for _ in $(seq 1 50); do grep -q '^user ' "$work/server.err" && break; sleep 0.1; done
    user=$(sed -n 's|^user \([^/]*\)/\([^,]*\),.*|\1|p' "$work/server.err")
    password=$(sed -n 's|^user \([^/]*\)/\([^,]*\),.*|\2|p' "$work/server.err")
}

bench_login_and_select_libraries() {
    printf '%s\n' "$password" | timeout 60 "$ms" login "$base" --username "$user" --password-stdin >&2
    timeout 60 "$ms" browse --json >"$work/views.json"
    local movies_view shows_view
    read -r movies_view shows_view < <(python3 -c '
import json, sys
views = json.load(open(sys.argv[1]))
pick = lambda kind: next(v["id"] for v in views if v.get("collectionType") == kind)
print(pick("movies"), pick("tvshows"))' "$work/views.json")
    timeout 60 "$ms" select library "$movies_view" >&2
    timeout 60 "$ms" select library "$shows_view" >&2
}

bench_now_ns() { date +%s%N; }
bench_ms_since() { echo $(( ($(bench_now_ns) - $1) / 1000000 )); }
bench_median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
bench_secs() { awk -v ms="$1" 'BEGIN {printf "%.2f", ms / 1000}'; }
