#if canImport(Glibc)
    import Glibc
#endif

/// Standard input, output and error, made to exist before anything else is opened.
public enum StandardStreams {
    /// Opens `/dev/null` on each of descriptors 0, 1 and 2 that is closed. A program started with one of them closed
    /// (as some schedulers, service managers and `cmd >&-` do) would otherwise hand that number to the next file it
    /// opens, and a line meant for the terminal would be written into a download or a journal.
    public static func openMissing() {
        for descriptor: CInt in 0...2 where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
            let opened = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }
}
