/* fm-settings.h - the application's GSettings, wherever its schema is. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Settings for schema_id. The schema is looked for, in order: the build tree's
 * compiled schema (for a program of this build tree, as fm_data_dir() prefers
 * the source tree's data), the default schema sources ($GSETTINGS_SCHEMA_DIR,
 * $XDG_DATA_DIRS), <program>/../share/glib-2.0/schemas (a relocated or DESTDIR
 * install), the configured <prefix>/share/glib-2.0/schemas. When none has it,
 * the copy compiled into the program is used with in-memory settings (nothing
 * is saved) and a warning: a missing schema never stops the window.
 * *where_out (may be NULL) says which one was used. Never NULL. */
GSettings *fm_settings_open (const char *schema_id, char **where_out);

G_END_DECLS
