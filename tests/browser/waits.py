"""Waiting for the page: the browser tests' conditions, each failing with what never appeared."""

from __future__ import annotations

from typing import Any

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait


def waiting(browser: WebDriver, timeout: float) -> WebDriverWait[WebDriver]:
    """A wait that looks again when the page re-rendered an element between finding and reading it."""
    return WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException,))


def wait_for(browser: WebDriver, css: str, timeout: float = 20) -> Any:
    return waiting(browser, timeout).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, css), f"no {css} appeared"
    )[0]


def wait_text(browser: WebDriver, css: str, text: str, timeout: float = 20) -> None:
    def shows(d: WebDriver) -> bool:
        found = d.find_elements(By.CSS_SELECTOR, css)
        return bool(found) and text in found[0].text

    waiting(browser, timeout).until(shows, f"{css} never showed {text!r}")
