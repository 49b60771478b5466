/*
 * fslab's XSAVE shim for User-mode Linux, preloaded into linux.uml (LD_PRELOAD) by
 * `fslab study run --guest uml` and `fslab doctor`.
 *
 * Why: UML keeps each guest thread's floating-point and vector registers in a fixed buffer
 * (2,696 bytes in Debian's 6.1 and 6.12 builds: x87, SSE, AVX, MPX, AVX-512 and PKRU) and
 * moves it to and from the host process that runs the thread with
 * ptrace(PTRACE_GETREGSET / PTRACE_SETREGSET, NT_X86_XSTATE). The host kernel truncates a
 * get to the caller's buffer, but accepts a set only of its whole user XSAVE area
 * (fpu_user_cfg.max_size). On CPUs with AMX that area is 11,008 bytes, the set fails with
 * EFAULT, and the guest panics at its first switch to user space.
 *
 * What: a set of NT_X86_XSTATE shorter than the host's area is widened to the host's size.
 * UML's bytes go first, unchanged; every state component beyond them is put in its initial
 * state (zero bytes, its bit cleared in XSTATE_BV). That loses nothing, and shows no thread
 * another thread's registers, only when every component beyond UML's buffer is one a guest
 * thread can never hold in a non-initial state. On today's CPUs those components are AMX's
 * tile configuration and tile data (17 and 18), which the host kernel grants a process only
 * on request (arch_prctl ARCH_REQ_XCOMP_PERM): UML's processes never ask, so a tile
 * instruction in the guest traps instead of leaving state behind. The shim checks this
 * with CPUID before it widens anything; if another component lies beyond UML's buffer, it
 * leaves the set unchanged (the guest fails as it would without the shim) and says why.
 *
 * Its decision is written once, as one line, to the file named by FSLAB_XSTATE_REPORT:
 *   widened uml=2696 host=11008 initialised=17,18
 *   refused uml=2696 host=N component=K offset=O size=S
 * Every other ptrace request passes through untouched. Buffers are static: UML calls ptrace
 * from its own kernel stacks of a few KiB, where a large local array would overflow.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define AREA_MAX 65536
#define XSTATE_BV_OFFSET 512
#define XSAVE_LEGACY_AND_HEADER 576
/* AMX: XTILECFG and XTILEDATA. */
#define AMX_COMPONENTS ((1ull << 17) | (1ull << 18))

typedef long (*ptrace_fn)(enum __ptrace_request, ...);

static unsigned char area[AREA_MAX] __attribute__((aligned(64)));
static ptrace_fn real_ptrace;
static size_t host_size;  /* 0: not known yet */
static size_t decided_for; /* UML's buffer length the decision was made for */
static int widen;          /* 1: widen sets shorter than host_size */
static int lock;

static void report(const char *line) {
    const char *path = getenv("FSLAB_XSTATE_REPORT");
    if (!path || !*path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t n = write(fd, line, strlen(line));
    (void)n;
    close(fd);
}

/* The user state components the host enables (XCR0), read with XGETBV. */
static uint64_t xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Decide once per UML buffer length whether widening is lossless (see the header). */
static void decide(size_t uml_len) {
    char line[160];
    uint64_t enabled = xcr0();
    uint64_t beyond = 0;
    decided_for = uml_len;
    widen = 1;
    for (unsigned i = 2; i < 64; i++) {
        unsigned eax, ebx, ecx, edx;
        if (!(enabled & (1ull << i)))
            continue;
        __cpuid_count(0xd, i, eax, ebx, ecx, edx);
        if ((size_t)ebx + eax <= uml_len)
            continue;
        beyond |= 1ull << i;
        if (!(AMX_COMPONENTS & (1ull << i))) {
            widen = 0;
            snprintf(line, sizeof line, "refused uml=%zu host=%zu component=%u offset=%u size=%u\n",
                     uml_len, host_size, i, ebx, eax);
            report(line);
            return;
        }
    }
    if (host_size > AREA_MAX) {
        widen = 0;
        snprintf(line, sizeof line, "refused uml=%zu host=%zu area-larger-than=%d\n", uml_len,
                 host_size, AREA_MAX);
        report(line);
        return;
    }
    int n = snprintf(line, sizeof line, "widened uml=%zu host=%zu initialised=", uml_len, host_size);
    const char *sep = "";
    for (unsigned i = 0; i < 64 && n < (int)sizeof line - 8; i++) {
        if (beyond & (1ull << i)) {
            n += snprintf(line + n, sizeof line - n, "%s%u", sep, i);
            sep = ",";
        }
    }
    snprintf(line + n, sizeof line - n, "\n");
    report(line);
}

static long set_xstate(pid_t pid, void *addr, struct iovec *iov) {
    if (!host_size) {
        struct iovec probe = {area, sizeof area};
        if (real_ptrace(PTRACE_GETREGSET, pid, addr, &probe) != 0)
            return real_ptrace(PTRACE_SETREGSET, pid, addr, iov);
        host_size = probe.iov_len;
    }
    size_t len = iov->iov_len;
    if (len >= host_size || len < XSAVE_LEGACY_AND_HEADER)
        return real_ptrace(PTRACE_SETREGSET, pid, addr, iov);
    if (decided_for != len)
        decide(len);
    if (!widen)
        return real_ptrace(PTRACE_SETREGSET, pid, addr, iov);
    memcpy(area, iov->iov_base, len);
    memset(area + len, 0, host_size - len);
    uint64_t bv;
    memcpy(&bv, area + XSTATE_BV_OFFSET, sizeof bv);
    bv &= ~AMX_COMPONENTS;
    memcpy(area + XSTATE_BV_OFFSET, &bv, sizeof bv);
    struct iovec full = {area, host_size};
    return real_ptrace(PTRACE_SETREGSET, pid, addr, &full);
}

long ptrace(enum __ptrace_request req, ...) {
    va_list ap;
    va_start(ap, req);
    pid_t pid = va_arg(ap, pid_t);
    void *addr = va_arg(ap, void *);
    void *data = va_arg(ap, void *);
    va_end(ap);
    if (!real_ptrace) {
        real_ptrace = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
        if (!real_ptrace) {
            errno = ENOSYS;
            return -1;
        }
    }
    if (req != PTRACE_SETREGSET || (uintptr_t)addr != NT_X86_XSTATE || !data)
        return real_ptrace(req, pid, addr, data);
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
        ;
    long r = set_xstate(pid, addr, data);
    int saved = errno;
    __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
    errno = saved;
    return r;
}
