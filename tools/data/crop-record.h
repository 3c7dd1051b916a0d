/* crop-record.h - the record both crop tools (render-crops.c, pdf-crops.c)
 * write on stdout: int32 page, status, width, height; the tool's own
 * fields; then width*height uint8 pixels when the crop has them (status 0).
 * One writer, so that the two formats keep the same head and tail that
 * the Python tools in tools/data read. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* pixels: NULL for a record without them (a failed or skipped crop).
 * 0, or -1 when stdout fails. */
static inline int
crop_record_write (int32_t page, int32_t status, int32_t width, int32_t height, const void *fields,
                   size_t fields_size, const uint8_t *pixels)
{
  int32_t head[4] = { page, status, width, height };
  size_t n = (size_t) width * height;

  if (fwrite (head, sizeof head, 1, stdout) != 1 || fwrite (fields, fields_size, 1, stdout) != 1)
    return -1;
  if (pixels != NULL && fwrite (pixels, 1, n, stdout) != n)
    return -1;
  return 0;
}
