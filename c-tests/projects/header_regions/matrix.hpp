#ifndef MATRIX_HPP
#define MATRIX_HPP

#include <vector>

struct Matrix {
    int n;
    std::vector<double> v;

    explicit Matrix(int size) : n(size), v(size * size) {}

    double trace_of_product(const Matrix &other) const
    {
        double t = 0;
#pragma omp parallel for reduction(+:t)
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++)
                t += v[i * n + k] * other.v[k * n + i];
        return t;
    }
};

#endif
