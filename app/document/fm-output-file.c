/* fm-output-file.c - see fm-output-file.h for the rules and why. */
#include "fm-output-file.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
set_errno_error (GError **error, int saved_errno, const char *path, const char *what)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "%s: %s%s%s", path,
               what ? what : "", what ? ": " : "", g_strerror (saved_errno));
  return FALSE;
}

static gboolean
write_all (int fd, const void *data, gsize len, const char *path, GError **error)
{
  const char *p = data;

  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, errno, path, "cannot write");
      p += n;
      len -= (gsize) n;
    }
  return TRUE;
}

/* In place: for FIFOs and devices (nothing to rename over), hard-linked files
 * (a rename would split them) and dangling symlinks (created through). */
static gboolean
write_in_place (const char *path, gboolean truncate, const void *data, gsize len,
                GError **error)
{
  int fd = g_open (path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0666);
  gboolean ok;

  if (fd < 0)
    return set_errno_error (error, errno, path, NULL);
  ok = write_all (fd, data, len, path, error);
  if (close (fd) != 0 && ok)
    ok = set_errno_error (error, errno, path, "cannot write");
  return ok;
}

/* Atomic: a temporary file beside target, written, synced, given the old
 * file's mode (or the umask's default for a new file) and renamed over it. */
static gboolean
write_atomically (const char *target, const char *shown, const struct stat *old,
                  const void *data, gsize len, GError **error)
{
  g_autofree char *tmp = g_strconcat (target, ".XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, 0666);
  gboolean ok;

  if (fd < 0)
    return set_errno_error (error, errno, shown, "cannot create a file beside it");
  if (old)
    {
      /* The owner too where we may (as root); a group or owner we cannot
       * give is not worth failing the export, the mode is what guards it. */
      if (fchown (fd, old->st_uid, old->st_gid) != 0)
        (void) 0;
      if (fchmod (fd, old->st_mode & 07777) != 0)
        {
          int saved = errno;
          close (fd);
          g_unlink (tmp);
          return set_errno_error (error, saved, shown, "cannot keep its permissions");
        }
    }
  else
    {
      mode_t mask = umask (0);
      umask (mask);
      if (fchmod (fd, 0666 & ~mask) != 0)
        (void) 0;  /* mkstemp's 0600 is safe to keep */
    }
  ok = write_all (fd, data, len, shown, error);
  if (ok && fsync (fd) != 0 && errno != EINVAL && errno != EROFS)
    ok = set_errno_error (error, errno, shown, "cannot write");
  if (close (fd) != 0 && ok)
    ok = set_errno_error (error, errno, shown, "cannot write");
  if (ok && g_rename (tmp, target) != 0)
    ok = set_errno_error (error, errno, shown, "cannot replace");
  if (!ok)
    g_unlink (tmp);
  return ok;
}

gboolean
fm_output_file_write (const char  *path,
                      const char  *input_path,
                      const void  *data,
                      gsize        len,
                      GError     **error)
{
  struct stat link_st, st, in_st;
  g_autofree char *resolved = NULL;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (data != NULL || len == 0, FALSE);

  if (g_lstat (path, &link_st) != 0)
    {
      if (errno != ENOENT)
        return set_errno_error (error, errno, path, NULL);
      return write_atomically (path, path, NULL, data, len, error);
    }
  if (g_stat (path, &st) != 0)
    {
      /* A dangling symlink: create its target through it. */
      if (S_ISLNK (link_st.st_mode) && errno == ENOENT)
        return write_in_place (path, TRUE, data, len, error);
      return set_errno_error (error, errno, path, NULL);
    }
  if (input_path && g_stat (input_path, &in_st) == 0 && in_st.st_dev == st.st_dev &&
      in_st.st_ino == st.st_ino)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   "%s: is the input file; refusing to overwrite it with the export", path);
      return FALSE;
    }
  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, "%s: is a directory", path);
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    return write_in_place (path, FALSE, data, len, error);
  if (st.st_nlink > 1)
    return write_in_place (path, TRUE, data, len, error);
  if (S_ISLNK (link_st.st_mode))
    {
      g_autofree char *target = g_file_read_link (path, NULL);
      /* /dev/stdout and friends name an open descriptor: write through it,
       * as the shell's redirection expects, instead of renaming over the
       * file it happens to point to. */
      if (target && (g_str_has_prefix (target, "/proc/self/fd/") ||
                     g_str_has_prefix (target, "/dev/fd/")))
        return write_in_place (path, TRUE, data, len, error);
      resolved = realpath (path, NULL);
      if (resolved == NULL)
        return set_errno_error (error, errno, path, NULL);
      return write_atomically (resolved, path, &st, data, len, error);
    }
  return write_atomically (path, path, &st, data, len, error);
}
