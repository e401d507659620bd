import Foundation
import MediaSyncMirror
import Testing

@testable import MediaSyncServe

/// The page's sessions are bounded: a client that never keeps its cookie (each request opens one without a
/// password) cannot grow them without end, and the session used longest ago is the one forgotten.
@Suite struct WebSessionTests {
    @Test func openingOneMoreThanTheMostForgetsTheOneUsedLongestAgo() {
        let web = WebState(
            root: MirrorRoot(path: "/nonexistent"), config: nil, password: nil, homeServer: HomeServerAccess())
        let first = web.open(password: nil)
        let second = web.open(password: nil)
        for _ in 0..<(WebState.mostSessions - 2) { _ = web.open(password: nil) }
        // Using the first renews it: the second is now the one used longest ago.
        #expect(web.session(first.id, password: nil) != nil)
        let newest = web.open(password: nil)
        #expect(web.session(second.id, password: nil) == nil)
        #expect(web.session(first.id, password: nil) != nil)
        #expect(web.session(newest.id, password: nil) != nil)
    }
}
