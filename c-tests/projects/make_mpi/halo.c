#include <mpi.h>

#include "jacobi.h"

#define TAG_UP 1
#define TAG_DOWN 2

void exchange_halos(const struct block *b) {
    const size_t width = (size_t)b->n;
    MPI_Request requests[4];
    MPI_Irecv(b->u, b->n, MPI_DOUBLE, b->up, TAG_DOWN, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(b->u + (size_t)(b->rows + 1) * width, b->n, MPI_DOUBLE, b->down, TAG_UP,
              MPI_COMM_WORLD, &requests[1]);
    MPI_Isend(b->u + width, b->n, MPI_DOUBLE, b->up, TAG_UP, MPI_COMM_WORLD, &requests[2]);
    MPI_Isend(b->u + (size_t)b->rows * width, b->n, MPI_DOUBLE, b->down, TAG_DOWN,
              MPI_COMM_WORLD, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
}
