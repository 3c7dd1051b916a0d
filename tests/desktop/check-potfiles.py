#!/usr/bin/python3
"""Every .ui file and every C source with user-visible strings (_(, N_(, C_(, ngettext)
must be listed in po/POTFILES.in, and every listed file must exist."""
import os, re, sys

root = sys.argv[1]
listed = {l.strip() for l in open(os.path.join(root, "po", "POTFILES.in"))
          if l.strip() and not l.startswith("#")}
need = set()
for top in ("app", "data"):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            path = os.path.relpath(os.path.join(dirpath, f), root)
            text = open(os.path.join(dirpath, f), errors="replace").read() if f.endswith((".c", ".ui", ".in", ".xml")) else ""
            if f.endswith(".ui") and 'translatable="yes"' in text:
                need.add(path)
            elif f.endswith(".c") and re.search(r"\b(N?_|C_|g_dngettext|ngettext)\s*\(", text):
                need.add(path)
missing = sorted(need - listed)
gone = sorted(p for p in listed if not os.path.exists(os.path.join(root, p)))
for p in missing:
    print(f"not in po/POTFILES.in: {p}")
for p in gone:
    print(f"listed in po/POTFILES.in but missing: {p}")
print(f"{len(need)} files with translatable strings, {len(listed)} listed")
sys.exit(1 if missing or gone else 0)
