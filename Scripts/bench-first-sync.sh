#!/usr/bin/env bash
# bench-first-sync.sh — the first sync of a big library against curl fetching the same files (docs/benchmarks.md).
#
# The release test server with --movies 2000 --series 200 --media-size 2000 (about 15,000 files, 12,400 of them
# downloads), both libraries selected. Each round, alternating the two tools:
#   mediasync  `sync` into an empty root (the Downloads tree and the index removed; the sign-in and the selections
#              kept), --no-durable unless DURABLE=1;
#   curl       `curl --parallel --parallel-max 4 -K LIST` of the same download URLs (read from the test server's
#              request log of mediasync's first round), each into its own file, with the same Authorization header.
# Also, each round, `mediasync get` of the same URLs into one folder: the transfer engine alone, without the
# listing, plan, index and metadata, which splits mediasync's time into the engine's and the mirror's.
# Reports the median wall time of each and the ratio, user+system CPU of each (and of the test server while each
# ran: the three share the cores), mediasync's peak RSS, and (one run
# under `strace -c -f`, not timed) the system calls per placed file.
#
# Options: --movies N, --series N, --media-size BYTES, --rounds N, --music-artists N, --albums-per-artist N,
# --tracks-per-album N (or the environment variables of the same name).
# 100,000 items, planning and bookkeeping only: --movies 50000 --series 5556 --media-size 16.
# 20,000 tracks (the music library selected too): --movies 0 --series 0 --music-artists 100 (20 albums of 10 each).
# Environment: ROUNDS (default 5), MOVIES (2000), SERIES (200), MEDIA_SIZE (2000), DURABLE (0), SWIFT_SCRATCH
# (default <repo>/.build-benchsync), MEDIASYNC_BIN_DIR (use these binaries, no build), BENCH_KEEP=1 (keep scratch),
# STRACE=0 (skip the system-call count).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-first-sync
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_size_options "$@"
ROUNDS=${ROUNDS:-5}
MOVIES=${MOVIES:-2000}
SERIES=${SERIES:-200}
DURABLE=${DURABLE:-0}
STRACE=${STRACE:-1}
ms_bench_defaults time curl python3 strace

ms_release_binaries "$SWIFT_SCRATCH"
ms_mirror_scratch
ms_start_library_server --request-log "$work/requests.jsonl"
ms_log "server $base"
ms_login_and_select_libraries

durable=(--no-durable)
[ "$DURABLE" = 1 ] && durable=()

# The selections live in the root's index: each round starts from a copy of the root as it was after `select`.
# Each round writes into folders of its own and nothing is deleted before the end: deleting a 15,000-file tree
# between rounds leaves ext4 with recently freed inodes, which it then scans past on every file and folder created
# (`recently_deleted` in the inode allocator was most of the kernel time when rounds reused one folder).
cp -a "$MEDIASYNC_ROOT" "$work/root-template"
empty_root() { # $1: round folder name
    mkdir -p "$work/$1"
    export MEDIASYNC_ROOT="$work/$1/mirror"
    cp -a "$work/root-template" "$MEDIASYNC_ROOT"
    curl_out="$work/$1/curl-out"
    mkdir -p "$curl_out"
}

# The test server's user+system CPU so far, in seconds: both tools share the machine's cores with it.
server_cpu() { awk '{printf "%.2f\n", ($14 + $15) / 100}' "/proc/$server/stat"; }

run_mediasync() { # $1: round; prints "wall_ms cpu_s rss_kb server_cpu_s"
    empty_root "ms-$1"
    local t0 rc s0
    s0=$(server_cpu)
    t0=$(ms_now_ns)
    set +e
    /usr/bin/time -f '%U %S %M' -o "$work/ms.time" "$ms" sync "${durable[@]}" --json --quiet \
        >"$work/ms-$1.json" 2>"$work/ms-$1.err"
    rc=$?
    set -e
    local wall
    wall=$(ms_ms_since "$t0")
    [ "$rc" = 0 ] || { tail -5 "$work/ms-$1.err" >&2; ms_log "sync exited with $rc"; exit 1; }
    awk -v w="$wall" -v s="$(awk -v a="$s0" -v b="$(server_cpu)" 'BEGIN {print b - a}')" \
        '{printf "%d %.2f %d %.2f\n", w, $1 + $2, $3, s}' "$work/ms.time"
}

make_curl_list() {
    python3 - "$work/requests.jsonl" "$base" "$work/curl.cfg" "$MEDIASYNC_CONFIG_DIR/credentials.json" <<'PY'
import json, re, sys
log, base, cfg, credentials = sys.argv[1:5]
token = json.load(open(credentials))["accessToken"]
paths = []
seen = set()
for line in open(log):
    r = json.loads(line)
    p = r["path"]
    if r["method"] == "GET" and r["status"] == 200 and re.search(r"/Download$|/Images/|/Subtitles/|/Lyrics$", p) and p not in seen:
        seen.add(p)
        paths.append(p)
with open(cfg, "w") as f:
    f.write('header = "Authorization: MediaBrowser Token=\\"%s\\""\n' % token)
    for i, p in enumerate(paths):
        f.write('url = "%s%s"\noutput = "%05d"\n' % (base, p, i))
# The same list for `mediasync get`: URL, a tab, the name to save it as.
with open(cfg + ".get", "w") as f:
    for i, p in enumerate(paths):
        f.write("%s%s\t%05d\n" % (base, p, i))
with open(cfg + ".token", "w") as f:
    f.write(token)
print(len(paths))
PY
}

run_curl() { # $1: round; prints "wall_ms cpu_s server_cpu_s"
    empty_root "curl-$1"
    local t0 s0
    s0=$(server_cpu)
    t0=$(ms_now_ns)
    (cd "$curl_out" && /usr/bin/time -f '%U %S' -o "$work/curl.time" \
        curl -s --fail --parallel --parallel-max 4 -K "$work/curl.cfg" 2>/dev/null)
    local wall
    wall=$(ms_ms_since "$t0")
    awk -v w="$wall" -v s="$(awk -v a="$s0" -v b="$(server_cpu)" 'BEGIN {print b - a}')" \
        '{printf "%d %.2f %.2f\n", w, $1 + $2, s}' "$work/curl.time"
}

# The transfer engine alone: `mediasync get` of the same URLs into one folder (no listing, plan, index or metadata),
# which splits mediasync's time into the engine's and the mirror's.
run_get() { # $1: round; prints "wall_ms cpu_s server_cpu_s"
    empty_root "get-$1"
    local t0 s0
    s0=$(server_cpu)
    t0=$(ms_now_ns)
    /usr/bin/time -f '%U %S' -o "$work/get.time" "$ms" get --input-file "$work/curl.cfg.get" \
        --output-dir "$curl_out" "${durable[@]}" --quiet \
        --header "Authorization: MediaBrowser Token=\"$(cat "$work/curl.cfg.token")\"" >/dev/null 2>"$work/get.err" ||
        { tail -3 "$work/get.err" >&2; ms_log "get failed"; exit 1; }
    local wall
    wall=$(ms_ms_since "$t0")
    awk -v w="$wall" -v s="$(awk -v a="$s0" -v b="$(server_cpu)" 'BEGIN {print b - a}')" \
        '{printf "%d %.2f %.2f\n", w, $1 + $2, s}' "$work/get.time"
}

ms_wall=(); ms_cpu=(); ms_rss=(); curl_wall=(); curl_cpu=(); ms_server=(); curl_server=(); get_wall=(); get_cpu=()
urls=""
for round in $(seq 1 "$ROUNDS"); do
    read -r w c r sc < <(run_mediasync "$round")
    ms_wall+=("$w"); ms_cpu+=("$c"); ms_rss+=("$r"); ms_server+=("$sc")
    if [ -z "$urls" ]; then
        urls=$(make_curl_list)
        placed=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["downloaded"]), len(r["written"]))' "$work/ms-1.json")
        files=$(find "$work/ms-1/mirror/Downloads" -type f | wc -l)
        ms_log "mediasync placed $files files (downloaded, written: $placed); curl will fetch $urls URLs"
    fi
    read -r cw cc csc < <(run_curl "$round")
    curl_wall+=("$cw"); curl_cpu+=("$cc"); curl_server+=("$csc")
    got=$(find "$work/curl-$round/curl-out" -type f | wc -l)
    [ "$got" = "$urls" ] || { ms_log "curl fetched $got of $urls files"; exit 1; }
    read -r gw gc gsc < <(run_get "$round")
    get_wall+=("$gw"); get_cpu+=("$gc")
    ms_log "round $round: mediasync ${w} ms (cpu ${c} s, rss ${r} KB, server cpu ${sc} s), curl ${cw} ms (cpu ${cc} s, server cpu ${csc} s), mediasync get ${gw} ms (cpu ${gc} s, server cpu ${gsc} s)"
done

syscalls_line="not measured (STRACE=0)"
if [ "$STRACE" = 1 ]; then
    empty_root strace
    strace -c -f -o "$work/strace-c.txt" "$ms" sync "${durable[@]}" --json --quiet >"$work/ms-strace.json" 2>/dev/null
    placed_files=$(find "$MEDIASYNC_ROOT/Downloads" -type f | wc -l)
    total_calls=$(awk '$NF == "total" {print $(NF-2)}' "$work/strace-c.txt")
    top=$(awk 'NR > 2 && $1 ~ /^[0-9.]+$/ && $NF != "total" {print $NF "=" $4}' "$work/strace-c.txt" | head -8 | tr '\n' ' ')
    syscalls_line="$total_calls calls for $placed_files placed files = $(awk -v a="$total_calls" -v b="$placed_files" 'BEGIN {printf "%.1f", a / b}') per file (top: $top)"
fi

mw=$(ms_median "${ms_wall[@]}"); cw=$(ms_median "${curl_wall[@]}")
mc=$(printf '%s\n' "${ms_cpu[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
cc=$(printf '%s\n' "${curl_cpu[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
msc=$(printf '%s\n' "${ms_server[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
csc=$(printf '%s\n' "${curl_server[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
rss=$(printf '%s\n' "${ms_rss[@]}" | sort -n | tail -1)
echo
echo "== first sync: mediasync vs curl --parallel --parallel-max 4 ($ROUNDS rounds, alternating) =="
printf '%-28s %s\n' "library" "--movies $MOVIES --series $SERIES --music-artists $MUSIC_ARTISTS ($ALBUMS_PER_ARTIST x $TRACKS_PER_ALBUM) --media-size $MEDIA_SIZE; $files files placed, $urls downloads"
printf '%-28s %s\n' "mediasync wall (ms)" "${ms_wall[*]}  median $(ms_secs "$mw") s; cpu median $mc s (the server's $msc s); peak RSS $rss KB"
printf '%-28s %s\n' "curl wall (ms)" "${curl_wall[*]}  median $(ms_secs "$cw") s; cpu median $cc s (the server's $csc s)"
gw=$(ms_median "${get_wall[@]}")
gc=$(printf '%s\n' "${get_cpu[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
printf '%-28s %s\n' "mediasync get (engine only)" "${get_wall[*]}  median $(ms_secs "$gw") s; cpu median $gc s; $(awk -v a="$gw" -v b="$cw" 'BEGIN {printf "%.2f", a / b}')x curl"
printf '%-28s %s\n' "system calls" "$syscalls_line"
echo "RESULT first_sync_ratio=$(awk -v a="$mw" -v b="$cw" 'BEGIN {printf "%.2f", a / b}') (goal <= 1.5) mediasync_s=$(ms_secs "$mw") curl_s=$(ms_secs "$cw") cpu_ratio=$(awk -v a="$mc" -v b="$cc" 'BEGIN {printf "%.1f", (b > 0) ? a / b : 0}')"
