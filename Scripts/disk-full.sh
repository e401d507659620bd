#!/usr/bin/env bash
# disk-full.sh — disk full (issue 6, suite 5): `mediasync sync` with a small tmpfs as the root.
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
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
cd "$REPO_DIR"
SWIFT_SCRATCH=${SWIFT_SCRATCH:-$REPO_DIR/.build-torture-rel}
DISKFULL_KEEP=${DISKFULL_KEEP:-0}

log() { echo "disk-full: $*" >&2; }

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

command -v python3 >/dev/null || "$SCRIPT_DIR/install-deps.sh" python3 >&2
"$SCRIPT_DIR/install-deps.sh" >&2

if [ -n "${MEDIASYNC_BIN_DIR:-}" ]; then
    bin=$MEDIASYNC_BIN_DIR
else
    log "building release binaries in $SWIFT_SCRATCH"
    swift build -c release --scratch-path "$SWIFT_SCRATCH" --product mediasync >&2
    swift build -c release --scratch-path "$SWIFT_SCRATCH" --product mediasync-test-server >&2
    bin=$(swift build -c release --scratch-path "$SWIFT_SCRATCH" --show-bin-path)
fi
ms="$bin/mediasync"

work=$(mktemp -d "${TMPDIR:-/tmp}/mediasync-diskfull.XXXXXX")
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    for disk in "$work"/disk-*; do mountpoint -q "$disk" 2>/dev/null && umount "$disk"; done
    if [ "$DISKFULL_KEEP" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export MEDIASYNC_CONFIG_DIR="$work/config"

mkdir -p "$work/source/podcast"
python3 - "$work/source/podcast" <<'PY'
import os, random, sys
folder = sys.argv[1]
items = []
for n in range(1, 4):
    name = f"full-episode-{n}.mp3"
    with open(os.path.join(folder, name), "wb") as out:
        out.write(random.Random(n).randbytes(1_500_000))
    # No length attribute: the plan cannot know the size.
    items.append(f"<item><title>Episode {n}</title><guid>full-episode-{n}</guid>"
                 f"<pubDate>0{n} Jan 2025 08:00:00 +0000</pubDate><enclosure url=\"{name}\" type=\"audio/mpeg\"/></item>")
with open(os.path.join(folder, "feed.xml"), "w") as out:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Full show</title>'
              + "".join(items) + "</channel></rss>\n")
PY

"$bin/mediasync-test-server" --movies 2 --series 0 --media-size 2000000 --files "$work/source" --control \
    >"$work/server.out" 2>"$work/server.err" &
server=$!
for _ in $(seq 1 300); do grep -q '^listening on ' "$work/server.out" && break; sleep 0.1; done
base=$(sed -n 's/^listening on \(http[^ ]*\).*/\1/p' "$work/server.out")
[ -n "$base" ] || { cat "$work/server.out" "$work/server.err" >&2; log "the test server did not start"; exit 1; }
case "$base" in http://127.0.0.1:*) ;; *) log "server not on 127.0.0.1: $base"; exit 1 ;; esac
for _ in $(seq 1 50); do grep -q '^user ' "$work/server.err" && break; sleep 0.1; done
user=$(sed -n 's|^user \([^/]*\)/\([^,]*\),.*|\1|p' "$work/server.err")
password=$(sed -n 's|^user \([^/]*\)/\([^,]*\),.*|\2|p' "$work/server.err")
token=$(sed -n 's|^user [^,]*, token \([^,]*\),.*|\1|p' "$work/server.err")

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
log "server $base; the movies' plan announces $plan bytes"

set +e
PYTHONPATH="$SCRIPT_DIR/lib" python3 "$SCRIPT_DIR/lib/disk_full.py" --bin "$bin" --base "$base" --work "$work" \
    --movies-template "$work/movies" --podcast-template "$work/podcast" --reference "$work/reference" \
    --token "$token" --plan-bytes "$plan"
status=$?
set -e
exit $status
