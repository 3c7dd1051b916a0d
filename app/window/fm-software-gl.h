/* fm-software-gl.h - the cairo renderer where GTK's OpenGL would run on the CPU. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Called before GTK opens the display: sets GDK_DEBUG=gl-disable where GTK's
 * GL renderer would be Mesa's llvmpipe (no DRM render node, or
 * LIBGL_ALWAYS_SOFTWARE) and the person chose no renderer other than cairo.
 * TRUE when it did. The variable stays set: GDK reads it once, and an
 * unsetenv() after threads exist races their getenv() (main.c). */
gboolean fm_avoid_software_gl (void);

G_END_DECLS
