import Foundation
import MediaSyncMirror

/// The page's HTML, written out as text: every value from a server, a feed or the mirror goes through ``escape(_:)``.
enum WebPage {
    /// `text` with `&`, `<`, `>`, `"` and `'` as character references, safe in an element and in a quoted attribute.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// A query value percent-encoded (for links built from names and ids).
    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    enum Tab: String, CaseIterable {
        case mirror = "Mirror"
        case browse = "Browse"
        case sync = "Sync"
        case podcasts = "Podcasts"

        var path: String {
            switch self {
            case .mirror: return "/mediasync/"
            case .browse: return "/mediasync/browse"
            case .sync: return "/mediasync/sync"
            case .podcasts: return "/mediasync/podcasts"
            }
        }
    }

    /// A whole page: the header with the tabs (and "Sign out" when a password is set), a notice or an error, `body`.
    static func layout(
        title: String, tab: Tab?, csrf: String?, signOut: Bool, notice: String? = nil, error: String? = nil,
        body: String
    ) -> String {
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width,initial-scale=1">
            <title>\(escape(title)) · mediasync</title>
            <link rel="stylesheet" href="/mediasync/assets/site.css">
            """
        if csrf != nil { html += "<script src=\"/mediasync/assets/site.js\" defer></script>" }
        html += "</head><body\(csrf != nil ? " data-live" : "")>"
        if let csrf {
            html += "<header><span class=\"brand\">mediasync</span><nav>"
            html += Tab.allCases.map { item in
                "<a href=\"\(item.path)\"\(item == tab ? " aria-current=\"page\"" : "")>\(item.rawValue)</a>"
            }.joined(separator: " ")
            html += "</nav><span id=\"sync-indicator\" aria-live=\"polite\"></span>"
            if signOut {
                html += "<form method=\"post\" action=\"/mediasync/sign-out\">\(hidden(csrf))"
                html += "<button type=\"submit\">Sign out</button></form>"
            }
            html += "</header>"
        }
        html += "<main>"
        if let notice { html += "<p class=\"notice\" role=\"status\">\(escape(notice))</p>" }
        if let error { html += "<p class=\"error\" role=\"alert\">\(escape(error))</p>" }
        html += body
        html += "</main></body></html>\n"
        return html
    }

    static func hidden(_ csrf: String) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(csrf))\">"
    }

    // MARK: Sign-in

    static func signIn(wrong: Bool) -> String {
        let body = """
            <div class="signin card"><h1>mediasync</h1>
            <form method="post" action="/mediasync/sign-in">
            <label for="password">Password <input type="password" id="password" name="password"
            autocomplete="current-password" required autofocus></label>
            <button type="submit">Sign in</button></form></div>
            """
        return layout(
            title: "Sign in", tab: nil, csrf: nil, signOut: false, error: wrong ? "Wrong password" : nil, body: body)
    }

    // MARK: Pieces

    /// A poster image, or a grey box when there is none.
    static func poster(_ source: String?, alt: String) -> String {
        guard let source else { return "<span class=\"noposter\" role=\"img\" aria-label=\"no poster\"></span>" }
        return "<img src=\"\(escape(source))\" alt=\"\(escape(alt))\" loading=\"lazy\">"
    }

    static func bytes(_ count: Int64) -> String { ByteCount.format(count) }

    /// The sync panel: "Syncing" with the progress bar while one runs, "Last sync" (and "Failed") once one ended.
    static func syncPanel(_ state: SyncProgressState?) -> String {
        let running = state?.running == true
        let percent = state?.percent ?? 0
        var html = "<section id=\"sync-panel\" class=\"card\">"
        html += "<div id=\"sync-running\"\(running ? "" : " hidden")><h2>Syncing</h2>"
        html += "<p class=\"muted\" id=\"sync-phase\">\(escape(state?.phase ?? ""))</p>"
        html += "<div id=\"sync-bar\" role=\"progressbar\" aria-label=\"Sync progress\" aria-valuemin=\"0\" "
        html +=
            "aria-valuemax=\"100\" aria-valuenow=\"\(percent)\"><progress max=\"100\" value=\"\(percent)\"></progress></div>"
        let details =
            state.map {
                "\($0.filesDone) of \($0.filesTotal) files, \(bytes($0.bytesDone)) of \(bytes($0.bytesTotal)), "
                    + "\(bytes(Int64($0.bytesPerSecond)))/s"
            } ?? ""
        html += "<p id=\"sync-details\">\(escape(details))</p></div>"
        let ended = !running && state?.outcome != nil
        html += "<div id=\"sync-last\"\(ended ? "" : " hidden")><h2>Last sync</h2><p>"
        html += "<span id=\"sync-last-time\">\(escape(state?.finishedAt ?? ""))</span> — "
        html += "<span id=\"sync-last-outcome\">\(escape(state.map(outcome) ?? ""))</span></p>"
        let failed = state?.failed ?? []
        html += "<div id=\"sync-failed\"\(failed.isEmpty ? " hidden" : "")><h3>Failed</h3><ul class=\"failed\" "
        html += "id=\"sync-failed-list\">"
        for item in failed {
            html += "<li><strong>\(escape(item.name))</strong>: \(escape(item.reason))</li>"
        }
        html += "</ul></div></div>"
        if state == nil { html += "<p class=\"muted\">No sync has run on this mirror yet.</p>" }
        html += "</section>"
        return html
    }

    static func outcome(_ state: SyncProgressState) -> String {
        switch state.outcome {
        case "ok": return "succeeded"
        case "partial": return "finished, some items failed"
        case "interrupted": return "interrupted"
        default: return "failed" + (state.message.map { ": " + $0 } ?? "")
        }
    }
}
