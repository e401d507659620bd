#!/usr/bin/env bash
# disk-full.sh — disk full: `mediasync sync` with a small tmpfs as the root.
#
# 1. Builds the release mediasync and mediasync-test-server (skipped with MEDIASYNC_BIN_DIR).
# 2. Starts the test server on 127.0.0.1: 2 movies (3 media files of 2 MB, the first movie has two versions) and
#    a podcast of 3 episodes of 1.5 MB whose enclosures announce no length (--files), with /__control/.
# 3. Signs in; a template root selecting the movies, another subscribed to the podcast; a reference root on the
#    normal disk synced once (it names the files whose served bytes are checked).
# 4. Scripts/lib/disk_full.py mounts a tmpfs per scenario (refuse: plan + 100 MB margin does not fit; unknown:
#    sizes unknown, the disk fills mid-run; writer: the plan fits, another writer fills the disk mid-run), runs
#    sync, checks, frees the space, runs sync again, and prints exit codes, error lines, files, verify, staging.
#
# Mounting a tmpfs needs root: elsewhere the script says so and exits 0 without running anything.
# The same scenarios run in the test suite: Tests/mediasyncCLITests/DiskFullTests.swift.
#
# Environment: MEDIASYNC_BIN_DIR (use these binaries), SWIFT_SCRATCH (default <repo>/.build-torture-rel),
# DISKFULL_KEEP=1 (keep the scratch folder).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=disk-full
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"
SWIFT_SCRATCH=${SWIFT_SCRATCH:-$REPO_DIR/.build-torture-rel}

if [ "$(id -u)" != 0 ]; then
    echo "disk-full: SKIPPED — mounting a tmpfs needs root (run as root, or see DiskFullTests, which skip the same way)"
    exit 0
fi
probe=$(mktemp -d "${TMPDIR:-/tmp}/mediasync-probe.XXXXXX")
if ! mount -t tmpfs -o size=65536 tmpfs "$probe" 2>/dev/null; then
    rmdir "$probe"
    echo "disk-full: SKIPPED — this machine does not allow mounting a tmpfs"
    exit 0
fi
umount "$probe"
rmdir "$probe"

ms_prepare_release_run "$SWIFT_SCRATCH"
ms_scratch "${DISKFULL_KEEP:-0}"
export MEDIASYNC_CONFIG_DIR="$work/config"

python3 "$SCRIPT_DIR/lib/gen_show.py" "$work/source/podcast" full "Full show" 1500000,1500000,1500000 --no-length

ms_start_server --movies 2 --series 0 --media-size 2000000 --files "$work/source" --control

printf '%s\n' "$password" | MEDIASYNC_ROOT="$work/movies" timeout 60 "$ms" login "$base" --username "$user" --password-stdin >&2
for id in $(MEDIASYNC_ROOT="$work/movies" timeout 60 "$ms" browse --type movie --json | python3 -c 'import json,sys; [print(m["id"]) for m in json.load(sys.stdin)]'); do
    MEDIASYNC_ROOT="$work/movies" timeout 60 "$ms" select movie "$id" --all-versions >&2
done
MEDIASYNC_ROOT="$work/podcast" timeout 60 "$ms" podcast add "$base/files/podcast/feed.xml" --all >&2
plan=$(MEDIASYNC_ROOT="$work/movies" timeout 60 "$ms" sync --dry-run --json | python3 -c '
import json, sys
print(sum(step.get("bytes") or 0 for step in json.load(sys.stdin)["planned"] if step["action"] == "download"))')
mkdir -p "$work/reference"
cp -a "$work/movies/.mediasync" "$work/reference/"
MEDIASYNC_ROOT="$work/reference" timeout 300 "$ms" podcast add "$base/files/podcast/feed.xml" --all >/dev/null
MEDIASYNC_ROOT="$work/reference" timeout 300 "$ms" sync --quiet >&2
ms_log "server $base; the movies' plan announces $plan bytes"

set +e
PYTHONPATH="$SCRIPT_DIR/lib" python3 "$SCRIPT_DIR/lib/disk_full.py" --bin "$bin" --base "$base" --work "$work" \
    --movies-template "$work/movies" --podcast-template "$work/podcast" --reference "$work/reference" \
    --token "$token" --plan-bytes "$plan"
status=$?
set -e
exit $status
