#!/usr/bin/python3
"""fm-mathtext-origins.inc must stay sorted by case-folded font name, then
character: fm-mathtext.c finds a font's rows by binary search
(glyph_origin_first_row), so a hand-edited or merged row out of order would
silently lose that font's measured origins."""
import re
import sys

rows = []
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    m = re.match(r'\{ "([^"]+)", (0x[0-9a-f]+|0),', line)
    if m:
        rows.append((m.group(1).lower(), int(m.group(2), 16 if m.group(2).startswith("0x") else 10), n))
if len(rows) < 10:
    sys.exit("only %d rows read from %s" % (len(rows), sys.argv[1]))
for a, b in zip(rows, rows[1:]):
    if (a[0], a[1]) >= (b[0], b[1]):
        sys.exit("line %d (%s, 0x%x) is not after line %d (%s, 0x%x)" % (b[2], b[0], b[1], a[2], a[0], a[1]))
print("%d rows in order" % len(rows))
