#!/usr/bin/python3
"""Turn a truth PDF's pages with qpdf and its truth boxes with them.

  rotate-truth.py IN.pdf ANGLE OUT.pdf     (ANGLE: 90, 180 or 270, clockwise)

Writes OUT.pdf (qpdf --rotate=+ANGLE, i.e. /Rotate added to every page) and
OUT.truth.json with every box mapped to the page as displayed: the truth for
checking that detection gives boxes in displayed coordinates on turned pages.
"""
import json
import os
import subprocess
import sys


def page_sizes(pdf):
    """Unrotated page sizes in points (pdfinfo's MediaBox per page)."""
    out = subprocess.run(["pdfinfo", "-f", "1", "-l", "9999", "-box", pdf], capture_output=True,
                         text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 7 and parts[0] == "Page" and parts[2] == "MediaBox:":
            x0, y0, x1, y1 = map(float, parts[3:7])
            sizes[int(parts[1])] = (x1 - x0, y1 - y0)
    return sizes


def turn(box, angle, w, h):
    """Box on the unrotated page (w x h, top-left origin) as displayed after
    turning the page clockwise by angle."""
    x0, y0, x1, y1 = box
    if angle == 90:
        return [h - y1, x0, h - y0, x1]
    if angle == 180:
        return [w - x1, h - y1, w - x0, h - y0]
    if angle == 270:
        return [y0, w - x1, y1, w - x0]
    return box


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("90", "180", "270"):
        sys.exit(__doc__)
    src, angle, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    subprocess.run(["qpdf", "--rotate=+%d" % angle, src, dst], check=True)
    truth = json.load(open(src[:-4] + ".truth.json"))
    sizes = page_sizes(src)
    for r in truth["regions"]:
        w, h = sizes[r["page"]]
        r["box"] = [round(v, 2) for v in turn(r["box"], angle, w, h)]
    truth["pdf"] = os.path.basename(dst)
    truth["rotate"] = angle
    with open(dst[:-4] + ".truth.json", "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
