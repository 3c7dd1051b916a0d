/* formulate-cli - the engine from the command line.
 *
 *   formulate-cli recognize IMAGE.png... [options]   (app/cli/fm-cli-recognize.c)
 *   formulate-cli pdf FILE.pdf ...                    (app/cli/fm-cli-pdf.c, with Poppler)
 *   formulate-cli --list-devices
 *   formulate-cli --version
 *
 * Plain C on the engine and libpng, no GLib, so it runs where the GUI's
 * libraries are not installed. Exit codes: app/cli/fm-cli.h, docs/cli.md. */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "fe.h"
#include "fm-cli.h"

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage:\n"
           "  formulate-cli recognize IMAGE.png... [--model FILE] [--device auto|cpu|cuda:N]\n"
           "                [--beam N] [--threads N] [--max-tokens N] [--max-repeats N] [--json]\n"
#ifdef HAVE_PDF
           "  formulate-cli pdf FILE.pdf ...   (formulate-cli pdf --help)\n"
#endif
           "  formulate-cli --list-devices\n"
           "  formulate-cli --version\n"
           "\n"
           "The model is --model, else $FORMULATE_MODEL, else the installed\n"
           "formulate-v1.safetensors. See docs/cli.md for the exit codes.\n");
}

static int
run_command (int argc, char **argv)
{
  if (argc < 2)
    {
      usage (stderr);
      return FM_EXIT_USAGE;
    }
  const char *cmd = argv[1];
  if (strcmp (cmd, "--version") == 0 || strcmp (cmd, "-V") == 0)
    {
      printf ("formulate-cli %s (engine %s)\n", FM_VERSION, FE_VERSION_STRING);
      return FM_EXIT_OK;
    }
  if (strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0 || strcmp (cmd, "help") == 0)
    {
      usage (stdout);
      return FM_EXIT_OK;
    }
  if (strcmp (cmd, "--list-devices") == 0)
    return fm_cli_list_devices (argc - 1, argv + 1);
  if (strcmp (cmd, "recognize") == 0)
    return fm_cli_recognize (argc - 1, argv + 1);
  if (strcmp (cmd, "pdf") == 0)
    {
#ifdef HAVE_PDF
      return fm_cli_pdf (argc - 1, argv + 1);
#else
      fprintf (stderr, "formulate-cli: this build has no PDF support (Poppler was not found)\n");
      return FM_EXIT_USAGE;
#endif
    }
  fprintf (stderr, "formulate-cli: unknown command '%s' (try --help)\n", cmd);
  return FM_EXIT_USAGE;
}

/* Output that never reached its file (a full disk, a closed pipe) is a
 * failure the user must hear about, whatever the command was. */
static int
finish_stdout (int rc)
{
  if (fflush (stdout) != 0 || ferror (stdout))
    {
      int saved = errno;
      fprintf (stderr, "formulate-cli: cannot write to standard output: %s\n",
               saved ? strerror (saved) : "write error");
      return rc == FM_EXIT_OK ? FM_EXIT_FAILURE : rc;
    }
  return rc;
}

int
main (int argc, char **argv)
{
  /* The user's locale: GOption converts --password and file names from it,
   * so without this a UTF-8 password fails as "Invalid byte sequence". */
  setlocale (LC_ALL, "");
  return finish_stdout (run_command (argc, argv));
}
