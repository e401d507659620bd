import MediaSyncCore
import MediaSyncHTTP

// The types of lower modules that the library's own API takes or hands back, named here so that a caller (the CLI
// among them) needs `import MediaSync` only. Each is the lower module's type itself, not a copy.

/// The transfer engine's options (`sync`, `get`): concurrency, per-host limit, durability, retries, bandwidth.
public typealias TransferOptions = MediaSyncHTTP.TransferOptions
/// How HTTP requests are made (low-speed limit, CA file, TLS verification).
public typealias HTTPClientConfiguration = MediaSyncHTTP.HTTPClientConfiguration
/// How often a failed transfer is tried again.
public typealias RetryPolicy = MediaSyncHTTP.RetryPolicy
/// A batch's aggregate progress, as `sync` and `get` report it.
public typealias BatchProgress = MediaSyncHTTP.BatchProgress
/// What a batch of transfers did (`get`).
public typealias BatchResult = MediaSyncHTTP.BatchResult
/// A private feed's user name and password.
public typealias HTTPCredentials = MediaSyncHTTP.HTTPCredentials
/// A value behind a lock (progress lines are drawn from several threads).
public typealias Locked<Value> = MediaSyncHTTP.Locked<Value>
/// mediasync's version, as `--version` and the `User-Agent` say it.
public typealias MediaSyncVersion = MediaSyncHTTP.MediaSyncVersion
/// What a sync may do (`--delete`, `--dry-run`, `--max-delete`).
public typealias SyncOptions = MediaSyncCore.SyncOptions
/// Which of a podcast's episodes are kept.
public typealias Retention = MediaSyncCore.Retention
/// Safe names and ids (a Jellyfin id is 32 hex digits, a single path segment).
public typealias SafeName = MediaSyncCore.SafeName
/// Which trickplay width a selection keeps.
public typealias TrickplayChoice = MediaSyncCore.TrickplayChoice
/// ISO 8601 to the whole second, as play marks are stored and sent.
public typealias WholeSecondTime = MediaSyncCore.WholeSecondTime
/// A count with its noun, as English reads it ("1 movie", "2 movies").
public typealias CountText = MediaSyncCore.CountText
/// Columns of text lined up by the width characters take on a terminal.
public typealias TextTable = MediaSyncCore.TextTable
