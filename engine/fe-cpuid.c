/* fe-cpuid.c - what this CPU can run, read from cpuid and checked against the
 * OS: a feature only counts when the kernel saves its registers (xgetbv), or
 * for AMX when it has granted the tile state (arch_prctl), since a kernel
 * that does not would fault on the first instruction. */
#include "fe-internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define FE_X86 1
#endif

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#define FE_ARCH_GET_XCOMP_PERM 0x1022
#define FE_ARCH_REQ_XCOMP_PERM 0x1023
#define FE_XFEATURE_XTILEDATA 18
#endif

static FeCpuInfo fe_cpu;
static pthread_once_t fe_cpu_once = PTHREAD_ONCE_INIT;

#ifdef FE_X86
static uint64_t fe_xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Linux hands out the AMX tile state only on request (5.16+). */
static bool fe_amx_permitted(void) {
#if defined(__linux__) && defined(__x86_64__)
    unsigned long bitmask = 0;
    if (syscall(SYS_arch_prctl, FE_ARCH_GET_XCOMP_PERM, &bitmask) == 0 &&
        (bitmask & (1ul << FE_XFEATURE_XTILEDATA)))
        return true;
    return syscall(SYS_arch_prctl, FE_ARCH_REQ_XCOMP_PERM, FE_XFEATURE_XTILEDATA) == 0;
#else
    return false;
#endif
}

/* FE_CPU_ISA's cap (fe_cpu_apply_isa_cap below): 0 none (unset, "avx512" or a
 * value it does not know), 1 "avx2", 2 "portable"; any case. */
static int fe_isa_cap_level(const char *isa) {
    if (!isa)
        return 0;
    if (strcasecmp(isa, "avx2") == 0)
        return 1;
    if (strcasecmp(isa, "portable") == 0)
        return 2;
    return 0;
}

static void fe_cpu_detect_x86(FeCpuInfo *ci, const char *isa) {
    unsigned a, b, c, d, max_leaf, max_ext;
    uint64_t xcr0 = 0;
    bool os_avx = false, os_avx512 = false, os_amx = false;

    if (!__get_cpuid(0, &max_leaf, &b, &c, &d))
        return;
    memcpy(ci->vendor + 0, &b, 4);
    memcpy(ci->vendor + 4, &d, 4);
    memcpy(ci->vendor + 8, &c, 4);
    ci->vendor[12] = '\0';

    __cpuid(1, a, b, c, d);
    {
        unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
        ci->family = (int)base_family;
        ci->model = (int)base_model;
        if (base_family == 0xf)
            ci->family += (int)((a >> 20) & 0xff);
        if (base_family == 0x6 || base_family == 0xf)
            ci->model += (int)(((a >> 16) & 0xf) << 4);
    }
    ci->sse42 = (c >> 20) & 1;
    bool osxsave = (c >> 27) & 1;
    bool cpu_avx = (c >> 28) & 1;
    bool cpu_fma = (c >> 12) & 1;
    bool cpu_f16c = (c >> 29) & 1;
    if (osxsave) {
        xcr0 = fe_xgetbv0();
        os_avx = (xcr0 & 0x6) == 0x6;                 /* XMM + YMM state           */
        os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;  /* opmask + ZMM_Hi256 + Hi16 */
        os_amx = (xcr0 & 0x60000) == 0x60000;         /* XTILECFG + XTILEDATA      */
    }
    ci->avx = cpu_avx && os_avx;
    ci->fma = cpu_fma && os_avx;
    ci->f16c = cpu_f16c && os_avx;

    if (max_leaf >= 7) {
        unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0;
        __cpuid_count(7, 0, a, b, c, d);
        if (a >= 1)
            __cpuid_count(7, 1, a1, b1, c1, d1);
        ci->avx2 = ((b >> 5) & 1) && os_avx;
        ci->avx512f = ((b >> 16) & 1) && os_avx512;
        ci->avx512bw = ((b >> 30) & 1) && os_avx512;
        ci->avx512vl = ((b >> 31) & 1) && os_avx512;
        ci->avx512_bf16 = ((a1 >> 5) & 1) && os_avx512;
        ci->amx_bf16 = ((d >> 22) & 1) && os_amx;
        ci->amx_tile = ((d >> 24) & 1) && os_amx;
        /* Tile permission is per process (and enlarges signal frames): not asked
         * for when FE_CPU_ISA caps AMX away anyway. */
        if ((ci->amx_bf16 || ci->amx_tile) &&
            (fe_isa_cap_level(isa) > 0 || !fe_amx_permitted()))
            ci->amx_bf16 = ci->amx_tile = false;
    }

    __cpuid(0x80000000, max_ext, b, c, d);
    if (max_ext >= 0x80000004) {
        unsigned regs[12];
        for (unsigned i = 0; i < 3; i++)
            __cpuid(0x80000002 + i, regs[i * 4], regs[i * 4 + 1], regs[i * 4 + 2],
                    regs[i * 4 + 3]);
        memcpy(ci->brand, regs, sizeof regs < sizeof ci->brand ? sizeof regs : sizeof ci->brand);
        ci->brand[sizeof ci->brand - 1] = '\0';
        /* Brands come padded with leading and trailing spaces. */
        char *s = ci->brand;
        while (*s == ' ')
            s++;
        memmove(ci->brand, s, strlen(s) + 1);
        size_t n = strlen(ci->brand);
        while (n > 0 && ci->brand[n - 1] == ' ')
            ci->brand[--n] = '\0';
    }
}

/* An FE_CPU_ISA value that is none of the caps ("" when none). Kept, not
 * printed: the detection runs in fe-blas.c's constructor, before main() and
 * before a host can set its log callback, so fe-blas.c says it through
 * fe_log() at the CPU backend's first use (fe_cpu_isa_ignored). */
static char fe_cpu_isa_unknown[32];

/* FE_CPU_ISA=avx512|avx2|portable caps the instruction sets the engine's
 * kernels use below what the CPU has, so that the AVX2 and the portable
 * loops can be tested (and compared) on a machine with more: without it, CI
 * runners with AVX2 never ran the portable decode loops at all. Only clears
 * flags (a cap, not a claim); an unknown value changes nothing. */
static void fe_cpu_apply_isa_cap(FeCpuInfo *ci, const char *isa) {
    if (!isa || !*isa || strcasecmp(isa, "avx512") == 0)
        return;
    int level = fe_isa_cap_level(isa);
    bool portable = level == 2;
    if (level == 0) {
        snprintf(fe_cpu_isa_unknown, sizeof fe_cpu_isa_unknown, "%s", isa);
        return;
    }
    ci->avx512f = ci->avx512bw = ci->avx512vl = ci->avx512_bf16 = false;
    ci->amx_bf16 = ci->amx_tile = false;
    if (portable)
        ci->avx = ci->avx2 = ci->fma = ci->f16c = false;
}
#endif

static void fe_cpu_detect(void) {
    FeCpuInfo *ci = &fe_cpu;
    memset(ci, 0, sizeof *ci);
    snprintf(ci->vendor, sizeof ci->vendor, "unknown");
#ifdef FE_X86
    const char *isa = getenv("FE_CPU_ISA");
    fe_cpu_detect_x86(ci, isa);
    fe_cpu_apply_isa_cap(ci, isa);
#endif
    if (!ci->brand[0])
        snprintf(ci->brand, sizeof ci->brand, "%s CPU", ci->vendor);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    ci->n_cores = n > 0 ? (int)n : 1;
}

const FeCpuInfo *fe_cpu_info(void) {
    pthread_once(&fe_cpu_once, fe_cpu_detect);
    return &fe_cpu;
}

const char *fe_cpu_isa_ignored(void) {
#ifdef FE_X86
    pthread_once(&fe_cpu_once, fe_cpu_detect);
    return fe_cpu_isa_unknown[0] ? fe_cpu_isa_unknown : NULL;
#else
    return NULL;
#endif
}
