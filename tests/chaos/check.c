/* check.c - the chaos test's checker: reads the clients' hold logs
   (format in client.c) and asserts
     1. no two holds of one key overlap: [start, end) of every pair of holds
        of a key are disjoint (end is the release decision, or the validity
        end for a lock that was lost or lapsed);
     2. every lock that lapsed or was lost was reported (on_result,
        REDLOCK_OP_LOST) no later than its validity end + slack (the timer
        that reports it fires at the validity end; slack covers scheduling
        on a loaded machine). A report late because the injector had paused
        that client is excused and counted apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos.h"

typedef struct hold_rec {
    int client, key;
    int64_t start, end, valid_end, lost;
    char how;
} hold_rec;

static int quiet; /* the self-test's made-up violations are not news */

static int by_key_start(const void *a, const void *b)
{
    const hold_rec *x = (const hold_rec *)a, *y = (const hold_rec *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return 0;
}

static int paused_between(const chaos_pause *p, int np, int client, int64_t from, int64_t to)
{
    int i;
    for (i = 0; i < np; i++)
        if (p[i].client == client && p[i].from_us < to && p[i].to_us > from) return 1;
    return 0;
}

int chaos_check(const char *const *paths, int n, const chaos_pause *pauses, int npauses, int64_t slack_us,
                chaos_report *rep)
{
    hold_rec *h = NULL;
    size_t count = 0, cap = 0, i;
    int c, shown = 0;
    memset(rep, 0, sizeof *rep);
    for (c = 0; c < n; c++) {
        FILE *f = fopen(paths[c], "r");
        char line[512];
        if (!f) {
            rep->bad_lines++;
            continue;
        }
        while (fgets(line, sizeof line, f)) {
            hold_rec r;
            long long s, e, v, l;
            int st;
            if (line[0] != 'H') continue;
            if (sscanf(line, "H %d %lld %lld %lld %c %lld %d", &r.key, &s, &e, &v, &r.how, &l, &st) != 7 ||
                r.key < 0 || e < s || !strchr("RLXI", r.how)) {
                rep->bad_lines++;
                continue;
            }
            r.client = c;
            r.start = s;
            r.end = e;
            r.valid_end = v;
            r.lost = l;
            if (count == cap) {
                hold_rec *nh;
                cap = cap ? cap * 2 : 1024;
                nh = (hold_rec *)realloc(h, cap * sizeof *h);
                if (!nh) {
                    free(h);
                    fclose(f);
                    return -1;
                }
                h = nh;
            }
            h[count++] = r;
        }
        fclose(f);
    }
    rep->holds = (long)count;
    if (count) qsort(h, count, sizeof *h, by_key_start);
    /* 1. overlaps: a sweep per key; the latest end so far and whose it is */
    for (i = 0; i < count; i++) {
        size_t j;
        for (j = i + 1; j < count && h[j].key == h[i].key && h[j].start < h[i].end; j++) {
            rep->overlaps++;
            if (!quiet && shown++ < 5)
                printf("#   overlap on key %d: client %d held [%lld, %lld) (%c), client %d from %lld (%lld us "
                       "inside)\n",
                       h[i].key, h[i].client, (long long)h[i].start, (long long)h[i].end, h[i].how, h[j].client,
                       (long long)h[j].start, (long long)(h[i].end - h[j].start));
        }
    }
    /* 2. loss reports */
    for (i = 0; i < count; i++) {
        const hold_rec *r = &h[i];
        if (r->how == 'R' || r->how == 'I') {
            rep->released++;
            continue;
        }
        if (r->how == 'L') rep->lost_reported++;
        else rep->lapsed++;
        if (r->lost < 0) {
            rep->unreported++;
            if (!quiet && shown++ < 10)
                printf("#   client %d: key %d lapsed at %lld, never reported lost\n", r->client, r->key,
                       (long long)r->valid_end);
        } else if (r->lost > r->valid_end + slack_us) {
            if (paused_between(pauses, npauses, r->client, r->valid_end - slack_us, r->lost)) {
                rep->late_excused++;
            } else {
                rep->late++;
                if (r->lost - r->valid_end > rep->worst_late_us) rep->worst_late_us = r->lost - r->valid_end;
                if (!quiet && shown++ < 10)
                    printf("#   client %d: key %d reported lost %lld us after its validity end\n", r->client, r->key,
                           (long long)(r->lost - r->valid_end));
            }
        }
    }
    free(h);
    return 0;
}

/* ---- the checker's own test ---- */

static int write_log(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

int chaos_check_self_test(const char *dir)
{
    char a[512], b[512];
    const char *paths[2];
    chaos_pause pause = { 1, 4000, 9000 };
    chaos_report rep;
    int bad = 0;
    quiet = 1;
    snprintf(a, sizeof a, "%s/self-a.log", dir);
    snprintf(b, sizeof b, "%s/self-b.log", dir);
    paths[0] = a;
    paths[1] = b;
    /* clean: back-to-back holds of one key, another key in parallel, a
       lapse reported on time */
    write_log(a, "H 0 1000 2000 5000 R -1 0\nH 1 1000 6000 6000 X 6050 -15\nS acquired 2\n");
    write_log(b, "H 0 2000 3000 9000 R -1 0\nH 0 3000 4000 4000 L 3500 -16\n");
    if (chaos_check(paths, 2, NULL, 0, 100, &rep) != 0 || rep.holds != 4 || rep.overlaps || rep.late ||
        rep.unreported || rep.bad_lines) {
        printf("#   self-test: clean history judged wrong\n");
        bad++;
    }
    /* an overlap of 1 us, a lapse reported late, one never reported, and
       a late report excused by a pause of that client */
    write_log(a, "H 0 1000 2001 5000 R -1 0\nH 1 1000 3000 3000 X 3101 -15\nH 1 3000 3500 3500 X -1 0\n");
    write_log(b, "H 0 2000 3000 9000 R -1 0\nH 2 1000 5000 5000 X 8000 -15\n");
    if (chaos_check(paths, 2, &pause, 1, 100, &rep) != 0 || rep.overlaps != 1 || rep.late != 1 ||
        rep.unreported != 1 || rep.late_excused != 1 || rep.worst_late_us != 101) {
        printf("#   self-test: faulty history judged wrong (overlaps %ld late %ld unreported %ld excused %ld)\n",
               rep.overlaps, rep.late, rep.unreported, rep.late_excused);
        bad++;
    }
    /* a malformed line is counted, not skipped silently */
    write_log(a, "H 0 1000 oops\nH 0 2000 1000 3000 R -1 0\n");
    write_log(b, "");
    if (chaos_check(paths, 2, NULL, 0, 100, &rep) != 0 || rep.bad_lines != 2) {
        printf("#   self-test: malformed lines not counted (%ld)\n", rep.bad_lines);
        bad++;
    }
    quiet = 0;
    remove(a);
    remove(b);
    return bad ? -1 : 0;
}
