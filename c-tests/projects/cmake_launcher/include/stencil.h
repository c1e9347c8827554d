#ifndef STENCIL_H
#define STENCIL_H
double smooth(double *grid, int n, int steps);
#endif
