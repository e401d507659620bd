#!/usr/bin/env python3
"""Crash torture driver for Scripts/torture-kill.sh.

Each trial starts `mediasync sync` on a fresh root (a copy of a template holding the selections and the podcast
subscription) or on the previous trial's root after the server changed some media, kills it with SIGKILL at a
chosen moment, reruns sync until it exits 0 (bounded), and checks the mirror against the server:

  tree      the files under Downloads/ are exactly the expected paths (a reference sync made them), nothing else:
            no partial or temporary file at or beside a final path
  bytes     every media, image and subtitle file has the SHA-256 of what the server serves now (fetched
            unthrottled after the trial); every metadata.json parses
  index     the index's file table lists exactly the files on disk; `mediasync verify` exits 0
  staging   .mediasync/staging holds nothing after the successful run
  refetch   bytes fetched again <= bound, from the server's request log (body bytes each response sent):
              fetched again = sum over file URLs of (bytes served for it during the trial, killed run and
                              reruns) - (its size, when the trial had to fetch it: all files on a fresh root,
                              the changed ones on a continuing root), counting only excesses
              bound         = the partial files' sizes (body bytes sent by responses still running at the kill)
                              + one retry each for the last CONCURRENCY files whose bodies had been sent before
                              the kill (a file fetched but not yet placed and recorded when the process died)
  held      the partial files the client held on its own disk at the kill (the process is stopped with SIGSTOP,
            its staging folder and its unnamed files, /proc/PID/fd, are read, then it gets SIGKILL): each held past
            HELD_THRESHOLD (1.25 MiB, clearly past the resume threshold) must be continued by the reruns, never
            fetched from byte 0 again. Counted: held, resumed, started over (with what the reruns' responses were:
            status, Range, bytes sent); one with a resume record that started over fails the trial.

Kill moments (chosen per trial at random, recorded): `listing` (0-250 ms after start, 10%), `delay` (uniform
over the typical duration of a full sync, 40%), `body-end#K` (0-8 ms after the server sent the K-th whole file
body: last writes, fsync, link into place, index record; 20%), `downloaded#K` (0-30 ms after the K-th
"downloaded" log line, 15%), `written#K` (0-20 ms after the K-th "written" log line: metadata writes, 15%).
The phase reached at the kill is read from the request log and the log lines: listing, placement/index (a
whole body was sent but the file was not yet reported placed), mid-transfer, between files, metadata writes,
or finished (the sync ended before the kill).
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

# Past this many bytes the client keeps a partial file with a resume record (FileWriter.resumeRecordThreshold).
RESUME_THRESHOLD = 1 << 20
# A partial file held past this at the kill is one the client promised to resume (well past the moment its record is
# written).
HELD_THRESHOLD = RESUME_THRESHOLD + (RESUME_THRESHOLD >> 2)
FILE_PREFIXES = ("/Items/", "/Videos/", "/files/")


def is_file_path(path):
    """Whether a request path fetches a file the mirror keeps (not an API listing, a feed or a control call)."""
    if path.startswith("/files/"):
        return not path.endswith(".xml")
    if path.startswith("/Items/"):
        return path.endswith("/Download") or "/Images/" in path
    return path.startswith("/Videos/") and "/Subtitles/" in path


class Server:
    def __init__(self, base, token, log_path):
        self.base = base
        self.token = token
        self.log_path = log_path
        self.log_offset = 0
        self.responses = {}  # seq -> record
        self.cache = {}  # (path, generation) -> (size, sha256)

    def get(self, path, auth=False, timeout=30):
        request = urllib.request.Request(self.base + path)
        if auth:
            request.add_header("Authorization", f'MediaBrowser Client="torture", Token="{self.token}"')
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read()

    def stats(self):
        return json.loads(self.get("/__control/stats"))

    def wait_idle(self, limit=30.0):
        """Waits until no request but the stats call itself is in flight; returns the response count then."""
        deadline = time.monotonic() + limit
        while True:
            stats = self.stats()
            if stats["inFlight"] <= 1 or time.monotonic() > deadline:
                return stats["responses"]
            time.sleep(0.02)

    def read_log(self):
        with open(self.log_path, "rb") as log:
            log.seek(self.log_offset)
            data = log.read()
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.log_offset += end + 1
        for line in data[: end + 1].splitlines():
            record = json.loads(line)
            self.responses[record["seq"]] = record

    def segment(self, after, upto):
        self.read_log()
        return [self.responses[s] for s in range(after + 1, upto + 1) if s in self.responses]

    def expected(self, path, generation):
        """Size and SHA-256 of what the server serves at `path` now (fetched with the throttle off)."""
        key = (path, generation)
        if key not in self.cache:
            data = self.get(path, auth=path.startswith("/Items/") or path.startswith("/Videos/"))
            self.cache[key] = (len(data), hashlib.sha256(data).hexdigest())
        return self.cache[key]


def url_for(key, path):
    """The server path a file of the mirror comes from, by its index key (see MirrorFiles, PodcastSource)."""
    parts = key.split(":")
    if parts[0] == "media":
        return f"/Items/{parts[2]}/Download"
    if parts[0] == "image":
        return f"/Items/{parts[1]}/Images/{parts[2]}" + ("/0" if parts[2] == "Backdrop" else "")
    if parts[0] == "subtitle":
        return f"/Videos/{parts[1]}/{parts[2]}/Subtitles/{parts[3]}/Stream.{path.rsplit('.', 1)[-1]}"
    if parts[0] == "podcast":
        return f"/files/podcast/{os.path.basename(path)}"
    return None


def fnv1a64(text):
    """StagingArea.fnv1a64: the hash that names a destination's partial file in the staging area."""
    value = 0xcbf29ce484222325
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return value


def held_partials(pid, root):
    """The partial files a (stopped) sync process holds on its own disk: [(where, size, inode, record)], where is the
    staging name or the folder of an unnamed file (O_TMPFILE), record the resume record's JSON or None."""
    held = []
    seen = set()
    staging_dir = os.path.join(root, ".mediasync", "staging")
    for name in (os.listdir(staging_dir) if os.path.isdir(staging_dir) else []):
        if not name.endswith(".part"):
            continue
        try:
            info = os.lstat(os.path.join(staging_dir, name))
        except OSError:
            continue
        record = None
        try:
            with open(os.path.join(staging_dir, name + ".meta"), "rb") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            pass
        seen.add(info.st_ino)
        held.append((name, info.st_size, info.st_ino, record))
    fd_dir = f"/proc/{pid}/fd"
    for fd in (os.listdir(fd_dir) if os.path.isdir(fd_dir) else []):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
            info = os.stat(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if (not target.startswith(root + "/") or not target.endswith(" (deleted)") or info.st_ino in seen
                or not os.path.basename(target).startswith("#")):
            continue
        seen.add(info.st_ino)
        held.append((os.path.dirname(target), info.st_size, info.st_ino, None))
    return held


def index_files(root):
    uri = "file:" + os.path.join(root, ".mediasync", "index.sqlite") + "?mode=ro"
    db = sqlite3.connect(uri, uri=True)
    try:
        return {row[0]: row[1] for row in db.execute("SELECT path, key FROM file")}
    finally:
        db.close()


def tree(root, sub):
    base = os.path.join(root, sub)
    found = []
    for folder, _, names in os.walk(base):
        for name in names:
            found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class SyncRun:
    """One `mediasync sync` process whose log lines are watched as they come."""

    def __init__(self, binary, root, env, out_path):
        self.lines = []
        self.arrivals = []
        self.cond = threading.Condition()
        environment = dict(env, MEDIASYNC_ROOT=root)
        self.out = open(out_path, "ab")
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [binary, "sync"], env=environment, stdout=self.out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self.cond:
                self.lines.append(line)
                self.arrivals.append(time.monotonic_ns())
                self.cond.notify_all()
            self.out.write(b"stderr: " + raw)
        with self.cond:
            self.cond.notify_all()

    def count(self, word):
        return sum(1 for line in self.lines if f" info {word} " in line)

    def wait_for(self, word, k, limit):
        """Waits for the k-th log line `info <word> …`; False when the process ended or the limit passed."""
        deadline = time.monotonic() + limit
        with self.cond:
            while self.count(word) < k:
                if self.process.poll() is not None and not self.reader.is_alive():
                    return False
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.cond.wait(min(remaining, 0.05))
        return True

    def finish(self):
        code = self.process.wait()
        self.reader.join(timeout=10)
        self.out.close()
        return code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--template", required=True, help="a root with selections and subscriptions, never synced")
    parser.add_argument("--reference", required=True, help="a root synced once without interruption")
    parser.add_argument("--request-log", required=True)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--typical", type=float, required=True, help="seconds a full sync takes")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--continue-share", type=float, default=0.25)
    parser.add_argument("--max-reruns", type=int, default=5)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    ms = os.path.join(args.bin, "mediasync")
    env = dict(os.environ)
    server = Server(args.base, args.token, args.request_log)
    throttle = None

    # The expected paths, from the reference root (its tree and its index must agree).
    reference_index = index_files(args.reference)
    expected_paths = sorted(reference_index)
    if tree(args.reference, "Downloads") != expected_paths:
        print("torture: the reference sync's tree and index differ", file=sys.stderr)
        return 2
    keys = dict(reference_index)
    urls = {path: url_for(key, path) for path, key in keys.items()}
    file_paths = [p for p in expected_paths if urls[p]]
    paths_by_url = {urls[p]: p for p in file_paths}
    metadata_paths = [p for p in expected_paths if not urls[p]]

    def server_state():
        """(generation, {path: (size, sha)}) of the files as served now, fetched unthrottled."""
        generation = server.stats()["generation"]
        missing = [p for p in file_paths if (urls[p], generation) not in server.cache]
        if missing:
            server.get("/__control/throttle?bytes=0")
            try:
                for path in missing:
                    server.expected(urls[path], generation)
            finally:
                server.get(f"/__control/throttle?bytes={throttle}")
        return generation, {p: server.cache[(urls[p], generation)] for p in file_paths}

    # The throttle the shell script started the server with, to restore after unthrottled fetches.
    throttle = int(os.environ.get("TORTURE_THROTTLE", "0"))

    _, reference_state = server_state()
    for path in file_paths:
        if sha256_file(os.path.join(args.reference, path)) != reference_state[path][1]:
            print(f"torture: the reference sync's {path} differs from the server", file=sys.stderr)
            return 2

    root = os.path.join(args.work, "root")
    have_root = False
    results = []
    phase_counts = {}
    trigger_counts = {}
    total_refetched = 0
    total_bound = 0
    total_partial = 0
    failures = []
    kills = 0

    resume_counts = {"with record": 0, "resumed": 0, "restarted": 0, "sent past the threshold, no record": 0}
    held_counts = {"held past 1.25 MiB": 0, "resumed": 0, "started over": 0, "not asked again": 0, "unmapped": 0}
    held_details = []
    for trial in range(1, args.trials + 1):
        problems = []
        continuing = have_root and rng.random() < args.continue_share
        changed = []
        if continuing:
            answer = json.loads(server.get(f"/__control/change-media?count={rng.randint(1, 3)}"))
            changed = answer["changed"]
        else:
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(args.template, root, symlinks=True)
        generation, state = server_state()
        # What this trial has to fetch: files missing or different on disk, and the subtitles of a changed
        # version (their signature is the version's: they are fetched again with it, by design).
        needed = {}
        for path in file_paths:
            full = os.path.join(root, path)
            key = keys[path].split(":")
            if (not os.path.exists(full) or sha256_file(full) != state[path][1]
                    or (key[0] == "subtitle" and key[2] in changed)):
                needed[urls[path]] = state[path][0]

        # Kill moment.
        roll = rng.random()
        if roll < 0.10:
            trigger, delay = "listing", rng.uniform(0, 0.25)
        elif roll < 0.50:
            trigger, delay = "delay", rng.uniform(0, args.typical)
        elif roll < 0.70:
            trigger, delay = f"body-end#{rng.randint(1, max(1, len(needed)))}", rng.uniform(0, 0.008)
        elif roll < 0.85:
            trigger, delay = f"downloaded#{rng.randint(1, max(1, len(needed)))}", rng.uniform(0, 0.03)
        else:
            trigger, delay = f"written#{rng.randint(1, max(1, len(metadata_paths)))}", rng.uniform(0, 0.02)
        trigger_kind = trigger.split("#")[0]
        trigger_counts[trigger_kind] = trigger_counts.get(trigger_kind, 0) + 1

        mark_start = server.wait_idle()
        log_path = os.path.join(args.work, f"trial-{trial:03d}.log")
        run = SyncRun(ms, root, env, log_path)
        if trigger_kind in ("downloaded", "written"):
            word, k = trigger.split("#")
            reached = run.wait_for(word, int(k), limit=args.typical * 4 + 10)
            if reached:
                time.sleep(delay)
        elif trigger_kind == "body-end":
            # The server has sent the k-th whole file body: the client is writing its last bytes, flushing,
            # linking it into place and recording it.
            k = int(trigger.split("#")[1])
            deadline = time.monotonic() + args.typical * 4 + 10
            while run.process.poll() is None and time.monotonic() < deadline:
                server.read_log()
                done = sum(1 for seq, r in server.responses.items()
                           if seq > mark_start and is_file_path(r["path"]) and r["status"] in (200, 206)
                           and r["sent"] == r["planned"])
                if done >= k:
                    time.sleep(delay)
                    break
                time.sleep(0.001)
        else:
            deadline = time.monotonic() + delay
            while time.monotonic() < deadline and run.process.poll() is None:
                time.sleep(min(0.005, max(0, deadline - time.monotonic())))
        kill_ns = time.monotonic_ns()
        killed = run.process.poll() is None
        held = []
        if killed:
            # Stopped first, so what it holds on its disk is read at the moment of the kill.
            os.kill(run.process.pid, signal.SIGSTOP)
            held = held_partials(run.process.pid, root)
            os.kill(run.process.pid, signal.SIGKILL)
            kills += 1
        moment_ms = (kill_ns / 1e9 - run.started) * 1000
        first_code = run.finish()
        # What the killed run left to resume: partial files with a resume record (its URL names the file).
        resumable = {}
        staging_dir = os.path.join(root, ".mediasync", "staging")
        for name in (os.listdir(staging_dir) if os.path.isdir(staging_dir) else []):
            if not name.endswith(".part.meta"):
                continue
            try:
                with open(os.path.join(staging_dir, name), "rb") as handle:
                    url = json.load(handle)["url"]
                part_size = os.path.getsize(os.path.join(staging_dir, name[: -len(".meta")]))
            except (OSError, ValueError, KeyError):
                continue
            resumable[urllib.parse.urlsplit(url).path] = part_size
        if not killed and first_code != 0:
            problems.append(f"the first run exited {first_code} before the kill")
        mark_killed = server.wait_idle()
        killed_segment = server.segment(mark_start, mark_killed)
        lines = [line for line, at in zip(run.lines, run.arrivals) if at <= kill_ns]

        # The phase reached at the kill: a whole body sent but the file not yet reported placed counts as
        # placement/index (the client flushes, links and records it), even while other transfers run.
        file_responses = [r for r in killed_segment if is_file_path(r["path"]) and r["method"] == "GET"]
        reported = {word for line in lines if " info downloaded " in line
                    for word in line.split() if word.startswith("Downloads/")}
        placing = [r for r in file_responses
                   if r["end_ns"] <= kill_ns and r["status"] in (200, 206) and r["sent"] == r["planned"]
                   and paths_by_url.get(r["path"]) not in reported]
        if not killed:
            phase = "finished"
        elif not any(r["start_ns"] <= kill_ns for r in file_responses):
            phase = "listing"
        elif placing:
            phase = "placement/index"
        elif any(r["start_ns"] <= kill_ns < r["end_ns"] for r in file_responses):
            phase = "mid-transfer"
        elif not any(" info written " in line for line in lines):
            phase = "between files"
        else:
            phase = "metadata writes"
        phase_counts[phase] = phase_counts.get(phase, 0) + 1

        # Rerun until success.
        reruns = []
        while True:
            rerun = SyncRun(ms, root, env, log_path)
            code = rerun.finish()
            reruns.append(code)
            if code == 0 or len(reruns) >= args.max_reruns:
                break
        if reruns[-1] != 0:
            problems.append(f"sync did not succeed in {len(reruns)} reruns (exit codes {reruns})")
        mark_end = server.wait_idle()
        trial_segment = killed_segment + server.segment(mark_killed, mark_end)

        # Resumes: every partial file left with a resume record is continued (its first rerun request has a
        # Range), never fetched from the start; the server did not change during the trial.
        rerun_segment = trial_segment[len(killed_segment):]
        def from_zero(responses):
            """Whether one of these responses sent the file's body from byte 0 (no Range, or a 200 to one)."""
            return any(r["sent"] > 0 and (not r["range"] or r["status"] == 200) for r in responses)

        def answers(responses):
            return "; ".join(f"{r['status']} to {r['range'] or 'no Range'}, {r['sent']} B" for r in responses)

        for path, part_size in sorted(resumable.items()):
            asked = [r for r in rerun_segment if r["path"] == path and r["method"] == "GET"]
            if not asked:
                continue  # placed before the kill or no longer wanted
            resume_counts["with record"] += 1
            # Resumed: its first rerun request continues it, and no later one fetches it from byte 0 (a 416 to the
            # Range of a complete partial file, then the whole file, counted as resumed before).
            if asked[0]["range"] and not from_zero(asked):
                resume_counts["resumed"] += 1
            else:
                resume_counts["restarted"] += 1
                problems.append(
                    f"{path}: a {part_size}-byte partial file with a resume record was fetched from byte 0 "
                    f"({answers(asked)})")
        # What the client held on its disk at the kill, past the threshold: continued, or started over, and why.
        hashes = {f"{fnv1a64(os.path.join(root, p)):x}": urls[p] for p in file_paths}
        sizes_by_url = {urls[p]: state[p][0] for p in file_paths}
        for where, size, _, record in held:
            if size < HELD_THRESHOLD:
                continue
            held_counts["held past 1.25 MiB"] += 1
            if record is not None:
                url = urllib.parse.urlsplit(record.get("url", "")).path
            elif where.endswith(".part"):
                url = hashes.get(where.split("-", 1)[0])
            else:
                # An unnamed file: the one file of its folder whose response was running at the kill with as many
                # bytes sent.
                folder = os.path.relpath(where, root)
                candidates = {r["path"] for r in file_responses
                              if r["start_ns"] <= kill_ns < r["end_ns"] and r["sent"] >= size
                              and os.path.dirname(paths_by_url.get(r["path"], "")) == folder}
                url = candidates.pop() if len(candidates) == 1 else None
            if url is None:
                held_counts["unmapped"] += 1
                held_details.append(f"trial {trial}: {where} held {size} B: not mapped to a URL")
                continue
            asked = [r for r in rerun_segment if r["path"] == url and r["method"] == "GET"]
            total = sizes_by_url.get(url)
            kind = "staged with a record" if record is not None else (
                "staged, no record" if where.endswith(".part") else "unnamed")
            detail = (f"trial {trial}: {url} held {size} of {total} B ({kind}); reruns: "
                      f"{answers(asked) or 'not asked again'}")
            if not asked:
                held_counts["not asked again"] += 1
            elif from_zero(asked):
                held_counts["started over"] += 1
                held_details.append(detail)
                print(f"    held, started over: {detail}", flush=True)
                if record is not None:
                    problems.append(f"held past the threshold, started over: {detail}")
            else:
                held_counts["resumed"] += 1
        # Files the server had sent past the threshold when the kill came but the client held no record of: the
        # bytes were in the sockets' buffers, never written by the client (loopback buffers hold megabytes).
        for r in file_responses:
            if r["end_ns"] > kill_ns and r["sent"] >= RESUME_THRESHOLD and r["path"] not in resumable:
                resume_counts["sent past the threshold, no record"] += 1

        # Checks.
        on_disk = tree(root, "Downloads")
        extra = sorted(set(on_disk) - set(expected_paths))
        missing = sorted(set(expected_paths) - set(on_disk))
        if extra:
            problems.append(f"unexpected files: {extra}")
        if missing:
            problems.append(f"missing files: {missing}")
        generation_after, state_after = server_state()
        if generation_after != generation:
            problems.append("the server changed during the trial")
        for path in file_paths:
            full = os.path.join(root, path)
            if os.path.exists(full):
                digest = sha256_file(full)
                if digest != state_after[path][1]:
                    size = os.path.getsize(full)
                    problems.append(
                        f"{path}: {size} bytes, sha256 {digest[:12]}, server has {state_after[path][0]} bytes "
                        f"sha256 {state_after[path][1][:12]}")
        for path in metadata_paths:
            full = os.path.join(root, path)
            if os.path.exists(full):
                try:
                    with open(full, "rb") as handle:
                        json.load(handle)
                except ValueError as error:
                    problems.append(f"{path} is not JSON: {error}")
        try:
            indexed = sorted(index_files(root))
        except sqlite3.Error as error:
            indexed = []
            problems.append(f"index unreadable: {error}")
        if indexed != on_disk:
            problems.append(
                f"index and tree differ: only indexed {sorted(set(indexed) - set(on_disk))}, "
                f"only on disk {sorted(set(on_disk) - set(indexed))}")
        staging = tree(root, os.path.join(".mediasync", "staging"))
        if staging:
            problems.append(f"left in staging: {staging}")
        verify = subprocess.run(
            [ms, "verify"], env=dict(env, MEDIASYNC_ROOT=root), capture_output=True, text=True)
        if verify.returncode != 0:
            problems.append(f"verify exited {verify.returncode}: {verify.stdout.strip()} {verify.stderr.strip()}")

        # Bytes fetched again, and the bound.
        served = {}
        for r in trial_segment:
            if is_file_path(r["path"]) and r["method"] == "GET":
                served[r["path"]] = served.get(r["path"], 0) + r["sent"]
        refetched = sum(max(0, sent - needed.get(path, 0)) for path, sent in served.items())
        partial = sum(r["sent"] for r in file_responses if r["end_ns"] > kill_ns) if killed else 0
        done_before = sorted(
            (r for r in file_responses if r["end_ns"] <= kill_ns and r["status"] in (200, 206)),
            key=lambda r: r["end_ns"])
        retry = sum(r["planned"] for r in done_before[-args.concurrency:]) if killed else 0
        bound = partial + retry
        if refetched > bound:
            worst = sorted(
                ((sent - needed.get(path, 0), path) for path, sent in served.items() if sent > needed.get(path, 0)),
                reverse=True)[:5]
            problems.append(f"fetched again {refetched} B > bound {bound} B (largest: {worst})")
        with open(os.path.join(args.work, f"trial-{trial:03d}.json"), "w") as details:
            json.dump({"kill_ns": kill_ns, "killed": killed, "needed": needed,
                       "killed_run": [r for r in killed_segment if is_file_path(r["path"])],
                       "reruns": [r for r in trial_segment[len(killed_segment):] if is_file_path(r["path"])]},
                      details, indent=1)
        total_refetched += refetched
        total_bound += bound
        total_partial += partial

        verdict = "ok" if not problems else "FAIL"
        mode = "continue" + (f"(changed {len(changed)})" if changed else "") if continuing else "fresh"
        row = (f"trial {trial:3d} {mode:19s} kill {trigger:14s} at {moment_ms:7.0f} ms  phase {phase:16s} "
               f"reruns {','.join(map(str, reruns)):5s} fetched again {refetched:>9} B / bound {bound:>9} B  {verdict}")
        print(row, flush=True)
        results.append(row)
        if problems:
            failures.append((trial, mode, trigger, moment_ms, phase, problems, log_path))
            for problem in problems:
                print(f"    - {problem}", flush=True)
        have_root = True

    print()
    print(f"== crash torture: {args.trials} trials, {kills} kills, seed {args.seed}, server {args.base} ==")
    print("kill triggers: " + ", ".join(f"{k} {v}" for k, v in sorted(trigger_counts.items())))
    print("phase at the kill: " + ", ".join(f"{k} {v}" for k, v in sorted(phase_counts.items())))
    print(f"bytes fetched again: {total_refetched} of a bound of {total_bound} = {total_partial} partial "
          f"(body bytes of responses running at the kill) + {total_bound - total_partial} retries (one for each "
          f"of the last {args.concurrency} files fetched before the kill)")
    print("resumes: " + ", ".join(f"{k} {v}" for k, v in resume_counts.items()))
    print("held at the kill: " + ", ".join(f"{k} {v}" for k, v in held_counts.items()))
    for detail in held_details:
        print(f"  {detail}")
    print(f"failures: {len(failures)}")
    for trial, mode, trigger, moment_ms, phase, problems, log_path in failures:
        print(f"  trial {trial} ({mode}, kill {trigger} at {moment_ms:.0f} ms, {phase}; log {log_path}):")
        for problem in problems:
            print(f"    - {problem}")
    print(f"RESULT trials={args.trials} failures={len(failures)} kills={kills} "
          f"refetched_bytes={total_refetched} bound_bytes={total_bound} partial_bytes={total_partial} "
          f"resumable_at_kill={resume_counts['with record']} resumed={resume_counts['resumed']} "
          f"restarted={resume_counts['restarted']} held={held_counts['held past 1.25 MiB']} "
          f"held_resumed={held_counts['resumed']} held_started_over={held_counts['started over']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
