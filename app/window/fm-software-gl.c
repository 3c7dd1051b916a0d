/* fm-software-gl.c - the cairo renderer where GTK's OpenGL would run on the CPU.
 *
 * GLib only: the window (main.c), the GUI tests and tools/startup-floor.c
 * (the floor it is measured against) make the same choice. */
#include "fm-software-gl.h"

/* Whether OpenGL would run on a GPU: a DRM render node is how Mesa and the
 * NVIDIA driver reach one. */
static gboolean
have_gpu_render_node (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/dev/dri", 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "renderD"))
      return TRUE;
  return FALSE;
}

/* Without a GPU, GTK's OpenGL renderer is Mesa's llvmpipe: it maps LLVM
 * (55 MB resident), keeps ~60 MB of renderer caches and still draws on the
 * CPU, more slowly than the cairo renderer (an empty window: 219 MB RSS with
 * it, 84 MB without, tools/measure-startup under Xvfb). With the cairo
 * renderer chosen, GDK 4.8 on X11 still loads GLX, Mesa and LLVM when the
 * display opens, for nothing: in a profile of the launch of test-gui
 * (GSK_RENDERER=cairo) the dynamic loader's relocations of those libraries
 * were the largest single cost before the first page (perf record, ld.so 17 %
 * of the samples, libLLVM-15 and swrast_dri among the objects). */
gboolean
fm_avoid_software_gl (void)
{
  const char *renderer = g_getenv ("GSK_RENDERER");

  if (g_getenv ("GDK_DEBUG") != NULL)
    return FALSE;
  if (renderer != NULL && g_ascii_strcasecmp (renderer, "cairo") != 0)
    return FALSE;
  if (renderer == NULL && have_gpu_render_node () && g_getenv ("LIBGL_ALWAYS_SOFTWARE") == NULL)
    return FALSE;
  /* GSK then picks its cairo renderer by itself. */
  g_setenv ("GDK_DEBUG", "gl-disable", TRUE);
  return TRUE;
}
