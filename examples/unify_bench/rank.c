/* One rank of unify_bench's job (examples/unify_bench.rs), instrumented by opari2 and linked
 * against libpomptrace: the launcher variables in its environment make it rank
 * OMPI_COMM_WORLD_RANK of OMPI_COMM_WORLD_SIZE, so it writes its part of the job's archive as
 * every rank does. The MPI side is what libpomptrace_mpi records at MPI_Init, through the same
 * internal API, without MPI: MPI_COMM_WORLD, MPI_COMM_SELF and a communicator of the 16 ranks
 * of its "node", clock offsets at the start and the end, and an MPI_Allreduce per iteration.
 *
 * Usage: rank ITERATIONS (each thread of the OpenMP team runs ITERATIONS worksharing loops).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pomptrace/pomptrace_mpi.h"

enum { NODE = 16 };

static uint32_t env_number(const char *name) {
    const char *value = getenv(name);
    if (!value) {
        fprintf(stderr, "rank: %s is not set\n", name);
        exit(2);
    }
    return (uint32_t)strtoul(value, NULL, 10);
}

int main(int argc, char **argv) {
    const int iterations = argc > 1 ? atoi(argv[1]) : 10;
    const uint32_t rank = env_number("OMPI_COMM_WORLD_RANK");
    const uint32_t size = env_number("OMPI_COMM_WORLD_SIZE");
    pomptrace_mpi_init(rank, size);
    uint32_t *ranks = malloc(sizeof(uint32_t) * size);
    for (uint32_t r = 0; r < size; r++) ranks[r] = r;
    const uint32_t world = pomptrace_mpi_define_comm("MPI_COMM_WORLD", ranks, size,
                                                     POMPTRACE_MPI_UNDEFINED);
    pomptrace_mpi_define_comm("MPI_COMM_SELF", &rank, 1, POMPTRACE_MPI_UNDEFINED);
    const uint32_t first = rank / NODE * NODE;
    const uint32_t members = size - first < NODE ? size - first : NODE;
    char name[64];
    snprintf(name, sizeof name, "MPI communicator %u.0", first);
    pomptrace_mpi_define_comm(name, ranks + first, members, world);
    const uint32_t allreduce = pomptrace_mpi_region("MPI_Allreduce", POMPTRACE_MPI_ALL_TO_ALL);
    pomptrace_mpi_clock_offset(pomptrace_mpi_time(), 0, 0.0);

    double sum = 0.0;
#pragma omp parallel reduction(+ : sum)
    {
        for (int it = 0; it < iterations; it++) {
#pragma omp for
            for (int i = 0; i < 1000; i++) sum += i * 0.5;
#pragma omp master
            {
                pomptrace_mpi_enter_collective(allreduce);
                pomptrace_mpi_leave_collective(allreduce, POMPTRACE_MPI_OP_ALLREDUCE, world,
                                               POMPTRACE_MPI_UNDEFINED, 8, 8);
            }
        }
    }
    pomptrace_mpi_clock_offset(pomptrace_mpi_time(), 0, 0.0);
    free(ranks);
    return sum < 0;
}
