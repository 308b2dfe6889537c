"""The browser-test harness: Debian's headless Chromium driven by Selenium 4 through Debian's chromedriver.

Browser tests are never skipped: a run that needs a browser and finds none fails, naming the installer
(`make browser`, which `make test` runs). CHROMIUM_BIN and CHROMEDRIVER_BIN override where they are. The
driver is passed explicitly, so Selenium Manager never downloads anything. One browser and one fixture
server per module: starting Chromium costs seconds.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser.fixture_server import FixtureServer
from tests.browser.viewmodel import view_model

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
WINDOW = (1400, 900)
INSTALL_HINT = (
    "run `make browser` (part of `make test`: it installs Debian's chromium and chromium-driver "
    "with apt-get), or point CHROMIUM_BIN and CHROMEDRIVER_BIN at a Chromium and its chromedriver"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/browser carries the ``browser`` marker (``-m "not browser"`` skips them)."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in item.path.resolve().parents:
            item.add_marker(pytest.mark.browser)


def find_executable(env: str, names: tuple[str, ...]) -> str:
    """The executable ``env`` names, else the first of ``names`` on PATH or in /usr/bin; fails if none."""
    configured = os.environ.get(env)
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            pytest.fail(f"{env}={configured} is not an executable file; {INSTALL_HINT}", pytrace=False)
        return configured
    for name in names:
        found = shutil.which(name) or shutil.which(name, path="/usr/bin")
        if found:
            return found
    pytest.fail(f"browser tests need {' or '.join(names)} but none was found; {INSTALL_HINT}", pytrace=False)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium = find_executable("CHROMIUM_BIN", ("chromium", "chromium-browser"))
    chromedriver = find_executable("CHROMEDRIVER_BIN", ("chromedriver",))
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--disable-extensions",
        "--no-first-run",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    # The window's frame takes part of it even headless: grow the window until the page itself (and so
    # each screenshot) is 1400x900.
    frame = driver.execute_script("return outerHeight - innerHeight")
    driver.set_window_size(WINDOW[0], WINDOW[1] + int(frame))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def fixture_server() -> Iterator[FixtureServer]:
    server = FixtureServer(view_model([], []))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def screenshot(browser: WebDriver, request: pytest.FixtureRequest) -> Callable[[str], Path]:
    """``screenshot(name)`` saves the window as tests/browser/artifacts/<test>-<name>.png (CI keeps them)."""

    def save(name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', request.node.name)}-{name}.png"
        assert browser.save_screenshot(str(path)), f"could not save {path}"
        return path

    return save
