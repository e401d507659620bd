"""The page on `mediasync serve` in a real, headless Chromium (Selenium).

Run by WebBrowserTests with one JSON argument (the addresses, the password, the names to look for, the CLI to start
a sync with); prints one JSON line with what it measured. Exit status 1 with the reason on stderr when a check fails.

Phases: "main" (sign in wrong then right, search and keep, sync now with the bar moving, the failed item, a CLI sync
seen live, the security rules), "unreachable" (the home server gone: Browse says so, Mirror still works).
"""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ARGS = json.loads(sys.argv[1])
BASE = ARGS["base"]
SHOTS = ARGS.get("screenshots")


def fail(message):
    sys.stderr.write("FAILED: " + message + "\n")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = ARGS["chromium"]
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-first-run", "--disable-extensions"]:
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=ARGS["chromedriver"])
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(120)
    return driver


def wait(driver, condition, what, seconds=60, poll=0.05):
    try:
        # An element the live page replaced while it was looked at is looked for again at the next poll.
        return WebDriverWait(
            driver, seconds, poll_frequency=poll, ignored_exceptions=[StaleElementReferenceException]
        ).until(lambda d: condition(d))
    except Exception as error:
        fail("waited for " + what + " at " + driver.current_url + " (" + type(error).__name__ + ")")


def shot(driver, name, width=1280):
    if not SHOTS:
        return
    driver.set_window_size(width, 900)
    height = driver.execute_script("return Math.min(document.documentElement.scrollHeight, 2400)")
    driver.set_window_size(width, max(600, height))
    driver.save_screenshot(os.path.join(SHOTS, name))
    driver.set_window_size(1280, 900)


def sign_in(driver, password):
    driver.get(BASE + "/mediasync/")
    field = driver.find_element(By.XPATH, "//label[contains(., 'Password')]//input | //input[@id='password']")
    field.clear()
    field.send_keys(password)
    driver.find_element(By.XPATH, "//button[normalize-space()='Sign in']").click()


def visible(driver, element_id):
    elements = driver.find_elements(By.ID, element_id)
    try:
        return bool(elements) and elements[0].is_displayed()
    except StaleElementReferenceException:
        # Replaced by the live page between the two calls: not there as it was looked at.
        return False


def raw(method, path, headers=None, body=None):
    request = urllib.request.Request(BASE + path, method=method, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def watch_sync(driver, started):
    """Polls the sync panel until "Last sync": the bar's values, and when "Syncing" was first shown."""
    values = []
    first_shown = None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if visible(driver, "sync-running"):
                if first_shown is None:
                    first_shown = time.monotonic() - started
                bar = driver.find_element(By.CSS_SELECTOR, "[role=progressbar]")
                values.append(int(bar.get_attribute("aria-valuenow")))
            elif visible(driver, "sync-last") and first_shown is not None:
                return values, first_shown
        except Exception:
            pass  # the page is being replaced by the redirect after the press
        time.sleep(0.03)
    fail("the sync did not end on the page (values seen: %s)" % values)


def keep(driver, name):
    driver.get(BASE + "/mediasync/browse?search=" + urllib.request.quote(name))
    tile = [t for t in driver.find_elements(By.CSS_SELECTOR, "#items li.tile")
            if t.find_element(By.CSS_SELECTOR, ".name").text == name]
    check(tile, "no tile for %r" % name)
    tile[0].find_element(By.XPATH, ".//button[normalize-space()='Keep offline']").click()
    wait(driver, lambda d: "Kept offline" in d.page_source, "Kept offline for " + name)


def main_phase():
    result = {}
    driver = browser()
    try:
        # Sign in: a wrong password first.
        started = time.monotonic()
        sign_in(driver, "not the password")
        wait(driver, lambda d: "Wrong password" in d.page_source, "Wrong password")
        result["wrongPasswordSeconds"] = round(time.monotonic() - started, 2)
        shot(driver, "web-sign-in.png", 800)
        sign_in(driver, ARGS["password"])
        wait(driver, lambda d: d.find_elements(By.XPATH, "//h1[normalize-space()='Mirror']"), "the Mirror page")
        cookie = driver.get_cookie("mediasync_session") or {}
        check(cookie.get("httpOnly") is True, "the session cookie is not HttpOnly: %s" % cookie)
        check(cookie.get("sameSite") == "Strict", "the session cookie is not SameSite=Strict: %s" % cookie)
        # The first load's weight: the HTML, the stylesheet and the script.
        driver.get(BASE + "/mediasync/sync")
        wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", "the Sync page")
        weight = driver.execute_script(
            "var n = performance.getEntriesByType('navigation')[0];"
            "var sum = n.encodedBodySize, parts = {html: n.encodedBodySize};"
            "performance.getEntriesByType('resource').forEach(function (r) {"
            "  if (/\\.(css|js)$/.test(r.name)) { sum += r.encodedBodySize; parts[r.name.split('/').pop()] = r.encodedBodySize; }"
            "}); parts.total = sum; return parts;")
        result["pageWeight"] = weight
        # The page's own script ran (no inline script is needed): the live indicator is there.
        check(driver.find_elements(By.ID, "sync-indicator"), "no sync indicator")

        # Browse, search by name, keep one.
        driver.get(BASE + "/mediasync/browse")
        wait(driver, lambda d: d.find_elements(By.ID, "search"), "the Search field")
        check("&lt;img src=x onerror=alert(1)&gt;" in driver.page_source, "the hostile title is not shown as text")
        check(not driver.find_elements(By.CSS_SELECTOR, "img[src=x]"), "the hostile title became an element")
        shot(driver, "web-browse.png")
        search = driver.find_element(By.XPATH, "//label[normalize-space()='Search']/following::input[1]")
        search.send_keys(ARGS["keep"])
        driver.find_element(By.XPATH, "//button[normalize-space()='Search']").click()
        wait(driver, lambda d: "search=" in d.current_url, "the search results")
        tiles = driver.find_elements(By.CSS_SELECTOR, "#items li.tile")
        check(len(tiles) >= 1, "the search found nothing")
        names = [t.find_element(By.CSS_SELECTOR, ".name").text for t in tiles]
        check(ARGS["keep"] in names, "the search did not find %r: %s" % (ARGS["keep"], names))
        posters = driver.execute_script(
            "return Array.from(document.querySelectorAll('#items img')).filter(function (i) {"
            " return i.complete && i.naturalWidth > 0; }).length")
        result["postersShown"] = posters
        tile = tiles[names.index(ARGS["keep"])]
        tile.find_element(By.XPATH, ".//button[normalize-space()='Keep offline']").click()
        wait(driver, lambda d: "Kept offline" in d.page_source, "Kept offline")
        keep(driver, ARGS["failing"])

        # Sync now: "Syncing" and a moving bar, then "Last sync" with the failed item.
        driver.get(BASE + "/mediasync/sync")
        button = driver.find_element(By.XPATH, "//button[normalize-space()='Sync now']")
        started = time.monotonic()
        button.click()
        values, first_shown = watch_sync(driver, started)
        result["syncNowToProgressSeconds"] = round(first_shown, 3)
        result["barValues"] = sorted(set(values))
        check(len(set(values)) >= 2, "the bar did not move: %s" % values)
        check("Syncing" in driver.page_source, "no Syncing heading")
        wait(driver, lambda d: visible(d, "sync-last"), "Last sync")
        check("Last sync" in driver.page_source, "no Last sync")
        wait(driver, lambda d: visible(d, "sync-failed"), "the Failed list")
        failed = driver.find_element(By.ID, "sync-failed").text
        check(ARGS["failing"] in failed, "the failed item %r is not listed: %s" % (ARGS["failing"], failed))
        result["failedShown"] = failed.splitlines()[:3]
        shot(driver, "web-sync.png")
        # A sync started from the CLI is seen live on the open page (something new to fetch first).
        keep(driver, ARGS["cliKeep"])
        driver.get(BASE + "/mediasync/sync")
        wait(driver, lambda d: visible(d, "sync-last"), "the Sync page before the CLI sync")
        env = dict(os.environ, **ARGS["cliEnvironment"])
        cli = subprocess.Popen(ARGS["cli"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started = time.monotonic()
        seen_running = False
        second_press = None
        while cli.poll() is None or time.monotonic() - started < 1:
            if visible(driver, "sync-running"):
                seen_running = True
                if second_press is None:
                    # The page's "Sync now" while the CLI's sync holds the lock.
                    second_press = True
                    driver.find_element(By.XPATH, "//button[normalize-space()='Sync now']").click()
                    wait(driver, lambda d: "already running" in d.page_source or visible(d, "sync-last"),
                         "the answer to a second Sync now")
                    result["secondPressSaid"] = "already running" in driver.page_source
                    break
            time.sleep(0.03)
        out, err = cli.communicate(timeout=300)
        check(seen_running, "the CLI sync was not seen on the page (CLI: %s %s)" % (out[-300:], err[-300:]))
        check(result.get("secondPressSaid") is True, "a second Sync now did not say a sync is running")
        wait(driver, lambda d: visible(d, "sync-last"), "the end of the CLI sync on the page")

        # The Mirror page after the syncs.
        driver.get(BASE + "/mediasync/")
        wait(driver, lambda d: d.find_elements(By.ID, "held"), "the held items")
        check(ARGS["keep"] in driver.find_element(By.ID, "held").text, "the kept item is not held")
        shot(driver, "web-mirror.png")
        driver.set_window_size(390, 844)
        overflow = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
        check(not overflow, "the Mirror page is wider than a phone")
        if SHOTS:
            driver.save_screenshot(os.path.join(SHOTS, "web-phone.png"))
        driver.set_window_size(1280, 900)

        # Podcasts.
        driver.get(BASE + "/mediasync/podcasts")
        check(driver.find_elements(By.XPATH, "//label[normalize-space()='Feed URL']"), "no Feed URL field")
        if ARGS.get("feed"):
            driver.find_element(By.ID, "feed").send_keys(ARGS["feed"])
            driver.find_element(By.XPATH, "//button[normalize-space()='Subscribe']").click()
            wait(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space()='Unsubscribe']"),
                 "the subscribed podcast")
        shot(driver, "web-podcasts.png")

        # Security: the headers, a foreign Origin, a missing token.
        status, headers, _ = raw("GET", "/mediasync/")
        lowered = {k.lower(): v for k, v in headers.items()}
        check("default-src 'self'" in lowered.get("content-security-policy", ""), "no CSP: %s" % lowered)
        check(lowered.get("x-content-type-options") == "nosniff", "no nosniff")
        check(lowered.get("referrer-policy") == "no-referrer", "no Referrer-Policy")
        session = "mediasync_session=" + driver.get_cookie("mediasync_session")["value"]
        token = driver.find_element(By.NAME, "csrf").get_attribute("value")
        form = {"Cookie": session, "Content-Type": "application/x-www-form-urlencoded"}
        status, _, _ = raw("POST", "/mediasync/sync", dict(form, Origin="http://evil.example"),
                           ("csrf=" + token).encode())
        check(status == 403, "a foreign Origin got %d" % status)
        status, _, _ = raw("POST", "/mediasync/sync", form, b"csrf=wrong")
        check(status == 403, "a wrong token got %d" % status)
        status, _, _ = raw("GET", "/mediasync/api/progress")
        check(status == 401, "the API without a session got %d" % status)
        # The CSP holds in the browser: an injected inline script does not run.
        ran = driver.execute_script(
            "var s = document.createElement('script'); s.textContent = 'window.__inline = 1';"
            "document.body.appendChild(s); return window.__inline === 1;")
        check(not ran, "an inline script ran despite the CSP")
        result["security"] = "ok"
    finally:
        driver.quit()
    return result


def unreachable_phase():
    driver = browser()
    try:
        sign_in(driver, ARGS["password"])
        wait(driver, lambda d: d.find_elements(By.XPATH, "//h1[normalize-space()='Mirror']"), "the Mirror page")
        driver.get(BASE + "/mediasync/browse")
        wait(driver, lambda d: "Server unreachable" in d.page_source, "Server unreachable")
        driver.get(BASE + "/mediasync/")
        wait(driver, lambda d: d.find_elements(By.ID, "held"), "the Mirror page without the server")
        check(ARGS["keep"] in driver.find_element(By.ID, "held").text, "the Mirror page lost its items")
        return {"unreachable": "ok"}
    finally:
        driver.quit()


if __name__ == "__main__":
    phase = ARGS.get("phase", "main")
    outcome = main_phase() if phase == "main" else unreachable_phase()
    print(json.dumps(outcome))
