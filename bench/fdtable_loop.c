/*
 * fdtable_loop.c: what sharing one file-descriptor table costs workers that open and close
 * files, the measurement behind fslab's workers (doc/architecture.md, "Workers own their
 * kernel state"). Part of fslab's bench/, built at bench time by bench/scaling.sh.
 *
 * N workers, each in a directory of its own under DIR, loop for SECONDS over: create a file
 * and write 4 KiB to it, close; open it, read it, close; stat it; unlink it. The workers are
 *   shared     threads of one process (one table, as threads are by default),
 *   unshared   threads that first call unshare(CLONE_FILES) (one table each, what fslab does),
 *   procs      processes (one table each, what dbench and mdtest do).
 * Prints:  <mode> <workers> <files> <seconds> <files per second>
 *
 * usage: fdtable_loop DIR shared|unshared|procs N SECONDS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXW 1024
static const char *dir;
static double seconds;
static int unshare_first;
static volatile long *counts; /* one slot per worker, 16 longs (128 bytes) apart */
static pthread_barrier_t *bar;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "fdtable_loop: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void *worker(void *arg) {
    long id = (long)arg;
    char buf[4096], d[4096], f[4200];
    memset(buf, 'x', sizeof buf);
    if (unshare_first && unshare(CLONE_FILES) != 0) die("unshare(CLONE_FILES)");
    snprintf(d, sizeof d, "%s/w%ld", dir, id);
    if (mkdir(d, 0755) != 0 && errno != EEXIST) die("mkdir");
    pthread_barrier_wait(bar);
    double end = now() + seconds;
    long n = 0;
    struct stat st;
    while ((n & 63) != 0 || now() < end) {
        snprintf(f, sizeof f, "%s/f%ld", d, n & 1023);
        int fd = open(f, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) die("create");
        close(fd);
        fd = open(f, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) die("read");
        close(fd);
        if (stat(f, &st) != 0) die("stat");
        if (unlink(f) != 0) die("unlink");
        n++;
    }
    rmdir(d);
    counts[id * 16] = n;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: fdtable_loop DIR shared|unshared|procs N SECONDS\n");
        return 2;
    }
    dir = argv[1];
    const char *mode = argv[2];
    long n = atol(argv[3]);
    seconds = atof(argv[4]);
    int procs = strcmp(mode, "procs") == 0;
    unshare_first = strcmp(mode, "unshared") == 0;
    if (!procs && !unshare_first && strcmp(mode, "shared") != 0) {
        fprintf(stderr, "fdtable_loop: mode must be shared, unshared or procs\n");
        return 2;
    }
    if (n < 1 || n > MAXW || seconds <= 0) {
        fprintf(stderr, "fdtable_loop: N must be 1 to %d and SECONDS positive\n", MAXW);
        return 2;
    }
    counts = mmap(NULL, MAXW * 16 * sizeof(long), PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    bar = mmap(NULL, sizeof *bar, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (counts == MAP_FAILED || bar == MAP_FAILED) die("mmap");
    pthread_barrierattr_t a;
    pthread_barrierattr_init(&a);
    pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(bar, &a, (unsigned)n);
    double t0 = now();
    if (procs) {
        for (long i = 0; i < n; i++) {
            pid_t p = fork();
            if (p < 0) die("fork");
            if (p == 0) {
                worker((void *)i);
                _exit(0);
            }
        }
        int st, failed = 0;
        while (wait(&st) > 0)
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) failed = 1;
        if (failed) return 1;
    } else {
        pthread_t t[MAXW];
        for (long i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) die("pthread_create");
        for (long i = 0; i < n; i++) pthread_join(t[i], NULL);
    }
    double s = now() - t0;
    long total = 0;
    for (long i = 0; i < n; i++) total += counts[i * 16];
    printf("%s %ld %ld %.3f %.0f\n", mode, n, total, s, total / s);
    return 0;
}
