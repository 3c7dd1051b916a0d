/* fm-png.c - PNG reading for formulate-cli and the tests (libpng). */
#include "fm-png.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A formula crop is far below this; a bigger PNG is a mistake or an attack. */
#define FM_PNG_MAX_PIXELS (64LL * 1024 * 1024)

void
fm_png_clear (FmPngImage *image)
{
  if (!image)
    return;
  free (image->data);
  memset (image, 0, sizeof *image);
}

/* Opens path for reading if it is a regular file; O_NONBLOCK so that a FIFO
 * is refused instead of waited on. Returns the stream or NULL with err set. */
static FILE *
fm_png_open_regular (const char *path, char *err, size_t err_size)
{
  struct stat st;
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  FILE *f;

  if (fd < 0)
    {
      snprintf (err, err_size, "cannot open %s: %s", path, strerror (errno));
      return NULL;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      snprintf (err, err_size, S_ISDIR (st.st_mode) ? "%s: is a directory, not a PNG file"
                                                    : "%s: not a regular file", path);
      close (fd);
      return NULL;
    }
  fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
  f = fdopen (fd, "rb");
  if (!f)
    {
      snprintf (err, err_size, "cannot open %s: %s", path, strerror (errno));
      close (fd);
    }
  return f;
}

int
fm_png_probe (const char *path, long long *pixels, char *err, size_t err_size)
{
  static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  unsigned char head[24];
  FILE *f = fm_png_open_regular (path, err, err_size);
  size_t n;

  if (!f)
    return -1;
  n = fread (head, 1, sizeof head, f);
  fclose (f);
  if (n < 8 || memcmp (head, sig, 8) != 0)
    {
      snprintf (err, err_size, "%s: not a PNG file", path);
      return -1;
    }
  if (n < sizeof head || memcmp (head + 12, "IHDR", 4) != 0)
    {
      snprintf (err, err_size, "%s: invalid PNG (no IHDR chunk)", path);
      return -1;
    }
  *pixels = (long long) ((unsigned long) head[16] << 24 | head[17] << 16 | head[18] << 8 | head[19]) *
            (long long) ((unsigned long) head[20] << 24 | head[21] << 16 | head[22] << 8 | head[23]);
  return 0;
}

int
fm_png_has_ink (const FmPngImage *image)
{
  int channels = image->format == FE_PIXEL_GRAY8 ? 1 : image->format == FE_PIXEL_RGB8 ? 3 : 4;
  int lo = 255, hi = 0;

  for (int y = 0; y < image->height; y++)
    {
      const uint8_t *row = image->data + (size_t) y * (size_t) image->stride;
      for (int x = 0; x < image->width; x++)
        {
          const uint8_t *px = row + (size_t) x * (size_t) channels;
          int v = channels == 1 ? px[0] : (px[0] * 299 + px[1] * 587 + px[2] * 114) / 1000;
          if (channels == 4)  /* over white */
            v = (v * px[3] + 255 * (255 - px[3])) / 255;
          if (v < lo)
            lo = v;
          if (v > hi)
            hi = v;
        }
      if (hi - lo >= 26)
        return 1;
    }
  return hi - lo >= 26;
}

#ifdef HAVE_LIBPNG
#include <png.h>
#include <setjmp.h>

typedef struct {
  char *err;
  size_t err_size;
  const char *path;
} FmPngErrorSink;

static void
fm_png_error (png_structp png, png_const_charp message)
{
  FmPngErrorSink *sink = png_get_error_ptr (png);
  snprintf (sink->err, sink->err_size, "%s: invalid PNG (%s)", sink->path, message);
  png_longjmp (png, 1);
}

static void
fm_png_warning (png_structp png, png_const_charp message)
{
  (void) png;
  (void) message;  /* libpng warnings (bad gamma chunk, ...) do not stop us */
}

int
fm_png_load (const char *path, FmPngImage *out, char *err, size_t err_size)
{
  memset (out, 0, sizeof *out);
  FILE *f = fm_png_open_regular (path, err, err_size);
  if (!f)
    return -1;
  unsigned char sig[8];
  if (fread (sig, 1, 8, f) != 8 || png_sig_cmp (sig, 0, 8) != 0)
    {
      snprintf (err, err_size, "%s: not a PNG file", path);
      fclose (f);
      return -1;
    }
  FmPngErrorSink sink = { err, err_size, path };
  png_structp png = png_create_read_struct (PNG_LIBPNG_VER_STRING, &sink, fm_png_error,
                                            fm_png_warning);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  if (!png || !info)
    {
      snprintf (err, err_size, "%s: out of memory", path);
      png_destroy_read_struct (&png, &info, NULL);
      fclose (f);
      return -1;
    }
  /* volatile: modified between setjmp and a longjmp back */
  uint8_t *volatile data = NULL;
  png_bytep *volatile rows = NULL;
  if (setjmp (png_jmpbuf (png)))
    {
      free (data);
      free (rows);
      png_destroy_read_struct (&png, &info, NULL);
      fclose (f);
      return -1;
    }
  png_init_io (png, f);
  png_set_sig_bytes (png, 8);
  png_read_info (png, info);
  png_uint_32 w = png_get_image_width (png, info);
  png_uint_32 h = png_get_image_height (png, info);
  if ((long long) w * h > FM_PNG_MAX_PIXELS)
    {
      snprintf (err, err_size, "%s: image %ux%u is too large", path, (unsigned) w, (unsigned) h);
      png_destroy_read_struct (&png, &info, NULL);
      fclose (f);
      return -1;
    }
  int color = png_get_color_type (png, info);
  int depth = png_get_bit_depth (png, info);
  bool has_trns = png_get_valid (png, info, PNG_INFO_tRNS);
  if (color == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8 (png);
  if (has_trns)
    png_set_tRNS_to_alpha (png);
  if (depth == 16)
    png_set_strip_16 (png);
  bool alpha = has_trns || (color & PNG_COLOR_MASK_ALPHA);
  bool gray = color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA;
  /* The engine takes GRAY8 or RGB(A)8: gray with alpha becomes RGBA. */
  if (gray && alpha)
    png_set_gray_to_rgb (png);
  png_set_interlace_handling (png);
  png_read_update_info (png, info);
  int channels = png_get_channels (png, info);
  fe_pixel_format format = channels == 1 ? FE_PIXEL_GRAY8
                           : channels == 3 ? FE_PIXEL_RGB8 : FE_PIXEL_RGBA8;
  if (channels != 1 && channels != 3 && channels != 4)
    {
      snprintf (err, err_size, "%s: unsupported PNG layout (%d channels)", path, channels);
      png_destroy_read_struct (&png, &info, NULL);
      fclose (f);
      return -1;
    }
  size_t stride = (size_t) w * channels;
  data = malloc (stride * h);
  rows = malloc (sizeof (png_bytep) * h);
  if (!data || !rows)
    {
      snprintf (err, err_size, "%s: out of memory for %ux%u", path, (unsigned) w, (unsigned) h);
      free (data);
      free (rows);
      png_destroy_read_struct (&png, &info, NULL);
      fclose (f);
      return -1;
    }
  for (png_uint_32 y = 0; y < h; y++)
    rows[y] = data + y * stride;
  png_read_image (png, rows);
  png_read_end (png, NULL);
  png_destroy_read_struct (&png, &info, NULL);
  fclose (f);
  free (rows);
  out->data = data;
  out->width = (int) w;
  out->height = (int) h;
  out->stride = (int) stride;
  out->format = format;
  return 0;
}

#else

int
fm_png_load (const char *path, FmPngImage *out, char *err, size_t err_size)
{
  memset (out, 0, sizeof *out);
  snprintf (err, err_size, "cannot read %s: built without libpng", path);
  return -1;
}

#endif
