import MediaSync
import Testing

/// What a mirror lacks before a sync has anything to do, as a table: a sign-in and a selection for the Jellyfin
/// side, a subscription for the podcasts', each only for the side the run syncs.
@Suite struct NothingToSyncTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var signedIn: Bool
        var selections: Int
        var podcasts: Int
        var scope: MirrorSync.Scope?
        var missing: [SyncReport.Missing]
        var testDescription: String { name }
    }

    @Test(arguments: [
        Case(
            name: "a new mirror", signedIn: false, selections: 0, podcasts: 0, scope: nil,
            missing: [.signIn, .selections, .podcasts]),
        Case(
            name: "signed in, nothing kept", signedIn: true, selections: 0, podcasts: 0, scope: nil,
            missing: [.selections, .podcasts]),
        Case(
            name: "a selection is something to do", signedIn: true, selections: 1, podcasts: 0, scope: nil,
            missing: []),
        Case(
            name: "a selection without a sign-in fails rather than idles", signedIn: false, selections: 2,
            podcasts: 0, scope: nil, missing: []),
        Case(
            name: "a podcast alone is something to do", signedIn: false, selections: 0, podcasts: 1, scope: nil,
            missing: []),
        Case(
            name: "only media, with podcasts only", signedIn: true, selections: 0, podcasts: 3, scope: .media,
            missing: [.selections]),
        Case(
            name: "only media, new mirror", signedIn: false, selections: 0, podcasts: 0, scope: .media,
            missing: [.signIn, .selections]),
        Case(
            name: "only podcasts, with selections only", signedIn: true, selections: 4, podcasts: 0,
            scope: .podcasts, missing: [.podcasts]),
        Case(
            name: "only podcasts, with one", signedIn: false, selections: 0, podcasts: 1, scope: .podcasts,
            missing: []),
    ])
    func missing(_ example: Case) {
        #expect(
            SyncReport.missing(
                signedIn: example.signedIn, selections: example.selections, podcasts: example.podcasts,
                scope: example.scope) == example.missing)
    }
}
