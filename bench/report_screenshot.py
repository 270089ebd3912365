"""A screenshot of the sizing report at 1280x800: the first screen, as a reader first sees
it, or one chart.

    python -m bench.report_screenshot warehouse/reports/sizing-report.html docs/report-after.png
    python -m bench.report_screenshot warehouse/reports/sizing-report.html \
        docs/screenshots/checkpoint-chart-after.png --chart checkpoint-write

Drives the system Chromium through Playwright (its own browser download is not needed);
every request leaving the file is aborted, so the picture is the offline report.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1280, 800


def screenshot(report: Path, png: Path, chart: str | None = None, nth: int = 0) -> None:
    """Write `png`: the first screen of `report` in Chromium at 1280x800, or the `nth`
    chart (figure) whose data-plot is `chart`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.route("**/*", lambda route: route.abort()
                       if not route.request.url.startswith(("file:", "data:"))
                       else route.continue_())
            page.goto(report.resolve().as_uri())
            page.wait_for_load_state("load")
            page.evaluate("document.fonts.ready.then(() => true)")
            png.parent.mkdir(parents=True, exist_ok=True)
            if chart is None:
                page.screenshot(path=str(png), full_page=False)
            else:
                page.locator(f'figure.chart[data-plot="{chart}"]').nth(nth).screenshot(
                    path=str(png))
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--chart", help="one chart instead: its kind (data-plot)")
    parser.add_argument("--nth", type=int, default=0, help="which chart of that kind (0)")
    args = parser.parse_args()
    screenshot(args.report, args.png, args.chart, args.nth)
    print(args.png)


if __name__ == "__main__":
    main()
