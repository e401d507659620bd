#!/usr/bin/env bash
# The main job on an embedded default: starts the local Jellyfin-compatible test server with a small
# generated library and a podcast feed, signs in, selects a movie (all versions) and a series, subscribes to
# the podcast, syncs everything into a mirror folder (Swiftfin's offline layout, and the podcast layout of
# docs/layout.md), syncs again (nothing to do), and prints the resulting tree.
# Usage: Scripts/demo.sh [MIRROR-DIR]     (default: a new folder under /tmp, kept afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
echo "== building mediasync (debug) ==" >&2
swift build >&2
bin=$(swift build --show-bin-path)

demo=${1:-$(mktemp -d /tmp/mediasync-demo.XXXXXX)}
mkdir -p "$demo"
export MEDIASYNC_ROOT="$demo/mirror" MEDIASYNC_CONFIG_DIR="$demo/config"

# A small podcast served by the same server: relative enclosure URLs resolve against the feed's address.
mkdir -p "$demo/source/podcast"
items=""
for n in 1 2 3; do
    head -c $((900000 + n * 1000)) /dev/urandom >"$demo/source/podcast/episode-$n.mp3"
    items="$items<item><title>Episode $n</title><guid>demo-episode-$n</guid><pubDate>0$n Jan 2025 08:00:00 +0000</pubDate>"
    items="$items<enclosure url=\"episode-$n.mp3\" length=\"$((900000 + n * 1000))\" type=\"audio/mpeg\"/></item>"
done
cat >"$demo/source/podcast/feed.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>The Demo Show</title><link>https://example.org/demo</link>$items</channel></rss>
XML

"$bin/mediasync-test-server" --movies 2 --series 1 --media-size 2000000 --files "$demo/source" \
    >"$demo/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q '^listening on ' "$demo/server.log" && break; sleep 0.1; done
base=$(sed -n 's/^listening on \(http[^ ]*\).*/\1/p' "$demo/server.log")
[ -n "$base" ] || { cat "$demo/server.log" >&2; echo "demo: the test server did not start" >&2; exit 1; }

run() { echo "\$ mediasync $*"; "$bin/mediasync" "$@"; echo; }
echo "demo" | run login "$base" --username demo --password-stdin
run browse
run browse --type movie
run browse --type series
movie=$("$bin/mediasync" browse --type movie --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
series=$("$bin/mediasync" browse --type series --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
run select movie "$movie" --all-versions
run select series "$series"
run selections
run podcast add "$base/files/podcast/feed.xml" --all
run sync
run sync
run du
echo "== the mirror in $MEDIASYNC_ROOT =="
(cd "$MEDIASYNC_ROOT" && find Downloads -type f -printf '%10s  %p\n' | sort -k2)
