"""Make the report's chart font (reports/fonts/) from Liberation Sans: run by hand, once.

    apt-get download fonts-liberation2 && dpkg-deb -x fonts-liberation2_*.deb lib
    pip install fonttools   # not a dependency of the project: only this script uses it
    python -m bench.report_font lib/usr/share/fonts/truetype/liberation2 reports/fonts

Charts are measured by vl-convert when they are drawn and shown by the reader's browser:
both must use the same glyph widths, or labels laid out to fit overflow the chart. So both
use one file per weight: vl-convert registers reports/fonts/ and the page embeds the same
bytes. The font is Liberation Sans 2 (metric-compatible with Arial) cut to the Latin,
Greek and symbol blocks the report's text uses, without hinting (smaller) and without
kerning or ligatures (which a measurer and a browser may apply differently). A modified
Liberation font may not carry the Reserved Font Name (SIL OFL 1.1), hence its own name.
"""

from __future__ import annotations

import argparse
from pathlib import Path

FAMILY = "Report Sans"  # the reports.charts.FONT_FAMILY
WEIGHTS = {"Regular": "LiberationSans-Regular.ttf", "Bold": "LiberationSans-Bold.ttf"}
# Basic Latin to Latin Extended-B, Greek, punctuation, super- and subscripts, currency,
# letterlike symbols, arrows and mathematical operators (≤, −, ×, ≈, ∞)
UNICODES = [*range(0x20, 0x7F), *range(0xA0, 0x250), *range(0x370, 0x400),
            *range(0x2000, 0x20D0), *range(0x2100, 0x2150), *range(0x2190, 0x2200),
            *range(0x2200, 0x2300)]
NOTICE = ("Report Sans: a subset of Liberation Sans 2.1.5, renamed. Digitized data copyright "
          "(c) 2010 Google Corporation with Reserved Font Arimo, Tinos and Cousine. "
          "Copyright (c) 2012 Red Hat, Inc. with Reserved Font Name Liberation. "
          "Licensed under the SIL Open Font License, Version 1.1.")


def subset(source: Path, out: Path, style: str) -> None:
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont

    options = ft_subset.Options()
    options.layout_features = []  # no kerning, no ligatures
    options.hinting = False
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # copyright, names, licence
    options.notdef_outline = True
    font = TTFont(source)
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(unicodes=UNICODES)
    subsetter.subset(font)
    names = font["name"]
    full = f"{FAMILY} {style}" if style != "Regular" else FAMILY
    for record_id, value in ((1, FAMILY), (2, style), (3, f"{FAMILY}-{style}"), (4, full),
                             (6, f"{FAMILY.replace(' ', '')}-{style}"), (0, NOTICE)):
        names.setName(value, record_id, 3, 1, 0x409)
        names.setName(value, record_id, 1, 0, 0)
    for record in list(names.names):  # no other record keeps the reserved name
        if record.nameID in (16, 17, 21, 22):
            names.removeNames(nameID=record.nameID)
    font.save(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder of LiberationSans-*.ttf")
    parser.add_argument("out", type=Path, help="reports/fonts")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for style, name in WEIGHTS.items():
        target = args.out / f"ReportSans-{style}.ttf"
        subset(args.source / name, target, style)
        print(target, target.stat().st_size)


if __name__ == "__main__":
    main()
