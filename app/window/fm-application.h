/* fm-application.h - the Formulate GTK application: windows, settings, the engine worker. */
#pragma once

#include <adwaita.h>

#include "fm-engine-worker.h"

G_BEGIN_DECLS

#define FM_APPLICATION_ID "io.github.formulate.Formulate"

#define FM_TYPE_APPLICATION (fm_application_get_type ())
G_DECLARE_FINAL_TYPE (FmApplication, fm_application, FM, APPLICATION, AdwApplication)

FmApplication  *fm_application_new        (void);
GSettings      *fm_application_get_settings (FmApplication *self);
/* The one engine worker of the process, shared by every window. */
FmEngineWorker *fm_application_get_worker   (FmApplication *self);
/* The model loads once the first page is on screen; a person asking for
 * recognition before that starts it at once. */
void            fm_application_start_engine (FmApplication *self);
gboolean        fm_application_get_engine_started (FmApplication *self);

G_END_DECLS
