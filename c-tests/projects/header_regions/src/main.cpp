#include <cstdio>

#include "matrix.hpp"

int main()
{
    Matrix a(64), b(64);
#pragma omp parallel for
    for (int i = 0; i < 64 * 64; i++) {
        a.v[i] = i % 7;
        b.v[i] = i % 5;
    }
    // Digit separators (opari2 reads them as the start of a character constant).
    const long scale = 1'000;
    std::printf("matrix_demo: trace %.1f\n", a.trace_of_product(b) * scale / 1'000);
    return 0;
}
