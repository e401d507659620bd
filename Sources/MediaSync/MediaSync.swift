// The library's one front door. A program (the `mediasync` tool among them) imports `MediaSync` and gets the
// mirror — sync, selections, podcasts, storage, export, play state — and its Jellyfin face for `mediasync serve`.
// Each lives in a module of its own below this one: `MediaSyncMirror` (the mirror) and `MediaSyncServe` (the served
// API, which reads the mirror through `MediaSyncMirror` only).
@_exported import MediaSyncMirror
@_exported import MediaSyncServe
