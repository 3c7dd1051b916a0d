#!/usr/bin/env python3
"""tools/check-layout finds a file no meson.build names and an include that points up.

Builds a small tree in a temporary folder (the five folders, a meson.build each) and
runs the checker on it as it is, then with one break at a time.
Usage: test-layout.py CHECKER
"""
import os
import shutil
import subprocess
import sys
import tempfile

checker = sys.argv[1]
failures = []

TREE = {
    'engine/fe.h': '', 'engine/fe-base.h': '', 'engine/fe-api.c': '#include "fe-base.h"\n',
    'engine/meson.build': "files('fe.h', 'fe-base.h', 'fe-api.c')\n",
    'kernels/fe-k.cu': '#include "fe-base.h"\n', 'kernels/meson.build': "['fe-k.cu']\n",
    'app/document/fm-doc.h': '', 'app/document/fm-doc.c': '#include "fm-doc.h"\n#include "fe.h"\n',
    'app/document/meson.build': "files('fm-doc.c', 'fm-doc.h')\n",
    'app/cli/fm-cli.c': '#include "fm-doc.h"\n', 'app/cli/fm-cli.h': '',
    'app/cli/meson.build': "files('fm-cli.c', 'fm-cli.h')\n",
    'app/window/fm-win.c': '#include "fm-cli.h"\n#include "fm-doc.h"\n#include <gtk/gtk.h>\n',
    'app/window/fm-win.h': '', 'app/window/meson.build': "files('fm-win.c', 'fm-win.h')\n",
}


def run(changes):
    d = tempfile.mkdtemp(prefix='check-layout-')
    try:
        for path, text in {**TREE, **changes}.items():
            os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(d, path), 'w') as f:
                f.write(text)
        p = subprocess.run([sys.executable, checker, '--root', d], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr
    finally:
        shutil.rmtree(d)


def check(what, ok, out):
    print(('ok   ' if ok else 'FAIL ') + what)
    if not ok:
        print('  ' + out.replace('\n', '\n  '))
        failures.append(what)


rc, out = run({})
check('a clean tree passes', rc == 0 and '0 problem(s)' in out, out)
rc, out = run({'app/document/fm-new.c': ''})
check('a source no meson.build names fails',
      rc == 1 and 'app/document/fm-new.c: not named by app/document/meson.build' in out, out)
rc, out = run({'engine/fe-api.c': '#include "fm-doc.h"\n'})
check('engine including an app header fails', rc == 1 and 'engine/fe-api.c: #include "fm-doc.h"' in out, out)
rc, out = run({'engine/fe-api.c': '#include "../kernels/fe-k.h"\n'})
check('an include by path fails', rc == 1 and 'names a path' in out, out)
rc, out = run({'app/document/fm-doc.c': '#include "fm-win.h"\n'})
check('document including a window header fails', rc == 1 and 'points up' in out, out)
rc, out = run({'app/document/fm-doc.c': '#include "fe-base.h"\n'})
check('app including an engine internal header fails', rc == 1 and 'fe-base.h' in out, out)

print('%d failed' % len(failures))
sys.exit(1 if failures else 0)
