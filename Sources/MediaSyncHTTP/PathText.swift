/// Path text handled by bytes: NSString's path methods cost more than the file system calls of placing a small file.
public enum PathText {
    /// The folder part of an absolute or relative path whose last component is a name (`/a/b` → `/a`, `/a` → `/`,
    /// `a` → ``), as NSString's `deletingLastPathComponent` gives it for such paths.
    public static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }
}
