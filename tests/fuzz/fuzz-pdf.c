/* fuzz-pdf.c - libFuzzer over FmDocument open + formula detection.
 * Built with meson -Dfuzzers=true and CC=clang (tests/pdf/meson.build). */
#include "fm-detect.h"
#include "fm-document.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GBytes *bytes = g_bytes_new (data, size);
  GError *error = NULL;
  FmDocument *doc = fm_document_new_for_bytes (bytes, "fuzz.pdf", NULL, &error);

  if (doc)
    {
      /* A few pages: enough to reach every code path without letting a
       * 10 000-page input time the fuzzer out. */
      int n = MIN (fm_document_get_n_pages (doc), 3);
      for (int p = 0; p < n; p++)
        {
          double w, h;
          GPtrArray *regions;
          if (!fm_document_get_page_size (doc, p, &w, &h, NULL))
            continue;
          regions = fm_detect_page (doc, p, NULL, NULL);
          if (regions)
            g_ptr_array_unref (regions);
        }
      g_object_unref (doc);
    }
  g_clear_error (&error);
  g_bytes_unref (bytes);
  return 0;
}
