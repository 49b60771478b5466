/*
 * fdtree_loop.c: the bare system-call limit for fslab's fdtree engine.
 *
 * Part of fslab's bench/ (built at bench time by bench/fdtree.sh). It walks the same tree in the
 * same order with the same system calls as `fslab fdtree` (mkdirat, openat O_PATH for descending,
 * openat+write+close per file, unlinkat), one thread, no bookkeeping, and prints the elapsed
 * seconds and rate of each of the four phases as:  <phase> <items> <seconds> <rate>
 *
 * usage: fdtree_loop DIR DIRS FILES SIZE_BLOCKS LEVELS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static void report(const char *phase, double t0) {
    double s = now() - t0;
    printf("%s %ld %.6f %.1f\n", phase, items, s, items / s);
    items = 0;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: fdtree_loop DIR DIRS FILES SIZE_BLOCKS LEVELS\n");
        return 2;
    }
    D = atol(argv[2]); F = atol(argv[3]); S = atol(argv[4]); L = atol(argv[5]);
    zlen = S * 4096 < (1 << 20) ? (size_t)S * 4096 : (1 << 20);
    zeros = calloc(1, zlen ? zlen : 1);
    int base = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (base < 0) die("open", argv[1]);
    char root[128];
    snprintf(root, sizeof root, "LEVEL0.cloop.%d", (int)getpid());

    double t = now();
    if (mkdirat(base, root, 0755) < 0) die("mkdir", root);
    items++;
    int r = open_dir(base, root);
    create_dirs(r, L);
    close(r);
    report("dir_create", t);

    t = now();
    r = open_dir(base, root);
    create_files(r, L);
    close(r);
    report("file_create", t);

    t = now();
    r = open_dir(base, root);
    remove_files(r, L);
    close(r);
    report("file_remove", t);

    t = now();
    r = open_dir(base, root);
    remove_dirs(r, L);
    close(r);
    if (unlinkat(base, root, AT_REMOVEDIR) < 0) die("rmdir", root);
    items++;
    report("dir_remove", t);
    return 0;
}
