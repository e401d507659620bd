/// The page's stylesheet and script, served as files of their own (the page's `Content-Security-Policy` allows no
/// inline style or script).
enum WebAssets {
    static let stylesheet = """
        :root{--fg:#1b1d21;--muted:#5d6470;--bg:#f6f7f9;--card:#fff;--line:#dde1e6;--accent:#2f6fdb;--bad:#c0362c;
        --movie:#2f6fdb;--series:#16a085;--music:#d68910;--podcast:#8e44ad;--books:#a04000;--other:#7f8c8d;
        --free:#e3e7ec}
        *{box-sizing:border-box}
        body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
        header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.6rem 1rem;background:#20242b;color:#fff}
        header nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}
        header a{color:#dfe6f0;text-decoration:none;padding:.2rem 0}
        header a[aria-current]{color:#fff;border-bottom:2px solid #7fb0ff}
        header .brand{font-weight:600;margin-right:.5rem}
        header form{margin-left:auto}
        header button{background:none;border:1px solid #68707c;color:#dfe6f0}
        #sync-indicator{font-size:.85rem;color:#ffd27f}
        main{max-width:72rem;margin:0 auto;padding:1rem}
        h1{font-size:1.35rem;margin:.5rem 0 1rem}
        h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
        .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin-bottom:1rem}
        .muted{color:var(--muted)}
        .notice{background:#fff6dd;border:1px solid #e9cf7a;border-radius:6px;padding:.5rem .75rem;margin-bottom:1rem}
        .error{background:#fdecea;border:1px solid #eba59e;border-radius:6px;padding:.5rem .75rem;margin-bottom:1rem;color:var(--bad)}
        button,input,select{font:inherit}
        button{cursor:pointer;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;padding:.35rem .8rem}
        button.secondary{background:#fff;color:var(--accent)}
        input[type=text],input[type=search],input[type=url],input[type=password],input[type=number],select{
        border:1px solid var(--line);border-radius:6px;padding:.35rem .5rem;background:#fff;max-width:100%}
        label{display:inline-flex;gap:.35rem;align-items:center;margin-right:.75rem}
        svg.bar{width:100%;height:22px;display:block;border-radius:4px;overflow:hidden}
        .k-movie{fill:var(--movie)}.k-series{fill:var(--series)}.k-music{fill:var(--music)}
        .k-podcast{fill:var(--podcast)}.k-books{fill:var(--books)}.k-other{fill:var(--other)}.k-free{fill:var(--free)}
        .legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.5rem 0 0;padding:0;list-style:none}
        .legend svg{width:.8rem;height:.8rem;vertical-align:-1px;margin-right:.3rem}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.9rem;padding:0;list-style:none}
        .tile{background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden;display:flex;flex-direction:column}
        .tile img,.tile .noposter{width:100%;aspect-ratio:2/3;object-fit:cover;background:#cfd5dc;display:block}
        .tile .body{padding:.5rem .6rem;display:flex;flex-direction:column;gap:.35rem;flex:1}
        .tile .name{font-weight:600;overflow-wrap:anywhere}
        .tile form{margin-top:auto;display:flex;flex-direction:column;gap:.3rem}
        .state-ok{color:#1e7d46}.state-partial{color:#b36b00}.state-failed{color:var(--bad)}
        .kept{color:#1e7d46;font-weight:600}
        .pager{display:flex;gap:1rem;align-items:center;margin:1rem 0}
        .libraries{display:flex;flex-wrap:wrap;gap:.5rem;padding:0;list-style:none}
        .libraries a{display:inline-block;padding:.25rem .6rem;border:1px solid var(--line);border-radius:99px;background:#fff;color:var(--fg);text-decoration:none}
        .libraries a[aria-current]{border-color:var(--accent);color:var(--accent)}
        [role=progressbar] progress{width:100%;height:1.2rem}
        #sync-details{margin:.35rem 0 0}
        ul.failed{padding-left:1.2rem}ul.failed li{margin:.2rem 0;overflow-wrap:anywhere}
        .signin{max-width:22rem;margin:4rem auto}
        .signin form{display:flex;flex-direction:column;gap:.75rem}
        .signin label{display:flex;flex-direction:column;align-items:stretch;margin:0}
        .podcast{display:flex;gap:1rem;align-items:flex-start}
        .podcast img,.podcast .noposter{width:6rem;height:6rem;object-fit:cover;border-radius:6px;background:#cfd5dc;flex:none}
        .podcast ul{margin:.3rem 0;padding-left:1.1rem}
        table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .4rem;border-bottom:1px solid var(--line)}
        @media (max-width:40rem){main{padding:.6rem}.grid{grid-template-columns:repeat(auto-fill,minmax(8rem,1fr))}
        header form{margin-left:0}.podcast{flex-direction:column}}
        """

    /// Live sync progress: the server's events replace the sync panel's text and bar, and the header's indicator.
    static let script = """
        "use strict";
        (function () {
          function fmtBytes(n) {
            var units = ["B", "KB", "MB", "GB", "TB"], i = 0;
            while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
            return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[i];
          }
          function text(id, value) {
            var el = document.getElementById(id);
            if (el) { el.textContent = value; }
            return el;
          }
          function outcome(state) {
            if (state.outcome === "ok") { return "succeeded"; }
            if (state.outcome === "partial") { return "finished, some items failed"; }
            if (state.outcome === "interrupted") { return "interrupted"; }
            return "failed" + (state.message ? ": " + state.message : "");
          }
          function show(state) {
            var indicator = document.getElementById("sync-indicator");
            if (indicator) { indicator.textContent = state.running ? "Syncing " + state.percent + "%" : ""; }
            var panel = document.getElementById("sync-panel");
            if (!panel) { return; }
            var running = document.getElementById("sync-running");
            var last = document.getElementById("sync-last");
            running.hidden = !state.running;
            last.hidden = state.running || !state.outcome;
            if (state.running) {
              var bar = document.getElementById("sync-bar");
              bar.setAttribute("aria-valuenow", String(state.percent));
              bar.querySelector("progress").value = state.percent;
              text("sync-phase", state.phase);
              text("sync-details", state.filesDone + " of " + state.filesTotal + " files, " +
                fmtBytes(state.bytesDone) + " of " + fmtBytes(state.bytesTotal) + ", " +
                fmtBytes(state.bytesPerSecond) + "/s");
            } else if (state.outcome) {
              text("sync-last-time", state.finishedAt || "");
              text("sync-last-outcome", outcome(state));
              var failedBlock = document.getElementById("sync-failed");
              var list = document.getElementById("sync-failed-list");
              while (list.firstChild) { list.removeChild(list.firstChild); }
              (state.failed || []).forEach(function (item) {
                var li = document.createElement("li");
                var name = document.createElement("strong");
                name.textContent = item.name;
                li.appendChild(name);
                li.appendChild(document.createTextNode(": " + item.reason));
                list.appendChild(li);
              });
              failedBlock.hidden = !(state.failed && state.failed.length);
            }
          }
          // A poster the browser cannot show becomes the grey box a missing one is.
          function unbroken(img) {
            var box = document.createElement("span");
            box.className = "noposter";
            box.setAttribute("role", "img");
            box.setAttribute("aria-label", img.alt);
            img.replaceWith(box);
          }
          Array.prototype.forEach.call(document.querySelectorAll("img"), function (img) {
            if (img.complete && img.naturalWidth === 0) { unbroken(img); }
            else { img.addEventListener("error", function () { unbroken(img); }); }
          });
          if (!window.EventSource || !document.body.hasAttribute("data-live")) { return; }
          var source = new EventSource("/mediasync/api/events");
          source.onmessage = function (event) {
            try { show(JSON.parse(event.data)); } catch (e) { /* a partial or foreign event: wait for the next */ }
          };
        })();
        """
}
