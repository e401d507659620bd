#!/usr/bin/env bash
# torture-kill.sh [TRIALS] — crash torture: kill -9 a sync at random moments, rerun it, and
# check that nothing was lost, nothing partial sits at a final path, and little was fetched twice.
#
# 1. Builds the release mediasync and mediasync-test-server (skipped with MEDIASYNC_BIN_DIR).
# 2. Starts the test server on 127.0.0.1 with a library of mixed sizes: 3 movies (the first with two versions)
#    and a series of 2 seasons x 3 episodes, media of 150 KB to 12 MB (--media-sizes), 256-byte images; a
#    podcast of 3 episodes (0.4, 1.8 and 5 MB) served by the same server (--files); each response body throttled
#    to THROTTLE bytes/s (--throttle), so a full sync takes a few seconds with 4 transfers at a time. The server
#    writes a request log (--request-log: body bytes each response sent) and serves /__control/ (--control).
# 3. Signs in, selects the movies and the series, subscribes to the podcast (--all) in a template root; copies it
#    to a reference root and syncs that once without interruption (timed: the "typical duration").
# 4. Runs TRIALS trials with Scripts/lib/torture_kill.py (see its docstring for the checks and the bound):
#    fresh or continuing root (then the server first changes 1-3 media files), kill -9 at a random moment,
#    rerun until exit 0 (at most 5 runs), check tree, bytes, index, staging, verify, bytes fetched again.
#
# Prints one line per trial, then the figures: trials, kills, phases reached, bytes fetched again vs the
# bound, the partial files held on the client's disk at the kills past 1.25 MiB (resumed, or started over and why),
# failures with details. Exit status 1 when a trial failed.
#
# Environment:
#   SEED              random seed of the trial schedule (default 1)
#   THROTTLE          bytes per second per response (default 4000000)
#   MEDIA_SIZES       the media files' sizes, comma-separated, cycled over the library (default: 150 KB to 12 MB)
#   PODCAST_SIZES     the podcast episodes' sizes (default 400000,1800000,5000000)
#   MEDIASYNC_BIN_DIR use the binaries in this folder (no build)
#   SWIFT_SCRATCH     scratch path of the release build (default <repo>/.build-torture-rel)
#   TORTURE_KEEP=1    keep the scratch folder (its path is printed)
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=torture-kill
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

TRIALS=${1:-100}
SEED=${SEED:-1}
THROTTLE=${THROTTLE:-4000000}
SWIFT_SCRATCH=${SWIFT_SCRATCH:-$REPO_DIR/.build-torture-rel}
MEDIA_SIZES=${MEDIA_SIZES:-150000,2500000,6000000,800000,1400000,12000000,300000,3200000,600000,2000000}
PODCAST_SIZES=${PODCAST_SIZES:-400000,1800000,5000000}

# --- tools, build, scratch ----------------------------------------------------------------------------------
ms_prepare_release_run "$SWIFT_SCRATCH"
ms_scratch "${TORTURE_KEEP:-0}"
export MEDIASYNC_CONFIG_DIR="$work/config"

# --- the podcast ------------------------------------------------------------------------------------------
python3 "$SCRIPT_DIR/lib/gen_show.py" "$work/source/podcast" torture "Torture show" "$PODCAST_SIZES"

# --- the server ---------------------------------------------------------------------------------------------
ms_start_server --movies 3 --series 1 --media-sizes "$MEDIA_SIZES" --throttle "$THROTTLE" \
    --files "$work/source" --request-log "$work/requests.jsonl" --control

# --- template and reference roots ---------------------------------------------------------------------------
export MEDIASYNC_ROOT="$work/template"
ms_select_all_movies_and_series
timeout 60 "$ms" podcast add "$base/files/podcast/feed.xml" --all >&2
cp -a "$work/template" "$work/reference"
t0=$(date +%s%N)
MEDIASYNC_ROOT="$work/reference" timeout 600 "$ms" sync --quiet >&2
typical=$(awk -v ns=$(( $(date +%s%N) - t0 )) 'BEGIN {printf "%.2f", ns / 1e9}')
files=$(find "$work/reference/Downloads" -type f | wc -l)
bytes=$(du -sb "$work/reference/Downloads" | cut -f1)
ms_log "server $base; reference sync: $files files, $bytes bytes in $typical s (throttle $THROTTLE B/s per response)"

# --- trials -------------------------------------------------------------------------------------------------
set +e
TORTURE_THROTTLE=$THROTTLE python3 "$SCRIPT_DIR/lib/torture_kill.py" --bin "$bin" --base "$base" --token "$token" \
    --work "$work" --template "$work/template" --reference "$work/reference" --request-log "$work/requests.jsonl" \
    --trials "$TRIALS" --seed "$SEED" --typical "$typical"
status=$?
set -e
echo "library: $files files, $bytes bytes (media $MEDIA_SIZES; podcast $PODCAST_SIZES); full sync ${typical} s"
exit $status
