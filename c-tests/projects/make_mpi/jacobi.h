/* The rank's block of rows, [first, first + rows) of an n x n grid, with a halo row above and
 * below: `up` and `down` are the neighbouring ranks (MPI_PROC_NULL at the edges). */
#ifndef JACOBI_H
#define JACOBI_H

#include <stddef.h>

struct block {
    int n, rows, first, up, down;
    double *u, *next;
};

/* Swaps the halo rows with both neighbours. */
void exchange_halos(const struct block *b);
/* One Jacobi sweep from u into next (OpenMP); returns the sum of squared changes. */
double sweep(struct block *b);

#endif
