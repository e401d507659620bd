#!/usr/bin/env bash
# bench-trickplay.sh — what trickplay costs a sync (docs/benchmarks.md).
#
# Starts the test server with the benchmarks' generated library and --rich-media (every video with 3 chapter
# images, trickplay at 320 px, a thumbnail every 10 s of its runtime in 10 x 10 tiles, an intro and an outro), then in
# two fresh roots selects the movies and tvshows libraries, in one as they come (trickplay at the server's smallest
# width) and in the other with --no-trickplay, and times a first sync of each (files under Downloads/ counted, and
# their bytes: the files' sizes, not the folders'); then a no-op sync of the first root, counting the requests for tiles the test server logged during it
# (there should be none).
#
# Options (or the environment variables of the same name): --movies N, --series N, --media-size BYTES.
# Environment: MEDIASYNC_BIN_DIR (use the binaries there, e.g. .build/debug, instead of a release build),
# BENCH_KEEP=1 (keep the scratch folder).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-trickplay
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_size_options "$@"
ms_bench_defaults python3
ms_release_binaries "$SWIFT_SCRATCH"
ms_mirror_scratch
ms_start_library_server --rich-media --request-log "$work/requests.jsonl"

# One root: sign in, select both libraries (with the extra select options given), sync, count.
first_sync() {
    local name=$1
    shift
    export MEDIASYNC_ROOT="$work/$name" MEDIASYNC_CONFIG_DIR="$work/config-$name"
    ms_login
    timeout 60 "$ms" browse --json >"$work/views.json"
    local view
    for view in $(python3 -c '
import json, sys
print(" ".join(v["id"] for v in json.load(open(sys.argv[1])) if v.get("collectionType") in ("movies", "tvshows")))' \
        "$work/views.json"); do
        timeout 60 "$ms" select library "$view" "$@" >&2
    done
    local t0
    t0=$(ms_now_ns)
    timeout 1800 "$ms" sync --quiet >&2
    local ms_taken files bytes tiles
    ms_taken=$(ms_ms_since "$t0")
    files=$(find "$MEDIASYNC_ROOT/Downloads" -type f | wc -l)
    bytes=$(find "$MEDIASYNC_ROOT/Downloads" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    tiles=$(find "$MEDIASYNC_ROOT/Downloads" -type f -path '*.trickplay/*' | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$(ms_secs "$ms_taken")" "$files" "$bytes" "$tiles"
}

ms_log "library: $items items, media $MEDIA_SIZE B each (binaries: $bin)"
printf 'sync\tseconds\tfiles\tbytes\ttiles\n'
first_sync with-trickplay
first_sync no-trickplay --no-trickplay

export MEDIASYNC_ROOT="$work/with-trickplay" MEDIASYNC_CONFIG_DIR="$work/config-with-trickplay"
before=$(wc -l <"$work/requests.jsonl")
t0=$(ms_now_ns)
timeout 600 "$ms" sync --quiet >&2
noop=$(ms_ms_since "$t0")
tail -n +"$((before + 1))" "$work/requests.jsonl" >"$work/noop.jsonl"
requests=$(wc -l <"$work/noop.jsonl")
tile_requests=$(grep -c '/Trickplay/' "$work/noop.jsonl" || true)
printf 'no-op\t%s\trequests %s\ttile requests %s\n' "$(ms_secs "$noop")" "$requests" "$tile_requests"
