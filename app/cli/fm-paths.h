/* fm-paths.h - where the programs find their installed data (plain C, no GLib,
 * so formulate-cli can use it too). */
#pragma once

#include <stddef.h>

#define FM_MODEL_FILE "formulate-v1.safetensors"

/* The data directory: relative to the running executable when it is installed
 * (<prefix>/bin/x -> <prefix>/share/formulate, so a relocated or DESTDIR install
 * works), the source tree's data/ for an uninstalled build-tree program, else
 * the configured FM_DATADIR. Writes into buf; returns buf. */
const char *fm_data_dir (char *buf, size_t size);

/* The model: option, else $FORMULATE_MODEL, else <data dir>/models/formulate-v1.safetensors.
 * NULL when none exists; then `looked` names the place searched. */
const char *fm_find_model (const char *option, char *buf, size_t size,
                           char *looked, size_t looked_size);
