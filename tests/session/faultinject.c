/* A fault-injecting LD_PRELOAD shim for the session-store crash tests.
 *
 * It interposes the libc calls a store writes through -- write, pwrite, pwrite64, writev,
 * fsync, fdatasync -- so Python's os.write/os.fsync and SQLite's own I/O both meet the fault,
 * the way a full disk or a failing device would show it to the process.  Only calls on a
 * descriptor whose path contains FAULT_MATCH count.  Environment:
 *
 *   FAULT_ARMED   nothing counts or fails until it is set (a child sets it with os.environ,
 *                 which reaches getenv, once its setup is done)
 *   FAULT_MATCH   substring of the descriptor's path (readlink /proc/self/fd/N); required
 *   FAULT_OP      "write" (every write-like call) or "fsync" (fsync and fdatasync)
 *   FAULT_AFTER   how many matching calls succeed before the fault (default 0)
 *   FAULT_ERRNO   the errno of a failed call (default EIO)
 *   FAULT_MODE    "fail"  -- the call and every later matching one fail with FAULT_ERRNO
 *                 "short" -- the first faulty write stores half its bytes and returns the
 *                            short count, later ones fail (a disk filling up mid-write)
 *                 "once"  -- only that one call fails (a transient error)
 *                 "kill"  -- a faulty write stores half its bytes, then the process dies
 *                            by SIGKILL (a crash inside a write); for fsync, before it
 *
 * At exit the shim prints "faultinject: N matching calls" to stderr, so a test can learn
 * how many boundaries a run crosses and then crash it at each one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long calls = 0;
static int tripped = 0;

static int matches(int fd, const char *op) {
    const char *want_op = getenv("FAULT_OP");
    const char *match = getenv("FAULT_MATCH");
    char link[64], target[4096];
    ssize_t n;
    if (getenv("FAULT_ARMED") == NULL) return 0;
    if (match == NULL || want_op == NULL || strcmp(want_op, op) != 0) return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = '\0';
    return strstr(target, match) != NULL;
}

/* 0: pass the call through; 1: fail it; 2: store half, then short-count or die */
static int decide(int fd, const char *op) {
    const char *after = getenv("FAULT_AFTER");
    const char *mode = getenv("FAULT_MODE");
    if (!matches(fd, op)) return 0;
    calls++;
    if (calls <= (after ? atol(after) : 0)) return 0;
    if (mode != NULL && strcmp(mode, "once") == 0) {
        if (tripped) return 0;
        tripped = 1;
        return 1;
    }
    if (mode != NULL && (strcmp(mode, "short") == 0 || strcmp(mode, "kill") == 0) && !tripped) {
        tripped = 1;
        return 2;
    }
    tripped = 1;
    return 1;
}

static void fault_errno(void) {
    const char *code = getenv("FAULT_ERRNO");
    errno = code ? atoi(code) : EIO;
}

static int killing(void) {
    const char *mode = getenv("FAULT_MODE");
    return mode != NULL && strcmp(mode, "kill") == 0;
}

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef int (*sync_fn)(int);

static ssize_t half_then(ssize_t stored) {
    if (killing()) raise(SIGKILL);
    return stored;
}

ssize_t write(int fd, const void *buf, size_t count) {
    static write_fn real = NULL;
    int verdict;
    if (!real) real = (write_fn)dlsym(RTLD_NEXT, "write");
    verdict = decide(fd, "write");
    if (verdict == 1) { fault_errno(); return -1; }
    if (verdict == 2) return half_then(real(fd, buf, count / 2));
    return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    static pwrite_fn real = NULL;
    int verdict;
    if (!real) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    verdict = decide(fd, "write");
    if (verdict == 1) { fault_errno(); return -1; }
    if (verdict == 2) return half_then(real(fd, buf, count / 2, offset));
    return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    static pwrite_fn real = NULL;
    int verdict;
    if (!real) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
    verdict = decide(fd, "write");
    if (verdict == 1) { fault_errno(); return -1; }
    if (verdict == 2) return half_then(real(fd, buf, count / 2, offset));
    return real(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    static writev_fn real = NULL;
    int verdict;
    if (!real) real = (writev_fn)dlsym(RTLD_NEXT, "writev");
    verdict = decide(fd, "write");
    if (verdict == 1) { fault_errno(); return -1; }
    if (verdict == 2 && iovcnt > 0) {
        static write_fn plain = NULL;
        if (!plain) plain = (write_fn)dlsym(RTLD_NEXT, "write");
        return half_then(plain(fd, iov[0].iov_base, iov[0].iov_len / 2));
    }
    return real(fd, iov, iovcnt);
}

static int sync_call(const char *name, int fd) {
    sync_fn real = (sync_fn)dlsym(RTLD_NEXT, name);
    int verdict = decide(fd, "fsync");
    if (verdict != 0) {
        if (killing()) raise(SIGKILL);
        fault_errno();
        return -1;
    }
    return real(fd);
}

int fsync(int fd) { return sync_call("fsync", fd); }
int fdatasync(int fd) { return sync_call("fdatasync", fd); }

__attribute__((destructor)) static void report(void) {
    if (getenv("FAULT_MATCH") != NULL) fprintf(stderr, "faultinject: %ld matching calls\n", calls);
}
