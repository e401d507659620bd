"""Drives `mediasync serve` with jellyfin-apiclient-python, as a third-party Jellyfin client.

Usage: serve_client.py BASE_URL USER PASSWORD [music]
Signs in, lists the views, a view's items, a series' seasons and episodes, asks for playback info, reads a range
of the stream, reports a viewing stopped at 95 % and marks a movie played. With `music`, walks the music instead:
albums, an album's tracks, album artists and their albums and songs, playlists and a playlist's entries, a range of
a track through the universal audio route, its lyrics, and a track played to the end. Prints one JSON line with what
it saw and played; exits non-zero on any unexpected answer.
"""
import json
import sys
import urllib.request

from jellyfin_apiclient_python import JellyfinClient


def check(condition, message):
    if not condition:
        print("serve_client: " + message, file=sys.stderr)
        sys.exit(1)


def state_of(answer):
    state = answer.get("State")
    return getattr(state, "value", state)


def ranged(url):
    request = urllib.request.Request(url, headers={"Range": "bytes=0-99"})
    with urllib.request.urlopen(request) as response:
        return response.status, response.read()


def music(api):
    views = api.get_views()["Items"]
    kinds = {view.get("CollectionType"): view["Id"] for view in views}
    check("music" in kinds and "playlists" in kinds, "views: %r" % kinds)
    albums = api.get_user_items(
        parent_id=kinds["music"], include_item_types="MusicAlbum", recursive=True, sort_by="SortName")["Items"]
    check(albums, "no albums")
    album = max(albums, key=lambda item: item.get("ChildCount") or 0)
    tracks = api.get_album_tracks(album["Id"])["Items"]
    order = [(track.get("ParentIndexNumber") or 0, track.get("IndexNumber") or 0) for track in tracks]
    check(len(tracks) == album.get("ChildCount") and order == sorted(order), "album tracks: %r" % order)
    artists = api.get_album_artists(parent_id=kinds["music"])["Items"]
    check(artists and all(artist["Type"] == "MusicArtist" for artist in artists), "album artists: %r" % artists)
    own = [item["Id"] for item in api.get_artist_albums(artists[0]["Id"])["Items"]]
    check(album["Id"] in own, "artist albums: %r" % own)
    songs = api.get_artist_songs(artists[0]["Id"])["Items"]
    check(songs and all(song["Type"] == "Audio" for song in songs), "artist songs: %r" % songs)
    playlists = api.get_playlists()["Items"]
    check(len(playlists) == 1, "playlists: %r" % playlists)
    entries = api.get_playlist_items(playlists[0]["Id"])["Items"]
    check(entries and all(entry.get("PlaylistItemId") == entry["Id"] for entry in entries), "entries: %r" % entries)

    track = tracks[0]
    status, body = ranged(api.audio_url(track["Id"], container="opus", audio_codec="opus"))
    check(status == 206 and len(body) == 100, "ranged audio: %r %d" % (status, len(body)))
    lyrics = api._get("Audio/%s/Lyrics" % track["Id"])
    lines = lyrics.get("Lyrics") or []
    check(lines and all("Start" in line for line in lines), "lyrics: %r" % lyrics)

    runtime = track.get("RunTimeTicks") or 0
    api.session_playing({"ItemId": track["Id"], "PositionTicks": 0})
    api.session_stop({"ItemId": track["Id"], "PositionTicks": runtime})
    played = api.get_userdata_for_item(track["Id"])
    check(played.get("Played") is True, "track not played after stop: %r" % played)
    return {
        "views": sorted(kind for kind in kinds if kind), "album": album["Id"],
        "tracks": [item["Id"] for item in tracks], "artists": [artist["Id"] for artist in artists],
        "entries": [entry["Id"] for entry in entries], "rangedBytes": len(body), "lyricLines": len(lines),
        "played": track["Id"],
    }


def main():
    base, user, password = sys.argv[1:4]
    walk = sys.argv[4] if len(sys.argv) > 4 else "video"
    client = JellyfinClient()
    client.config.app("mediasync-serve-test", "1.0", "python-test", "python-device-1")
    client.config.data["auth.ssl"] = False
    # Bounds for a loaded machine (the server may be slow to answer while a test suite runs beside it).
    client.config.data["http.timeout"] = 300
    if getattr(client.auth, "API", None) is not None:
        client.auth.API.default_timeout = 300
    state = client.auth.connect_to_address(base)
    check(state_of(state) in (2, 3), "connect_to_address: %r" % state)
    client.auth.login(base, user, password)
    credentials = client.auth.credentials.get_credentials()
    servers = credentials.get("Servers") or []
    check(servers and servers[0].get("AccessToken"), "no token after login: %r" % credentials)
    server = servers[0]
    state = client.authenticate({"Servers": [server]}, discover=False)
    check(state_of(state) == 3, "not signed in: %r" % state)
    api = client.jellyfin

    info = api.try_server()
    if walk == "music":
        seen = music(api)
        seen["serverId"] = info.get("Id")
        print(json.dumps(seen))
        return

    views = api.get_views()["Items"]
    kinds = {view.get("CollectionType"): view["Id"] for view in views}
    check("movies" in kinds and "tvshows" in kinds, "views: %r" % kinds)
    movies = api.user_items(params={"ParentId": kinds["movies"], "SortBy": "SortName", "Recursive": True})["Items"]
    check(movies, "no movies")
    shows = api.user_items(params={"ParentId": kinds["tvshows"]})["Items"]
    check(shows, "no series")
    series = shows[0]
    seasons = api.get_seasons(series["Id"])["Items"]
    check(seasons, "no seasons")
    episodes = api.get_season(series["Id"], seasons[0]["Id"])["Items"]
    check(episodes, "no episodes")
    episode = episodes[0]

    playback = api.get_play_info(episode["Id"], profile={})
    sources = playback["MediaSources"]
    check(len(sources) >= 1 and sources[0]["SupportsDirectPlay"], "playback info: %r" % sources)
    url = api.video_url(episode["Id"], media_source_id=sources[0]["Id"])
    request = urllib.request.Request(url, headers={"Range": "bytes=0-99"})
    with urllib.request.urlopen(request) as response:
        status = response.status
        ranged = response.read()
    check(status == 206 and len(ranged) == 100, "ranged stream: %r %d" % (status, len(ranged)))

    runtime = episode.get("RunTimeTicks") or sources[0].get("RunTimeTicks") or 0
    session = playback.get("PlaySessionId")
    api.session_playing({"ItemId": episode["Id"], "PositionTicks": 0, "PlaySessionId": session})
    api.session_progress({"ItemId": episode["Id"], "PositionTicks": runtime // 2, "PlaySessionId": session})
    api.session_stop({"ItemId": episode["Id"], "PositionTicks": runtime * 95 // 100, "PlaySessionId": session})
    played = api.get_userdata_for_item(episode["Id"])
    check(played.get("Played") is True, "episode not played after stop: %r" % played)
    api.item_played(movies[0]["Id"], True)

    print(json.dumps({
        "serverId": info.get("Id"), "episode": episode["Id"], "movie": movies[0]["Id"],
        "views": sorted(kinds), "rangedBytes": len(ranged),
    }))


if __name__ == "__main__":
    main()
