/* fm-lazy-library.c - a shared library opened on the first call of one of its functions. */
#include "fm-lazy-library.h"

#include <dlfcn.h>

void *
fm_lazy_library_open (FmLazyLibrary *library, const char **message)
{
  if (g_once_init_enter (&library->opened))
    {
      library->handle = dlopen (library->soname, library->flags);
      if (library->handle == NULL)
        {
          library->message = g_strdup (dlerror ());
          g_warning ("%s (%s) could not be loaded: %s", library->what, library->soname, library->message);
        }
      g_once_init_leave (&library->opened, 1);
    }
  if (message != NULL)
    *message = library->message;
  return library->handle;
}

void *
fm_lazy_library_symbol (FmLazyLibrary *library, void **slot, const char *name)
{
  void *fn = g_atomic_pointer_get (slot);

  if (fn == NULL && fm_lazy_library_open (library, NULL) != NULL)
    {
      fn = dlsym (library->handle, name);
      if (fn == NULL)
        g_warning ("%s has no %s: %s", library->what, name, dlerror ());
      g_atomic_pointer_set (slot, fn);
    }
  return fn;
}
