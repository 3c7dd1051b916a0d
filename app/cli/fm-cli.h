/* fm-cli.h - subcommands of formulate-cli, one file each. */
#pragma once

/* formulate-cli recognize IMAGE... (app/cli/fm-cli-recognize.c) */
int fm_cli_recognize (int argc, char **argv);
/* formulate-cli --list-devices (app/cli/fm-cli-recognize.c) */
int fm_cli_list_devices (int argc, char **argv);
/* formulate-cli pdf FILE.pdf ... (app/cli/fm-cli-pdf.c, only when built with Poppler) */
int fm_cli_pdf (int argc, char **argv);

/* Exit codes shared by every subcommand (documented in docs/cli.md). */
enum {
  FM_EXIT_OK = 0,
  FM_EXIT_FAILURE = 1,      /* recognition or export failed                 */
  FM_EXIT_USAGE = 2,        /* bad command line                             */
  FM_EXIT_INPUT = 3,        /* input file missing, unreadable or malformed  */
  FM_EXIT_MODEL = 4,        /* model file missing or invalid                */
  FM_EXIT_DEVICE = 5,       /* the forced device cannot be used             */
  FM_EXIT_PASSWORD = 6,     /* the PDF needs a (different) password         */
  FM_EXIT_NO_INK = 7,       /* recognize: an image is blank (no ink)        */
  FM_EXIT_INTERRUPTED = 130 /* Ctrl-C                                       */
};
