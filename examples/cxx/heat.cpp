// heat.cpp -- the OpenMP part of the C++ example: explicit 1-D heat diffusion in a class. This
// file is instrumented with opari2; main.cpp is not.
#include <omp.h>

#include <numeric>
#include <utility>
#include <vector>

namespace heat {

class Rod {
public:
    explicit Rod(std::size_t n) : u_(n, 0.0), v_(n, 0.0) { u_[n / 2] = 1000.0; }

    double run(int steps)
    {
        const long n = static_cast<long>(u_.size());
        int updates = 0;
        double total = 0.0;
#pragma pomp inst begin(diffusion)
#pragma omp parallel
        {
            for (int s = 0; s < steps; ++s) {
#pragma omp for schedule(static)
                for (long i = 1; i < n - 1; ++i)
                    v_[i] = u_[i] + 0.25 * (u_[i - 1] - 2.0 * u_[i] + u_[i + 1]);
#pragma omp single
                {
                    std::swap(u_, v_);
                }
#pragma omp critical(bookkeeping)
                ++updates;
            }
#pragma omp for reduction(+ : total)
            for (long i = 0; i < n; ++i)
                total += u_[i];
        }
#pragma pomp inst end(diffusion)
        return updates > 0 ? total : -1.0;
    }

private:
    std::vector<double> u_, v_;
};

} // namespace heat

double heat_run(int n, int steps)
{
    heat::Rod rod(static_cast<std::size_t>(n));
    return rod.run(steps);
}
