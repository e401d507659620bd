#if canImport(Glibc)
    import Glibc
#endif

/// What a sanitizer changes about the process a test measures.
public enum Sanitizers {
    /// Whether this process runs under AddressSanitizer (`--sanitize=address`). Its quarantine keeps freed memory
    /// from being reused for a while and its shadow memory grows with what is touched, so resident-memory bounds
    /// measure ASan rather than the code; LeakSanitizer checks leaks at exit instead.
    public static let addressSanitizerIsOn = dlsym(nil, "__asan_init") != nil
}
