/* fm-png.h - PNG files -> pixels the engine takes (libpng; plain C, no GLib). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "fe.h"

typedef struct {
  uint8_t *data;           /* malloc'd, rows of stride bytes              */
  int width, height, stride;
  fe_pixel_format format;  /* GRAY8, RGB8 or RGBA8                        */
} FmPngImage;

/* Reads any PNG (palette, 1-16 bit, gray/RGB with or without alpha or tRNS)
 * as GRAY8, RGB8 or RGBA8. Returns 0, or -1 with a one-line reason in err
 * ("cannot open x.png: No such file or directory", "x.png: not a PNG file").
 * Without libpng at build time it always fails and says so. */
int fm_png_load (const char *path, FmPngImage *out, char *err, size_t err_size);
void fm_png_clear (FmPngImage *image);

/* Checks path without decoding it: a regular file (a FIFO or a device is
 * refused without blocking on it, a directory is named as one) that starts
 * with a PNG signature and an IHDR chunk; *pixels gets width * height.
 * Returns 0, or -1 with a one-line reason in err as fm_png_load does. */
int fm_png_probe (const char *path, long long *pixels, char *err, size_t err_size);

/* Whether the image has anything to recognise: some pixel differs from the
 * lightest by at least a tenth of the range, transparent counting as white
 * (the engine's preprocessing leaves a fainter image blank). */
int fm_png_has_ink (const FmPngImage *image);
