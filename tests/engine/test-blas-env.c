/* test-blas-env.c - the engine changes the environment only before main().
 *
 * setenv() may move or free the environment under a thread calling
 * getenv(): formulate-cli's detection threads died in getenv() (SIGSEGV)
 * while the main thread's first model load set OPENBLAS_CORETYPE and
 * OPENBLAS_NUM_THREADS (engine/fe-blas.c). The engine must have set them
 * before any thread can exist, so choosing the GEMM path and loading
 * OpenBLAS later leave environ as it was. The test runs itself again
 * without the variables the engine sets, so that it has something to set. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fe-cpu.h"

static int n_warnings;
static char warnings[4][1024];

static void keep_warning(fe_log_level level, const char *message, void *user_data) {
    (void)user_data;
    if (level < FE_LOG_WARN)
        return;
    if (n_warnings < 4)
        snprintf(warnings[n_warnings], sizeof warnings[0], "%s", message);
    n_warnings++;
}

static int has_warning(const char *part) {
    for (int i = 0; i < n_warnings && i < 4; i++)
        if (strstr(warnings[i], part))
            return 1;
    return 0;
}

/* --log (run with FE_CPU_ISA=sse2): what the engine learns before main()
 * (an FE_CPU_ISA it ignores, an OpenBLAS the host loads after the engine's
 * constructor) reaches the log callback the host sets in main, once, not
 * stderr before main where no host can catch it. */
static int test_log(void) {
    fe_set_log_callback(keep_warning, NULL);
    /* A host that dlopens OpenBLAS itself, between the engine's constructor
     * and its first use. */
    void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL);
    printf("path: %s\n", fe_cpu_gemm_path());
    (void)fe_cpu_gemm_path();
    int bad = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (!has_warning("FE_CPU_ISA=sse2 is not avx512, avx2 or portable; ignored")) {
        fprintf(stderr, "test-blas-env: no log line for FE_CPU_ISA=sse2\n");
        bad = 1;
    }
    int want = 1;
#else
    int want = 0; /* FE_CPU_ISA names x86 instruction sets: ignored elsewhere */
#endif
    /* FE_BLAS=builtin or a named library: the engine never looks for an
     * OpenBLAS already in the process, so there is nothing to say. */
    const char *choice = getenv("FE_BLAS");
    int host_blas_used = blas && (!choice || !choice[0] || strcmp(choice, "openblas") == 0);
    if (blas && !host_blas_used)
        printf("FE_BLAS=%s: the host's OpenBLAS is not the engine's, not checked\n", choice);
    if (host_blas_used) {
        want++;
        if (!has_warning("OpenBLAS was loaded by the host program after the engine set") ||
            !strstr(fe_cpu_gemm_path(), "loaded by the host after the engine's constructor")) {
            fprintf(stderr, "test-blas-env: the host's OpenBLAS not said (path: %s)\n",
                    fe_cpu_gemm_path());
            bad = 1;
        }
    } else
        printf("no libopenblas.so.0: only FE_CPU_ISA checked\n");
    if (n_warnings != want) {
        fprintf(stderr, "test-blas-env: %d warnings, want %d (once each)\n", n_warnings, want);
        bad = 1;
    }
    for (int i = 0; i < n_warnings && i < 4; i++)
        printf("warning: %s\n", warnings[i]);
    fe_set_log_callback(NULL, NULL);
    if (blas)
        dlclose(blas);
    return bad;
}

static int is_blas_var(const char *entry) {
    static const char *const names[] = {"OPENBLAS_CORETYPE=", "OPENBLAS_NUM_THREADS=",
                                        "FE_BLAS=", "FE_BLAS_THREADS="};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strncmp(entry, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--log") == 0)
        return test_log();
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
