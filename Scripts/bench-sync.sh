#!/usr/bin/env bash
# bench-sync.sh — how long does a sync take that has nothing to do? (docs/benchmarks.md)
#
# 1. Planner micro-benchmark (release): the mediasync-bench-planner executable
#    (Sources/mediasync-bench-planner: SyncPlanner.plan on 100,000 files, identical sides and one changed
#    signature, each plan checked), built with the release binaries used below.
# 2. Starts the release mediasync-test-server on 127.0.0.1 with a generated library of about 10,000 items
#    (--movies/--series; each series is 1 series + 2 seasons + 6 episodes = 9 items) with tiny media
#    (--media-size 2000) and 50 podcast feeds (3 episodes each, relative enclosure URLs) served with --files.
# 3. In a scratch root: login, select both libraries (movies and tvshows views), podcast add each feed --all,
#    a first full sync (timed, files counted), then one no-op sync under strace (not timed: strace slows the
#    process down) to count connections, requests, response status lines and bytes received, and to read each
#    request as sent (method, target, headers).
# 4. ROUNDS rounds, each a no-op sync (wall clock, peak RSS and user+system CPU via /usr/bin/time) and then curl
#    sending the very requests the strace run read (`curl --parallel --parallel-max 4`, same URLs and headers, the
#    bodies to /dev/null): the anchor. The ratio sync/curl is taken per round and its median reported. The test
#    server's own CPU time during each (from /proc/PID/stat) is reported apart: what answering costs the server,
#    not the client (on 2 cores the two compete). A no-op finds the Jellyfin side unchanged from the last complete
#    sync's questions and answers (docs/sync.md, "A sync with nothing to do"); each round then also times a no-op
#    that lists in full (the index's listing memo deleted first, as any change on the server or in the index makes
#    the sync forget it), against the same curl round. Each step's median time (`phases` of sync --json) is printed
#    for both.
#
# Bars: no-op sync < 2 s wall (median) and within 2x of curl, peak RSS <= 100 MB (400 MB above 20,000 items),
# zero media bytes (nothing downloaded or written, the Downloads tree unchanged), the feeds answered 304 (the test
# server serves --files with Last-Modified and answers If-Modified-Since with 304; read from the client's side:
# strace shows every recvfrom() whose data starts with "HTTP/1.1 304").
#
# Options (or the environment variables of the same name): --movies N, --series N, --media-size BYTES, --feeds N,
# --rounds N, --music-artists N, --albums-per-artist N, --tracks-per-album N.
# 100,000 items: --movies 50000 --series 5556 (50,000 + 5,556 x 9 = 100,004).
# 20,000 tracks (the music library selected too): --movies 0 --series 0 --music-artists 100 (20 albums of 10 each).
#
# Environment:
#   ROUNDS          rounds of a timed no-op sync and curl (default 3)
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

ms_size_options "$@"

ms_bench_defaults time strace python3 curl
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
    [ -d "$d" ] || continue # --feeds 0: the glob matched nothing
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
memo = " listing unchanged" if r.get("listingUnchanged") else " listed in full"
print("ok unchanged=%d%s" % (r.get("unchanged", 0), memo) if not bad else "NOT-EMPTY " + ",".join(bad))' "$1" 2>/dev/null || echo "NO-JSON-REPORT"
}
# The median of each step's time over the reports given (sync --json `phases`), in ms.
median_phases() {
    python3 -c '
import json, statistics, sys
steps = {}
for path in sys.argv[1:]:
    try:
        for step in json.load(open(path))["phases"]["steps"]:
            steps.setdefault(step["name"], []).append(step["seconds"] * 1000)
    except (OSError, ValueError, KeyError):
        pass
print(" ".join("%s %d" % (name, statistics.median(ms)) for name, ms in steps.items()) or "none")' "$@"
}
# One timed sync whose report is $work/NAME.json: sets elapsed_ms, rss_kb, cpu_ms (user + system) and verdict, and
# noop_ok=no when the report is not a no-op's.
timed_sync() {
    local name=$1 t0 user sys
    t0=$(ms_now_ns)
    timeout "$NOOP_TIMEOUT" /usr/bin/time -f '%e %M %U %S' -o "$work/$name.time" \
        "$ms" sync --json --quiet >"$work/$name.json" 2>"$work/$name.err" \
        || { log "sync $name exited with $?"; tail -5 "$work/$name.err" >&2; }
    elapsed_ms=$(ms_ms_since "$t0")
    read -r _ rss_kb user sys < <(tail -1 "$work/$name.time")
    cpu_ms=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%d", (u + s) * 1000}')
    verdict=$(check_noop "$work/$name.json")
    case "$verdict" in ok*) ;; *) noop_ok=no ;; esac
}
# Forgets the listing memo, as a change on the server or in the index would: the next sync lists in full.
forget_memo() {
    python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("DELETE FROM listing_memo"); db.commit()' \
        "$MEDIASYNC_ROOT/.mediasync/index.sqlite"
}

# One no-op sync under strace first (not timed: strace slows the process down): connections, requests, response
# status lines and bytes received, and each request as sent (method, target, headers), for curl to send the same.
log "no-op sync under strace (not timed)"
timeout "$NOOP_TIMEOUT" strace -f -qq -s 65536 -e trace=connect,sendto,recvfrom -o "$work/strace.txt" \
    "$ms" sync --json --quiet >"$work/noop-strace.json" 2>"$work/noop-strace.err" \
    || { log "no-op sync under strace exited with $?"; tail -5 "$work/noop-strace.err" >&2; }
strace_verdict=$(check_noop "$work/noop-strace.json")
read -r connects requests feed_requests enclosure_requests other_requests s200 s304 sother rx_bytes replayed < <(
    python3 - "$work/strace.txt" "$work/curl.config" <<'PY'
import re, sys
connects = requests = feeds = enclosures = other = s200 = s304 = sother = rx = replayed = 0
def unescape(text):
    return re.sub(r'\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)', lambda m: {
        "r": "\r", "n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(m.group(1)) or (
        chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "x" else chr(int(m.group(1), 8))), text)
def quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
config = []
for line in open(sys.argv[1], errors="replace"):
    if " connect(" in line and "AF_INET" in line and "127.0.0.1" in line:
        connects += 1
    m = re.search(r'sendto\(\d+, "((GET|HEAD|POST|DELETE) ([^ "]*) HTTP/1\.1.*?)"(\.\.\.)?, \d+,', line)
    if m:
        requests += 1
        path = m.group(3)
        if path.startswith("/files/") and path.endswith(".xml"): feeds += 1
        elif path.startswith("/files/"): enclosures += 1
        else: other += 1
        head = unescape(m.group(1)).split("\r\n\r\n", 1)
        lines = head[0].split("\r\n")
        headers = [h for h in lines[1:] if h and h.split(":", 1)[0].lower() not in ("host", "content-length")]
        host = next((h.split(":", 1)[1].strip() for h in lines[1:] if h.lower().startswith("host:")), None)
        # A request whose head strace cut, or that carries a body, is not replayed (a no-op sends none of them).
        if host and not m.group(4) and m.group(2) in ("GET", "HEAD") and (len(head) < 2 or not head[1]):
            replayed += 1
            config.append("url = " + quote("http://" + host + path))
            if m.group(2) == "HEAD": config.append("head")
            config += ["header = " + quote(h) for h in headers]
            config += ['output = "/dev/null"', "next"]
    m = re.search(r'recvfrom\(\d+, "(.*?)"(\.\.\.)?, \d+, [^)]*\) = (\d+)', line)
    if m:
        rx += int(m.group(3))
        head = m.group(1)
        if head.startswith("HTTP/1.1 304") or head.startswith("HTTP/1.0 304"): s304 += 1
        elif head.startswith("HTTP/1.1 200") or head.startswith("HTTP/1.0 200"): s200 += 1
        elif head.startswith("HTTP/"): sother += 1
if config and config[-1] == "next": config.pop()
open(sys.argv[2], "w").write("\n".join(config) + "\n")
print(connects, requests, feeds, enclosures, other, s200, s304, sother, rx, replayed)
PY
)
[ "$replayed" -gt 0 ] || { log "no request of the no-op sync could be read from strace"; exit 1; }
[ "$replayed" = "$requests" ] || log "only $replayed of $requests requests are replayed by curl (cut or with a body)"

# The test server's CPU time (user + system, clock ticks) so far: what it spends answering is kept apart from the
# client's time.
server_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
ticks_per_s=$(getconf CLK_TCK)

# Each round: a no-op sync, then curl sending the same requests (`--parallel --parallel-max 4`, same URLs and
# headers, bodies to /dev/null). Alternated so a load that comes and goes hits both alike.
noop_ms=(); noop_rss=(); noop_cpu=(); noop_server=(); curl_ms=(); curl_server=(); ratios=()
full_ms=(); full_rss=(); full_cpu=(); full_ratios=()
noop_ok=yes
for round in $(seq 1 "$ROUNDS"); do
    s0=$(server_ticks)
    timed_sync "noop-$round"
    s1=$(server_ticks)
    elapsed=$elapsed_ms
    rss=$rss_kb
    noop_ms+=("$elapsed")
    noop_rss+=("$rss")
    noop_cpu+=("$cpu_ms")
    noop_server+=("$(( (s1 - s0) * 1000 / ticks_per_s ))")

    s0=$(server_ticks)
    t0=$(ms_now_ns)
    timeout "$NOOP_TIMEOUT" curl -sS --no-progress-meter --parallel --parallel-max 4 -K "$work/curl.config" \
        || log "curl exited with $?"
    c_elapsed=$(ms_ms_since "$t0")
    s1=$(server_ticks)
    curl_ms+=("$c_elapsed")
    curl_server+=("$(( (s1 - s0) * 1000 / ticks_per_s ))")
    ratios+=("$(awk -v a="$elapsed" -v b="$c_elapsed" 'BEGIN {printf "%d", a * 100 / (b > 0 ? b : 1)}')")
    log "round $round: no-op sync ${elapsed} ms (peak RSS ${rss} KB, client CPU ${noop_cpu[-1]} ms, server CPU" \
        "${noop_server[-1]} ms), curl ${c_elapsed} ms (server CPU ${curl_server[-1]} ms), $verdict"

    # The same no-op, listed in full (the memo forgotten); it keeps a memo again for the next round.
    forget_memo
    timed_sync "full-$round"
    full_ms+=("$elapsed_ms")
    full_rss+=("$rss_kb")
    full_cpu+=("$cpu_ms")
    full_ratios+=("$(awk -v a="$elapsed_ms" -v b="$c_elapsed" 'BEGIN {printf "%d", a * 100 / (b > 0 ? b : 1)}')")
    log "round $round: no-op sync listing in full ${elapsed_ms} ms (peak RSS ${rss_kb} KB, client CPU" \
        "$cpu_ms ms), $verdict"
done
hash_after=$(tree_hash)

# --- report -------------------------------------------------------------------------------------------------
noop_median=$(ms_median "${noop_ms[@]}")
curl_median=$(ms_median "${curl_ms[@]}")
ratio_median=$(ms_median "${ratios[@]}")
ratio_text=$(awk -v r="$ratio_median" 'BEGIN {printf "%.2f", r / 100}')
rss_max=$(printf '%s\n' "${noop_rss[@]}" | sort -n | tail -1)
rss_mb=$(awk -v k="$rss_max" 'BEGIN {printf "%.1f", k / 1024}')
# The targets: within 2x of curl, peak RSS within 100 MB for up to about 10,000 items (400 MB for 100,000).
rss_bar_kb=$([ "$items" -gt 20000 ] && echo $((400 * 1024)) || echo $((100 * 1024)))

bar_time=$([ "$noop_median" -lt 2000 ] && echo yes || echo no)
bar_ratio=$([ "$ratio_median" -le 200 ] && echo yes || echo no)
bar_rss=$([ "$rss_max" -le "$rss_bar_kb" ] && echo yes || echo no)
bar_bytes=no
[ "$noop_ok" = yes ] && [ "$hash_before" = "$hash_after" ] \
    && [ "$enclosure_requests" = 0 ] && case "$strace_verdict" in ok*) true ;; *) false ;; esac && bar_bytes=yes
bar_304=no
[ "$feed_requests" -ge "$FEEDS" ] && [ "$s304" -ge "$feed_requests" ] && bar_304=yes

echo
echo "== mediasync no-op sync benchmark (server $base, scratch $work) =="
[ -n "$planner_line" ] && echo "planner (100,000 files, release): $planner_line"
printf '%-34s %s\n' "library items" "$items ($MOVIES movies + $SERIES series x (1 + 2 seasons + 6 episodes)), media $MEDIA_SIZE B"
printf '%-34s %s\n' "podcasts" "$FEEDS feeds x $EPISODES episodes"
printf '%-34s %s\n' "machine load (1 min) at the end" "$(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
printf '%-34s %s\n' "files after the first sync" "$files ($bytes bytes; $first_downloaded downloaded, $first_written metadata written, $first_failed failed)"
printf '%-34s %s\n' "first sync" "$(ms_secs "$first_ms") s wall, peak RSS ${first_rss:-?} KB"
printf '%-34s %s\n' "no-op sync rounds (ms)" "${noop_ms[*]}"
printf '%-34s %s\n' "curl rounds (ms)" "${curl_ms[*]}"
printf '%-34s %s\n' "ratio sync/curl by round (x100)" "${ratios[*]}"
printf '%-34s %s\n' "no-op sync median" "$(ms_secs "$noop_median") s wall; client CPU (user+sys) median $(ms_median "${noop_cpu[@]}") ms; server CPU median $(ms_median "${noop_server[@]}") ms"
printf '%-34s %s\n' "curl median (same requests)" "$(ms_secs "$curl_median") s wall; server CPU median $(ms_median "${curl_server[@]}") ms"
printf '%-34s %s\n' "no-op sync / curl" "${ratio_text}x (median of the rounds' ratios)"
printf '%-34s %s\n' "no-op sync peak RSS" "$rss_max KB ($rss_mb MiB)"
printf '%-34s %s\n' "no-op steps, median ms" "$(median_phases "$work"/noop-[0-9]*.json)"
full_ratio_text=$(awk -v r="$(ms_median "${full_ratios[@]}")" 'BEGIN {printf "%.2f", r / 100}')
full_rss_max=$(printf '%s\n' "${full_rss[@]}" | sort -n | tail -1)
printf '%-34s %s\n' "no-op listed in full, rounds (ms)" "${full_ms[*]}"
printf '%-34s %s\n' "no-op listed in full, median" "$(ms_secs "$(ms_median "${full_ms[@]}")") s wall (${full_ratio_text}x curl); client CPU median $(ms_median "${full_cpu[@]}") ms; peak RSS $full_rss_max KB"
printf '%-34s %s\n' "listed in full: steps, median ms" "$(median_phases "$work"/full-[0-9]*.json)"
printf '%-34s %s\n' "no-op requests (strace run)" "$requests requests on $connects connections: $feed_requests feeds, $enclosure_requests enclosures, $other_requests Jellyfin API; $replayed replayed by curl"
printf '%-34s %s\n' "no-op responses (strace run)" "$s200 x 200, $s304 x 304, $sother other; $rx_bytes bytes received"
printf '%-34s %s\n' "Downloads tree before/after" "$hash_before / $hash_after"
echo
echo "BAR no-op wall < 2 s: $bar_time (median $(ms_secs "$noop_median") s over $ROUNDS rounds)"
echo "BAR no-op within 2x of curl: $bar_ratio (${ratio_text}x; curl --parallel --parallel-max 4 sending the same $replayed requests with the same headers, in the same rounds)"
echo "BAR no-op peak RSS <= $((rss_bar_kb / 1024)) MB: $bar_rss ($rss_mb MiB)"
echo "BAR zero media bytes: $bar_bytes (--json: downloaded, written, moved, deleted, failed, sourceErrors empty and bytesDownloaded 0 in every round; Downloads tree hash unchanged; no enclosure request seen by strace)"
echo "BAR feeds answered 304: $bar_304 ($s304 status lines 'HTTP/1.1 304' received for $feed_requests feed requests, read from the client's recvfrom() calls under strace)"
echo "RESULT items=$items files=$files first_sync_s=$(ms_secs "$first_ms") noop_median_s=$(ms_secs "$noop_median") curl_median_s=$(ms_secs "$curl_median") noop_curl_ratio=$ratio_text noop_rss_kb=$rss_max full_median_s=$(ms_secs "$(ms_median "${full_ms[@]}")") full_curl_ratio=$full_ratio_text full_rss_kb=$full_rss_max requests=$requests feed_304=$s304/$feed_requests rx_bytes=$rx_bytes"

if [ "$BENCH_STRICT" = 1 ] && { [ "$bar_time" != yes ] || [ "$bar_ratio" != yes ] || [ "$bar_rss" != yes ] \
    || [ "$bar_bytes" != yes ] || [ "$bar_304" != yes ]; }; then exit 3; fi
