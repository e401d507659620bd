import MediaSyncJSON

/// Compact JSON with the member names Jellyfin's objects repeat in every item written as two bytes each: the form a
/// catalog keeps its items' upstream objects in (never written to disk, never sent). At 100,000 movies the names were
/// half of the bytes kept. Compact JSON holds no byte below 0x20 (a string escapes them), so ``mark`` followed by a
/// name's place in ``names`` cannot be mistaken for anything else.
enum PackedJSON {
    /// Starts a packed name.
    static let mark: UInt8 = 0x01
    /// Starts a value the writer was told not to write (its code follows): a value the reader knows otherwise (an
    /// item's id or name, which its catalog keeps as fields).
    static let fieldMark: UInt8 = 0x02

    /// The names packed, by their code (at most 256): `BaseItemDto`, `MediaSourceInfo`, `MediaStream`,
    /// `UserItemDataDto` and `ChapterInfo` members, and the image types.
    static let names: [String] = [
        "Id", "Name", "OriginalTitle", "ServerId", "Etag", "SourceType", "DateCreated", "DateLastMediaAdded",
        "CanDelete", "CanDownload", "HasLyrics", "HasSubtitles", "Container", "SortName", "ForcedSortName",
        "PremiereDate", "ExternalUrls", "MediaSources", "CriticRating", "ProductionLocations", "Path",
        "EnableMediaSourceDisplay", "OfficialRating", "CustomRating", "ChannelId", "Overview", "Taglines", "Genres",
        "CommunityRating", "CumulativeRunTimeTicks", "RunTimeTicks", "PlayAccess", "ProductionYear", "IndexNumber",
        "ParentIndexNumber", "RemoteTrailers", "ProviderIds", "IsHD", "IsFolder", "ParentId", "Type", "People",
        "Studios", "GenreItems", "ParentLogoItemId", "ParentBackdropItemId", "ParentBackdropImageTags",
        "LocalTrailerCount", "UserData", "RecursiveItemCount", "ChildCount", "SeriesName", "SeriesId", "SeasonId",
        "SpecialFeatureCount", "DisplayPreferencesId", "Status", "AirTime", "AirDays", "Tags",
        "PrimaryImageAspectRatio",
        "Artists", "ArtistItems", "Album", "CollectionType", "DisplayOrder", "AlbumId", "AlbumPrimaryImageTag",
        "SeriesPrimaryImageTag", "AlbumArtist", "AlbumArtists", "SeasonName", "MediaStreams", "VideoType",
        "PartCount", "MediaSourceCount", "ImageTags", "BackdropImageTags", "ScreenshotImageTags", "ParentLogoImageTag",
        "ParentArtItemId", "ParentArtImageTag", "SeriesThumbImageTag", "ImageBlurHashes", "SeriesStudio",
        "ParentThumbItemId", "ParentThumbImageTag", "ParentPrimaryImageItemId", "ParentPrimaryImageTag", "Chapters",
        "Trickplay", "LocationType", "IsoType", "MediaType", "EndDate", "LockedFields", "TrailerCount", "MovieCount",
        "SeriesCount", "ProgramCount", "EpisodeCount", "SongCount", "AlbumCount", "ArtistCount", "MusicVideoCount",
        "LockData", "Width", "Height", "CameraMake", "CameraModel", "Software", "ExposureTime", "FocalLength",
        "ImageOrientation", "Aperture", "ShutterSpeed", "Latitude", "Longitude", "Altitude", "IsoSpeedRating",
        "SeriesTimerId", "ProgramId", "ChannelPrimaryImageTag", "StartDate", "CompletionPercentage", "IsRepeat",
        "EpisodeTitle", "ChannelType", "Audio", "IsMovie", "IsSports", "IsSeries", "IsLive", "IsNews", "IsKids",
        "IsPremiere", "TimerId", "NormalizationGain", "CurrentProgram", "Protocol", "EncoderPath", "EncoderProtocol",
        "Size", "IsRemote", "ETag", "ReadAtNativeFramerate", "IgnoreDts", "IgnoreIndex", "GenPtsInput",
        "SupportsTranscoding", "SupportsDirectStream", "SupportsDirectPlay", "IsInfiniteStream",
        "UseMostCompatibleTranscodingProfile", "RequiresOpening", "RequiresClosing", "RequiresLooping",
        "SupportsProbing", "MediaAttachments", "Formats", "Bitrate", "FallbackMaxStreamingBitrate",
        "RequiredHttpHeaders", "TranscodingSubProtocol", "DefaultAudioStreamIndex", "DefaultSubtitleStreamIndex",
        "HasSegments", "Codec", "CodecTag", "Language", "ColorRange", "ColorSpace", "ColorTransfer", "ColorPrimaries",
        "TimeBase", "VideoRange", "VideoRangeType", "AudioSpatialFormat", "LocalizedDefault", "LocalizedExternal",
        "LocalizedForced", "LocalizedHearingImpaired", "DisplayTitle", "Title", "IsInterlaced", "IsAVC",
        "ChannelLayout",
        "BitRate", "BitDepth", "RefFrames", "IsDefault", "IsForced", "IsHearingImpaired", "AverageFrameRate",
        "RealFrameRate", "ReferenceFrameRate", "Profile", "AspectRatio", "Index", "IsExternal", "DeliveryMethod",
        "DeliveryUrl", "IsTextSubtitleStream", "SupportsExternalStream", "PixelFormat", "Level", "IsAnamorphic",
        "Channels", "SampleRate", "LocalizedUndefined", "PlaybackPositionTicks", "PlayCount", "IsFavorite", "Played",
        "Key", "ItemId", "LastPlayedDate", "PlayedPercentage", "UnplayedItemCount", "StartPositionTicks", "ImagePath",
        "ImageDateModified", "ImageTag", "Role", "PrimaryImageTag", "Primary", "Backdrop", "Logo", "Thumb", "Banner",
        "Art", "Disc", "Box", "Screenshot", "Menu", "Chapter", "BoxRear", "Imdb", "Tmdb", "Tvdb",
        "TmdbCollection", "MusicBrainzAlbum", "MusicBrainzArtist", "MusicBrainzAlbumArtist", "MusicBrainzReleaseGroup",
        "MusicBrainzTrack", "Url",
    ]

    /// Each name's code.
    static let codes: [String: UInt8] = {
        var codes: [String: UInt8] = [:]
        for (code, name) in names.prefix(256).enumerated() where codes[name] == nil { codes[name] = UInt8(code) }
        return codes
    }()

    /// The names' bytes as compact JSON writes them (quoted), by code.
    private static let quoted: [[UInt8]] = names.prefix(256).map { Array("\"\($0)\"".utf8) }

    /// Appends `value` as compact JSON (members in their order), each name in ``names`` packed.
    /// - Parameter field: for a member of `value` itself (not of an object in it), the code to write its value as
    ///   (see ``fieldMark``), nil to write it.
    static func write(
        _ value: JSONValue, into output: inout [UInt8], field: (JSONMember) -> UInt8? = { _ in nil }
    ) {
        switch value {
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                if let code = codes[member.key] {
                    output.append(mark)
                    output.append(code)
                } else {
                    JSONWriter.writeString(member.key, into: &output)
                }
                output.append(UInt8(ascii: ":"))
                if let code = field(member) {
                    output.append(fieldMark)
                    output.append(code)
                } else {
                    write(member.value, into: &output)
                }
            }
            output.append(UInt8(ascii: "}"))
        default: JSONWriter.writeCompact(value, into: &output)
        }
    }

    /// The compact JSON `bytes` (written by ``write(_:into:field:)``) stand for.
    /// - Parameter field: appends the value a ``fieldMark`` code stands for.
    static func unpacked(_ bytes: ArraySlice<UInt8>, field: (UInt8, inout [UInt8]) -> Void) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var position = bytes.startIndex
        while position < bytes.endIndex {
            let byte = bytes[position]
            if byte == mark, position + 1 < bytes.endIndex {
                output.append(contentsOf: quoted[Int(bytes[position + 1])])
                position += 2
            } else if byte == fieldMark, position + 1 < bytes.endIndex {
                field(bytes[position + 1], &output)
                position += 2
            } else {
                output.append(byte)
                position += 1
            }
        }
        return output
    }
}
