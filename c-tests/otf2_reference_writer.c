/*
 * otf2_reference_writer.c -- reference archive written with libotf2 (OTF2 3.0.x C API).
 *
 * Usage: otf2_reference_writer DIR N
 *
 * Writes the OTF2 archive DIR/traces.otf2 (+ DIR/traces.def, DIR/traces/{0,1}.{evt,def})
 * with two locations of N events each (Enter/Leave, ThreadFork/ThreadJoin, 3-value Metric
 * records, some carrying a 2-entry attribute list) and a fixed set of global definitions.
 * pomptrace's pure-Rust OTF2 writer produces the same stream and its output is compared with
 * this program's output byte for byte (the anchor file excepted where creator/version differ).
 *
 * Build: cc -O2 -Wall -Wextra -o otf2_reference_writer otf2_reference_writer.c \
 *            $(pkg-config --cflags --libs otf2)
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#define PROGRAM "otf2_reference_writer"
#include "otf2_c_checks.h"

#define N_LOCATIONS 2

static OTF2_TimeStamp event_ts(uint64_t i, uint64_t loc)
{
    return i < 3 ? 0 : 1000 + 7 * (i / 2) + loc;
}

static void write_events(OTF2_EvtWriter* w, OTF2_AttributeList* attrs, uint64_t loc, uint64_t n)
{
    const OTF2_Type metric_types[3] = { OTF2_TYPE_UINT64, OTF2_TYPE_INT64, OTF2_TYPE_DOUBLE };

    for (uint64_t i = 0; i < n; i++) {
        OTF2_TimeStamp ts = event_ts(i, loc);
        OTF2_AttributeList* al = NULL;
        uint64_t m16 = i % 16;
        if (m16 == 5 || m16 == 10) {
            CHECK(OTF2_AttributeList_RemoveAllAttributes(attrs));
            CHECK(OTF2_AttributeList_AddUint64(attrs, 0, i * 300));
            CHECK(OTF2_AttributeList_AddInt32(attrs, 1, -(int32_t)(i % 100)));
            al = attrs;
        }

        OTF2_MetricValue values[3];
        switch (i % 8) {
        case 0:
            CHECK(OTF2_EvtWriter_Enter(w, al, ts, (OTF2_RegionRef)((i / 8) % 5)));
            break;
        case 1:
            CHECK(OTF2_EvtWriter_ThreadFork(w, al, ts, OTF2_PARADIGM_OPENMP,
                                            (uint32_t)(1 + (i % 13))));
            break;
        case 2:
            values[0].unsigned_int = i;
            values[1].signed_int = -(int64_t)i;
            values[2].floating_point = (double)i * 0.5;
            CHECK(OTF2_EvtWriter_Metric(w, al, ts, 0, 3, metric_types, values));
            break;
        case 3:
            CHECK(OTF2_EvtWriter_ThreadJoin(w, al, ts, OTF2_PARADIGM_OPENMP));
            break;
        case 4:
            CHECK(OTF2_EvtWriter_Enter(w, al, ts, (OTF2_RegionRef)(70000 + loc)));
            break;
        case 5:
            CHECK(OTF2_EvtWriter_Leave(w, al, ts, (OTF2_RegionRef)(70000 + loc)));
            break;
        case 6:
            values[0].unsigned_int = UINT64_MAX - i;
            values[1].signed_int = (int64_t)i * 1000;
            values[2].floating_point = -1.25;
            CHECK(OTF2_EvtWriter_Metric(w, al, ts, 0, 3, metric_types, values));
            break;
        default: /* 7 */
            CHECK(OTF2_EvtWriter_Leave(w, al, ts, (OTF2_RegionRef)((i / 8) % 5)));
            break;
        }
    }
}

static void write_global_defs(OTF2_GlobalDefWriter* g, uint64_t n)
{
    static const char* const strings[] = {
        "", "Master thread", "OMP thread 1", "process", "machine", "node",
        "region0", "region1", "region2", "region3", "region4", "regionA", "regionB",
        "metric", "count", "attr_u64", "attr_i32", "demo.c",
    };

    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 1000000,
                                                    OTF2_UNDEFINED_TIMESTAMP));

    for (uint32_t s = 0; s < sizeof(strings) / sizeof(strings[0]); s++) {
        CHECK(OTF2_GlobalDefWriter_WriteString(g, s, strings[s]));
    }

    CHECK(OTF2_GlobalDefWriter_WriteAttribute(g, 0, 15, 0, OTF2_TYPE_UINT64));
    CHECK(OTF2_GlobalDefWriter_WriteAttribute(g, 1, 16, 0, OTF2_TYPE_INT32));

    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 4, 5, OTF2_UNDEFINED_SYSTEM_TREE_NODE));

    CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 3, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                  OTF2_UNDEFINED_LOCATION_GROUP));

    CHECK(OTF2_GlobalDefWriter_WriteLocation(g, 0, 1, OTF2_LOCATION_TYPE_CPU_THREAD, n, 0));
    CHECK(OTF2_GlobalDefWriter_WriteLocation(g, 1, 2, OTF2_LOCATION_TYPE_CPU_THREAD, n, 0));

    for (uint32_t r = 0; r < 5; r++) {
        CHECK(OTF2_GlobalDefWriter_WriteRegion(g, r, 6 + r, 6 + r, 0, OTF2_REGION_ROLE_FUNCTION,
                                               OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 17,
                                               10 + r, 20 + r));
    }
    CHECK(OTF2_GlobalDefWriter_WriteRegion(g, 70000, 11, 11, 0, OTF2_REGION_ROLE_FUNCTION,
                                           OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 17, 30,
                                           40));
    CHECK(OTF2_GlobalDefWriter_WriteRegion(g, 70001, 12, 12, 0, OTF2_REGION_ROLE_FUNCTION,
                                           OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 17, 30,
                                           40));

    const OTF2_Type member_types[3] = { OTF2_TYPE_UINT64, OTF2_TYPE_INT64, OTF2_TYPE_DOUBLE };
    for (uint32_t m = 0; m < 3; m++) {
        CHECK(OTF2_GlobalDefWriter_WriteMetricMember(g, m, 13, 0, OTF2_METRIC_TYPE_OTHER,
                                                     OTF2_METRIC_ACCUMULATED_START,
                                                     member_types[m], OTF2_BASE_DECIMAL, 0,
                                                     14));
    }

    const OTF2_MetricMemberRef members[3] = { 0, 1, 2 };
    CHECK(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 3, members,
                                                OTF2_METRIC_SYNCHRONOUS_STRICT,
                                                OTF2_RECORDER_KIND_CPU));
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR N\n", argv[0]);
        return 2;
    }
    uint64_t n = count_argument(argv[2]);
    OTF2_Archive* archive = open_reference_archive(argv[1]);

    /* Events: all of location 0, then all of location 1. */
    CHECK(OTF2_Archive_OpenEvtFiles(archive));
    OTF2_AttributeList* attrs = OTF2_AttributeList_New();
    CHECK_PTR(attrs, "OTF2_AttributeList_New");
    for (uint64_t loc = 0; loc < N_LOCATIONS; loc++) {
        OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc);
        CHECK_PTR(w, "OTF2_Archive_GetEvtWriter");
        write_events(w, attrs, loc, n);
        CHECK(OTF2_Archive_CloseEvtWriter(archive, w));
    }
    CHECK(OTF2_AttributeList_Delete(attrs));
    CHECK(OTF2_Archive_CloseEvtFiles(archive));

    /* Empty local definition files. */
    CHECK(OTF2_Archive_OpenDefFiles(archive));
    for (uint64_t loc = 0; loc < N_LOCATIONS; loc++) {
        OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, loc);
        CHECK_PTR(dw, "OTF2_Archive_GetDefWriter");
        CHECK(OTF2_Archive_CloseDefWriter(archive, dw));
    }
    CHECK(OTF2_Archive_CloseDefFiles(archive));

    /* Global definitions. */
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    CHECK_PTR(g, "OTF2_Archive_GetGlobalDefWriter");
    write_global_defs(g, n);

    CHECK(OTF2_Archive_Close(archive));
    return 0;
}
