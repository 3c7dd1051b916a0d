#!/usr/bin/env python3
"""tools/check-function-length finds a long function, and only long functions.

Runs the checker on tests/style/data/src (long.c: too_long is 151 lines, just_fits 150,
braces in strings, comments, macros and initializers; kernel.cu: a 153-line member
function inside extern "C" and a struct, a template specialisation) with allow-lists
written here. Usage: test-function-length.py CHECKER DATA_DIR
"""
import os
import subprocess
import sys
import tempfile

checker, data = sys.argv[1], sys.argv[2]
failures = []


def run(allow_text, *extra):
    with tempfile.NamedTemporaryFile('w', suffix='.allow', delete=False) as f:
        f.write(allow_text)
    try:
        p = subprocess.run([sys.executable, checker, '--root', data, '--allow', f.name, *extra, 'src'],
                           capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return p.returncode, p.stdout + p.stderr


def check(what, ok, output):
    print(('ok   ' if ok else 'FAIL ') + what)
    if not ok:
        print('  ' + output.replace('\n', '\n  '))
        failures.append(what)


# Every definition found, with the right length, and nothing that is not one.
rc, out = run('', '--list')
listed = sorted(line.split()[2] + ' ' + line.split()[0] for line in out.splitlines()
                if line.startswith(' '))
check('--list finds the seven definitions with their lengths',
      listed == ['just_fits 150', 'launch 1', 'load_f32 1', 'main 4', 'run 153',
                 'too_long 151', 'tricky 9'], out)

# No allow-list: the two long ones fail the check, the 150-line one does not.
rc, out = run('')
named = sorted(line.split(': ')[1].split()[0] for line in out.splitlines() if ' is ' in line)
check('without an allow-list it exits 1', rc == 1, out)
check('and names too_long and run only', named == ['run', 'too_long'], out)

# Allowed with a reason: passes.
rc, out = run('# fixture\nsrc/long.c too_long a reason\nsrc/kernel.cu run another reason\n')
check('both allowed: exits 0', rc == 0, out)

# One left off: fails on that one.
rc, out = run('src/long.c too_long a reason\n')
check('run not allowed: exits 1', rc == 1 and 'src/kernel.cu:12: run is 153 lines' in out, out)

# An entry that names no long function is stale: fails.
rc, out = run('src/long.c too_long a reason\nsrc/kernel.cu run r\nsrc/long.c just_fits stale\n')
check('a stale entry fails', rc == 1 and 'just_fits is no longer a function over 150' in out, out)

# A lower limit finds just_fits too.
rc, out = run('src/long.c too_long a reason\nsrc/kernel.cu run r\n', '--limit', '149')
check('--limit 149 finds just_fits', rc == 1 and 'just_fits is 150 lines' in out, out)

# An entry without a reason is refused.
rc, out = run('src/long.c too_long\n')
check('an entry without a reason is refused', rc != 0 and 'PATH FUNCTION REASON' in out, out)

print('%d failed' % len(failures))
sys.exit(1 if failures else 0)
