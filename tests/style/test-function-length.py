#!/usr/bin/env python3
"""tools/check-function-length finds a long function, and only long functions.

Runs the checker on fixtures it writes in a temporary folder (src/long.c: too_long is
151 lines, just_fits 150, braces in strings, comments, macros and initializers;
src/kernel.cu: a 153-line member function inside extern "C" and a struct, a template
specialisation) with allow-lists written here. Usage: test-function-length.py CHECKER
"""
import os
import shutil
import subprocess
import sys
import tempfile


def body(n, indent='  '):
    out = []
    for i in range(n):
        if i % 7 == 0:
            out.append(indent + 'total += %d; /* { not a brace */\n' % i)
        else:
            out.append(indent + 'total += %d;\n' % i)
    return ''.join(out)


def write_fixtures(folder):
    """long.c and kernel.cu in folder/src (written here: 150-line bodies of near-identical
    lines would only be noise for the duplicates tool as committed files)."""
    folder = os.path.join(folder, 'src')
    os.makedirs(folder)
    c = []
    c.append('''/* Fixture of tests/style/test-function-length.py: tools/check-function-length must find
     * too_long (151 lines from its opening brace to its closing one) and nothing else here.
     * Not built. Braces in comments { and strings must not count. */
    #include <stdio.h>
    #define OPEN {
    #define BLOCK(x) do { x; } while (0)

    struct __attribute__ ((aligned (8))) aligned_pair { int a, b; };

    static const int table[] = { 1, 2, 3 };
    static const struct { const char *name; int (*f) (int); } named[] = { { "}", NULL } };

    ''')
    c.append('static int\ntoo_long (int total)\n{\n' + body(148) + '  return total;\n}\n\n')
    c.append('static int\njust_fits (int total)\n{\n' + body(147) + '  return total;\n}\n\n')
    c.append('''int tricky(const char *s) {
        const char *brace = "}}}{";
        char c = '}';
        // a comment with } a brace
        if (s[0] == c) {
            return brace[0];
        }
        return '{';
    }

    int
    main (void)
    {
      printf ("%d %d %d\\n", too_long (0), just_fits (0), tricky ("}"));
      return table[0] + named[0].name[0];
    }
    ''')
    with open(os.path.join(folder, 'long.c'), 'w') as f:
            f.write(''.join(c))
    k = '''// Fixture of tests/style/test-function-length.py: a member function (run, 153 lines) and a
    // template specialisation inside extern "C" and a struct; only run is too long.
    #include <cuda_runtime.h>

    template <typename T> __device__ float load_f32(const T *p, int i);
    template <> __device__ float load_f32<float>(const float *p, int i) { return p[i]; }

    extern "C" {

    struct Launcher {
        template <typename T>
        static int run(const T *x, int n) {
            int total = 0;
    ''' + body(149, '        ') + '''        return total + n + (int)x[0];
        }
    };

    int launch(const float *x, int n) { return Launcher::run<float>(x, n); }

    }  // extern "C"
    '''
    with open(os.path.join(folder, 'kernel.cu'), 'w') as f:
            f.write(k)


checker = sys.argv[1]
data = tempfile.mkdtemp(prefix='function-length-')
write_fixtures(data)
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

shutil.rmtree(data)
print('%d failed' % len(failures))
sys.exit(1 if failures else 0)
