#!/usr/bin/env bash
# bench-transcode.sh — a transcode's download: HLS segments fetched and joined into one file (docs/benchmarks.md).
#
# nginx (Debian's nginx-light, its own config on 127.0.0.1) serves a VOD playlist of SEGMENTS MPEG-TS segments of
# SEGMENT_MB each (a master playlist naming one media playlist). Timed in alternating rounds:
#   mediasync:  `mediasync get --hls <master> --output-dir DIR` (the transcode's fetch: HLSFetch, 4 segments in
#               flight, segments in staging, joined and placed; durable: the joined file is fsynced)
#   anchor:     `curl --parallel --parallel-max 4` of the same segment list into files, then `cat` into one file
#               (durable: followed by `sync FILE`)
# Both outputs are compared byte for byte; every timed run starts after a `sync` (nothing dirty left by the last). Prints medians, the ratio anchor/mediasync (>= 1.0: mediasync is at
# least as fast), mediasync's peak RSS, and the time from a kill (SIGKILL once half the segments are joined in staging) to
# the resumed completion against a fresh start.
# Environment: SEGMENTS (400), SEGMENT_MB (2), ROUNDS (3), MEDIASYNC_BIN_DIR (use these binaries, else a release
#   build in SWIFT_SCRATCH, default <repo>/.build-benchsync), BENCH_KEEP=1 keeps the scratch folder.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-transcode
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

SEGMENTS=${SEGMENTS:-400}
SEGMENT_MB=${SEGMENT_MB:-2}
ROUNDS=${ROUNDS:-3}
SWIFT_SCRATCH=${SWIFT_SCRATCH:-$REPO_DIR/.build-benchsync}
PATH="$PATH:/usr/sbin:/sbin"
ms_need python3 curl time
if ! command -v nginx >/dev/null 2>&1; then
    ms_log "installing nginx-light"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi
ms_release_binaries "$SWIFT_SCRATCH"

ms_scratch "${BENCH_KEEP:-0}"
src="$work/src"
mkdir -p "$src/hls" "$work/nginx/tmp"
ms_log "generating $SEGMENTS segments of $SEGMENT_MB MB"
python3 - "$src/hls" "$SEGMENTS" "$SEGMENT_MB" <<'PY'
import os, sys
folder, count, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
packets = mb * 1024 * 1024 // 188
block = bytearray(os.urandom(packets * 188))
block[0::188] = b"\x47" * packets
lines = ["#EXTM3U", "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:3", "#EXT-X-MEDIA-SEQUENCE:0"]
for i in range(count):
    block[1:9] = i.to_bytes(8, "big")
    with open(os.path.join(folder, f"{i}.ts"), "wb") as out:
        out.write(block)
    lines += ["#EXTINF:3.000000, nodesc", f"{i}.ts"]
lines.append("#EXT-X-ENDLIST")
open(os.path.join(folder, "main.m3u8"), "w").write("\n".join(lines) + "\n")
open(os.path.join(folder, "master.m3u8"), "w").write(
    '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=4192000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720\nmain.m3u8\n')
PY
chmod -R a+rX "$work"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
user_line=""
[ "$(id -u)" -eq 0 ] && user_line="user root;"
cat >"$work/nginx/nginx.conf" <<NGINX
$user_line
daemon on;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
    types { } default_type application/octet-stream;
    client_body_temp_path $work/nginx/tmp/body; proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi; uwsgi_temp_path $work/nginx/tmp/uwsgi; scgi_temp_path $work/nginx/tmp/scgi;
    server { listen 127.0.0.1:$port; root $src; location / { } }
}
NGINX
nginx -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" -p "$work/nginx/"
stop_nginx() { kill "$(cat "$work/nginx/nginx.pid" 2>/dev/null)" 2>/dev/null || true; }
trap 'stop_nginx; ms_cleanup' EXIT
base="http://127.0.0.1:$port/hls"
for _ in $(seq 1 50); do curl -fsS -o /dev/null "$base/master.m3u8" && break; sleep 0.1; done
ms_log "nginx on $base"

curl_config="$work/curl.cfg"
: >"$curl_config"
for i in $(seq 0 $((SEGMENTS - 1))); do printf 'url = "%s/%d.ts"\noutput = "%s/anchor/%06d.ts"\n' "$base" "$i" "$work" "$i" >>"$curl_config"; done

# Each timed run starts with nothing dirty in the page cache (the previous run's files written back, untimed).
run_anchor() {
    rm -rf "$work/anchor" "$work/anchor.ts"; mkdir -p "$work/anchor"
    sync
    local t0; t0=$(ms_now_ns)
    curl -fsS --no-progress-meter --parallel --parallel-max 4 -K "$curl_config"
    cat "$work"/anchor/*.ts >"$work/anchor.ts"
    sync "$work/anchor.ts"
    ms_ms_since "$t0"
}
run_mediasync() {
    rm -rf "$work/out"; mkdir -p "$work/out"
    sync
    local t0; t0=$(ms_now_ns)
    /usr/bin/time -f %M -o "$work/rss" "$ms" get --hls "$base/master.m3u8" --output-dir "$work/out" --quiet
    ms_ms_since "$t0"
}
anchor_ms=(); ms_ms=(); rss=()
for round in $(seq 1 "$ROUNDS"); do
    a=$(run_anchor); m=$(run_mediasync)
    anchor_ms+=("$a"); ms_ms+=("$m"); rss+=("$(cat "$work/rss")")
    cmp -s "$work/anchor.ts" "$work/out/master.ts" || { ms_log "the outputs differ"; exit 1; }
    ms_log "round $round: curl --parallel + cat ${a} ms, mediasync get --hls ${m} ms"
done
anchor=$(ms_median "${anchor_ms[@]}"); mediasync=$(ms_median "${ms_ms[@]}"); peak=$(ms_median "${rss[@]}")

# A kill once half the segments are in staging, then the rerun to completion.
rm -rf "$work/out"; mkdir -p "$work/out"
"$ms" get --hls "$base/master.m3u8" --output-dir "$work/out" --quiet &
pid=$!
half=$((SEGMENTS / 2))
joined_count() { { cat "$work"/out/.mediasync-staging/hls-*/joined.mark 2>/dev/null || true; } | awk 'NR == 1 {print $1}'; }
while kill -0 "$pid" 2>/dev/null; do
    have=$(joined_count); [ "${have:-0}" -ge "$half" ] && break
    sleep 0.02
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
kept=$(joined_count); kept=${kept:-0}
[ -e "$work/out/master.ts" ] && { ms_log "the kill came too late (the file was placed)"; exit 1; }
sync
t0=$(ms_now_ns)
"$ms" get --hls "$base/master.m3u8" --output-dir "$work/out" --quiet
resumed=$(ms_ms_since "$t0")
cmp -s "$work/anchor.ts" "$work/out/master.ts" || { ms_log "the resumed output differs"; exit 1; }

ratio=$(awk -v a="$anchor" -v m="$mediasync" 'BEGIN {printf "%.2f", a / m}')
echo "TRANSCODE_BENCH segments=$SEGMENTS segment_mb=$SEGMENT_MB rounds=$ROUNDS mediasync_ms=$mediasync anchor_ms=$anchor ratio=$ratio peak_rss_kb=$peak"
echo "TRANSCODE_RESUME killed_with=$kept/$SEGMENTS resumed_ms=$resumed fresh_ms=$mediasync"
