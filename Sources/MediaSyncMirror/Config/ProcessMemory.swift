#if canImport(Glibc)
    import Glibc
#endif

/// How this process's allocator asks the kernel for memory.
public enum ProcessMemory {
    /// Grows each heap by 64 MiB at a time rather than by what one allocation needs. The transfer threads allocate
    /// and free a little for every file; glibc then grew and shrank their heaps by a few pages each time, one
    /// `mprotect` a file (12,800 calls in a sync of 12,400 small files, 84 with this). The padding is address space,
    /// not memory: a page becomes resident only when it is written. A heap also keeps that much of what is freed at
    /// its top instead of handing it back, so a long-running process that frees a lot at once (`serve` after building
    /// its catalog) is better without it.
    ///
    /// `mallopt` is declared in `<malloc.h>`, which Swift's Glibc module leaves out: it is looked up by name, and
    /// where it is missing (another C library) nothing changes.
    public static func growHeapsInLargeSteps() {
        #if canImport(Glibc)
            typealias MallOpt = @convention(c) (CInt, CInt) -> CInt
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
            let mallopt = unsafeBitCast(symbol, to: MallOpt.self)
            // M_TOP_PAD in glibc's <malloc.h>.
            let topPad: CInt = -2
            _ = mallopt(topPad, 64 << 20)
        #endif
    }
}
