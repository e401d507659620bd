#!/usr/bin/env bash
# bench-transfer.sh — compare mediasync's transfer engine with the curl CLI.
#
# Serves generated files from a private nginx on 127.0.0.1 and downloads them
# with curl and with `mediasync get`, alternating the tools round by round, and
# reports the median throughput (MB/s, MB = 10^6 bytes) of each tool, the ratio
# mediasync/anchor and mediasync's peak RSS.
#
# Cases:
#   1. one 1 GiB file            anchor: curl -s -o FILE URL
#   2. 2,000 x 200 KiB files     anchor: faster of `curl -s -K cfg` (one process,
#                                sequential) and `curl -s --parallel
#                                --parallel-max 8 -K cfg`; mediasync --concurrency 8
#   3. 20 x 50 MiB files         anchor: curl -s --parallel --parallel-max 4 -K cfg;
#                                mediasync --concurrency 4
# Modes:
#   durable      mediasync default (fsync each file + the directory);
#                anchor = curl followed by `sync FILE... DIR`, timed together.
#   non-durable  mediasync --no-durable; anchor = plain curl.
# `cp -r SRC DST` (no sync) of the same files is timed as the file-system ceiling.
#
# Environment:
#   MEDIASYNC_BIN   use this binary instead of building (swift build -c release)
#   BENCH_DIR       scratch dir (default: mktemp -d; removed on exit). A given
#                   BENCH_DIR is kept and its generated files are reused.
#   BENCH_QUICK=1   small sizes and 2 rounds, for a smoke test (~1 minute)
#   ROUNDS          timed rounds per case and mode (default 5; quick: 2)
#   BENCH_CASES     which cases to run, e.g. "1 3" (default "1 2 3")
#   BENCH_MODES     which modes, e.g. "non-durable" (default "durable non-durable")
#   RUN_TIMEOUT     seconds before a single run is killed and the bench fails (600)
#   BENCH_NGINX_WORKERS  nginx worker_processes (default 1)
#   BENCH_KEEP=1    keep the scratch dir even when it was created by the script
#
# Output: tables on stdout, followed by machine-readable lines
#   RESULT case=1GiB mode=durable mediasync=... anchor=... ratio=... ...
# Progress goes to stderr.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)

BENCH_QUICK=${BENCH_QUICK:-0}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
BENCH_CASES=${BENCH_CASES:-1 2 3}
BENCH_MODES=${BENCH_MODES:-durable non-durable}
BENCH_NGINX_WORKERS=${BENCH_NGINX_WORKERS:-1}
BENCH_KEEP=${BENCH_KEEP:-0}

KiB=1024
MiB=$((1024 * 1024))
GiB=$((1024 * MiB))
if [[ $BENCH_QUICK == 1 ]]; then
    BIG_SIZE=$((64 * MiB))
    SMALL_N=200; SMALL_SIZE=$((200 * KiB))
    MED_N=4; MED_SIZE=$((8 * MiB))
    ROUNDS=${ROUNDS:-2}
else
    BIG_SIZE=$GiB
    SMALL_N=2000; SMALL_SIZE=$((200 * KiB))
    MED_N=20; MED_SIZE=$((50 * MiB))
    ROUNDS=${ROUNDS:-5}
fi

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { printf 'bench-transfer: error: %s\n' "$*" >&2; exit 1; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $RUN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "RUN_TIMEOUT must be a positive integer (got '$RUN_TIMEOUT')"
for c in $BENCH_CASES; do [[ $c == [123] ]] || die "BENCH_CASES may only contain 1, 2, 3 (got '$c')"; done
for m in $BENCH_MODES; do [[ $m == durable || $m == non-durable ]] || die "BENCH_MODES may only contain durable, non-durable (got '$m')"; done

# --------------------------------------------------------------------------
# Dependencies
# --------------------------------------------------------------------------
PATH="$PATH:/usr/sbin:/sbin"
SUDO=()
if [[ $EUID -ne 0 ]]; then SUDO=(sudo); fi

install_missing() {
    local -a pkgs=()
    command -v curl >/dev/null 2>&1 || pkgs+=(curl)
    command -v nginx >/dev/null 2>&1 || pkgs+=(nginx-light)
    [[ -x /usr/bin/time ]] || pkgs+=(time)
    if ((${#pkgs[@]})); then
        command -v apt-get >/dev/null 2>&1 || die "missing packages (${pkgs[*]}) and no apt-get to install them"
        if ((${#SUDO[@]})); then
            command -v sudo >/dev/null 2>&1 || die "missing packages (${pkgs[*]}); not root and no sudo"
        fi
        log "installing: ${pkgs[*]}"
        "${SUDO[@]}" apt-get update >&2 || die "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y "${pkgs[@]}" >&2 \
            || die "apt-get install ${pkgs[*]} failed"
    fi
    command -v curl >/dev/null 2>&1 || die "curl not found after install"
    command -v nginx >/dev/null 2>&1 || die "nginx not found after install (package nginx-light)"
    [[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time, package 'time') not found after install"
    /usr/bin/time -f %M -o /dev/null true 2>/dev/null || die "/usr/bin/time is not GNU time (needs -f %M)"
    local t
    for t in timeout sync diff split head awk sort find mktemp df stat; do
        command -v "$t" >/dev/null 2>&1 || die "required tool '$t' not found (coreutils/diffutils/findutils/gawk)"
    done
}
install_missing

# --------------------------------------------------------------------------
# mediasync binary
# --------------------------------------------------------------------------
if [[ -n ${MEDIASYNC_BIN:-} ]]; then
    [[ -x $MEDIASYNC_BIN ]] || die "MEDIASYNC_BIN=$MEDIASYNC_BIN is not an executable file"
else
    command -v swift >/dev/null 2>&1 || die "swift not found (set MEDIASYNC_BIN to use a prebuilt binary)"
    log "building mediasync (release) in $REPO_DIR"
    (cd "$REPO_DIR" && swift build -c release --product mediasync >&2) || die "swift build -c release --product mediasync failed"
    bin_dir=$(cd "$REPO_DIR" && swift build -c release --show-bin-path) || die "swift build --show-bin-path failed"
    MEDIASYNC_BIN="$bin_dir/mediasync"
    [[ -x $MEDIASYNC_BIN ]] || die "built binary not found at $MEDIASYNC_BIN"
fi
MEDIASYNC_BIN=$(cd "$(dirname "$MEDIASYNC_BIN")" && pwd)/$(basename "$MEDIASYNC_BIN")

# --------------------------------------------------------------------------
# Scratch dir, cleanup
# --------------------------------------------------------------------------
CREATED_DIR=0
if [[ -z ${BENCH_DIR:-} ]]; then
    BENCH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bench-transfer.XXXXXX")
    CREATED_DIR=1
else
    mkdir -p "$BENCH_DIR"
fi
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
SRC="$BENCH_DIR/src"
OUT="$BENCH_DIR/out"
RES="$BENCH_DIR/results"
NGX="$BENCH_DIR/nginx"
NGINX_PID_FILE="$NGX/nginx.pid"
CUR_JOB=""

stop_nginx() {
    [[ -f $NGINX_PID_FILE ]] || return 0
    local pid
    pid=$(cat "$NGINX_PID_FILE" 2>/dev/null || true)
    [[ $pid =~ ^[0-9]+$ ]] || { rm -f "$NGINX_PID_FILE"; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "nginx (pid $pid) did not stop; sending KILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$NGINX_PID_FILE"
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n $CUR_JOB ]]; then
        # `timeout` runs in its own process group (pgid = its pid): end that group.
        kill -TERM -- "-$CUR_JOB" 2>/dev/null || kill -TERM "$CUR_JOB" 2>/dev/null || true
        wait "$CUR_JOB" 2>/dev/null || true
    fi
    stop_nginx
    rm -rf -- "$OUT" 2>/dev/null || true
    if [[ $CREATED_DIR == 1 && $BENCH_KEEP != 1 ]]; then
        rm -rf -- "$BENCH_DIR" 2>/dev/null || true
    elif [[ -d $BENCH_DIR ]]; then
        log "scratch dir kept: $BENCH_DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$SRC" "$RES" "$NGX"
rm -rf -- "$OUT" "${RES:?}"/*
# nginx workers may run as another user: make the tree traversable/readable.
chmod 755 "$BENCH_DIR" "$SRC"

# --------------------------------------------------------------------------
# Environment
# --------------------------------------------------------------------------
human_size() { # bytes -> "1GiB" / "200KiB" / "8MiB"
    local b=$1
    if ((b % GiB == 0)); then echo "$((b / GiB))GiB"
    elif ((b % MiB == 0)); then echo "$((b / MiB))MiB"
    elif ((b % KiB == 0)); then echo "$((b / KiB))KiB"
    else echo "${b}B"; fi
}

echo "=== bench-transfer: mediasync vs curl ==="
echo "date:        $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
echo "host:        $(uname -n)"
echo "kernel:      $(uname -srm)"
echo "nproc:       $(nproc)"
echo "cpu:         $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || echo unknown)"
echo "memory:      $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo 2>/dev/null || echo unknown)"
echo "curl:        $(curl --version | head -n 1)"
echo "nginx:       $(nginx -v 2>&1 | head -n 1)"
echo "mediasync:   $MEDIASYNC_BIN"
echo "bench dir:   $BENCH_DIR ($(stat -f -c %T "$BENCH_DIR"), $(df -P "$BENCH_DIR" | awk 'NR==2 {print $1}'))"
echo "rounds:      $ROUNDS (alternating order), quick=$BENCH_QUICK, cases: $BENCH_CASES, modes: $BENCH_MODES"
echo "sizes:       case1 1 x $(human_size $BIG_SIZE); case2 $SMALL_N x $(human_size $SMALL_SIZE); case3 $MED_N x $(human_size $MED_SIZE)"
echo "units:       MB/s with MB = 10^6 bytes; RSS in MB (10^6 bytes) from /usr/bin/time -f %M"
echo
if [[ $(stat -f -c %T "$BENCH_DIR") == tmpfs ]]; then
    log "WARNING: $BENCH_DIR is on tmpfs; fsync is a no-op there, durable numbers are meaningless"
fi

# --------------------------------------------------------------------------
# Test data (generated once; reused when BENCH_DIR is given and matches)
# --------------------------------------------------------------------------
STAMP="$SRC/.generated"
want_stamp="big=$BIG_SIZE small=${SMALL_N}x$SMALL_SIZE med=${MED_N}x$MED_SIZE"

gen_files() { # dir count size prefix
    local dir=$1 n=$2 size=$3 prefix=$4
    rm -rf -- "$dir"
    mkdir -p "$dir"
    chmod 755 "$dir"
    # One random stream cut into equal pieces: fast, one process per case.
    head -c $((n * size)) /dev/urandom | (cd "$dir" && split -b "$size" -a 4 -d --additional-suffix=.bin - "$prefix")
    local got
    got=$(find "$dir" -type f -name '*.bin' | wc -l)
    ((got == n)) || die "generated $got files in $dir, expected $n"
    chmod 644 "$dir"/*.bin
}

if [[ -f $STAMP && $(cat "$STAMP") == "$want_stamp" ]]; then
    log "reusing generated files in $SRC"
else
    total=$((BIG_SIZE + SMALL_N * SMALL_SIZE + MED_N * MED_SIZE))
    largest=$BIG_SIZE
    ((MED_N * MED_SIZE > largest)) && largest=$((MED_N * MED_SIZE))
    ((SMALL_N * SMALL_SIZE > largest)) && largest=$((SMALL_N * SMALL_SIZE))
    need_kb=$(((total + largest) / 1024 * 11 / 10))
    avail_kb=$(df -Pk "$BENCH_DIR" | awk 'NR==2 {print $4}')
    ((avail_kb > need_kb)) || die "not enough space in $BENCH_DIR: need ~$((need_kb / 1024)) MiB, have $((avail_kb / 1024)) MiB"
    rm -f "$STAMP"
    log "generating test data in $SRC ($((total / MiB)) MiB, not timed)"
    mkdir -p "$SRC/big"; chmod 755 "$SRC/big"
    head -c "$BIG_SIZE" /dev/urandom >"$SRC/big/big.bin"
    chmod 644 "$SRC/big/big.bin"
    gen_files "$SRC/small" "$SMALL_N" "$SMALL_SIZE" s
    gen_files "$SRC/med" "$MED_N" "$MED_SIZE" m
    sync
    echo "$want_stamp" >"$STAMP"
fi
# Warm the page cache so every tool reads the source from memory.
cat "$SRC"/big/*.bin "$SRC"/small/*.bin "$SRC"/med/*.bin >/dev/null

# --------------------------------------------------------------------------
# nginx on 127.0.0.1:<free port>
# --------------------------------------------------------------------------
pick_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' && return 0
    fi
    local p i
    for ((i = 0; i < 50; i++)); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
    done
    return 1
}

write_nginx_conf() { # port
    local port=$1 user_line="" temp_lines="" m
    [[ $EUID -eq 0 ]] && user_line="user root;"
    # Temp paths default to compile-time dirs under /var/lib/nginx: keep them private.
    temp_lines="client_body_temp_path $NGX/tmp/body; proxy_temp_path $NGX/tmp/proxy;"
    for m in fastcgi uwsgi scgi; do
        nginx -V 2>&1 | grep -q -- "--without-http_${m}_module" || temp_lines+=" ${m}_temp_path $NGX/tmp/$m;"
    done
    mkdir -p "$NGX/tmp"
    cat >"$NGX/nginx.conf" <<EOF
# generated by Scripts/bench-transfer.sh
$user_line
daemon on;
master_process on;
worker_processes $BENCH_NGINX_WORKERS;
pid $NGINX_PID_FILE;
error_log $NGX/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 100000;
    keepalive_timeout 60;
    types { }
    default_type application/octet-stream;
    $temp_lines
    server {
        listen 127.0.0.1:$port;
        server_name localhost;
        root $SRC;
        location / { }
    }
}
EOF
}

start_nginx() {
    local attempt port code i
    for ((attempt = 1; attempt <= 5; attempt++)); do
        port=$(pick_port) || die "could not find a free TCP port on 127.0.0.1"
        write_nginx_conf "$port"
        nginx -t -q -e "$NGX/error.log" -c "$NGX/nginx.conf" -p "$NGX/" 2>"$NGX/start.err" \
            || die "nginx config test failed: $(cat "$NGX/start.err" "$NGX/error.log" 2>/dev/null | tail -n 5)"
        if nginx -e "$NGX/error.log" -c "$NGX/nginx.conf" -p "$NGX/" 2>"$NGX/start.err"; then
            for ((i = 0; i < 50; i++)); do
                code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/big/big.bin" -r 0-0 || true)
                if [[ $code == 206 || $code == 200 ]]; then
                    PORT=$port
                    BASE_URL="http://127.0.0.1:$PORT"
                    log "nginx up on $BASE_URL (pid $(cat "$NGINX_PID_FILE"))"
                    return 0
                fi
                sleep 0.1
            done
            stop_nginx
            die "nginx started but does not serve $SRC (last HTTP code '$code'); see $NGX/error.log: $(tail -n 3 "$NGX/error.log" 2>/dev/null)"
        fi
        if grep -q 'Address already in use' "$NGX/start.err" "$NGX/error.log" 2>/dev/null; then
            log "port $port taken, retrying"
            continue
        fi
        die "nginx failed to start: $(cat "$NGX/start.err" 2>/dev/null | tail -n 5)"
    done
    die "nginx could not bind a port after 5 attempts"
}
start_nginx

# --------------------------------------------------------------------------
# Running and timing
# --------------------------------------------------------------------------
now_us() { # microseconds since the epoch, without forking
    local t=${EPOCHREALTIME/[.,]/}
    if [[ -n $t && $t =~ ^[0-9]+$ ]]; then echo "$t"; else echo $(($(date +%s%N) / 1000)); fi
}

# Per-case settings (set by setup_case).
CASE_ID=""; CASE_LABEL=""; CASE_SRC=""; CASE_BYTES=0; CASE_COUNT=0
CASE_LIST=""; CASE_CFG=""; CASE_TOOLS=(); MS_ARGS=(); SYNC_ARGS=()

setup_case() { # 1|2|3
    local id=$1 sub n size f
    case $id in
        1) sub=big; n=1; size=$BIG_SIZE; CASE_LABEL=$(human_size "$BIG_SIZE")
           CASE_TOOLS=(curl_single mediasync); MS_ARGS=() ;;
        2) sub=small; n=$SMALL_N; size=$SMALL_SIZE; CASE_LABEL="${SMALL_N}x$(human_size "$SMALL_SIZE")"
           CASE_TOOLS=(curl_seq curl_par8 mediasync); MS_ARGS=(--concurrency 8) ;;
        3) sub=med; n=$MED_N; size=$MED_SIZE; CASE_LABEL="${MED_N}x$(human_size "$MED_SIZE")"
           CASE_TOOLS=(curl_par4 mediasync); MS_ARGS=(--concurrency 4) ;;
    esac
    CASE_ID=$id
    CASE_SRC="$SRC/$sub"
    CASE_COUNT=$n
    CASE_BYTES=$((n * size))
    CASE_LIST="$BENCH_DIR/case$id.list"
    CASE_CFG="$BENCH_DIR/case$id.curlrc"
    SYNC_ARGS=()
    : >"$CASE_LIST"
    : >"$CASE_CFG"
    while IFS= read -r f; do
        printf '%s/%s/%s\n' "$BASE_URL" "$sub" "$f" >>"$CASE_LIST"
        printf 'url = "%s/%s/%s"\noutput = "%s/%s"\n' "$BASE_URL" "$sub" "$f" "$OUT" "$f" >>"$CASE_CFG"
        SYNC_ARGS+=("$OUT/$f")
    done < <(cd "$CASE_SRC" && find . -maxdepth 1 -type f -name '*.bin' -printf '%f\n' | LC_ALL=C sort)
    ((${#SYNC_ARGS[@]} == n)) || die "case $id: found ${#SYNC_ARGS[@]} source files, expected $n"
    SYNC_ARGS+=("$OUT") # fsync the directory too, as mediasync does
}

tool_label() { # tool mode
    local t=$1 mode=$2 suffix=""
    [[ $mode == durable ]] && suffix=" + sync"
    case $t in
        curl_single) echo "curl -o$suffix" ;;
        curl_seq) echo "curl -K (seq)$suffix" ;;
        curl_par8) echo "curl --parallel 8$suffix" ;;
        curl_par4) echo "curl --parallel 4$suffix" ;;
        mediasync) if [[ $mode == durable ]]; then echo "mediasync"; else echo "mediasync --no-durable"; fi ;;
        cp) echo "cp -r (fs ceiling, no sync)" ;;
    esac
}

# run_tool TOOL MODE -> sets RUN_US (wall clock, µs) and RUN_RSS_KB; dies on failure.
run_tool() {
    local tool=$1 mode=$2 rc=0 t0 t1 f
    local rss_file="$BENCH_DIR/rss.out" err_file="$BENCH_DIR/run.err"
    local -a cmd
    rm -rf -- "$OUT"
    [[ $tool == cp ]] || mkdir -p "$OUT"
    sync # settle writeback/journal of the previous run (not timed)
    : >"$rss_file"
    : >"$err_file"
    case $tool in
        curl_single)
            f=${SYNC_ARGS[0]##*/}
            cmd=(curl -s -f -o "$OUT/$f" "$(head -n 1 "$CASE_LIST")") ;;
        curl_seq) cmd=(curl -s -f -K "$CASE_CFG") ;;
        curl_par8) cmd=(curl -s -f --parallel --parallel-max 8 -K "$CASE_CFG") ;;
        curl_par4) cmd=(curl -s -f --parallel --parallel-max 4 -K "$CASE_CFG") ;;
        mediasync)
            cmd=("$MEDIASYNC_BIN" get --input-file "$CASE_LIST" --output-dir "$OUT" "${MS_ARGS[@]}" --quiet)
            [[ $mode == non-durable ]] && cmd+=(--no-durable) ;;
        cp) cmd=(cp -r "$CASE_SRC" "$OUT") ;;
        *) die "unknown tool $tool" ;;
    esac

    t0=$(now_us)
    # stdout goes to a file (as stderr does) so tool output cannot pollute the tables.
    timeout "$RUN_TIMEOUT" /usr/bin/time -f %M -o "$rss_file" "${cmd[@]}" >"$BENCH_DIR/run.out" 2>"$err_file" &
    CUR_JOB=$!
    wait "$CUR_JOB" || rc=$?
    CUR_JOB=""
    if ((rc == 0)) && [[ $mode == durable && $tool == curl_* ]]; then
        sync -- "${SYNC_ARGS[@]}" 2>>"$err_file" || rc=$?
    fi
    t1=$(now_us)

    if ((rc != 0)); then
        local what="exit code $rc"
        ((rc == 124)) && what="timed out after ${RUN_TIMEOUT}s"
        printf 'bench-transfer: error: case %s (%s), %s failed: %s\n  command: %s\n' \
            "$CASE_LABEL" "$mode" "$(tool_label "$tool" "$mode")" "$what" "${cmd[*]}" >&2
        tail -n 10 "$BENCH_DIR/run.out" | sed 's/^/  stdout| /' >&2
        tail -n 20 "$err_file" | sed 's/^/  stderr| /' >&2
        exit 1
    fi
    RUN_US=$((t1 - t0))
    ((RUN_US > 0)) || RUN_US=1
    RUN_RSS_KB=$(tail -n 1 "$rss_file")
    [[ $RUN_RSS_KB =~ ^[0-9]+$ ]] || RUN_RSS_KB=0

    # Cheap per-run sanity check: file count and total size.
    local count bytes
    read -r count bytes < <(find "$OUT" -type f -printf '%s\n' | awk '{n++; s+=$1} END {print n+0, s+0}')
    if ((count != CASE_COUNT || bytes != CASE_BYTES)); then
        die "case $CASE_LABEL ($mode), $(tool_label "$tool" "$mode"): output has $count files / $bytes bytes, expected $CASE_COUNT / $CASE_BYTES"
    fi
}

verify_output() { # tool mode: full content comparison of $OUT against the source
    local tool=$1 mode=$2 diffout
    if ! diffout=$(diff -rq "$CASE_SRC" "$OUT" 2>&1); then
        printf 'bench-transfer: error: OUTPUT MISMATCH: case %s (%s), %s: output in %s differs from %s:\n' \
            "$CASE_LABEL" "$mode" "$(tool_label "$tool" "$mode")" "$OUT" "$CASE_SRC" >&2
        printf '%s\n' "$diffout" | head -n 20 | sed 's/^/  | /' >&2
        exit 1
    fi
}

mbps() { # bytes us -> MB/s
    awk -v b="$1" -v us="$2" 'BEGIN {printf "%.1f", b / us}'
}

# Results: $RES/<case>.<mode>.<tool> with lines "<µs> <rss kB>"
record() { # tool mode
    printf '%s %s\n' "$RUN_US" "$RUN_RSS_KB" >>"$RES/$CASE_ID.$2.$1"
}

median_mbps() { # file bytes
    awk -v b="$2" '{print b / $1}' "$1" | sort -g | awk '
        {v[NR] = $1}
        END {
            if (NR == 0) { print "nan"; exit }
            if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.1f", m
        }'
}
range_mbps() { # file bytes -> "min..max"
    awk -v b="$2" '{print b / $1}' "$1" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.0f..%.0f", lo, hi}'
}
peak_rss_mb() { # file -> max RSS over runs, MB (10^6 bytes)
    awk 'BEGIN {m = 0} $2 > m {m = $2} END {printf "%.1f", m * 1024 / 1e6}' "$1"
}

run_case_mode() { # mode
    local mode=$1 r t i
    local -a tools=("${CASE_TOOLS[@]}")
    [[ $mode == non-durable ]] && tools+=(cp)

    # Untimed warm-up + correctness check of every tool's output.
    for t in "${tools[@]}"; do
        log "case $CASE_LABEL $mode: warm-up/verify $(tool_label "$t" "$mode")"
        run_tool "$t" "$mode"
        verify_output "$t" "$mode"
    done

    for ((r = 1; r <= ROUNDS; r++)); do
        local -a order=()
        if ((r % 2)); then
            order=("${tools[@]}")
        else
            for ((i = ${#tools[@]} - 1; i >= 0; i--)); do order+=("${tools[i]}"); done
        fi
        for t in "${order[@]}"; do
            run_tool "$t" "$mode"
            record "$t" "$mode"
            log "case $CASE_LABEL $mode round $r/$ROUNDS: $(tool_label "$t" "$mode"): $(awk -v u="$RUN_US" 'BEGIN {printf "%.3f", u / 1e6}') s, $(mbps "$CASE_BYTES" "$RUN_US") MB/s, peak RSS $(awk -v k="$RUN_RSS_KB" 'BEGIN {printf "%.1f", k * 1024 / 1e6}') MB"
        done
    done
    rm -rf -- "$OUT"
}

SUMMARY=()

print_case_mode() { # mode
    local mode=$1 t f med ratio anchor="" anchor_med=0 cp_file="$RES/$CASE_ID.non-durable.cp"
    local -a tools=("${CASE_TOOLS[@]}")
    # Anchor: the fastest curl variant (by median).
    for t in "${tools[@]}"; do
        [[ $t == curl_* ]] || continue
        med=$(median_mbps "$RES/$CASE_ID.$mode.$t" "$CASE_BYTES")
        if [[ -z $anchor ]] || awk -v a="$med" -v b="$anchor_med" 'BEGIN {exit !(a > b)}'; then
            anchor=$t; anchor_med=$med
        fi
    done
    echo "--- case $CASE_LABEL ($CASE_COUNT file(s), $CASE_BYTES bytes), mode $mode, $ROUNDS rounds ---"
    printf '%-13s %-32s %12s %17s %10s   %s\n' "case" "tool" "median MB/s" "ratio vs anchor" "peak RSS" "min..max MB/s"
    local -a rows=("${tools[@]}")
    [[ -f $cp_file ]] && rows+=(cp)
    for t in "${rows[@]}"; do
        if [[ $t == cp ]]; then f=$cp_file; else f="$RES/$CASE_ID.$mode.$t"; fi
        med=$(median_mbps "$f" "$CASE_BYTES")
        ratio=$(awk -v a="$med" -v b="$anchor_med" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
        local label rss
        label=$(tool_label "$t" "$mode")
        [[ $t == "$anchor" ]] && label+=" [anchor]"
        if [[ $t == cp ]]; then rss="-"; else rss="$(peak_rss_mb "$f") MB"; fi
        printf '%-13s %-32s %12s %17s %10s   %s\n' "$CASE_LABEL" "$label" "$med" "$ratio" "$rss" "$(range_mbps "$f" "$CASE_BYTES")"
    done
    echo
    local ms_med ms_ratio ms_rss cp_part=""
    ms_med=$(median_mbps "$RES/$CASE_ID.$mode.mediasync" "$CASE_BYTES")
    ms_ratio=$(awk -v a="$ms_med" -v b="$anchor_med" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
    ms_rss=$(peak_rss_mb "$RES/$CASE_ID.$mode.mediasync")
    [[ -f $cp_file ]] && cp_part=" cp=$(median_mbps "$cp_file" "$CASE_BYTES")"
    SUMMARY+=("RESULT case=$CASE_LABEL mode=$mode mediasync=$ms_med anchor=$anchor_med ratio=$ms_ratio anchor_tool=$anchor mediasync_rss_mb=$ms_rss$cp_part rounds=$ROUNDS")
}

# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------
START_S=$SECONDS
for c in $BENCH_CASES; do
    setup_case "$c"
    modes=()
    for m in $BENCH_MODES; do modes+=("$m"); done
    # cp (the fs ceiling) is measured with the non-durable runs: do those first
    # so the durable table can show it too.
    if [[ " ${modes[*]} " == *" non-durable "* ]]; then
        ordered=(non-durable)
        [[ " ${modes[*]} " == *" durable "* ]] && ordered+=(durable)
    else
        ordered=("${modes[@]}")
    fi
    for m in "${ordered[@]}"; do
        log "=== case $CASE_LABEL, mode $m ==="
        run_case_mode "$m"
    done
    for m in $BENCH_MODES; do print_case_mode "$m"; done
done

echo "=== summary (ratio = mediasync median MB/s / anchor median MB/s; durable anchor = curl + sync FILES DIR) ==="
printf '%s\n' "${SUMMARY[@]}"
log "done in $((SECONDS - START_S)) s"
