// cxx_constructs.cpp -- C++ (namespaces, classes, templates, std::vector, references): every
// construct OPARI2 instruments (parallel, for, sections, single, master, critical, barrier,
// atomic, flush, ordered, task/taskwait), the OpenMP lock API (plain, test, nested) and user
// regions with altend, instrumented by the real opari2 and compiled with g++.
#include <omp.h>

#include <cstdio>
#include <numeric>
#include <vector>

namespace demo {

template <typename T>
T scaled_sum(const std::vector<T>& v, T factor)
{
    T total = T();
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (long i = 0; i < static_cast<long>(v.size()); ++i)
        total += v[i] * factor;
    return total;
}

class Counter {
public:
    Counter() : section_a_(0), section_b_(0), once_(0), masters_(0), crit_(0), named_(0), atomic_(0), ordered_(0) {}

    void run(std::vector<int>& data)
    {
        const long n = static_cast<long>(data.size());
#pragma omp parallel shared(data)
        {
#pragma omp for schedule(static)
            for (long i = 0; i < n; ++i)
                data[i] = static_cast<int>(i);
#pragma omp for schedule(static) nowait
            for (long i = 0; i < n; ++i)
                data[i] += 1;
#pragma omp barrier
#pragma omp sections
            {
#pragma omp section
                section_a_ = 1;
#pragma omp section
                section_b_ = 2;
            }
#pragma omp single
            {
                once_++;
            }
#pragma omp master
            {
                masters_++;
            }
#pragma omp critical
            crit_++;
#pragma omp critical(cxx_named)
            {
                named_++;
            }
#pragma omp atomic
            atomic_++;
#pragma omp flush
        }
#pragma omp parallel for ordered schedule(static, 1)
        for (int i = 1; i <= 8; ++i) {
#pragma omp ordered
            {
                ordered_ = ordered_ * 2 + i % 2;
            }
        }
    }

    int section_a_, section_b_, once_, masters_, crit_, named_, atomic_, ordered_;
};

struct Tasks {
    long total = 0;
    omp_lock_t lock;
    void add(long value)
    {
        omp_set_lock(&lock);
        total += value;
        omp_unset_lock(&lock);
    }
    void run(int ntasks)
    {
        omp_init_lock(&lock);
#pragma omp parallel
        {
#pragma omp single
            {
                for (int i = 1; i <= ntasks; ++i) {
#pragma omp task firstprivate(i)
                    add(i);
                }
#pragma omp taskwait
            }
        }
        omp_destroy_lock(&lock);
    }
};

int locks()
{
    omp_lock_t lock;
    omp_nest_lock_t nest;
    int k = 0;
    omp_init_lock(&lock);
    omp_init_nest_lock(&nest);
#pragma omp parallel shared(k)
    {
        while (!omp_test_lock(&lock)) {
        }
        k++;
        omp_unset_lock(&lock);
        omp_set_nest_lock(&nest);
        omp_set_nest_lock(&nest);
        k++;
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
    }
    omp_destroy_nest_lock(&nest);
    omp_destroy_lock(&lock);
    return k;
}

int early(int n)
{
#pragma pomp inst begin(cxx_early)
    if (n > 2) {
#pragma pomp inst altend(cxx_early)
        return 1;
    }
#pragma pomp inst end(cxx_early)
    return 0;
}

} // namespace demo

int main()
{
#pragma pomp inst init
    std::vector<int> data(64);
    demo::Counter c;
    demo::Tasks t;
#pragma pomp inst begin(cxx_main)
    c.run(data);
    const long sum = std::accumulate(data.begin(), data.end(), 0L);
    const double scaled = demo::scaled_sum(std::vector<double>(10, 1.5), 2.0);
    t.run(5);
    const int k = demo::locks();
#pragma pomp inst end(cxx_main)
    const int e = demo::early(1) + demo::early(3);
    std::printf("sum=%ld scaled=%g tasks=%ld k=%d crit=%d e=%d\n", sum, scaled, t.total, k,
                c.crit_, e);
    const bool ok = sum == 64 * 65 / 2 && scaled == 30.0 && t.total == 15 && c.section_a_ + c.section_b_ == 3
                    && c.once_ == 1 && c.masters_ == 1 && c.crit_ == c.named_ && c.crit_ == c.atomic_
                    && c.ordered_ == 170 && e == 1;
    return ok ? 0 : 1;
}
