# Scripts/lib/common.sh — the preamble the scripts share. Source it after setting SCRIPT_NAME; it defines functions
# only (and SCRIPT_DIR/REPO_DIR when the caller did not).
#
#   ms_log MSG...                 one line on stderr, prefixed with $SCRIPT_NAME
#   ms_need TOOL...               installs the Debian packages of missing tools (apt, as root or with sudo)
#   ms_release_binaries SCRATCH [PRODUCT...]   builds the release mediasync and mediasync-test-server (and the
#                   products named); sets $bin and $ms.
#                                 MEDIASYNC_BIN_DIR set: uses the binaries there instead
#   ms_prepare_release_run SCRATCH   python3, the build dependencies and ms_release_binaries SCRATCH
#   ms_bench_defaults TOOL...     the library benchmarks' settings: ms_library_defaults, SWIFT_SCRATCH (default
#                                 <repo>/.build-benchsync, the release build they share); then ms_need TOOL...
#   ms_scratch KEEP               a scratch folder $work, removed on exit unless KEEP is 1; a started test server is
#                                 stopped and tmpfs mounts under $work/disk-* are unmounted first
#   ms_mirror_scratch             ms_scratch $BENCH_KEEP with an empty mirror in it: exports MEDIASYNC_ROOT
#                                 ($work/mirror) and MEDIASYNC_CONFIG_DIR ($work/config)
#   ms_start_server ARGS...       the test server on 127.0.0.1 with ARGS; sets $server (pid), $base, $user, $password,
#                                 $token
#   ms_start_library_server ARGS...  ms_start_server with the generated library of ms_library_defaults ($MOVIES,
#                                 $SERIES, $MEDIA_SIZE; music when $MUSIC_ARTISTS > 0: that many artists of
#                                 $ALBUMS_PER_ARTIST albums of $TRACKS_PER_ALBUM tracks, without the extras) and
#                                 ARGS; sets $items (a series is 9: itself, 2 seasons, 6 episodes; a track is 1)
#   ms_login_and_select_libraries signs in ($MEDIASYNC_ROOT, $MEDIASYNC_CONFIG_DIR) and selects the movies and tvshows
#                                 views, and the music view when there is music
#   ms_select_all_movies_and_series  signs in and selects every movie (all versions) and every series
#   ms_test_rows NAME TSV_ENV FILTER  builds the tests (unless SKIP_BUILD=1), runs the FILTER suites with TSV_ENV
#                                 naming a file they append rows to; sets $rows, $status and $work/test.log
#   ms_failing_expectations       prints the failing expectations of $work/test.log when $status is not 0
#   ms_size_options ARGS...       sets MOVIES, SERIES, MEDIA_SIZE, ROUNDS, FEEDS and the music's size from --movies N,
#                                 --series N, --media-size BYTES, --rounds N, --feeds N, --music-artists N,
#                                 --albums-per-artist N and --tracks-per-album N (call it before the defaults)
#   ms_now_ns, ms_ms_since T0, ms_median N..., ms_secs MS
#
# The caller sets -euo pipefail.

: "${SCRIPT_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${REPO_DIR:=$(cd "$SCRIPT_DIR/.." && pwd)}"

# The generated library's size, as the benchmarks default it (10,004 items: 5,000 movies and 556 series of 1 series
# + 2 seasons + 6 episodes; media of 2,000 bytes), and their rounds and scratch folder; each may come from the
# environment, or from a script that defaults it otherwise before.
ms_library_defaults() {
    ROUNDS=${ROUNDS:-3}
    MOVIES=${MOVIES:-5000}
    SERIES=${SERIES:-556}
    MEDIA_SIZE=${MEDIA_SIZE:-2000}
    MUSIC_ARTISTS=${MUSIC_ARTISTS:-0}
    ALBUMS_PER_ARTIST=${ALBUMS_PER_ARTIST:-20}
    TRACKS_PER_ALBUM=${TRACKS_PER_ALBUM:-10}
    BENCH_KEEP=${BENCH_KEEP:-0}
}

# ms_library_defaults, the release build the benchmarks share, and the tools named.
# shellcheck disable=SC2120 # called without tools too
ms_bench_defaults() {
    ms_library_defaults
    SWIFT_SCRATCH=${SWIFT_SCRATCH:-$REPO_DIR/.build-benchsync}
    ms_need "$@"
}

ms_log() { echo "${SCRIPT_NAME:-mediasync}: $*" >&2; }

ms_need() {
    local missing=() tool
    for tool in "$@"; do
        case "$tool" in
            time) [ -x /usr/bin/time ] || missing+=(time) ;;
            *) command -v "$tool" >/dev/null 2>&1 || missing+=("$tool") ;;
        esac
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    ms_log "installing ${missing[*]}"
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y "${missing[@]}" >&2 || { apt-get update >&2 && apt-get install -y "${missing[@]}" >&2; }
    else
        sudo apt-get install -y "${missing[@]}" >&2
    fi
}

ms_release_binaries() {
    local scratch=$1 product
    shift
    if [ -n "${MEDIASYNC_BIN_DIR:-}" ]; then
        bin=$MEDIASYNC_BIN_DIR
    else
        ms_log "building release binaries in $scratch"
        for product in mediasync mediasync-test-server "$@"; do
            swift build -c release --scratch-path "$scratch" --product "$product" >&2
        done
        bin=$(swift build -c release --scratch-path "$scratch" --show-bin-path)
    fi
    ms="$bin/mediasync"
}

# What the release-binary scripts share before their scratch folder: python3, the build dependencies, the binaries.
ms_prepare_release_run() {
    ms_need python3
    "$REPO_DIR/Scripts/install-deps.sh" >&2
    ms_release_binaries "$1"
}

ms_cleanup() {
    if [ -n "${server:-}" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    local disk
    for disk in "$work"/disk-*; do mountpoint -q "$disk" 2>/dev/null && umount "$disk"; done
    if [ "${MS_KEEP:-0}" = 1 ]; then ms_log "kept $work"; else rm -rf "$work"; fi
}

ms_scratch() {
    MS_KEEP=${1:-0}
    work=$(mktemp -d "${TMPDIR:-/tmp}/mediasync-${SCRIPT_NAME:-script}.XXXXXX")
    server=""
    trap ms_cleanup EXIT
    trap 'exit 130' INT TERM
}

# A benchmark's scratch folder, kept when BENCH_KEEP is 1, with the mirror's root and configuration in it.
ms_mirror_scratch() {
    ms_scratch "${BENCH_KEEP:-0}"
    export MEDIASYNC_ROOT="$work/mirror" MEDIASYNC_CONFIG_DIR="$work/config"
}

ms_start_server() {
    "$bin/mediasync-test-server" "$@" >"$work/server.out" 2>"$work/server.err" &
    server=$!
    local _
    for _ in $(seq 1 300); do grep -q '^listening on ' "$work/server.out" && break; sleep 0.1; done
    base=$(sed -n 's/^listening on \(http[^ ]*\).*/\1/p' "$work/server.out")
    [ -n "$base" ] || { cat "$work/server.out" "$work/server.err" >&2; ms_log "the test server did not start"; exit 1; }
    case "$base" in http://127.0.0.1:*) ;; *) ms_log "server not on 127.0.0.1: $base"; exit 1 ;; esac
    for _ in $(seq 1 50); do grep -q '^user ' "$work/server.err" && break; sleep 0.1; done
    user=$(sed -n 's|^user \([^/]*\)/\([^,]*\),.*|\1|p' "$work/server.err")
    password=$(sed -n 's|^user \([^/]*\)/\([^,]*\),.*|\2|p' "$work/server.err")
    token=$(sed -n 's|^user [^,]*, token \([^,]*\),.*|\1|p' "$work/server.err")
}

# The test server with the library the benchmarks generate (sized by ms_library_defaults) and the caller's ARGS.
# shellcheck disable=SC2120 # called without ARGS too
ms_start_library_server() {
    local music=()
    if [ "${MUSIC_ARTISTS:-0}" -gt 0 ]; then
        music=(--music-artists "$MUSIC_ARTISTS" --albums-per-artist "$ALBUMS_PER_ARTIST"
            --tracks-per-album "$TRACKS_PER_ALBUM" --no-music-extras)
    fi
    ms_start_server --movies "$MOVIES" --series "$SERIES" --media-size "$MEDIA_SIZE" "${music[@]}" "$@"
    items=$((MOVIES + SERIES * 9 + ${MUSIC_ARTISTS:-0} * ALBUMS_PER_ARTIST * TRACKS_PER_ALBUM))
}

ms_login() {
    printf '%s\n' "$password" | timeout 60 "$ms" login "$base" --username "$user" --password-stdin >&2
}

ms_login_and_select_libraries() {
    ms_login
    timeout 60 "$ms" browse --json >"$work/views.json"
    local movies_view shows_view
    read -r movies_view shows_view < <(python3 -c '
import json, sys
views = json.load(open(sys.argv[1]))
pick = lambda kind: next(v["id"] for v in views if v.get("collectionType") == kind)
print(pick("movies"), pick("tvshows"))' "$work/views.json")
    timeout 60 "$ms" select library "$movies_view" >&2
    timeout 60 "$ms" select library "$shows_view" >&2
    local music_view
    music_view=$(python3 -c '
import json, sys
print(next((v["id"] for v in json.load(open(sys.argv[1])) if v.get("collectionType") == "music"), ""))' "$work/views.json")
    if [ -n "$music_view" ]; then timeout 60 "$ms" select library "$music_view" >&2; fi
}

ms_select_all_movies_and_series() {
    ms_login
    local id
    for id in $(timeout 60 "$ms" browse --type movie --json | python3 -c 'import json,sys; [print(m["id"]) for m in json.load(sys.stdin)]'); do
        timeout 60 "$ms" select movie "$id" --all-versions >&2
    done
    for id in $(timeout 60 "$ms" browse --type series --json | python3 -c 'import json,sys; [print(s["id"]) for s in json.load(sys.stdin)]'); do
        timeout 60 "$ms" select series "$id" >&2
    done
}

ms_test_rows() {
    local name=$1 variable=$2 filter=$3
    local scratch="${SWIFT_SCRATCH:-$REPO_DIR/.build}"
    work="$(mktemp -d "/tmp/mediasync-$name.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    export TMPDIR="$work"
    rows="$work/$name.tsv"
    : >"$rows"
    if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
        "$REPO_DIR/Scripts/install-deps.sh"
        swift build --build-tests --scratch-path "$scratch"
    fi
    status=0
    env "$variable=$rows" swift test --skip-build --scratch-path "$scratch" --filter "$filter" >"$work/test.log" 2>&1 \
        || status=$?
    if [[ -n "${KEEP_TSV:-}" ]]; then cp "$rows" "$KEEP_TSV"; fi
}

ms_failing_expectations() {
    if [[ $status -ne 0 ]]; then
        echo
        echo "The tests failed (exit $status); the failing expectations:"
        grep -E '^✘' "$work/test.log" | head -40 || true
    fi
}

ms_size_options() {
    while [ $# -gt 0 ]; do
        [ $# -ge 2 ] || { ms_log "$1 needs a value"; exit 2; }
        case "$1" in
            --movies) MOVIES=$2 ;;
            --series) SERIES=$2 ;;
            --media-size) MEDIA_SIZE=$2 ;;
            --rounds) ROUNDS=$2 ;;
            --feeds) FEEDS=$2 ;;
            --music-artists) MUSIC_ARTISTS=$2 ;;
            --albums-per-artist) ALBUMS_PER_ARTIST=$2 ;;
            --tracks-per-album) TRACKS_PER_ALBUM=$2 ;;
            *)
                ms_log "unknown option $1 (options: --movies N --series N --media-size BYTES --rounds N --feeds N" \
                    "--music-artists N --albums-per-artist N --tracks-per-album N)"
                exit 2
                ;;
        esac
        shift 2
    done
}

ms_now_ns() { date +%s%N; }
ms_ms_since() { echo $(( ($(ms_now_ns) - $1) / 1000000 )); }
ms_median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
ms_secs() { awk -v ms="$1" 'BEGIN {printf "%.2f", ms / 1000}'; }
