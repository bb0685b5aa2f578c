/* replay.c - runs a fuzz target's corpus without libFuzzer: every file
   named on the command line (or found in a directory named there) goes
   through LLVMFuzzerTestOneInput once. Builds with gcc as well as clang;
   a target reports a breach by abort(), so a bad input stops the run with
   its name printed first.

       build/replay_core tests/fuzz/corpus/core        (make check-fuzz) */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static long inputs, bytes;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long n;
    if (!f) return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    buf = (unsigned char *)malloc(n ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    fprintf(stderr, "%s\n", path); /* the culprit, should the target abort */
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    inputs++;
    bytes += n;
    return 0;
}

static int run_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int rc = 0;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    if (!(d = opendir(path))) return -1;
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (run_path(sub) != 0) rc = -1;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int i, rc = 0;
    const char *name = argc > 1 ? argv[1] : "?";
    for (i = 2; i < argc; i++)
        if (run_path(argv[i]) != 0) {
            printf("#   cannot read %s\n", argv[i]);
            rc = 1;
        }
    if (inputs == 0) rc = 1;
    printf("%s fuzz-replay %s: %ld inputs (%ld bytes) without a crash or a broken contract\n", rc ? "not ok" : "ok",
           name, inputs, bytes);
    return rc;
}
