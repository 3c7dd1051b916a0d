#!/usr/bin/python3
"""Every language in po/LINGUAS must pass `msgfmt --check` and translate 100 % of the
strings of the current template (generated here with xgettext from POTFILES.in)."""
import os, re, subprocess, sys, tempfile

po_dir = sys.argv[1]
root = os.path.dirname(po_dir)
linguas = [l.strip() for l in open(os.path.join(po_dir, "LINGUAS")) if l.strip() and not l.startswith("#")]
if not linguas:
    print("po/LINGUAS lists no language"); sys.exit(1)
potfiles = [l.strip() for l in open(os.path.join(po_dir, "POTFILES.in")) if l.strip() and not l.startswith("#")]

with tempfile.TemporaryDirectory() as tmp:
    pot = os.path.join(tmp, "formulate.pot")
    # The glib preset's keywords, as meson's i18n.gettext uses them.
    args = ["xgettext", "--from-code=UTF-8", "--add-comments", "--keyword=_", "--keyword=N_",
            "--keyword=C_:1c,2", "--keyword=NC_:1c,2", "--keyword=g_dcgettext:2",
            "--keyword=g_dngettext:2,3", "--keyword=g_dpgettext2:2c,3",
            "--flag=N_:1:pass-c-format", "--flag=C_:2:pass-c-format",
            "--flag=NC_:2:pass-c-format", "--flag=g_dngettext:2:pass-c-format",
            "--flag=g_strdup_printf:1:c-format", "--flag=g_string_printf:2:c-format",
            "--flag=g_string_append_printf:2:c-format", "--flag=g_error_new:3:c-format",
            "--flag=g_set_error:4:c-format", "-o", pot, "-D", root] + potfiles
    subprocess.run(args, check=True)
    failed = False
    for lang in linguas:
        po = os.path.join(po_dir, lang + ".po")
        if not os.path.exists(po):
            print(f"{lang}: po/{lang}.po is missing"); failed = True; continue
        r = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", po], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{lang}: msgfmt --check failed:\n{r.stderr}"); failed = True; continue
        merged = os.path.join(tmp, lang + ".po")
        subprocess.run(["msgmerge", "--quiet", "--no-fuzzy-matching", "-o", merged, po, pot], check=True)
        r = subprocess.run(["msgfmt", "--statistics", "-o", "/dev/null", merged],
                           capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
        stats = r.stderr.strip()
        m = re.match(r"(\d+) translated messages?", stats)
        translated = int(m.group(1)) if m else 0
        untranslated = sum(int(x) for x in re.findall(r"(\d+) (?:untranslated|fuzzy)", stats))
        total = translated + untranslated
        pct = 100.0 * translated / total if total else 0.0
        print(f"{lang}: {translated}/{total} strings translated ({pct:.1f} %)")
        if untranslated:
            failed = True
sys.exit(1 if failed else 0)
