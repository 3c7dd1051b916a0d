#!/usr/bin/env bash
# Starts the real `formulate` program the way a person does and checks its window comes up and
# stays up: no GLib-GIO-ERROR for a missing settings schema, no trap, no critical.
#
# Usage: start-window.sh MODE SOURCE_ROOT BUILD_ROOT   (run under dbus-run-session + xvfb-run)
#   readme      tools/run-sample, the README's first command, from the source tree (when the
#               build under test is <source>/build, the one run-sample uses; otherwise the
#               command run-sample ends with, on this build)
#   build-tree  <build>/app/formulate sample.pdf from another directory
#   devenv      meson devenv -C <build> app/formulate sample.pdf
#   installed   meson install --destdir into a temporary prefix, its schemas compiled as a
#               package's trigger does, then <prefix>/bin/formulate
#   no-schema   a copy of the program where no compiled schema is near it: it must start on the
#               schema compiled into it and say that settings are not saved
# The program runs with a desktop's environment and nothing else (env -i: HOME, PATH, the
# display, the session bus), so no GSETTINGS_SCHEMA_DIR, FORMULATE_MODEL or test setting.
set -euo pipefail
mode=$1
src=$(realpath "$2")
build=$(realpath "$3")
sample=$src/data/samples/sample.pdf

if [ -z "${DISPLAY:-}" ]; then
  echo "SKIP: no display (run under xvfb-run)"
  exit 77
fi
if ! command -v xwininfo >/dev/null; then
  echo "SKIP: xwininfo (Debian x11-utils) is not installed"
  exit 77
fi

tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/home"
workdir=$tmp
expect_fallback=0

case $mode in
  readme)
    workdir=$src
    if [ "$build" = "$src/build" ]; then
      cmd=(tools/run-sample)
    else
      echo "note: the build under test is not $src/build, so this runs the command tools/run-sample ends with on it"
      cmd=("$build/app/formulate" data/samples/sample.pdf)
    fi
    ;;
  build-tree)
    cmd=("$build/app/formulate" "$sample")
    ;;
  devenv)
    cmd=(meson devenv -C "$build" "$build/app/formulate" "$sample")
    ;;
  installed)
    meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >/dev/null
    prefix=$(meson introspect "$build" --buildoptions |
      /usr/bin/python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
    # meson compiles installed schemas only without --destdir; with it that is the package
    # manager's trigger (Debian's libglib2.0-0 runs glib-compile-schemas), done here as it would.
    glib-compile-schemas "$tmp/root$prefix/share/glib-2.0/schemas"
    cmd=("$tmp/root$prefix/bin/formulate" "$sample")
    ;;
  no-schema)
    mkdir -p "$tmp/bin"
    cp "$build/app/formulate" "$tmp/bin/formulate"
    # Where a copy would still find a schema, there is nothing to test.
    for dir in /usr/share /usr/local/share "$(meson introspect "$build" --buildoptions |
        /usr/bin/python3 -c 'import json,sys; o={o["name"]:o["value"] for o in json.load(sys.stdin)}; print(o["prefix"] + "/" + o["datadir"])')"; do
      if [ -f "$dir/glib-2.0/schemas/io.github.formulate.Formulate.gschema.xml" ]; then
        echo "SKIP: the schema is installed in $dir, so a copy of the program finds it"
        exit 77
      fi
    done
    cmd=("$tmp/bin/formulate" "$sample")
    expect_fallback=1
    ;;
  *)
    echo "unknown mode $mode" >&2
    exit 2
    ;;
esac

log=$tmp/formulate.log
# Seen under load and between back-to-back tests: the program started before the
# display answered, or xvfb-run's display was still the previous test's dying
# server ("cannot open display"). Wait for the display, and start again (up to
# three times) when the program could not open it; any other exit is a failure.
for attempt in 1 2 3; do
  for _ in $(seq 1 600); do
    xwininfo -root >/dev/null 2>&1 && break
    sleep 0.1
  done
  echo "running: ${cmd[*]} (in $workdir)"
  (cd "$workdir" && exec env -i HOME="$tmp/home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
     DISPLAY="$DISPLAY" ${XAUTHORITY:+XAUTHORITY="$XAUTHORITY"} \
     ${DBUS_SESSION_BUS_ADDRESS:+DBUS_SESSION_BUS_ADDRESS="$DBUS_SESSION_BUS_ADDRESS"} \
     "${cmd[@]}") >"$log" 2>&1 &
  pid=$!

  # The main window: GTK's 1x1 client leader does not count. Generous under a loaded machine.
  window=
  for _ in $(seq 1 600); do
    if ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    window=$(xwininfo -root -tree 2>/dev/null | grep '"Formulate"' | grep -v ' 1x1+' || true)
    [ -n "$window" ] && break
    sleep 0.1
  done
  if [ -z "$window" ] && ! kill -0 "$pid" 2>/dev/null && grep -q "cannot open display" "$log"; then
    echo "attempt $attempt: the display did not accept the program; again"
    cat "$log"
    wait "$pid" 2>/dev/null || true
    sleep 2
    continue
  fi
  break
done
if [ -n "$window" ]; then
  echo "window: $window"
  # Still up once the document, the page and the model had time to load.
  sleep 3
fi
alive=0
kill -0 "$pid" 2>/dev/null && alive=1
if [ $alive = 1 ]; then
  kill "$pid"
fi
wait "$pid" 2>/dev/null || true
pid=
echo "--- formulate's output:"
cat "$log"
echo "---"

fail=0
if [ -z "$window" ]; then
  echo "FAIL: no Formulate window appeared"
  fail=1
fi
if [ $alive = 0 ]; then
  echo "FAIL: formulate exited by itself"
  fail=1
fi
if grep -E 'GLib-GIO-ERROR|-CRITICAL|Trace/breakpoint|Segmentation' "$log"; then
  echo "FAIL: errors in formulate's output"
  fail=1
fi
if [ $expect_fallback = 1 ]; then
  if ! grep -q 'settings schema io.github.formulate.Formulate is not installed' "$log"; then
    echo "FAIL: the copy without a schema did not say it uses built-in defaults"
    fail=1
  fi
elif grep -q 'schema' "$log"; then
  echo "FAIL: the schema next to the program was not found"
  fail=1
fi
[ $fail = 0 ] && echo "PASS: $mode"
exit $fail
