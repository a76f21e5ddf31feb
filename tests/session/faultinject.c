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
 *   FAULT_OP      "write" (every write-like call), "fsync" (fsync and fdatasync), "rename"
 *                 (rename/renameat/renameat2, matched on the source or target path), or
 *                 "open": open/openat (and their 64-bit names) and mkdir/mkdirat on a path
 *                 containing FAULT_MATCH -- every one, or with FAULT_OPEN_WRITES set only
 *                 those that would create or write (O_WRONLY, O_RDWR, O_CREAT, mkdir): an
 *                 unreadable folder (EACCES) or a read-only one (EROFS)
 *   FAULT_AFTER   how many matching calls succeed before the fault (default 0)
 *   FAULT_ERRNO   the errno of a failed call (default EIO)
 *   FAULT_MODE    "fail"  -- the call and every later matching one fail with FAULT_ERRNO
 *                 "short" -- the first faulty write stores half its bytes and returns the
 *                            short count, later ones fail (a disk filling up mid-write)
 *                 "once"  -- only that one call fails (a transient error)
 *                 "kill"  -- a faulty write stores half its bytes, then the process dies
 *                            by SIGKILL (a crash inside a write); for fsync, before it
 *
 *   FAULT_TRACE   a file: every watched call whose path contains FAULT_MATCH (write, fsync,
 *                 rename) is appended to it as "op path" -- the order a store's steps
 *                 reached the kernel -- whatever FAULT_OP says
 *
 * At exit the shim prints "faultinject: N matching calls" to stderr, so a test can learn
 * how many boundaries a run crosses and then crash it at each one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long calls = 0;
static int tripped = 0;

static void fd_path(int fd, char *out, size_t size) {
    char link[64];
    ssize_t n;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, out, size - 1);
    out[n < 0 ? 0 : n] = '\0';
}

static void trace(const char *op, const char *path) {
    const char *file = getenv("FAULT_TRACE");
    const char *match = getenv("FAULT_MATCH");
    FILE *out;
    if (file == NULL || match == NULL || strstr(path, match) == NULL) return;
    if (strstr(path, file) != NULL) return;
    out = fopen(file, "a");
    if (out == NULL) return;
    fprintf(out, "%s %s\n", op, path);
    fclose(out);
}

static void trace_fd(const char *op, int fd) {
    char path[4096];
    if (getenv("FAULT_TRACE") == NULL) return;
    fd_path(fd, path, sizeof path);
    trace(op, path);
}

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
    trace_fd("write", fd);
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
    int verdict;
    trace_fd("fsync", fd);
    verdict = decide(fd, "fsync");
    if (verdict != 0) {
        if (killing()) raise(SIGKILL);
        fault_errno();
        return -1;
    }
    return real(fd);
}

int fsync(int fd) { return sync_call("fsync", fd); }
int fdatasync(int fd) { return sync_call("fdatasync", fd); }

/* ---- opens and mkdirs, matched by path (relative ones resolved against their dirfd) ---- */

static int path_faulty(int dirfd, const char *path, int writes) {
    const char *match = getenv("FAULT_MATCH");
    const char *op = getenv("FAULT_OP");
    char full[8192];
    if (getenv("FAULT_ARMED") == NULL || match == NULL || op == NULL) return 0;
    if (strcmp(op, "open") != 0 || path == NULL) return 0;
    if (getenv("FAULT_OPEN_WRITES") != NULL && !writes) return 0;
    if (path[0] == '/' || dirfd == AT_FDCWD) {
        if (path[0] == '/') snprintf(full, sizeof full, "%s", path);
        else {
            char cwd[4096];
            if (getcwd(cwd, sizeof cwd) == NULL) return 0;
            snprintf(full, sizeof full, "%s/%s", cwd, path);
        }
    } else {
        char link[64], base[4096];
        ssize_t n;
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        n = readlink(link, base, sizeof base - 1);
        if (n < 0) return 0;
        base[n] = '\0';
        snprintf(full, sizeof full, "%s/%s", base, path);
    }
    if (strstr(full, match) == NULL) return 0;
    calls++;
    return 1;
}

static int writes_flags(int flags) {
    return (flags & (O_WRONLY | O_RDWR | O_CREAT)) != 0;
}

typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*mkdirat_fn)(int, const char *, mode_t);

#define OPEN_SHIM(NAME, REAL_NAME, DIRFD_EXPR, CALL)                                \
    int NAME {                                                                      \
        static openat_fn real = NULL;                                               \
        mode_t mode = 0;                                                            \
        if (!real) real = (openat_fn)dlsym(RTLD_NEXT, REAL_NAME);                   \
        if (flags & (O_CREAT | __O_TMPFILE)) {                                      \
            va_list args;                                                           \
            va_start(args, flags);                                                  \
            mode = va_arg(args, mode_t);                                            \
            va_end(args);                                                           \
        }                                                                           \
        if (path_faulty(DIRFD_EXPR, path, writes_flags(flags))) {                   \
            fault_errno();                                                          \
            return -1;                                                              \
        }                                                                           \
        return CALL;                                                                \
    }

OPEN_SHIM(open(const char *path, int flags, ...), "open", AT_FDCWD,
          ((int (*)(const char *, int, ...))real)(path, flags, mode))
OPEN_SHIM(open64(const char *path, int flags, ...), "open64", AT_FDCWD,
          ((int (*)(const char *, int, ...))real)(path, flags, mode))
OPEN_SHIM(openat(int dirfd, const char *path, int flags, ...), "openat", dirfd,
          real(dirfd, path, flags, mode))
OPEN_SHIM(openat64(int dirfd, const char *path, int flags, ...), "openat64", dirfd,
          real(dirfd, path, flags, mode))

int mkdirat(int dirfd, const char *path, mode_t mode) {
    static mkdirat_fn real = NULL;
    if (!real) real = (mkdirat_fn)dlsym(RTLD_NEXT, "mkdirat");
    if (path_faulty(dirfd, path, 1)) { fault_errno(); return -1; }
    return real(dirfd, path, mode);
}

int mkdir(const char *path, mode_t mode) { return mkdirat(AT_FDCWD, path, mode); }

/* ---- renames, matched on either path (relative ones resolved against their dirfd) ---- */

static void full_path(int dirfd, const char *path, char *out, size_t size) {
    if (path[0] == '/') { snprintf(out, size, "%s", path); return; }
    if (dirfd == AT_FDCWD) {
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd) == NULL) cwd[0] = '\0';
        snprintf(out, size, "%s/%s", cwd, path);
        return;
    }
    {
        char base[4096];
        fd_path(dirfd, base, sizeof base);
        snprintf(out, size, "%s/%s", base, path);
    }
}

static int rename_faulty(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    const char *match = getenv("FAULT_MATCH");
    const char *op = getenv("FAULT_OP");
    const char *after = getenv("FAULT_AFTER");
    const char *mode = getenv("FAULT_MODE");
    char from[8192], to[8192];
    full_path(olddirfd, oldpath, from, sizeof from);
    full_path(newdirfd, newpath, to, sizeof to);
    trace("rename", to);
    if (getenv("FAULT_ARMED") == NULL || match == NULL || op == NULL) return 0;
    if (strcmp(op, "rename") != 0) return 0;
    if (strstr(from, match) == NULL && strstr(to, match) == NULL) return 0;
    calls++;
    if (calls <= (after ? atol(after) : 0)) return 0;
    if (mode != NULL && strcmp(mode, "kill") == 0) raise(SIGKILL);
    if (mode != NULL && strcmp(mode, "once") == 0 && tripped) return 0;
    tripped = 1;
    return 1;
}

typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned int);

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
              unsigned int flags) {
    static renameat2_fn real = NULL;
    if (!real) real = (renameat2_fn)dlsym(RTLD_NEXT, "renameat2");
    if (rename_faulty(olddirfd, oldpath, newdirfd, newpath)) { fault_errno(); return -1; }
    return real(olddirfd, oldpath, newdirfd, newpath, flags);
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    typedef int (*renameat_fn)(int, const char *, int, const char *);
    static renameat_fn real = NULL;
    if (!real) real = (renameat_fn)dlsym(RTLD_NEXT, "renameat");
    if (rename_faulty(olddirfd, oldpath, newdirfd, newpath)) { fault_errno(); return -1; }
    return real(olddirfd, oldpath, newdirfd, newpath);
}

int rename(const char *oldpath, const char *newpath) {
    return renameat(AT_FDCWD, oldpath, AT_FDCWD, newpath);
}

__attribute__((destructor)) static void report(void) {
    if (getenv("FAULT_MATCH") != NULL) fprintf(stderr, "faultinject: %ld matching calls\n", calls);
}
