/* fm-settings.c - find the settings schema the way the model is found.
 *
 * g_settings_new() aborts the process when the schema is not installed, which
 * is the case for every uninstalled or relocated run; this looks next to the
 * program first and falls back to a copy of the schema compiled into it. */
#include "fm-settings.h"

#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>
#include <glib/gstdio.h>
#include <string.h>

/* The compiled schema is also embedded (app/fm-schema.gresource.xml). */
#define FM_EMBEDDED_SCHEMA "/io/github/formulate/Formulate/schemas/gschemas.compiled"

static char *
program_dir (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);

  return exe != NULL ? g_path_get_dirname (exe) : NULL;
}

/* A build-tree program, unless FE_NO_SOURCE_TREE asks it to behave as
 * installed (the same rule as fm_data_dir). */
static gboolean
in_build_tree (const char *dir)
{
#ifdef FM_BUILD_ROOT
  gsize root_len = strlen (FM_BUILD_ROOT);

  return dir != NULL && g_getenv ("FE_NO_SOURCE_TREE") == NULL &&
         strncmp (dir, FM_BUILD_ROOT, root_len) == 0 && (dir[root_len] == '/' || dir[root_len] == '\0');
#else
  (void) dir;
  return FALSE;
#endif
}

static GSettingsSchema *
lookup_in_directory (const char *dir, const char *schema_id)
{
  g_autoptr(GSettingsSchemaSource) source = NULL;
  g_autofree char *compiled = g_build_filename (dir, "gschemas.compiled", NULL);

  if (!g_file_test (compiled, G_FILE_TEST_IS_REGULAR))
    return NULL;
  source = g_settings_schema_source_new_from_directory (dir, NULL, TRUE, NULL);
  return source != NULL ? g_settings_schema_source_lookup (source, schema_id, FALSE) : NULL;
}

static GSettingsSchema *
lookup_default (const char *schema_id)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();

  return source != NULL ? g_settings_schema_source_lookup (source, schema_id, TRUE) : NULL;
}

/* The embedded copy, through a private file: a schema source can only be
 * read from a directory. The source maps the file, so it can go at once. */
static GSettingsSchema *
lookup_embedded (const char *schema_id)
{
  g_autoptr(GBytes) bytes = g_resources_lookup_data (FM_EMBEDDED_SCHEMA, 0, NULL);
  g_autofree char *dir = NULL;
  g_autofree char *file = NULL;
  GSettingsSchema *schema = NULL;

  if (bytes == NULL || (dir = g_dir_make_tmp ("formulate-schema-XXXXXX", NULL)) == NULL)
    return NULL;
  file = g_build_filename (dir, "gschemas.compiled", NULL);
  if (g_file_set_contents (file, g_bytes_get_data (bytes, NULL), (gssize) g_bytes_get_size (bytes), NULL))
    schema = lookup_in_directory (dir, schema_id);
  g_unlink (file);
  g_rmdir (dir);
  return schema;
}

GSettings *
fm_settings_open (const char *schema_id, char **where_out)
{
  g_autofree char *exe_dir = program_dir ();
  g_autoptr(GSettingsSchema) schema = NULL;
  g_autoptr(GSettingsBackend) backend = NULL;
  g_autofree char *where = NULL;

#ifdef FM_BUILD_ROOT
  if (in_build_tree (exe_dir) && g_getenv ("GSETTINGS_SCHEMA_DIR") == NULL)
    {
      where = g_build_filename (FM_BUILD_ROOT, "app", NULL);
      schema = lookup_in_directory (where, schema_id);
    }
#endif
  if (schema == NULL && (schema = lookup_default (schema_id)) != NULL)
    {
      g_free (where);
      where = g_strdup ("default");
    }
  if (schema == NULL && exe_dir != NULL)
    {
      g_free (where);
      where = g_build_filename (exe_dir, "..", "share", "glib-2.0", "schemas", NULL);
      schema = lookup_in_directory (where, schema_id);
    }
#ifdef FM_SCHEMADIR
  if (schema == NULL)
    {
      g_free (where);
      where = g_strdup (FM_SCHEMADIR);
      schema = lookup_in_directory (where, schema_id);
    }
#endif
  if (schema == NULL)
    {
      g_warning ("The settings schema %s is not installed: using built-in defaults, "
                 "changes to the preferences will not be saved", schema_id);
      g_free (where);
      where = g_strdup ("embedded");
      schema = lookup_embedded (schema_id);
      backend = g_memory_settings_backend_new ();
      /* The embedded copy is compiled from the same XML by the same build:
       * only an unwritable temporary directory can stop it. */
      if (schema == NULL)
        g_error ("Could not read the built-in settings schema (is %s writable?)", g_get_tmp_dir ());
    }
  if (where_out != NULL)
    *where_out = g_steal_pointer (&where);
  return g_settings_new_full (schema, backend, NULL);
}
