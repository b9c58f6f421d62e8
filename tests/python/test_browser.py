"""The book as a site, tested in a real browser.

Builds the book into a temporary folder (docs/build_book.py, with a copy of
tests/fixtures/results/ so that every page has its tables and figures
whatever results/ holds), serves it on 127.0.0.1 from a thread, and drives
Debian's headless Chromium through its chromedriver with Selenium:

- every page loads with HTTP 200, logs no console error, loads nothing from
  another host, and typesets its math;
- every link inside the site leads to a file that exists and, with a
  fragment, to an id on that page; every image loads;
- search finds the padding chapter for "bank conflict";
- a copy button puts its listing on the clipboard;
- the theme switch turns the page dark;
- an answer guide is folded until its summary is clicked;
- at a phone's width (390 x 844) no page scrolls sideways, and the mobile
  header shows;
- at 1400 px wide, every table and every code listing of every page (those
  folded in a dropdown too) fits its column: nothing in it is hidden to be
  scrolled to, and its box ends inside the article's column;
- it saves screenshots of chapter 01 in light and dark mode to
  $LADDER_ARTIFACTS_DIR, else <build dir>/test-artifacts/.

Only loopback addresses resolve in the browser (--host-resolver-rules), so
it never reaches another host, whatever the network. The whole file is
skipped only when /usr/bin/chromium or /usr/bin/chromedriver is missing
(Debian: apt-get install chromium chromium-driver), or Doxygen, which the
build needs. Links to other sites are not followed.
"""

import base64
import functools
import http.server
import json
import os
import re
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

for _program in (CHROMIUM, CHROMEDRIVER):
    if not _program.exists():
        pytest.skip(f"{_program} is missing (Debian: apt-get install chromium chromium-driver)",
                    allow_module_level=True)

# Selenium finds no driver of its own: it is given both paths, and told
# never to download one.
os.environ.setdefault("SE_OFFLINE", "true")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHAPTER = "chapters/01-naive/chapter.html"
PADDING_CHAPTER = "chapters/10-padding/chapter.html"
PHONE = (390, 844)
WAIT_S = 15

# Console errors that are not the site's fault, each with its reason: a
# (regular expression, reason) pair. None is needed now.
KNOWN_CONSOLE_ERRORS: list[tuple[str, str]] = []


# -- The site ----------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The book built from a copy of the fixture results: its HTML folder.
    It is the build test_book_site.py reads too (fixture_site.py): CTest builds
    it once before either file runs; run by hand, it is built now into a
    temporary folder. LADDER_BROWSER_SITE=<an HTML folder> tests that one
    instead, as it is (for a quick second look; CTest never sets it)."""
    if os.environ.get("LADDER_BROWSER_SITE"):
        return Path(os.environ["LADDER_BROWSER_SITE"]).resolve()
    import fixture_site
    work, returncode, log = fixture_site.shared_site(tmp_path_factory)
    if returncode == fixture_site.SKIP:
        pytest.skip(log.strip())
    assert returncode == 0, "the book did not build:\n" + log
    html = work / "build" / "book" / "html"
    assert (html / "index.html").is_file()
    return html


class Server:
    """The HTML folder on http://127.0.0.1:<free port>/, from a thread; it
    records the status of every request it answers."""

    def __init__(self, folder: Path):
        self.requests: list[tuple[str, int]] = []
        log = self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def send_head(self):
                # Always the whole file, never 304: every page load is a 200.
                del self.headers["If-Modified-Since"]
                return super().send_head()

            def log_request(self, code="-", size="-"):
                log.append((urlsplit(self.path).path, int(getattr(code, "value", code))))

            def log_message(self, *args):
                pass

        handler = functools.partial(Handler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, page: str) -> str:
        return f"{self.origin}/{page}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture(scope="module")
def server(site):
    running = Server(site)
    yield running
    running.close()


def start_browser():
    """Debian's Chromium, headless, driven by its chromedriver."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--window-size=1280,900", "--no-first-run", "--no-default-browser-check",
        "--disable-extensions", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-default-apps",
        "--force-color-profile=srgb", "--hide-scrollbars",
        # Nothing but the loopback address resolves: the site must not
        # need another host, and the test never reaches one.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(WAIT_S * 2)
    driver.set_script_timeout(WAIT_S)
    return driver


@pytest.fixture(scope="module")
def browser():
    driver = start_browser()
    yield driver
    driver.quit()


def pages(site: Path) -> list[str]:
    """Every HTML file of the site, relative to its top, genindex and search included."""
    return sorted(path.relative_to(site).as_posix() for path in site.rglob("*.html"))


def console_errors(driver) -> list[str]:
    """The SEVERE entries logged since the last call, less the known ones."""
    errors = []
    for entry in driver.get_log("browser"):
        if entry["level"] != "SEVERE":
            continue
        if any(re.search(pattern, entry["message"]) for pattern, _ in KNOWN_CONSOLE_ERRORS):
            continue
        errors.append(entry["message"])
    return errors


def wait_for(driver, script: str, what: str, timeout: float = WAIT_S):
    """Waits until the JavaScript expression `script` is truthy; returns it."""
    return WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script(f"return ({script});"), message=f"waited for {what}")


MATH_DONE = ("!document.querySelector('.math') || "
             "(window.MathJax && MathJax.startup && MathJax.startup.promise && "
             "document.querySelectorAll('mjx-container').length > 0)")


def open_page(driver, url: str):
    """Loads a page and waits for it to settle: the load event, then the
    math typeset (when it has math)."""
    driver.get(url)
    wait_for(driver, "document.readyState === 'complete'", f"{url} to load")
    wait_for(driver, MATH_DONE, f"the math on {url} to be typeset")
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "(window.MathJax && MathJax.startup && MathJax.startup.promise"
        " ? MathJax.startup.promise : Promise.resolve()).then(() => done(true));")


def scroll_to(driver, element):
    """Brings an element to the middle of the window at once (furo scrolls
    smoothly, and a click computed mid-scroll misses)."""
    driver.execute_script(
        "arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", element)


# What the crawl reads from each page, in the page.
PAGE_FACTS = """
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
for (const image of images) image.loading = 'eager';  // lazy ones load now
Promise.allSettled(images.map(image => image.complete ? null : new Promise(ready => {
  image.addEventListener('load', ready); image.addEventListener('error', ready);
}))).then(() => done({
  ids: Array.from(document.querySelectorAll('[id]'), e => e.id)
       .concat(Array.from(document.querySelectorAll('a[name]'), e => e.name)),
  links: Array.from(document.querySelectorAll('a[href]'), a => a.href),
  images: images.map(image => ({src: image.currentSrc || image.src,
                                width: image.naturalWidth, complete: image.complete})),
  resources: Array.from(document.querySelectorAll('script[src], link[href], img[src], '
                        + 'iframe[src], source[src], video[src], audio[src]'),
                        e => e.src || e.href)
             .concat(performance.getEntriesByType('resource').map(r => r.name)),
  mathjax: Array.from(document.scripts, s => s.src).filter(s => /mathjax/i.test(s)),
  mobileHeader: (h => h ? getComputedStyle(h).display : null)(
    document.querySelector('header.mobile-header')),
  openGuides: Array.from(document.querySelectorAll('details.sd-dropdown[open] > summary'),
                         s => s.innerText).filter(t => /answer/i.test(t)),
}));
"""


@pytest.fixture(scope="module")
def crawl(site, server, browser):
    """Every page, loaded once at desktop width: what the server answered,
    what the console said, and the page's ids, links, images and resources."""
    facts = {}
    console_errors(browser)  # drop anything logged before
    for page in pages(site):
        first = len(server.requests)
        open_page(browser, server.url(page))
        facts[page] = browser.execute_async_script(PAGE_FACTS)
        facts[page]["requests"] = server.requests[first:]
        facts[page]["errors"] = console_errors(browser)
    return facts


# -- Every page ---------------------------------------------------------------


def test_every_page_loads_with_200_and_no_console_error(site, crawl):
    assert len(crawl) >= 5 and {"index.html", "search.html", "genindex.html", CHAPTER} <= set(crawl)
    problems = []
    for page, facts in crawl.items():
        if ("/" + page, 200) not in facts["requests"]:
            problems.append(f"{page}: not answered with 200: {facts['requests'][:3]}")
        failed = [(path, code) for path, code in facts["requests"] if code >= 400]
        if failed:
            problems.append(f"{page}: requests failed: {failed}")
        for message in facts["errors"]:
            problems.append(f"{page}: console error: {message}")
    assert not problems, "\n".join(problems)


def test_nothing_is_loaded_from_another_host(server, crawl):
    outside = {
        f"{page}: {url}"
        for page, facts in crawl.items()
        for url in facts["resources"]
        if url and not url.startswith((server.origin + "/", "data:", "blob:", "about:"))
    }
    assert not outside, "\n".join(sorted(outside))


def test_math_is_typeset_from_the_site(server, crawl):
    """MathJax is served by the site itself (docs/conf.py), and typesets."""
    with_math = {page: facts for page, facts in crawl.items() if facts["mathjax"]}
    assert with_math, "no page loads MathJax: has the book no math?"
    for page, facts in with_math.items():
        for url in facts["mathjax"]:
            assert url.startswith(server.origin + "/_static/"), f"{page}: {url}"


def target_file(site: Path, server, url: str) -> tuple[str, str] | None:
    """For a link inside the site: (page relative to the top, fragment);
    None for one to another site or scheme."""
    if not url.startswith(server.origin + "/"):
        return None
    parts = urlsplit(url)
    path = unquote(parts.path).lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path, unquote(parts.fragment)


def test_every_link_inside_the_site_resolves(site, server, crawl):
    problems, checked = [], 0
    for page, facts in crawl.items():
        for url in sorted(set(facts["links"])):
            target = target_file(site, server, url)
            if target is None:
                continue
            path, fragment = target
            checked += 1
            if not (site / path).is_file():
                problems.append(f"{page}: {url}: no such file")
            elif fragment and path.endswith(".html"):
                ids = crawl[path]["ids"] if path in crawl else []
                if fragment not in ids:
                    problems.append(f"{page}: {url}: no id {fragment!r} on {path}")
    assert checked > 50, f"only {checked} links inside the site"
    assert not problems, "\n".join(problems)


def test_every_image_loads(crawl):
    images = [(page, image) for page, facts in crawl.items() for image in facts["images"]]
    broken = [f"{page}: {image['src'][:120]}" for page, image in images
              if not image["complete"] or image["width"] <= 0]
    assert not broken, "\n".join(broken)
    # The chapter's figures (drawn from the fixture results) are images.
    assert any(page == CHAPTER for page, _ in images), f"{CHAPTER} shows no image"


# -- Search -------------------------------------------------------------------


def test_search_finds_the_padding_chapter(site, server, browser):
    open_page(browser, server.url("search.html?q=bank+conflict"))
    wait_for(browser, "document.querySelector('#search-results .search-summary') && "
                      "document.querySelector('#search-results .search-summary').innerText",
             "the search to finish")
    found = browser.execute_script(
        "return Array.from(document.querySelectorAll('#search-results ul.search li a'),"
        " a => a.href);")
    pages_found = {target_file(site, server, url)[0] for url in found
                   if target_file(site, server, url)}
    assert console_errors(browser) == []
    assert pages_found, "searching for 'bank conflict' found nothing"
    if not (site / PADDING_CHAPTER).is_file():
        pytest.skip(f"{PADDING_CHAPTER} is not in the book yet (no chapters/10-padding/"
                    f"chapter.md); search found {sorted(pages_found)}")
    assert PADDING_CHAPTER in pages_found, sorted(pages_found)


# -- One chapter page: copy, theme, answer guide, screenshots ------------------


def test_a_copy_button_copies_its_listing(server, browser):
    browser.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": server.origin,
        "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    open_page(browser, server.url(CHAPTER))
    button = wait_for(browser, "document.querySelector('div.highlight pre + button.copybtn')",
                      "a copy button")
    # The listing's own text, less what the book tells the button to leave
    # out (line numbers, prompts, output: copybutton_exclude in docs/conf.py).
    expected = browser.execute_script(
        "const pre = arguments[0].previousElementSibling.cloneNode(true);"
        "pre.querySelectorAll('.linenos, .gp, .go').forEach(e => e.remove());"
        "return pre.textContent;", button)
    read_clipboard = ("const done = arguments[arguments.length - 1];"
                      "navigator.clipboard.readText().then(done, e => done('ERROR ' + e));")
    browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.clipboard.writeText('nothing copied yet').then(() => done(true));")
    assert browser.execute_async_script(read_clipboard) == "nothing copied yet"
    scroll_to(browser, button)
    ActionChains(browser).move_to_element(button).click().perform()

    def clipboard_changed(driver):
        text = driver.execute_async_script(read_clipboard)
        return text if text != "nothing copied yet" else None

    copied = WebDriverWait(browser, WAIT_S).until(
        clipboard_changed, message="waited for the clipboard to change")
    assert not copied.startswith("ERROR"), copied
    assert copied.count("\n") >= 2, copied
    assert copied == expected.removesuffix("\n")
    assert console_errors(browser) == []


THEME = ("[document.body.dataset.theme,"
         " getComputedStyle(document.body).backgroundColor,"
         " getComputedStyle(document.body).color]")


def click_theme_toggle(browser):
    toggles = [b for b in browser.find_elements(By.CSS_SELECTOR, "button.theme-toggle")
               if b.is_displayed()]
    assert toggles, "no visible theme toggle"
    toggles[0].click()


def set_theme(browser, wanted: str) -> list[str]:
    """Clicks the theme toggle until the page is in `wanted` mode (at most
    three clicks: furo cycles auto, dark, light); returns THEME's values."""
    for _ in range(3):
        state = browser.execute_script(f"return {THEME};")
        if state[0] == wanted:
            return state
        click_theme_toggle(browser)
        wait_for(browser, f"document.body.dataset.theme !== {json.dumps(state[0])}",
                 "the theme to change")
    state = browser.execute_script(f"return {THEME};")
    assert state[0] == wanted, state
    return state


def artifacts_dir() -> Path:
    folder = os.environ.get("LADDER_ARTIFACTS_DIR") or (
        Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build")) / "test-artifacts")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_theme_switch_turns_the_page_dark(server, browser):
    open_page(browser, server.url(CHAPTER))
    browser.execute_script("localStorage.removeItem('theme');")
    open_page(browser, server.url(CHAPTER))
    theme, background, color = browser.execute_script(f"return {THEME};")
    assert theme == "auto", theme  # the first visit follows the system (light)
    _, dark_background, dark_color = set_theme(browser, "dark")
    assert dark_background != background and dark_color != color
    _, light_background, _ = set_theme(browser, "light")
    assert light_background == background
    assert dark_background != light_background
    # The choice is kept: the next page opens dark.
    set_theme(browser, "dark")
    open_page(browser, server.url("index.html"))
    assert browser.execute_script(f"return {THEME};")[:2] == ["dark", dark_background]
    browser.execute_script("localStorage.removeItem('theme');")
    assert console_errors(browser) == []


def save_full_page(browser, path: Path):
    """A screenshot of the whole page, not only of what the window shows."""
    size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                 "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))


def test_screenshots_of_a_chapter_in_light_and_dark(server, browser):
    """browser-light.png and browser-dark.png show the top of chapter 01 as
    a 1280-pixel-wide window does; the -full ones show the whole page."""
    folder = artifacts_dir()
    open_page(browser, server.url(CHAPTER))
    for theme in ("light", "dark"):
        set_theme(browser, theme)
        # Let the theme's transitions end before the picture.
        browser.execute_async_script(
            "const done = arguments[arguments.length - 1]; setTimeout(done, 300);")
        path = folder / f"browser-{theme}.png"
        assert browser.save_screenshot(str(path)), path
        assert path.stat().st_size > 10_000, path
        save_full_page(browser, folder / f"browser-{theme}-full.png")
    browser.execute_script("localStorage.removeItem('theme');")


def test_an_answer_guide_is_folded_until_opened(server, browser, crawl):
    opened = {page: facts["openGuides"] for page, facts in crawl.items() if facts["openGuides"]}
    assert not opened, f"answer guides open when their page loads: {opened}"
    open_page(browser, server.url(CHAPTER))
    guide = wait_for(browser, "document.querySelector('details.sd-dropdown')",
                     "an answer guide (a sphinx-design dropdown)")
    body = guide.find_element(By.CSS_SELECTOR, ":scope > :not(summary)")
    assert guide.get_attribute("open") is None
    assert not body.is_displayed()
    summary = guide.find_element(By.CSS_SELECTOR, ":scope > summary")
    scroll_to(browser, summary)
    summary.click()
    WebDriverWait(browser, WAIT_S).until(lambda d: body.is_displayed(),
                                         message="waited for the answer guide to open")
    assert guide.get_attribute("open") is not None
    assert body.text.strip()
    summary.click()
    WebDriverWait(browser, WAIT_S).until(lambda d: not body.is_displayed(),
                                         message="waited for the answer guide to close")


# -- A wide window: every number shows ------------------------------------------


DESKTOP = (1400, 1000)

FITS_COLUMN = """
// Every table and listing of the article, each with the box that would
// scroll it sideways (the nearest one, itself included, whose overflow-x is
// not visible: furo's div.table-wrapper, a listing's pre): that box must
// hold all of its content, and end inside the article's column.
document.querySelectorAll('article[role=main] details').forEach(d => { d.open = true; });
const article = document.querySelector('article[role=main]');
const style = getComputedStyle(article);
const columnRight = article.getBoundingClientRect().right - parseFloat(style.paddingRight);
const scroller = e => {
  for (let a = e; a && a !== article; a = a.parentElement) {
    if (getComputedStyle(a).overflowX !== 'visible') return a;
  }
  return e;
};
const named = e => `${e.tagName.toLowerCase()}.${String(e.className).trim().replace(/\\s+/g, '.')}`;
const items = [...article.querySelectorAll('table')].map(e => ['table', e]).concat(
  [...article.querySelectorAll('div.highlight pre, pre.literal-block')].map(e => ['listing', e]));
const problems = [];
let checked = 0;
for (const [kind, e] of items) {
  if (!e.getClientRects().length) continue;  // not shown
  checked += 1;
  const box = scroller(e);
  const section = e.closest('section[id]');
  const what = `${kind} in #${section ? section.id : '?'} ("${
    (e.innerText || '').trim().split('\\n')[0].slice(0, 40)}")`;
  if (box.scrollWidth > box.clientWidth + 1) {
    problems.push(`${what}: ${box.scrollWidth} px of content in ` +
                  `${box.clientWidth} px (${named(box)})`);
  }
  for (const edge of [box, e]) {
    const right = edge.getBoundingClientRect().right;
    if (right > columnRight + 1) {
      problems.push(`${what}: ${named(edge)} ends at ${Math.round(right)} px, past the `
                    + `column's right edge at ${Math.round(columnRight)} px`);
      break;
    }
  }
}
return {checked: checked, problems: problems, column: article.clientWidth};
"""


def test_every_table_and_listing_fits_its_column_at_1400_px(site, server, browser):
    """No number of a table and no line of a listing is hidden at 1400 px:
    each fits the article's column (a listing may wrap its long lines,
    docs/_static/ladder.css), with every dropdown opened."""
    width, height = DESKTOP
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    try:
        problems, checked = [], {}
        for page in pages(site):
            open_page(browser, server.url(page))
            seen = browser.execute_script(FITS_COLUMN)
            checked[page] = seen["checked"]
            problems += [f"{page} (column {seen['column']} px): {p}" for p in seen["problems"]]
        assert checked.get(CHAPTER, 0) >= 2, f"{CHAPTER}: no table or listing found"
        assert not problems, "\n".join(problems)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# -- A phone ------------------------------------------------------------------


OVERFLOW = """
// Furo clips the page sideways (html: overflow-x hidden) and lets its
// content column (.content) scroll instead, so the document's own width is
// not enough: the content column must not scroll sideways either. A
// listing, a table or an equation may scroll inside its own box: that is
// not the page scrolling.
const width = window.innerWidth;
const pageLevel = [document.documentElement, document.body,
                   ...document.querySelectorAll('.content')];
const tooWide = pageLevel.filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.tagName.toLowerCase()}.${String(e.className).trim().replace(/\\s+/g, '.')}`
            + ` (${e.scrollWidth} px of content in ${e.clientWidth})`);
// What sticks out, to say why: past the window, not inside a box of its
// own that scrolls or clips, and not in a fixed drawer kept off screen.
const wide = [];
for (const e of document.body.querySelectorAll('*')) {
  const box = e.getBoundingClientRect();
  if (!box.width || box.right <= width + 1) continue;
  let inside = false;
  for (let a = e; a && !pageLevel.includes(a); a = a.parentElement) {
    const style = getComputedStyle(a);
    if ((a !== e && style.overflowX !== 'visible') || style.position === 'fixed') {
      inside = true;
      break;
    }
  }
  if (inside) continue;
  wide.push(`${e.tagName.toLowerCase()}.${String(e.className).trim().replace(/\\s+/g, '.')}`
            + ` (right edge ${Math.round(box.right)})`);
  if (wide.length >= 5) break;
}
const header = document.querySelector('header.mobile-header');
return {scrollWidth: document.documentElement.scrollWidth, innerWidth: width,
        tooWide: tooWide, wide: wide,
        header: header ? getComputedStyle(header).display : null,
        headerHeight: header ? header.getBoundingClientRect().height : 0};
"""


# The two-panel plots' images that show, each with whether it is the stacked
# drawing and how its shown width compares with its drawn width.
TWO_PANEL_PLOTS = """
return [...document.querySelectorAll('figure.ladder-two-panel img')]
  .filter(i => i.offsetParent)
  .map(i => ({stacked: i.classList.contains('ladder-stacked'),
              scale: i.getBoundingClientRect().width / i.naturalWidth}));
"""


def test_a_phone_sees_every_page_without_sideways_scrolling(site, server, browser, crawl):
    # At desktop width the mobile header is hidden (read by the crawl), and a
    # two-panel plot shows its panels side by side, in one mode only.
    assert crawl[CHAPTER]["mobileHeader"] == "none"
    open_page(browser, server.url(CHAPTER))
    desktop = browser.execute_script(TWO_PANEL_PLOTS)
    assert desktop and not any(plot["stacked"] for plot in desktop), desktop
    assert len(desktop) == len(browser.find_elements("css selector", "figure.ladder-two-panel"))
    width, height = PHONE
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
    try:
        problems = []
        for page in pages(site):
            open_page(browser, server.url(page))
            seen = browser.execute_script(OVERFLOW)
            # A mobile viewport widens itself to fit content too wide for it,
            # so the width is checked against the phone's, not only the page's.
            if (seen["innerWidth"] != width or seen["scrollWidth"] > width + 1
                    or seen["tooWide"]):
                problems.append(f"{page}: {seen['scrollWidth']} px wide in a {width} px "
                                f"viewport (inner width {seen['innerWidth']}); "
                                f"overflowing: {seen['tooWide']}; sticking out: {seen['wide']}")
            if seen["header"] in (None, "none") or seen["headerHeight"] <= 0:
                problems.append(f"{page}: no mobile header ({seen['header']})")
            # A two-panel plot shows its panels stacked, at (nearly) the size
            # they were drawn, so that its labels stay legible.
            for plot in browser.execute_script(TWO_PANEL_PLOTS):
                if not plot["stacked"]:
                    problems.append(f"{page}: a two-panel plot side by side on a phone")
                elif plot["scale"] < 0.8:
                    problems.append(f"{page}: a stacked plot shrunk to {plot['scale']:.2f} "
                                    "of its drawn size")
            if page == CHAPTER:
                browser.save_screenshot(str(artifacts_dir() / "browser-phone.png"))
            problems += [f"{page}: console error: {m}" for m in console_errors(browser)]
        assert not problems, "\n".join(problems)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
