/// What a finished sync no longer needs, freed on a background task instead of where the run returns.
///
/// A no-op sync of a 10,000-item library holds a few hundred thousand strings, arrays and dictionaries (listings,
/// planned files, index records, plans); freeing them where `run` returned kept the command from printing its report
/// and exiting for about a tenth of a second (`Scripts/bench-sync.sh`). Handed over here, they are freed beside the
/// report's printing, or not at all when the process exits first.
enum LateRelease {
    /// Keeps `values` (their storage, shared with the caller's copies) until a background task has started and ended.
    static func hand(_ values: Any...) {
        let box = Box(values)
        Task.detached(priority: .background) { box.drop() }
    }

    /// Owns the values until the task runs; only that task touches it afterwards.
    private final class Box: @unchecked Sendable {
        private var values: [Any]
        init(_ values: [Any]) { self.values = values }
        func drop() { values = [] }
    }
}
