#if canImport(Glibc)
    import Glibc
#endif

/// Unnamed files (Linux `O_TMPFILE`): a download is written to an inode with no name in its destination's
/// folder and gets its final name with one `linkat` when complete. Nothing is visible until then, a killed
/// process leaves nothing behind, and a small file costs one name instead of a staging name plus a rename.
/// A download that grows past the resume threshold is linked into the staging area so it can resume.
enum AnonymousFile {
    /// `O_TMPFILE` is `__O_TMPFILE | O_DIRECTORY`; Glibc's Swift module does not export it.
    private static let temporaryFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY

    /// Opens an unnamed, writable file on the file system of `directory`; -1 where that is not supported.
    static func open(in directory: String) -> Int32 {
        Glibc.open(directory, temporaryFileFlag | O_WRONLY | O_CLOEXEC, 0o644)
    }

    /// Gives the unnamed file behind `fd` the name `path` (which must not exist). Returns errno on failure.
    static func link(_ fd: Int32, to path: String) -> Int32? {
        linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? nil : errno
    }

    /// A path through which the file behind `fd` can be opened again (to hash it, for example).
    static func path(of fd: Int32) -> String {
        "/proc/self/fd/\(fd)"
    }
}
