#!/usr/bin/env bash
# bench-listing.sh — what light library listings (an item's media sources asked for only when it is new or its Etag
# changed) save a real 10.11 server. Results: docs/benchmarks.md.
#
# The release test server answers like 10.11 with the 10,004-item library of bench-sync.sh and charges a per-item
# cost for building media sources (`--media-source-cost`, default 1 ms an item: 10 s for the whole library). After a
# first full sync of both libraries:
#   warm:  ROUNDS no-op syncs with the media-source cache (light listings: the server builds none)
#   cold:  one no-op sync after the cache is emptied (the media sources of every item asked for again, which is what
#          every no-op sync cost before light listings)
# For each: wall time (median for warm), peak RSS, and the items whose media sources the server built
# (`/__control/stats`).
# Environment: ROUNDS (3), MOVIES/SERIES (5000 + 556), MEDIA_SIZE (2000), COST (0.001), MEDIASYNC_BIN_DIR,
#   SWIFT_SCRATCH (<repo>/.build-benchsync), BENCH_KEEP=1.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-listing
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_bench_defaults python3 curl time
COST=${COST:-0.001}
ms_release_binaries "$SWIFT_SCRATCH"

ms_mirror_scratch
ms_start_library_server --jellyfin 10.11 --control --media-source-cost "$COST"
ms_log "server $base (10.11, $COST s an item's media sources), $items items"
ms_login_and_select_libraries
built() { curl -fsS "$base/__control/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mediaSourcesBuilt"])'; }

ms_log "first sync"
timeout 900 "$ms" sync --quiet --json >"$work/first.json"
first_built=$(built)

warm_ms=(); warm_rss=(); warm_built=()
for round in $(seq 1 "$ROUNDS"); do
    before=$(built)
    t0=$(ms_now_ns)
    timeout 600 /usr/bin/time -f %M -o "$work/rss" "$ms" sync --quiet --json >"$work/noop.json"
    warm_ms+=("$(ms_ms_since "$t0")"); warm_rss+=("$(cat "$work/rss")"); warm_built+=($(( $(built) - before )))
    ms_log "warm no-op $round: ${warm_ms[-1]} ms, ${warm_built[-1]} media sources built"
done

python3 - "$MEDIASYNC_ROOT/.mediasync/index.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("DELETE FROM media_cache"); db.commit()
PY
before=$(built)
t0=$(ms_now_ns)
timeout 900 /usr/bin/time -f %M -o "$work/rss" "$ms" sync --quiet --json >"$work/cold.json"
cold_ms=$(ms_ms_since "$t0"); cold_rss=$(cat "$work/rss"); cold_built=$(( $(built) - before ))
python3 - "$work/noop.json" "$work/cold.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    assert not r["downloaded"] and not r["written"] and not r["failed"], (path, r["failed"][:3])
PY
echo "LISTING_BENCH items=$items cost_s=$COST first_sync_built=$first_built warm_noop_ms=$(ms_median "${warm_ms[@]}") warm_built=$(ms_median "${warm_built[@]}") warm_rss_kb=$(ms_median "${warm_rss[@]}") cold_noop_ms=$cold_ms cold_built=$cold_built cold_rss_kb=$cold_rss"
