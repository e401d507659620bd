#!/usr/bin/env python3
"""Disk-full scenarios for Scripts/disk-full.sh. Each runs `mediasync sync` with a small tmpfs as the root
and prints what happened:

  refuse   the plan (known sizes) plus the 100 MB margin does not fit: sync must refuse before any download
  unknown  a podcast whose enclosures announce no length (the plan has no size): the disk fills mid-run
  writer   the plan fits, then another writer takes the free space mid-run

For each: exit code, error lines on standard error, files held and whether each is whole (the server's bytes),
requests for media made, `mediasync verify`, what is left in staging; then the filler is removed and sync runs
again, which must complete. A scenario passes when the first run exits 1 with one error line (no partial file at
a final path, index and tree agree, verify clean, staging empty) and the second run exits 0 with every file.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.request

from torture_kill import index_files, url_for

MARGIN = 100_000_000  # MirrorSync.spaceFloor


def mount(path, size):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], check=True)


def umount(path):
    subprocess.run(["umount", path], check=False)


def free_bytes(path):
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def fill(disk, leaving):
    """Preallocates a filler beside the root until about `leaving` bytes are free (grown in steps, so that a
    sync writing at the same time cannot make it fail)."""
    path = os.path.join(disk, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    step = 1 << 20
    try:
        while step >= 4096:
            if free_bytes(disk) - leaving < step:
                step //= 2
                continue
            try:
                os.posix_fallocate(fd, os.fstat(fd).st_size, step)
            except OSError:
                step //= 2
    finally:
        os.close(fd)
    return path


def tree(root):
    found = []
    for folder, _, names in os.walk(os.path.join(root, "Downloads")):
        for name in names:
            found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--movies-template", required=True)
    parser.add_argument("--podcast-template", required=True)
    parser.add_argument("--reference", required=True, help="a root synced once (movies and podcast): which files")
    parser.add_argument("--token", required=True)
    parser.add_argument("--plan-bytes", type=int, required=True, help="bytes the movies' plan announces")
    args = parser.parse_args()
    ms = os.path.join(args.bin, "mediasync")

    # The SHA-256 of every media file and episode as the server serves it.
    served = set()
    for path, key in index_files(args.reference).items():
        url = url_for(key, path)
        if url and path.endswith((".mkv", ".mp3")):
            request = urllib.request.Request(args.base + url)
            request.add_header("Authorization", f'MediaBrowser Client="disk-full", Token="{args.token}"')
            with urllib.request.urlopen(request, timeout=30) as response:
                served.add(hashlib.sha256(response.read()).hexdigest())

    def stats():
        with urllib.request.urlopen(args.base + "/__control/stats", timeout=10) as response:
            return json.loads(response.read())

    def throttle(rate):
        urllib.request.urlopen(args.base + f"/__control/throttle?bytes={rate}", timeout=10).read()

    results = []
    for name, size, template in [
        ("refuse", 112 << 20, args.movies_template),
        ("unknown", 8 << 20, args.podcast_template),
        ("writer", 112 << 20, args.movies_template),
    ]:
        disk = os.path.join(args.work, "disk-" + name)
        mount(disk, size)
        try:
            root = os.path.join(disk, "mirror")
            subprocess.run(["cp", "-a", template, root], check=True)
            env = dict(os.environ, MEDIASYNC_ROOT=root)
            sent_before = stats()["bodyBytesSent"]
            if name == "refuse":
                filler = fill(disk, MARGIN + args.plan_bytes // 2)
                first = subprocess.run([ms, "sync"], env=env, capture_output=True, text=True, timeout=300)
            elif name == "unknown":
                filler = fill(disk, 3_000_000)
                first = subprocess.run([ms, "sync"], env=env, capture_output=True, text=True, timeout=300)
            else:
                throttle(1_000_000)
                process = subprocess.Popen([ms, "sync"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                while stats()["bodyBytesSent"] - sent_before < 1_500_000 and process.poll() is None:
                    time.sleep(0.005)
                filler = fill(disk, 0)
                out, err = process.communicate(timeout=300)
                first = subprocess.CompletedProcess(process.args, process.returncode, out, err)
                throttle(0)
            free_at_end = free_bytes(disk)
            fetched = stats()["bodyBytesSent"] - sent_before
            errors = [line for line in first.stderr.splitlines() if " info " not in line]
            held = tree(root)
            whole = [p for p in held if p.endswith((".mkv", ".mp3"))]
            broken = [p for p in whole if hashlib.sha256(open(os.path.join(root, p), "rb").read()).hexdigest() not in served]
            indexed = sorted(index_files(root))
            verify = subprocess.run([ms, "verify"], env=env, capture_output=True, text=True)
            staging_dir = os.path.join(root, ".mediasync", "staging")
            staging = sorted(os.listdir(staging_dir)) if os.path.isdir(staging_dir) else []

            os.unlink(filler)
            second = subprocess.run([ms, "sync"], env=env, capture_output=True, text=True, timeout=300)
            held_after = tree(root)
            media_after = [p for p in held_after if p.endswith((".mkv", ".mp3"))]
            broken_after = [p for p in media_after
                            if hashlib.sha256(open(os.path.join(root, p), "rb").read()).hexdigest() not in served]
            verify_after = subprocess.run([ms, "verify"], env=env, capture_output=True, text=True)

            ok = (first.returncode == 1 and len(errors) == 1 and not broken and indexed == held
                  and verify.returncode == 0 and not staging and second.returncode == 0 and not broken_after
                  and verify_after.returncode == 0)
            if name == "refuse":
                ok = ok and not whole and errors[0].startswith("mediasync: not enough free space")
            else:
                ok = ok and bool(errors) and errors[0].startswith("mediasync: disk full")
            results.append(ok)
            print(f"== {name}: tmpfs {size} B ==")
            print(f"  first sync:  exit {first.returncode}, {len(errors)} error line(s), {fetched} body bytes fetched, "
                  f"{free_at_end} B free at the end")
            for line in errors:
                print(f"    {line}")
            print(f"  after it:    {len(held)} files held ({len(whole)} media, {len(broken)} not whole), "
                  f"index {'agrees' if indexed == held else 'DIFFERS'}, verify exit {verify.returncode}, "
                  f"staging {staging or 'empty'}")
            print(f"  freed, sync: exit {second.returncode}, {len(held_after)} files ({len(media_after)} media, "
                  f"{len(broken_after)} not whole), verify exit {verify_after.returncode}")
            print(f"  verdict:     {'ok' if ok else 'FAIL'}")
        finally:
            umount(disk)
    print(f"RESULT scenarios={len(results)} failures={results.count(False)}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
