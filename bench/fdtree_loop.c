/*
 * fdtree_loop.c: the bare system-call limit for fslab's fdtree engine.
 *
 * Part of fslab's bench/ (built at bench time by bench/fdtree.sh). It walks the same tree in the
 * same order with the same system calls as `fslab fdtree` (mkdirat, openat O_PATH for descending,
 * openat+write+close per file, unlinkat), one thread, no bookkeeping, and prints the elapsed
 * seconds and rate of each of the four phases as:  <phase> <items> <seconds> <rate>
 *
 * With PROCS > 1 it runs PROCS processes, each on a tree of its own, the way `fslab fdtree
 * --threads PROCS` runs its threads: every phase starts in all of them together (a barrier
 * in shared memory), and a phase's time is from the first process's start to the last one's
 * finish, its items those of all processes (bench/scaling.sh).
 *
 * usage: fdtree_loop DIR DIRS FILES SIZE_BLOCKS LEVELS [PROCS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long D, F, S, L;
static char *zeros;
static size_t zlen;
static long items;

static void die(const char *op, const char *name) {
    fprintf(stderr, "fdtree_loop: %s %s: %s\n", op, name, strerror(errno));
    exit(1);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int open_dir(int parent, const char *name) {
    int fd = openat(parent, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) die("open", name);
    return fd;
}

static void create_dirs(int dir, long lvl) {
    char n[48];
    if (lvl == 0) return;
    for (long d = D; d >= 1; d--) {
        snprintf(n, sizeof n, "L%ldD%ld", lvl, d);
        if (mkdirat(dir, n, 0755) < 0) die("mkdir", n);
        items++;
    }
    for (long d = D; d >= 1; d--) {
        snprintf(n, sizeof n, "L%ldD%ld", lvl, d);
        int c = open_dir(dir, n);
        create_dirs(c, lvl - 1);
        close(c);
    }
}

static void create_files(int dir, long lvl) {
    char n[48];
    for (long f = F; f >= 1; f--) {
        snprintf(n, sizeof n, "L%ldF%ld", lvl, f);
        int fd = openat(dir, n, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) die("create", n);
        size_t left = (size_t)S * 4096;
        while (left > 0) {
            size_t k = left < zlen ? left : zlen;
            ssize_t w = write(fd, zeros, k);
            if (w <= 0) die("write", n);
            left -= (size_t)w;
        }
        close(fd);
        items++;
    }
    if (lvl == 0) return;
    for (long d = D; d >= 1; d--) {
        snprintf(n, sizeof n, "L%ldD%ld", lvl, d);
        int c = open_dir(dir, n);
        create_files(c, lvl - 1);
        close(c);
    }
}

static void remove_files(int dir, long lvl) {
    char n[48];
    for (long f = F; f >= 1; f--) {
        snprintf(n, sizeof n, "L%ldF%ld", lvl, f);
        if (unlinkat(dir, n, 0) < 0) die("unlink", n);
        items++;
    }
    if (lvl == 0) return;
    for (long d = D; d >= 1; d--) {
        snprintf(n, sizeof n, "L%ldD%ld", lvl, d);
        int c = open_dir(dir, n);
        remove_files(c, lvl - 1);
        close(c);
    }
}

static void remove_dirs(int dir, long lvl) {
    char n[48];
    if (lvl == 0) return;
    if (lvl > 1) {
        for (long d = D; d >= 1; d--) {
            snprintf(n, sizeof n, "L%ldD%ld", lvl, d);
            int c = open_dir(dir, n);
            remove_dirs(c, lvl - 1);
            close(c);
        }
    }
    for (long d = D; d >= 1; d--) {
        snprintf(n, sizeof n, "L%ldD%ld", lvl, d);
        if (unlinkat(dir, n, AT_REMOVEDIR) < 0) die("rmdir", n);
        items++;
    }
}

/* What the processes share: the phase barrier and each process's start, end and items. */
#define MAXP 1024
struct shared {
    pthread_barrier_t bar;
    double start[4][MAXP], end[4][MAXP];
    long items[4][MAXP];
};
static struct shared *sh;
static int me;
static const char *names[4] = {"dir_create", "file_create", "file_remove", "dir_remove"};

static void phase_begin(int ph) {
    if (sh) pthread_barrier_wait(&sh->bar);
    if (sh) sh->start[ph][me] = now();
}

static void phase_end(int ph, double t0) {
    double t = now();
    if (sh) {
        sh->end[ph][me] = t;
        sh->items[ph][me] = items;
    } else {
        double s = t - t0;
        printf("%s %ld %.6f %.1f\n", names[ph], items, s, items / s);
    }
    items = 0;
}

static void walk(int base) {
    char root[128];
    snprintf(root, sizeof root, "LEVEL0.cloop.%d", (int)getpid());

    phase_begin(0);
    double t = now();
    if (mkdirat(base, root, 0755) < 0) die("mkdir", root);
    items++;
    int r = open_dir(base, root);
    create_dirs(r, L);
    close(r);
    phase_end(0, t);

    phase_begin(1);
    t = now();
    r = open_dir(base, root);
    create_files(r, L);
    close(r);
    phase_end(1, t);

    phase_begin(2);
    t = now();
    r = open_dir(base, root);
    remove_files(r, L);
    close(r);
    phase_end(2, t);

    phase_begin(3);
    t = now();
    r = open_dir(base, root);
    remove_dirs(r, L);
    close(r);
    if (unlinkat(base, root, AT_REMOVEDIR) < 0) die("rmdir", root);
    items++;
    phase_end(3, t);
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: fdtree_loop DIR DIRS FILES SIZE_BLOCKS LEVELS [PROCS]\n");
        return 2;
    }
    D = atol(argv[2]); F = atol(argv[3]); S = atol(argv[4]); L = atol(argv[5]);
    long procs = argc == 7 ? atol(argv[6]) : 1;
    if (procs < 1 || procs > MAXP) {
        fprintf(stderr, "fdtree_loop: PROCS must be 1 to %d\n", MAXP);
        return 2;
    }
    zlen = S * 4096 < (1 << 20) ? (size_t)S * 4096 : (1 << 20);
    zeros = calloc(1, zlen ? zlen : 1);
    int base = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (base < 0) die("open", argv[1]);
    if (procs == 1) {
        walk(base);
        return 0;
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) die("mmap", "shared state");
    pthread_barrierattr_t a;
    pthread_barrierattr_init(&a);
    pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->bar, &a, (unsigned)procs);
    for (me = 0; me < procs; me++) {
        pid_t p = fork();
        if (p < 0) die("fork", "worker");
        if (p == 0) {
            walk(base);
            _exit(0);
        }
    }
    int failed = 0, st;
    while (wait(&st) > 0)
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) failed = 1;
    if (failed) {
        fprintf(stderr, "fdtree_loop: a worker process failed\n");
        return 1;
    }
    for (int ph = 0; ph < 4; ph++) {
        double first = sh->start[ph][0], last = sh->end[ph][0];
        long n = 0;
        for (long i = 0; i < procs; i++) {
            if (sh->start[ph][i] < first) first = sh->start[ph][i];
            if (sh->end[ph][i] > last) last = sh->end[ph][i];
            n += sh->items[ph][i];
        }
        double s = last - first;
        printf("%s %ld %.6f %.1f\n", names[ph], n, s, n / s);
    }
    return 0;
}
