#!/usr/bin/env python3
"""Generate a realistic, deterministic podcast feed for Scripts/bench-feeds.sh.

Usage: gen_feed.py ITEMS OUT.xml [--seed N] [--expect OUT.json]

RSS 2.0 with the iTunes namespace, Podcasting 2.0 tags (podcast:guid, podcast:locked,
podcast:funding, podcast:transcript, podcast:chapters), content:encoded and atom:link.
Every item has a guid, an RFC 822 pubDate (newest first), itunes:duration (a mix of
HH:MM:SS, MM:SS and plain seconds), itunes:episode/season/episodeType/explicit/image,
an enclosure with length and type, one or two transcripts, a chapters URL, a 1-2 KB
CDATA HTML description and a shorter (0.15-0.45 KB) CDATA content:encoded; 50,000
items come to about 159 MB (the issue measured a 144 MB feed). The same ITEMS and seed always
give the same bytes (no clock, no hash randomisation involved).

--expect writes what a parser should find for a few items (count, guid, duration in
seconds, enclosure length/type, season, episode, transcripts, chapters URL) as JSON.
"""
import argparse
import json
import random
import sys

WORDS = (
    "the a of and to in is that it for on with as was at by this be are from or have an "
    "episode podcast interview guest host story history science music culture technology "
    "design language city river mountain garden kitchen recipe coffee bread market season "
    "listener question answer archive library museum journey north south ocean island train "
    "bicycle engine robot signal network server stream feed parser memory record vinyl radio "
    "studio microphone editor draft chapter transcript analysis research theory evidence "
    "festival workshop community neighbour school teacher student lecture notebook pencil "
    "winter summer autumn spring morning evening midnight weekend holiday calendar deadline"
).split()
# Non-ASCII words as they appear in real show notes (UTF-8 in CDATA).
FANCY = ["café", "naïve", "résumé", "Zürich", "São Paulo", "Kraków", "smörgåsbord",
         "jalapeño", "façade", "déjà vu", "Ελλάδα", "東京", "🎙️", "👋", "—", "…"]
NAMES = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Linus Pauling",
         "Marie Curie", "Nikola Tesla", "Hedy Lamarr", "Claude Shannon", "Barbara Liskov",
         "Donald Knuth", "Frances Allen", "Rosalind Franklin", "Tim Berners-Lee", "Mae Jemison"]
TITLE_STARTS = ["Why", "How", "What", "The Case for", "Inside", "Notes on", "Against",
                "A Short History of", "Rethinking", "Listening to", "On"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
ZONES = ["+0000", "GMT", "-0500", "-0800", "+0100", "+0200", "EST", "PST", "+0530"]

BASE = "https://feeds.example.org/bench"
MEDIA = "https://media.example.net/bench"


def days_from_civil(y, m, d):
    """Days since 1970-01-01 (proleptic Gregorian); avoids datetime/locale state."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def rfc822(epoch, zone):
    days, secs = divmod(epoch, 86400)
    y, m, d = civil_from_days(days)
    wd = DAYS[(days + 3) % 7]  # 1970-01-01 was a Thursday
    hh, rem = divmod(secs, 3600)
    mm, ss = divmod(rem, 60)
    return f"{wd}, {d:02d} {MONTHS[m - 1]} {y} {hh:02d}:{mm:02d}:{ss:02d} {zone}"


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def words(self, n):
        r = self.r
        out = []
        for _ in range(n):
            if r.random() < 0.02:
                out.append(r.choice(FANCY))
            else:
                out.append(r.choice(WORDS))
        return " ".join(out)

    def sentence(self):
        s = self.words(self.r.randint(8, 18))
        return s[0].upper() + s[1:] + self.r.choice([".", ".", ".", "?", "!"])

    def paragraph(self):
        r = self.r
        k = r.random()
        if k < 0.55:
            return "<p>" + " ".join(self.sentence() for _ in range(r.randint(1, 3))) + "</p>"
        if k < 0.7:
            return ("<p>With <strong>" + r.choice(NAMES) + "</strong> &amp; "
                    + "<em>" + r.choice(NAMES) + "</em> &mdash; " + self.sentence() + "</p>")
        if k < 0.85:
            return "<ul>" + "".join(
                f'<li><a href="https://example.com/{r.choice(WORDS)}/{r.randint(1, 99999)}?ref=pod&amp;utm=rss">'
                f"{self.words(r.randint(2, 5))}</a></li>" for _ in range(r.randint(2, 4))) + "</ul>"
        return (f"<p>({r.randint(0, 59):02d}:{r.randint(0, 59):02d}) "
                + self.sentence() + " <br/>" + self.sentence() + "</p>")

    def html(self, lo, hi):
        """HTML show notes of lo..hi bytes (UTF-8), as found in CDATA sections."""
        target = self.r.randint(lo, hi)
        parts = []
        size = 0
        misses = 0
        while size < target:
            p = self.paragraph()
            n = len(p.encode("utf-8")) + 1
            if size + n > hi:
                misses += 1
                if size >= lo or misses > 20:
                    break
                continue
            parts.append(p)
            size += n
        return "\n".join(parts)


def duration_text(r, seconds):
    k = r.random()
    if k < 0.6:
        h, rem = divmod(seconds, 3600)
        m, s = divmod(rem, 60)
        return f"{h:02d}:{m:02d}:{s:02d}"
    if k < 0.85:
        m, s = divmod(seconds, 60)
        return f"{m}:{s:02d}"
    return str(seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("items", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=20240604)
    ap.add_argument("--expect")
    a = ap.parse_args()
    if a.items < 1:
        sys.exit("gen_feed.py: ITEMS must be >= 1")

    g = Gen(a.seed * 1_000_003 + a.items)
    r = g.r
    expect_items = {}
    sample = {0, a.items // 2, a.items - 1}

    with open(a.out, "w", encoding="utf-8", newline="\n") as f:
        w = f.write
        w('<?xml version="1.0" encoding="UTF-8"?>\n'
          '<rss version="2.0"\n'
          '     xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"\n'
          '     xmlns:podcast="https://podcastindex.org/namespace/1.0"\n'
          '     xmlns:content="http://purl.org/rss/1.0/modules/content/"\n'
          '     xmlns:atom="http://www.w3.org/2005/Atom">\n'
          '<channel>\n')
        w(f"  <title>The Benchmark Hour ({a.items} episodes)</title>\n"
          f"  <link>https://example.org/bench</link>\n"
          f'  <atom:link href="{BASE}/{a.items}.xml" rel="self" type="application/rss+xml"/>\n'
          f"  <description><![CDATA[<p>{g.sentence()} {g.sentence()}</p>]]></description>\n"
          f"  <language>en-us</language>\n"
          f"  <copyright>&#169; 2024 Example Media</copyright>\n"
          f"  <lastBuildDate>{rfc822(1717500000, '+0000')}</lastBuildDate>\n"
          f"  <generator>mediasync bench-feeds gen_feed.py</generator>\n"
          f"  <itunes:author>Example Media &amp; Friends</itunes:author>\n"
          f"  <itunes:summary>{g.sentence()}</itunes:summary>\n"
          f"  <itunes:owner><itunes:name>Example Media</itunes:name>"
          f"<itunes:email>podcast@example.org</itunes:email></itunes:owner>\n"
          f'  <itunes:image href="{MEDIA}/artwork/show-3000.jpg"/>\n'
          f'  <itunes:category text="Technology"><itunes:category text="Tech News"/></itunes:category>\n'
          f'  <itunes:category text="Education"/>\n'
          f"  <itunes:explicit>false</itunes:explicit>\n"
          f"  <itunes:type>episodic</itunes:type>\n"
          f"  <podcast:guid>6c1e3f55-8a4b-5d7e-9f21-0b3c4d5e6f70</podcast:guid>\n"
          f'  <podcast:locked owner="podcast@example.org">yes</podcast:locked>\n'
          f'  <podcast:funding url="https://example.org/support">Support the show</podcast:funding>\n'
          f"  <image><url>{MEDIA}/artwork/show-1400.jpg</url><title>The Benchmark Hour</title>"
          f"<link>https://example.org/bench</link></image>\n")

        newest = 1717400000
        t = newest
        seasons = max(1, a.items // 100)
        for i in range(a.items):
            number = a.items - i                       # newest first
            season = (number - 1) * seasons // a.items + 1
            t -= r.randint(2 * 86400, 5 * 86400) + r.randint(0, 3600)
            zone = r.choice(ZONES)
            guid = f"bench-{a.items}-ep-{number:06d}-{r.getrandbits(64):016x}"
            seconds = r.randint(600, 3 * 3600 + 1200)
            dur = duration_text(r, seconds)
            kind = "trailer" if number == 1 else ("bonus" if r.random() < 0.05 else "full")
            explicit = "true" if r.random() < 0.1 else "false"
            mp3 = r.random() < 0.8
            ctype = "audio/mpeg" if mp3 else "audio/x-m4a"
            ext = "mp3" if mp3 else "m4a"
            length = seconds * (16000 if mp3 else 12000) + r.randint(0, 99999)
            enc_url = f"{MEDIA}/episodes/{number:06d}/episode-{number}.{ext}?source=rss"
            title = f"{number}: {r.choice(TITLE_STARTS)} {g.words(r.randint(2, 6)).title()}"
            if r.random() < 0.1:
                title += " &amp; " + r.choice(NAMES)
            transcripts = [(f"{MEDIA}/episodes/{number:06d}/transcript.vtt", "text/vtt")]
            if r.random() < 0.5:
                transcripts.append((f"{MEDIA}/episodes/{number:06d}/transcript.json", "application/json"))
            chapters = f"{MEDIA}/episodes/{number:06d}/chapters.json"
            desc = g.html(1024, 2048)
            content = g.html(150, 450)  # shorter show notes: ~159 MB at 50,000 items (the issue measured 144 MB)
            link = f"https://example.org/bench/episodes/{number}"

            w("  <item>\n"
              f"    <title>{title}</title>\n"
              f"    <link>{link}</link>\n"
              f'    <guid isPermaLink="false">{guid}</guid>\n'
              f"    <pubDate>{rfc822(t, zone)}</pubDate>\n"
              f"    <description><![CDATA[{desc}]]></description>\n"
              f"    <content:encoded><![CDATA[{content}]]></content:encoded>\n"
              f'    <enclosure url="{enc_url}" length="{length}" type="{ctype}"/>\n'
              f"    <itunes:title>{title}</itunes:title>\n"
              f"    <itunes:author>{r.choice(NAMES)}</itunes:author>\n"
              f"    <itunes:duration>{dur}</itunes:duration>\n"
              f"    <itunes:season>{season}</itunes:season>\n"
              f"    <itunes:episode>{number}</itunes:episode>\n"
              f"    <itunes:episodeType>{kind}</itunes:episodeType>\n"
              f"    <itunes:explicit>{explicit}</itunes:explicit>\n"
              f'    <itunes:image href="{MEDIA}/artwork/ep-{number:06d}.jpg"/>\n')
            for url, typ in transcripts:
                w(f'    <podcast:transcript url="{url}" type="{typ}"'
                  + (' language="en"' if typ == "text/vtt" else "") + "/>\n")
            w(f'    <podcast:chapters url="{chapters}" type="application/json+chapters"/>\n'
              "  </item>\n")
            if i in sample:
                expect_items[guid] = {
                    "index": i, "guid": guid, "durationSeconds": seconds,
                    "season": season, "episode": number,
                    "enclosure": {"url": enc_url, "length": length, "type": ctype},
                    "transcripts": [{"url": u, "type": ty} for u, ty in transcripts],
                    "chaptersURL": chapters,
                }
        w("</channel>\n</rss>\n")

    if a.expect:
        with open(a.expect, "w", encoding="utf-8") as f:
            json.dump({"count": a.items, "items": expect_items}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
