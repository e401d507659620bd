#!/usr/bin/env bash
# bench-sync.sh — how long does a sync take that has nothing to do? (issue 5, "Benchmark")
#
# 1. Planner micro-benchmark (release): the mediasync-bench-planner executable
#    (Sources/mediasync-bench-planner: SyncPlanner.plan on 100,000 files, identical sides and one changed
#    signature, each plan checked), built with the release binaries used below.
# 2. Starts the release mediasync-test-server on 127.0.0.1 with a generated library of about 10,000 items
#    (--movies/--series; each series is 1 series + 2 seasons + 6 episodes = 9 items) with tiny media
#    (--media-size 2000) and 50 podcast feeds (3 episodes each, relative enclosure URLs) served with --files.
# 3. In a scratch root: login, select both libraries (movies and tvshows views), podcast add each feed --all,
#    a first full sync (timed, files counted), then ROUNDS no-op syncs (timed wall clock, peak RSS via
#    /usr/bin/time -f %M), then one extra no-op sync under strace to count connections, requests, response
#    status lines and bytes received (not timed: strace slows the process down).
#
# Bars (issue 5): no-op sync < 2 s wall (median), zero media bytes (nothing downloaded or written, the
# Downloads tree unchanged), the feeds answered 304 (the test server serves --files with Last-Modified and
# answers If-Modified-Since with 304; it has no request log, so the 304s are read from the client's side:
# strace shows every recvfrom() whose data starts with "HTTP/1.1 304").
#
# Environment:
#   ROUNDS          timed no-op syncs (default 3)
#   MOVIES, SERIES  library size (default 5000 movies + 556 series = 10,004 items + 1 alternate version)
#   FEEDS           podcast feeds (default 50); EPISODES per feed (default 3)
#   MEDIA_SIZE      --media-size of the test server (default 2000 bytes)
#   SWIFT_SCRATCH   swift scratch path (default <repo>/.build-benchsync)
#   MEDIASYNC_BIN_DIR  use the binaries in this folder; skips the build (the planner benchmark runs when the
#                   folder holds mediasync-bench-planner)
#   PLANNER=0       skip the planner micro-benchmark
#   BENCH_KEEP=1    keep the scratch folder (printed)
#   BENCH_STRICT=1  exit 3 when a bar is missed (default: report only)
# Runtime after the build: about 1-3 minutes for the default size; every step is under `timeout`.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-sync
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_bench_defaults time strace python3
FEEDS=${FEEDS:-50}
EPISODES=${EPISODES:-3}
BENCH_STRICT=${BENCH_STRICT:-0}
FIRST_SYNC_TIMEOUT=${FIRST_SYNC_TIMEOUT:-420}
NOOP_TIMEOUT=${NOOP_TIMEOUT:-120}

log() { ms_log "$@"; }

# --- build + planner micro-benchmark ------------------------------------------------------------------------
planner_line=""
ms_release_binaries "$SWIFT_SCRATCH" mediasync-bench-planner
if [ "${PLANNER:-1}" = 1 ] && [ -x "$bin/mediasync-bench-planner" ]; then
    log "running the planner benchmark"
    planner_line=$("$bin/mediasync-bench-planner" | grep -o 'PLANNER_BENCH.*' || true)
    [ -n "$planner_line" ] || { log "the planner benchmark failed"; exit 1; }
fi

# --- scratch, server ----------------------------------------------------------------------------------------
ms_mirror_scratch

log "generating $FEEDS feeds of $EPISODES episodes"
python3 - "$work/source/podcasts" "$FEEDS" "$EPISODES" <<'PY'
import os, sys
root, feeds, episodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for f in range(feeds):
    d = os.path.join(root, f"show-{f:03d}")
    os.makedirs(d, exist_ok=True)
    items = []
    for e in range(episodes):
        name = f"episode-{e}.mp3"
        size = 1000 + f * 10 + e
        with open(os.path.join(d, name), "wb") as out:
            out.write(bytes((f + e + i) % 251 for i in range(size)))
        items.append(
            f"<item><title>Show {f} episode {e}</title><guid>bench-{f}-{e}</guid>"
            f"<pubDate>{e + 1:02d} Jan 2025 08:00:00 +0000</pubDate>"
            f"<enclosure url=\"{name}\" length=\"{size}\" type=\"audio/mpeg\"/></item>")
    with open(os.path.join(d, "feed.xml"), "w") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
                  f"<title>Bench show {f}</title><link>https://example.org/{f}</link>"
                  + "".join(items) + "</channel></rss>\n")
PY

ms_start_library_server --files "$work/source"
log "server $base, user $user, $items items"

# --- set up the mirror --------------------------------------------------------------------------------------
ms_login_and_select_libraries
for d in "$work"/source/podcasts/*/; do
    timeout 60 "$ms" podcast add "$base/files/podcasts/$(basename "$d")/feed.xml" --all >/dev/null
done
log "selected 2 libraries and $FEEDS podcasts"


# --- first sync ---------------------------------------------------------------------------------------------
log "first sync (timeout ${FIRST_SYNC_TIMEOUT}s)"
t0=$(ms_now_ns)
set +e
timeout "$FIRST_SYNC_TIMEOUT" /usr/bin/time -f '%e %M' -o "$work/first.time" \
    "$ms" sync --json --quiet >"$work/first.json" 2>"$work/first.err"
first_rc=$?
set -e
first_ms=$(ms_ms_since "$t0")
first_rss=$(awk '{print $2}' "$work/first.time" 2>/dev/null | tail -1)
[ "$first_rc" = 0 ] || { tail -20 "$work/first.err" >&2; log "first sync exited with $first_rc"; exit 1; }
files=$(find "$MEDIASYNC_ROOT/Downloads" -type f | wc -l)
bytes=$(du -sb "$MEDIASYNC_ROOT/Downloads" | cut -f1)
read -r first_downloaded first_written first_failed < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(len(r["downloaded"]), len(r["written"]), len(r["failed"]))' "$work/first.json")

tree_hash() { (cd "$MEDIASYNC_ROOT" && find Downloads -printf '%p %s %T@\n' | LC_ALL=C sort | sha256sum | cut -c1-16); }
hash_before=$(tree_hash)

# --- no-op syncs ---------------------------------------------------------------------------------------------
check_noop() { # prints "ok" or what is wrong
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
bad = [k for k in ("downloaded", "written", "moved", "deleted", "failed", "sourceErrors", "rejected") if r.get(k)]
if r.get("bytesDownloaded"): bad.append("bytesDownloaded=%d" % r["bytesDownloaded"])
print("ok unchanged=%d" % r.get("unchanged", 0) if not bad else "NOT-EMPTY " + ",".join(bad))' "$1" 2>/dev/null || echo "NO-JSON-REPORT"
}
noop_ms=()
noop_rss=()
noop_ok=yes
for round in $(seq 1 "$ROUNDS"); do
    t0=$(ms_now_ns)
    timeout "$NOOP_TIMEOUT" /usr/bin/time -f '%e %M' -o "$work/noop.time" \
        "$ms" sync --json --quiet >"$work/noop-$round.json" 2>"$work/noop-$round.err" \
        || { log "no-op sync exited with $?"; tail -5 "$work/noop-$round.err" >&2; }
    elapsed=$(ms_ms_since "$t0")
    rss=$(awk '{print $2}' "$work/noop.time" | tail -1)
    verdict=$(check_noop "$work/noop-$round.json")
    case "$verdict" in ok*) ;; *) noop_ok=no ;; esac
    noop_ms+=("$elapsed")
    noop_rss+=("$rss")
    log "no-op round $round: ${elapsed} ms, peak RSS ${rss} KB, $verdict"
done
hash_after=$(tree_hash)

# --- one more no-op sync under strace: connections, requests, status lines, bytes ----------------------------
log "no-op sync under strace (not timed)"
timeout "$NOOP_TIMEOUT" strace -f -qq -s 96 -e trace=connect,sendto,recvfrom -o "$work/strace.txt" \
    "$ms" sync --json --quiet >"$work/noop-strace.json" 2>"$work/noop-strace.err" \
    || { log "no-op sync under strace exited with $?"; tail -5 "$work/noop-strace.err" >&2; }
strace_verdict=$(check_noop "$work/noop-strace.json")
read -r connects requests feed_requests enclosure_requests other_requests s200 s304 sother rx_bytes < <(python3 - "$work/strace.txt" <<'PY'
import re, sys
connects = requests = feeds = enclosures = other = s200 = s304 = sother = rx = 0
for line in open(sys.argv[1], errors="replace"):
    if " connect(" in line and "AF_INET" in line and "127.0.0.1" in line:
        connects += 1
    m = re.search(r'sendto\(\d+, "(GET|HEAD|POST) ([^ "]*)', line)
    if m:
        requests += 1
        path = m.group(2)
        if path.startswith("/files/") and path.endswith(".xml"): feeds += 1
        elif path.startswith("/files/"): enclosures += 1
        else: other += 1
    m = re.search(r'recvfrom\(\d+, "(.*?)"(\.\.\.)?, \d+, [^)]*\) = (\d+)', line)
    if m:
        rx += int(m.group(3))
        head = m.group(1)
        if head.startswith("HTTP/1.1 304") or head.startswith("HTTP/1.0 304"): s304 += 1
        elif head.startswith("HTTP/1.1 200") or head.startswith("HTTP/1.0 200"): s200 += 1
        elif head.startswith("HTTP/"): sother += 1
print(connects, requests, feeds, enclosures, other, s200, s304, sother, rx)
PY
)
hash_final=$(tree_hash)

# --- report -------------------------------------------------------------------------------------------------
noop_median=$(ms_median "${noop_ms[@]}")
rss_max=$(printf '%s\n' "${noop_rss[@]}" | sort -n | tail -1)

bar_time=$([ "$noop_median" -lt 2000 ] && echo yes || echo no)
bar_bytes=no
[ "$noop_ok" = yes ] && [ "$hash_before" = "$hash_after" ] && [ "$hash_after" = "$hash_final" ] \
    && [ "$enclosure_requests" = 0 ] && case "$strace_verdict" in ok*) true ;; *) false ;; esac && bar_bytes=yes
bar_304=no
[ "$feed_requests" -ge "$FEEDS" ] && [ "$s304" -ge "$feed_requests" ] && bar_304=yes

echo
echo "== mediasync no-op sync benchmark (server $base, scratch $work) =="
[ -n "$planner_line" ] && echo "planner (100,000 files, release): $planner_line"
printf '%-34s %s\n' "library items" "$items ($MOVIES movies + $SERIES series x (1 + 2 seasons + 6 episodes)), media $MEDIA_SIZE B"
printf '%-34s %s\n' "podcasts" "$FEEDS feeds x $EPISODES episodes"
printf '%-34s %s\n' "files after the first sync" "$files ($bytes bytes; $first_downloaded downloaded, $first_written metadata written, $first_failed failed)"
printf '%-34s %s\n' "first sync" "$(ms_secs "$first_ms") s wall, peak RSS ${first_rss:-?} KB"
printf '%-34s %s\n' "no-op sync rounds (ms)" "${noop_ms[*]}"
printf '%-34s %s\n' "no-op sync median" "$(ms_secs "$noop_median") s wall"
printf '%-34s %s\n' "no-op sync peak RSS" "$rss_max KB ($(awk -v k="$rss_max" 'BEGIN {printf "%.1f", k / 1024}') MiB)"
printf '%-34s %s\n' "no-op requests (strace run)" "$requests requests on $connects connections: $feed_requests feeds, $enclosure_requests enclosures, $other_requests Jellyfin API"
printf '%-34s %s\n' "no-op responses (strace run)" "$s200 x 200, $s304 x 304, $sother other; $rx_bytes bytes received"
printf '%-34s %s\n' "Downloads tree before/after" "$hash_before / $hash_after / $hash_final (after strace run)"
echo
echo "BAR no-op wall < 2 s: $bar_time (median $(ms_secs "$noop_median") s over $ROUNDS rounds)"
echo "BAR zero media bytes: $bar_bytes (--json: downloaded, written, moved, deleted, failed, sourceErrors empty and bytesDownloaded 0 in every round; Downloads tree hash unchanged; no enclosure request seen by strace)"
echo "BAR feeds answered 304: $bar_304 ($s304 status lines 'HTTP/1.1 304' received for $feed_requests feed requests, read from the client's recvfrom() calls under strace; the test server keeps no request log)"
echo "RESULT items=$items files=$files first_sync_s=$(ms_secs "$first_ms") noop_median_s=$(ms_secs "$noop_median") noop_rss_kb=$rss_max requests=$requests feed_304=$s304/$feed_requests rx_bytes=$rx_bytes"

if [ "$BENCH_STRICT" = 1 ] && { [ "$bar_time" != yes ] || [ "$bar_bytes" != yes ] || [ "$bar_304" != yes ]; }; then exit 3; fi
