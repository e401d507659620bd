#!/usr/bin/env bash
# bench-feeds.sh — compare mediasync's feed parser with podcastparser, feedparser
# and libxml2's own streaming reader (`xmllint --stream --noout`, the floor).
#
# Generates deterministic RSS 2.0 feeds (iTunes + Podcasting 2.0 tags, 1-2 KB CDATA
# HTML descriptions, content:encoded; Scripts/lib/gen_feed.py) of 500, 5,000 and
# 50,000 items and times, in the same run, tools alternating round by round (the
# order rotates every round):
#   mediasync      mediasync podcast parse FILE --json > /dev/null
#   xmllint        xmllint --stream --noout FILE
#   podcastparser  python3 -c 'podcastparser.parse(URL, open(FILE, "rb"), max_episodes=0)'
#   feedparser     python3 -c 'feedparser.parse(FILE)'
# Each run is a whole process (start-up included) timed wall-clock (bash
# EPOCHREALTIME around /usr/bin/time + timeout, ~2 ms of wrapper included) with
# its peak RSS from GNU time's %M. Reported per size and tool: the median time
# over ROUNDS, the highest peak RSS, time / xmllint's time, and RSS / feed size.
# MB = 10^6 bytes throughout.
#
# The issue's bar (checked on the largest size run): mediasync <= 1.5x xmllint
# --stream's time, and mediasync's peak RSS below the feed's size.
#
# Before timing, correctness is checked once on the 500-item feed: mediasync's JSON
# has 500 episodes (and, for a few sampled items, the guid, duration, season,
# episode, enclosure, transcripts and chapters the generator wrote, and the
# publication time podcastparser reads), podcastparser finds 500, feedparser 500.
# An episode-count mismatch stops the bench; field differences are reported as
# CHECK ... WARN lines.
#
# Environment:
#   MEDIASYNC_BIN     use this binary instead of building it with
#                     swift build -c release --product mediasync --scratch-path $SWIFT_SCRATCH
#   SWIFT_SCRATCH     swift build scratch path (default: <repo>/.build-benchfeeds)
#   ROUNDS            timed rounds per size and tool (default 3; quick: 1)
#   BENCH_QUICK=1     only the 500 and 5,000 sizes, 1 round (~1 minute after the build)
#   BENCH_FAST=1      the bar only, while iterating: mediasync and xmllint on the 50,000-item
#                     feed, 5 rounds (the 500-item correctness check still runs)
#   BENCH_SIZES       item counts to run, e.g. "500 50000" (default "500 5000 50000")
#   BENCH_TOOLS       tools to run (default "mediasync xmllint podcastparser feedparser");
#                     xmllint is always run (it is the reference)
#   BENCH_SKIP_FEEDPARSER_LARGE=1  skip feedparser at >= 50,000 items (it takes ~2
#                     minutes and ~1 GB there; otherwise it runs 1 round at that size)
#   BENCH_SEED        generator seed (default 20240604); same seed => same bytes
#   BENCH_DIR         scratch dir (default: mktemp -d, removed on exit). A given
#                     BENCH_DIR is kept; its venv and feeds are reused.
#   BENCH_KEEP=1      keep the scratch dir even when the script created it
#   RUN_TIMEOUT       seconds before a single run is killed and the bench fails (600)
#   BENCH_STRICT=1    exit 3 when a bar is missed (default: report only, exit 0)
#
# Output: a table on stdout followed by machine-readable lines
#   RESULT size=50000 tool=mediasync seconds=... rss_mb=... ratio_vs_xmllint=... ...
#   BAR size=50000 metric=time ... pass=yes|no
# Progress goes to stderr.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
GEN="$SCRIPT_DIR/lib/gen_feed.py"

BENCH_QUICK=${BENCH_QUICK:-0}
BENCH_FAST=${BENCH_FAST:-0}
BENCH_KEEP=${BENCH_KEEP:-0}
BENCH_STRICT=${BENCH_STRICT:-0}
BENCH_SEED=${BENCH_SEED:-20240604}
BENCH_SKIP_FEEDPARSER_LARGE=${BENCH_SKIP_FEEDPARSER_LARGE:-0}
if [[ $BENCH_FAST == 1 ]]; then
    BENCH_TOOLS=${BENCH_TOOLS:-mediasync xmllint}
    BENCH_SIZES=${BENCH_SIZES:-50000}
    ROUNDS=${ROUNDS:-5}
fi
BENCH_TOOLS=${BENCH_TOOLS:-mediasync xmllint podcastparser feedparser}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
SWIFT_SCRATCH=${SWIFT_SCRATCH:-$REPO_DIR/.build-benchfeeds}
LARGE=50000          # feedparser: 1 round (or skipped) from this size on
CHECK_SIZE=500       # the correctness check's feed
if [[ $BENCH_QUICK == 1 ]]; then
    BENCH_SIZES=${BENCH_SIZES:-500 5000}
    ROUNDS=${ROUNDS:-1}
else
    BENCH_SIZES=${BENCH_SIZES:-500 5000 50000}
    ROUNDS=${ROUNDS:-3}
fi

log() { printf '[bench-feeds %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { printf 'bench-feeds: error: %s\n' "$*" >&2; exit 1; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $RUN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "RUN_TIMEOUT must be a positive integer (got '$RUN_TIMEOUT')"
[[ $BENCH_SEED =~ ^[0-9]+$ ]] || die "BENCH_SEED must be a non-negative integer (got '$BENCH_SEED')"
[[ -n ${BENCH_SIZES// /} ]] || die "BENCH_SIZES is empty"
for s in $BENCH_SIZES; do [[ $s =~ ^[1-9][0-9]*$ ]] || die "BENCH_SIZES must hold positive integers (got '$s')"; done
TOOLS=(xmllint)      # the reference always runs
for t in $BENCH_TOOLS; do
    case $t in
        mediasync | podcastparser | feedparser) TOOLS+=("$t") ;;
        xmllint) ;;
        *) die "BENCH_TOOLS may only contain mediasync, xmllint, podcastparser, feedparser (got '$t')" ;;
    esac
done
has_tool() { local t; for t in "${TOOLS[@]}"; do [[ $t == "$1" ]] && return 0; done; return 1; }
[[ -f $GEN ]] || die "feed generator not found: $GEN"
((BASH_VERSINFO[0] >= 5)) || die "bash >= 5 is needed (EPOCHREALTIME)"

# --------------------------------------------------------------------------
# Dependencies (installed only when missing)
# --------------------------------------------------------------------------
PATH="$PATH:/usr/sbin:/sbin"
SUDO=()
if [[ $EUID -ne 0 ]]; then SUDO=(sudo); fi
APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 || die "missing packages ($*) and no apt-get to install them"
    if ((${#SUDO[@]})); then
        command -v sudo >/dev/null 2>&1 || die "missing packages ($*); not root and no sudo"
    fi
    log "installing Debian packages: $*"
    if [[ $APT_UPDATED == 0 ]]; then
        "${SUDO[@]}" apt-get update -qq >&2 || die "apt-get update failed"
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "$@" >&2 \
        || die "apt-get install $* failed"
}

pkgs=()
command -v xmllint >/dev/null 2>&1 || pkgs+=(libxml2-utils)
[[ -x /usr/bin/time ]] || pkgs+=(time)
command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
if ((${#pkgs[@]})); then apt_install "${pkgs[@]}"; fi
command -v xmllint >/dev/null 2>&1 || die "xmllint not found after install (package libxml2-utils)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time, package 'time') not found after install"
/usr/bin/time -f %M -o /dev/null true 2>/dev/null || die "/usr/bin/time is not GNU time (needs -f %M)"
command -v python3 >/dev/null 2>&1 || die "python3 not found after install"
for t in timeout mktemp sort awk cat; do
    command -v "$t" >/dev/null 2>&1 || die "required tool '$t' not found (coreutils/gawk)"
done
PY=$(command -v python3)

# --------------------------------------------------------------------------
# mediasync binary
# --------------------------------------------------------------------------
if has_tool mediasync; then
    if [[ -n ${MEDIASYNC_BIN:-} ]]; then
        [[ -x $MEDIASYNC_BIN && -f $MEDIASYNC_BIN ]] || die "MEDIASYNC_BIN=$MEDIASYNC_BIN is not an executable file"
    else
        command -v swift >/dev/null 2>&1 || die "swift not found (set MEDIASYNC_BIN to use a prebuilt binary)"
        log "building mediasync (release, scratch path $SWIFT_SCRATCH)"
        (cd "$REPO_DIR" && swift build -c release --product mediasync --scratch-path "$SWIFT_SCRATCH" >&2) \
            || die "swift build -c release --product mediasync --scratch-path $SWIFT_SCRATCH failed"
        bin_dir=$(cd "$REPO_DIR" && swift build -c release --scratch-path "$SWIFT_SCRATCH" --show-bin-path) \
            || die "swift build --show-bin-path failed"
        MEDIASYNC_BIN="$bin_dir/mediasync"
        [[ -x $MEDIASYNC_BIN ]] || die "built binary not found at $MEDIASYNC_BIN"
    fi
    MEDIASYNC_BIN=$(cd "$(dirname "$MEDIASYNC_BIN")" && pwd)/$(basename "$MEDIASYNC_BIN")
fi

# --------------------------------------------------------------------------
# Scratch dir, cleanup
# --------------------------------------------------------------------------
CREATED_DIR=0
if [[ -z ${BENCH_DIR:-} ]]; then
    BENCH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bench-feeds.XXXXXX") || die "mktemp -d failed"
    CREATED_DIR=1
else
    mkdir -p "$BENCH_DIR" || die "cannot create BENCH_DIR=$BENCH_DIR"
fi
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
FEEDS="$BENCH_DIR/feeds"
RES="$BENCH_DIR/results"
mkdir -p "$FEEDS" "$RES"
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    local rc=$?
    if [[ $CREATED_DIR == 1 && $BENCH_KEEP != 1 ]]; then
        rm -rf -- "$BENCH_DIR"
    else
        log "scratch dir kept: $BENCH_DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
log "scratch dir: $BENCH_DIR"

# --------------------------------------------------------------------------
# Python parsers: system ones if importable, else a venv in the scratch dir
# --------------------------------------------------------------------------
need_py=()
has_tool podcastparser && need_py+=(podcastparser)
has_tool feedparser && need_py+=(feedparser)
# The correctness check uses podcastparser even when it is not timed.
[[ " ${need_py[*]} " == *" podcastparser "* ]] || need_py+=(podcastparser)
PYBENCH=$PY
py_has() { "$1" -c "import $2" >/dev/null 2>&1; }
missing_py=()
for m in "${need_py[@]}"; do py_has "$PY" "$m" || missing_py+=("$m"); done
if ((${#missing_py[@]})); then
    VENV="$BENCH_DIR/venv"
    if [[ ! -x $VENV/bin/python ]]; then
        if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
            apt_install python3-venv
        fi
        log "creating venv $VENV"
        "$PY" -m venv "$VENV" >&2 || die "python3 -m venv $VENV failed (Debian: apt-get install python3-venv)"
    fi
    PYBENCH="$VENV/bin/python"
    still=()
    for m in "${missing_py[@]}"; do py_has "$PYBENCH" "$m" || still+=("$m"); done
    if ((${#still[@]})); then
        log "pip install ${still[*]} (into $VENV)"
        "$PYBENCH" -m pip install -q "${still[@]}" >&2 || die "pip install ${still[*]} failed"
    fi
    for m in "${need_py[@]}"; do py_has "$PYBENCH" "$m" || die "python module $m not importable after pip install"; done
fi
PY_VERSIONS=$("$PYBENCH" -c '
import sys, importlib.metadata as md
out = ["python " + sys.version.split()[0]]
for m in sys.argv[1:]:
    try: out.append(m + " " + md.version(m))
    except Exception: out.append(m + " ?")
print(", ".join(out))' "${need_py[@]}")

PP_SCRIPT='import sys, podcastparser
with open(sys.argv[1], "rb") as f:
    podcastparser.parse("https://feeds.example.org/bench.xml", f, max_episodes=0)'
FP_SCRIPT='import sys, feedparser
feedparser.parse(sys.argv[1])'

# --------------------------------------------------------------------------
# Feeds
# --------------------------------------------------------------------------
GEN_STAMP="seed=$BENCH_SEED gen=$(cksum <"$GEN" | awk '{print $1}')"
feed_path() { printf '%s/feed-%s.xml' "$FEEDS" "$1"; }
generate() { # size
    local n=$1 f
    f=$(feed_path "$n")
    if [[ -f $f && -f $f.expect.json && -f $f.stamp && $(cat "$f.stamp") == "$GEN_STAMP" ]]; then
        log "reusing $f"
    else
        log "generating $n-item feed"
        rm -f "$f" "$f.expect.json" "$f.stamp"
        "$PY" "$GEN" "$n" "$f.tmp" --seed "$BENCH_SEED" --expect "$f.expect.json" \
            || die "feed generation failed ($GEN $n)"
        mv "$f.tmp" "$f"
        printf '%s\n' "$GEN_STAMP" >"$f.stamp"
    fi
    xmllint --stream --noout "$f" 2>"$RES/wellformed.err" \
        || die "generated feed $f is not well-formed: $(head -3 "$RES/wellformed.err")"
}
SIZES=()
for s in $BENCH_SIZES; do SIZES+=("$s"); done
mapfile -t SIZES < <(printf '%s\n' "${SIZES[@]}" | sort -n -u)
for s in "${SIZES[@]}"; do generate "$s"; done
[[ -f $(feed_path $CHECK_SIZE) ]] || generate $CHECK_SIZE

# --------------------------------------------------------------------------
# Correctness check (once, on the 500-item feed)
# --------------------------------------------------------------------------
CHECK_LOG="$RES/check.txt"
: >"$CHECK_LOG"
check_feed=$(feed_path $CHECK_SIZE)
log "checking parsers on the $CHECK_SIZE-item feed"
"$PYBENCH" -c '
import sys, json, podcastparser
with open(sys.argv[1], "rb") as f:
    d = podcastparser.parse("https://feeds.example.org/bench.xml", f, max_episodes=0)
json.dump({e["guid"]: {"published": e.get("published"), "total_time": e.get("total_time")} for e in d["episodes"]},
          open(sys.argv[2], "w"))
print(len(d["episodes"]))' "$check_feed" "$RES/pp-check.json" >"$RES/pp-count" 2>"$RES/pp-check.err" \
    || die "podcastparser failed on $check_feed: $(tail -3 "$RES/pp-check.err")"
pp_count=$(cat "$RES/pp-count")
[[ $pp_count == "$CHECK_SIZE" ]] || die "podcastparser found $pp_count episodes in the $CHECK_SIZE-item feed"
echo "CHECK size=$CHECK_SIZE tool=podcastparser episodes=$pp_count ok" >>"$CHECK_LOG"
if has_tool feedparser; then
    fp_count=$("$PYBENCH" -c 'import sys, feedparser; print(len(feedparser.parse(sys.argv[1]).entries))' \
        "$check_feed" 2>"$RES/fp-check.err") || die "feedparser failed on $check_feed: $(tail -3 "$RES/fp-check.err")"
    [[ $fp_count == "$CHECK_SIZE" ]] || die "feedparser found $fp_count entries in the $CHECK_SIZE-item feed"
    echo "CHECK size=$CHECK_SIZE tool=feedparser episodes=$fp_count ok" >>"$CHECK_LOG"
fi
if has_tool mediasync; then
    ms_rc=0
    "$MEDIASYNC_BIN" podcast parse "$check_feed" --json >"$RES/mediasync-check.json" 2>"$RES/mediasync-check.err" \
        || ms_rc=$?
    ((ms_rc == 0)) || die "mediasync podcast parse $check_feed --json failed (exit $ms_rc): $(tail -5 "$RES/mediasync-check.err")"
    "$PY" - "$RES/mediasync-check.json" "$check_feed.expect.json" "$RES/pp-check.json" >>"$CHECK_LOG" <<'EOF' \
        || die "mediasync's JSON check failed: $(tail -3 "$CHECK_LOG")"
import json, sys
from datetime import datetime, timezone
try:
    doc = json.load(open(sys.argv[1], encoding="utf-8"))
except ValueError as e:
    print(f"CHECK tool=mediasync FAIL output is not JSON: {e}")
    sys.exit(1)
expect = json.load(open(sys.argv[2]))
pp = json.load(open(sys.argv[3]))
eps = doc.get("episodes")
n = expect["count"]
if not isinstance(eps, list) or len(eps) != n:
    print(f"CHECK size={n} tool=mediasync FAIL episodes={len(eps) if isinstance(eps, list) else 'missing'} expected={n}")
    sys.exit(1)
print(f"CHECK size={n} tool=mediasync episodes={len(eps)} ok")
by_guid = {e.get("guid"): e for e in eps}
warns = 0
def warn(msg):
    global warns
    warns += 1
    print(f"CHECK size={n} tool=mediasync WARN {msg}")
for guid, want in expect["items"].items():
    got = by_guid.get(guid)
    if got is None:
        warn(f"guid {guid} not found")
        continue
    for key in ("durationSeconds", "season", "episode", "chaptersURL"):
        if got.get(key) != want[key]:
            warn(f"{guid}: {key}={got.get(key)!r} expected {want[key]!r}")
    enc = got.get("enclosure") or {}
    for key in ("url", "length", "type"):
        if enc.get(key) != want["enclosure"][key]:
            warn(f"{guid}: enclosure.{key}={enc.get(key)!r} expected {want['enclosure'][key]!r}")
    tr = sorted((t.get("url"), t.get("type")) for t in got.get("transcripts") or [])
    if tr != sorted((t["url"], t["type"]) for t in want["transcripts"]):
        warn(f"{guid}: transcripts={tr!r} expected {want['transcripts']!r}")
    pub = got.get("published")
    pp_pub = (pp.get(guid) or {}).get("published")
    try:
        ts = int(datetime.fromisoformat(str(pub).replace("Z", "+00:00")).astimezone(timezone.utc).timestamp())
    except ValueError:
        ts = None
    if ts != pp_pub:
        warn(f"{guid}: published={pub!r} ({ts}) but podcastparser reads {pp_pub}")
print(f"CHECK size={n} tool=mediasync sampled_items={len(expect['items'])} field_warnings={warns}")
EOF
fi
cat "$CHECK_LOG" >&2

# --------------------------------------------------------------------------
# Timed runs
# --------------------------------------------------------------------------
TIMES="$RES/times.tsv"
: >"$TIMES"
cmd_argv() { # tool file -> sets CMD
    case $1 in
        mediasync) CMD=("$MEDIASYNC_BIN" podcast parse "$2" --json) ;;
        xmllint) CMD=(xmllint --stream --noout "$2") ;;
        podcastparser) CMD=("$PYBENCH" -c "$PP_SCRIPT" "$2") ;;
        feedparser) CMD=("$PYBENCH" -c "$FP_SCRIPT" "$2") ;;
    esac
}
timed() { # size tool round file
    local size=$1 tool=$2 round=$3 file=$4 t0 t1 rc=0 rss
    local tf="$RES/time.out" ef="$RES/run.err"
    cmd_argv "$tool" "$file"
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$tf" timeout "$RUN_TIMEOUT" "${CMD[@]}" >/dev/null 2>"$ef" || rc=$?
    t1=$EPOCHREALTIME
    if ((rc != 0)); then
        ((rc == 124)) && die "$tool on $size items timed out after ${RUN_TIMEOUT}s (RUN_TIMEOUT)"
        die "$tool on $size items failed (exit $rc): $(grep -v '^Command exited' "$ef" | tail -5)"
    fi
    rss=$(tail -1 "$tf")
    [[ $rss =~ ^[0-9]+$ ]] || die "could not read peak RSS from /usr/bin/time for $tool: $(cat "$tf")"
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
    printf '%s\t%s\t%s\t%s\t%s\n' "$size" "$tool" "$round" "$secs" "$rss" >>"$TIMES"
    log "  size=$size round=$round $tool: ${secs}s, peak RSS $(awk -v k="$rss" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }') MB"
}

SKIPPED=()
bench_start=$EPOCHREALTIME
for size in "${SIZES[@]}"; do
    file=$(feed_path "$size")
    cat "$file" >/dev/null   # page cache warm for every tool alike
    fsize=$(stat -c %s "$file")
    log "size $size items ($(awk -v b="$fsize" 'BEGIN { printf "%.1f", b / 1e6 }') MB), $ROUNDS round(s)"
    for ((r = 1; r <= ROUNDS; r++)); do
        n=${#TOOLS[@]}
        for ((k = 0; k < n; k++)); do
            tool=${TOOLS[$(((k + r - 1) % n))]}   # rotate the order every round
            if [[ $tool == feedparser ]] && ((size >= LARGE)); then
                if [[ $BENCH_SKIP_FEEDPARSER_LARGE == 1 ]]; then
                    ((r == 1)) && SKIPPED+=("feedparser@$size")
                    continue
                fi
                ((r > 1)) && continue   # ~2 minutes a run: one round only
            fi
            timed "$size" "$tool" "$r" "$file"
        done
    done
done
bench_secs=$(awk -v a="$bench_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------
sizes_arg=""
for s in "${SIZES[@]}"; do sizes_arg+="$s:$(stat -c %s "$(feed_path "$s")") "; done
{
    echo "# bench-feeds: $(nproc) CPU(s), $(uname -sr), $(xmllint --version 2>&1 | head -1 | sed 's/^xmllint: //')"
    echo "# $PY_VERSIONS"
    has_tool mediasync && echo "# mediasync: $MEDIASYNC_BIN"
    echo "# rounds=$ROUNDS (feedparser at >= $LARGE items: 1), seed=$BENCH_SEED, timed part ${bench_secs}s"
    ((${#SKIPPED[@]})) && echo "# skipped: ${SKIPPED[*]} (BENCH_SKIP_FEEDPARSER_LARGE=1)"
    sed 's/^/# /' "$CHECK_LOG"
} >"$RES/header.txt"
cat "$RES/header.txt"
bar_rc=0
"$PY" - "$TIMES" "$sizes_arg" "${TOOLS[*]}" <<'EOF' || bar_rc=$?
import sys
from collections import defaultdict

times_path, sizes_arg, tools_arg = sys.argv[1:4]
feed_bytes = {int(s.split(":")[0]): int(s.split(":")[1]) for s in sizes_arg.split()}
order = ["mediasync", "xmllint", "podcastparser", "feedparser"]
tools = [t for t in order if t in tools_arg.split()]
secs, rss = defaultdict(list), defaultdict(list)
for line in open(times_path):
    size, tool, _round, s, kib = line.split("\t")
    secs[int(size), tool].append(float(s))
    rss[int(size), tool].append(int(kib) * 1024)

def median(v):
    v = sorted(v)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2

rows = []
for size in sorted(feed_bytes):
    fb = feed_bytes[size]
    ref = median(secs[size, "xmllint"]) if secs.get((size, "xmllint")) else None
    for tool in tools:
        if (size, tool) not in secs:
            rows.append((size, fb, tool, None))
            continue
        t = median(secs[size, tool])
        peak = max(rss[size, tool])
        rows.append((size, fb, tool, dict(t=t, peak=peak, n=len(secs[size, tool]),
                                          ratio=t / ref if ref else float("nan"),
                                          mem=peak / fb, tmin=min(secs[size, tool]), tmax=max(secs[size, tool]))))

hdr = f"{'items':>7} {'feed MB':>8} {'tool':<14} {'runs':>4} {'median s':>9} {'min..max s':>15} {'x xmllint':>9} {'peak RSS MB':>11} {'RSS/feed':>8}"
print()
print(hdr)
print("-" * len(hdr))
last = None
for size, fb, tool, d in rows:
    lead = (f"{size:>7} {fb / 1e6:>8.1f}") if size != last else " " * 16
    last = size
    if d is None:
        print(f"{lead} {tool:<14} {'-':>4} {'skipped':>9}")
        continue
    rng = f"{d['tmin']:.3f}..{d['tmax']:.3f}"
    print(f"{lead} {tool:<14} {d['n']:>4} {d['t']:>9.3f} {rng:>15} {d['ratio']:>8.2f}x {d['peak'] / 1e6:>11.1f} {d['mem']:>7.2f}x")
print()
for size, fb, tool, d in rows:
    if d is None:
        print(f"RESULT size={size} tool={tool} skipped=1")
        continue
    print(f"RESULT size={size} tool={tool} seconds={d['t']:.4f} rss_mb={d['peak'] / 1e6:.1f} "
          f"ratio_vs_xmllint={d['ratio']:.3f} rss_vs_feed={d['mem']:.3f} feed_mb={fb / 1e6:.1f} runs={d['n']}")

# The issue's bar, on the largest size run.
top = max(feed_bytes)
ms = next((d for size, fb, tool, d in rows if size == top and tool == "mediasync"), None)
if ms is None:
    print(f"BAR size={top} mediasync not run")
    sys.exit(0)
fb = feed_bytes[top]
t_ok = ms["ratio"] <= 1.5
m_ok = ms["peak"] < fb
print(f"BAR size={top} metric=time mediasync_s={ms['t']:.3f} xmllint_s={ms['t'] / ms['ratio']:.3f} "
      f"ratio={ms['ratio']:.2f} limit=1.5 pass={'yes' if t_ok else 'no'}")
print(f"BAR size={top} metric=memory mediasync_rss_mb={ms['peak'] / 1e6:.1f} feed_mb={fb / 1e6:.1f} "
      f"ratio={ms['mem']:.2f} limit=<1.0 pass={'yes' if m_ok else 'no'}")
sys.exit(0 if t_ok and m_ok else 3)
EOF
if ((bar_rc == 3)); then
    log "mediasync misses the issue's bar (see BAR lines)"
    [[ $BENCH_STRICT == 1 ]] && exit 3
elif ((bar_rc != 0)); then
    die "report failed (exit $bar_rc)"
fi
exit 0
