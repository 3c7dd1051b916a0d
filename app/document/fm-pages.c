/* fm-pages.c - page selections. */
#include "fm-pages.h"
#include "fm-document.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static gboolean
parse_number (const char *s, const char *end, long *out)
{
  char *stop = NULL;
  long v;

  while (s < end && g_ascii_isspace (*s))
    s++;
  while (end > s && g_ascii_isspace (end[-1]))
    end--;
  if (s == end || !g_ascii_isdigit (*s))
    return FALSE;
  errno = 0;
  v = strtol (s, &stop, 10);
  if (errno != 0 || stop != end)
    return FALSE;
  *out = v;
  return TRUE;
}

GArray *
fm_pages_parse (const char *spec,
                int         n_pages,
                GError    **error)
{
  g_autofree gboolean *want = NULL;
  g_auto(GStrv) parts = NULL;
  GArray *pages;

  if (n_pages <= 0)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_PAGE_RANGE, "the document has no pages");
      return NULL;
    }
  want = g_new0 (gboolean, n_pages);
  if (spec == NULL || g_ascii_strcasecmp (spec, "all") == 0)
    {
      for (int i = 0; i < n_pages; i++)
        want[i] = TRUE;
    }
  else
    {
      parts = g_strsplit (spec, ",", -1);
      if (parts[0] == NULL)
        {
          g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_PAGE_RANGE, "empty page selection");
          return NULL;
        }
      for (int i = 0; parts[i]; i++)
        {
          const char *p = parts[i];
          const char *dash = strchr (p, '-');
          const char *end = p + strlen (p);
          long a, b;

          if (dash == NULL)
            {
              if (!parse_number (p, end, &a))
                goto bad;
              b = a;
            }
          else
            {
              const char *q = p;
              while (q < dash && g_ascii_isspace (*q))
                q++;
              if (q == dash)
                a = 1;
              else if (!parse_number (p, dash, &a))
                goto bad;
              q = dash + 1;
              while (*q && g_ascii_isspace (*q))
                q++;
              if (*q == '\0')
                b = n_pages;
              else if (!parse_number (dash + 1, end, &b))
                goto bad;
            }
          if (a < 1 || b < a || b > n_pages)
            {
              g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_PAGE_RANGE,
                           "page selection '%s' is outside 1-%d", parts[i], n_pages);
              return NULL;
            }
          for (long k = a; k <= b; k++)
            want[k - 1] = TRUE;
          continue;
        bad:
          g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_PAGE_RANGE,
                       "bad page selection '%s' (use e.g. 1-3,7)", parts[i]);
          return NULL;
        }
    }
  pages = g_array_new (FALSE, FALSE, sizeof (int));
  for (int i = 0; i < n_pages; i++)
    if (want[i])
      g_array_append_val (pages, i);
  return pages;
}
