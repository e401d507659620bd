#!/usr/bin/env bash
# Benchmarks `mediasync serve` against nginx serving the same file from the same disk, on 127.0.0.1:
#   1. one 1 GiB file streamed whole (curl -o /dev/null), median of BENCH_ROUNDS rounds each, alternating;
#   2. 20 streams of that file at once (aggregate MB/s);
#   3. `/Items` pages (Limit=100) over a mirror of BENCH_ITEMS movies: every page read in turn, total and median;
#   4. PAGES pages of 100 `/Users/{id}/Items` as Jellyfin Web asks for a library (its fields and image types), over
#      every page of the library in turn, CLIENTS at once (`curl --parallel`), against nginx serving the very answers
#      `serve` gave, saved as files, to the same curl; serve's peak RSS after.
# The mirror is written on disk in Swiftfin's offline layout and indexed by `mediasync reindex` (timed); nginx is
# Debian's nginx-light (installed with apt-get when missing), with its own config in the scratch folder.
# Usage: Scripts/bench-serve.sh            (release build; BENCH_BUILD=debug for a debug one)
# Environment: BENCH_SIZE_MIB (1024), BENCH_ROUNDS (3), BENCH_STREAMS (20), BENCH_ITEMS (5000), BENCH_PAGES (1000),
# BENCH_CLIENTS (50), BENCH_DIR (kept; with BENCH_REUSE=1 the mirror a run left there is used again),
# BENCH_NGINX_WORKERS (auto: one per core), BENCH_BIN_DIR (the mediasync there, no build), BENCH_LISTINGS_ONLY=1
# (only 3 and 4).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MIB=${BENCH_SIZE_MIB:-1024}
ROUNDS=${BENCH_ROUNDS:-3}
STREAMS=${BENCH_STREAMS:-20}
ITEMS=${BENCH_ITEMS:-5000}
BUILD=${BENCH_BUILD:-release}

log() { echo "bench-serve: $*" >&2; }

if ! command -v nginx >/dev/null 2>&1; then
    log "installing nginx-light"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi
command -v curl >/dev/null || { log "curl is needed"; exit 1; }

if [ -n "${BENCH_BIN_DIR:-}" ]; then
    BIN="$BENCH_BIN_DIR/mediasync"
else
    swift build -c "$BUILD" --product mediasync >&2
    BIN="$(swift build -c "$BUILD" --show-bin-path)/mediasync"
fi
PAGES=${BENCH_PAGES:-1000}
CLIENTS=${BENCH_CLIENTS:-50}
LISTINGS_ONLY=${BENCH_LISTINGS_ONLY:-0}

DIR=${BENCH_DIR:-$(mktemp -d /tmp/bench-serve.XXXXXX)}
SERVE_PID=""
NGINX_CONF="$DIR/nginx/nginx.conf"
cleanup() {
    [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null || true
    [ -f "$DIR/nginx/nginx.pid" ] && nginx -c "$NGINX_CONF" -p "$DIR/nginx/" -s quit 2>/dev/null || true
    [ -z "${BENCH_DIR:-}" ] && rm -rf "$DIR"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The mirror: one big movie and ITEMS small ones, each with its metadata.json.
if [ "${BENCH_REUSE:-0}" = 1 ] && [ -f "$DIR/root/big" ]; then
    log "using the mirror already under $DIR/root"
else
log "writing a ${SIZE_MIB} MiB movie and $ITEMS small ones under $DIR/root"
python3 - "$DIR/root" "$SIZE_MIB" "$ITEMS" <<'PY'
import json, os, sys
root, size_mib, items = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def movie(index, size):
    mid = "%032x" % (0xbe4c0000000000000000000000000000 + index)
    folder = os.path.join(root, "Downloads", mid)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "%s-%s.mkv" % (mid, mid))
    with open(path, "wb") as out:
        chunk = os.urandom(min(size, 1 << 20))
        left = size
        while left > 0:
            out.write(chunk[:min(left, len(chunk))])
            left -= len(chunk)
    name = "Movie %05d" % index
    item = {"Id": mid, "Name": name, "SortName": name.lower(), "Type": "Movie", "ServerId": "bench",
            "DateCreated": "2026-01-01T00:00:%02d.0000000Z" % (index % 60), "RunTimeTicks": 72000000000,
            "ProductionYear": 2000 + index % 25,
            "MediaSources": [{"Id": mid, "Container": "mkv", "Size": size, "Protocol": "File",
                              "MediaStreams": [{"Type": "Video", "Index": 0, "Codec": "h264"}]}],
            "UserData": {"Played": False, "PlaybackPositionTicks": 0, "PlayCount": 0, "IsFavorite": False}}
    meta = {"itemId": mid, "itemType": "Movie", "displayTitle": name, "item": item,
            "versions": [{"versionId": mid, "container": "mkv", "isStatic": True, "mediaSourceId": mid,
                          "downloadDate": "2026-01-01T00:00:00Z", "taskId": "bench"}]}
    with open(os.path.join(folder, "metadata.json"), "w") as out:
        json.dump(meta, out)
    return mid, path
big, path = movie(0, size_mib << 20)
for index in range(1, items + 1):
    movie(index, 1024)
with open(os.path.join(root, "big"), "w") as out:
    out.write(big + "\n" + path + "\n")
PY
fi
BIG_ID=$(sed -n 1p "$DIR/root/big")
BIG_PATH=$(sed -n 2p "$DIR/root/big")
export MEDIASYNC_CONFIG_DIR="$DIR/config"
reindex_start=$(date +%s%N)
"$BIN" reindex --root "$DIR/root" >/dev/null
echo "reindex of $((ITEMS + 1)) movies: $(python3 -c "print('%.1f' % (($(date +%s%N) - $reindex_start) / 1e9))") s"
printf 'bench\n' | "$BIN" serve --set-password --user bench >/dev/null

SERVE_PORT=$(free_port)
"$BIN" serve --root "$DIR/root" --listen "127.0.0.1:$SERVE_PORT" >"$DIR/serve.out" 2>&1 &
SERVE_PID=$!
for _ in $(seq 1 600); do grep -q Serving "$DIR/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q Serving "$DIR/serve.out" || { log "serve did not start: $(cat "$DIR/serve.out")"; exit 1; }
read -r TOKEN USER_ID < <(curl -s -X POST "http://127.0.0.1:$SERVE_PORT/Users/AuthenticateByName" \
    -H 'Content-Type: application/json' \
    -H 'Authorization: MediaBrowser Client="bench", Device="bench", DeviceId="bench", Version="1"' \
    -d '{"Username":"bench","Pw":"bench"}' \
    | python3 -c 'import json,sys; a = json.load(sys.stdin); print(a["AccessToken"], a["User"]["Id"])')
SERVE_URL="http://127.0.0.1:$SERVE_PORT/Videos/$BIG_ID/stream?static=true&api_key=$TOKEN"

NGINX_PORT=$(free_port)
mkdir -p "$DIR/nginx/tmp"
# As many workers as cores (nginx's "auto"), as `serve` runs one event loop per core.
nginx_config() { # the location block's contents
    cat >"$NGINX_CONF" <<NGINX
worker_processes ${BENCH_NGINX_WORKERS:-auto};
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    client_body_temp_path $DIR/nginx/tmp;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / { $1 }
    }
}
NGINX
}
nginx_config "root $(dirname "$BIG_PATH");"
# nginx's workers run as another user: the tree must be readable to them.
chmod -R a+rX "$DIR"
nginx -c "$NGINX_CONF" -p "$DIR/nginx/"
NGINX_URL="http://127.0.0.1:$NGINX_PORT/$(basename "$BIG_PATH")"
curl -s -o /dev/null "$NGINX_URL"   # page cache warm for both

mbps() { python3 -c "import sys; print('%.0f' % (float(sys.argv[1]) / 1048576))" "$1"; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

if [ "$LISTINGS_ONLY" != 1 ]; then
log "1 GiB whole: $ROUNDS rounds each, alternating"
serve_rates=(); nginx_rates=()
for _ in $(seq 1 "$ROUNDS"); do
    serve_rates+=("$(curl -s -o /dev/null -w '%{speed_download}' "$SERVE_URL")")
    nginx_rates+=("$(curl -s -o /dev/null -w '%{speed_download}' "$NGINX_URL")")
done
S1=$(median "${serve_rates[@]}"); N1=$(median "${nginx_rates[@]}")
echo "single stream of ${SIZE_MIB} MiB: serve $(mbps "$S1") MiB/s, nginx $(mbps "$N1") MiB/s," \
    "serve/nginx $(python3 -c "print('%.2f' % ($S1 / $N1))")"
echo "serve's peak RSS after single streams: $(grep VmHWM /proc/$SERVE_PID/status | awk '{print $2, $3}')"

parallel() { # url → aggregate bytes/s
    local start end
    start=$(date +%s%N)
    for _ in $(seq 1 "$STREAMS"); do curl -s -o /dev/null "$1" & done
    wait
    end=$(date +%s%N)
    python3 -c "print($STREAMS * ${SIZE_MIB} * 1048576 / (($end - $start) / 1e9))"
}
log "$STREAMS streams at once"
SP=$(parallel "$SERVE_URL"); NP=$(parallel "$NGINX_URL")
echo "$STREAMS streams at once: serve $(mbps "$SP") MiB/s in all, nginx $(mbps "$NP") MiB/s," \
    "serve/nginx $(python3 -c "print('%.2f' % ($SP / $NP))")"
echo "serve's peak RSS: $(grep VmHWM /proc/$SERVE_PID/status | awk '{print $2, $3}')"

fi

log "/Items pages over $((ITEMS + 1)) movies"
times=()
total_start=$(date +%s%N)
for start in $(seq 0 100 "$ITEMS"); do
    times+=("$(curl -s -o /dev/null -w '%{time_total}' \
        "http://127.0.0.1:$SERVE_PORT/Items?Recursive=true&IncludeItemTypes=Movie&SortBy=SortName&StartIndex=$start&Limit=100&api_key=$TOKEN")")
done
total_end=$(date +%s%N)
echo "/Items, $((ITEMS + 1)) movies in pages of 100: ${#times[@]} pages in" \
    "$(python3 -c "print('%.2f' % (($total_end - $total_start) / 1e9))") s, median page" \
    "$(python3 -c "print('%.1f' % (float('$(median "${times[@]}")') * 1000))") ms"

# 4. Pages as Jellyfin Web asks for a movie library, many clients at once. The answers `serve` gives are saved as
# files first (one per StartIndex); nginx then serves those very bytes to the same curl command.
VIEW_ID=$(curl -s "http://127.0.0.1:$SERVE_PORT/UserViews?userId=$USER_ID&api_key=$TOKEN" \
    | python3 -c 'import json,sys; print(next(v["Id"] for v in json.load(sys.stdin)["Items"] if v.get("CollectionType") == "movies"))')
page_query() { # StartIndex → the query Jellyfin Web sends for a page of the movies library
    echo "SortBy=SortName,ProductionYear&SortOrder=Ascending&IncludeItemTypes=Movie&Recursive=true&Fields=PrimaryImageAspectRatio,MediaSourceCount&ImageTypeLimit=1&EnableImageTypes=Primary,Backdrop,Banner,Thumb&StartIndex=$1&Limit=100&ParentId=$VIEW_ID"
}
mkdir -p "$DIR/pages"
page_count=$(( (ITEMS + 1 + 99) / 100 ))
for page in $(seq 0 $((page_count - 1))); do
    curl -s -o "$DIR/pages/$page.json" \
        "http://127.0.0.1:$SERVE_PORT/Users/$USER_ID/Items?$(page_query $((page * 100)))&api_key=$TOKEN"
done
chmod -R a+rX "$DIR/pages"
nginx_config "root $DIR/pages; default_type application/json;"
nginx -c "$NGINX_CONF" -p "$DIR/nginx/" -s reload
sleep 1
: >"$DIR/serve-pages.cfg"
: >"$DIR/nginx-pages.cfg"
for n in $(seq 0 $((PAGES - 1))); do
    page=$((n % page_count))
    printf 'url = "http://127.0.0.1:%s/Users/%s/Items?%s&api_key=%s"\noutput = "/dev/null"\n' \
        "$SERVE_PORT" "$USER_ID" "$(page_query $((page * 100)))" "$TOKEN" >>"$DIR/serve-pages.cfg"
    printf 'url = "http://127.0.0.1:%s/%s.json"\noutput = "/dev/null"\n' "$NGINX_PORT" "$page" >>"$DIR/nginx-pages.cfg"
done
pages_at_once() { # curl config → wall seconds
    local start end
    start=$(date +%s%N)
    curl -s --no-progress-meter --parallel --parallel-max "$CLIENTS" -K "$1" 2>/dev/null
    end=$(date +%s%N)
    python3 -c "print('%.3f' % (($end - $start) / 1e9))"
}
serve_walls=(); nginx_walls=()
for _ in $(seq 1 "$ROUNDS"); do
    serve_walls+=("$(pages_at_once "$DIR/serve-pages.cfg")")
    nginx_walls+=("$(pages_at_once "$DIR/nginx-pages.cfg")")
done
SW=$(median "${serve_walls[@]}"); NW=$(median "${nginx_walls[@]}")
echo "$PAGES pages of 100 /Users/{id}/Items ($((ITEMS + 1)) movies, $(du -sk "$DIR/pages" | cut -f1) KiB of answers)," \
    "$CLIENTS clients at once: serve $SW s, nginx $NW s (the same bytes from files), serve/nginx" \
    "$(python3 -c "print('%.1f' % ($SW / $NW))")x"
echo "serve's peak RSS after the pages: $(grep VmHWM /proc/$SERVE_PID/status | awk '{print $2, $3}')"
