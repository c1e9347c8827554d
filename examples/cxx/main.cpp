// main.cpp -- the uninstrumented driver of the C++ example.
#include <iostream>

double heat_run(int n, int steps);

int main()
{
    const double total = heat_run(200, 50);
    std::cout << "heat: total " << total << "\n";
    return total > 999.0 && total < 1001.0 ? 0 : 1;
}
