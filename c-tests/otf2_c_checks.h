/*
 * otf2_c_checks.h -- what every libotf2 writer program in c-tests/ needs: fail loudly on any
 * libotf2 error, and flush callbacks that always flush (so libotf2 writes its chunks out, and
 * continues, when its chunk memory runs out, and at the end).
 *
 * Define PROGRAM (the program's name, a string) before including it.
 */
#ifndef OTF2_C_CHECKS_H
#define OTF2_C_CHECKS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <otf2/otf2.h>

static void die(const char* what, OTF2_ErrorCode code)
{
    fprintf(stderr, PROGRAM ": %s failed: %s (%s)\n", what, OTF2_Error_GetName(code),
            OTF2_Error_GetDescription(code));
    exit(1);
}

#define CHECK(call)                                   \
    do {                                              \
        OTF2_ErrorCode check_rc_ = (call);            \
        if (check_rc_ != OTF2_SUCCESS) {              \
            die(#call, check_rc_);                    \
        }                                             \
    } while (0)

#define CHECK_PTR(ptr, what)                                      \
    do {                                                          \
        if ((ptr) == NULL) {                                      \
            fprintf(stderr, PROGRAM ": %s returned NULL\n", what); \
            exit(1);                                              \
        }                                                         \
    } while (0)

static OTF2_FlushType pre_flush(void* userData, OTF2_FileType fileType,
                                OTF2_LocationRef location, void* callerData, bool final)
{
    (void)userData;
    (void)fileType;
    (void)location;
    (void)callerData;
    (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void* userData, OTF2_FileType fileType,
                                 OTF2_LocationRef location)
{
    (void)userData;
    (void)fileType;
    (void)location;
    return 0;
}

static const OTF2_FlushCallbacks flush_callbacks = {
    .otf2_pre_flush = pre_flush,
    .otf2_post_flush = post_flush,
};

/* The count argument `arg` of `PROGRAM DIR COUNT`; exits with status 2 unless it is a whole
 * number. */
static inline uint64_t count_argument(const char* arg)
{
    char* end = NULL;
    errno = 0;
    uint64_t n = strtoull(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-') {
        fprintf(stderr, PROGRAM ": bad count '%s'\n", arg);
        exit(2);
    }
    return n;
}

/* DIR/traces.otf2 opened for writing with 256 KiB event and definition chunks, flushing
 * always, serial collectives. */
static inline OTF2_Archive* open_reference_archive(const char* dir)
{
    OTF2_Archive* archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
                                              262144 /* event chunk */, 262144 /* def chunk */,
                                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    CHECK_PTR(archive, "OTF2_Archive_Open");
    CHECK(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL));
    CHECK(OTF2_Archive_SetSerialCollectiveCallbacks(archive));
    return archive;
}

#endif
