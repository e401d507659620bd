#!/usr/bin/env bash
# bench-export.sh — how fast is `mediasync export` against `cp`? (docs/benchmarks.md)
#
# 1. Builds the release binaries (mediasync, mediasync-test-server) unless MEDIASYNC_BIN_DIR is given.
# 2. Starts the test server with a generated library (--movies/--series, like bench-sync.sh: each series is
#    1 series + 2 seasons + 6 episodes) and syncs the whole of it into a scratch mirror.
# 3. Times, in alternating rounds (medians), on the same file system:
#      export   `mediasync export DEST --copy` into an empty folder (bytes copied, never hardlinked), which ends
#               with one sync(2) before its manifest is written
#      cp -r    `cp -r Downloads DEST && sync` (every file of the mirror, metadata.json included)
#      cp list  `cp --parents` of exactly the files the export copied (from its manifest) `&& sync`
#    and reports ratio = anchor time / export time (>= 0.9 is the goal: the export at most ~10% slower). Each round
#    writes into folders of its own (nothing is deleted before the end) and the export and cp -r take turns going
#    first.
# 4. Times ROUNDS no-op exports (a second export of an unchanged mirror: nothing copied).
#
# Options: --movies N, --series N, --media-size BYTES, --rounds N (or the environment variables below).
#
# Environment:
#   ROUNDS          alternated rounds (default 3)
#   MOVIES, SERIES  library size (default 5000 movies + 556 series = 10,004 items, bench-sync.sh's mirror)
#   MEDIA_SIZE      --media-size of the test server (default 2000 bytes)
#   MEDIASYNC_BIN_DIR  use the binaries in this folder; skips the build
#   SWIFT_SCRATCH   swift scratch path (default <repo>/.build-benchsync, shared with the other benchmarks)
#   BENCH_KEEP=1    keep the scratch folder
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-export
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_size_options "$@"
ms_bench_defaults

log() { ms_log "$@"; }

ms_release_binaries "$SWIFT_SCRATCH"
ms_mirror_scratch
ms_start_library_server
log "server $base, $items items"

ms_login_and_select_libraries
log "first sync"
timeout 900 "$ms" sync --quiet
files=$(find "$MEDIASYNC_ROOT/Downloads" -type f | wc -l)
bytes=$(du -sb "$MEDIASYNC_ROOT/Downloads" | cut -f1)
log "mirror: $files files, $bytes bytes"

now_ns() { ms_now_ns; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The list of exactly the files the export copies, from a first export's manifest.
"$ms" export "$work/probe" --copy --quiet --json >"$work/probe.json"
python3 - "$work/probe/.mediasync-export.json" "$work/list" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
with open(sys.argv[2], "wb") as out:
    for entry in m["files"].values():
        if entry.get("source"):
            out.write(entry["source"].encode() + b"\0")
PY
exported_files=$(tr -cd '\0' <"$work/list" | wc -c)
exported_bytes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytesExported"])' "$work/probe.json")
log "the export copies $exported_files files, $exported_bytes bytes"

# Nothing is deleted until the last round: this machine's ext4 runs without a journal, and there a new inode skips
# every inode freed in the last minute (five if its table block is still dirty; fs/ext4/ialloc.c recently_deleted),
# so whatever ran right after an `rm -rf` of 20,000 files paid a scan per file that the other side did not. Each
# round writes into folders of its own, and the side that goes first alternates.
run_export() {
    local t0
    t0=$(now_ns); "$ms" export "$1" --copy --quiet; export_ms+=($(( ($(now_ns) - t0) / 1000000 )))
}
run_cp() {
    local t0
    t0=$(now_ns); cp -r "$MEDIASYNC_ROOT/Downloads" "$1" && sync; cp_ms+=($(( ($(now_ns) - t0) / 1000000 )))
}
export_ms=(); cp_ms=(); list_ms=(); noop_ms=()
for round in $(seq 1 "$ROUNDS"); do
    sync
    if [ $((round % 2)) -eq 1 ]; then
        run_export "$work/dest-export-$round"; sync; run_cp "$work/dest-cp-$round"
    else
        run_cp "$work/dest-cp-$round"; sync; run_export "$work/dest-export-$round"
    fi
    sync
    mkdir -p "$work/dest-list-$round"
    t0=$(now_ns); (cd "$MEDIASYNC_ROOT" && xargs -0 cp --parents -t "$work/dest-list-$round" <"$work/list") && sync
    list_ms+=($(( ($(now_ns) - t0) / 1000000 )))
    t0=$(now_ns); "$ms" export "$work/dest-export-$round" --copy --quiet; noop_ms+=($(( ($(now_ns) - t0) / 1000000 )))
    log "round $round: export ${export_ms[-1]} ms, cp -r ${cp_ms[-1]} ms, cp list ${list_ms[-1]} ms, no-op export ${noop_ms[-1]} ms"
done

e=$(median "${export_ms[@]}"); c=$(median "${cp_ms[@]}"); l=$(median "${list_ms[@]}"); n=$(median "${noop_ms[@]}")
echo "mirror: $files files, $bytes bytes ($MOVIES movies, $SERIES series, media $MEDIA_SIZE bytes); export copies $exported_files files, $exported_bytes bytes"
echo "export --copy: median $e ms (rounds: ${export_ms[*]})"
echo "cp -r + sync:  median $c ms (rounds: ${cp_ms[*]}), ratio cp/export $(python3 -c "print(f'{$c/$e:.2f}')")"
echo "cp list + sync: median $l ms (rounds: ${list_ms[*]}), ratio cp/export $(python3 -c "print(f'{$l/$e:.2f}')")"
echo "no-op export:  median $n ms (rounds: ${noop_ms[*]})"
