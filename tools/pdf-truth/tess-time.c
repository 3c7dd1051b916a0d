/* tess-time.c - Tesseract's CPU time on one page image, with options
 * (docs/scanned.md, Speed: which Tesseract settings make a page cheaper).
 *
 *   cc -O2 -o tess-time tools/pdf-truth/tess-time.c $(pkg-config --cflags --libs tesseract) -ldl
 *   ./tess-time PAGE.pgm PSM REPEATS DPI [name=value...]
 *
 * PAGE.pgm: a binary 8-bit PGM (pdftoppm -gray -r DPI). Prints, for each
 * repeat, the thread CPU of the layout analysis alone and of the whole
 * recognition, the words read and their mean confidence, how many of them
 * at confidence 50 and more, and how many are dictionary words of four
 * characters and more at 30 and more (fm-scan.c's running-text rules take
 * those whatever else they read); the model is
 * loaded once (its CPU printed first), with OpenMP's teams off as in
 * app/document/fm-scan.c. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tesseract/capi.h>

static double
cpu (void)
{
  struct timespec t;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int
main (int argc, char **argv)
{
  FILE *f;
  int w, h, maxval, psm, reps, dpi;
  unsigned char *px;
  TessBaseAPI *api;
  void (*set_levels) (int);
  double c0;

  if (argc < 5 || (f = fopen (argv[1], "rb")) == NULL)
    {
      fprintf (stderr, "usage: tess-time PAGE.pgm PSM REPEATS DPI [name=value...]\n");
      return 2;
    }
  if (fscanf (f, "P5 %d %d %d", &w, &h, &maxval) != 3 || maxval != 255 || fgetc (f) == EOF)
    {
      fprintf (stderr, "tess-time: %s is no 8-bit binary PGM\n", argv[1]);
      return 2;
    }
  px = malloc ((size_t) w * h);
  if (px == NULL || fread (px, 1, (size_t) w * h, f) != (size_t) w * h)
    {
      fprintf (stderr, "tess-time: %s is short\n", argv[1]);
      return 2;
    }
  fclose (f);
  psm = atoi (argv[2]);
  reps = atoi (argv[3]);
  dpi = atoi (argv[4]);
  set_levels = (void (*) (int)) dlsym (RTLD_DEFAULT, "omp_set_max_active_levels");
  if (set_levels)
    set_levels (0);
  c0 = cpu ();
  api = TessBaseAPICreate ();
  if (TessBaseAPIInit2 (api, NULL, "eng", OEM_LSTM_ONLY) != 0)
    {
      fprintf (stderr, "tess-time: no English model\n");
      return 1;
    }
  printf ("load %.3f s\n", cpu () - c0);
  TessBaseAPISetVariable (api, "debug_file", "/dev/null");
  for (int i = 5; i < argc; i++)
    {
      char name[256];
      const char *eq = strchr (argv[i], '=');
      if (eq == NULL || eq - argv[i] >= (int) sizeof name)
        continue;
      snprintf (name, sizeof name, "%.*s", (int) (eq - argv[i]), argv[i]);
      if (!TessBaseAPISetVariable (api, name, eq + 1))
        fprintf (stderr, "tess-time: no variable %s\n", name);
    }
  for (int r = 0; r < reps; r++)
    {
      double layout, all, conf = 0;
      int n = 0, n50 = 0, ndict = 0;
      TessPageIterator *pi;
      TessResultIterator *ri;

      TessBaseAPISetPageSegMode (api, psm);
      TessBaseAPISetImage (api, px, w, h, 1, w);
      TessBaseAPISetSourceResolution (api, dpi);
      c0 = cpu ();
      pi = TessBaseAPIAnalyseLayout (api);
      layout = cpu () - c0;
      if (pi)
        TessPageIteratorDelete (pi);
      TessBaseAPIClear (api);
      TessBaseAPISetImage (api, px, w, h, 1, w);
      TessBaseAPISetSourceResolution (api, dpi);
      c0 = cpu ();
      TessBaseAPIRecognize (api, NULL);
      all = cpu () - c0;
      ri = TessBaseAPIGetIterator (api);
      if (ri)
        {
          do
            {
              char *t = TessResultIteratorGetUTF8Text (ri, RIL_WORD);
              if (t)
                {
                  n++;
                  float c = TessResultIteratorConfidence (ri, RIL_WORD);
                  conf += c;
                  n50 += c >= 50;
                  ndict += c >= 30 && strlen (t) >= 4 && TessResultIteratorWordIsFromDictionary (ri);
                  TessDeleteText (t);
                }
            }
          while (TessResultIteratorNext (ri, RIL_WORD));
          TessResultIteratorDelete (ri);
        }
      printf ("layout %.3f s, recognition (layout included) %.3f s, %d words, mean confidence %.1f, "
              "%d at 50+, %d dictionary words of 4+ at 30+\n",
              layout, all, n, n ? conf / n : 0, n50, ndict);
      TessBaseAPIClear (api);
    }
  TessBaseAPIEnd (api);
  TessBaseAPIDelete (api);
  return 0;
}
