/* fm-paths.c - installed-data lookup shared by formulate and formulate-cli. */
#include "fm-paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
fm_is_dir (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

static int
fm_is_file (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode);
}

const char *
fm_data_dir (char *buf, size_t size)
{
  char exe[PATH_MAX];
  ssize_t len = readlink ("/proc/self/exe", exe, sizeof exe - 1);

  if (len > 0)
    {
      exe[len] = '\0';
#ifdef FM_BUILD_ROOT
      /* An uninstalled program of this build tree reads the source tree's data,
       * unless FE_NO_SOURCE_TREE asks it to behave as installed. */
      size_t root_len = strlen (FM_BUILD_ROOT);
      if (!getenv ("FE_NO_SOURCE_TREE") && strncmp (exe, FM_BUILD_ROOT, root_len) == 0 &&
          exe[root_len] == '/')
        {
          snprintf (buf, size, "%s", FM_SOURCE_DATADIR);
          return buf;
        }
#endif
      char *slash = strrchr (exe, '/');
      if (slash)
        {
          *slash = '\0';
          snprintf (buf, size, "%s/../share/formulate", exe);
          if (fm_is_dir (buf))
            return buf;
        }
    }
  snprintf (buf, size, "%s", FM_DATADIR);
  return buf;
}

const char *
fm_find_model (const char *option, char *buf, size_t size, char *looked, size_t looked_size)
{
  char dir[PATH_MAX];

  if (option && *option)
    return option;
  const char *env = getenv ("FORMULATE_MODEL");
  if (env && *env)
    return env;
  snprintf (buf, size, "%s/models/%s", fm_data_dir (dir, sizeof dir), FM_MODEL_FILE);
  if (fm_is_file (buf))
    return buf;
  if (looked)
    snprintf (looked, looked_size, "%s", buf);
  return NULL;
}
