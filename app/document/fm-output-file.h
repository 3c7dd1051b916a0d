/* fm-output-file.h - writing an export where the user asked, without losing
 * what was there: the CLI's -o and the window's export share it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Writes len bytes of data to path.
 *
 * - A regular file (new, or existing with one link) is replaced atomically:
 *   a temporary file in its folder, renamed over it, with the old file's
 *   permission bits (a private 0600 file stays private).
 * - A symbolic link is followed: its target is written, the link stays; a
 *   link to an open descriptor (/dev/stdout -> /proc/self/fd/1) is written
 *   through in place.
 * - A regular file with several hard links is written in place so the links
 *   keep sharing it.
 * - Anything else (a FIFO, /dev/null, /dev/stdout, a terminal) is opened and
 *   written in place; nothing is ever renamed over it.
 * - input_path, when not NULL, is the file the export was made from: a path
 *   that names the same file (same device and inode) is refused.
 *
 * Errors name path, never the temporary file. */
gboolean fm_output_file_write (const char  *path,
                               const char  *input_path,
                               const void  *data,
                               gsize        len,
                               GError     **error);

G_END_DECLS
