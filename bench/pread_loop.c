/* bench/pread_loop.c: the bare limit for cached sequential reads, for bench/iozone.sh.
 *
 * Reads FILE once untimed (so it is cached and the buffer is faulted in), then times one
 * pass of pread(fd, buf, RECLEN, off) over the whole file into one 4 KiB-aligned buffer,
 * with clock_gettime(CLOCK_MONOTONIC) around the loop only. Prints the rate as IOzone
 * does: integer KiB/s, (bytes / seconds) truncated, shifted right by 10.
 *
 * usage: pread_loop FILE RECLEN_BYTES
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int pass(int fd, char *buf, size_t rec, off_t size) {
    for (off_t off = 0; off + (off_t)rec <= size; off += rec) {
        if (pread(fd, buf, rec, off) != (ssize_t)rec) {
            perror("pread");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s FILE RECLEN_BYTES\n", argv[0]);
        return 2;
    }
    size_t rec = strtoull(argv[2], NULL, 10);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || rec == 0) {
        perror("fstat");
        return 1;
    }
    off_t size = st.st_size - st.st_size % rec;
    char *buf;
    if (posix_memalign((void **)&buf, 4096, rec) != 0) {
        perror("posix_memalign");
        return 1;
    }
    memset(buf, 0xa5, rec);
    if (pass(fd, buf, rec, size) != 0) /* untimed: cache the file, fault the buffer */
        return 1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (pass(fd, buf, rec, size) != 0)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%llu\n", (unsigned long long)((uint64_t)((double)size / secs) >> 10));
    return 0;
}
