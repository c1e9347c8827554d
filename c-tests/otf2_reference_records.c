/*
 * otf2_reference_records.c -- the MPI event records and every snapshot record, written with
 * libotf2 (OTF2 3.0.x C API), for the byte-identity test of pomptrace's OTF2 record tables.
 *
 * Usage: otf2_reference_records DIR N
 *
 * Writes DIR/traces.otf2 with one location: N rounds of the ten MPI events (values spanning
 * every compressed width, UNDEFINED included; one event a round carries a 2-entry attribute
 * list) and N snapshots of all eighteen snapshot state records between SnapshotStart and
 * SnapshotEnd. tests/otf2_libotf2_identity.rs writes the same calls with `pomptrace::otf2`
 * (`reference_records` there mirrors `value` and the rounds below) and compares the files.
 *
 * Build: cc -O2 -Wall -Wextra -o otf2_reference_records otf2_reference_records.c \
 *            $(pkg-config --cflags --libs otf2)
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <otf2/otf2.h>

#define MPI_EVENTS_PER_ROUND 10
#define SNAP_STATE_RECORDS 18

static void die(const char* what, OTF2_ErrorCode code)
{
    fprintf(stderr, "otf2_reference_records: %s failed: %s (%s)\n", what,
            OTF2_Error_GetName(code), OTF2_Error_GetDescription(code));
    exit(1);
}

#define CHECK(call)                                   \
    do {                                              \
        OTF2_ErrorCode check_rc_ = (call);            \
        if (check_rc_ != OTF2_SUCCESS) {              \
            die(#call, check_rc_);                    \
        }                                             \
    } while (0)

#define CHECK_PTR(ptr, what)                                                \
    do {                                                                    \
        if ((ptr) == NULL) {                                                \
            fprintf(stderr, "otf2_reference_records: %s returned NULL\n", \
                    what);                                                  \
            exit(1);                                                        \
        }                                                                   \
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

/* Field k of round i: 0, all ones, and values of every byte width in turn. */
static uint64_t value(uint64_t i, uint64_t k)
{
    uint64_t s = (i * 7 + k * 3) % 66;
    if (s == 64) {
        return 0;
    }
    if (s == 65) {
        return UINT64_MAX;
    }
    return (UINT64_C(1) << s) + i + k;
}

static uint32_t value32(uint64_t i, uint64_t k)
{
    uint64_t v = value(i, k);
    return v == UINT64_MAX ? UINT32_MAX : (uint32_t)(v >> (v >> 32 ? 32 : 0));
}

static OTF2_AttributeList* attributes_for(OTF2_AttributeList* attrs, uint64_t i, uint64_t k)
{
    if (i % MPI_EVENTS_PER_ROUND != k) {
        return NULL;
    }
    CHECK(OTF2_AttributeList_RemoveAllAttributes(attrs));
    CHECK(OTF2_AttributeList_AddUint64(attrs, 0, value(i, 11)));
    CHECK(OTF2_AttributeList_AddInt32(attrs, 1, -(int32_t)(i % 1000)));
    return attrs;
}

static void write_events(OTF2_EvtWriter* w, OTF2_AttributeList* attrs, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        OTF2_TimeStamp ts = 100 + 3 * i;
        CHECK(OTF2_EvtWriter_MpiSend(w, attributes_for(attrs, i, 0), ts, value32(i, 0),
                                     value32(i, 1), value32(i, 2), value(i, 3)));
        CHECK(OTF2_EvtWriter_MpiIsend(w, attributes_for(attrs, i, 1), ts, value32(i, 1),
                                      value32(i, 2), value32(i, 3), value(i, 4), value(i, 5)));
        CHECK(OTF2_EvtWriter_MpiIsendComplete(w, attributes_for(attrs, i, 2), ts + 1,
                                              value(i, 5)));
        CHECK(OTF2_EvtWriter_MpiIrecvRequest(w, attributes_for(attrs, i, 3), ts + 1,
                                             value(i, 6)));
        CHECK(OTF2_EvtWriter_MpiRecv(w, attributes_for(attrs, i, 4), ts + 1, value32(i, 7),
                                     value32(i, 8), value32(i, 9), value(i, 10)));
        CHECK(OTF2_EvtWriter_MpiIrecv(w, attributes_for(attrs, i, 5), ts + 2, value32(i, 8),
                                      value32(i, 9), value32(i, 10), value(i, 11),
                                      value(i, 6)));
        CHECK(OTF2_EvtWriter_MpiRequestTest(w, attributes_for(attrs, i, 6), ts + 2,
                                            value(i, 12)));
        CHECK(OTF2_EvtWriter_MpiRequestCancelled(w, attributes_for(attrs, i, 7), ts + 2,
                                                 value(i, 13)));
        CHECK(OTF2_EvtWriter_MpiCollectiveBegin(w, attributes_for(attrs, i, 8), ts + 2));
        CHECK(OTF2_EvtWriter_MpiCollectiveEnd(w, attributes_for(attrs, i, 9), ts + 2,
                                              (OTF2_CollectiveOp)(i % 23), value32(i, 14),
                                              value32(i, 15), value(i, 16), value(i, 17)));
    }
}

static void write_snapshots(OTF2_SnapWriter* w, OTF2_AttributeList* attrs, uint64_t n)
{
    const OTF2_Type metric_types[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_DOUBLE };
    for (uint64_t i = 0; i < n; i++) {
        OTF2_TimeStamp t = 1000 + 10 * i;
        OTF2_TimeStamp o = 10 * i;
        OTF2_MetricValue values[2];
        values[0].unsigned_int = value(i, 18);
        values[1].floating_point = (double)i * 0.25;
        CHECK(OTF2_SnapWriter_SnapshotStart(w, NULL, t, SNAP_STATE_RECORDS));
        CHECK(OTF2_SnapWriter_MeasurementOnOff(w, NULL, t, o,
                                               i % 2 ? OTF2_MEASUREMENT_ON
                                                     : OTF2_MEASUREMENT_OFF));
        CHECK(OTF2_SnapWriter_Enter(w, attributes_for(attrs, i, 1), t, o, value32(i, 0)));
        CHECK(OTF2_SnapWriter_MpiSend(w, NULL, t, o + 1, value32(i, 0), value32(i, 1),
                                      value32(i, 2), value(i, 3)));
        CHECK(OTF2_SnapWriter_MpiIsend(w, NULL, t, o + 1, value32(i, 1), value32(i, 2),
                                       value32(i, 3), value(i, 4), value(i, 5)));
        CHECK(OTF2_SnapWriter_MpiIsendComplete(w, NULL, t, o + 1, value(i, 5)));
        CHECK(OTF2_SnapWriter_MpiRecv(w, NULL, t, o + 2, value32(i, 7), value32(i, 8),
                                      value32(i, 9), value(i, 10)));
        CHECK(OTF2_SnapWriter_MpiIrecvRequest(w, NULL, t, o + 2, value(i, 6)));
        CHECK(OTF2_SnapWriter_MpiIrecv(w, NULL, t, o + 2, value32(i, 8), value32(i, 9),
                                       value32(i, 10), value(i, 11), value(i, 6)));
        CHECK(OTF2_SnapWriter_MpiCollectiveBegin(w, NULL, t, o + 3));
        CHECK(OTF2_SnapWriter_MpiCollectiveEnd(w, NULL, t, o + 3, (OTF2_CollectiveOp)(i % 23),
                                               value32(i, 14), value32(i, 15), value(i, 16),
                                               value(i, 17)));
        CHECK(OTF2_SnapWriter_OmpFork(w, NULL, t, o + 4, value32(i, 12)));
        CHECK(OTF2_SnapWriter_OmpAcquireLock(w, NULL, t, o + 4, value32(i, 13),
                                             value32(i, 14)));
        CHECK(OTF2_SnapWriter_OmpTaskCreate(w, NULL, t, o + 5, value(i, 15)));
        CHECK(OTF2_SnapWriter_OmpTaskSwitch(w, NULL, t, o + 5, value(i, 16)));
        CHECK(OTF2_SnapWriter_Metric(w, NULL, t, o + 6, value32(i, 17), 2, metric_types,
                                     values));
        CHECK(OTF2_SnapWriter_ParameterString(w, NULL, t, o + 7, value32(i, 18),
                                              value32(i, 19)));
        CHECK(OTF2_SnapWriter_ParameterInt(w, NULL, t, o + 7, value32(i, 19),
                                           -(int64_t)value(i, 20) / 2));
        CHECK(OTF2_SnapWriter_ParameterUnsignedInt(w, NULL, t, o + 8, value32(i, 20),
                                                   value(i, 21)));
        CHECK(OTF2_SnapWriter_SnapshotEnd(w, NULL, t, value(i, 22)));
    }
}

static void write_global_defs(OTF2_GlobalDefWriter* g, uint64_t events)
{
    static const char* const strings[] = {
        "", "rank 0", "", "process", "machine", "node", "attr_u64", "attr_i32",
    };
    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 1000000,
                                                    OTF2_UNDEFINED_TIMESTAMP));
    for (uint32_t s = 0; s < sizeof(strings) / sizeof(strings[0]); s++) {
        CHECK(OTF2_GlobalDefWriter_WriteString(g, s, strings[s]));
    }
    CHECK(OTF2_GlobalDefWriter_WriteAttribute(g, 0, 6, 0, OTF2_TYPE_UINT64));
    CHECK(OTF2_GlobalDefWriter_WriteAttribute(g, 1, 7, 0, OTF2_TYPE_INT32));
    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 4, 5, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 3, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                  OTF2_UNDEFINED_LOCATION_GROUP));
    CHECK(OTF2_GlobalDefWriter_WriteLocation(g, 0, 1, OTF2_LOCATION_TYPE_CPU_THREAD, events, 0));
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR N\n", argv[0]);
        return 2;
    }
    const char* dir = argv[1];
    char* end = NULL;
    errno = 0;
    uint64_t n = strtoull(argv[2], &end, 10);
    if (errno != 0 || end == argv[2] || *end != '\0' || argv[2][0] == '-') {
        fprintf(stderr, "otf2_reference_records: bad round count '%s'\n", argv[2]);
        return 2;
    }

    OTF2_Archive* archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
                                              262144 /* event chunk */, 262144 /* def chunk */,
                                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    CHECK_PTR(archive, "OTF2_Archive_Open");
    CHECK(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL));
    CHECK(OTF2_Archive_SetSerialCollectiveCallbacks(archive));
    OTF2_AttributeList* attrs = OTF2_AttributeList_New();
    CHECK_PTR(attrs, "OTF2_AttributeList_New");

    CHECK(OTF2_Archive_OpenEvtFiles(archive));
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, 0);
    CHECK_PTR(w, "OTF2_Archive_GetEvtWriter");
    write_events(w, attrs, n);
    CHECK(OTF2_Archive_CloseEvtWriter(archive, w));
    CHECK(OTF2_Archive_CloseEvtFiles(archive));

    CHECK(OTF2_Archive_SetNumberOfSnapshots(archive, (uint32_t)n));
    CHECK(OTF2_Archive_OpenSnapFiles(archive));
    OTF2_SnapWriter* s = OTF2_Archive_GetSnapWriter(archive, 0);
    CHECK_PTR(s, "OTF2_Archive_GetSnapWriter");
    write_snapshots(s, attrs, n);
    CHECK(OTF2_Archive_CloseSnapWriter(archive, s));
    CHECK(OTF2_Archive_CloseSnapFiles(archive));
    CHECK(OTF2_AttributeList_Delete(attrs));

    CHECK(OTF2_Archive_OpenDefFiles(archive));
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, 0);
    CHECK_PTR(dw, "OTF2_Archive_GetDefWriter");
    CHECK(OTF2_Archive_CloseDefWriter(archive, dw));
    CHECK(OTF2_Archive_CloseDefFiles(archive));

    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    CHECK_PTR(g, "OTF2_Archive_GetGlobalDefWriter");
    write_global_defs(g, MPI_EVENTS_PER_ROUND * n);
    CHECK(OTF2_Archive_Close(archive));
    return 0;
}
