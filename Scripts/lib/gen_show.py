#!/usr/bin/env python3
"""Write a small podcast for the reliability scripts: episodes of random bytes and the feed that lists them.

Usage: gen_show.py FOLDER PREFIX TITLE SIZE[,SIZE...] [--no-length]

Episode n (from 1) is FOLDER/PREFIX-episode-n.mp3, SIZE bytes of random.Random(n), with guid PREFIX-episode-n and a
pubDate of 0n Jan 2025; the enclosure URL is relative. --no-length leaves the enclosures' length out, so a plan
cannot know the sizes.
"""
import os
import random
import sys

folder, prefix, title, sizes = sys.argv[1], sys.argv[2], sys.argv[3], [int(s) for s in sys.argv[4].split(",")]
with_length = "--no-length" not in sys.argv[5:]
os.makedirs(folder, exist_ok=True)
items = []
for n, size in enumerate(sizes, start=1):
    name = f"{prefix}-episode-{n}.mp3"
    with open(os.path.join(folder, name), "wb") as out:
        out.write(random.Random(n).randbytes(size))
    length = f' length="{size}"' if with_length else ""
    items.append(f"<item><title>Episode {n}</title><guid>{prefix}-episode-{n}</guid>"
                 f"<pubDate>0{n} Jan 2025 08:00:00 +0000</pubDate>"
                 f"<enclosure url=\"{name}\"{length} type=\"audio/mpeg\"/></item>")
with open(os.path.join(folder, "feed.xml"), "w") as out:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
              f"<title>{title}</title><link>https://example.org/{prefix}</link>" + "".join(items)
              + "</channel></rss>\n")
