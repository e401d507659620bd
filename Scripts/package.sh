#!/usr/bin/env bash
# Builds mediasync as a Debian package that installs on a machine without the Swift toolchain: a release binary with
# the Swift runtime and Foundation linked in (--static-swift-stdlib; libcurl, libxml2 and SQLite stay the system's),
# stripped, with the man page, the bash/zsh/fish completions and the example systemd user units, and a Depends line
# computed from the libraries the binary really links.
#
# Usage: Scripts/package.sh [--output DIR] [--scratch-path DIR] [--no-build]
#   --output DIR        where the .deb goes (default: dist)
#   --scratch-path DIR  the build's own folder (default: .build-package), kept apart from the usual .build so that
#                       the static build neither waits for nor invalidates the everyday one
#   --no-build          package what the scratch folder already holds (no `swift build`)
# Environment: DEBFULLNAME and DEBEMAIL name the Maintainer (default: the author of the last commit);
# SOURCE_DATE_EPOCH the files' time (default: the last commit's).
#
# Prints the package's path, its size and its installed size on the last lines.
set -euo pipefail
export SCRIPT_NAME=package
SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/packaging.sh
. "$SCRIPT_DIR/lib/packaging.sh"
cd "$SCRIPT_DIR/.."
repo=$PWD

output=dist
scratch=.build-package
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --output) output=${2:?--output needs a folder}; shift 2 ;;
        --scratch-path) scratch=${2:?--scratch-path needs a folder}; shift 2 ;;
        --no-build) build=0; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) pkg_die "unknown argument: $1 (see --help)" ;;
    esac
done

pkg_need swift=swift python3=python3 dpkg-deb=dpkg dpkg-shlibdeps=dpkg-dev objdump=binutils strip=binutils gzip=gzip
started=$(pkg_now_ns)

# The toolchain's own folder (/opt/swift here): the packaged binary must load nothing from it.
swift_root=$(cd "$(dirname "$(readlink -f "$(command -v swift)")")/../.." && pwd)

swift_flags=(-c release --static-swift-stdlib --scratch-path "$scratch")
if [ "$build" = 1 ]; then
    pkg_log "building the release binary with the Swift runtime linked in ($scratch; from clean, 28 minutes on a busy 2-core machine)"
    swift build "${swift_flags[@]}" --product mediasync >&2
fi
built="$(swift build "${swift_flags[@]}" --show-bin-path)/mediasync"
[ -x "$built" ] || pkg_die "no binary at $built (run without --no-build)"

# The package's tree sits in debian/mediasync/ of a work folder, where dpkg-shlibdeps expects it.
mkdir -p "$scratch"
work="$(cd "$scratch" && pwd)/deb"
rm -rf "$work"
stage="$work/debian/mediasync"
mkdir -p "$stage/DEBIAN"
install -d -m 755 "$stage/usr/bin" "$stage/usr/share/man/man1" "$stage/usr/share/bash-completion/completions" \
    "$stage/usr/share/zsh/vendor-completions" "$stage/usr/share/fish/vendor_completions.d" \
    "$stage/usr/share/doc/mediasync/examples"
binary="$stage/usr/bin/mediasync"
install -m 755 "$built" "$binary"
unstripped_size=$(stat -c %s "$binary")
# As Debian's dh_strip does for a program: the symbol table and the .comment section go; the Swift metadata
# sections (swift5_*) are allocated, so they stay.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$binary"
pkg_log "stripped the binary: $(pkg_human "$unstripped_size") -> $(pkg_human "$(stat -c %s "$binary")")"

# SwiftPM links executables with RUNPATH $ORIGIN, for libraries beside them: none go beside /usr/bin/mediasync,
# and Debian's policy wants no search path in a packaged binary, so it goes.
if objdump -p "$binary" | grep -E '^ *(RPATH|RUNPATH) ' >/dev/null; then
    pkg_need chrpath=chrpath
    chrpath -d "$binary" >/dev/null
fi

# What the binary links: nothing from the toolchain, nothing missing, no search path left.
ldd_out=$(ldd "$binary")
if grep -F "$swift_root/" <<<"$ldd_out" >&2; then pkg_die "the binary still loads libraries from $swift_root"; fi
if grep -F "not found" <<<"$ldd_out" >&2; then pkg_die "the binary needs libraries this machine lacks"; fi
if objdump -p "$binary" | grep -E '^ *(RPATH|RUNPATH) ' >&2; then pkg_die "the binary carries a library search path"; fi
mapfile -t needed < <(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }')
[ ${#needed[@]} -gt 0 ] || pkg_die "objdump lists no NEEDED library in $binary"

version=$("$binary" --version)
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || pkg_die "\`mediasync --version\` printed \"$version\", not a Debian version"
arch=$(dpkg --print-architecture)
maintainer=${DEBFULLNAME:+$DEBFULLNAME <${DEBEMAIL:?DEBFULLNAME needs DEBEMAIL}>}
maintainer=${maintainer:-$(git log -1 --format='%an <%ae>')}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD -- Sources Package.swift || commit="$commit with local changes"

# The man page, compressed as Debian ships them (-n: no name or time in the header, so the bytes repeat).
[ -s docs/man/mediasync.1 ] || pkg_die "docs/man/mediasync.1 is missing (Scripts/make-manual.sh writes it)"
gzip -9nc docs/man/mediasync.1 >"$stage/usr/share/man/man1/mediasync.1.gz"

# The completion scripts, from the binary's own parser.
# bash-completion sources its files, so the bash one goes without its #! line.
"$binary" --generate-completion-script bash | sed '1{/^#!/d}' >"$stage/usr/share/bash-completion/completions/mediasync"
"$binary" --generate-completion-script zsh >"$stage/usr/share/zsh/vendor-completions/_mediasync"
"$binary" --generate-completion-script fish >"$stage/usr/share/fish/vendor_completions.d/mediasync.fish"

# The systemd user units and the cron line that `mediasync schedule print` writes, filled in for the installed path
# and the default root (%h is the user's home in a unit). The command prints the units one after the other, each
# after a "# ~/.config/systemd/user/NAME" line, then a "# then: ..." line.
examples="$stage/usr/share/doc/mediasync/examples"
root_mark=/mediasync-example-root
default_root='%h/.local/share/mediasync'
fill_example() {
    local text
    text=$(cat)
    text=${text//"$(readlink -f "$binary")"/\/usr\/bin\/mediasync}
    printf '%s\n' "${text//"$root_mark"/$1}"
}
"$binary" schedule print --format systemd --root "$root_mark" | fill_example "$default_root" | awk -v dir="$examples" '
    /^# ~\/\.config\/systemd\/user\// { n = split($2, part, "/"); file = dir "/" part[n]; next }
    /^# then: / { next }
    file != "" { print > file }'
"$binary" schedule print --format cron --root "$root_mark" | fill_example "\$HOME/.local/share/mediasync" \
    >"$examples/mediasync.cron"
for unit in mediasync.service mediasync.timer; do
    [ -s "$examples/$unit" ] || pkg_die "\`mediasync schedule print\` wrote no $unit"
done
grep -q '^ExecStart=/usr/bin/mediasync ' "$examples/mediasync.service" ||
    pkg_die "the example service does not run /usr/bin/mediasync"
if grep -rF -e "$repo" -e "$scratch" "$examples" >&2; then pkg_die "an example names the build folder"; fi
cat >"$examples/README" <<'EOF'
Example units for a nightly `mediasync sync` (see `man mediasync` and docs/scheduling.md in the sources).

As the user whose mirror it is:

    mkdir -p ~/.config/systemd/user
    cp /usr/share/doc/mediasync/examples/mediasync.service /usr/share/doc/mediasync/examples/mediasync.timer \
        ~/.config/systemd/user/
    # edit MEDIASYNC_ROOT in mediasync.service if the mirror is not ~/.local/share/mediasync
    systemctl --user daemon-reload
    systemctl --user enable --now mediasync.timer
    loginctl enable-linger "$USER"    # to run while you are not logged in

`mediasync schedule print [--root DIR]` prints the same units filled in for a root of your choice;
mediasync.cron is the cron line instead (crontab -e).
EOF

# The copyright file: mediasync's own notice, and the libraries the binary carries inside it (the Swift runtime,
# Foundation and the Swift packages resolved for this build), each with the licence its sources state.
licence_of() {
    local dir=$1 file
    for file in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING*; do
        [ -f "$file" ] || continue
        if grep -q "Apache License" "$file"; then
            echo "Apache-2.0"
        elif grep -q "Permission is hereby granted, free of charge" "$file"; then
            echo "MIT"
        else
            echo "see $(basename "$file") in its sources"
        fi
        return
    done
    echo "not stated in its sources"
}
# Package.resolved (written by the build) has each package's version and address: "identity<TAB>location<TAB>version".
pins=""
[ -f Package.resolved ] && pins=$(python3 -c '
import json, sys
for pin in json.load(open(sys.argv[1])).get("pins", []):
    state = pin.get("state", {})
    print(pin["identity"], pin.get("location", ""), state.get("version") or state.get("revision", "")[:12], sep="\t")
' Package.resolved)
# (awk, not head: head would stop reading, and git's SIGPIPE would end the script under pipefail)
first_year=$(git log --reverse --format=%ad --date=format:%Y | awk 'NR == 1')
last_year=$(git log -1 --format=%ad --date=format:%Y)
years=$first_year
[ "$first_year" = "$last_year" ] || years="$first_year-$last_year"
{
    cat <<EOF
mediasync

Copyright: $years the mediasync authors
Maintainer: $maintainer
Built from commit $commit.
Licence: the sources state none yet$( [ -f LICENSE ] && echo " other than LICENSE: $(head -1 LICENSE)").

The binary links these statically:

 - the Swift standard library, runtime, Dispatch and Foundation of Swift $(swift --version 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "version") { print $(i + 1); exit } }')
   (https://swift.org): Apache-2.0 with the Runtime Library Exception; Foundation's ICU data: the Unicode licence
EOF
    for checkout in "$scratch"/checkouts/*/; do
        [ -d "$checkout" ] || continue
        name=$(basename "$checkout")
        pin=$(awk -F'\t' -v id="$(tr '[:upper:]' '[:lower:]' <<<"$name")" '$1 == id { print $3 " (" $2 ")" }' <<<"$pins")
        licence=$(licence_of "$checkout")
        [ -d "$checkout/Sources/CCryptoBoringSSL" ] && licence="$licence; the BoringSSL inside it: OpenSSL and ISC"
        echo " - $name${pin:+ $pin}: $licence"
    done
    cat <<'EOF'

It loads libcurl, libxml2, SQLite, the C and C++ runtime and zlib from their Debian packages, whose copyright
files are in /usr/share/doc/<package>/copyright.

On Debian systems the complete text of the Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0.
EOF
} >"$stage/usr/share/doc/mediasync/copyright"

# A one-entry changelog (a native package's is changelog.gz), dated with SOURCE_DATE_EPOCH.
{
    echo "mediasync ($version) unstable; urgency=medium"
    echo
    echo "  * Built from commit $commit."
    echo
    echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$stage/usr/share/doc/mediasync/changelog.gz"

# Depends from what the binary links: dpkg-shlibdeps gives versioned dependencies from the installed packages'
# symbols files; failing that, the package of each NEEDED library (dpkg -S), unversioned.
printf 'Source: mediasync\n\nPackage: mediasync\nArchitecture: any\n' >"$work/debian/control"
# The path ldd resolves a NEEDED name to ("libc.so.6 => /lib/...", or the loader's own "/lib64/ld-linux...").
library_path() {
    awk -v lib="$1" '$1 == lib && $3 ~ /^\// { print $3; exit }
        $1 ~ "/" lib "$" { print $1; exit }' <<<"$ldd_out"
}
depends=""
if shlibdeps=$(cd "$work" && dpkg-shlibdeps -O "-edebian/mediasync/usr/bin/mediasync" 2>"$work/shlibdeps.log"); then
    depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$shlibdeps")
fi
if [ -z "$depends" ]; then
    pkg_log "dpkg-shlibdeps gave nothing ($(tr '\n' ' ' <"$work/shlibdeps.log")); mapping NEEDED with dpkg -S"
    packages=()
    for library in "${needed[@]}"; do
        path=$(library_path "$library")
        [ -n "$path" ] || pkg_die "ldd does not resolve $library"
        owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "$path" 2>/dev/null) ||
            pkg_die "no Debian package owns $path ($library)"
        packages+=("${owner%%:*}")
    done
    depends=$(printf '%s\n' "${packages[@]}" | LC_ALL=C sort -u | paste -sd, | sed 's/,/, /g')
fi
# Each NEEDED library and the package it comes from, for the log.
for library in "${needed[@]}"; do
    path=$(library_path "$library")
    owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "$path" 2>/dev/null || echo "?")
    pkg_log "  NEEDED $library -> $path (${owner%%:*})"
done

# Installed-Size as dpkg-gencontrol counts it: each file's size in KiB rounded up, 1 for each folder or link.
installed_kib=$(find "$stage" -path "$stage/DEBIAN" -prune -o -mindepth 1 -printf '%y %s\n' |
    awk '$1 == "f" { kib += int(($2 + 1023) / 1024); next } { kib += 1 } END { print kib }')

cat >"$stage/DEBIAN/control" <<EOF
Package: mediasync
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_kib
Depends: $depends
Recommends: mpv, ffmpeg
Section: net
Priority: optional
Description: offline mirror of a Jellyfin server and of podcast feeds
 mediasync keeps an offline copy of the movies, series, music and podcasts
 you select from a Jellyfin media server, and of podcast feeds, and brings
 it up to date with one command (by hand or from a systemd timer).
 .
 Downloads resume after any interruption and get their final name only once
 complete and verified; nothing is deleted unless asked. The mirror keeps
 Swiftfin's offline layout and can be exported as a human-named tree, served
 back to Jellyfin clients, and played with mpv, the played state going back
 to the server. ffmpeg remuxes transcoded downloads.
EOF

# Folders 755, files 644, the program 755, whatever the umask of the checkout was.
find "$stage" -type d -exec chmod 755 {} +
find "$stage" -type f -exec chmod 644 {} +
chmod 755 "$binary"

mkdir -p "$output"
deb="$output/mediasync_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group -Zxz "$stage" "$deb" >&2

if command -v lintian >/dev/null 2>&1; then
    pkg_log "lintian:"
    lintian --tag-display-limit 0 "$deb" >&2 || true
fi

pkg_log "Depends: $depends"
pkg_log "built in $(pkg_secs "$(pkg_ms_since "$started")")"
echo "package: $(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")"
echo "package size: $(pkg_human "$(stat -c %s "$deb")")"
echo "installed size: $(pkg_human $((installed_kib * 1024))) ($installed_kib KiB)"
