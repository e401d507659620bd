"""Reads `mediasync serve`'s chapters, trickplay and media segments with jellyfin-api-client's models.

Usage: serve_models.py BASE_URL USER PASSWORD ITEM_ID
jellyfin-api-client (PyPI) is generated from Jellyfin's OpenAPI description. Signs in, reads the item with every field
into its `BaseItemDto` model (chapters as `ChapterInfo`, trickplay as `TrickplayInfo` by media source and width),
fetches a chapter image, the trickplay playlist and every tile it names, and the media segments (the package's models
predate the segments API: their shape is checked as the API describes `MediaSegmentDtoQueryResult`). Prints one JSON
line with what it read; exits non-zero on any unexpected answer.
"""
import json
import sys
import urllib.request

from jellyfin_api_client.models.base_item_dto import BaseItemDto
from jellyfin_api_client.types import Unset

HEADER = 'MediaBrowser Client="models", Device="python", DeviceId="python-models-1", Version="1.0"'


def check(condition, message):
    if not condition:
        print("serve_models: " + message, file=sys.stderr)
        sys.exit(1)


def call(base, path, token=None, body=None):
    header = HEADER + (', Token="%s"' % token if token else "")
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, headers={"Authorization": header})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def main():
    base, user, password, item_id = sys.argv[1:5]
    _, _, body = call(base, "/Users/AuthenticateByName", body={"Username": user, "Pw": password})
    token = json.loads(body)["AccessToken"]
    _, _, body = call(base, "/Items/%s" % item_id, token)
    item = BaseItemDto.from_dict(json.loads(body))
    check(isinstance(item.chapters, list) and item.chapters, "no chapters: %r" % item.chapters)
    ticks = [chapter.start_position_ticks for chapter in item.chapters]
    check(ticks == sorted(ticks) and all(isinstance(t, int) for t in ticks), "chapter starts: %r" % ticks)
    tagged = [index for index, chapter in enumerate(item.chapters) if isinstance(chapter.image_tag, str)]
    check(tagged, "no chapter image tags")
    status, kind, image = call(base, "/Items/%s/Images/Chapter/%d" % (item_id, tagged[0]))
    check(status == 200 and image, "chapter image: %r" % status)

    check(not isinstance(item.trickplay, Unset) and item.trickplay is not None, "no trickplay")
    sources = item.trickplay.additional_properties
    check(sources, "empty trickplay")
    source_id, widths = next(iter(sources.items()))
    width, info = next(iter(widths.additional_properties.items()))
    check(info.width == int(width) and info.tile_width and info.thumbnail_count, "trickplay info: %r" % info)
    status, kind, text = call(
        base, "/Videos/%s/Trickplay/%s/tiles.m3u8?mediaSourceId=%s" % (item_id, width, source_id), token)
    lines = text.decode().splitlines()
    check(status == 200 and lines[0] == "#EXTM3U" and "#EXT-X-IMAGES-ONLY" in lines, "playlist: %r" % lines[:6])
    tiles = [line for line in lines if line and not line.startswith("#")]
    per_tile = info.tile_width * info.tile_height
    check(len(tiles) == -(-info.thumbnail_count // per_tile), "tile count: %d" % len(tiles))
    sizes = []
    for tile in tiles:
        status, kind, data = call(base, "/Videos/%s/Trickplay/%s/%s" % (item_id, width, tile))
        check(status == 200 and kind == "image/jpeg" and data[:2] == b"\xff\xd8", "tile %s: %r" % (tile, kind))
        sizes.append(len(data))

    _, _, body = call(base, "/MediaSegments/%s?includeSegmentTypes=Intro" % source_id, token)
    segments = json.loads(body)
    check(set(segments) == {"Items", "TotalRecordCount", "StartIndex"}, "segments: %r" % segments)
    for segment in segments["Items"]:
        check(set(segment) == {"Id", "ItemId", "Type", "StartTicks", "EndTicks"}, "segment: %r" % segment)
    print(json.dumps({
        "chapters": len(item.chapters), "trickplayWidth": info.width, "tiles": len(sizes),
        "segmentTypes": [segment["Type"] for segment in segments["Items"]],
    }))


if __name__ == "__main__":
    main()
