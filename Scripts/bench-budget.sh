#!/usr/bin/env bash
# bench-budget.sh — what does a storage budget cost the planning of a sync? (docs/benchmarks.md)
#
# Anchor: the same plan without a budget, in the same run. Goal: within 10 %.
# 1. Planner level (release mediasync-bench-planner): SyncPlanner.plan over the 10,004-item library (40,016
#    files, half held) against plan + applyBudget (ranked in 100 selections, room for three quarters of what is
#    missing); medians of 7, printed as BUDGET_BENCH.
# 2. Sync level: the release test server with the 10,004-item library, both libraries selected, an empty mirror;
#    `mediasync sync --dry-run --json` (listing, planning, nothing fetched) ROUNDS times with and without
#    `--budget` (half the library's bytes), interleaved; medians and their ratio. Each budgeted plan is checked:
#    some downloads planned, some waiting.
# Environment: ROUNDS (default 5), MOVIES/SERIES (default 5000 + 556 = 10,004 items), MEDIA_SIZE (default 2000),
#   SWIFT_SCRATCH (default <repo>/.build-benchsync), MEDIASYNC_BIN_DIR (use these binaries), BENCH_KEEP=1.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-budget
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

# Its own default first: the library defaults set ROUNDS to 3 when it is unset.
ROUNDS=${ROUNDS:-5}
ms_bench_defaults python3

ms_release_binaries "$SWIFT_SCRATCH" mediasync-bench-planner

planner_line=$("$bin/mediasync-bench-planner" | grep -o 'BUDGET_BENCH.*' || true)
[ -n "$planner_line" ] || { ms_log "the planner benchmark failed"; exit 1; }
ms_log "$planner_line"

ms_mirror_scratch
ms_start_library_server
ms_log "server $base, $items items"
ms_login_and_select_libraries

# Half of what the library's media take (about MEDIA_SIZE a file).
budget=$(( (MOVIES + SERIES * 6) * MEDIA_SIZE / 2 ))
plain_ms=()
budget_ms=()
for round in $(seq 1 "$ROUNDS"); do
    t0=$(ms_now_ns)
    timeout 300 "$ms" sync --dry-run --json --quiet >"$work/plain.json"
    plain_ms+=("$(ms_ms_since "$t0")")
    t0=$(ms_now_ns)
    timeout 300 "$ms" sync --dry-run --json --quiet --budget "$budget" >"$work/budget.json"
    budget_ms+=("$(ms_ms_since "$t0")")
    check=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
downloads = sum(1 for p in r["planned"] if p["action"] == "download")
print("downloads=%d waiting=%d" % (downloads, len(r["waiting"])))
sys.exit(0 if downloads > 0 and r["waiting"] else 1)' "$work/budget.json") || { ms_log "the budgeted plan is wrong: $check"; exit 1; }
    ms_log "round $round: plain ${plain_ms[-1]} ms, with --budget ${budget_ms[-1]} ms ($check)"
done
plain=$(ms_median "${plain_ms[@]}")
budgeted=$(ms_median "${budget_ms[@]}")
ratio=$(awk -v a="$budgeted" -v b="$plain" 'BEGIN {printf "%.3f", a / b}')
echo "$planner_line"
echo "BUDGET_SYNC_BENCH items=$items rounds=$ROUNDS dry_run_ms=$plain dry_run_with_budget_ms=$budgeted ratio=$ratio ($check)"
