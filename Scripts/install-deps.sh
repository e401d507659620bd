#!/usr/bin/env bash
# Installs the Debian packages mediasync needs to build and test, if any is missing.
# Usage: Scripts/install-deps.sh [extra-package ...]
set -euo pipefail

# openssl: the TLS tests make a self-signed certificate and serve it with `openssl s_server`.
# mpv: `mediasync play` is tested against the real player (about 14 s to install here); ffmpeg: a transcode's remux
# into MP4/Matroska is tested with the real program (5 s more once mpv brought its libraries). strace: the export
# kill test stops the export at a chosen system call, so the kill lands mid-copy on any machine. chromium,
# chromium-driver: the page on `serve` is tested in a real headless browser (WebBrowserTests, Selenium from PyPI).
packages=(libcurl4-openssl-dev libxml2-dev libsqlite3-dev pkg-config curl ca-certificates coreutils util-linux openssl mpv ffmpeg strace chromium chromium-driver "$@")
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
