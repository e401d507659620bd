"""Reads `mediasync serve`'s books view with jellyfin-api-client's models.

Usage: serve_books.py BASE_URL USER PASSWORD
jellyfin-api-client (PyPI) is generated from Jellyfin's OpenAPI description. Signs in, reads the views into a
`BaseItemDtoQueryResult`, finds the `books` view, lists it and the folder of a book in parts into `BaseItemDto` models
(kinds `AudioBook`, `Folder`, `Book`), reads an audiobook with its `MediaSourceInfo`s and a book (`MediaType` `Book`,
no media sources), and downloads every audiobook file and book. Prints one JSON line with what it read; exits non-zero
on any unexpected answer.
"""
import hashlib
import json
import sys
import urllib.request

from jellyfin_api_client.models.base_item_dto import BaseItemDto
from jellyfin_api_client.models.base_item_dto_query_result import BaseItemDtoQueryResult
from jellyfin_api_client.models.base_item_kind import BaseItemKind
from jellyfin_api_client.models.collection_type import CollectionType
from jellyfin_api_client.models.media_type import MediaType
from jellyfin_api_client.types import Unset

HEADER = 'MediaBrowser Client="models", Device="python", DeviceId="python-books-1", Version="1.0"'


def check(condition, message):
    if not condition:
        print("serve_books: " + message, file=sys.stderr)
        sys.exit(1)


def call(base, path, token=None, body=None):
    header = HEADER + (', Token="%s"' % token if token else "")
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, headers={"Authorization": header})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def listing(base, path, token):
    status, _, body = call(base, path, token)
    check(status == 200, "%s: %d" % (path, status))
    result = BaseItemDtoQueryResult.from_dict(json.loads(body))
    check(isinstance(result.items, list), "%s: no items" % path)
    return result.items


def main():
    base, user, password = sys.argv[1:4]
    _, _, body = call(base, "/Users/AuthenticateByName", body={"Username": user, "Pw": password})
    answer = json.loads(body)
    token = answer["AccessToken"]
    user_id = answer["User"]["Id"]
    views = listing(base, "/UserViews?userId=%s" % user_id, token)
    books = [view for view in views if view.collection_type == CollectionType.BOOKS]
    check(len(books) == 1, "books views: %r" % [view.collection_type for view in views])
    view = books[0]
    top = listing(base, "/Items?ParentId=%s&SortBy=SortName" % view.id, token)
    kinds = {item.id: item.type for item in top}
    audiobooks = [item.id for item in top if item.type == BaseItemKind.AUDIOBOOK]
    folders = [item.id for item in top if item.type == BaseItemKind.FOLDER]
    book_ids = [item.id for item in top if item.type == BaseItemKind.BOOK]
    check(audiobooks and folders and book_ids, "kinds: %r" % kinds)
    parts = listing(base, "/Items?ParentId=%s" % folders[0], token)
    check(all(part.type == BaseItemKind.AUDIOBOOK for part in parts), "parts: %r" % [p.type for p in parts])

    status, _, body = call(base, "/Items/%s" % audiobooks[0], token)
    audiobook = BaseItemDto.from_dict(json.loads(body))
    check(audiobook.media_type == MediaType.AUDIO, "audiobook media type: %r" % audiobook.media_type)
    check(isinstance(audiobook.media_sources, list) and audiobook.media_sources, "audiobook sources")
    containers = [source.container for source in audiobook.media_sources]

    digests = {}
    for item_id in audiobooks + [part.id for part in parts]:
        status, kind, data = call(base, "/Items/%s/Download" % item_id, token)
        check(status == 200 and kind == "audio/mp4", "audiobook %s: %r" % (item_id, kind))
        digests[item_id] = hashlib.sha256(data).hexdigest()
    types = {}
    for item_id in book_ids:
        status, _, body = call(base, "/Items/%s" % item_id, token)
        book = BaseItemDto.from_dict(json.loads(body))
        check(book.media_type == MediaType.BOOK, "book media type: %r" % book.media_type)
        check(isinstance(book.media_sources, Unset) or not book.media_sources, "book sources: %r" % book.media_sources)
        status, kind, data = call(base, "/Items/%s/Download" % item_id, token)
        check(status == 200, "book %s: %d" % (item_id, status))
        types[item_id] = kind
        digests[item_id] = hashlib.sha256(data).hexdigest()
    print(json.dumps({
        "audiobooks": audiobooks, "folders": folders, "parts": [part.id for part in parts], "books": book_ids,
        "containers": containers, "types": types, "sha256": digests,
    }))


if __name__ == "__main__":
    main()
