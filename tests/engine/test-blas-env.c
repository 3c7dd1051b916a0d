/* test-blas-env.c - the engine changes the environment only before main().
 *
 * setenv() may move or free the environment under a thread calling
 * getenv(): formulate-cli's detection threads died in getenv() (SIGSEGV)
 * while the main thread's first model load set OPENBLAS_CORETYPE and
 * OPENBLAS_NUM_THREADS (engine/fe-blas.c). The engine must have set them
 * before any thread can exist, so choosing the GEMM path and loading
 * OpenBLAS later leave environ as it was. The test runs itself again
 * without the variables the engine sets, so that it has something to set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fe-cpu.h"

static int is_blas_var(const char *entry) {
    static const char *const names[] = {"OPENBLAS_CORETYPE=", "OPENBLAS_NUM_THREADS=",
                                        "FE_BLAS=", "FE_BLAS_THREADS="};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strncmp(entry, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--clean-env") != 0) {
        size_t n = 0, k = 0;
        while (environ[n])
            n++;
        char **env = calloc(n + 1, sizeof *env);
        for (size_t i = 0; i < n; i++)
            if (!is_blas_var(environ[i]))
                env[k++] = environ[i];
        static char clean[] = "--clean-env";
        char *args[] = {argv[0], clean, NULL};
        execve("/proc/self/exe", args, env);
        /* no /proc (or a wrapper such as valgrind): nothing to compare */
        perror("test-blas-env: execve /proc/self/exe, skipped");
        free(env);
        return 77;
    }

    char **before = environ;
    size_t n = 0;
    while (before[n])
        n++;
    char **entries = malloc((n + 1) * sizeof *entries);
    char **copies = malloc((n + 1) * sizeof *copies);
    for (size_t i = 0; i < n; i++) {
        entries[i] = before[i];
        copies[i] = strdup(before[i]);
    }

    printf("path: %s\n", fe_cpu_gemm_path());

    int bad = environ != before;
    for (size_t i = 0; !bad && i <= n; i++)
        bad = i == n ? environ[i] != NULL : (environ[i] != entries[i] || strcmp(environ[i], copies[i]) != 0);
    if (bad) {
        fprintf(stderr, "test-blas-env: the environment changed after main() "
                        "(was %zu entries at %p, now at %p)\n", n, (void *)before, (void *)environ);
        for (size_t i = 0; environ[i]; i++)
            if (is_blas_var(environ[i]))
                fprintf(stderr, "  %s\n", environ[i]);
    } else
        printf("environment unchanged: %zu entries\n", n);
    /* freed: the sanitize configuration runs LeakSanitizer on every test */
    for (size_t i = 0; i < n; i++)
        free(copies[i]);
    free(copies);
    free(entries);
    return bad ? 1 : 0;
}
