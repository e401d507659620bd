#!/usr/bin/env bash
# bench-chain.sh — a mirror of a mirror: mirror B's sync from mirror A's `mediasync serve` against the same sync
# straight from the home server (docs/benchmarks.md, "Mirror of a mirror").
#
# The release test server is home, with --movies N --series N --media-size BYTES (a series is 1 + 2 seasons + 6
# episodes). Mirror A signs in, selects the movies and shows libraries and syncs; then `mediasync serve` runs on A.
# Mirror B is set up twice, each signed in and with the two libraries selected (found by `browse --json` on the
# server it syncs from): "direct" against home, "chain" against A's serve. Each round, alternating the two, B syncs
# into an empty root (`--no-durable`: the same cost for both; the upstream is what is measured), then syncs again
# (the no-op). Reports the median wall time of each and the ratios chain/direct, and checks that the chain's tree is
# A's, file for file.
#
# Options: --movies N (default 200), --series N (20), --media-size BYTES (500000), --rounds N (3).
# Environment: SWIFT_SCRATCH (<repo>/.build-benchsync), MEDIASYNC_BIN_DIR (use these binaries), BENCH_KEEP=1.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=bench-chain
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_size_options "$@"
MOVIES=${MOVIES:-200}
SERIES=${SERIES:-20}
MEDIA_SIZE=${MEDIA_SIZE:-500000}
ROUNDS=${ROUNDS:-3}
ms_bench_defaults python3 curl

ms_release_binaries "$SWIFT_SCRATCH"
ms_mirror_scratch
ms_start_library_server
ms_log "home $base: $items items of $MEDIA_SIZE bytes"

serve_pid=""
stop_serve() { if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi; }
trap 'stop_serve; ms_cleanup' EXIT

# --- mirror A ------------------------------------------------------------------------------------------------
export MEDIASYNC_ROOT="$work/a/mirror" MEDIASYNC_CONFIG_DIR="$work/a/config"
ms_login_and_select_libraries
t0=$(ms_now_ns)
"$ms" sync --no-durable --quiet >&2
ms_log "A's sync from home: $(ms_secs "$(ms_ms_since "$t0")") s"
serve_password=chain-bench
printf '%s\n' "$serve_password" | "$ms" serve --set-password >/dev/null
"$ms" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 1 300); do grep -q '^Serving ' "$work/serve.out" && break; sleep 0.1; done
serve_base=$(sed -n 's|^Serving .* as a Jellyfin server at \(http://[^ ]*\) .*|\1|p' "$work/serve.out")
[ -n "$serve_base" ] || { cat "$work/serve.out" "$work/serve.err" >&2; ms_log "serve did not start"; exit 1; }
ms_log "A's serve at $serve_base (pid $serve_pid)"

# --- B, twice: its sign-in and selections, kept as templates ------------------------------------------------
set_up_b() { # $1: name, $2: server, $3: user, $4: password
    export MEDIASYNC_ROOT="$work/$1-template/mirror" MEDIASYNC_CONFIG_DIR="$work/$1-config"
    local saved_base=$base saved_user=$user saved_password=$password
    base=$2 user=$3 password=$4
    ms_login_and_select_libraries
    base=$saved_base user=$saved_user password=$saved_password
}
set_up_b direct "$base" "$user" "$password"
set_up_b chain "$serve_base" "$user" "$serve_password"

round_root() { # $1: name, $2: round
    export MEDIASYNC_ROOT="$work/$1-$2/mirror" MEDIASYNC_CONFIG_DIR="$work/$1-config"
    mkdir -p "$work/$1-$2"
    cp -a "$work/$1-template/mirror" "$MEDIASYNC_ROOT"
}

timed_sync() { # prints the wall time in ms; the sync's report goes to $work/last.json
    local t0 rc=0
    t0=$(ms_now_ns)
    "$ms" sync --no-durable --json --quiet >"$work/last.json" 2>"$work/last.err" || rc=$?
    local took
    took=$(ms_ms_since "$t0")
    if [ "$rc" -ne 0 ]; then cat "$work/last.err" >&2; ms_log "sync failed (exit $rc)"; exit 1; fi
    echo "$took"
}

downloaded() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("downloaded", [])))' "$work/last.json"; }

declare -a first_direct first_chain noop_direct noop_chain
for round in $(seq 1 "$ROUNDS"); do
    for name in direct chain; do
        round_root "$name" "$round"
        first=$(timed_sync)
        files=$(downloaded)
        noop=$(timed_sync)
        again=$(downloaded)
        [ "$again" = 0 ] || { ms_log "$name: the no-op downloaded $again files"; exit 1; }
        ms_log "round $round $name: first $first ms ($files files), no-op $noop ms"
        if [ "$name" = direct ]; then first_direct+=("$first"); noop_direct+=("$noop")
        else first_chain+=("$first"); noop_chain+=("$noop"); fi
    done
done

# The chain's tree is A's (media, images, subtitles; metadata.json differs in the fields docs/serve.md lists).
tree_hash() { (cd "$1/Downloads" && find . -type f ! -name metadata.json -print0 | sort -z | xargs -0 sha1sum | sha1sum); }
a_hash=$(tree_hash "$work/a/mirror")
chain_hash=$(tree_hash "$work/chain-1/mirror")
same=yes
[ "$a_hash" = "$chain_hash" ] || same=no

fd=$(ms_median "${first_direct[@]}")
fc=$(ms_median "${first_chain[@]}")
nd=$(ms_median "${noop_direct[@]}")
nc=$(ms_median "${noop_chain[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "library: $items items ($MOVIES movies, $SERIES series), media $MEDIA_SIZE bytes, $ROUNDS rounds"
echo "first sync of B: from home $(ms_secs "$fd") s, from A's serve $(ms_secs "$fc") s: chain/direct $(ratio "$fc" "$fd")x"
echo "no-op sync of B: from home $(ms_secs "$nd") s, from A's serve $(ms_secs "$nc") s: chain/direct $(ratio "$nc" "$nd")x"
echo "B's tree from serve is A's (every file but metadata.json, by SHA-1): $same"
