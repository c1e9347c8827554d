/* robust_calls.c -- calls POMP2_* directly (no opari2): argv[1] = malformed (bad CTC strings) | null (NULL handles and out-pointers) | early (exit/end calls before the start) | threads (the first calls come from all threads of an uninstrumented parallel region). */
#include <opari2/pomp2_lib.h>
#include <opari2/pomp2_user_lib.h>
#include <stdio.h>
#include <string.h>

#define REPEAT 100

/* OpenMP constructs with malformed (or merely unusual) CTC strings; each gets its own handle
 * and a file name that identifies it in the warnings. */
static const char *const for_ctcs[] = {
    /* no terminating "**" at all */
    "60*regionType=for*sscl=m_no_stars.c:10:10*escl=m_no_stars.c:12:12",
    /* unknown keys */
    "99*regionType=for*sscl=m_unknown_key.c:20:20*escl=m_unknown_key.c:22:22*colour=blue*x=1**",
    /* no regionType */
    "55*sscl=m_no_type.c:30:30*escl=m_no_type.c:32:32**",
    /* an unknown regionType */
    "60*regionType=bogus*sscl=m_bad_type.c:35:35*escl=m_bad_type.c:36:36**",
    /* line numbers far beyond 32 bits */
    "99*regionType=for*sscl=m_huge_line.c:99999999999999999999:99999999999999999999"
    "*escl=m_huge_line.c:99999999999999999999:99999999999999999999**",
    /* bytes that are not UTF-8 in the file name and an unknown key */
    "80*regionType=for*sscl=m_bytes_\xff\xfe.c:50:50*escl=m_bytes_\xff\xfe.c:52:52*k\xc3=v\x80**",
    /* the empty string */
    "",
    /* control characters (a newline, an escape) in an unknown key */
    "80*regionType=for*sscl=m_newline.c:60:60*escl=m_newline.c:62:62*bad\nkey\x1b[1m=1**",
    /* only the length, nothing else */
    "12",
    /* garbage */
    "***===***",
    /* not malformed: a wrong length (nobody checks it) and a single final star */
    "3*regionType=for*sscl=ok_wrong_length.c:70:70*escl=ok_wrong_length.c:72:72**",
    "1234*regionType=for*sscl=ok_one_star.c:80:80*escl=ok_one_star.c:82:82*",
};
#define N_FOR (sizeof for_ctcs / sizeof for_ctcs[0])

/* User regions with malformed strings. */
static const char *const user_ctcs[] = {
    /* a user region without a name */
    "70*regionType=userRegion*sscl=m_user_unnamed.c:90:90*escl=m_user_unnamed.c:92:92**",
    /* an OpenMP region type through the user interface */
    "70*regionType=atomic*sscl=m_user_omp.c:95:95*escl=m_user_omp.c:96:96**",
    /* name, but the escl is missing and the string is cut short */
    "90*regionType=userRegion*sscl=m_user_cut.c:97:97*userRegionName=cut",
};
#define N_USER (sizeof user_ctcs / sizeof user_ctcs[0])

static void malformed(void)
{
    POMP2_Region_handle fors[N_FOR], assigned = NULL, null_ctc = NULL;
    POMP2_USER_Region_handle users[N_USER];
    const char *atomic_ctc =
        "80*regionType=atomic*sscl=m_assigned.c:100:100*escl=m_assigned.c:101:101*what=ever**";
    size_t k;
    int r;
    memset(fors, 0, sizeof fors);
    memset(users, 0, sizeof users);
    /* Assigned up front (as the init file would); the events name the same region. */
    POMP2_Assign_handle(&assigned, atomic_ctc);
    for (r = 0; r < REPEAT; r++) {
        for (k = 0; k < N_FOR; k++) {
            POMP2_For_enter(&fors[k], for_ctcs[k]);
            POMP2_For_exit(&fors[k]);
        }
        for (k = 0; k < N_USER; k++) {
            POMP2_Begin(&users[k], user_ctcs[k]);
            POMP2_End(&users[k]);
        }
        POMP2_Assign_handle(&assigned, atomic_ctc);
        POMP2_Atomic_enter(&assigned, atomic_ctc);
        POMP2_Atomic_exit(&assigned);
        /* No string at all: nothing can be defined, nothing is recorded. */
        POMP2_Assign_handle(&null_ctc, NULL);
        POMP2_USER_Assign_handle(&null_ctc, NULL);
        POMP2_For_enter(&null_ctc, NULL);
        POMP2_For_exit(&null_ctc);
        POMP2_Begin(&null_ctc, NULL);
        POMP2_End(&null_ctc);
    }
    printf("malformed done\n");
}

static const char *const par_ctc =
    "80*regionType=parallel*sscl=robust_calls.c:200:200*escl=robust_calls.c:210:210**";
static const char *const for_ctc =
    "80*regionType=for*sscl=robust_calls.c:201:201*escl=robust_calls.c:202:202**";
static const char *const task_ctc =
    "80*regionType=task*sscl=robust_calls.c:203:203*escl=robust_calls.c:204:204**";
static const char *const user_ctc =
    "90*regionType=userRegion*sscl=robust_calls.c:220:220*escl=robust_calls.c:230:230*"
    "userRegionName=calls**";

/* Every entry point with a NULL handle pointer (and NULL out-pointers where it has some). */
static void null_everything(void)
{
    POMP2_Task_handle old = 0, new_task = 0;
    POMP2_Parallel_fork(NULL, 1, 2, &old, par_ctc);
    POMP2_Parallel_begin(NULL);
    POMP2_For_enter(NULL, for_ctc);
    POMP2_For_exit(NULL);
    POMP2_Sections_enter(NULL, for_ctc);
    POMP2_Section_begin(NULL, for_ctc);
    POMP2_Section_end(NULL);
    POMP2_Sections_exit(NULL);
    POMP2_Single_enter(NULL, for_ctc);
    POMP2_Single_begin(NULL);
    POMP2_Single_end(NULL);
    POMP2_Single_exit(NULL);
    POMP2_Master_begin(NULL, for_ctc);
    POMP2_Master_end(NULL);
    POMP2_Critical_enter(NULL, for_ctc);
    POMP2_Critical_begin(NULL);
    POMP2_Critical_end(NULL);
    POMP2_Critical_exit(NULL);
    POMP2_Ordered_enter(NULL, for_ctc);
    POMP2_Ordered_begin(NULL);
    POMP2_Ordered_end(NULL);
    POMP2_Ordered_exit(NULL);
    POMP2_Atomic_enter(NULL, for_ctc);
    POMP2_Atomic_exit(NULL);
    POMP2_Flush_enter(NULL, for_ctc);
    POMP2_Flush_exit(NULL);
    POMP2_Workshare_enter(NULL, for_ctc);
    POMP2_Workshare_exit(NULL);
    POMP2_Barrier_enter(NULL, &old, for_ctc);
    POMP2_Barrier_exit(NULL, old);
    POMP2_Barrier_enter(NULL, NULL, NULL);
    POMP2_Implicit_barrier_enter(NULL, &old);
    POMP2_Implicit_barrier_exit(NULL, old);
    POMP2_Implicit_barrier_enter(NULL, NULL);
    POMP2_Taskwait_begin(NULL, &old, for_ctc);
    POMP2_Taskwait_end(NULL, old);
    POMP2_Taskwait_begin(NULL, NULL, NULL);
    POMP2_Task_create_begin(NULL, &new_task, &old, 1, task_ctc);
    POMP2_Task_begin(NULL, new_task);
    POMP2_Task_end(NULL);
    POMP2_Task_create_end(NULL, old);
    POMP2_Task_create_begin(NULL, NULL, NULL, 1, NULL);
    POMP2_Untied_task_create_begin(NULL, &new_task, &old, 1, task_ctc);
    POMP2_Untied_task_begin(NULL, new_task);
    POMP2_Untied_task_end(NULL);
    POMP2_Untied_task_create_end(NULL, old);
    POMP2_Untied_task_create_begin(NULL, NULL, NULL, 0, NULL);
    POMP2_Assign_handle(NULL, for_ctc);
    POMP2_Assign_handle(NULL, NULL);
    POMP2_Begin(NULL, user_ctc);
    POMP2_End(NULL);
    POMP2_USER_Assign_handle(NULL, user_ctc);
    POMP2_USER_Assign_handle(NULL, NULL);
    POMP2_Parallel_end(NULL);
    POMP2_Parallel_join(NULL, old);
    /* A second region, with no out-pointer and no string. */
    POMP2_Parallel_fork(NULL, 0, 3, NULL, NULL);
    POMP2_Parallel_begin(NULL);
    POMP2_Parallel_end(NULL);
    POMP2_Parallel_join(NULL, 0);
    (void)POMP2_Get_new_task_handle();
    printf("null done\n");
}

/* Exit and end calls before anything started the measurement: with unassigned handles, then
 * with handles assigned (which does not start it); then one real construct. */
static void early(void)
{
    POMP2_Region_handle par = NULL, loop = NULL, task = NULL;
    POMP2_USER_Region_handle user = NULL;
    POMP2_Task_handle old = 0;
    int round;
    for (round = 0; round < 2; round++) {
        POMP2_For_exit(&loop);
        POMP2_End(&user);
        POMP2_Implicit_barrier_exit(&loop, 0);
        POMP2_Barrier_exit(&loop, 0);
        POMP2_Taskwait_end(&loop, 0);
        POMP2_Critical_end(&loop);
        POMP2_Critical_exit(&loop);
        POMP2_Single_end(&loop);
        POMP2_Single_exit(&loop);
        POMP2_Master_end(&loop);
        POMP2_Ordered_end(&loop);
        POMP2_Atomic_exit(&loop);
        POMP2_Task_end(&task);
        POMP2_Task_create_end(&task, 0);
        POMP2_Parallel_end(&par);
        POMP2_Parallel_join(&par, 0);
        if (round == 0) {
            POMP2_Assign_handle(&par, par_ctc);
            POMP2_Assign_handle(&loop, for_ctc);
            POMP2_Assign_handle(&task, task_ctc);
            POMP2_USER_Assign_handle(&user, user_ctc);
        }
    }
    /* Now a real construct: this starts the measurement. */
    POMP2_Begin(&user, user_ctc);
    POMP2_For_enter(&loop, for_ctc);
    POMP2_Implicit_barrier_enter(&loop, &old);
    POMP2_Implicit_barrier_exit(&loop, old);
    POMP2_For_exit(&loop);
    POMP2_End(&user);
    printf("early done\n");
}

/* An orphaned construct with a malformed string, entered by every thread of a parallel region
 * the library does not see (as an instrumented library routine called from uninstrumented
 * code): whichever thread comes first starts the measurement and assigns the handle. */
static void threads(void)
{
    static POMP2_Region_handle loop;
    const char *ctc = "70*regionType=for*sscl=m_threads.c:300:300*escl=m_threads.c:302:302*colour=red**";
#pragma omp parallel num_threads(4)
    {
        int r;
        for (r = 0; r < REPEAT; r++) {
            POMP2_For_enter(&loop, ctc);
            POMP2_For_exit(&loop);
        }
    }
    printf("threads done\n");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "malformed";
    if (strcmp(mode, "early") == 0)
        early();
    else if (strcmp(mode, "threads") == 0)
        threads();
    else if (strcmp(mode, "null") == 0)
        null_everything();
    else
        malformed();
    return 0;
}
