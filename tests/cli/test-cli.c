/* test-cli.c - runs the built formulate-cli: exit codes (app/cli/fm-cli.h,
 * docs/cli.md), one-line errors, --json output. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "fm-cli.h"

static char *cli_path;
static char *model_path;   /* the fixture model, NULL when it is missing */
static char *image_path;

typedef struct {
  int status;
  char *out, *err;
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

/* argv after the program name, NULL-terminated; env: extra "K=V" or NULL */
static Run
run_cli (const char *const *env_extra, const char *first, ...)
{
  GPtrArray *args = g_ptr_array_new ();
  g_ptr_array_add (args, cli_path);
  va_list ap;
  va_start (ap, first);
  for (const char *a = first; a; a = va_arg (ap, const char *))
    g_ptr_array_add (args, (char *) a);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  char **env = g_get_environ ();
  env = g_environ_unsetenv (env, "FORMULATE_MODEL");
  for (int i = 0; env_extra && env_extra[i]; i++)
    {
      g_auto (GStrv) kv = g_strsplit (env_extra[i], "=", 2);
      env = g_environ_setenv (env, kv[0], kv[1], TRUE);
    }
  Run r = { 0 };
  int wait_status = 0;
  g_autoptr (GError) error = NULL;
  gboolean ok = g_spawn_sync (NULL, (char **) args->pdata, env, G_SPAWN_DEFAULT, NULL, NULL,
                              &r.out, &r.err, &wait_status, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_true (WIFEXITED (wait_status));
  r.status = WEXITSTATUS (wait_status);
  g_strfreev (env);
  g_ptr_array_free (args, TRUE);
  return r;
}

/* An error is one line on stderr, nothing on stdout. */
static void
assert_one_line_error (const Run *r)
{
  g_assert_cmpstr (r->out, ==, "");
  g_assert_cmpuint (strlen (r->err), >, 1);
  g_assert_true (g_str_has_suffix (r->err, "\n"));
  g_assert_true (strchr (r->err, '\n') == r->err + strlen (r->err) - 1);
}

static gboolean
need_model (void)
{
  if (model_path)
    return TRUE;
  g_test_skip ("tests/fixtures/model/tiny.safetensors is missing");
  return FALSE;
}

static void
test_version_and_usage (void)
{
  Run r = run_cli (NULL, "--version", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_OK);
  g_assert_true (g_str_has_prefix (r.out, "formulate-cli "));
  run_clear (&r);

  r = run_cli (NULL, NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  run_clear (&r);
  r = run_cli (NULL, "frobnicate", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", image_path, "--beam", "0", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", image_path, "--scale-candidates", "0", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", image_path, "--batch", "33", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", image_path, "--max-repeats", "x", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", image_path, "--bogus", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
}

static void
test_list_devices (void)
{
  Run r = run_cli (NULL, "--list-devices", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_OK);
  g_assert_true (g_str_has_prefix (r.out, "ID "));
  g_assert_nonnull (strstr (r.out, "\ncpu "));
  /* every device of the engine's list is a line: CPU and at least the cuda
   * entry that says why there is no GPU */
  g_auto (GStrv) lines = g_strsplit (g_strchomp (r.out), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 2);
  run_clear (&r);
}

static void
test_recognize_plain_and_json (void)
{
  if (!need_model ())
    return;
  Run plain = run_cli (NULL, "recognize", image_path, "--model", model_path, "--device", "cpu", NULL);
  g_assert_cmpint (plain.status, ==, FM_EXIT_OK);
  g_assert_cmpstr (plain.err, ==, "");
  g_assert_true (g_str_has_suffix (plain.out, "\n"));
  g_assert_cmpint (strchr (plain.out, '\n') - plain.out, ==, (long) strlen (plain.out) - 1);

  Run js = run_cli (NULL, "recognize", image_path, image_path, "--model", model_path, "--json",
                    "--threads", "1", NULL);
  g_assert_cmpint (js.status, ==, FM_EXIT_OK);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, js.out, -1, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *dev = json_object_get_object_member (root, "device");
  g_assert_cmpstr (json_object_get_string_member (dev, "id"), ==, "cpu");
  g_assert_true (json_object_has_member (dev, "fell_back"));
  g_assert_cmpstr (json_object_get_string_member (root, "gemm_path"), !=, "");
  g_assert_cmpstr (json_object_get_string_member (root, "model"), ==, model_path);
  JsonArray *results = json_object_get_array_member (root, "results");
  g_assert_cmpuint (json_array_get_length (results), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *res = json_array_get_object_element (results, i);
      g_autofree char *line = g_strdup_printf ("%s\n", json_object_get_string_member (res, "latex"));
      g_assert_cmpstr (line, ==, plain.out);
      JsonObject *conf = json_object_get_object_member (res, "confidence");
      double mean = json_object_get_double_member (conf, "mean");
      double min = json_object_get_double_member (conf, "min");
      g_assert_cmpfloat (min, >, 0.0);
      g_assert_cmpfloat (min, <=, mean);
      g_assert_cmpfloat (mean, <=, 1.0);
      JsonObject *t = json_object_get_object_member (res, "timings_ms");
      g_assert_cmpfloat (json_object_get_double_member (t, "decoder"), >, 0.0);
      JsonObject *in = json_object_get_object_member (res, "input");
      g_assert_cmpint (json_object_get_int_member (in, "height") % 16, ==, 0);
    }
  run_clear (&plain);
  run_clear (&js);

  /* FORMULATE_MODEL stands in for --model */
  g_autofree char *env_model = g_strdup_printf ("FORMULATE_MODEL=%s", model_path);
  const char *env[] = { env_model, NULL };
  Run r = run_cli (env, "recognize", image_path, "--beam", "3", "--max-repeats", "0",
                   "--max-tokens", "5", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_OK);
  g_assert_cmpstr (r.err, ==, "");
  run_clear (&r);

  /* batched greedy decoding prints what one image after another prints, and a
   * single scale candidate is accepted */
  Run serial = run_cli (env, "recognize", image_path, image_path, "--batch", "1",
                        "--scale-candidates", "1", NULL);
  Run batched = run_cli (env, "recognize", image_path, image_path, "--batch", "2",
                         "--scale-candidates", "1", NULL);
  g_assert_cmpint (serial.status, ==, FM_EXIT_OK);
  g_assert_cmpint (batched.status, ==, FM_EXIT_OK);
  g_assert_cmpstr (serial.out, !=, "");
  g_assert_cmpstr (batched.out, ==, serial.out);
  run_clear (&serial);
  run_clear (&batched);
}

static void
test_bad_inputs (void)
{
  /* missing image: exit 3 before any model is looked at */
  Run r = run_cli (NULL, "recognize", "/nonexistent/formula.png", "--model", "/nonexistent.safetensors", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_INPUT);
  assert_one_line_error (&r);
  g_assert_nonnull (strstr (r.err, "/nonexistent/formula.png"));
  run_clear (&r);

  /* not a PNG */
  g_autofree char *tex = g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "model", "data",
                                           "formula.tex", NULL);
  r = run_cli (NULL, "recognize", tex, NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_INPUT);
  assert_one_line_error (&r);
  run_clear (&r);

  /* bad model path, and a file that is not a model */
  r = run_cli (NULL, "recognize", image_path, "--model", "/nonexistent/model.safetensors", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_MODEL);
  assert_one_line_error (&r);
  g_assert_nonnull (strstr (r.err, "/nonexistent/model.safetensors"));
  run_clear (&r);
  r = run_cli (NULL, "recognize", image_path, "--model", image_path, NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_MODEL);
  assert_one_line_error (&r);
  run_clear (&r);
}

static void
test_devices (void)
{
  if (!need_model ())
    return;
  Run r = run_cli (NULL, "recognize", image_path, "--model", model_path, "--device", "bogus", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);

  Run list = run_cli (NULL, "--list-devices", NULL);
  gboolean gpu = strstr (list.out, "\ncuda:0   yes") != NULL;
  run_clear (&list);
  if (!gpu)
    {
      r = run_cli (NULL, "recognize", image_path, "--model", model_path, "--device", "cuda:0", NULL);
      g_assert_cmpint (r.status, ==, FM_EXIT_DEVICE);
      assert_one_line_error (&r);
      run_clear (&r);
    }
}

/* --symbols / --symbols-file (glyph-constrained decoding, docs/cli.md) on
 * the shipped model and a test-split formula it misreads without them. */
static void
test_symbols (void)
{
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  g_autofree char *model = g_build_filename (root, "data", "models", "formulate-v1.safetensors", NULL);
  g_autofree char *img = g_build_filename (root, "tests", "engine", "data",
                                           "constrain-integral.png", NULL);
  const char *glyphs = "\\int \\mathbb N f ( n ) \\, d \\mu = \\sum n = 1 \\infty f ( n ) .";
  Run r = run_cli (NULL, "recognize", img, "--model", model, "--device", "cpu", "--em-px", "20", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_OK);
  g_assert_cmpstr (r.out, ==, "\\int_{\\mathbb{R}}f(n)\\,d\\mu=\\sum_{n=1}^{\\infty}f(n).\n");
  run_clear (&r);
  r = run_cli (NULL, "recognize", img, "--model", model, "--device", "cpu", "--em-px", "20",
               "--symbols", glyphs, NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_OK);
  g_assert_cmpstr (r.out, ==, "\\int_{\\mathbb{N}}f(n)\\,d\\mu=\\sum_{n=1}^{\\infty}f(n).\n");
  g_assert_cmpstr (r.err, ==, "");
  run_clear (&r);
  /* one line per image from a file, the hard mask, beam 4 */
  g_autofree char *file = NULL;
  int fd = g_file_open_tmp ("symbols-XXXXXX", &file, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_autofree char *two = g_strdup_printf ("%s\n\n", glyphs);
  g_assert_true (g_file_set_contents (file, two, -1, NULL));
  r = run_cli (NULL, "recognize", img, img, "--model", model, "--device", "cpu", "--em-px", "20",
               "--beam", "4", "--symbol-penalty", "mask", "--symbols-file", file, NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_OK);
  g_assert_cmpstr (r.out, ==, "\\int_{\\mathbb{N}}f(n)\\,d\\mu=\\sum_{n=1}^{\\infty}f(n).\n"
                              "\\int_{\\mathbb{R}}f(n)\\,d\\mu=\\sum_{n=1}^{\\infty}f(n).\n");
  run_clear (&r);
  /* an unknown token: said on stderr, ignored, still a result */
  r = run_cli (NULL, "recognize", img, "--model", model, "--device", "cpu", "--em-px", "20",
               "--symbols", "m \\foo", "--json", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_OK);
  g_assert_nonnull (strstr (r.err, "1 of the --symbols"));
  g_assert_nonnull (strstr (r.out, "\"unknown_symbols\": 1"));
  run_clear (&r);
  /* usage errors */
  r = run_cli (NULL, "recognize", img, "--symbols", "x", "--symbols-file", file, NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", img, "--symbol-penalty", "-2", NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);
  assert_one_line_error (&r);
  run_clear (&r);
  r = run_cli (NULL, "recognize", img, img, img, "--model", model, "--symbols-file", file, NULL);
  g_assert_cmpint (r.status, ==, FM_EXIT_USAGE);  /* 2 lines, 3 images */
  assert_one_line_error (&r);
  run_clear (&r);
  g_unlink (file);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cli_path = g_build_filename (g_getenv ("FE_BUILD_ROOT"), "app", "formulate-cli", NULL);
  const char *fixture_dir = g_getenv ("FE_FIXTURE_DIR");
  g_autofree char *fixture = fixture_dir
      ? g_build_filename (fixture_dir, "tiny.safetensors", NULL)
      : g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "fixtures", "model",
                          "tiny.safetensors", NULL);
  if (g_file_test (fixture, G_FILE_TEST_EXISTS))
    model_path = g_strdup (fixture);
  image_path = g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "model", "data",
                                 "formula-96dpi.png", NULL);
  g_test_add_func ("/cli/version-usage", test_version_and_usage);
  g_test_add_func ("/cli/list-devices", test_list_devices);
  g_test_add_func ("/cli/recognize", test_recognize_plain_and_json);
  g_test_add_func ("/cli/bad-inputs", test_bad_inputs);
  g_test_add_func ("/cli/devices", test_devices);
  g_test_add_func ("/cli/symbols", test_symbols);
  int rc = g_test_run ();
  g_free (cli_path);
  g_free (model_path);
  g_free (image_path);
  return rc;
}
