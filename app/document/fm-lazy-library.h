/* fm-lazy-library.h - a shared library opened on the first call of one of its functions.
 *
 * Poppler and Tesseract are opened this way (fm-poppler.c, fm-tesseract.c):
 * linked directly, each put its libraries on the window's path to the first
 * frame (issue 16). A file defines the library once and writes each function
 * it forwards with FM_LAZY_FN / FM_LAZY_VOID, with the signature the
 * library's header declares, so the callers are unchanged. */
#pragma once

#include <glib.h>

typedef struct
{
  const char *soname; /* opened by this name */
  const char *what;   /* for messages: "Poppler", "Tesseract" */
  int flags;          /* dlopen's */
  gsize opened;
  void *handle;
  char *message;      /* dlerror() when it could not be opened */
} FmLazyLibrary;

#define FM_LAZY_LIBRARY_INIT(soname, what, flags) { (soname), (what), (flags), 0, NULL, NULL }

/* The library's handle, opened on the first call (once, from any thread; a
 * warning the one time it fails); NULL with *message (may be NULL) set when
 * it is not there. */
void *fm_lazy_library_open (FmLazyLibrary *library, const char **message);

/* The function's address, looked up once per name into *slot; NULL when the
 * library is not there or lacks the name (an older version). */
void *fm_lazy_library_symbol (FmLazyLibrary *library, void **slot, const char *name);

/* One forwarding function: the library, its return type, name, parameter
 * list, the call's arguments, and what it returns when the library or the
 * name is not there. */
#define FM_LAZY_FN(library, ret, name, params, args, none)                          \
  ret name params                                                                   \
  {                                                                                 \
    static void *slot;                                                              \
    ret (*fn) params = (ret (*) params) fm_lazy_library_symbol (&(library), &slot, #name); \
    return fn != NULL ? fn args : (none);                                           \
  }
#define FM_LAZY_VOID(library, name, params, args)                                   \
  void name params                                                                  \
  {                                                                                 \
    static void *slot;                                                              \
    void (*fn) params = (void (*) params) fm_lazy_library_symbol (&(library), &slot, #name); \
    if (fn != NULL)                                                                 \
      fn args;                                                                      \
  }
