/* Forked ranks with a shared-memory bootstrap all-gather (mp_harness.h). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#include "mp_harness.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int mp_wait_at_least(_Atomic unsigned *word, unsigned want) {
    const time_t give_up = time(NULL) + MP_GATHER_WAIT_S;
    while (atomic_load(word) < want) {
        if (time(NULL) > give_up) return 1;
        usleep(10);
    }
    return 0;
}

int mp_allgather(const void *send, void *recv, size_t bytes, void *user) {
    mp_rank *g = user;
    mp_shared *sh = g->sh;
    if (bytes > MP_MAX_BYTES) return 1;
    if (g->fail_next) {
        g->fail_next = 0;
        return 1;
    }
    const unsigned r = g->round++, half = r % 2;
    for (int q = 0; q < sh->tp; q++) /* half r % 2 was last read in round r - 2: wait until all are done */
        if (r >= 2 && mp_wait_at_least(&sh->left[q], r - 1)) return 1;
    memcpy(sh->slots[half][g->rank], send, bytes);
    atomic_store(&sh->arrived[g->rank], r + 1);
    for (int q = 0; q < sh->tp; q++)
        if (mp_wait_at_least(&sh->arrived[q], r + 1)) return 1;
    for (int q = 0; q < sh->tp; q++) memcpy((unsigned char *)recv + (size_t)q * bytes, sh->slots[half][q], bytes);
    atomic_store(&sh->left[g->rank], r + 1);
    return 0;
}

/* Kills and reaps the ranks still running (reaped[r] == 0) of the first n forked. */
static void stop_ranks(const pid_t *pid, int *reaped, int n) {
    for (int r = 0; r < n; r++)
        if (!reaped[r]) kill(pid[r], SIGKILL); /* never a reaped one: its process id may be another's by now */
    for (int r = 0; r < n; r++)
        if (!reaped[r] && waitpid(pid[r], NULL, 0) == pid[r]) reaped[r] = 1;
}

int mp_run(int tp, unsigned hang_s, int (*rank_main)(mp_rank *rank, void *arg), void *arg) {
    if (tp < 1 || tp > MP_MAX_RANKS) return 1;
    mp_shared *sh = mmap(NULL, sizeof(mp_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return 1;
    memset(sh, 0, sizeof *sh);
    sh->tp = tp;
    fflush(stdout);
    signal(SIGCHLD, SIG_DFL); /* an ignored SIGCHLD (inherited) would make waitpid find no child: a crash unseen */
    pid_t pid[MP_MAX_RANKS];
    int reaped[MP_MAX_RANKS] = {0};
    for (int r = 0; r < tp; r++) {
        pid[r] = fork();
        if (pid[r] < 0) { /* the ranks started would wait for this one in the all-gather */
            perror("mp_harness: fork");
            stop_ranks(pid, reaped, r);
            munmap(sh, sizeof *sh);
            return 1;
        }
        if (pid[r] == 0) {
            setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines into the shared pipe: the ranks' lines never interleave */
            alarm(hang_s); /* a hang ends as SIGALRM, reported below */
            mp_rank me = {sh, r, 0, 0};
            const int rc = rank_main(&me, arg);
            fflush(stdout);
            _exit(rc);
        }
    }
    int worst = 0, skip = 0, killed = 0;
    for (int done = 0; done < tp; done++) { /* in the order they end */
        int status = 0;
        const pid_t p = waitpid(-1, &status, 0);
        if (p < 0) break; /* no child left (stop_ranks reaped them) */
        int r = 0;
        while (r < tp && pid[r] != p) r++;
        if (r == tp) continue;
        reaped[r] = 1;
        const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        if (!WIFEXITED(status) && WTERMSIG(status) == SIGALRM)
            fprintf(stderr, "mp_harness: rank %d still ran after %u s: a hang\n", r, hang_s);
        else if (!WIFEXITED(status))
            fprintf(stderr, "mp_harness: rank %d ended by signal %d\n", r, WTERMSIG(status));
        if (rc == 3) skip = 1; /* too few devices: the peers would wait for this rank in vain, stopped below */
        if (rc != 3 && rc > worst) worst = rc;
        if (rc != 0 && !killed) { /* the peers would sit out their waits */
            killed = 1;
            stop_ranks(pid, reaped, tp);
        }
    }
    for (int r = 0; r < tp; r++)
        if (!reaped[r]) { /* no status collected: nothing says it passed */
            fprintf(stderr, "mp_harness: rank %d's end was never seen\n", r);
            worst = 1;
        }
    munmap(sh, sizeof *sh);
    return worst ? 1 : skip ? 3 : 0; /* a failure is never hidden behind another rank's skip */
}
