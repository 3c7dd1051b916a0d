/* fm-preferences.h - the preferences window (GSettings). */
#pragma once

#include <adwaita.h>

#include "fm-engine-worker.h"

G_BEGIN_DECLS

#define FM_TYPE_PREFERENCES (fm_preferences_get_type ())
G_DECLARE_FINAL_TYPE (FmPreferences, fm_preferences, FM, PREFERENCES, AdwPreferencesWindow)

FmPreferences *fm_preferences_new (GSettings *settings, FmEngineWorker *worker);

G_END_DECLS
